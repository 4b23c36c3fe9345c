//! A harness is the model-facing surface of a session: the system prompt, the tool names and
//! schemas, how results are rendered back, and the output limits. Tools run on the shared
//! machinery in `tools/`, so front ends need no per-harness code.

pub mod native;

use futures::future::BoxFuture;
use std::path::PathBuf;

use crate::model::{HistoryItem, ToolSpec};
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
}

impl PromptEnv {
    pub fn detect(
        cwd: PathBuf,
        roots: Vec<PathBuf>,
        agents_md: Option<String>,
        sandbox: &str,
        approval: &str,
    ) -> Self {
        PromptEnv {
            cwd,
            roots,
            os: std::env::consts::OS.to_string(),
            shell: if std::path::Path::new("/bin/bash").exists() {
                "bash".into()
            } else {
                "sh".into()
            },
            agents_md,
            sandbox: sandbox.into(),
            approval: approval.into(),
        }
    }
}

pub trait Harness: Send + Sync {
    fn name(&self) -> &'static str;
    fn system_prompt(&self, env: &PromptEnv) -> String;
    fn tools(&self) -> Vec<ToolSpec>;
    /// Context sent once at the start of a session, as history (e.g. AGENTS.md).
    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem>;
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

pub const HARNESSES: &[&str] = &["native"];

/// The harness a model performs best in, unless the user chose one.
pub fn default_for_model(_model: &str) -> &'static str {
    "native"
}

pub fn by_name(name: &str) -> Option<Box<dyn Harness>> {
    match name {
        "native" => Some(Box::new(native::Native)),
        _ => None,
    }
}
