//! Subagents: a fresh context for a self-contained task, with the same tools minus the
//! subagent tool itself. Only the final message comes back to the caller's history.

use futures::future::BoxFuture;
use interpreter_protocol::{Event, TurnEndReason};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::{EventSink, Session};
use crate::config::{ApprovalPolicy, SandboxMode};
use crate::model::HistoryItem;
use crate::tools::ToolOutcome;

impl Session {
    /// Boxed as `Send` on purpose: it recurses into the turn loop, and an opaque future here
    /// would make the loop's `Send`-ness depend on itself.
    pub(super) fn run_subagent<'a>(
        &'a mut self,
        args: &'a Value,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { self.subagent_inner(args, cancel).await })
    }

    async fn subagent_inner(&mut self, args: &Value, cancel: &CancellationToken) -> ToolOutcome {
        let Some(prompt) = args
            .get("prompt")
            .and_then(Value::as_str)
            .filter(|p| !p.trim().is_empty())
        else {
            return ToolOutcome::error(
                "ERROR: `prompt` is required: the whole task for the subagent.",
            );
        };
        let read_only = matches!(
            args.get("subagent_type").and_then(Value::as_str),
            Some("explore" | "plan")
        );
        let sub_tool = self.harness.subagent_tool().unwrap_or_default();

        // Swap in the subagent's world; everything is restored below.
        let saved_history = std::mem::take(&mut self.history);
        let saved_tools = self.tools.clone();
        let saved_policy = self.policy.clone();
        let saved_events = self.events.clone();
        self.tools.retain(|t| t.name != sub_tool);
        if read_only {
            self.policy =
                Arc::new(saved_policy.with_modes(SandboxMode::ReadOnly, ApprovalPolicy::Never));
        }
        // The user sees the subagent's tool calls, not its chatter.
        let parent = saved_events.clone();
        self.events = EventSink::from_fn(move |e| match e {
            Event::AgentMessageDelta { .. }
            | Event::AgentMessage { .. }
            | Event::ReasoningDelta { .. }
            | Event::Reasoning { .. }
            | Event::TurnStarted { .. }
            | Event::TurnEnded(_) => {}
            other => parent.send(other),
        });
        self.subagent_depth += 1;
        let mut history = self.harness.initial_context(&self.env);
        history.push(HistoryItem::User {
            text: prompt.to_string(),
            images: vec![],
            synthetic: false,
        });
        self.history = history;
        let reason = self.turn_loop(cancel).await;
        let answer = self.history.iter().rev().find_map(|h| match h {
            HistoryItem::Assistant { text, .. } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        });
        self.subagent_depth -= 1;
        self.events = saved_events;
        self.policy = saved_policy;
        self.tools = saved_tools;
        self.history = saved_history;
        match (reason, answer) {
            (TurnEndReason::Completed, Some(a)) => ToolOutcome::ok(a),
            (TurnEndReason::Cancelled, _) => ToolOutcome::error("The subagent was cancelled."),
            (TurnEndReason::Failed { message }, _) => {
                ToolOutcome::error(format!("The subagent failed: {message}"))
            }
            (other, Some(a)) => {
                ToolOutcome::ok(format!("{a}\n\n(The subagent stopped early: {other:?}.)"))
            }
            (other, None) => {
                ToolOutcome::error(format!("The subagent ended without an answer ({other:?})."))
            }
        }
    }
}
