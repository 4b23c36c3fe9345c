//! The opencode harness: opencode's ten tools in alphabetical order (`bash edit glob grep read
//! skill task todowrite webfetch write`) with its JSON Schema shape (`$schema`,
//! `additionalProperties: false`), its result texts (`<path>…</path><type>file</type>
//! <content>N: line…`, `Edit applied successfully.`, `Found N matches`, `task_id: … <task_result>`,
//! the todo list as pretty JSON), and its prompt: the instructions, the model line and the
//! `<env>` block, the skills, then the project's instructions. Chat only, as the seed.

mod prompt;
mod tools;

use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::harness::HarnessInfo;
use crate::model::HistoryItem;
use crate::tools::table::ToolTable;

pub(crate) struct OpenCode;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "opencode",
    label: "opencode",
    about: "opencode's ten tools (bash, edit, glob, grep, read, skill, task, todowrite, webfetch, write) and its <env> prompt",
    wires: &[WireApi::Chat],
};

impl Harness for OpenCode {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        let today = chrono::Local::now().format("%a %b %d %Y").to_string();
        prompt::system(env, &today)
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        Vec::new()
    }

    fn tools(&self, env: &PromptEnv) -> ToolTable {
        tools::table(env)
    }

    fn title_prompt(&self) -> Option<&'static str> {
        Some(prompt::TITLE)
    }

    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            max_tokens: Some(("max_tokens", 32_000)),
            temperature: Some(1.0),
            tool_choice_auto: true,
            ..Default::default()
        }
    }
}
