//! The pi harness: pi's coding agent (`@mariozechner/pi-coding-agent`), four tools (`read`,
//! `bash`, `edit` with several exact replacements, `write`) on a short prompt, with pi's
//! result texts: raw file text with `[Showing lines …]` notices, `(no output)`, `Command
//! exited with code N`, `Successfully replaced N block(s) in <path>.`. Chat only, as the seed.

mod prompt;
pub(super) mod tools;

use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::harness::HarnessInfo;
use crate::model::HistoryItem;
use crate::tools::table::ToolTable;

pub(crate) struct Pi;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "pi",
    label: "pi",
    about: "pi's coding agent: read, bash, edit (several exact replacements) and write, on a short prompt",
    wires: &[WireApi::Chat],
};

impl Harness for Pi {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        let today = chrono::Local::now().format("%Y-%m-%d").to_string();
        prompt::system(env, &today)
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        Vec::new()
    }

    fn tools(&self, _env: &PromptEnv) -> ToolTable {
        tools::table()
    }

    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            no_store: true,
            thinking_effort: Some("high"),
            ..Default::default()
        }
    }
}
