//! deepseek-tui's tools beyond files, shell and git, on capabilities we have (the seed
//! advertised them without handlers): background commands (`exec_shell` with `background`,
//! then `exec_shell_wait`, `exec_shell_interact`, `exec_shell_cancel` and their `exec_*`
//! aliases), `fetch_url`, `web_search`, the `todo_*` names of the checklist, subagents
//! (`tool_agent`, `agent_open`, `agent_eval`, `agent_close`), `request_user_input`,
//! `diagnostics` and `project_map`.

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::WORDING;
use crate::harness::session_tools::describe;
use crate::harness::web_tools;
use crate::model::ToolSpec;
use crate::tools::table::{FnTool, Tool, ToolError, ToolResult, object, spec, str_arg};
use crate::tools::{CallDescription, SubagentTask, ToolContext, ToolOutcome};
use crate::workspace::Workspace;

/// How long `exec_shell_wait` waits by default, and at most.
const WAIT_DEFAULT_MS: u64 = 30_000;
const WAIT_MAX_MS: u64 = 600_000;
/// How long `exec_shell_interact` lets the program answer.
const INTERACT_DEFAULT_MS: u64 = 1_000;
/// A background command is stopped after a day if nothing stops it sooner.
const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(86_400);
const PAGE_CHARS: usize = 50_000;

pub(super) fn tool(
    spec: ToolSpec,
    describe: fn(&Value, &Workspace) -> CallDescription,
    run: crate::tools::table::RunFn,
) -> Arc<dyn Tool> {
    FnTool::plain(WORDING, spec, describe, run)
}

fn think(_: &Value, _: &Workspace) -> CallDescription {
    describe(ToolKind::Think, "Background command".into())
}

fn text<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| str_arg(args, k))
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The background-command tools, under both of the original's names.
pub(super) fn background_tools() -> Vec<Arc<dyn Tool>> {
    let id = json!({"type": "string", "description": "The task id exec_shell gave"});
    let wait = |name: &str| {
        tool(
            spec(
                name,
                "Wait for a background command (exec_shell with background) and get its status and the output since the last look.",
                object(
                    json!({"task_id": id.clone(), "timeout_ms": {"type": "integer", "description": "How long to wait for it to end (default 30000)"}, "wait": {"type": "boolean", "description": "Wait for the end (default true); false only looks"}}),
                    &["task_id"],
                ),
            ),
            think,
            |a, c| Box::pin(wait_task(c, a)),
        )
    };
    let interact = |name: &str| {
        tool(
            spec(
                name,
                "Send input to a background command started with exec_shell (background and interactive) and get what it printed back.",
                object(
                    json!({"task_id": id.clone(), "input": {"type": "string", "description": "Text to send (include \\n to press Enter)"}, "stdin": {"type": "string"}, "data": {"type": "string"}, "timeout_ms": {"type": "integer", "description": "How long to collect its answer (default 1000)"}, "close_stdin": {"type": "boolean"}}),
                    &["task_id"],
                ),
            ),
            think,
            |a, c| Box::pin(interact_task(c, a)),
        )
    };
    vec![
        tool(
            spec(
                "exec_shell_cancel",
                "Stop background commands: one by task_id, or all of them.",
                object(
                    json!({"task_id": id.clone(), "id": {"type": "string"}, "all": {"type": "boolean"}}),
                    &[],
                ),
            ),
            think,
            |a, c| Box::pin(async move { cancel_task(c, &a) }),
        ),
        interact("exec_shell_interact"),
        wait("exec_shell_wait"),
        interact("exec_interact"),
        wait("exec_wait"),
    ]
}

/// `exec_shell` with `background`: started at once, its id back.
pub(super) async fn start_background(
    ctx: &ToolContext,
    args: &Value,
    command: &str,
    cwd: &std::path::Path,
) -> ToolResult {
    let interactive = args.get("interactive").and_then(Value::as_bool) == Some(true);
    let task = ctx
        .start_task(crate::tools::background::Start {
            tool: "exec_shell",
            command,
            description: command,
            cwd,
            timeout: BACKGROUND_TIMEOUT,
            interactive,
            tty: interactive && args.get("tty").and_then(Value::as_bool) == Some(true),
            quiet: false,
        })
        .await?;
    if let Some(input) = text(args, &["stdin"]) {
        ctx.tasks
            .send_input(&task.id, input.as_bytes())
            .map_err(ToolError::message)?;
    }
    Ok(ToolOutcome::ok(
        json!({"task_id": task.id, "status": "running", "output_file": task.output_path})
            .to_string(),
    ))
}

fn status_json(task: &crate::tools::background::TaskRecord, output: &str) -> String {
    json!({
        "task_id": task.id,
        "status": if task.running() { "running".to_string() } else { task.outcome() },
        "exit_code": task.exit_code,
        "output": output,
    })
    .to_string()
}

async fn wait_task(ctx: &ToolContext, args: Value) -> ToolResult {
    let id =
        text(&args, &["task_id"]).ok_or_else(|| ToolError::message("`task_id` is required"))?;
    if args.get("wait").and_then(Value::as_bool) != Some(false) {
        let ms = args
            .get("timeout_ms")
            .and_then(Value::as_u64)
            .unwrap_or(WAIT_DEFAULT_MS)
            .min(WAIT_MAX_MS);
        tokio::select! {
            _ = ctx.tasks.wait(id, Duration::from_millis(ms)) => {}
            () = ctx.cancel.cancelled() => return Err(ToolError::message("The wait was cancelled.")),
        }
    }
    let (task, output) = ctx
        .tasks
        .read_new(id)
        .ok_or_else(|| ToolError::message(ctx.tasks.unknown(id)))?;
    Ok(ToolOutcome::ok(status_json(&task, &output)))
}

async fn interact_task(ctx: &ToolContext, args: Value) -> ToolResult {
    let id =
        text(&args, &["task_id"]).ok_or_else(|| ToolError::message("`task_id` is required"))?;
    if let Some(input) = ["input", "stdin", "data"]
        .iter()
        .find_map(|k| str_arg(&args, k))
    {
        ctx.tasks
            .send_input(id, input.as_bytes())
            .map_err(ToolError::message)?;
    }
    let ms = args
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .unwrap_or(INTERACT_DEFAULT_MS)
        .min(WAIT_MAX_MS);
    tokio::select! {
        _ = ctx.tasks.wait(id, Duration::from_millis(ms)) => {}
        () = ctx.cancel.cancelled() => return Err(ToolError::message("The call was cancelled.")),
    }
    let (task, output) = ctx
        .tasks
        .read_new(id)
        .ok_or_else(|| ToolError::message(ctx.tasks.unknown(id)))?;
    Ok(ToolOutcome::ok(status_json(&task, &output)))
}

fn cancel_task(ctx: &ToolContext, args: &Value) -> ToolResult {
    let ids: Vec<String> = match text(args, &["task_id", "id"]) {
        Some(id) => vec![id.to_string()],
        None if args.get("all").and_then(Value::as_bool) == Some(true) => {
            ctx.tasks.running().into_iter().map(|t| t.id).collect()
        }
        None => return Err(ToolError::message("Give `task_id`, or `all: true`.")),
    };
    let mut stopped = Vec::new();
    for id in ids {
        let t = ctx.tasks.stop(&id).map_err(ToolError::message)?;
        stopped.push(t.id);
    }
    Ok(ToolOutcome::ok(json!({"cancelled": stopped}).to_string()))
}

/// `fetch_url` and `web_search`.
pub(super) fn web(env: &crate::harness::PromptEnv) -> Vec<Arc<dyn Tool>> {
    let mut tools = Vec::new();
    if env.web.fetch {
        tools.push(tool(
            spec(
                "fetch_url",
                "Fetch a URL (http or https) and get its text; HTML comes back as Markdown.",
                object(
                    json!({"url": {"type": "string"}, "format": {"type": "string", "enum": ["markdown", "text"]}, "max_bytes": {"type": "integer"}, "timeout_ms": {"type": "integer"}}),
                    &["url"],
                ),
            ),
            |a, _| describe(ToolKind::Fetch, format!("Fetch {}", text(a, &["url"]).unwrap_or(""))),
            |a, c| Box::pin(fetch(c, a)),
        ));
    }
    if env.web.search {
        tools.push(tool(
            spec(
                "web_search",
                "Search the web; results as JSON with title, url and snippet.",
                object(
                    json!({"query": {"type": "string"}, "q": {"type": "string"}, "search_query": {"type": "string"}, "max_results": {"type": "integer"}, "timeout_ms": {"type": "integer"}}),
                    &[],
                ),
            ),
            |a, _| {
                let q = text(a, &["query", "q", "search_query"]).unwrap_or("");
                describe(ToolKind::Fetch, format!("Search the web: {q}"))
            },
            |a, c| Box::pin(search(c, a)),
        ));
    }
    tools
}

async fn fetch(ctx: &ToolContext, args: Value) -> ToolResult {
    let url = text(&args, &["url"]).ok_or_else(|| ToolError::message("`url` is required"))?;
    let mut cfg = (*ctx.web).clone();
    if let Some(ms) = args
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .filter(|m| *m > 0)
    {
        cfg.timeout = Duration::from_millis(ms.min(120_000));
    }
    let page = web_tools::fetch_page(ctx, "fetch_url", url, &cfg)
        .await?
        .map_err(|e| ToolError::message(format!("fetch_url failed: {e}")))?;
    let max = args
        .get("max_bytes")
        .and_then(Value::as_u64)
        .map_or(PAGE_CHARS, |m| (m as usize).min(PAGE_CHARS));
    let body = crate::tools::truncate::truncate_head(&page.text, max, usize::MAX);
    Ok(ToolOutcome::ok(
        json!({"url": page.url, "title": page.title, "content_type": page.content_type,
               "truncated": page.cut || body.len() < page.text.len(), "content": body})
        .to_string(),
    ))
}

async fn search(ctx: &ToolContext, args: Value) -> ToolResult {
    let query = text(&args, &["query", "q", "search_query"])
        .ok_or_else(|| ToolError::message("`query` is required"))?;
    web_tools::authorize_search(ctx, "web_search", query).await?;
    let limit = args
        .get("max_results")
        .and_then(Value::as_u64)
        .map_or(8, |n| n.clamp(1, 20) as usize);
    let hits = web_tools::search_hits(ctx, query, limit)
        .await?
        .map_err(|e| ToolError::message(format!("web_search failed: {e}")))?;
    let results: Vec<Value> = hits
        .iter()
        .map(|h| json!({"title": h.title.trim(), "url": h.url, "snippet": h.content.split_whitespace().collect::<Vec<_>>().join(" ")}))
        .collect();
    Ok(ToolOutcome::ok(
        json!({"query": query, "results": results}).to_string(),
    ))
}

/// The subagent tools: `tool_agent` runs one; `agent_open` starts a named one that
/// `agent_eval` continues and `agent_close` lets go.
pub(super) fn agent_tools() -> Vec<Arc<dyn Tool>> {
    let names: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let mk = |spec: ToolSpec, op: AgentOp| -> Arc<dyn Tool> {
        Arc::new(AgentTool {
            spec,
            op,
            names: names.clone(),
        })
    };
    vec![
        mk(
            spec(
                "agent_close",
                "Let go of a named agent opened with agent_open.",
                object(
                    json!({"id": {"type": "string"}, "name": {"type": "string"}, "agent_id": {"type": "string"}}),
                    &[],
                ),
            ),
            AgentOp::Close,
        ),
        mk(
            spec(
                "agent_eval",
                "Send a message to an agent opened with agent_open (by name or agent_id); it answers with what it knows from before.",
                object(
                    json!({"name": {"type": "string"}, "agent_id": {"type": "string"}, "id": {"type": "string"}, "message": {"type": "string"}, "input": {"type": "string"}}),
                    &[],
                ),
            ),
            AgentOp::Eval,
        ),
        mk(
            spec(
                "agent_open",
                "Start a named subagent on a task; it works in a fresh context and answers. Continue it later with agent_eval.",
                object(
                    json!({"name": {"type": "string"}, "prompt": {"type": "string"}, "message": {"type": "string"}, "objective": {"type": "string"}, "type": {"type": "string", "description": "explore or plan only read; general (default) may edit"}, "agent_type": {"type": "string"}}),
                    &[],
                ),
            ),
            AgentOp::Open,
        ),
        mk(
            spec(
                "tool_agent",
                "Run a subagent on a self-contained task: a fresh context, the same tools, and only its final answer back.",
                object(
                    json!({"prompt": {"type": "string"}, "name": {"type": "string"}}),
                    &["prompt"],
                ),
            ),
            AgentOp::Once,
        ),
    ]
}

#[derive(Clone, Copy)]
enum AgentOp {
    Once,
    Open,
    Eval,
    Close,
}

struct AgentTool {
    spec: ToolSpec,
    op: AgentOp,
    /// Names given to agent_open, to their agents' ids (for as long as the table lives).
    names: Arc<Mutex<HashMap<String, String>>>,
}

impl Tool for AgentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &Value, _ws: &Workspace) -> CallDescription {
        let who = text(args, &["name", "agent_id", "id"]).unwrap_or("agent");
        describe(ToolKind::Think, format!("Subagent: {who}"))
    }
    fn run<'a>(
        &'a self,
        args: Value,
        ctx: &'a ToolContext,
    ) -> futures::future::BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { WORDING.outcome(self.call(ctx, &args).await) })
    }
    fn starts_subagent(&self) -> bool {
        !matches!(self.op, AgentOp::Close)
    }
    fn for_subagents(&self) -> bool {
        false
    }
}

impl AgentTool {
    async fn call(&self, ctx: &ToolContext, args: &Value) -> ToolResult {
        let known = |key: &str| {
            let names = self.names.lock().unwrap_or_else(|e| e.into_inner());
            names.get(key).cloned().unwrap_or_else(|| key.to_string())
        };
        let who = text(args, &["agent_id", "id", "name"]);
        let (prompt, resume) = match self.op {
            AgentOp::Close => {
                let who = who.ok_or_else(|| ToolError::message("Name the agent to close."))?;
                let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
                names.remove(who);
                return Ok(ToolOutcome::ok(json!({"closed": who}).to_string()));
            }
            AgentOp::Eval => (
                text(args, &["message", "input"]),
                Some(known(who.ok_or_else(|| {
                    ToolError::message("Name the agent: name or agent_id.")
                })?)),
            ),
            AgentOp::Open => (text(args, &["prompt", "message", "objective"]), None),
            AgentOp::Once => (text(args, &["prompt"]), None),
        };
        let prompt = prompt.ok_or_else(|| ToolError::message("The agent needs a prompt."))?;
        let kind = text(args, &["type", "agent_type"]).unwrap_or("general");
        let o = ctx
            .run_subagent(SubagentTask {
                prompt: prompt.to_string(),
                read_only: matches!(kind, "explore" | "plan"),
                resume,
            })
            .await;
        if o.is_error() {
            return Err(ToolError::message(o.model_output));
        }
        let id = o.subagent_id();
        if let (AgentOp::Open, Some(name)) = (self.op, text(args, &["name"])) {
            let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
            names.insert(name.to_string(), id.clone());
        }
        let mut shaped = ToolOutcome::ok(
            json!({"agent_id": id, "status": "completed", "result": o.model_output}).to_string(),
        );
        shaped.user_output = o.user_output;
        Ok(shaped)
    }
}

/// `project_map`: the folder's tree, a few levels deep.
pub(super) fn project_map() -> Arc<dyn Tool> {
    tool(
        spec(
            "project_map",
            "A map of the project: its folders and files a few levels deep (ignored files left out).",
            object(
                json!({"max_depth": {"type": "integer", "description": "Levels to show (default 3, at most 6)"}}),
                &[],
            ),
        ),
        |_, _| describe(ToolKind::Read, "Project map".into()),
        |a, c| {
            Box::pin(async move {
                let depth = a
                    .get("max_depth")
                    .and_then(Value::as_u64)
                    .unwrap_or(3)
                    .clamp(1, 6) as usize;
                let root = c.workspace.cwd().to_path_buf();
                let (lines, cut) = tokio::task::spawn_blocking(move || {
                    crate::tools::files::list_dir(&root, depth, 2_000)
                })
                .await
                .map_err(|e| ToolError::message(format!("project_map failed: {e}")))?;
                let mut out = lines.join("\n");
                if cut {
                    out.push_str(
                        "\n(… more entries: lower max_depth or list a folder with list_dir)",
                    );
                }
                Ok(ToolOutcome::ok(out))
            })
        },
    )
}

/// `diagnostics`: the editor's problems for every open file (where the face reports them).
pub(super) fn diagnostics() -> Arc<dyn Tool> {
    tool(
        spec(
            "diagnostics",
            "The errors and warnings the editor shows for the open files.",
            object(json!({}), &[]),
        ),
        |_, _| describe(ToolKind::Read, "Get diagnostics".into()),
        |_, c| {
            Box::pin(async move {
                let map =
                    c.asks.diagnostics(vec![], &c.cancel).await.ok_or_else(|| {
                        ToolError::message("The editor did not report diagnostics.")
                    })?;
                let problems: Vec<_> = map
                    .into_iter()
                    .flat_map(|(path, list)| list.into_iter().map(move |d| (path.clone(), d)))
                    .collect();
                if problems.is_empty() {
                    return Ok(ToolOutcome::ok("No diagnostics."));
                }
                Ok(ToolOutcome::ok(crate::tools::diagnostics::render(
                    &problems,
                    c.workspace.cwd(),
                )))
            })
        },
    )
}

/// `revert_turn`: the files of the last `turn_offset` turns (default 1) go back to how they
/// were, through the session's checkpoints; the conversation keeps the turns.
pub(super) fn revert_turn() -> Arc<dyn Tool> {
    tool(
        spec(
            "revert_turn",
            "Put back the files the last turns changed (default: the last finished turn), from the session's checkpoints. A file changed since is kept and named. The conversation keeps the turns.",
            object(
                json!({"turn_offset": {"type": "integer", "description": "How many finished turns to take back, from the last (default 1)"}}),
                &[],
            ),
        ),
        |_, _| describe(ToolKind::Edit, "Revert the last turn's files".into()),
        |a, c| {
            Box::pin(async move {
                let n = a
                    .get("turn_offset")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .clamp(1, 100) as u32;
                // It writes files: asked about as an edit of the workspace.
                c.authorize(
                    crate::sandbox::Intent::Write {
                        paths: vec![c.workspace.cwd().to_path_buf()],
                    },
                    "revert_turn",
                    ToolKind::Edit,
                    &format!("Put back the files of the last {n} turn(s)"),
                    vec![],
                )
                .await?;
                let mut o = ToolOutcome::ok(String::new());
                o.mode_change = Some(crate::tools::ModeChange::RevertTurns(n));
                Ok(o)
            })
        },
    )
}
