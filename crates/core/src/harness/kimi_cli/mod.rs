//! The kimi-cli harness: the legacy Python Kimi CLI (`kimi` before Kimi Code), for older
//! Kimi models trained against it. Its tools (Task, SetTodoList, Shell, ReadFile, Glob, Grep,
//! WriteFile, StrReplaceFile) with their parameters and limits; results in its form, a
//! `<system>…</system>` status line before the output and `<system>ERROR: …</system>` for
//! failures. Chat only, as the original.

mod prompt;
mod tools;

use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::harness::HarnessInfo;
use crate::model::HistoryItem;
use crate::tools::table::{ToolTable, Wording};

/// Every failed call reads `<system>ERROR: …</system>`.
const WORDING: Wording = Wording {
    prefix: "",
    wrap: Some(("<system>ERROR: ", "</system>")),
};

pub(crate) struct KimiCli;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "kimi-cli",
    label: "Kimi CLI",
    about: "The Python Kimi CLI's tools (Shell, ReadFile, WriteFile, StrReplaceFile, Glob, Grep, SetTodoList, Agent, background tasks); older Kimi models were trained on it",
    wires: &[WireApi::Chat],
};

impl Harness for KimiCli {
    fn task_notification(&self, task: &crate::tools::background::TaskRecord) -> String {
        super::task_tools::notification(super::task_tools::Flavor::Kimi, task)
    }

    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            max_tokens: Some(("max_tokens", 32_000)),
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
        Some(prompt::reminder(env, today))
    }

    fn tools(&self, _env: &PromptEnv) -> ToolTable {
        tools::table()
    }
}
