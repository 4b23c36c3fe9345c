//! The mini-swe-agent harness, in mini-swe-agent's tool-calling form (its `mini` default): one
//! `bash` tool, a one-sentence system message, the task wrapped in its instance template in
//! the first user message, results as JSON observations (`{"returncode": …, "output": …}`),
//! a reply without a tool call answered with its `Tool call error:` turn, and the task ended
//! by `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`. Chat only, as the seed.

mod prompt;
mod tools;

use super::{Harness, PromptEnv, TextActions, TextReply};
use crate::config::WireApi;
use crate::harness::HarnessInfo;
use crate::model::{HistoryItem, ToolSpec};
use crate::tools::table::ToolTable;

pub(crate) struct MiniSweAgent;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "mini-swe-agent",
    label: "mini-swe-agent",
    about: "mini-swe-agent's one bash tool, every reply a tool call, the task ended by its submit command",
    wires: &[WireApi::Chat],
};

impl Harness for MiniSweAgent {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, _env: &PromptEnv) -> String {
        prompt::SYSTEM.to_string()
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        Vec::new()
    }

    fn tools(&self, _env: &PromptEnv) -> ToolTable {
        tools::table()
    }

    fn text_actions(&self) -> Option<&dyn TextActions> {
        Some(self)
    }
}

/// Only the parts mini-swe-agent does differently: tool calls stay on the wire; a reply
/// without one is a format error; the first task is wrapped in the instance template.
impl TextActions for MiniSweAgent {
    fn parse_reply(&self, _text: &str, _history: &[HistoryItem], _tools: &[ToolSpec]) -> TextReply {
        TextReply::Correction(prompt::format_error(
            "No tool calls found in the response. Every response MUST include at least one tool call.",
        ))
    }

    fn render_history(
        &self,
        env: &PromptEnv,
        history: &[HistoryItem],
        _tools: &[ToolSpec],
    ) -> Vec<HistoryItem> {
        let mut out = history.to_vec();
        if let Some(HistoryItem::User { text, .. }) = out.iter_mut().find(|h| {
            matches!(
                h,
                HistoryItem::User {
                    synthetic: false,
                    ..
                }
            )
        }) {
            *text = prompt::instance(env, text);
        }
        out
    }

    fn tools_on_wire(&self) -> bool {
        true
    }

    fn finished(&self, history: &[HistoryItem]) -> bool {
        let Some(HistoryItem::ToolResult { output, .. }) = history
            .iter()
            .rev()
            .find(|h| matches!(h, HistoryItem::ToolResult { .. }))
        else {
            return false;
        };
        tools::submitted(output)
    }
}
