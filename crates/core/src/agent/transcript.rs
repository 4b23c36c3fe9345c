//! The stored conversation as front ends replay it (`Op::Replay`): the user's messages, the
//! model's answers, and every tool call in its final state with the changes it made.

use interpreter_protocol::{Event, ToolCallBegin, ToolCallEnd, ToolStatus, TranscriptItem};
use std::collections::HashMap;

use super::session::Session;
use crate::model::{HistoryItem, Part};

impl Session {
    pub(super) fn replay(&self) {
        self.services
            .events
            .send(Event::Transcript(self.transcript()));
    }

    /// The history index of the first message of the user's own in each undoable turn, and
    /// that turn.
    fn turn_starts(&self) -> HashMap<usize, &str> {
        let own = |(_, h): &(usize, &HistoryItem)| {
            matches!(
                h,
                HistoryItem::User {
                    synthetic: false,
                    ..
                }
            )
        };
        self.state
            .turns
            .iter()
            .filter_map(|mark| {
                let mut rest = self
                    .state
                    .history
                    .iter()
                    .enumerate()
                    .skip(mark.history_start);
                rest.find(own).map(|(i, _)| (i, mark.turn_id.as_str()))
            })
            .collect()
    }

    fn transcript(&self) -> Vec<TranscriptItem> {
        let results: HashMap<&str, (&str, bool)> = self
            .state
            .history
            .iter()
            .filter_map(|h| match h {
                HistoryItem::ToolResult {
                    call_id,
                    output,
                    is_error,
                } => Some((call_id.as_str(), (output.as_str(), *is_error))),
                _ => None,
            })
            .collect();
        let turn_of = self.turn_starts();
        let mut out = Vec::new();
        for (i, item) in self.state.history.iter().enumerate() {
            match item {
                HistoryItem::User {
                    text,
                    images,
                    synthetic: false,
                } => out.push(TranscriptItem::UserMessage {
                    text: text.clone(),
                    images: images.clone(),
                    turn_id: turn_of.get(&i).map(|t| t.to_string()),
                }),
                HistoryItem::Assistant(reply) => {
                    if let Some(r) = reply.reasoning().filter(|r| !r.trim().is_empty()) {
                        out.push(TranscriptItem::Reasoning {
                            text: r.to_string(),
                        });
                    }
                    for part in &reply.parts {
                        let call = match part {
                            Part::Message(m) => {
                                if !m.text.is_empty() {
                                    out.push(TranscriptItem::AgentMessage {
                                        text: m.text.clone(),
                                        phase: m.phase,
                                    });
                                }
                                continue;
                            }
                            Part::Call(call) => call,
                        };
                        let args: serde_json::Value = serde_json::from_str(&call.arguments)
                            .unwrap_or(serde_json::Value::Null);
                        let d = self.describe_call(&call.name, &args);
                        let (output, failed) =
                            results.get(call.id.as_str()).copied().unwrap_or(("", true));
                        let detail = self.state.details.get(&call.id);
                        out.push(TranscriptItem::ToolCall {
                            begin: Box::new(ToolCallBegin {
                                call_id: call.id.clone(),
                                tool: call.name.clone(),
                                kind: d.kind,
                                title: d.title,
                                input: args,
                                locations: d.locations,
                                command: d.command,
                                subagent: None,
                            }),
                            end: Box::new(ToolCallEnd {
                                call_id: call.id.clone(),
                                status: if failed {
                                    ToolStatus::Failed
                                } else {
                                    ToolStatus::Completed
                                },
                                output: output.to_string(),
                                exit_code: None,
                                changes: detail.map(|d| d.changes.clone()).unwrap_or_default(),
                            }),
                        });
                        if let Some(plan) = detail.and_then(|d| d.plan.clone()) {
                            out.push(TranscriptItem::Plan(plan));
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }
}
