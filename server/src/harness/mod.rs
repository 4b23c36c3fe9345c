//! A harness is the model-facing surface of a session: the system prompt, the tool names and
//! schemas, how results are rendered back, and the output limits. Tools run on the shared
//! machinery in `tools/`, so front ends need no per-harness code.
//!
//! Facts that change (date, permission mode) go in reminder messages after the user's
//! message, never in the system prompt, so the prompt prefix stays cacheable.

mod kimi_code;
mod minimal;
mod native;
mod tree;

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{ApprovalPolicy, SandboxMode};
use crate::model::HistoryItem;
use crate::skills::Skill;
use crate::tools::table::ToolTable;

/// Facts the prompt is built from. Fixed for a session so the prompt prefix stays cacheable.
#[derive(Debug, Clone)]
pub(crate) struct PromptEnv {
    pub cwd: PathBuf,
    pub roots: Vec<PathBuf>,
    pub os: String,
    pub shell: String,
    /// Merged AGENTS.md text, if any.
    pub agents_md: Option<String>,
    pub sandbox: SandboxMode,
    pub approval: ApprovalPolicy,
    /// Two levels of the working directory, directories first.
    pub tree: String,
    pub skills: Vec<Skill>,
}

impl PromptEnv {
    pub(crate) fn detect(
        cwd: PathBuf,
        roots: Vec<PathBuf>,
        agents_md: Option<String>,
        sandbox: SandboxMode,
        approval: ApprovalPolicy,
        skills: Vec<Skill>,
        reads: &mut crate::workspace::startup::StartupReads,
    ) -> Self {
        PromptEnv {
            tree: tree::two_level_listing(reads, &cwd),
            cwd,
            roots,
            os: std::env::consts::OS.to_string(),
            shell: if std::path::Path::new("/bin/bash").exists() {
                "bash (/bin/bash)".into()
            } else {
                "sh (/bin/sh)".into()
            },
            agents_md,
            sandbox,
            approval,
            skills,
        }
    }
}

/// The model-facing surface of a session: its prompt and its table of tools.
pub(crate) trait Harness: Send + Sync {
    fn name(&self) -> &'static str;
    fn system_prompt(&self, env: &PromptEnv) -> String;
    /// The tools, in the order the model sees them. Built once per session (and on a
    /// harness switch); a tool may keep per-session state (Kimi Code's TodoList).
    fn tools(&self) -> ToolTable;
    /// Context sent once at the start of a session, as history (e.g. AGENTS.md).
    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem>;
    /// A reminder to add after the user's message. The session sends it only when its text
    /// differs from the last one sent.
    fn reminder(&self, _env: &PromptEnv, _today: &str) -> Option<String> {
        None
    }
    /// How this harness's reminders begin, so the session finds the last one in history
    /// (for native, the environment context of the initial context counts).
    fn reminder_prefix(&self) -> &'static str {
        "<system-reminder>"
    }
}

pub(crate) const HARNESSES: &[&str] = &["kimi-code", "native", "minimal"];

/// The harness a model performs best in: Kimi models were trained against Kimi Code.
pub(crate) fn default_for_model(model: &str) -> &'static str {
    if crate::model::catalog::model_info(model).kimi {
        "kimi-code"
    } else {
        "native"
    }
}

pub(crate) fn by_name(name: &str) -> Option<Arc<dyn Harness>> {
    match name {
        "native" => Some(Arc::new(native::Native)),
        "kimi-code" => Some(Arc::new(kimi_code::KimiCode)),
        "minimal" => Some(Arc::new(minimal::Minimal)),
        _ => None,
    }
}

/// The skills list as Codex shows it, for harnesses that put it in a user message.
pub(crate) fn codex_skills_block(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut out = String::from(
        "<skills_instructions>\n## Skills\nSkills are instructions for specific tasks, stored as SKILL.md files. \
         When the user names a skill or the task matches its description, read the whole SKILL.md with \
         read_file first (builtin:// paths work too) and follow it.\n### Available skills\n",
    );
    for s in skills {
        out.push_str(&format!(
            "- {}: {} (file: {})\n",
            s.name, s.description, s.path
        ));
    }
    out.push_str("</skills_instructions>");
    Some(out)
}
