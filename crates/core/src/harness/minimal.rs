//! The minimal harness: one shell tool and apply_patch with a short prompt, for small local
//! models (llama.cpp, Ollama) that do worse with many tools and long instructions.

use crate::config::WireApi;
use crate::harness::HarnessInfo;
use serde_json::json;

use super::{Harness, PromptEnv, native};
use crate::model::HistoryItem;
use crate::tools::table::{FnTool, ToolTable, spec};

pub(crate) struct Minimal;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "minimal",
    label: "Minimal",
    about: "One shell tool and apply_patch, on a short prompt, for small local models",
    wires: &[WireApi::Chat, WireApi::Responses],
};

impl Harness for Minimal {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        let mut p = format!(
            "You are a coding agent. Solve the user's task in the repository at {} using the tools.\n\
             - shell runs a bash command and returns its exit code and output. Use it to look around \
             (ls, cat, grep) and to run tests.\n\
             - apply_patch edits files. Its input is a patch:\n\
             *** Begin Patch\n*** Update File: path\n@@\n-old line\n+new line\n*** End Patch\n\
             (also `*** Add File: path` with + lines, `*** Delete File: path`).\n\
             Make small, correct changes, check them, then reply briefly with what you did.",
            env.cwd.display()
        );
        if let Some(md) = &env.agents_md {
            p.push_str("\n\nProject instructions (AGENTS.md):\n");
            p.push_str(md);
        }
        p
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        Vec::new()
    }

    fn tools(&self, _env: &PromptEnv) -> ToolTable {
        ToolTable::new(vec![
            FnTool::plain(
                native::WORDING,
                spec(
                    "shell",
                    "Run a bash command.",
                    json!({"type": "object", "properties": {
                        "command": {"type": "string"}}, "required": ["command"]}),
                ),
                native::describe_shell,
                |a, c| Box::pin(native::run_shell(c, a)),
            ),
            FnTool::plain(
                native::WORDING,
                spec(
                    "apply_patch",
                    "Edit files with a patch.",
                    json!({"type": "object", "properties": {
                        "input": {"type": "string"}}, "required": ["input"]}),
                ),
                native::describe_patch,
                |a, c| {
                    Box::pin(native::apply_patch_tool(
                        c,
                        a,
                        "apply_patch needs `input`: the patch text",
                    ))
                },
            ),
        ])
    }
}
