//! The native harness: Codex's tool set (exec_command and write_stdin, apply_patch,
//! update_plan, view_image) plus read_file, list_dir, grep_files and glob.

mod exec;

use crate::config::WireApi;
use crate::harness::HarnessInfo;
use futures::future::BoxFuture;
use interpreter_protocol::{Plan, ToolKind};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use super::{Harness, PromptEnv};
use crate::model::HistoryItem;
use crate::tools::files::{self, GrepOptions};
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, ToolTable, Wording, location, spec, str_or_empty,
};
use crate::tools::truncate::truncate_middle;
use crate::tools::{CallDescription, ToolContext, ToolOutcome, apply_patch, patch_runner, plan};
use crate::workspace::{Workspace, window};

pub(super) struct Native;

const DEFAULT_TIMEOUT_MS: u64 = 60_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
const READ_DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// What a streamed read keeps of a line: enough for MAX_LINE_CHARS characters and the cut mark.
const MAX_LINE_BYTES: usize = (MAX_LINE_CHARS + 1) * 4;

const SYSTEM_PROMPT: &str = "\
You are interpreter, a coding agent working in the user's repository. You read code, run \
commands and edit files with the tools provided, then report briefly.

# How you work
- Understand before changing: read the relevant files and search the codebase first.
- Make the smallest change that fully solves the task, in the style of the surrounding code.
- Edit files with apply_patch. Never paste whole files into a shell command to write them.
- Verify with the project's own tests or build when that is cheap, and fix what you broke.
- Run commands with exec_command. One still running after its yield time keeps running as a \
session (servers, watchers, REPLs): poll it or type into it with write_stdin.
- For multi-step work, keep a short plan with update_plan and mark steps as you finish them.
- Do not commit, push or delete work unless the user asks.

# apply_patch format
*** Begin Patch
*** Update File: path/to/file.py
@@ def function_name
 context line
-removed line
+added line
*** End Patch
Other hunk headers: `*** Add File: path` (every line starts with +), `*** Delete File: path`, \
and `*** Move to: new/path` right after an Update header. Paths are relative to the working \
directory. Include about three lines of context around each change; use `@@ <line>` to \
name the function or class when the context alone is ambiguous.

# Final answer
Be concise: what you changed and why, with file paths, and anything the user must still do.";

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "native",
    label: "Codex",
    about: "Codex's tools: shell, apply_patch, update_plan and file tools",
    wires: &[WireApi::Chat, WireApi::Responses],
};

impl Harness for Native {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, _env: &PromptEnv) -> String {
        SYSTEM_PROMPT.to_string()
    }

    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem> {
        let mut items = Vec::new();
        if let Some(md) = &env.agents_md {
            items.push(HistoryItem::User {
                text: format!(
                    "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n{md}\n</INSTRUCTIONS>",
                    env.cwd.display()
                ),
                images: vec![],
                synthetic: true,
            });
        }
        items.push(HistoryItem::User {
            text: environment_context(env),
            images: vec![],
            synthetic: true,
        });
        if let Some(block) = super::codex_skills_block(&env.skills) {
            items.push(HistoryItem::User {
                text: block,
                images: vec![],
                synthetic: true,
            });
        }
        items
    }

    /// Codex repeats the environment context when it changes (a mode switch); the first
    /// one is in the initial context, so an unchanged session sends none.
    fn reminder(&self, env: &PromptEnv, _today: &str) -> Option<String> {
        Some(environment_context(env))
    }

    fn reminder_prefix(&self) -> &'static str {
        "<environment_context>"
    }

    fn tools(&self, env: &PromptEnv) -> ToolTable {
        let ask = super::native_ask::request_user_input(WORDING);
        let mut tools = vec![exec::exec_command(), exec::write_stdin()];
        tools.extend([editing_tools(), reading_tools()].concat());
        if env.images {
            tools.push(exec::view_image());
        }
        // Codex's older shell tools still run when a model calls them.
        let mut hidden = legacy_shell_tools();
        // Listed where someone can answer; elsewhere it still answers a call that nobody can.
        match env.face.questions {
            true => tools.push(ask),
            false => hidden.push(ask),
        }
        ToolTable::new(tools).with_hidden(hidden)
    }
}

/// `shell`, `shell_command` and `local_shell`: one command to its end, as Codex ran commands
/// before its interactive sessions.
fn legacy_shell_tools() -> Vec<Arc<dyn Tool>> {
    ["shell", "shell_command", "local_shell"]
        .into_iter()
        .map(|name| {
            tool(
                name,
                "Runs a shell command and returns its exit code and combined output.",
                json!({"type": "object", "properties": {
                    "command": {"description": "The command line to run (a string, or an argv array)."},
                    "workdir": {"type": "string", "description": "Working directory; defaults to the session's."},
                    "timeout_ms": {"type": "integer", "description": "Timeout in milliseconds (default 60000)."}
                }, "required": ["command"], "additionalProperties": false}),
                describe_shell,
                |a, c| Box::pin(run_shell(c, a)),
            )
        })
        .collect()
}

/// Patches and the plan: Codex's own tools.
fn editing_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            "apply_patch",
            "Edits files with a patch in the apply_patch format described in the instructions.",
            json!({"type": "object", "properties": {
                "input": {"type": "string", "description": "The whole patch, from *** Begin Patch to *** End Patch."}
            }, "required": ["input"], "additionalProperties": false}),
            describe_patch,
            |a, c| {
                Box::pin(apply_patch_tool(
                    c,
                    a,
                    "apply_patch needs an `input` string holding the patch",
                ))
            },
        ),
        tool(
            "update_plan",
            "Records the task plan. At most one step may be in_progress.",
            json!({"type": "object", "properties": {
                "explanation": {"type": "string"},
                "plan": {"type": "array", "items": {"type": "object", "properties": {
                    "step": {"type": "string"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                }, "required": ["step", "status"], "additionalProperties": false}}
            }, "required": ["plan"], "additionalProperties": false}),
            |_, _| CallDescription::new(ToolKind::Think, "Update plan".into(), vec![]),
            |a, _| Box::pin(async move { update_plan(&a) }),
        ),
    ]
}

/// Reading and finding files.
fn reading_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            "read_file",
            "Reads a text file with line numbers. Use offset/limit to page through big files.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "description": "First line, 1-based (default 1)."},
                "limit": {"type": "integer", "description": "Number of lines (default 2000)."}
            }, "required": ["path"], "additionalProperties": false}),
            |a, ws| {
                CallDescription::new(
                    ToolKind::Read,
                    format!("Read {}", str_or_empty(a, "path")),
                    location(ws, a, "path"),
                )
            },
            |a, c| Box::pin(read_file(c, a)),
        ),
        tool(
            "list_dir",
            "Lists a directory as an indented tree, honouring .gitignore.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "depth": {"type": "integer", "description": "Levels to descend (default 2)."}
            }, "required": ["path"], "additionalProperties": false}),
            |a, ws| {
                CallDescription::new(
                    ToolKind::Read,
                    format!("List {}", str_or_empty(a, "path")),
                    location(ws, a, "path"),
                )
            },
            |a, c| Box::pin(async move { list_dir(c, &a) }),
        ),
        tool(
            "grep_files",
            "Searches file contents with a regular expression, honouring .gitignore. Returns path:line: text.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "File or folder to search (default: the working directory)."},
                "include": {"type": "string", "description": "Glob of files to search, e.g. *.rs"},
                "limit": {"type": "integer", "description": "Maximum matches (default 100)."}
            }, "required": ["pattern"], "additionalProperties": false}),
            |a, _| {
                CallDescription::new(
                    ToolKind::Search,
                    format!("Search `{}`", str_or_empty(a, "pattern")),
                    vec![],
                )
            },
            |a, c| Box::pin(grep_files(c, a)),
        ),
        tool(
            "glob",
            "Finds files by glob pattern (e.g. src/**/*.ts), honouring .gitignore.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "Folder to search (default: the working directory)."}
            }, "required": ["pattern"], "additionalProperties": false}),
            |a, _| {
                CallDescription::new(
                    ToolKind::Search,
                    format!("Find `{}`", str_or_empty(a, "pattern")),
                    vec![],
                )
            },
            |a, c| Box::pin(glob(c, a)),
        ),
    ]
}

fn environment_context(env: &PromptEnv) -> String {
    let mut ctx = format!(
        "<environment_context>\n  <cwd>{}</cwd>\n  <shell>{}</shell>\n  <os>{}</os>\n  <sandbox_mode>{}</sandbox_mode>\n  <approval_policy>{}</approval_policy>\n",
        env.cwd.display(),
        env.shell,
        env.os,
        env.sandbox.as_str(),
        env.approval.as_str()
    );
    for r in env.roots.iter().skip(1) {
        let _ = writeln!(ctx, "  <writable_root>{}</writable_root>", r.display());
    }
    ctx.push_str("</environment_context>");
    ctx
}

/// Codex's tools word errors without a prefix.
pub(super) const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};

fn tool(
    name: &str,
    description: &str,
    parameters: Value,
    describe: fn(&Value, &Workspace) -> CallDescription,
    run: for<'a> fn(Value, &'a ToolContext) -> BoxFuture<'a, ToolResult>,
) -> Arc<dyn Tool> {
    FnTool::plain(WORDING, spec(name, description, parameters), describe, run)
}

pub(super) fn describe_shell(args: &Value, _ws: &Workspace) -> CallDescription {
    let command = shell_command(args);
    if apply_patch::parse_shell_invocation(&command).is_some() {
        return CallDescription::new(ToolKind::Edit, "apply_patch".into(), vec![]);
    }
    CallDescription {
        kind: ToolKind::Execute,
        title: command.clone(),
        locations: vec![],
        command: Some(command),
    }
}

pub(super) fn describe_patch(args: &Value, ws: &Workspace) -> CallDescription {
    let paths = patch_runner::patch_paths(ws.cwd(), &str_or_empty(args, "input"));
    let title = format!(
        "Edit {}",
        paths
            .iter()
            .map(|p| ws.display_path(p))
            .collect::<Vec<_>>()
            .join(", ")
    );
    CallDescription::new(ToolKind::Edit, title, paths)
}

/// `apply_patch` with its `input`; `missing` is the harness's words for a call without it.
pub(super) async fn apply_patch_tool(
    ctx: &ToolContext,
    args: Value,
    missing: &'static str,
) -> ToolResult {
    match args.get("input").and_then(Value::as_str) {
        Some(p) => Ok(patch_runner::apply(ctx, "apply_patch", p, ctx.workspace.cwd()).await),
        None => Err(ToolError::message(missing)),
    }
}

/// `command` as a string, or Codex's legacy argv array joined for the shell.
fn shell_command(args: &Value) -> String {
    match args.get("command").or_else(|| args.get("cmd")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let words: Vec<String> = parts
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect();
            // ["bash", "-lc", "script"] is the common legacy shape, and
            // ["powershell.exe", "-Command", "script"] on Windows.
            let script_flag = |f: &str| {
                (f.starts_with('-') && f.ends_with('c')) || f.eq_ignore_ascii_case("-command")
            };
            if words.len() == 3 && script_flag(&words[1]) {
                words[2].clone()
            } else {
                let shell = crate::tools::exec::shell::Shell::detect();
                words
                    .iter()
                    .map(|w| shell.quote(w))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        }
        _ => String::new(),
    }
}

pub(super) async fn run_shell(ctx: &ToolContext, args: Value) -> ToolResult {
    let command = shell_command(&args);
    if command.trim().is_empty() {
        return Err(ToolError::message(
            "shell needs a non-empty `command` string",
        ));
    }
    let ws = &ctx.workspace;
    let cwd = match args
        .get("workdir")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        Some(w) => ws
            .resolve(w)
            .map_err(|e| ToolError::message(format!("workdir refused: {e}")))?,
        None => ws.cwd().to_path_buf(),
    };
    // A patch sent through the shell goes to the patch machinery, not a subprocess.
    if let Some((cd, patch)) = apply_patch::parse_shell_invocation(&command) {
        let base = match cd {
            Some(d) => ws
                .resolve_from(&cwd, &d)
                .map_err(|e| ToolError::message(format!("apply_patch refused: {e}")))?,
            None => cwd,
        };
        return Ok(patch_runner::apply(ctx, "apply_patch", &patch, &base).await);
    }
    ctx.authorize(
        ctx.command_intent(&command),
        "shell",
        ToolKind::Execute,
        &command,
        vec![],
    )
    .await?;
    let timeout_ms = args
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_TIMEOUT_MS)
        .clamp(100, MAX_TIMEOUT_MS);
    let events = ctx.events.clone();
    let call_id = ctx.call_id.clone();
    let on_chunk = Box::new(move |chunk: &str| {
        events.send(interpreter_protocol::Event::ToolCallOutputDelta {
            call_id: call_id.clone(),
            chunk: chunk.to_string(),
        })
    });
    let result = ctx
        .run_command(&command, &cwd, Duration::from_millis(timeout_ms), on_chunk)
        .await;
    let r = result.map_err(|e| ToolError::message(format!("could not run the command: {e}")))?;
    let mut head = String::new();
    if r.timed_out {
        let _ = writeln!(head, "command timed out after {timeout_ms} milliseconds");
    }
    if r.cancelled {
        let _ = writeln!(head, "command was cancelled by the user");
    }
    let code = r.exit_code.unwrap_or(-1);
    let model_output = format!(
        "{head}Exit code: {code}\nWall time: {:.1} seconds\nOutput:\n{}",
        r.duration.as_secs_f64(),
        truncate_middle(&r.output, ctx.output_token_limit)
    );
    Ok(ToolOutcome::from_exec(r, model_output))
}

fn update_plan(args: &Value) -> ToolResult {
    let Some(steps) = args.get("plan").and_then(Value::as_array) else {
        return Err(ToolError::message(
            "update_plan needs `plan`: an array of {step, status}",
        ));
    };
    let dialect = plan::Dialect {
        text_field: "step",
        completed: "completed",
    };
    let items = plan::parse_items(steps, &dialect).map_err(|e| match e {
        plan::PlanError::EmptyText => {
            ToolError::message("every plan item needs a non-empty `step`")
        }
        plan::PlanError::UnknownStatus(other) => ToolError::message(format!(
            "unknown plan status `{other}` (pending, in_progress or completed)"
        )),
    })?;
    let mut o = ToolOutcome::ok("Plan updated");
    o.plan = Some(Plan {
        explanation: args
            .get("explanation")
            .and_then(Value::as_str)
            .map(String::from),
        items,
    });
    Ok(o)
}

async fn read_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = args.get("path").and_then(Value::as_str) else {
        return Err(ToolError::message("read_file needs a `path`"));
    };
    let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(1);
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .map(|l| l as usize)
        .unwrap_or(READ_DEFAULT_LIMIT)
        .max(1);
    let w = match crate::skills::read_builtin(raw) {
        Some(t) => window::from_text(t, offset, limit),
        None => {
            let path = ctx.workspace.resolve(raw)?;
            ctx.workspace
                .read_lines(&path, offset, limit, MAX_LINE_BYTES)
                .await
                .map_err(|source| ToolError::Read {
                    path: raw.to_string(),
                    source,
                })?
        }
    };
    let mut out = String::new();
    for (n, line) in &w.lines {
        let _ = writeln!(out, "L{n}: {}", files::clip_line(line, MAX_LINE_CHARS));
    }
    if !w.reached_end {
        let next = w.lines.last().map(|(n, _)| n + 1).unwrap_or(1);
        let _ = writeln!(
            out,
            "… {} lines in total; continue with offset={next}",
            w.total_lines
        );
    } else if w.total_lines == 0 {
        out.push_str("(empty file)\n");
    }
    Ok(ToolOutcome::ok(truncate_middle(
        &out,
        ctx.output_token_limit,
    )))
}

fn list_dir(ctx: &ToolContext, args: &Value) -> ToolResult {
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let path = ctx.workspace.resolve(raw)?;
    if !path.is_dir() {
        return Err(ToolError::message(format!("{raw} is not a directory")));
    }
    let depth = args
        .get("depth")
        .and_then(Value::as_u64)
        .unwrap_or(2)
        .clamp(1, 10) as usize;
    let (entries, truncated) = files::list_dir(&path, depth, 500);
    let mut out = format!("Absolute path: {}\n", path.display());
    for e in entries {
        out.push_str(&e);
        out.push('\n');
    }
    if truncated {
        out.push_str("… more entries not shown (limit 500); list a subfolder\n");
    }
    Ok(ToolOutcome::ok(out))
}

async fn grep_files(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(pattern) = args.get("pattern").and_then(Value::as_str) else {
        return Err(ToolError::message("grep_files needs a `pattern`"));
    };
    let root = ctx
        .workspace
        .resolve(args.get("path").and_then(Value::as_str).unwrap_or("."))?;
    let opts = GrepOptions {
        glob: args
            .get("include")
            .and_then(Value::as_str)
            .map(String::from),
        limit: args
            .get("limit")
            .and_then(Value::as_u64)
            .unwrap_or(100)
            .clamp(1, 2000) as usize,
        buffers: ctx.workspace.buffers(),
        ..Default::default()
    };
    let pattern = pattern.to_string();
    let root2 = root.clone();
    let found = tokio::task::spawn_blocking(move || files::grep(&root2, &pattern, &opts)).await;
    match found {
        Ok(Ok((matches, truncated))) => {
            if matches.is_empty() {
                return Ok(ToolOutcome::ok("No matches found."));
            }
            let mut out = String::new();
            for m in &matches {
                let _ = writeln!(
                    out,
                    "{}:{}: {}",
                    ctx.workspace.display_path(&m.path),
                    m.line_number,
                    files::clip_line(&m.line, 500)
                );
            }
            if truncated {
                out.push_str("… more matches not shown; narrow the pattern or path\n");
            }
            Ok(ToolOutcome::ok(truncate_middle(
                &out,
                ctx.output_token_limit,
            )))
        }
        Ok(Err(e)) => Err(ToolError::Message(e)),
        Err(e) => Err(ToolError::message(format!("search failed: {e}"))),
    }
}

async fn glob(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(pattern) = args.get("pattern").and_then(Value::as_str) else {
        return Err(ToolError::message("glob needs a `pattern`"));
    };
    let root = ctx
        .workspace
        .resolve(args.get("path").and_then(Value::as_str).unwrap_or("."))?;
    let pattern = pattern.to_string();
    let root2 = root.clone();
    let buffers = ctx.workspace.buffers();
    let found =
        tokio::task::spawn_blocking(move || files::glob(&root2, &pattern, false, 1000, &buffers))
            .await;
    match found {
        Ok(Ok((paths, truncated))) => {
            if paths.is_empty() {
                return Ok(ToolOutcome::ok("No files found."));
            }
            let mut out: String = paths
                .iter()
                .map(|p| format!("{}\n", ctx.workspace.display_path(p)))
                .collect();
            if truncated {
                out.push_str("… more files not shown (limit 1000)\n");
            }
            Ok(ToolOutcome::ok(out))
        }
        Ok(Err(e)) => Err(ToolError::Message(e)),
        Err(e) => Err(ToolError::message(format!("glob failed: {e}"))),
    }
}
