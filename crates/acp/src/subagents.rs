//! Subagents as child sessions, for clients that advertise `clientCapabilities.subagents`
//! (the draft Zed decodes in `crates/agent_servers/src/acp/subagent_updates.rs`): a
//! `subagent_spawned` update on the parent session names the child session, the child's tool
//! calls go to that session with `_meta.claudeCode.parentToolUseId` naming the parent's call,
//! and a `subagent_state_update` settles it. Other clients keep today's flat tool cards.

use agent_client_protocol::v1::schema::{Meta, SessionUpdate};
use interpreter_protocol::{SubagentEnded, SubagentStarted, SubagentState};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;

/// Which session each subagent call belongs to.
#[derive(Default)]
pub(super) struct Children {
    /// Child session → the parent's call that started it.
    parents: Mutex<HashMap<String, String>>,
    /// A child's tool call → its session.
    calls: Mutex<HashMap<String, String>>,
}

impl Children {
    pub(super) fn started(&self, s: &SubagentStarted) -> Value {
        lock(&self.parents).insert(s.session_id.clone(), s.call_id.clone());
        json!({
            "sessionUpdate": "subagent_spawned",
            "subagentSessionId": s.session_id,
            "name": s.name,
            "task": s.task,
            "prompt": s.prompt,
            "capabilities": {},
        })
    }

    pub(super) fn ended(&self, s: &SubagentEnded) -> Value {
        lock(&self.parents).remove(&s.session_id);
        lock(&self.calls).retain(|_, session| *session != s.session_id);
        let state = match s.state {
            SubagentState::Completed => "completed",
            SubagentState::Failed => "failed",
            SubagentState::Cancelled => "cancelled",
        };
        json!({
            "sessionUpdate": "subagent_state_update",
            "subagentSessionId": s.session_id,
            "state": state,
        })
    }

    /// A call made by the subagent `session`, when that subagent is known.
    pub(super) fn call_began(&self, call_id: &str, session: &str) -> bool {
        let known = lock(&self.parents).contains_key(session);
        if known {
            lock(&self.calls).insert(call_id.to_string(), session.to_string());
        }
        known
    }

    /// Where an update goes: the child session (with the attribution Zed reads) for a
    /// subagent's call, else `None` (the session itself).
    pub(super) fn route(&self, update: &mut SessionUpdate) -> Option<String> {
        let id = match update {
            SessionUpdate::ToolCall(c) => c.tool_call_id.0.to_string(),
            SessionUpdate::ToolCallUpdate(u) => u.tool_call_id.0.to_string(),
            _ => return None,
        };
        let session = lock(&self.calls).get(&id).cloned()?;
        let parent = lock(&self.parents).get(&session).cloned()?;
        let add = |meta: &mut Option<Meta>| {
            meta.get_or_insert_with(Meta::new)
                .insert("claudeCode".into(), json!({"parentToolUseId": parent}));
        };
        match update {
            SessionUpdate::ToolCall(c) => add(&mut c.meta),
            SessionUpdate::ToolCallUpdate(u) => add(&mut u.meta),
            _ => {}
        }
        Some(session)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
