//! `session/load`: the stored conversation (the core's `Transcript`) as `session/update`s,
//! tool calls in their final state.

use agent_client_protocol::v1::schema::{
    Meta, SessionUpdate, ToolCall, ToolCallLocation, ToolCallStatus,
};
use interpreter_protocol::{ToolStatus, TranscriptItem};

use super::content::{acp_kind, chunk, diff_contents, text_content};
use super::updates::Translator;

impl Translator {
    pub(super) fn replay(&self, items: Vec<TranscriptItem>) {
        for (i, item) in items.into_iter().enumerate() {
            let message_id = format!("replay-{i}");
            match item {
                TranscriptItem::UserMessage { text, turn_id, .. } => {
                    let mut c = chunk(&text, Some(&message_id));
                    // The turn it started, as a live prompt's answer names it: a client can
                    // offer to rewind to it.
                    if let Some(id) = turn_id {
                        let mut meta = Meta::new();
                        meta.insert(interpreter_protocol::ext::ACP_TURN_ID.into(), id.into());
                        c = c.meta(meta);
                    }
                    self.send(SessionUpdate::UserMessageChunk(c))
                }
                TranscriptItem::Reasoning { text } => self.send(SessionUpdate::AgentThoughtChunk(
                    chunk(&text, Some(&message_id)),
                )),
                TranscriptItem::AgentMessage { text, .. } => self.send(
                    SessionUpdate::AgentMessageChunk(chunk(&text, Some(&message_id))),
                ),
                TranscriptItem::ToolCall { begin, end } => {
                    let (begin, end) = (*begin, *end);
                    let mut tc = ToolCall::new(begin.call_id.clone(), begin.title)
                        .kind(acp_kind(begin.kind))
                        .status(if end.status == ToolStatus::Completed {
                            ToolCallStatus::Completed
                        } else {
                            ToolCallStatus::Failed
                        })
                        .raw_input(begin.input)
                        .locations(
                            begin
                                .locations
                                .into_iter()
                                .map(ToolCallLocation::new)
                                .collect::<Vec<_>>(),
                        );
                    let diffs: Vec<_> = end
                        .changes
                        .into_iter()
                        .filter(|c| c.new_text.is_some() || c.old_text.is_some())
                        .collect();
                    if !diffs.is_empty() {
                        tc = tc.content(diff_contents(&diffs));
                    } else if !end.output.trim().is_empty() {
                        tc = tc.content(vec![text_content(&end.output)]);
                    }
                    self.send(SessionUpdate::ToolCall(tc));
                }
                TranscriptItem::Plan(plan) => {
                    self.update(interpreter_protocol::Event::PlanUpdated(plan))
                }
            }
        }
    }
}
