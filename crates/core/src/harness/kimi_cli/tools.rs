//! kimi-cli's tools on our machinery, with the original's parameters, limits and texts: a
//! result is `<system>{message}</system>` then the output (`<system>Tool output is
//! empty.</system>` when there is neither), a failure `<system>ERROR: {message}</system>`
//! then any output.

use futures::future::BoxFuture;
use interpreter_protocol::{Plan, ToolKind, ToolStatus};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use super::WORDING;
use crate::harness::session_tools::describe;
use crate::harness::task_tools;
use crate::model::ToolSpec;
use crate::tools::search_tools::{self, paged};
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, ToolTable, location, object, spec, str_arg, str_or_empty,
};
use crate::tools::truncate::truncate_head;
use crate::tools::{CallDescription, ToolContext, ToolOutcome, files, patch_runner, plan};
use crate::workspace::{Workspace, window};

/// ReadFile's limits.
const READ_MAX_LINES: usize = 1_000;
const READ_MAX_LINE_CHARS: usize = 2_000;
const READ_MAX_BYTES: usize = 100 << 10;
/// Shell's timeouts, in seconds.
const SHELL_DEFAULT_TIMEOUT: u64 = 60;
const SHELL_MAX_TIMEOUT: u64 = 300;
/// A background command's timeout by default and at most, in seconds (as Kimi Code's).
const BACKGROUND_DEFAULT_TIMEOUT: u64 = 600;
const BACKGROUND_MAX_TIMEOUT: u64 = 86_400;
/// Output caps of every tool result.
const MAX_OUTPUT_CHARS: usize = 50_000;
const MAX_OUTPUT_LINE: usize = 2_000;
/// Glob returns at most this many paths.
const GLOB_MAX_MATCHES: usize = 1_000;
const TRUNCATED: &str = "Output is truncated to fit in the message.";

/// A successful result: the status line, then the output.
fn ok(message: &str, output: &str) -> ToolOutcome {
    ToolOutcome::ok(render(message, output))
}

fn render(message: &str, output: &str) -> String {
    let mut parts = Vec::new();
    if !message.is_empty() {
        parts.push(format!("<system>{message}</system>"));
    }
    if !output.is_empty() {
        parts.push(output.to_string());
    }
    if parts.is_empty() {
        return "<system>Tool output is empty.</system>".into();
    }
    parts.join("\n")
}

/// A failed result with output after the error line.
fn failed(message: &str, output: &str) -> ToolOutcome {
    let mut o = ToolOutcome::error(format!("<system>ERROR: {message}</system>"));
    if !output.is_empty() {
        o.model_output = format!("{}\n{output}", o.model_output);
    }
    o
}

/// The output within the caps, and whether it was cut.
fn capped(output: &str) -> (String, bool) {
    let out = truncate_head(output, MAX_OUTPUT_CHARS, MAX_OUTPUT_LINE);
    let cut = out != output;
    (out, cut)
}

fn with_truncation(message: &str, cut: bool) -> String {
    match (message.is_empty(), cut) {
        (_, false) => message.to_string(),
        (true, true) => TRUNCATED.to_string(),
        (false, true) => format!("{message} {TRUNCATED}"),
    }
}

fn tool(
    spec: ToolSpec,
    describe: fn(&Value, &Workspace) -> CallDescription,
    run: for<'a> fn(Value, &'a ToolContext) -> BoxFuture<'a, ToolResult>,
) -> Arc<dyn Tool> {
    FnTool::plain(WORDING, spec, describe, run)
}

fn describe_file(kind: ToolKind, verb: &str, a: &Value, ws: &Workspace) -> CallDescription {
    CallDescription {
        kind,
        title: format!("{verb} {}", str_or_empty(a, "path")),
        locations: location(ws, a, "path"),
        command: None,
    }
}

/// The tools in the original's order.
pub(super) fn table() -> ToolTable {
    ToolTable::new(vec![
        FnTool::subagent(
            WORDING,
            crate::harness::kimi_code::tools::agent_spec(),
            |a, _| {
                describe(
                    ToolKind::Think,
                    format!("Subagent: {}", str_or_empty(a, "description")),
                )
            },
            |a, c| Box::pin(agent(c, a)),
        ),
        tool(
            todo_spec(),
            |_, _| describe(ToolKind::Think, "Update todo list".into()),
            |a, _| Box::pin(async move { set_todo_list(&a) }),
        ),
        tool(
            shell_spec(),
            |a, _| {
                let command = str_or_empty(a, "command");
                CallDescription {
                    kind: ToolKind::Execute,
                    title: command.clone(),
                    locations: vec![],
                    command: Some(command),
                }
            },
            |a, c| Box::pin(shell(c, a)),
        ),
        tool(
            read_spec(),
            |a, ws| describe_file(ToolKind::Read, "Read", a, ws),
            |a, c| Box::pin(read_file(c, a)),
        ),
        tool(
            glob_spec(),
            |a, _| {
                describe(
                    ToolKind::Search,
                    format!("Glob `{}`", str_or_empty(a, "pattern")),
                )
            },
            |a, c| Box::pin(glob(c, a)),
        ),
        tool(
            grep_spec(),
            |a, _| {
                describe(
                    ToolKind::Search,
                    format!("Grep `{}`", str_or_empty(a, "pattern")),
                )
            },
            |a, c| Box::pin(grep(c, a)),
        ),
        tool(
            write_spec(),
            |a, ws| describe_file(ToolKind::Edit, "Write", a, ws),
            |a, c| Box::pin(write_file(c, a)),
        ),
        tool(
            replace_spec(),
            |a, ws| describe_file(ToolKind::Edit, "Edit", a, ws),
            |a, c| Box::pin(str_replace_file(c, a)),
        ),
        task_tools::task_list(WORDING),
        task_tools::task_output(task_tools::Flavor::Kimi, WORDING),
        task_tools::task_stop(task_tools::Flavor::Kimi, WORDING),
    ])
}

fn todo_spec() -> ToolSpec {
    spec(
        "SetTodoList",
        "Set the todo list for the current task: send the whole list each time. Use it for work \
         of several steps; mark one item in_progress when you start it and done when it is \
         finished. The user sees the list.",
        object(
            json!({"todos": {"type": "array", "description": "The updated todo list", "items": object(
                json!({
                    "title": {"type": "string", "minLength": 1, "description": "The title of the todo"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "done"], "description": "The status of the todo"}
                }),
                &["title", "status"],
            )}}),
            &["todos"],
        ),
    )
}

fn shell_spec() -> ToolSpec {
    spec(
        "Shell",
        "Run a bash command in the working directory; stdout and stderr come back together. \
         Each call starts a fresh shell (no state is kept between calls) without a terminal or \
         input, and is killed at its timeout. Chain dependent commands with `&&`; prefer the \
         file tools to cat, sed, find and grep. With run_in_background it runs on while you \
         work.",
        object(
            json!({
                "command": {"type": "string", "description": "The bash command to execute."},
                "timeout": {"type": "integer", "minimum": 1, "maximum": BACKGROUND_MAX_TIMEOUT, "default": SHELL_DEFAULT_TIMEOUT,
                            "description": "The timeout in seconds for the command to execute (at most 300 in the foreground). If the command takes longer than this, it will be killed."},
                "description": {"type": "string", "description": "What the command does, in a few words (required in the background)."},
                "run_in_background": {"type": "boolean", "default": false, "description": "Run it in the background (servers, watchers, long builds): you get a task ID at once, read its output with TaskOutput, stop it with TaskStop, and are told when it ends."}
            }),
            &["command"],
        ),
    )
}

fn read_spec() -> ToolSpec {
    spec(
        "ReadFile",
        "Read a text file. Lines come back numbered like `cat -n`: at most 1000 lines or 100 KiB \
         per call, lines over 2000 characters cut. Page through long files with line_offset and \
         n_lines. Read several files in one response when you need them.",
        object(
            json!({
                "path": {"type": "string", "description": "The absolute path to the file to read"},
                "line_offset": {"type": "integer", "minimum": 1, "default": 1, "description": "The line number to start reading from. By default read from the beginning of the file."},
                "n_lines": {"type": "integer", "minimum": 1, "default": READ_MAX_LINES, "description": "The number of lines to read. By default up to 1000 lines, the largest allowed."}
            }),
            &["path"],
        ),
    )
}

fn glob_spec() -> ToolSpec {
    spec(
        "Glob",
        "Find files whose paths match a glob pattern (`*.py`, `src/**/*.ts`), honouring \
         .gitignore; at most 1000 results, relative to the directory searched. A pattern may not \
         start with `**`: name a folder first.",
        object(
            json!({
                "pattern": {"type": "string", "description": "Glob pattern to match files."},
                "directory": {"type": "string", "description": "Absolute path to the directory to search in (defaults to working directory)."}
            }),
            &["pattern"],
        ),
    )
}

fn grep_spec() -> ToolSpec {
    spec(
        "Grep",
        "Search file contents with a regular expression (ripgrep syntax), honouring .gitignore. \
         Use it instead of grep or rg in Shell.",
        object(
            json!({
                "pattern": {"type": "string", "description": "The regular expression pattern to search for in file contents"},
                "path": {"type": "string", "default": ".", "description": "File or directory to search in. Defaults to the working directory."},
                "glob": {"type": "string", "description": "Glob pattern to filter files (e.g. `*.js`, `*.{ts,tsx}`)."},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count_matches"], "default": "files_with_matches",
                                "description": "`content`: matching lines; `files_with_matches`: file paths; `count_matches`: matches per file."},
                "-B": {"type": "integer", "description": "Lines to show before each match (content mode)."},
                "-A": {"type": "integer", "description": "Lines to show after each match (content mode)."},
                "-C": {"type": "integer", "description": "Lines to show before and after each match (content mode)."},
                "-n": {"type": "boolean", "default": false, "description": "Show line numbers (content mode)."},
                "-i": {"type": "boolean", "default": false, "description": "Case insensitive search."},
                "type": {"type": "string", "description": "File type to search: py, rust, js, ts, go, java, …"},
                "head_limit": {"type": "integer", "description": "Only the first N lines of output (all by default)."},
                "multiline": {"type": "boolean", "default": false, "description": "Let patterns span lines (`.` matches newlines)."}
            }),
            &["pattern"],
        ),
    )
}

fn write_spec() -> ToolSpec {
    spec(
        "WriteFile",
        "Write a file: replace its content, or append to it. The parent directory must exist. \
         For changes to part of an existing file use StrReplaceFile.",
        object(
            json!({
                "path": {"type": "string", "description": "The absolute path to the file to write"},
                "content": {"type": "string", "description": "The content to write to the file"},
                "mode": {"type": "string", "enum": ["overwrite", "append"], "default": "overwrite",
                         "description": "`overwrite` replaces the whole file, `append` adds to the end of an existing file."}
            }),
            &["path", "content"],
        ),
    )
}

fn replace_spec() -> ToolSpec {
    let edit = object(
        json!({
            "old": {"type": "string", "description": "The old string to replace. Can be multi-line."},
            "new": {"type": "string", "description": "The new string to replace with. Can be multi-line."},
            "replace_all": {"type": "boolean", "default": false, "description": "Whether to replace all occurrences."}
        }),
        &["old", "new"],
    );
    spec(
        "StrReplaceFile",
        "Replace exact strings in a file: one edit or a list of edits, applied in order. Without \
         replace_all only the first occurrence changes. Read the file first and copy the old \
         text exactly, indentation included.",
        object(
            json!({
                "path": {"type": "string", "description": "The absolute path to the file to edit."},
                "edit": {"anyOf": [edit, {"type": "array", "items": edit}],
                         "description": "The edit(s) to apply to the file: a single edit or a list of edits."}
            }),
            &["path", "edit"],
        ),
    )
}

/// The newer Kimi CLI's Agent: Kimi Code's, its answer in this harness's wording.
async fn agent(ctx: &ToolContext, args: Value) -> ToolResult {
    let o = crate::harness::kimi_code::tools::run_agent(ctx, args).await?;
    if o.is_error() {
        return Err(ToolError::message(o.model_output));
    }
    Ok(ok("", &o.model_output))
}

/// A background Shell: a task the model reads with TaskOutput and stops with TaskStop.
async fn background_shell(ctx: &ToolContext, args: &Value, command: &str) -> ToolResult {
    let Some(description) = str_arg(args, "description").filter(|d| !d.trim().is_empty()) else {
        return Err(ToolError::message(
            "`description` is required for a background command.",
        ));
    };
    let timeout = args
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(BACKGROUND_DEFAULT_TIMEOUT)
        .clamp(1, BACKGROUND_MAX_TIMEOUT);
    let task = ctx
        .start_background(
            "Shell",
            command,
            description,
            ctx.workspace.cwd(),
            Duration::from_secs(timeout),
        )
        .await?;
    let text = task_tools::started(task_tools::Flavor::Kimi, &task);
    Ok(ok("", &text))
}

fn set_todo_list(args: &Value) -> ToolResult {
    let Some(list) = args.get("todos").and_then(Value::as_array) else {
        return Err(ToolError::message(
            "`todos` must be a list of {title, status}.",
        ));
    };
    let dialect = plan::Dialect {
        text_field: "title",
        completed: "done",
    };
    let items = plan::parse_items(list, &dialect).map_err(|e| match e {
        plan::PlanError::EmptyText => ToolError::message("Every todo needs a title."),
        plan::PlanError::UnknownStatus(s) => ToolError::message(format!(
            "Unknown status `{s}`: use pending, in_progress or done."
        )),
    })?;
    let mut o = ok("Todo list updated", "Todo list updated");
    o.plan = Some(Plan {
        explanation: None,
        items,
    });
    Ok(o)
}

async fn shell(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(command) = str_arg(&args, "command").filter(|c| !c.trim().is_empty()) else {
        return Err(ToolError::message("Command cannot be empty."));
    };
    if args.get("run_in_background").and_then(Value::as_bool) == Some(true) {
        return background_shell(ctx, &args, command).await;
    }
    let timeout = args
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(SHELL_DEFAULT_TIMEOUT);
    if !(1..=SHELL_MAX_TIMEOUT).contains(&timeout) {
        return Err(ToolError::message(format!(
            "`timeout` must be between 1 and {SHELL_MAX_TIMEOUT} seconds."
        )));
    }
    let r = ctx
        .authorize_and_run(
            "Shell",
            ToolKind::Execute,
            command,
            ctx.workspace.cwd(),
            Duration::from_secs(timeout),
            "Failed to run the command",
        )
        .await?;
    let (output, cut) = capped(&r.output);
    let mut o = if r.timed_out {
        failed(
            &with_truncation(&format!("Command killed by timeout ({timeout}s)"), cut),
            &output,
        )
    } else if r.cancelled {
        failed(
            &with_truncation("Command was cancelled by the user.", cut),
            &output,
        )
    } else if r.exit_code != Some(0) {
        let code = r.exit_code.unwrap_or(-1);
        failed(
            &with_truncation(&format!("Command failed with exit code: {code}."), cut),
            &output,
        )
    } else {
        ok(
            &with_truncation("Command executed successfully.", cut),
            &output,
        )
    };
    o.user_output = r.output;
    o.exit_code = r.exit_code;
    if o.status != ToolStatus::Completed {
        o.status = ToolStatus::Failed;
    }
    Ok(o)
}

async fn read_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path").filter(|p| !p.is_empty()) else {
        return Err(ToolError::message("File path cannot be empty."));
    };
    let offset = args
        .get("line_offset")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1) as usize;
    let n = args
        .get("n_lines")
        .and_then(Value::as_u64)
        .unwrap_or(READ_MAX_LINES as u64)
        .max(1) as usize;
    let w = match crate::skills::read_builtin(raw) {
        Some(t) => window::from_text(t, offset as i64, n.min(READ_MAX_LINES)),
        None => {
            let path = ctx.workspace.resolve(raw)?;
            match tokio::fs::metadata(&path).await {
                Err(_) => return Err(ToolError::message(format!("`{raw}` does not exist."))),
                Ok(m) if !m.is_file() => {
                    return Err(ToolError::message(format!("`{raw}` is not a file.")));
                }
                Ok(_) => {}
            }
            ctx.workspace
                .read_lines(
                    &path,
                    offset as i64,
                    n.min(READ_MAX_LINES),
                    (READ_MAX_LINE_CHARS + 1) * 4,
                )
                .await
                .map_err(|e| ToolError::message(format!("Failed to read {raw}. Error: {e}")))?
        }
    };
    Ok(ToolOutcome::ok(read_result(&w, offset, n)))
}

/// ReadFile's text: `cat -n` lines within the byte cap and the status line.
fn read_result(w: &window::LineWindow, offset: usize, n: usize) -> String {
    let mut out = String::new();
    let mut bytes = 0;
    let mut cut_lines = Vec::new();
    let mut shown = 0;
    let mut max_bytes = false;
    for (num, line) in &w.lines {
        let clipped = files::clip_line(line, READ_MAX_LINE_CHARS);
        if clipped.len() != line.len() {
            cut_lines.push(num.to_string());
        }
        let _ = writeln!(out, "{num:6}\t{clipped}");
        bytes += clipped.len() + 1;
        shown += 1;
        if bytes >= READ_MAX_BYTES && shown < w.lines.len() {
            max_bytes = true;
            break;
        }
    }
    let mut message = if shown > 0 {
        format!("{shown} lines read from file starting from line {offset}.")
    } else {
        "No lines read from file.".to_string()
    };
    if max_bytes {
        let _ = write!(message, " Max {READ_MAX_BYTES} bytes reached.");
    } else if shown == READ_MAX_LINES && n > READ_MAX_LINES && !w.reached_end {
        let _ = write!(message, " Max {READ_MAX_LINES} lines reached.");
    } else if shown < n {
        message.push_str(" End of file reached.");
    }
    if !cut_lines.is_empty() {
        let _ = write!(message, " Lines [{}] were truncated.", cut_lines.join(", "));
    }
    render(&message, out.trim_end_matches('\n'))
}

async fn glob(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(pattern) = str_arg(&args, "pattern").filter(|p| !p.is_empty()) else {
        return Err(ToolError::message("`pattern` is required."));
    };
    let ws = &ctx.workspace;
    if pattern.starts_with("**") {
        let cwd = ws.cwd().to_path_buf();
        let (entries, _) = tokio::task::spawn_blocking(move || files::list_dir(&cwd, 1, 500))
            .await
            .unwrap_or_default();
        return Ok(failed(
            &format!(
                "Pattern `{pattern}` starts with '**' which is not allowed. This would recursively search all directories and may include large directories like `node_modules`. Use more specific patterns instead. For your convenience, a list of all files and directories in the top level of the working directory is provided below."
            ),
            &entries.join("\n"),
        ));
    }
    let dir = match str_arg(&args, "directory") {
        Some(d) => ws.resolve(d)?,
        None => ws.cwd().to_path_buf(),
    };
    if !tokio::fs::metadata(&dir).await.is_ok_and(|m| m.is_dir()) {
        let shown = str_arg(&args, "directory").unwrap_or(".");
        return Err(ToolError::message(format!("`{shown}` is not a directory.")));
    }
    let (mut paths, _) = search_tools::glob(ctx, dir.clone(), pattern, false, 100_000).await?;
    paths.sort();
    let total = paths.len();
    let mut message = if total > 0 {
        format!("Found {total} matches for pattern `{pattern}`.")
    } else {
        format!("No matches found for pattern `{pattern}`.")
    };
    if total > GLOB_MAX_MATCHES {
        paths.truncate(GLOB_MAX_MATCHES);
        let _ = write!(
            message,
            " Only the first {GLOB_MAX_MATCHES} matches are returned. You may want to use a more specific pattern."
        );
    }
    let list: Vec<String> = paths
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap_or(p).display().to_string())
        .collect();
    Ok(ok(&message, &list.join("\n")))
}

async fn grep(ctx: &ToolContext, args: Value) -> ToolResult {
    let call = search_tools::grep_call(ctx, &args, 0)
        .map_err(|e| ToolError::message(format!("Failed to grep. Error: {e}")))?;
    let mode = str_arg(&args, "output_mode").unwrap_or("files_with_matches");
    let hits = search_tools::search(&call)
        .await
        .map_err(|e| ToolError::message(format!("Failed to grep. Error: {e}")))?;
    let show = |p: &std::path::Path| ctx.workspace.display_path(p);
    let numbers = args.get("-n").and_then(Value::as_bool).unwrap_or(false);
    let lines: Vec<String> = match mode {
        "content" => search_tools::content_lines(&hits, numbers, show),
        "count_matches" => hits
            .iter()
            .map(|f| format!("{}:{}", show(&f.path), f.matches))
            .collect(),
        "files_with_matches" => hits.iter().map(|f| show(&f.path)).collect(),
        other => {
            return Err(ToolError::message(format!(
                "Failed to grep. Error: unknown output_mode `{other}` (content, files_with_matches or count_matches)"
            )));
        }
    };
    if lines.is_empty() {
        return Ok(ok("No matches found.", ""));
    }
    let mut message = String::new();
    let (page, total) = paged(lines, 0, call.head_limit);
    let mut out = page.join("\n");
    if page.len() < total {
        message = format!("Results truncated to first {} lines.", call.head_limit);
        let _ = write!(
            out,
            "\n... (results truncated to {} lines)",
            call.head_limit
        );
    }
    let (out, cut) = capped(&out);
    Ok(ok(&with_truncation(&message, cut), &out))
}

async fn write_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path").filter(|p| !p.is_empty()) else {
        return Err(ToolError::message("File path cannot be empty."));
    };
    let Some(content) = str_arg(&args, "content") else {
        return Err(ToolError::message("`content` is required."));
    };
    let append = match str_arg(&args, "mode").unwrap_or("overwrite") {
        "overwrite" => false,
        "append" => true,
        other => {
            return Err(ToolError::message(format!(
                "Unknown mode `{other}`: use overwrite or append."
            )));
        }
    };
    let path = ctx.workspace.resolve(raw)?;
    let parent_ok = match path.parent() {
        Some(p) => tokio::fs::metadata(p).await.is_ok_and(|m| m.is_dir()),
        None => false,
    };
    if !parent_ok {
        return Err(ToolError::message(format!(
            "`{raw}` parent directory does not exist."
        )));
    }
    let old = ctx
        .workspace
        .read_optional(&path)
        .await
        .map_err(|e| ToolError::message(format!("Failed to write to {raw}. Error: {e}")))?;
    let new = if append {
        format!("{}{content}", old.as_deref().unwrap_or(""))
    } else {
        content.to_string()
    };
    let size = new.len();
    let change = patch_runner::write_one(ctx, "WriteFile", &path, old, new).await?;
    let action = if append { "appended to" } else { "overwritten" };
    let mut o = ok(
        &format!("File successfully {action}. Current size: {size} bytes."),
        "",
    );
    o.changes = vec![change];
    Ok(o)
}

async fn str_replace_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path").filter(|p| !p.is_empty()) else {
        return Err(ToolError::message("File path cannot be empty."));
    };
    let edits: Vec<&Value> = match args.get("edit") {
        Some(Value::Array(list)) => list.iter().collect(),
        Some(one @ Value::Object(_)) => vec![one],
        _ => {
            return Err(ToolError::message(
                "`edit` must be an edit {old, new, replace_all} or a list of them.",
            ));
        }
    };
    let path = ctx.workspace.resolve(raw)?;
    if !tokio::fs::metadata(&path).await.is_ok_and(|m| m.is_file()) {
        return Err(ToolError::message(format!("`{raw}` does not exist.")));
    }
    let original = ctx
        .workspace
        .read_text(&path)
        .await
        .map_err(|e| ToolError::message(format!("Failed to edit. Error: {e}")))?;
    let mut text = original.clone();
    let mut replacements = 0;
    for e in &edits {
        let (Some(old), Some(new)) = (str_arg(e, "old"), str_arg(e, "new")) else {
            return Err(ToolError::message("Every edit needs `old` and `new`."));
        };
        if old.is_empty() || !original.contains(old) {
            continue;
        }
        if e.get("replace_all")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            replacements += original.matches(old).count();
            text = text.replace(old, new);
        } else {
            replacements += 1;
            text = text.replacen(old, new, 1);
        }
    }
    if text == original {
        return Err(ToolError::message(
            "No replacements were made. The old string was not found in the file.",
        ));
    }
    let change =
        patch_runner::write_one(ctx, "StrReplaceFile", &path, Some(original), text).await?;
    let mut o = ok(
        &format!(
            "File successfully edited. Applied {} edit(s) with {replacements} total replacement(s).",
            edits.len()
        ),
        "",
    );
    o.changes = vec![change];
    Ok(o)
}
