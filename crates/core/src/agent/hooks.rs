//! When a session runs its hooks (`crate::hooks`), and what their answers do:
//!
//! - `SessionStart` (a subagent: `SubagentStart`) before the first turn's prompt: context;
//! - `UserPromptSubmit`: context, or the prompt is blocked and the turn ends;
//! - `PreToolUse`: the call is blocked (its result says why), or runs with new arguments;
//! - `PostToolUse`: feedback and context join the call's result;
//! - `Stop` (a subagent: `SubagentStop`): a block makes the turn go on with the reason;
//! - `PreCompact`, `PostCompact`: around compaction, reported only;
//! - `SessionEnd` as the session closes, reported only;
//! - `PermissionRequest` and `Notification` (`permission_prompt`) when a call asks the user,
//!   in [`HookedApprover`].

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::approvals::{fields, run_for_call};
use super::session::Session;
use crate::hooks::{CallView, HookEvent, Permission, Place};
use crate::model::HistoryItem;
use crate::model::types::Parts as _;

/// A Stop hook may send the turn back this many times in a row; then the turn ends.
const MAX_STOP_CONTINUES: usize = 8;

impl Session {
    /// Hooks run from the session's folder, confined as its commands are now.
    pub(super) fn place_hooks(&self, turn_id: Option<String>) {
        let permission_mode = match () {
            _ if self.state.plan_saved.is_some() => "plan",
            _ if self.services.policy.sandbox == crate::config::SandboxMode::DangerFullAccess
                && self.services.policy.approval == crate::config::ApprovalPolicy::Never =>
            {
                "bypassPermissions"
            }
            _ => "default",
        };
        self.services.hooks.set_place(Place {
            cwd: self.services.workspace.cwd().to_path_buf(),
            confinement: self
                .services
                .policy
                .confinement(self.services.workspace.roots()),
            turn_id,
            permission_mode,
        });
    }

    /// `SessionStart` once per session in this process, before its first prompt (or
    /// `SubagentStart` for a subagent of type `kind`): their context joins the history.
    pub(super) async fn start_hooks(&mut self, kind: Option<&str>, cancel: &CancellationToken) {
        if std::mem::replace(&mut self.state.hooks_started, true) {
            return;
        }
        let (event, matcher, extra) = match kind {
            Some(kind) => (
                HookEvent::SubagentStart,
                kind.to_string(),
                json!({"agent_id": self.id, "agent_type": kind}),
            ),
            None => {
                let source = match self
                    .state
                    .history
                    .iter()
                    .any(|h| matches!(h, HistoryItem::Assistant(_)))
                {
                    true => "resume",
                    false => "startup",
                };
                (
                    HookEvent::SessionStart,
                    source.to_string(),
                    json!({"source": source}),
                )
            }
        };
        if !self.services.hooks.has(event) {
            return;
        }
        let extra = fields(extra);
        let v = self
            .services
            .hooks
            .run_plain(event, Some(&matcher), extra, cancel)
            .await;
        self.push_hook_context(event, v.context);
    }

    fn push_hook_context(&mut self, event: HookEvent, context: Vec<String>) {
        for text in context {
            self.push_history(HistoryItem::User {
                text: format!("{} hook additional context: {text}", event.name()),
                images: vec![],
                synthetic: true,
            });
        }
    }

    /// `UserPromptSubmit`: Err(why) when a hook blocked the prompt (or stopped the turn).
    pub(super) async fn prompt_hooks(
        &mut self,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        if !self.services.hooks.has(HookEvent::UserPromptSubmit) {
            return Ok(());
        }
        let extra = fields(json!({"prompt": prompt}));
        let v = self
            .services
            .hooks
            .run_plain(HookEvent::UserPromptSubmit, None, extra, cancel)
            .await;
        if let Some(why) = v.block.or(v.stop) {
            return Err(why);
        }
        self.push_hook_context(HookEvent::UserPromptSubmit, v.context);
        Ok(())
    }

    /// `PreToolUse`: Err(why) when blocked; otherwise the call's arguments (rewritten when a
    /// hook gave new ones) and context for its result.
    pub(super) async fn pre_tool_hooks(
        &mut self,
        call: &CallView,
        call_id: &str,
        cancel: &CancellationToken,
    ) -> Result<(Option<Value>, Vec<String>), String> {
        if !self.services.hooks.has(HookEvent::PreToolUse) {
            return Ok((None, Vec::new()));
        }
        let hooks = &self.services.hooks;
        let v = run_for_call(
            hooks,
            HookEvent::PreToolUse,
            call,
            call_id,
            &Map::new(),
            cancel,
        )
        .await;
        if v.permission == Some(Permission::Deny) || v.block.is_some() || v.stop.is_some() {
            let why = v.block.or(v.stop).unwrap_or_default();
            return Err(format!("A PreToolUse hook blocked this tool call: {why}"));
        }
        Ok((v.updated_input, v.context))
    }

    /// `PostToolUse`: what the hooks said for the model, to add to the call's result.
    pub(super) async fn post_tool_hooks(
        &mut self,
        call: &CallView,
        call_id: &str,
        response: &str,
        cancel: &CancellationToken,
    ) -> Vec<String> {
        if !self.services.hooks.has(HookEvent::PostToolUse) {
            return Vec::new();
        }
        let extra = fields(json!({"tool_response": response}));
        let hooks = &self.services.hooks;
        let v = run_for_call(hooks, HookEvent::PostToolUse, call, call_id, &extra, cancel).await;
        let mut notes = Vec::new();
        if let Some(why) = v.block {
            notes.push(format!("PostToolUse hook feedback: {why}"));
        }
        notes.extend(
            v.context
                .into_iter()
                .map(|c| format!("PostToolUse hook additional context: {c}")),
        );
        notes
    }

    /// `Stop` (a subagent: `SubagentStop`) as the turn is about to end: the reason to go on,
    /// when a hook blocked the end. `continues` is how many times it did so in this turn.
    pub(super) async fn stop_hooks(
        &mut self,
        continues: usize,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let event = match self.parent_id {
            Some(_) => HookEvent::SubagentStop,
            None => HookEvent::Stop,
        };
        if continues >= MAX_STOP_CONTINUES || !self.services.hooks.has(event) {
            return None;
        }
        let last = self.state.history.iter().rev().find_map(|h| match h {
            HistoryItem::Assistant(reply) => Some(reply.text()),
            _ => None,
        });
        let mut extra = json!({
            "stop_hook_active": continues > 0,
            "last_assistant_message": last,
        });
        if self.parent_id.is_some() {
            extra["agent_id"] = json!(self.id);
        }
        let extra = fields(extra);
        let v = self
            .services
            .hooks
            .run_plain(event, None, extra, cancel)
            .await;
        if v.stop.is_some() {
            return None;
        }
        v.block
    }

    /// `SessionEnd` as the session closes, once a `SessionStart` ran in this process (a copy
    /// opened and closed unused says nothing). Reported only.
    pub(super) async fn end_hooks(&mut self) {
        if self.parent_id.is_some()
            || !self.state.hooks_started
            || !self.services.hooks.has(HookEvent::SessionEnd)
        {
            return;
        }
        let extra = fields(json!({"reason": "other"}));
        self.services
            .hooks
            .run_plain(
                HookEvent::SessionEnd,
                Some("other"),
                extra,
                &CancellationToken::new(),
            )
            .await;
    }

    /// `PreCompact` or `PostCompact`, reported only.
    pub(super) async fn compact_hooks(
        &mut self,
        event: HookEvent,
        trigger: &str,
        cancel: &CancellationToken,
    ) {
        if !self.services.hooks.has(event) {
            return;
        }
        let extra = fields(json!({"trigger": trigger}));
        self.services
            .hooks
            .run_plain(event, Some(trigger), extra, cancel)
            .await;
    }
}

/// How hooks see a call of `name` with `args`.
pub(super) fn call_view(
    name: &str,
    args: &Value,
    d: &crate::tools::CallDescription,
    subagent: bool,
) -> CallView {
    CallView {
        name: name.to_string(),
        kind: d.kind,
        command: d.command.clone(),
        args: args.clone(),
        paths: d.locations.clone(),
        subagent,
    }
}

/// The prompt's words, as a `UserPromptSubmit` hook reads them (a skill as its command).
pub(super) fn prompt_text(items: &[interpreter_protocol::InputItem]) -> String {
    use interpreter_protocol::InputItem;
    let words: Vec<String> = items
        .iter()
        .filter_map(|i| match i {
            InputItem::Text { text } => Some(text.clone()),
            InputItem::Skill { name, args } => {
                Some(format!("/{name} {args}").trim_end().to_string())
            }
            _ => None,
        })
        .collect();
    words.join("\n\n")
}
