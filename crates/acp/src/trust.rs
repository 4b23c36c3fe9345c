//! The trust question in ACP (docs/trust.md). A new session in a project with config of its
//! own, which the user has not answered for, starts without that config and asks at its first
//! prompt with `session/request_permission` (clients show permission requests inside a turn),
//! before the prompt runs. Trusted: the answer is saved in config.toml and the session opens
//! again under the same id with the project's config, before anything ran, and the client
//! gets its new settings. Not trusted: saved, and the session goes on as it is. No answer (the
//! client cancelled): nothing saved, asked again in the next session.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use interpreter_core::config::{ProjectTrust, TrustLevel};

use super::AcpSession;

/// What a new session asks at its first prompt: its unanswered project, and the project's
/// hooks that wait for review (new or changed); and how to open the session again after.
pub(crate) struct PendingTrust<R> {
    pub(crate) project: ProjectTrust,
    /// The project itself is unanswered.
    pub(crate) ask_project: bool,
    /// Hooks to approve once the project is trusted.
    pub(crate) hooks: Vec<std::sync::Arc<interpreter_core::hooks::Handler>>,
    pub(crate) reopen: R,
}

/// The question; None when the client gave no answer.
pub(super) async fn ask(
    cx: &ConnectionTo<Client>,
    id: &str,
    project: &ProjectTrust,
) -> Option<TrustLevel> {
    let root = project.root.display();
    let files: Vec<String> = project
        .own_files()
        .map(|f| format!("- `{}`", f.display()))
        .collect();
    let text = format!(
        "{root} has configuration of its own:\n{}\n\nA trusted project's own config loads with every session in it (its model, sandbox and MCP servers). The answer is saved in your config.toml.",
        files.join("\n")
    );
    let fields = ToolCallUpdateFields::new()
        .title(format!("Trust {root}?"))
        .kind(ToolKind::Other)
        .content(vec![ToolCallContent::from(text)]);
    let options = vec![
        PermissionOption::new(
            "trust",
            "Trust this project",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(
            "distrust",
            "Don't trust it",
            PermissionOptionKind::RejectAlways,
        ),
    ];
    let request = RequestPermissionRequest::new(
        SessionId::new(id.to_string()),
        ToolCallUpdate::new(TRUST_CALL, fields),
        options,
    );
    match cx.send_request(request).block_task().await {
        Ok(resp) => match resp.outcome {
            RequestPermissionOutcome::Selected(s) => match &*s.option_id.0 {
                "trust" => Some(TrustLevel::Trusted),
                "distrust" => Some(TrustLevel::Untrusted),
                _ => None,
            },
            _ => None,
        },
        Err(e) => {
            tracing::warn!("trust question failed: {}", e.message);
            None
        }
    }
}

/// Whether to run the project's new or changed hooks; true when the user trusts them.
pub(super) async fn ask_hooks(
    cx: &ConnectionTo<Client>,
    id: &str,
    hooks: &[std::sync::Arc<interpreter_core::hooks::Handler>],
) -> bool {
    let list: Vec<String> = hooks
        .iter()
        .map(|h| format!("- `{}`", interpreter_core::hooks::trust::describe(h)))
        .collect();
    let text = format!(
        "The project has hooks that are new or changed since you approved them:\n{}\n\nThey run programs at points of every session here. The approval of each exact definition is saved in your config.toml; a change asks again.",
        list.join("\n")
    );
    let fields = ToolCallUpdateFields::new()
        .title("Run the project's hooks?")
        .kind(ToolKind::Other)
        .content(vec![ToolCallContent::from(text)]);
    let options = vec![
        PermissionOption::new(
            "trust",
            "Run these hooks",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new("skip", "Keep them off", PermissionOptionKind::RejectOnce),
    ];
    let request = RequestPermissionRequest::new(
        SessionId::new(id.to_string()),
        ToolCallUpdate::new(HOOKS_CALL, fields),
        options,
    );
    match cx.send_request(request).block_task().await {
        Ok(resp) => matches!(
            resp.outcome,
            RequestPermissionOutcome::Selected(s) if &*s.option_id.0 == "trust"
        ),
        Err(e) => {
            tracing::warn!("hooks question failed: {}", e.message);
            false
        }
    }
}

/// The project question's card, closed with what came of it.
pub(super) fn settled(s: &AcpSession, status: ToolCallStatus, title: &str) {
    settled_card(s, TRUST_CALL, status, title);
}

/// The hooks question's card, closed with what came of it.
pub(super) fn settled_hooks(s: &AcpSession, status: ToolCallStatus, title: &str) {
    settled_card(s, HOOKS_CALL, status, title);
}

fn settled_card(s: &AcpSession, call: &str, status: ToolCallStatus, title: &str) {
    s.translator
        .send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call.to_string(),
            ToolCallUpdateFields::new().status(status).title(title),
        )));
}

/// The ids of the questions' cards.
const TRUST_CALL: &str = "trust-project";
const HOOKS_CALL: &str = "trust-hooks";
