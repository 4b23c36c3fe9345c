//! Compaction: replace a long history by a handoff summary plus the user's own messages
//! (verbatim, newest first within a budget), so the session can go on in a smaller context.

use crate::hooks::HookEvent;
use interpreter_protocol::Event;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use crate::model::{HistoryItem, ModelError, ModelRequest, Parts as _};
use crate::store::LogLine;
use crate::tools::truncate::approx_tokens;

/// Budget for the user's messages kept word for word.
const USER_MESSAGES_BUDGET_TOKENS: usize = 20_000;

const COMPACT_SYSTEM: &str =
    "You are compacting a coding agent's conversation so it can continue in a fresh context.";

const COMPACT_INSTRUCTION: &str = "\
Write a first-person handoff note to yourself that replaces the conversation above. Keep \
exact file paths, commands, error messages and results. Use these sections:
## Task — what the user wants, in their terms
## Done — what was changed and verified, with paths
## State — the current state of the code and anything half-finished
## Open issues — errors not yet solved, questions for the user
## Next — the concrete next steps
Be complete but terse. Do not call tools.";

impl Session {
    /// Summarizes the history with the model and replaces it. The user's messages survive
    /// verbatim (the newest ones, within a budget).
    /// `trigger` is `manual` (the user asked) or `auto`, as hooks' matchers read it.
    pub(super) async fn compact(
        &mut self,
        trigger: &str,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        self.compact_hooks(HookEvent::PreCompact, trigger, cancel)
            .await;
        let compaction_id = uuid::Uuid::now_v7().to_string();
        self.services.events.send(Event::ContextCompacting {
            compaction_id: compaction_id.clone(),
        });
        let result = self.compact_inner(cancel, &compaction_id).await;
        match &result {
            Err(e) => self
                .services
                .events
                .send(Event::Warning { message: e.clone() }),
            Ok(()) => {
                self.compact_hooks(HookEvent::PostCompact, trigger, cancel)
                    .await;
            }
        }
        result
    }

    /// Tokens the next request would carry: system prompt, tool schemas and history.
    pub(super) fn context_estimate(&self) -> usize {
        let tools = serde_json::to_string(self.state.tools.spec_slice())
            .map(|t| approx_tokens(&t))
            .unwrap_or(0);
        approx_tokens(&self.state.system_prompt) + tools + history_tokens(&self.state.history)
    }

    /// The context window and the point at which compaction starts: 85% of the window, or
    /// when less than the output budget would be left.
    pub(super) fn compaction_threshold(&self) -> Option<(usize, usize)> {
        let window = self.context_window()? as usize;
        let reserve = (self.config.max_output_tokens as usize).min(window / 4);
        Some((
            window,
            (window * 85 / 100).min(window.saturating_sub(reserve)),
        ))
    }

    /// Compacts when the next request would pass the threshold. Failures leave the history
    /// as it was (the request may still fit).
    pub(super) async fn compact_if_needed(&mut self, cancel: &CancellationToken) {
        let Some((_, threshold)) = self.compaction_threshold() else {
            return;
        };
        if self.parent_id.is_some() || self.context_estimate() < threshold {
            return;
        }
        // Nothing to gain from summarizing a history that is all user messages.
        if !self
            .state
            .history
            .iter()
            .any(|h| matches!(h, HistoryItem::Assistant(_)))
        {
            return;
        }
        let _ = self.compact("auto", cancel).await;
    }

    async fn compact_inner(
        &mut self,
        cancel: &CancellationToken,
        compaction_id: &str,
    ) -> Result<(), String> {
        let tokens_before = history_tokens(&self.state.history);
        let mut history = self.wire_history(&self.state.history).into_owned();
        history.push(HistoryItem::User {
            text: COMPACT_INSTRUCTION.into(),
            images: vec![],
            synthetic: true,
        });
        let req = ModelRequest {
            model: &self.config.model,
            system: COMPACT_SYSTEM,
            history: &history,
            tools: &[],
            prompt_cache_key: &self.state.cache_key,
            max_output_tokens: self.config.max_output_tokens,
            reasoning_effort: self
                .config
                .reasoning_effort
                .map(interpreter_protocol::ReasoningEffort::as_str),
            output_schema: None,
            hosted_search: None,
            shape: crate::model::RequestShape::default(),
        };
        let events = self.services.events.clone();
        let mut on_retry = move |m: String| events.send(Event::Warning { message: m });
        let mut on_wait = wait_notice(&self.services.events, &self.config);
        let resp = match self
            .services
            .client
            .stream(&req, &mut |_| {}, &mut on_retry, &mut on_wait, cancel)
            .await
        {
            Ok(r) => r,
            Err(ModelError::Cancelled) => return Err("compaction was cancelled".into()),
            Err(e) => return Err(format!("compaction failed: {e}")),
        };
        if let Some(u) = &resp.usage {
            self.account(u);
        }
        let summary = resp.text().trim().to_string();
        if summary.is_empty() {
            return Err("compaction failed: the model returned an empty summary".into());
        }
        let mut new_history = self.state.harness.initial_context(&self.services.env);
        new_history.extend(kept_user_messages(
            &self.state.history,
            USER_MESSAGES_BUDGET_TOKENS,
        ));
        new_history.push(HistoryItem::User {
            text: format!(
                "<compacted_context>\nThe conversation so far has been compacted. The note below is \
                 my own handoff; treat it as notes, not proof, and re-read files before relying \
                 on details.\n\n{summary}\n</compacted_context>"
            ),
            images: vec![],
            synthetic: true,
        });
        // Tasks still running survive the compaction: the model must still know them.
        if let Some(text) = running_tasks_note(&self.services.tasks.running()) {
            new_history.push(HistoryItem::User {
                text,
                images: vec![],
                synthetic: true,
            });
        }
        let tokens_after = history_tokens(&new_history);
        self.log_line(&LogLine::Replace {
            history: new_history.clone(),
        });
        if let Some(log) = &mut self.state.log {
            let _ = log.sync();
        }
        self.state.history = new_history;
        // Turns before a compaction cannot leave a history that no longer holds them.
        self.state.turns.clear();
        self.send_undoable();
        self.services.events.send(Event::ContextCompacted {
            compaction_id: compaction_id.to_string(),
            summary: summary.clone(),
            tokens_before: tokens_before as u64,
            tokens_after: tokens_after as u64,
        });
        Ok(())
    }
}

/// The background tasks still running, for the history after a compaction.
fn running_tasks_note(tasks: &[crate::tools::background::TaskRecord]) -> Option<String> {
    if tasks.is_empty() {
        return None;
    }
    let mut text = String::from(
        "<system-reminder>\nBackground tasks still running (you will be notified when each ends; TaskOutput reads their output, TaskStop stops them):\n",
    );
    for t in tasks {
        text.push_str(&format!(
            "- {}: `{}` (output: {})\n",
            t.id,
            t.command,
            t.output_path.display()
        ));
    }
    text.push_str("</system-reminder>");
    Some(text)
}

pub(super) fn history_tokens(history: &[HistoryItem]) -> usize {
    history
        .iter()
        .map(|h| match h {
            HistoryItem::User { text, .. } => approx_tokens(text),
            HistoryItem::Assistant(reply) => {
                approx_tokens(&reply.text())
                    + reply.reasoning().map(approx_tokens).unwrap_or(0)
                    + reply
                        .calls()
                        .map(|c| approx_tokens(&c.arguments) + 8)
                        .sum::<usize>()
            }
            HistoryItem::ToolResult { output, .. } => approx_tokens(output),
        })
        .sum()
}

/// The user's own messages, oldest first, keeping the newest ones that fit the budget.
fn kept_user_messages(history: &[HistoryItem], budget: usize) -> Vec<HistoryItem> {
    let mut kept = Vec::new();
    let mut used = 0;
    for item in history.iter().rev() {
        if let HistoryItem::User {
            text,
            synthetic: false,
            ..
        } = item
        {
            let t = approx_tokens(text);
            if used + t > budget {
                break;
            }
            used += t;
            kept.push(item.clone());
        }
    }
    kept.reverse();
    kept
}

/// Tells the front end that a model request is waiting ([`Event::ModelWaiting`]).
pub(super) fn wait_notice(
    events: &super::EventSink,
    config: &crate::config::Config,
) -> impl FnMut(crate::model::client::Waiting) + Send + use<> {
    let (events, provider) = (events.clone(), config.provider.id.clone());
    move |w| {
        events.send(Event::ModelWaiting {
            provider: provider.clone(),
            attempt: w.attempt,
            elapsed_ms: u64::try_from(w.elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AssistantReply;

    fn user(t: &str, synthetic: bool) -> HistoryItem {
        HistoryItem::User {
            text: t.into(),
            images: vec![],
            synthetic,
        }
    }

    #[test]
    fn keeps_newest_user_messages_within_budget() {
        let h = vec![
            user("ctx", true),
            user(&"a".repeat(400), false),
            HistoryItem::Assistant(AssistantReply::new("x", vec![])),
            user(&"b".repeat(40), false),
            user(&"c".repeat(40), false),
        ];
        let kept = kept_user_messages(&h, 30);
        assert_eq!(
            kept,
            vec![user(&"b".repeat(40), false), user(&"c".repeat(40), false)]
        );
    }
}
