//! A harness is the model-facing surface of a session: the system prompt, the tool names and
//! schemas, how results are rendered back, and the output limits. Tools run on the shared
//! machinery in `tools/`, so front ends need no per-harness code.
//!
//! Facts that change (date, permission mode) go in reminder messages after the user's
//! message, never in the system prompt, so the prompt prefix stays cacheable.

pub mod kimi_code;
pub mod minimal;
pub mod native;
mod tree;

use futures::future::BoxFuture;
use std::path::PathBuf;

use crate::model::{HistoryItem, ToolSpec};
use crate::skills::Skill;
use crate::tools::{CallDescription, ToolContext, ToolOutcome};

/// Facts the prompt is built from. Fixed for a session so the prompt prefix stays cacheable.
#[derive(Debug, Clone)]
pub struct PromptEnv {
    pub cwd: PathBuf,
    pub roots: Vec<PathBuf>,
    pub os: String,
    pub shell: String,
    /// Merged AGENTS.md text, if any.
    pub agents_md: Option<String>,
    pub sandbox: String,
    pub approval: String,
    /// Two levels of the working directory, directories first.
    pub tree: String,
    pub skills: Vec<Skill>,
}

impl PromptEnv {
    pub fn detect(
        cwd: PathBuf,
        roots: Vec<PathBuf>,
        agents_md: Option<String>,
        sandbox: &str,
        approval: &str,
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
            sandbox: sandbox.into(),
            approval: approval.into(),
            skills,
        }
    }
}

pub trait Harness: Send + Sync {
    fn name(&self) -> &'static str;
    fn system_prompt(&self, env: &PromptEnv) -> String;
    fn tools(&self) -> Vec<ToolSpec>;
    /// Context sent once at the start of a session, as history (e.g. AGENTS.md).
    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem>;
    /// A reminder to add after the user's message. The session sends it only when its text
    /// differs from the last one sent.
    fn reminder(&self, _env: &PromptEnv, _today: &str) -> Option<String> {
        None
    }
    /// The tool that starts a subagent with a fresh context, if this harness has one.
    fn subagent_tool(&self) -> Option<&'static str> {
        None
    }
    /// How a call shows up before it runs; None when the tool does not exist here.
    fn describe(
        &self,
        tool: &str,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Option<CallDescription>;
    fn run<'a>(
        &'a self,
        tool: &'a str,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome>;
}

pub const HARNESSES: &[&str] = &["kimi-code", "native", "minimal"];

/// The harness a model performs best in: Kimi models were trained against Kimi Code.
pub fn default_for_model(model: &str) -> &'static str {
    if crate::model::catalog::model_info(model).kimi {
        "kimi-code"
    } else {
        "native"
    }
}

pub fn by_name(name: &str) -> Option<Box<dyn Harness>> {
    match name {
        "native" => Some(Box::new(native::Native)),
        "kimi-code" => Some(Box::new(kimi_code::KimiCode::default())),
        "minimal" => Some(Box::new(minimal::Minimal)),
        _ => None,
    }
}

/// The skills list as Codex shows it, for harnesses that put it in a user message.
pub fn codex_skills_block(skills: &[Skill]) -> Option<String> {
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
