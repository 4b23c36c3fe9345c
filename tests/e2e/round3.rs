//! Issue 34, hostile inputs round 3, through the real binary and the mock model: the agent's
//! own git on a hostile repository, state the agent trusts, special files, undo that never
//! lies, the checkpoint store, goal budgets, subagents, network off, login tokens. Each module
//! is one class of `docs/sandbox.md`'s round 3 table; the terminal's prompts are in `tui.rs`.

#[path = "round3/budgets.rs"]
mod budgets;
#[cfg(unix)]
#[path = "round3/git.rs"]
mod git;
#[cfg(target_os = "linux")]
#[path = "round3/network.rs"]
mod network;
#[cfg(unix)]
#[path = "round3/special.rs"]
mod special;
#[cfg(unix)]
#[path = "round3/store.rs"]
mod store;
#[path = "round3/subagent.rs"]
mod subagent;
#[path = "round3/token.rs"]
mod token;
#[cfg(target_os = "linux")]
#[path = "round3/trusted.rs"]
mod trusted;
#[cfg(unix)]
#[path = "round3/undo.rs"]
mod undo;

use mock_llm::MockServer;
use mock_llm::e2e::{TestRepo, jsonl};
use std::process::Output;

/// `exec` on the mock's Chat wire, then `extra`.
fn exec_args(mock: &MockServer, extra: &[&str]) -> Vec<String> {
    mock_llm::e2e::exec_args(&mock.url(), extra)
}

/// Stdout of a run that must have succeeded.
fn ok(out: &Output) -> String {
    mock_llm::e2e::succeeded(out)
}

/// The thread id of a `--json` run.
fn thread_id(out: &Output) -> String {
    ok(out);
    jsonl(out)[0]["thread_id"].as_str().unwrap().to_string()
}

/// The commands' outputs of a `--json` run, joined.
fn command_outputs(out: &Output) -> String {
    jsonl(out)
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .map(|e| {
            e["item"]["aggregated_output"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
