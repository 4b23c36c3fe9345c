//! A stored conversation as turns of items (`thread/read`, `thread/resume`), and the filters
//! and pages of `thread/list`.

use interpreter_protocol::{ToolStatus, TranscriptItem};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use super::items::ToolItem;
use super::wire::{Item, ThreadListParams, Turn, TurnStatus};
use interpreter_core::sessions::SessionSummary;

/// Threads per page when the client does not say.
const DEFAULT_PAGE: usize = 25;
const MAX_PAGE: usize = 100;

/// Groups a transcript into turns: each user message starts one. Their ids are derived from
/// the thread's id and their position, so reading twice gives the same ids.
pub(crate) fn turns_from_transcript(
    thread_id: &str,
    items: &[TranscriptItem],
    cwd: &Path,
) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    let mut n = 0;
    for item in items {
        let starts_turn = matches!(item, TranscriptItem::UserMessage { .. }) || turns.is_empty();
        if starts_turn {
            turns.push(Turn {
                id: format!("{thread_id}-turn-{n}"),
                items: vec![],
                status: TurnStatus::Completed,
                error: None,
                started_at: None,
                completed_at: None,
                duration_ms: None,
            });
            n += 1;
        }
        let Some(turn) = turns.last_mut() else {
            continue;
        };
        let index = turn.items.len();
        let value = match item {
            TranscriptItem::UserMessage { text, images, .. } => {
                let mut content = vec![json!({"type": "text", "text": text})];
                content.extend(
                    images
                        .iter()
                        .map(|url| json!({"type": "image", "url": url})),
                );
                Item::UserMessage {
                    id: format!("{}-item-{index}", turn.id),
                    content,
                }
                .to_value()
            }
            TranscriptItem::Reasoning { text } => Item::Reasoning {
                id: format!("{}-item-{index}", turn.id),
                summary: vec![],
                content: vec![text.clone()],
            }
            .to_value(),
            TranscriptItem::AgentMessage { text, phase } => Item::AgentMessage {
                id: format!("{}-item-{index}", turn.id),
                text: text.clone(),
                // Without the provider's word, `mark_phases` decides.
                phase: phase.map(|p| p.as_str()),
            }
            .to_value(),
            TranscriptItem::ToolCall { begin, end } => {
                let tool = ToolItem::begin(begin, cwd);
                let mut end = (**end).clone();
                if end.status == ToolStatus::Failed && end.output.is_empty() {
                    end.output = "(no result was stored)".into();
                }
                tool.item(Some(&end)).to_value()
            }
            TranscriptItem::Plan(_) => continue,
        };
        turn.items.push(value);
    }
    for turn in &mut turns {
        mark_phases(&mut turn.items);
    }
    turns
}

/// Answers the provider gave no phase: the last of a turn that no tool call follows is its
/// final answer, the others commentary (as the live turn decided).
fn mark_phases(items: &mut [Value]) {
    let last = items
        .iter()
        .rposition(|i| i.get("type").and_then(Value::as_str) != Some("reasoning"));
    for (i, item) in items.iter_mut().enumerate() {
        if item.get("type").and_then(Value::as_str) == Some("agentMessage")
            && item.get("phase").is_none_or(Value::is_null)
        {
            let phase = if Some(i) == last {
                "final_answer"
            } else {
                "commentary"
            };
            item["phase"] = json!(phase);
        }
    }
}

/// The page of `all` that `p` asks for (filters, order, cursor), and the next cursor.
pub(crate) fn page<'a>(
    all: &'a [SessionSummary],
    p: &ThreadListParams,
) -> (Vec<&'a SessionSummary>, Option<String>) {
    let cwds: Option<Vec<PathBuf>> = p.cwd.as_ref().map(|c| {
        let list: Vec<&str> = match c {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        list.into_iter()
            .map(|s| std::fs::canonicalize(s).unwrap_or_else(|_| PathBuf::from(s)))
            .collect()
    });
    let providers = p.model_providers.as_ref().filter(|v| !v.is_empty());
    let term = p.search_term.as_ref().map(|t| t.to_lowercase());
    let mut hits: Vec<&SessionSummary> = all
        .iter()
        .filter(|s| cwds.as_ref().is_none_or(|c| c.contains(&s.meta.cwd)))
        .filter(|s| providers.is_none_or(|ps| ps.contains(&s.meta.provider)))
        .filter(|s| {
            term.as_ref().is_none_or(|t| {
                s.title.as_deref().unwrap_or("").to_lowercase().contains(t)
                    || s.preview.to_lowercase().contains(t)
            })
        })
        .collect();
    let by_updated = p.sort_key.as_deref() == Some("updated_at");
    hits.sort_by(|a, b| {
        if by_updated {
            b.modified.cmp(&a.modified)
        } else {
            b.meta.created_at.cmp(&a.meta.created_at)
        }
    });
    if p.sort_direction.as_deref() == Some("asc") {
        hits.reverse();
    }
    let start: usize = p
        .cursor
        .as_deref()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let limit = p
        .limit
        .map(|l| (l as usize).clamp(1, MAX_PAGE))
        .unwrap_or(DEFAULT_PAGE);
    let next = (start + limit < hits.len()).then(|| (start + limit).to_string());
    (hits.into_iter().skip(start).take(limit).collect(), next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_protocol::{ToolCallBegin, ToolCallEnd, ToolKind};

    #[test]
    fn user_messages_start_turns_and_the_last_answer_is_final() {
        let call = TranscriptItem::ToolCall {
            begin: Box::new(ToolCallBegin {
                call_id: "c1".into(),
                tool: "shell".into(),
                kind: ToolKind::Execute,
                title: "ls".into(),
                input: json!({}),
                locations: vec![],
                command: Some("ls".into()),
                subagent: None,
            }),
            end: Box::new(ToolCallEnd {
                call_id: "c1".into(),
                status: ToolStatus::Completed,
                output: "a".into(),
                exit_code: None,
                changes: vec![],
            }),
        };
        let items = vec![
            TranscriptItem::UserMessage {
                text: "hi".into(),
                images: vec![],
                turn_id: None,
            },
            TranscriptItem::AgentMessage {
                text: "let me look".into(),
                phase: None,
            },
            call,
            TranscriptItem::AgentMessage {
                text: "done".into(),
                phase: None,
            },
            TranscriptItem::UserMessage {
                text: "again".into(),
                images: vec![],
                turn_id: None,
            },
        ];
        let turns = turns_from_transcript("t", &items, Path::new("/w"));
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].id, "t-turn-0");
        let types: Vec<&str> = turns[0]
            .items
            .iter()
            .map(|i| i["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "userMessage",
                "agentMessage",
                "commandExecution",
                "agentMessage"
            ]
        );
        assert_eq!(turns[0].items[1]["phase"], "commentary");
        assert_eq!(turns[0].items[3]["phase"], "final_answer");
        assert_eq!(turns[1].items.len(), 1);
    }
}
