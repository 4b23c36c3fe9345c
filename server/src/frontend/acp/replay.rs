//! `session/load`: the stored conversation as `session/update`s, tool calls in their final
//! state.

use agent_client_protocol::v1::schema::{
    SessionUpdate, ToolCall, ToolCallLocation, ToolCallStatus,
};
use interpreter_protocol::ToolKind;
use std::collections::HashMap;

use super::updates::{Translator, acp_kind, chunk, diff_contents, text_content};
use crate::agent::Session;
use crate::model::HistoryItem;

pub fn replay(agent: &Session, t: &Translator) {
    let history = agent.history();
    let results: HashMap<&str, (&str, bool)> = history
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
    for (i, item) in history.iter().enumerate() {
        let message_id = format!("replay-{i}");
        match item {
            HistoryItem::User {
                text,
                synthetic: false,
                ..
            } => t.send(SessionUpdate::UserMessageChunk(chunk(
                text,
                Some(&message_id),
            ))),
            HistoryItem::Assistant {
                text,
                reasoning,
                tool_calls,
            } => {
                if let Some(r) = reasoning.as_ref().filter(|r| !r.trim().is_empty()) {
                    t.send(SessionUpdate::AgentThoughtChunk(chunk(
                        r,
                        Some(&message_id),
                    )));
                }
                if !text.is_empty() {
                    t.send(SessionUpdate::AgentMessageChunk(chunk(
                        text,
                        Some(&message_id),
                    )));
                }
                for call in tool_calls {
                    let args: serde_json::Value =
                        serde_json::from_str(&call.arguments).unwrap_or(serde_json::Value::Null);
                    let desc = agent.describe_call(&call.name, &args);
                    let (kind, title, locations) = match &desc {
                        Some(d) => (d.kind, d.title.clone(), d.locations.clone()),
                        None => (ToolKind::Other, call.name.clone(), vec![]),
                    };
                    let (output, failed) =
                        results.get(call.id.as_str()).copied().unwrap_or(("", true));
                    let mut tc = ToolCall::new(call.id.clone(), title)
                        .kind(acp_kind(kind))
                        .status(if failed {
                            ToolCallStatus::Failed
                        } else {
                            ToolCallStatus::Completed
                        })
                        .raw_input(args)
                        .locations(
                            locations
                                .into_iter()
                                .map(ToolCallLocation::new)
                                .collect::<Vec<_>>(),
                        );
                    let detail = agent.tool_detail(&call.id);
                    let diffs: Vec<_> = detail
                        .map(|d| {
                            d.changes
                                .iter()
                                .filter(|c| c.new_text.is_some() || c.old_text.is_some())
                                .cloned()
                                .collect()
                        })
                        .unwrap_or_default();
                    if !diffs.is_empty() {
                        tc = tc.content(diff_contents(&diffs));
                    } else if !output.trim().is_empty() {
                        tc = tc.content(vec![text_content(output)]);
                    }
                    t.send(SessionUpdate::ToolCall(tc));
                    if let Some(plan) = detail.and_then(|d| d.plan.clone()) {
                        t.event(interpreter_protocol::Event::PlanUpdated(plan));
                    }
                }
            }
            _ => {}
        }
    }
}
