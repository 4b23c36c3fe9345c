//! `interpreter exec`: one non-interactive turn, driven by argv and stdin, reported as Codex
//! JSONL (`--json`) or as a human transcript on stderr with the answer on stdout.
#![warn(missing_docs, unreachable_pub)]

mod debug;
mod diff;
mod export;
mod goal;
mod human;
mod jsonl;
mod output;
mod prompt;
mod review;
mod run;
mod session;
mod turn;
mod undo;

use interpreter_core::config::Overrides;
use interpreter_protocol::SandboxMode;
use std::path::PathBuf;

pub use debug::debug_prompt;
pub use export::{ExportOptions, export};
pub use interpreter_face::review::Target as ReviewTarget;
pub use run::run;

/// What `interpreter exec` was asked to do: the command line as the binary parsed it.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// `-c key=value` and `--profile`.
    pub overrides: Overrides,
    /// JSON Lines on stdout (Codex `--experimental-json`).
    pub json: bool,
    /// `-m`.
    pub model: Option<String>,
    /// `--provider`.
    pub provider: Option<String>,
    /// `--harness`.
    pub harness: Option<String>,
    /// `-s`: the sandbox mode.
    pub sandbox: Option<SandboxMode>,
    /// `-C`: the working directory.
    pub cd: Option<PathBuf>,
    /// `--add-dir`: more directories the tools may read and write.
    pub add_dir: Vec<PathBuf>,
    /// Run outside a git repository.
    pub skip_git_repo_check: bool,
    /// A JSON Schema file the final answer must follow.
    pub output_schema: Option<PathBuf>,
    /// Images to attach.
    pub images: Vec<PathBuf>,
    /// Write the final message to this file.
    pub output_last_message: Option<PathBuf>,
    /// Print a `git apply`-able diff of the run's changes.
    pub diff: bool,
    /// Do not store the session.
    pub ephemeral: bool,
    /// `--goal`: the prompt is the session's goal, worked on turn after turn.
    pub goal: bool,
    /// `--goal-budget`: the goal's token budget.
    pub goal_budget: Option<u64>,
    /// auto, always or never.
    pub color: String,
    /// No sandbox, no approvals.
    pub yolo: bool,
    /// `--trust`: trust the folder's project (saved) before loading its config.
    pub trust: bool,
    /// `--dangerously-bypass-hook-trust`: a trusted project's unreviewed hooks run this once.
    pub bypass_hook_trust: bool,
    /// The task; stdin when absent or `-`.
    pub prompt: Option<String>,
    /// `exec resume`.
    pub resume: Option<Resume>,
    /// `exec undo`.
    pub undo: Option<Undo>,
    /// `exec review`: what to review; `prompt` is the focus, or with a `Custom` target the
    /// instructions themselves.
    pub review: Option<interpreter_face::review::Target>,
    /// `exec review --github-annotations FILE`: the findings as GitHub workflow commands.
    pub annotations: Option<PathBuf>,
}

/// `exec undo [ID|--last] [--turns N]`: take a stored session's last turns back.
#[derive(Debug, Clone, Default)]
pub struct Undo {
    /// The session (thread) id.
    pub session_id: Option<String>,
    /// The newest session started in this directory.
    pub last: bool,
    /// How many turns; at least 1.
    pub turns: u32,
}

/// `exec resume [ID|--last] [PROMPT]`.
#[derive(Debug, Clone, Default)]
pub struct Resume {
    /// The session (thread) id.
    pub session_id: Option<String>,
    /// The prompt given with it.
    pub prompt: Option<String>,
    /// The newest session started in this directory.
    pub last: bool,
}
