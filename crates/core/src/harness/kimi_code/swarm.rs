//! Kimi Code's `AgentSwarm`: one subagent per item, from one prompt template, run
//! concurrently (at most [`CONCURRENCY`] at a time), their answers in the order of the items.
//! The seed runs the items one after another.

use futures::StreamExt as _;
use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;

use super::WORDING;
use crate::tools::table::{FnTool, Tool, ToolError, ToolResult, spec, str_arg, str_or_empty};
use crate::tools::{CallDescription, SubagentTask, ToolContext};

/// Subagents of one swarm running at once.
pub(crate) const CONCURRENCY: usize = 4;
/// Items a swarm takes at most, as Kimi Code allows.
const MAX_ITEMS: usize = 128;
const PLACEHOLDER: &str = "{{item}}";

pub(super) fn agent_swarm() -> Arc<dyn Tool> {
    FnTool::subagent(
        WORDING,
        spec(
            "AgentSwarm",
            "Run the same task over many inputs with one subagent per item, several at a time. Each subagent gets `prompt_template` with {{item}} replaced by its item and a fresh context, and returns only its final message; you get every answer, in the order of the items. Use it for independent work over files, modules or questions; for one task use Agent.",
            json!({"type": "object", "properties": {
                "description": {"type": "string", "description": "A short (3-5 words) description of the work"},
                "subagent_type": {"type": "string", "enum": ["coder", "explore", "plan"], "description": "coder (default) may edit; explore and plan only read"},
                "prompt_template": {"type": "string", "minLength": 1, "description": "The task for each subagent; {{item}} is replaced by its item"},
                "items": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_ITEMS, "description": "One subagent runs per item"}
            }, "required": ["description", "prompt_template", "items"], "additionalProperties": false}),
        ),
        |a, _| {
            CallDescription::new(
                ToolKind::Think,
                format!("Swarm: {}", str_or_empty(a, "description")),
                vec![],
            )
        },
        |a, c| Box::pin(run(c, a)),
    )
}

async fn run(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(template) = str_arg(&args, "prompt_template").filter(|t| !t.trim().is_empty()) else {
        return Err(ToolError::message("`prompt_template` is required."));
    };
    if !template.contains(PLACEHOLDER) {
        return Err(ToolError::message(
            "`prompt_template` must contain {{item}}: it is replaced by each item.",
        ));
    }
    let items: Vec<String> = args
        .get("items")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if items.is_empty() || items.len() > MAX_ITEMS {
        return Err(ToolError::message(format!(
            "`items` must hold 1 to {MAX_ITEMS} items, not {}.",
            items.len()
        )));
    }
    let read_only = matches!(
        args.get("subagent_type").and_then(Value::as_str),
        Some("explore" | "plan")
    );
    let prompts: Vec<String> = items
        .iter()
        .map(|item| template.replace(PLACEHOLDER, item))
        .collect();
    let outcomes: Vec<_> = futures::stream::iter(prompts)
        .map(|prompt| {
            ctx.run_subagent(SubagentTask {
                prompt,
                read_only,
                resume: None,
            })
        })
        .buffered(CONCURRENCY)
        .collect()
        .await;
    let completed = outcomes.iter().filter(|o| !o.is_error()).count();
    let mut text = format!(
        "<agent_swarm_result>\n<summary>completed: {completed}, failed: {}</summary>\n",
        outcomes.len() - completed
    );
    for (item, o) in items.iter().zip(&outcomes) {
        let outcome = if o.is_error() { "failed" } else { "completed" };
        let _ = writeln!(
            text,
            "<subagent item=\"{}\" outcome=\"{outcome}\">\n{}\n</subagent>",
            attr(item),
            o.model_output.trim()
        );
    }
    text.push_str("</agent_swarm_result>");
    let mut outcome = crate::tools::ToolOutcome::ok(text);
    if completed == 0 {
        outcome.status = interpreter_protocol::ToolStatus::Failed;
    }
    Ok(outcome)
}

fn attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('\n', " ")
}
