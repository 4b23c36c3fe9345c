//! The deepseek-tui harness: DeepSeek TUI's tool surface on Chat, limited to the tools that
//! really run here. The seed advertises 84 schemas and answers about 17 (three of them with
//! canned test-fixture replies); this harness sends only the ones below, each doing what its
//! schema says: exec_shell, read_file, write_file, edit_file, list_dir, grep_files,
//! file_search, git_status/diff/log/show/blame, the checklist tools, update_plan and
//! load_skill. Results use the original's texts (JSON listings, `Command failed (exit
//! code: …)`, compacted long output, `Todo list updated (N items, P% complete)`).

mod git;
mod github;
mod more;
mod prompt;
mod run;
mod tools;

use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::harness::HarnessInfo;
use crate::model::HistoryItem;
use crate::tools::table::{ToolTable, Wording};

/// DeepSeek TUI's results carry their own words.
const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};

pub(crate) struct DeepSeekTui;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "deepseek-tui",
    label: "DeepSeek TUI",
    about: "The DeepSeek TUI tools that really run: files, shell, search, git, checklist and plan",
    wires: &[WireApi::Chat],
};

impl Harness for DeepSeekTui {
    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            max_tokens: Some(("max_tokens", 64_000)),
            ..Default::default()
        }
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        prompt::system(env)
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        Vec::new()
    }

    fn reminder(&self, env: &PromptEnv, today: &str) -> Option<String> {
        Some(prompt::turn_meta(env, today))
    }

    fn reminder_prefix(&self) -> &'static str {
        "<turn_meta>"
    }

    fn tools(&self, env: &PromptEnv) -> ToolTable {
        tools::table(env)
    }
}
