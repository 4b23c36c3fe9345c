//! Permission prompts: `session/request_permission` for a tool call the session must ask about.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, Terminal, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
};
use interpreter_face::terminal_text::{escape_invisible, escape_one_line};
use interpreter_protocol::{ApprovalDecision, ApprovalRequest, ToolKind};
use serde_json::json;

use super::content::{acp_kind, diff_contents};

/// Asks the client with `session/request_permission`; a failed request is a rejection. The
/// command is in `content` whole (every line, invisible and bidirectional characters escaped)
/// with the reason when the rules found it dangerous; `terminal` keeps the call's embedded
/// terminal, which the content replaces otherwise. "Always allow" is offered only when the
/// answer would be remembered.
pub(super) async fn ask_permission(
    cx: &ConnectionTo<Client>,
    sid: SessionId,
    req: ApprovalRequest,
    terminal: bool,
) -> ApprovalDecision {
    let mut fields = ToolCallUpdateFields::new()
        .title(escape_one_line(&req.title))
        .kind(acp_kind(req.kind));
    let mut content = Vec::new();
    if let Some(c) = &req.command {
        content.push(ToolCallContent::from(permission_text(c, &req)));
        if terminal {
            content.push(ToolCallContent::Terminal(Terminal::new(
                req.call_id.clone(),
            )));
        }
        fields = fields.raw_input(json!({"command": c}));
    }
    content.extend(diff_contents(&req.changes));
    // A question to the user (leaving plan mode) has neither: its text is what they judge.
    if content.is_empty() && req.kind == ToolKind::Think && !req.reason.trim().is_empty() {
        content.push(ToolCallContent::from(req.reason.clone()));
    }
    if !content.is_empty() {
        fields = fields.content(content);
    }
    let mut options = vec![PermissionOption::new(
        "allow_once",
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if req.offers_always() {
        let always = match req.command.as_deref() {
            Some(_) => format!(
                "Always allow {} in this session",
                always_what(&req.remember_key)
            ),
            None => "Always allow edits to these files in this session".to_string(),
        };
        options.push(PermissionOption::new(
            "allow_always",
            always,
            PermissionOptionKind::AllowAlways,
        ));
    }
    // Written to the user's rules file, so later sessions run it unasked too.
    if req.offers_save() {
        options.push(PermissionOption::new(
            "allow_always_save",
            format!(
                "Always allow {}, and save (rules/default.rules)",
                always_what(&req.remember_key)
            ),
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        "reject_once",
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    let request = RequestPermissionRequest::new(
        sid,
        ToolCallUpdate::new(req.call_id.clone(), fields),
        options,
    );
    match cx.send_request(request).block_task().await {
        Ok(resp) => match resp.outcome {
            RequestPermissionOutcome::Selected(s) => match &*s.option_id.0 {
                "allow_once" => ApprovalDecision::AllowOnce,
                "allow_always" if req.offers_always() => ApprovalDecision::AllowAlways,
                "allow_always_save" if req.offers_save() => ApprovalDecision::AllowAlwaysSave,
                _ => ApprovalDecision::Reject,
            },
            RequestPermissionOutcome::Cancelled => ApprovalDecision::Cancelled,
            _ => ApprovalDecision::Reject,
        },
        Err(e) => {
            tracing::warn!("permission request failed: {}", e.message);
            ApprovalDecision::Reject
        }
    }
}

/// The command as the user must read it, in a fenced block, and why the rules found it
/// dangerous.
fn permission_text(command: &str, req: &ApprovalRequest) -> String {
    let shown = escape_invisible(command.trim_end_matches('\n'));
    // A fence longer than any run of backticks in the command.
    let longest = shown.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut text = format!("{fence}sh\n{shown}\n{fence}");
    if req.dangerous {
        text.push_str(&format!(
            "\n\n**Dangerous:** {}. It asks every time.",
            escape_one_line(req.reason.trim())
        ));
    }
    text
}

/// What an "always allow" covers, from the policy's key (`exec:<prefix>`,
/// ``exec=`<line>` ``).
fn always_what(key: &str) -> String {
    let shown = key
        .strip_prefix("exec:")
        .or_else(|| key.strip_prefix("exec=`").and_then(|k| k.strip_suffix('`')))
        .unwrap_or(key);
    format!("`{}`", escape_one_line(shown).replace('`', "'"))
}
