//! One turn: user input in, model requests and tool calls until the model answers.

use interpreter_protocol::{
    Event, InputItem, TokenCount, ToolCallBegin, ToolCallEnd, ToolKind, ToolStatus, TurnEndReason,
    TurnEnded,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Session;
use crate::model::{FinishReason, HistoryItem, ModelError, StreamDelta, ToolCall, catalog};
use crate::store::LogLine;
use crate::tools::ToolOutcome;

impl Session {
    /// Runs a turn to its end. Always returns how it ended; never panics on bad model output.
    pub async fn run_turn(
        &mut self,
        input: Vec<InputItem>,
        cancel: CancellationToken,
    ) -> TurnEnded {
        let turn_id = uuid::Uuid::now_v7().to_string();
        self.events.send(Event::TurnStarted {
            turn_id: turn_id.clone(),
        });
        let mut text = String::new();
        let mut images = Vec::new();
        for item in input {
            match item {
                InputItem::Text { text: t } => {
                    if !text.is_empty() {
                        text.push_str("\n\n");
                    }
                    text.push_str(&t);
                }
                InputItem::Image { url } => images.push(url),
            }
        }
        if self.title.is_none() && !text.trim().is_empty() {
            let title: String = text
                .trim()
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(80)
                .collect();
            self.log_line(&LogLine::Title {
                title: title.clone(),
            });
            self.title = Some(title);
        }
        self.push_history(HistoryItem::User {
            text,
            images,
            synthetic: false,
        });
        self.push_reminder();
        let reason = self.turn_loop(&cancel).await;
        self.log_line(&LogLine::TurnEnd {
            turn_id: turn_id.clone(),
            reason: format!("{reason:?}"),
        });
        // The turn is durable before anyone hears it ended.
        if let Some(log) = &mut self.log
            && let Err(e) = log.sync()
        {
            tracing::error!("{e:#}");
        }
        let ended = TurnEnded { turn_id, reason };
        self.events.send(Event::TurnEnded(ended.clone()));
        ended
    }

    /// Adds the harness's reminder (date, permission mode) when it changed since the last one
    /// in history.
    fn push_reminder(&mut self) {
        if let Some(item) = self.pending_reminder() {
            self.push_history(item);
        }
    }

    /// The reminder to send now, if it differs from the last one in history.
    pub(super) fn pending_reminder(&self) -> Option<HistoryItem> {
        let today = chrono::Local::now().format("%Y-%m-%d").to_string();
        let reminder = self.harness.reminder(&self.env, &today)?;
        let last = self.history.iter().rev().find_map(|h| match h {
            HistoryItem::User {
                text,
                synthetic: true,
                ..
            } if text.starts_with("<system-reminder>") => Some(text.as_str()),
            _ => None,
        });
        (last != Some(reminder.as_str())).then(|| HistoryItem::User {
            text: reminder,
            images: vec![],
            synthetic: true,
        })
    }

    pub(super) async fn turn_loop(&mut self, cancel: &CancellationToken) -> TurnEndReason {
        for _ in 0..self.config.max_turn_requests {
            if cancel.is_cancelled() {
                return TurnEndReason::Cancelled;
            }
            self.compact_if_needed(cancel).await;
            let message_id = uuid::Uuid::now_v7().to_string();
            let events = self.events.clone();
            let mid = message_id.clone();
            let mut on_delta = move |d: StreamDelta| {
                events.send(match d {
                    StreamDelta::Text(delta) => Event::AgentMessageDelta {
                        message_id: mid.clone(),
                        delta,
                    },
                    StreamDelta::Reasoning(delta) => Event::ReasoningDelta {
                        message_id: mid.clone(),
                        delta,
                    },
                })
            };
            let events = self.events.clone();
            let mut on_retry = move |m: String| events.send(Event::Warning { message: m });
            let mut on_wait = super::compact::wait_notice(&self.events, &self.config);
            let result = {
                let req = self.model_request(&self.history);
                self.client
                    .stream(&req, &mut on_delta, &mut on_retry, &mut on_wait, cancel)
                    .await
            };
            let resp = match result {
                Ok(r) => r,
                Err(ModelError::Cancelled) => return TurnEndReason::Cancelled,
                Err(e) => {
                    tracing::debug!("model request failed: {e}");
                    return TurnEndReason::Failed {
                        message: e.to_string(),
                    };
                }
            };
            if let Some(u) = &resp.usage {
                self.account(u);
            }
            if let Some(r) = resp.reasoning.as_ref().filter(|r| !r.trim().is_empty()) {
                self.events.send(Event::Reasoning {
                    message_id: message_id.clone(),
                    text: r.clone(),
                });
            }
            if !resp.text.is_empty() {
                self.events.send(Event::AgentMessage {
                    message_id: message_id.clone(),
                    text: resp.text.clone(),
                });
            }
            // Check arguments before anything reaches history: broken JSON never does.
            let mut calls = Vec::new();
            let mut arg_errors = Vec::new();
            for raw in &resp.tool_calls {
                match parse_arguments(&raw.arguments) {
                    Ok(v) => {
                        calls.push(ToolCall {
                            id: raw.id.clone(),
                            name: raw.name.clone(),
                            arguments: v.to_string(),
                        });
                        arg_errors.push(None);
                    }
                    Err(e) => {
                        calls.push(ToolCall {
                            id: raw.id.clone(),
                            name: raw.name.clone(),
                            arguments: "{}".into(),
                        });
                        arg_errors.push(Some(format!(
                            "Error parsing JSON arguments for `{}`: {e}. Send the arguments again as one valid JSON object.",
                            raw.name
                        )));
                    }
                }
            }
            self.push_history(HistoryItem::Assistant {
                text: resp.text.clone(),
                reasoning: resp.reasoning.clone(),
                tool_calls: calls.clone(),
            });
            if calls.is_empty() {
                return match resp.finish_reason {
                    FinishReason::Length => TurnEndReason::MaxTokens,
                    FinishReason::ContentFilter => TurnEndReason::Refusal,
                    _ => TurnEndReason::Completed,
                };
            }
            for (call, arg_error) in calls.iter().zip(arg_errors) {
                if cancel.is_cancelled() {
                    self.push_history(HistoryItem::ToolResult {
                        call_id: call.id.clone(),
                        output: "The user cancelled the turn before this tool call ran.".into(),
                        is_error: true,
                    });
                    continue;
                }
                let outcome = self.run_call(call, arg_error, cancel).await;
                self.push_history(HistoryItem::ToolResult {
                    call_id: call.id.clone(),
                    output: outcome.model_output.clone(),
                    is_error: outcome.is_error(),
                });
            }
            if cancel.is_cancelled() {
                return TurnEndReason::Cancelled;
            }
        }
        TurnEndReason::MaxTurnRequests
    }

    async fn run_call(
        &mut self,
        call: &ToolCall,
        arg_error: Option<String>,
        cancel: &CancellationToken,
    ) -> ToolOutcome {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let ctx = self.tool_context(cancel.child_token(), call.id.clone());
        let mut external = None;
        let described = match self.harness.describe(&call.name, &args, &ctx) {
            Some(d) => Some(d),
            None => self.external.as_ref().and_then(|ext| {
                let d = ext.describe(&call.name, &args)?;
                external = Some(ext.clone());
                Some(d)
            }),
        };
        let (kind, title, locations, command) = match &described {
            Some(d) => (
                d.kind,
                d.title.clone(),
                d.locations.clone(),
                d.command.clone(),
            ),
            None => (ToolKind::Other, call.name.clone(), vec![], None),
        };
        self.events.send(Event::ToolCallBegin(ToolCallBegin {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            kind,
            title,
            input: args.clone(),
            locations,
            command,
        }));
        let outcome = if let Some(e) = arg_error {
            ToolOutcome::error(e)
        } else if self.harness.subagent_tool() == Some(call.name.as_str()) {
            self.run_subagent(&args, cancel).await
        } else if described.is_none() {
            let names: Vec<String> = self.tools.iter().map(|t| t.name.clone()).collect();
            ToolOutcome::error(format!(
                "Tool `{}` does not exist. Available tools: {}.",
                call.name,
                names.join(", ")
            ))
        } else if let Some(ext) = external {
            ext.call(&call.name, args, &ctx).await
        } else {
            self.harness.run(&call.name, args, &ctx).await
        };
        if let Some(plan) = &outcome.plan {
            self.events.send(Event::PlanUpdated(plan.clone()));
        }
        self.remember_detail(&call.id, &outcome);
        self.events.send(Event::ToolCallEnd(ToolCallEnd {
            call_id: call.id.clone(),
            status: outcome.status,
            output: outcome.user_output.clone(),
            exit_code: outcome.exit_code,
            changes: outcome.changes.clone(),
        }));
        if outcome.status == ToolStatus::Failed {
            tracing::debug!(tool = %call.name, "tool call failed");
        }
        outcome
    }

    /// Logs what a call changed so a later load can show its diff and plan.
    fn remember_detail(&mut self, call_id: &str, outcome: &ToolOutcome) {
        if self.subagent_depth > 0 || (outcome.changes.is_empty() && outcome.plan.is_none()) {
            return;
        }
        // Whole-file texts make exact diffs but must not bloat the log.
        const MAX_TEXT: usize = 256 * 1024;
        let size: usize = outcome
            .changes
            .iter()
            .map(|c| {
                c.old_text.as_ref().map_or(0, String::len)
                    + c.new_text.as_ref().map_or(0, String::len)
            })
            .sum();
        let changes: Vec<_> = if size > MAX_TEXT {
            outcome
                .changes
                .iter()
                .map(|c| interpreter_protocol::FileChange {
                    old_text: None,
                    new_text: None,
                    ..c.clone()
                })
                .collect()
        } else {
            outcome.changes.clone()
        };
        self.log_line(&LogLine::ToolDetail {
            call_id: call_id.to_string(),
            changes: changes.clone(),
            plan: outcome.plan.clone(),
        });
        self.details.insert(
            call_id.to_string(),
            crate::store::ToolDetail {
                changes,
                plan: outcome.plan.clone(),
            },
        );
    }

    pub(super) fn account(&mut self, u: &interpreter_protocol::TokenUsage) {
        self.total_usage.add(u);
        let info = catalog::model_info(&self.config.model);
        let cost = info.price.map(|(input, cached, output)| {
            let t = &self.total_usage;
            let uncached = t.input_tokens.saturating_sub(t.cached_input_tokens) as f64;
            (uncached * input
                + t.cached_input_tokens as f64 * cached
                + t.output_tokens as f64 * output)
                / 1_000_000.0
        });
        self.events.send(Event::TokenCount(TokenCount {
            last: *u,
            total: self.total_usage,
            context_used: u.input_tokens + u.output_tokens,
            context_window: self.config.context_window.or(info.context_window),
            cost_usd: cost,
        }));
    }
}

/// Parses tool arguments leniently: empty means `{}`, raw control characters inside strings
/// are tolerated. Anything that is still not a JSON object is an error for the model.
fn parse_arguments(raw: &str) -> Result<Value, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let parsed = serde_json::from_str::<Value>(trimmed).or_else(|first| {
        let escaped = escape_control_chars(trimmed);
        serde_json::from_str::<Value>(&escaped).map_err(|_| first)
    });
    match parsed {
        Ok(v @ Value::Object(_)) => Ok(v),
        // Some models double-encode: a JSON string holding the object.
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err("the arguments are a string, not a JSON object".into()),
        },
        Ok(other) => Err(format!("expected a JSON object, got {other}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Escapes raw newlines, tabs and other control characters that appear inside JSON strings.
fn escape_control_chars(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in s.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if (c as u32) < 0x20 {
                out.push_str(&format!("\\u{:04x}", c as u32));
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_arguments() {
        assert_eq!(parse_arguments("").unwrap(), serde_json::json!({}));
        assert_eq!(parse_arguments("{\"a\":\"x\ny\"}").unwrap()["a"], "x\ny");
        assert_eq!(parse_arguments("\"{\\\"a\\\":1}\"").unwrap()["a"], 1);
        assert!(parse_arguments("{\"a\":").is_err());
        assert!(parse_arguments("[1]").is_err());
    }
}
