//! Approvals as server requests: `item/commandExecution/requestApproval` for commands (and
//! other calls that run something), `item/fileChange/requestApproval` for edits. The
//! client's decision goes back to the session as an `Op::Approval`, so the same policy as in
//! every other face decides what runs.

use interpreter_protocol::{ApprovalDecision, ApprovalRequest, Op, ToolKind};
use serde_json::{Value, json};
use std::path::Path;

use super::Server;
use super::state::{Asked, ThreadShared};
use super::wire::now_ms;

/// Sends the request for `req` (from the session's event sink).
pub(crate) fn ask(thread: &ThreadShared, turn_id: &str, cwd: &Path, req: ApprovalRequest) {
    let (method, params) = request_for(&thread.id, turn_id, cwd, &req);
    let id = thread.approvals.remember(Asked {
        thread_id: thread.id.clone(),
        turn_id: turn_id.to_string(),
        call_id: req.call_id.clone(),
        question: false,
    });
    thread.out.request(id, method, params);
}

/// The request's method and params.
fn request_for(
    thread_id: &str,
    turn_id: &str,
    cwd: &Path,
    req: &ApprovalRequest,
) -> (&'static str, Value) {
    let mut params = json!({
        "threadId": thread_id,
        "turnId": turn_id,
        "itemId": req.call_id,
        "startedAtMs": now_ms(),
        "reason": req.reason,
    });
    let edit = matches!(req.kind, ToolKind::Edit | ToolKind::Delete | ToolKind::Move);
    if edit {
        return ("item/fileChange/requestApproval", params);
    }
    let command = req.command.clone().unwrap_or_else(|| req.title.clone());
    if let Some(obj) = params.as_object_mut() {
        obj.insert("cwd".into(), json!(cwd.display().to_string()));
        obj.insert(
            "commandActions".into(),
            json!([{"type": "unknown", "command": command}]),
        );
        obj.insert("command".into(), json!(command));
        // The choices to show: no "for the session" for what the policy asks every time.
        let mut decisions = vec![json!("accept")];
        if req.offers_always() {
            decisions.push(json!("acceptForSession"));
        }
        // Codex's "always, and save": the prefix a saved `prefix_rule` would allow.
        if req.offers_save() {
            let prefix: Vec<&str> = req.remember_key["exec:".len()..]
                .split_whitespace()
                .collect();
            obj.insert("proposedExecpolicyAmendment".into(), json!(prefix));
            decisions
                .push(json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": prefix}}));
        }
        decisions.extend([json!("decline"), json!("cancel")]);
        obj.insert("availableDecisions".into(), json!(decisions));
    }
    ("item/commandExecution/requestApproval", params)
}

/// The client's answer (from the read loop): anything but a clear yes is a no; `cancel` also
/// interrupts the turn.
pub(crate) fn answered(server: &Server, id: &Value, result: Result<Value, Value>) {
    let Some(asked) = id.as_u64().and_then(|id| server.approvals.take(id)) else {
        tracing::debug!("app-server: an answer to no pending request ({id})");
        return;
    };
    if asked.question {
        return super::questions::answered(server, id, asked, result);
    }
    let (decision, word) = decision_of(&result);
    let Some(thread) = server.thread(&asked.thread_id) else {
        return;
    };
    {
        let mut st = thread.state();
        st.waiting_on_approval = st.waiting_on_approval.saturating_sub(1);
    }
    // Before the decision reaches the session, so it precedes the item's end.
    server.out.notify(
        "serverRequest/resolved",
        json!({"threadId": asked.thread_id, "requestId": id}),
    );
    let _ = thread.handle.submit(Op::Approval {
        call_id: asked.call_id,
        decision,
    });
    if word == "cancel" {
        let _ = thread.handle.submit(Op::Interrupt);
    }
}

/// The client's decision, and its word (`cancel` also interrupts the turn). Anything but a
/// clear yes is a no.
fn decision_of(result: &Result<Value, Value>) -> (ApprovalDecision, &str) {
    let given = result.as_ref().ok().and_then(|r| r.get("decision"));
    // `{"acceptWithExecpolicyAmendment": {"execpolicy_amendment": [...]}}`: the session saves
    // the prefix it proposed (the client's list is not trusted to widen it).
    let word = match given {
        Some(Value::Object(o)) if o.contains_key("acceptWithExecpolicyAmendment") => {
            "acceptWithExecpolicyAmendment"
        }
        other => other.and_then(Value::as_str).unwrap_or("decline"),
    };
    let decision = match word {
        "accept" => ApprovalDecision::AllowOnce,
        "acceptForSession" => ApprovalDecision::AllowAlways,
        "acceptWithExecpolicyAmendment" => ApprovalDecision::AllowAlwaysSave,
        _ => ApprovalDecision::Reject,
    };
    (decision, word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: ToolKind) -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c9".into(),
            tool: "shell".into(),
            kind,
            title: "git push --force".into(),
            reason: "dangerous".into(),
            command: Some("git push --force".into()),
            changes: vec![],
            remember_key: "exec:git push".into(),
            dangerous: false,
        }
    }

    #[test]
    fn codexs_decisions_map_to_answers_and_anything_else_declines() {
        let of = |v: Value| decision_of(&Ok(json!({ "decision": v }))).0;
        assert_eq!(of(json!("accept")), ApprovalDecision::AllowOnce);
        assert_eq!(of(json!("acceptForSession")), ApprovalDecision::AllowAlways);
        assert_eq!(
            of(json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["git", "push"]}})),
            ApprovalDecision::AllowAlwaysSave
        );
        assert_eq!(of(json!({"accept": {}})), ApprovalDecision::Reject);
        assert_eq!(of(json!("cancel")), ApprovalDecision::Reject);
        assert_eq!(decision_of(&Err(json!({}))).0, ApprovalDecision::Reject);
    }

    #[test]
    fn commands_and_edits_ask_with_their_own_method() {
        let (m, p) = request_for("t", "u", Path::new("/w"), &req(ToolKind::Execute));
        assert_eq!(m, "item/commandExecution/requestApproval");
        assert_eq!(
            (p["itemId"].as_str(), p["command"].as_str()),
            (Some("c9"), Some("git push --force"))
        );
        assert!(p["startedAtMs"].is_i64());
        let (m, p) = request_for("t", "u", Path::new("/w"), &req(ToolKind::Edit));
        assert_eq!(m, "item/fileChange/requestApproval");
        assert!(p.get("command").is_none());
        let mut dangerous = req(ToolKind::Execute);
        dangerous.dangerous = true;
        let (_, p) = request_for("t", "u", Path::new("/w"), &dangerous);
        assert_eq!(
            p["availableDecisions"],
            json!(["accept", "decline", "cancel"])
        );
        let (_, p) = request_for("t", "u", Path::new("/w"), &req(ToolKind::Execute));
        let save =
            json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["git", "push"]}});
        assert_eq!(
            p["availableDecisions"],
            json!(["accept", "acceptForSession", save, "decline", "cancel"])
        );
        assert_eq!(p["proposedExecpolicyAmendment"], json!(["git", "push"]));
        // A whole line (no prefix) is remembered for the session only.
        let mut line = req(ToolKind::Execute);
        line.remember_key = "exec=`make && ls`".into();
        let (_, p) = request_for("t", "u", Path::new("/w"), &line);
        assert_eq!(
            p["availableDecisions"],
            json!(["accept", "acceptForSession", "decline", "cancel"])
        );
    }
}
