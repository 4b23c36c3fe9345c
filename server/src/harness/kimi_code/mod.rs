//! The kimi-code harness, the default for Kimi K3: Kimi Code CLI's tool names, parameter
//! names and limits (Bash, Read, Write, Edit, Glob, Grep, TodoList, Agent), its prompt
//! structure, and `<system-reminder>` messages for facts that change.

mod prompt;
mod tools;

use futures::future::BoxFuture;
use interpreter_protocol::{PlanItem, ToolKind};
use serde_json::Value;
use std::sync::Mutex;

use super::{Harness, PromptEnv};
use crate::model::{HistoryItem, ToolSpec};
use crate::tools::{CallDescription, ToolContext, ToolOutcome};

/// Tool output caps, as Kimi Code has them.
pub const MAX_OUTPUT_CHARS: usize = 50_000;
pub const MAX_LINE_CHARS: usize = 2_000;
pub const READ_MAX_LINES: usize = 1_000;
pub const READ_MAX_BYTES: usize = 100 * 1024;
pub const GREP_HEAD_LIMIT: usize = 250;
pub const GLOB_HEAD_LIMIT: usize = 100;
pub const BASH_DEFAULT_TIMEOUT_S: u64 = 60;
pub const BASH_MAX_TIMEOUT_S: u64 = 300;

#[derive(Default)]
pub struct KimiCode {
    /// The TodoList as the model last set it.
    todos: Mutex<Vec<PlanItem>>,
}

impl Harness for KimiCode {
    fn name(&self) -> &'static str {
        "kimi-code"
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

    fn subagent_tool(&self) -> Option<&'static str> {
        Some("Agent")
    }

    fn tools(&self) -> Vec<ToolSpec> {
        tools::specs()
    }

    fn describe(&self, tool: &str, args: &Value, ctx: &ToolContext) -> Option<CallDescription> {
        let s = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let loc = |p: &str| {
            ctx.workspace
                .resolve(p)
                .ok()
                .into_iter()
                .collect::<Vec<_>>()
        };
        let d = |kind, title: String, locations, command| CallDescription {
            kind,
            title,
            locations,
            command,
        };
        Some(match tool {
            "Bash" => d(ToolKind::Execute, s("command"), vec![], Some(s("command"))),
            "Read" => d(
                ToolKind::Read,
                format!("Read {}", s("path")),
                loc(&s("path")),
                None,
            ),
            "Write" => d(
                ToolKind::Edit,
                format!("Write {}", s("path")),
                loc(&s("path")),
                None,
            ),
            "Edit" => d(
                ToolKind::Edit,
                format!("Edit {}", s("path")),
                loc(&s("path")),
                None,
            ),
            "Glob" => d(
                ToolKind::Search,
                format!("Glob `{}`", s("pattern")),
                vec![],
                None,
            ),
            "Grep" => d(
                ToolKind::Search,
                format!("Grep `{}`", s("pattern")),
                vec![],
                None,
            ),
            "TodoList" => d(ToolKind::Think, "Update todo list".into(), vec![], None),
            "Agent" => d(
                ToolKind::Think,
                format!("Subagent: {}", s("description")),
                vec![],
                None,
            ),
            _ => return None,
        })
    }

    fn run<'a>(
        &'a self,
        tool: &'a str,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            match tool {
                "Bash" => tools::bash(ctx, &args).await,
                "Read" => tools::read(ctx, &args).await,
                "Write" => tools::write(ctx, &args).await,
                "Edit" => tools::edit(ctx, &args).await,
                "Glob" => tools::glob(ctx, &args).await,
                "Grep" => tools::grep(ctx, &args).await,
                "TodoList" => tools::todo_list(&self.todos, &args),
                other => ToolOutcome::error(format!("Tool `{other}` not found")),
            }
        })
    }
}
