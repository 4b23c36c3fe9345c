//! The minimal harness: one shell tool and apply_patch with a short prompt, for small local
//! models (llama.cpp, Ollama) that do worse with many tools and long instructions.

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::{Harness, PromptEnv, native};
use crate::model::{HistoryItem, ToolSpec};
use crate::tools::{CallDescription, ToolContext, ToolOutcome, patch_runner};

pub struct Minimal;

impl Harness for Minimal {
    fn name(&self) -> &'static str {
        "minimal"
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

    fn tools(&self) -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "shell".into(),
                description: "Run a bash command.".into(),
                parameters: json!({"type": "object", "properties": {
                    "command": {"type": "string"}}, "required": ["command"]}),
            },
            ToolSpec {
                name: "apply_patch".into(),
                description: "Edit files with a patch.".into(),
                parameters: json!({"type": "object", "properties": {
                    "input": {"type": "string"}}, "required": ["input"]}),
            },
        ]
    }

    fn describe(&self, tool: &str, args: &Value, ctx: &ToolContext) -> Option<CallDescription> {
        match tool {
            "shell" | "apply_patch" => native::Native.describe(tool, args, ctx),
            _ => None,
        }
    }

    fn run<'a>(
        &'a self,
        tool: &'a str,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            match tool {
                "shell" => native::run_shell(ctx, &args).await,
                "apply_patch" => match args.get("input").and_then(Value::as_str) {
                    Some(p) => patch_runner::apply(ctx, tool, p, ctx.workspace.cwd()).await,
                    None => ToolOutcome::error("apply_patch needs `input`: the patch text"),
                },
                other => ToolOutcome::error(format!("unknown tool `{other}`")),
            }
        })
    }
}
