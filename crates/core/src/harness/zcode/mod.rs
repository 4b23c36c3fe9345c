//! The zcode harness: Z.ai's coding agent surface (Z Code) for GLM models, on the Messages
//! wire only. Its tools are Claude Code's with Z Code's result texts (file-state checks,
//! `Wasted call`, JSON todo results), plus TodoRead; Glob and Grep answer when called, as in
//! the original, without being listed.

mod prompt;

use crate::harness::HarnessInfo;
use futures::future::BoxFuture;
use interpreter_protocol::{Plan, ToolKind};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

use super::claude_code::{self as cc, specs};
use super::session_tools::{PlanModeTool, PlanTool, describe};
use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::model::{HistoryItem, ToolSpec};
use crate::tools::table::{FnTool, Tool, ToolError, ToolResult, ToolTable, Wording, spec};
use crate::tools::{CallDescription, ToolContext, ToolOutcome};
use crate::workspace::Workspace;

/// Z Code's results carry their own wording; nothing is added.
const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};

pub(crate) struct ZCode;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "zcode",
    label: "Z Code",
    about: "Z.ai's coding surface on the Messages wire, which GLM models were trained on",
    wires: &[WireApi::Messages],
};

impl Harness for ZCode {
    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            max_tokens: Some(("max_tokens", 64_000)),
            tool_choice_auto: true,
            ..Default::default()
        }
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        prompt::system(env)
    }

    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem> {
        prompt::context(env)
            .map(|text| HistoryItem::User {
                text,
                images: vec![],
                synthetic: true,
            })
            .into_iter()
            .collect()
    }

    fn reminder(&self, env: &PromptEnv, today: &str) -> Option<String> {
        Some(prompt::reminder(env, today))
    }

    fn tools(&self, env: &PromptEnv) -> ToolTable {
        table(env)
    }

    fn external_tool_name(&self, name: &str) -> String {
        cc::mcp_name(name)
    }
}

fn zcode_tool(
    spec: ToolSpec,
    describe: fn(&Value, &Workspace) -> CallDescription,
    run: for<'a> fn(Value, &'a ToolContext) -> BoxFuture<'a, ToolResult>,
) -> Arc<dyn Tool> {
    FnTool::plain(WORDING, spec, describe, run)
}

fn plan_tool(spec: ToolSpec, which: PlanTool) -> Arc<dyn Tool> {
    Arc::new(PlanModeTool {
        spec,
        which,
        wording: WORDING,
    })
}

/// Z Code's tools in its order; Glob and Grep hidden.
fn table(env: &PromptEnv) -> ToolTable {
    let todos = Arc::new(Mutex::new(Vec::new()));
    let mut tools = vec![
        FnTool::subagent(
            WORDING,
            specs::agent(
                "Explore (default; read-only search of the codebase), Plan (read-only design), \
                 general-purpose (may change files)",
            ),
            cc::describe_agent,
            |a, c| Box::pin(agent(c, a)),
        ),
        cc::ask::ask_user_question(),
        zcode_tool(
            specs::bash(
                "Run a bash command in the working directory; stdout and stderr come back \
                 together. Default timeout 2 minutes, at most 10. Use the dedicated file tools \
                 rather than cat, sed or find.",
                false,
            ),
            cc::describe_bash,
            cc::run_bash,
        ),
        zcode_tool(
            specs::edit(
                "Replace exact text in a file you have read in this session. old_string must \
                 be unique unless replace_all is set.",
            ),
            cc::describe_edit,
            cc::run_edit_zcode,
        ),
        plan_tool(specs::enter_plan_mode(), PlanTool::Enter),
        plan_tool(specs::exit_plan_mode(), PlanTool::Exit),
        zcode_tool(
            specs::read(
                "Read a text file with numbered lines. Without offset and limit the whole file \
                 comes back; reading an unchanged file again is refused as wasted.",
            ),
            cc::describe_read,
            cc::run_read_zcode,
        ),
    ];
    tools.extend(super::session_tools::skill_tool(
        specs::skill(),
        &env.skills,
        WORDING,
    ));
    tools.extend([
        Arc::new(Todos {
            spec: spec(
                "TodoRead",
                "Read the current todo list.",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ),
            write: false,
            state: todos.clone(),
        }) as Arc<dyn Tool>,
        Arc::new(Todos {
            spec: todo_write_spec(),
            write: true,
            state: todos,
        }),
        zcode_tool(
            specs::write(
                "Write a whole file, creating folders as needed. Prefer Edit for existing files.",
            ),
            cc::describe_write,
            cc::run_write_zcode,
        ),
        FnTool::subagent(
            WORDING,
            send_message_spec(),
            |a, _| {
                describe(
                    ToolKind::Think,
                    format!(
                        "Message to {}",
                        a.get("to").and_then(Value::as_str).unwrap_or("")
                    ),
                )
            },
            |a, c| Box::pin(send_message(c, a)),
        ),
    ]);
    // Z Code's order: WebFetch comes before Write.
    if env.web.fetch
        && let Some(at) = tools.iter().position(|t| t.spec().name == "Write")
    {
        tools.insert(at, super::web_tools::web_fetch(WORDING));
    }
    ToolTable::new(tools).with_hidden(vec![
        zcode_tool(specs::glob(), cc::describe_glob, cc::run_glob_zcode),
        zcode_tool(specs::grep(), cc::describe_grep, cc::run_grep),
    ])
}

/// Z Code's Agent: Claude Code's, and a line naming the agent so SendMessage can reach it.
async fn agent(ctx: &ToolContext, args: Value) -> ToolResult {
    let mut o = super::session_tools::agent(ctx, args, true).await?;
    if let Some(id) = o
        .subagent
        .as_ref()
        .map(|s| s.id.clone())
        .filter(|_| !o.is_error())
    {
        o.model_output.push_str(&continue_line(&id));
    }
    Ok(o)
}

fn continue_line(id: &str) -> String {
    format!(
        "\n\nagentId: agent_{id} (to continue this agent, use SendMessage with to: \"agent_{id}\")"
    )
}

fn send_message_spec() -> ToolSpec {
    spec(
        "SendMessage",
        "Send a message to an agent the Agent tool started, by its agent id, to continue its \
         work: it answers with what it knows from before. Include what the agent needs to \
         understand the request. Use { to, summary, message } with the id the Agent result \
         named.",
        json!({"type": "object", "properties": {
            "to": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The agent id, such as agent_<uuid>."},
            "summary": {"type": "string", "minLength": 1, "maxLength": 200, "description": "A short summary of the message, for the log."},
            "message": {"type": "string", "minLength": 1, "maxLength": 20000, "description": "The message for the agent."}
        }, "required": ["to", "summary", "message"], "additionalProperties": false}),
    )
}

/// Continues the agent `to` with `message`. Z Code queues the message for an agent that
/// runs on; ours have ended, so the agent runs again with its history and answers here.
async fn send_message(ctx: &ToolContext, args: Value) -> ToolResult {
    let field = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| ToolError::message(format!("`{k}` is required.")))
    };
    let (to, message) = (field("to")?, field("message")?);
    let o = ctx
        .run_subagent(crate::tools::SubagentTask {
            prompt: message.to_string(),
            read_only: false,
            resume: Some(to.trim_start_matches("agent_").to_string()),
        })
        .await;
    if o.is_error() {
        return Ok(o);
    }
    let id = o.subagent_id();
    let mut shaped = ToolOutcome::ok(format!(
        "Message delivered to agent_{id}. Its reply:\n\n{}{}",
        o.model_output,
        continue_line(&id)
    ));
    shaped.user_output = o.user_output;
    Ok(shaped)
}

fn todo_write_spec() -> ToolSpec {
    spec(
        "TodoWrite",
        "Set the task's todo list (the whole list each time). At most one item in_progress; \
         mark items completed as soon as they are done.",
        json!({"type": "object", "properties": {
            "todos": {"type": "array", "description": "The complete updated todo list. At most one item may be in_progress at a time.", "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "minLength": 1, "description": "Brief description of the task"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Current status of the task"},
                    "priority": {"type": "string", "enum": ["high", "medium", "low"], "description": "Priority level of the task"}
                },
                "required": ["content", "status", "priority"],
                "additionalProperties": false
            }}
        }, "required": ["todos"], "additionalProperties": false}),
    )
}

/// TodoRead and TodoWrite over one list, kept for the session.
struct Todos {
    spec: ToolSpec,
    write: bool,
    state: Arc<Mutex<Vec<Value>>>,
}

impl Tool for Todos {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, _args: &Value, _ws: &Workspace) -> CallDescription {
        let title = if self.write {
            "Update todos"
        } else {
            "Read todos"
        };
        describe(ToolKind::Think, title.into())
    }
    fn run<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { WORDING.outcome(self.call(&args)) })
    }
}

impl Todos {
    fn call(&self, args: &Value) -> ToolResult {
        let mut todos = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !self.write {
            return Ok(ToolOutcome::ok(json!({"todos": *todos}).to_string()));
        }
        let items = super::session_tools::todo_items(args, "content")?;
        let new: Vec<Value> = args["todos"]
            .as_array()
            .map(|l| {
                l.iter()
                    .map(|t| json!({"content": t["content"], "status": t["status"],
                                    "priority": t.get("priority").cloned().unwrap_or(json!("medium"))}))
                    .collect()
            })
            .ok_or_else(|| ToolError::message("todos must be an array"))?;
        let count = |s: &str| new.iter().filter(|t| t["status"] == s).count();
        let summary = json!({"total": new.len(), "pending": count("pending"),
                             "inProgress": count("in_progress"), "completed": count("completed")});
        let old = std::mem::replace(&mut *todos, new.clone());
        let mut o =
            ToolOutcome::ok(json!({"oldTodos": old, "todos": new, "summary": summary}).to_string());
        o.plan = Some(Plan {
            explanation: None,
            items,
        });
        Ok(o)
    }
}
