//! One tool call's turn: its events out as `codex/event` notifications (and MCP progress when
//! the client asked for it), its approvals asked as elicitations or refused, and its final
//! answer as the tool's result.

use interpreter_core::agent::{OpResult, SessionHandle};
use interpreter_protocol::{
    ApprovalDecision, ApprovalRequest, Event, InputItem, Op, TurnEndReason,
};
use rmcp::model::{
    CallToolResult, ContentBlock, CustomNotification, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, NotificationMetaObject, ProgressNotificationParam, ProgressToken, RequestId,
    ServerNotification,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

/// Where a turn reports, and to whom.
pub(crate) struct Reporter {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) request_id: RequestId,
    pub(crate) thread_id: String,
    /// The client's `progressToken` for this call, if it sent one.
    pub(crate) progress: Option<ProgressToken>,
    /// The client declared elicitation: approvals are asked; else they are refused.
    pub(crate) elicit: bool,
}

/// Runs one turn of `prompt` on the thread and returns the tool's result. Cancelling the call
/// (`notifications/cancelled`) interrupts the turn.
pub(crate) async fn run(
    handle: &SessionHandle,
    events: &mut UnboundedReceiver<Event>,
    prompt: String,
    report: &Reporter,
    cancelled: CancellationToken,
) -> CallToolResult {
    // Events queued since the last call (the session's start, its warnings, a background
    // task's end) go out with this one, tagged with the thread like the rest.
    let ticket = handle.submit(Op::UserInput {
        items: vec![InputItem::Text { text: prompt }],
    });
    let event_id = ticket.id.clone();
    let done = ticket.done();
    tokio::pin!(done);
    let mut answer = String::new();
    let mut count = 0u32;
    let mut interrupted = false;
    let result = loop {
        tokio::select! {
            Some(e) = events.recv() => {
                count += 1;
                on_event(handle, report, &event_id, count, &e, &mut answer).await;
            }
            () = cancelled.cancelled(), if !interrupted => {
                interrupted = true;
                let _ = handle.submit(Op::Interrupt);
            }
            r = &mut done => break r,
        }
    };
    while let Ok(e) = events.try_recv() {
        count += 1;
        on_event(handle, report, &event_id, count, &e, &mut answer).await;
    }
    let failure = match result {
        OpResult::Turn(ended) => match ended.reason {
            TurnEndReason::Completed | TurnEndReason::MaxTokens => None,
            TurnEndReason::Cancelled => Some("the turn was cancelled".to_string()),
            TurnEndReason::MaxTurnRequests => {
                Some("the turn stopped at max_turn_requests model requests".to_string())
            }
            TurnEndReason::Refusal => Some("the provider refused to answer".to_string()),
            TurnEndReason::Failed { message } => Some(format!("the turn failed: {message}")),
        },
        OpResult::Done | OpResult::Undone(_) | OpResult::Failed(_) => {
            Some("the session ended before the turn did".to_string())
        }
    };
    let structured = json!({"threadId": report.thread_id, "content": answer});
    match failure {
        None => {
            // Codex's shape: the answer as text, and beside it with the thread id.
            let mut r = CallToolResult::structured(structured);
            r.content = vec![ContentBlock::text(answer)];
            r
        }
        Some(why) => {
            let text = if answer.is_empty() {
                why
            } else {
                format!("{why}\n\n{answer}")
            };
            let mut r = CallToolResult::structured_error(json!({
                "threadId": report.thread_id, "content": text
            }));
            r.content = vec![ContentBlock::text(text)];
            r
        }
    }
}

async fn on_event(
    handle: &SessionHandle,
    report: &Reporter,
    event_id: &str,
    count: u32,
    e: &Event,
    answer: &mut String,
) {
    match e {
        Event::AgentMessage { text, .. } => text.clone_into(answer),
        Event::ApprovalRequested(req) => approve(handle, report, req),
        _ => {}
    }
    let msg = serde_json::to_value(e).unwrap_or(Value::Null);
    let params = json!({
        "_meta": {"requestId": report.request_id, "threadId": report.thread_id},
        "id": event_id,
        "msg": msg,
    });
    let note = CustomNotification::new("codex/event", Some(params));
    // A client that went away is not this turn's problem: the turn still ends and is logged.
    let _ = report
        .peer
        .send_notification(ServerNotification::CustomNotification(note))
        .await;
    if let (Some(token), Some(message)) = (&report.progress, progress_message(e)) {
        let mut meta = NotificationMetaObject::new();
        meta.0.0.insert("threadId".into(), json!(report.thread_id));
        let mut p =
            ProgressNotificationParam::new(token.clone(), f64::from(count)).with_message(message);
        p.meta = Some(meta);
        let _ = report.peer.notify_progress(p).await;
    }
}

/// A line saying what the agent is doing, for MCP progress; None for the many small events
/// (deltas) a progress bar has no use for.
fn progress_message(e: &Event) -> Option<String> {
    Some(match e {
        Event::TurnStarted { .. } => "working".into(),
        Event::AgentMessage { text, .. } => first_line("answered", text),
        Event::Reasoning { .. } => "thinking".into(),
        Event::ToolCallBegin(b) => first_line("running", &b.title),
        Event::ToolCallEnd(_) => "tool call done".into(),
        Event::ApprovalRequested(r) => first_line("asking to run", &r.title),
        Event::Warning { message, .. } => first_line("warning", message),
        _ => return None,
    })
}

fn first_line(what: &str, text: &str) -> String {
    let line: String = text
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(120)
        .collect();
    format!("{what}: {line}")
}

/// Answers an approval request: asked as an elicitation when the client can be asked, else
/// refused, as in exec. The answer comes back on a task of its own, so events keep flowing.
fn approve(handle: &SessionHandle, report: &Reporter, req: &ApprovalRequest) {
    let handle = handle.clone();
    let call_id = req.call_id.clone();
    if !report.elicit {
        let _ = handle.submit(Op::Approval {
            call_id,
            decision: ApprovalDecision::Reject,
        });
        return;
    }
    let peer = report.peer.clone();
    let mut meta = serde_json::Map::new();
    meta.insert("threadId".into(), json!(report.thread_id));
    meta.insert("callId".into(), json!(call_id));
    meta.insert("tool".into(), json!(req.tool));
    if let Some(c) = &req.command {
        meta.insert("command".into(), json!(c));
    }
    let what = req.command.as_deref().unwrap_or(&req.title);
    let message = format!("Allow interpreter to run `{what}`? ({})", req.reason);
    tokio::spawn(async move {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: Some(meta.into()),
            message,
            requested_schema: ElicitationSchema::new(BTreeMap::new()),
        };
        let decision = match peer.create_elicitation(params).await {
            Ok(r) if r.action == ElicitationAction::Accept => ApprovalDecision::AllowOnce,
            Ok(_) => ApprovalDecision::Reject,
            Err(e) => {
                tracing::warn!("mcp-server: asking the client to approve {call_id}: {e}");
                ApprovalDecision::Reject
            }
        };
        let _ = handle.submit(Op::Approval { call_id, decision });
    });
}
