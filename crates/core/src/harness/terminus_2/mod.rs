//! The terminus-2 harness: Terminus 2's JSON protocol on the Chat wire. The request carries no
//! tools and no system message; each reply is a JSON object (`analysis`, `plan`, `commands`
//! of `{keystrokes, duration}`, `task_complete`) parsed by `parse.rs` into one call of the
//! harness's `terminal` tool, which types the keystrokes into a tmux pane (`tmux.rs`) and
//! answers with what is new on it. A reply that is not such JSON gets the original's parse
//! feedback; the first `task_complete: true` is answered with a confirmation question, and a
//! second one ends the task.

mod parse;
mod prompt;
mod terminal;
#[cfg(unix)]
mod tmux;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

use super::{Harness, HarnessInfo, PromptEnv, TextActions, TextReply};
use crate::config::WireApi;
use crate::harness::{rendered_assistant as assistant, rendered_user as user};
use crate::model::{AssistantReply, HistoryItem, Parts as _, ToolCall, ToolSpec};
use crate::tools::table::ToolTable;
use terminal::{Args, Terminal};

/// The pane's height (its width is in `tmux.rs`), as the original's.
pub(super) const HEIGHT: u32 = 40;
/// The tool's name, in history and in approval prompts.
const NAME: &str = "terminal";
/// Ids of the calls this harness made from reply text.
const CALL_ID_PREFIX: &str = "terminus-2-";

/// The harness, with the terminal its tool tables share.
#[derive(Default)]
pub(crate) struct Terminus2 {
    shared: Arc<terminal::Shared>,
}

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "terminus-2",
    label: "Terminus 2",
    about: "Terminus 2's JSON replies: keystrokes typed into a tmux terminal, its new output read back; no wire tool calls",
    wires: &[WireApi::Chat],
};

impl Harness for Terminus2 {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    /// The original sends no system message: everything is in the first user message.
    fn system_prompt(&self, _env: &PromptEnv) -> String {
        String::new()
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        Vec::new()
    }

    fn tools(&self, _env: &PromptEnv) -> ToolTable {
        ToolTable::new(vec![Arc::new(Terminal::new(self.shared.clone()))])
    }

    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            temperature: Some(0.7),
            ..Default::default()
        }
    }

    fn text_actions(&self) -> Option<&dyn TextActions> {
        Some(self)
    }
}

impl TextActions for Terminus2 {
    fn parse_reply(&self, text: &str, history: &[HistoryItem], _tools: &[ToolSpec]) -> TextReply {
        let reply = match parse::parse(text) {
            Ok(r) => r,
            Err(e) => return TextReply::Correction(prompt::parse_error(e.error, &e.warning)),
        };
        let confirmed = reply.task_complete && awaiting_confirmation(history);
        if confirmed && reply.commands.is_empty() {
            return TextReply::Finish;
        }
        let mut arguments = json!({"commands": reply.commands});
        if reply.task_complete {
            arguments["task_complete"] = json!(true);
        }
        if confirmed {
            arguments["confirmed"] = json!(true);
        }
        TextReply::Calls(vec![ToolCall {
            id: format!("{CALL_ID_PREFIX}{}", uuid::Uuid::now_v7().simple()),
            name: NAME.to_string(),
            arguments: arguments.to_string(),
        }])
    }

    fn render_history(
        &self,
        env: &PromptEnv,
        history: &[HistoryItem],
        _tools: &[ToolSpec],
    ) -> Vec<HistoryItem> {
        render(env, history)
    }

    /// A confirmed completion that still had commands ends once they ran.
    fn finished(&self, history: &[HistoryItem]) -> bool {
        history
            .iter()
            .rev()
            .find_map(|h| match h {
                HistoryItem::Assistant(reply) => Some(reply),
                _ => None,
            })
            .is_some_and(|reply| own_calls(reply).any(|a| a.confirmed))
    }
}

/// The arguments of the terminal calls this harness made in `reply`.
fn own_calls(reply: &AssistantReply) -> impl Iterator<Item = Args> + '_ {
    reply
        .calls()
        .filter(|c| c.id.starts_with(CALL_ID_PREFIX) && c.name == NAME)
        .map(|c| Args::of(&serde_json::from_str(&c.arguments).unwrap_or(Value::Null)))
}

/// Whether the last batch of this turn said the task is complete and was asked to confirm.
/// Replies that did not parse do not count; one with `task_complete` false takes it back.
fn awaiting_confirmation(history: &[HistoryItem]) -> bool {
    for item in history.iter().rev() {
        match item {
            HistoryItem::User {
                synthetic: false, ..
            } => return false,
            HistoryItem::Assistant(reply) => {
                if let Some(a) = own_calls(reply).last() {
                    return a.task_complete && !a.confirmed;
                }
            }
            _ => {}
        }
    }
    false
}

/// The history as the original's requests carry it: the protocol, task and first screen in
/// the first user message; each reply's JSON as the assistant's text; each observation,
/// correction and confirmation question as a user message. Calls another harness made earlier
/// in the session are written as the JSON of a command that does the same.
fn render(env: &PromptEnv, history: &[HistoryItem]) -> Vec<HistoryItem> {
    let results: HashMap<&str, &str> = history
        .iter()
        .filter_map(|h| match h {
            HistoryItem::ToolResult {
                call_id, output, ..
            } => Some((call_id.as_str(), output.as_str())),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(history.len());
    let mut task_sent = false;
    for item in history {
        match item {
            HistoryItem::User {
                text,
                images,
                synthetic: false,
            } if !task_sent => {
                task_sent = true;
                let screen = prompt::first_screen(&env.cwd);
                out.push(user(prompt::initial(text, &screen), images.clone()));
            }
            HistoryItem::User { text, images, .. } => out.push(user(text.clone(), images.clone())),
            HistoryItem::Assistant(reply) => push_reply(&mut out, env, reply, &results),
            HistoryItem::ToolResult {
                call_id, output, ..
            } if call_id.starts_with(CALL_ID_PREFIX) => out.push(user(output.clone(), vec![])),
            // Another harness's result: written right after its call.
            HistoryItem::ToolResult { .. } => {}
        }
    }
    out
}

fn push_reply(
    out: &mut Vec<HistoryItem>,
    env: &PromptEnv,
    reply: &AssistantReply,
    results: &HashMap<&str, &str>,
) {
    let text = reply.text();
    let foreign: Vec<&ToolCall> = reply
        .calls()
        .filter(|c| !c.id.starts_with(CALL_ID_PREFIX))
        .collect();
    if foreign.is_empty() {
        if !text.trim().is_empty() {
            out.push(assistant(text.to_string(), reply.reasoning.clone()));
        }
        return;
    }
    for (k, call) in foreign.iter().enumerate() {
        let action = super::swe_agent::as_action(env, call);
        let json = json!({
            "analysis": if k == 0 { text.trim() } else { "" },
            "plan": "",
            "commands": [{"keystrokes": format!("{action}\n"), "duration": 1.0}],
        });
        let reasoning = if k == 0 {
            reply.reasoning.clone()
        } else {
            None
        };
        out.push(assistant(json.to_string(), reasoning));
        let output = results.get(call.id.as_str()).copied().unwrap_or("");
        out.push(user(
            prompt::limit_output(&format!("New Terminal Output:\n{output}")),
            vec![],
        ));
    }
}

#[cfg(test)]
mod tests;
