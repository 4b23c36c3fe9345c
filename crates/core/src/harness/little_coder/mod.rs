//! The little-coder harness: pi's message shape and tools (read, bash, edit) with a write
//! that refuses existing files, a shell that persists across calls (`ShellSession`,
//! `ShellSessionCwd`, `ShellSessionReset`), evidence notes kept in the session
//! (`EvidenceAdd`, `EvidenceGet`, `EvidenceList`), `glob`, `webfetch` and `websearch`, and
//! the seven Browser tools on a headless Chromium (`browser.rs`, offered when one was found),
//! on the original's prompt with tool guidance picked from what the user asked. Chat only, as
//! the seed.

mod browser;
mod prompt;
mod tools;

use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::harness::HarnessInfo;
use crate::model::HistoryItem;
use crate::tools::table::ToolTable;

pub(crate) struct LittleCoder;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "little-coder",
    label: "little-coder",
    about: "little-coder: pi's tools, a persistent shell session, evidence notes and the web, for small models",
    wires: &[WireApi::Chat],
};

impl Harness for LittleCoder {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        let today = chrono::Local::now().format("%Y-%m-%d").to_string();
        prompt::system(&env.cwd, &today, env.browser)
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        Vec::new()
    }

    fn tools(&self, env: &PromptEnv) -> ToolTable {
        tools::table(env.browser)
    }

    fn task_guidance(&self, asked: &str) -> Option<&'static str> {
        prompt::guidance(asked)
    }

    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            max_tokens: Some(("max_completion_tokens", 384_000)),
            temperature: Some(0.3),
            no_store: true,
            thinking_effort: Some("high"),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::prompt::{READ_WRITE_GUIDANCE, RESEARCH_GUIDANCE, guidance};

    #[test]
    fn guidance_follows_what_the_user_asked() {
        assert_eq!(guidance("  "), None);
        assert_eq!(guidance("fix the parser"), Some(READ_WRITE_GUIDANCE));
        assert_eq!(
            guidance("fix the parser\nthen check this URL"),
            Some(RESEARCH_GUIDANCE)
        );
    }
}
