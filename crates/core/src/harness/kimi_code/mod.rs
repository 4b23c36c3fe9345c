//! The kimi-code harness, the default for Kimi K3: Kimi Code CLI's tool names, parameter
//! names and limits (Bash, Read, Write, Edit, Glob, Grep, TodoList, Agent), its prompt
//! structure, and `<system-reminder>` messages for facts that change.

mod ask;
mod goals;
mod prompt;
mod swarm;
pub(super) mod tools;

use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::harness::HarnessInfo;
use crate::model::HistoryItem;
use crate::tools::table::{ToolTable, Wording};

/// Tool output caps, as Kimi Code has them.
pub(crate) const MAX_OUTPUT_CHARS: usize = 50_000;
pub(crate) const MAX_LINE_CHARS: usize = 2_000;
pub(crate) const READ_MAX_LINES: usize = 1_000;
pub(crate) const READ_MAX_BYTES: usize = 100 * 1024;
pub(crate) const GREP_HEAD_LIMIT: usize = 250;
pub(crate) const GLOB_HEAD_LIMIT: usize = 100;
pub(crate) const BASH_DEFAULT_TIMEOUT_S: u64 = 60;
pub(crate) const BASH_MAX_TIMEOUT_S: u64 = 300;
/// A background command's timeout: 10 minutes by default, a day at most, as Kimi Code has it.
pub(crate) const BACKGROUND_DEFAULT_TIMEOUT_S: u64 = 600;
pub(crate) const BACKGROUND_MAX_TIMEOUT_S: u64 = 86_400;

/// Kimi Code words tool errors with an `ERROR: ` prefix.
const WORDING: Wording = Wording {
    prefix: "ERROR: ",
    wrap: None,
};

pub(crate) struct KimiCode;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "kimi-code",
    label: "Kimi Code",
    about: "Kimi Code's tools (Bash, Read, Write, Edit, Glob, Grep, TodoList, Agent); Kimi models were trained on it",
    wires: &[WireApi::Chat, WireApi::Responses],
};

impl Harness for KimiCode {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    /// Kimi Code names its sessions' cache `session_<id>`.
    fn prompt_cache_key(&self, id: &str) -> String {
        format!("session_{id}")
    }
    fn task_notification(&self, task: &crate::tools::background::TaskRecord) -> String {
        super::task_tools::notification(super::task_tools::Flavor::Kimi, task)
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        prompt::system_prompt(env)
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        // Everything stable is in the system prompt; nothing goes in history up front.
        Vec::new()
    }

    fn reminder(&self, env: &PromptEnv, today: &str) -> Option<String> {
        Some(prompt::reminder(env, today))
    }

    fn tools(&self, env: &PromptEnv) -> ToolTable {
        tools::table(env)
    }
}
