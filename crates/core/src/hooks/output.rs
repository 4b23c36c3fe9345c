//! What a hook's run means, by its event, in the rules Codex and Claude Code share:
//!
//! - exit 0: stdout may be JSON (`continue`, `stopReason`, `systemMessage`, `decision`,
//!   `reason`, `hookSpecificOutput`); plain stdout of `SessionStart`, `UserPromptSubmit` and
//!   `SubagentStart` is context for the model;
//! - exit 2: blocks what the event can block, with stderr as the reason (sent to the model
//!   for a tool call or a turn's end); for the other events stderr is shown to the user;
//! - any other exit, a timeout or bad JSON: the hook failed; what it ran for goes on.

use interpreter_protocol::{HookOutputEntry, HookOutputKind, HookRunStatus};
use serde_json::Value;

use super::HookEvent;

/// How a program's run ended.
#[derive(Debug)]
pub(crate) enum Ran {
    /// It could not start, or ran past its timeout.
    Failed(String),
    /// It exited.
    Exited {
        code: Option<i32>,
        stdout: String,
        stderr: String,
    },
}

/// A permission decision a hook made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Permission {
    Allow,
    Ask,
    Deny,
}

/// What the hooks of one event decided, together.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    /// Blocked, and why (for the model, or the user for a prompt).
    pub(crate) block: Option<String>,
    /// Context for the model.
    pub(crate) context: Vec<String>,
    /// The strictest permission decision.
    pub(crate) permission: Option<Permission>,
    /// New arguments for the tool call (the last one given).
    pub(crate) updated_input: Option<Value>,
    /// `continue: false`: the turn stops, and why.
    pub(crate) stop: Option<String>,
}

impl Verdict {
    pub(super) fn add(&mut self, other: Verdict) {
        if self.block.is_none() {
            self.block = other.block;
        }
        self.context.extend(other.context);
        self.permission = self.permission.max(other.permission);
        if other.updated_input.is_some() {
            self.updated_input = other.updated_input;
        }
        if self.stop.is_none() {
            self.stop = other.stop;
        }
    }
}

fn can_block(event: HookEvent) -> bool {
    matches!(
        event,
        HookEvent::PreToolUse
            | HookEvent::PermissionRequest
            | HookEvent::PostToolUse
            | HookEvent::UserPromptSubmit
            | HookEvent::Stop
            | HookEvent::SubagentStop
    )
}

fn stdout_is_context(event: HookEvent) -> bool {
    matches!(
        event,
        HookEvent::SessionStart | HookEvent::UserPromptSubmit | HookEvent::SubagentStart
    )
}

/// The meaning of one run: its decisions, its status and what it reported.
pub(super) fn parse(event: HookEvent, ran: Ran) -> (Verdict, HookRunStatus, Vec<HookOutputEntry>) {
    let mut v = Verdict::default();
    let mut entries = Vec::new();
    let entry = |kind, text: &str| HookOutputEntry {
        kind,
        text: text.trim().to_string(),
    };
    let (code, stdout, stderr) = match ran {
        Ran::Failed(why) => {
            return (
                v,
                HookRunStatus::Failed,
                vec![entry(HookOutputKind::Error, &why)],
            );
        }
        Ran::Exited {
            code,
            stdout,
            stderr,
        } => (code, stdout, stderr),
    };
    match code {
        Some(0) => {
            let out = stdout.trim();
            if out.is_empty() {
                return (v, HookRunStatus::Completed, entries);
            }
            if out.starts_with('{') {
                return match serde_json::from_str::<Value>(out) {
                    Ok(json) => json_output(event, &json),
                    Err(e) => (
                        v,
                        HookRunStatus::Failed,
                        vec![entry(
                            HookOutputKind::Error,
                            &format!("the hook printed invalid JSON: {e}"),
                        )],
                    ),
                };
            }
            if stdout_is_context(event) {
                v.context.push(out.to_string());
                entries.push(entry(HookOutputKind::Context, out));
            }
            (v, HookRunStatus::Completed, entries)
        }
        Some(2) if can_block(event) => {
            let reason = stderr.trim();
            if reason.is_empty() {
                let why = format!(
                    "{} hook exited with code 2 but wrote no reason to stderr",
                    event.name()
                );
                return (
                    v,
                    HookRunStatus::Failed,
                    vec![entry(HookOutputKind::Error, &why)],
                );
            }
            v.block = Some(reason.to_string());
            if event == HookEvent::PermissionRequest {
                v.permission = Some(Permission::Deny);
            }
            (
                v,
                HookRunStatus::Blocked,
                vec![entry(HookOutputKind::Feedback, reason)],
            )
        }
        Some(2) => {
            if !stderr.trim().is_empty() {
                entries.push(entry(HookOutputKind::Warning, &stderr));
            }
            (v, HookRunStatus::Completed, entries)
        }
        other => {
            let code = other.map_or_else(|| "no status".to_string(), |c| c.to_string());
            let mut why = format!("the hook exited with {code}");
            if !stderr.trim().is_empty() {
                why.push_str(": ");
                why.push_str(stderr.trim());
            }
            (
                v,
                HookRunStatus::Failed,
                vec![entry(HookOutputKind::Error, &why)],
            )
        }
    }
}

/// A JSON answer, in Claude Code's and Codex's fields.
fn json_output(event: HookEvent, json: &Value) -> (Verdict, HookRunStatus, Vec<HookOutputEntry>) {
    let mut v = Verdict::default();
    let mut entries = Vec::new();
    let mut status = HookRunStatus::Completed;
    let text = |k: &str, from: &Value| from.get(k).and_then(Value::as_str).map(str::to_string);
    let push = |entries: &mut Vec<HookOutputEntry>, kind, text: &str| {
        entries.push(HookOutputEntry {
            kind,
            text: text.to_string(),
        });
    };
    if let Some(m) = text("systemMessage", json) {
        push(&mut entries, HookOutputKind::Warning, &m);
    }
    let specific = json.get("hookSpecificOutput").unwrap_or(&Value::Null);
    if let Some(c) = text("additionalContext", specific).filter(|c| !c.trim().is_empty()) {
        push(&mut entries, HookOutputKind::Context, &c);
        v.context.push(c);
    }
    let reason = text("reason", json);
    match json.get("decision").and_then(Value::as_str) {
        Some("block") if can_block(event) => {
            v.block = Some(reason.clone().unwrap_or_else(|| "blocked by a hook".into()));
        }
        // Claude Code's older PreToolUse answer.
        Some("approve") if event == HookEvent::PreToolUse => v.permission = Some(Permission::Allow),
        _ => {}
    }
    if event == HookEvent::PreToolUse {
        let why = text("permissionDecisionReason", specific).or(reason.clone());
        match specific.get("permissionDecision").and_then(Value::as_str) {
            Some("deny") => {
                v.permission = Some(Permission::Deny);
                v.block = Some(why.unwrap_or_else(|| "denied by a PreToolUse hook".into()));
            }
            Some("ask") => v.permission = Some(Permission::Ask),
            Some("allow") => v.permission = Some(Permission::Allow),
            _ => {}
        }
        if let Some(input) = specific.get("updatedInput").filter(|i| i.is_object()) {
            v.updated_input = Some(input.clone());
        }
    }
    if event == HookEvent::PermissionRequest {
        let decision = specific.get("decision").unwrap_or(&Value::Null);
        match decision.get("behavior").and_then(Value::as_str) {
            Some("allow") => v.permission = Some(Permission::Allow),
            Some("deny") => {
                v.permission = Some(Permission::Deny);
                v.block =
                    Some(text("message", decision).unwrap_or_else(|| "denied by a hook".into()));
            }
            _ => {}
        }
    }
    if let Some(why) = &v.block {
        status = HookRunStatus::Blocked;
        push(&mut entries, HookOutputKind::Feedback, why);
    }
    if json.get("continue").and_then(Value::as_bool) == Some(false) {
        let why = text("stopReason", json).unwrap_or_else(|| "a hook stopped the turn".into());
        status = HookRunStatus::Stopped;
        push(&mut entries, HookOutputKind::Stop, &why);
        v.stop = Some(why);
    }
    (v, status, entries)
}
