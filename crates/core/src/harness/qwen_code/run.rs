//! Qwen Code's tools on our machinery, with the original's result texts: `Showing lines …`
//! for partial reads, `The file: … has been updated.` with the edited lines, `Found N
//! match(es) …` grouped by file, the shell's `Command:`/`Output:`/`Exit Code:` block, and the
//! todo list echoed in a `<system-reminder>`.

use interpreter_protocol::{Plan, ToolKind};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::specs::{SHELL_DEFAULT_TIMEOUT_MS, SHELL_MAX_TIMEOUT_MS};
use crate::harness::session_tools::{describe, todo_items};
use crate::tools::edit::{self, EditMiss};
use crate::tools::search_tools;
use crate::tools::table::{ToolError, ToolResult, location, str_arg, str_or_empty};
use crate::tools::truncate::truncate_middle;
use crate::tools::{CallDescription, SubagentTask, ToolContext, ToolOutcome, files, patch_runner};
use crate::workspace::{Workspace, window};

/// Lines a read shows at most (Qwen Code's `truncateToolOutputLines`).
/// A background command is stopped after a day if nothing stops it sooner.
const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(86_400);
const READ_MAX_LINES: usize = 1_000;
const READ_MAX_LINE_CHARS: usize = 2_000;
/// glob lists at most this many files; grep_search shows at most this many characters.
const GLOB_MAX_FILES: usize = 100;
const GREP_MAX_CHARS: usize = 20_000;
/// Lines of context around an edit in its result.
const SNIPPET_CONTEXT: usize = 4;

pub(super) fn describe_path(a: &Value, ws: &Workspace) -> CallDescription {
    CallDescription {
        kind: ToolKind::Read,
        title: format!("List {}", str_or_empty(a, "path")),
        locations: location(ws, a, "path"),
        command: None,
    }
}

pub(super) fn describe_todos(_a: &Value, _ws: &Workspace) -> CallDescription {
    describe(ToolKind::Think, "Update todos".into())
}

/// The original takes absolute paths only.
fn absolute(ctx: &ToolContext, raw: &str, what: &str) -> Result<PathBuf, ToolError> {
    if raw.trim().is_empty() {
        return Err(ToolError::message(format!(
            "The '{what}' parameter must be non-empty."
        )));
    }
    if !Path::new(raw).is_absolute() {
        return Err(ToolError::message(format!(
            "File path must be absolute, but was relative: {raw}. You must provide an absolute path."
        )));
    }
    Ok(ctx.workspace.resolve(raw)?)
}

pub(super) async fn agent(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(prompt) = str_arg(&args, "prompt").filter(|p| !p.trim().is_empty()) else {
        return Err(ToolError::message(
            "Parameter \"prompt\" must be a non-empty string.",
        ));
    };
    let read_only = match str_arg(&args, "subagent_type").unwrap_or("general-purpose") {
        "general-purpose" => false,
        "Explore" | "explore" => true,
        _ if ctx.custom_agent_type() => false,
        other => {
            return Err(ToolError::message(format!(
                "Subagent \"{other}\" not found"
            )));
        }
    };
    Ok(ctx
        .run_subagent(SubagentTask {
            prompt: prompt.to_string(),
            read_only,
            resume: None,
        })
        .await)
}

pub(super) async fn list_directory(ctx: &ToolContext, args: Value) -> ToolResult {
    let raw = str_arg(&args, "path").unwrap_or("");
    if !Path::new(raw).is_absolute() {
        return Err(ToolError::message(format!("Path must be absolute: {raw}")));
    }
    let dir = ctx.workspace.resolve(raw)?;
    match tokio::fs::metadata(&dir).await {
        Err(e) => return Err(ToolError::message(format!("Error listing directory: {e}"))),
        Ok(m) if !m.is_dir() => {
            return Err(ToolError::message(format!(
                "Error: Path is not a directory: {raw}"
            )));
        }
        Ok(_) => {}
    }
    let ignore: Vec<globset::GlobMatcher> = args
        .get("ignore")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|g| globset::Glob::new(g).ok().map(|g| g.compile_matcher()))
        .collect();
    let listing = tokio::task::spawn_blocking(move || files::list_dir(&dir, 1, 10_000).0)
        .await
        .unwrap_or_default();
    let mut entries: Vec<(bool, String)> = listing
        .into_iter()
        .map(|e| match e.strip_suffix('/') {
            Some(d) => (true, d.to_string()),
            None => (false, e),
        })
        .filter(|(_, name)| !ignore.iter().any(|m| m.is_match(name)))
        .collect();
    if entries.is_empty() {
        return Ok(ToolOutcome::ok(format!("Directory {raw} is empty.")));
    }
    entries.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = entries.len();
    let shown: Vec<String> = entries
        .iter()
        .take(READ_MAX_LINES)
        .map(|(dir, name)| format!("{}{name}", if *dir { "[DIR] " } else { "" }))
        .collect();
    let mut out = format!(
        "Listed {total} item(s) in {raw}:\n---\n{}",
        shown.join("\n")
    );
    if total > READ_MAX_LINES {
        let _ = write!(
            out,
            "\n---\n[{} items truncated] ...",
            total - READ_MAX_LINES
        );
    }
    Ok(ToolOutcome::ok(out))
}

pub(super) async fn read_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let raw = str_arg(&args, "file_path").unwrap_or("");
    let offset = args.get("offset").and_then(Value::as_u64);
    let limit = args.get("limit").and_then(Value::as_u64);
    if limit == Some(0) {
        return Err(ToolError::message("Limit must be a positive integer"));
    }
    let start = offset.unwrap_or(0) as usize;
    let count = limit.map_or(READ_MAX_LINES, |l| l as usize);
    let text = match crate::skills::read_builtin(raw) {
        Some(t) => Some(t.to_string()),
        None => {
            let path = absolute(ctx, raw, "file_path")?;
            let meta = tokio::fs::metadata(&path)
                .await
                .map_err(|_| ToolError::message(format!("File not found: {raw}")))?;
            if meta.is_dir() {
                return Err(ToolError::message(format!(
                    "Path is a directory, not a file: {raw}"
                )));
            }
            if meta.len() > crate::workspace::MAX_READ_BYTES {
                let w = ctx
                    .workspace
                    .read_lines(
                        &path,
                        start as i64 + 1,
                        count,
                        (READ_MAX_LINE_CHARS + 1) * 4,
                    )
                    .await
                    .map_err(|e| ToolError::message(format!("Error reading file {raw}: {e}")))?;
                return Ok(ToolOutcome::ok(shown_lines(&w, start)));
            }
            Some(
                ctx.workspace
                    .read_text(&path)
                    .await
                    .map_err(|e| ToolError::message(format!("Error reading file {raw}: {e}")))?,
            )
        }
    };
    let text = text.unwrap_or_default();
    // Lines as the original splits them: a final newline leaves an empty last line.
    let lines: Vec<&str> = text.split('\n').collect();
    let end = start.saturating_add(count).min(lines.len());
    let body = lines
        .get(start..end)
        .unwrap_or_default()
        .iter()
        .map(|l| clipped(l))
        .collect::<Vec<_>>()
        .join("\n");
    if start == 0 && end == lines.len() {
        return Ok(ToolOutcome::ok(body));
    }
    Ok(ToolOutcome::ok(format!(
        "Showing lines {}-{end} of {} total lines.\n\n---\n\n{body}",
        (start + 1).min(end.max(1)),
        lines.len()
    )))
}

fn clipped(line: &str) -> String {
    let c = files::clip_line(line, READ_MAX_LINE_CHARS);
    if c.len() == line.len() {
        line.to_string()
    } else {
        format!("{c}... [truncated]")
    }
}

/// A window of a file too big to hold, in the partial-read form.
fn shown_lines(w: &window::LineWindow, start: usize) -> String {
    let body: Vec<String> = w.lines.iter().map(|(_, l)| clipped(l)).collect();
    let (first, last) = match (w.lines.first(), w.lines.last()) {
        (Some(f), Some(l)) => (f.0, l.0),
        _ => (start + 1, start),
    };
    format!(
        "Showing lines {first}-{last} of {} total lines.\n\n---\n\n{}",
        w.total_lines,
        body.join("\n")
    )
}

pub(super) async fn grep_search(ctx: &ToolContext, args: Value) -> ToolResult {
    let mut args = args;
    // The older search_file_content filtered files with `include`.
    if args.get("glob").is_none()
        && let Some(include) = args.get("include").cloned()
    {
        args["glob"] = include;
    }
    let pattern = str_arg(&args, "pattern").unwrap_or("").to_string();
    let call = search_tools::grep_call(ctx, &args, 0)?;
    let hits = search_tools::search(&call)
        .await
        .map_err(|e| ToolError::message(format!("Error during grep search operation: {e}")))?;
    let location = match str_arg(&args, "path") {
        Some(p) => format!("in path \"{p}\""),
        None => "in the workspace directory".to_string(),
    };
    let filter = str_arg(&args, "glob")
        .map(|g| format!(" (filter: \"{g}\")"))
        .unwrap_or_default();
    let total: usize = hits
        .iter()
        .map(|f| f.lines.iter().filter(|l| l.is_match).count())
        .sum();
    if total == 0 {
        return Ok(ToolOutcome::ok(format!(
            "No matches found for pattern \"{pattern}\" {location}{filter}."
        )));
    }
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(READ_MAX_LINES, |l| (l as usize).min(READ_MAX_LINES));
    let term = if total == 1 { "match" } else { "matches" };
    let mut out = String::new();
    let mut shown = 0;
    'files: for f in &hits {
        let _ = writeln!(
            out,
            "File: {}",
            f.path.strip_prefix(&call.root).unwrap_or(&f.path).display()
        );
        for l in f.lines.iter().filter(|l| l.is_match) {
            if shown == limit || out.len() > GREP_MAX_CHARS {
                break 'files;
            }
            let _ = writeln!(out, "L{}: {}", l.number, l.text.trim());
            shown += 1;
        }
        out.push_str("---\n");
    }
    let mut text =
        format!("Found {total} {term} for pattern \"{pattern}\" {location}{filter}:\n---\n{out}");
    if shown < total {
        let omitted = total - shown;
        let _ = write!(
            text,
            " [{omitted} {} truncated] ...",
            if omitted == 1 { "line" } else { "lines" }
        );
    }
    Ok(ToolOutcome::ok(text.trim().to_string()))
}

pub(super) async fn glob(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(pattern) = str_arg(&args, "pattern").filter(|p| !p.trim().is_empty()) else {
        return Err(ToolError::message(
            "The 'pattern' parameter cannot be empty.",
        ));
    };
    let (root, location) = match str_arg(&args, "path") {
        Some(p) => {
            let dir = ctx.workspace.resolve(p)?;
            let shown = format!("within {}", dir.display());
            (dir, shown)
        }
        None => (
            ctx.workspace.cwd().to_path_buf(),
            "in the workspace directory".to_string(),
        ),
    };
    let (paths, _) = search_tools::glob(ctx, root, pattern, false, 100_000).await?;
    if paths.is_empty() {
        return Ok(ToolOutcome::ok(format!(
            "No files found matching pattern \"{pattern}\" {location}"
        )));
    }
    let sorted = by_recency(paths).await;
    let total = sorted.len();
    let shown: Vec<String> = sorted
        .iter()
        .take(GLOB_MAX_FILES)
        .map(|p| p.display().to_string())
        .collect();
    let mut out = format!(
        "Found {total} file(s) matching \"{pattern}\" {location}, sorted by modification time (newest first):\n---\n{}",
        shown.join("\n")
    );
    if total > GLOB_MAX_FILES {
        let n = total - GLOB_MAX_FILES;
        let _ = write!(
            out,
            "\n---\n[{n} {} truncated] ...",
            if n == 1 { "file" } else { "files" }
        );
    }
    Ok(ToolOutcome::ok(out))
}

/// Files changed in the last day first (newest first), then the rest by path, as Qwen Code
/// sorts them.
async fn by_recency(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    tokio::task::spawn_blocking(move || {
        let day = Duration::from_secs(24 * 3600);
        let now = SystemTime::now();
        let mut with: Vec<(Option<SystemTime>, PathBuf)> = paths
            .into_iter()
            .map(|p| {
                let m = std::fs::metadata(&p).and_then(|m| m.modified()).ok();
                let recent = m.filter(|t| now.duration_since(*t).unwrap_or_default() < day);
                (recent, p)
            })
            .collect();
        with.sort_by(|a, b| match (a.0, b.0) {
            (Some(x), Some(y)) => y.cmp(&x).then_with(|| a.1.cmp(&b.1)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.1.cmp(&b.1),
        });
        with.into_iter().map(|(_, p)| p).collect()
    })
    .await
    .unwrap_or_default()
}

/// `Showing lines …` around the change, as the original shows an edit.
fn edit_snippet(old: Option<&str>, new: &str) -> Option<String> {
    let new_lines: Vec<&str> = new.split('\n').collect();
    let total = new_lines.len();
    let (start, end) = match old {
        None => (1, total),
        Some(old) if old == new || new.is_empty() => return None,
        Some(old) => {
            let old_lines: Vec<&str> = old.split('\n').collect();
            let first = old_lines
                .iter()
                .zip(&new_lines)
                .take_while(|(a, b)| a == b)
                .count();
            let same_tail = old_lines[first..]
                .iter()
                .rev()
                .zip(new_lines[first..].iter().rev())
                .take_while(|(a, b)| a == b)
                .count();
            let change_end = total - same_tail;
            if change_end.saturating_sub(first) > READ_MAX_LINES {
                return None;
            }
            (
                (first + 1).saturating_sub(SNIPPET_CONTEXT).max(1),
                (change_end + SNIPPET_CONTEXT).min(total),
            )
        }
    };
    Some(format!(
        "Showing lines {start}-{end} of {total} from the edited file:\n\n---\n\n{}",
        new_lines[start - 1..end].join("\n")
    ))
}

pub(super) async fn edit(ctx: &ToolContext, args: Value) -> ToolResult {
    let raw = str_arg(&args, "file_path").unwrap_or("");
    let path = absolute(ctx, raw, "file_path")?;
    let (Some(old), Some(new)) = (str_arg(&args, "old_string"), str_arg(&args, "new_string"))
    else {
        return Err(ToolError::message(
            "Parameters old_string and new_string are required.",
        ));
    };
    let current = ctx.workspace.read_optional(&path).await.map_err(|_| {
        ToolError::message(format!("Failed to read content of existing file: {raw}"))
    })?;
    let (updated, message) = match (&current, old.is_empty()) {
        (None, true) => (
            new.to_string(),
            format!("Created new file: {raw} with provided content."),
        ),
        (None, false) => return Err(ToolError::message(format!("File not found: {raw}"))),
        (Some(_), true) => {
            return Err(ToolError::message(format!(
                "File already exists, cannot create: {raw}"
            )));
        }
        (Some(_), false) if old == new => {
            return Err(ToolError::message(format!(
                "No changes to apply. The old_string and new_string are identical in file: {raw}"
            )));
        }
        (Some(text), false) => {
            let all = args
                .get("replace_all")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            match edit::replace_exact(text, old, new, all) {
                Ok((t, _)) => (t, format!("The file: {raw} has been updated.")),
                Err(EditMiss::NotFound) => {
                    return Err(ToolError::message(format!(
                        "Failed to edit, 0 occurrences found for old_string in {raw}. No edits made. The exact text in old_string was not found. Ensure you're not escaping content incorrectly and check whitespace, indentation, and context. Use read_file tool to verify."
                    )));
                }
                Err(EditMiss::Ambiguous(n)) => {
                    return Err(ToolError::message(format!(
                        "Failed to edit. Found {n} occurrences for old_string in {raw} but replace_all was not enabled."
                    )));
                }
            }
        }
    };
    let snippet = edit_snippet(current.as_deref(), &updated);
    let change = patch_runner::write_one(ctx, "edit", &path, current, updated).await?;
    let text = match snippet {
        Some(s) => format!("{message} {s}"),
        None => message,
    };
    let mut o = ToolOutcome::ok(text);
    o.changes = vec![change];
    Ok(o)
}

pub(super) async fn write_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let raw = str_arg(&args, "file_path").unwrap_or("");
    let path = absolute(ctx, raw, "file_path")?;
    let Some(content) = str_arg(&args, "content") else {
        return Err(ToolError::message("The 'content' parameter is required."));
    };
    let old = ctx
        .workspace
        .read_optional(&path)
        .await
        .map_err(|e| ToolError::message(format!("Error checking existing file: {e}")))?;
    let text = if old.is_some() {
        format!("Successfully overwrote file: {raw}.")
    } else {
        format!("Successfully created and wrote to new file: {raw}.")
    };
    let change =
        patch_runner::write_one(ctx, "write_file", &path, old, content.to_string()).await?;
    let mut o = ToolOutcome::ok(text);
    o.changes = vec![change];
    Ok(o)
}

pub(super) async fn shell(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(command) = str_arg(&args, "command").filter(|c| !c.trim().is_empty()) else {
        return Err(ToolError::message("Command cannot be empty."));
    };
    let timeout = args
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(SHELL_DEFAULT_TIMEOUT_MS);
    if timeout == 0 || timeout > SHELL_MAX_TIMEOUT_MS {
        return Err(ToolError::message(format!(
            "Timeout must be between 1 and {SHELL_MAX_TIMEOUT_MS} ms."
        )));
    }
    let dir = ctx.workspace.resolve_dir(str_arg(&args, "directory"))?;
    if args.get("is_background").and_then(Value::as_bool) == Some(true) {
        return background(ctx, &args, command, &dir).await;
    }
    let r = ctx
        .authorize_and_run(
            "run_shell_command",
            ToolKind::Execute,
            command,
            &dir,
            Duration::from_millis(timeout),
            "Command failed",
        )
        .await?;
    let output = truncate_middle(r.output.trim_end(), ctx.output_token_limit);
    let text = if r.timed_out {
        let head = format!("Command timed out after {timeout}ms before it could complete.");
        if output.trim().is_empty() {
            format!("{head} There was no output before it timed out.")
        } else {
            format!("{head} Below is the output before it timed out:\n{output}")
        }
    } else if r.cancelled {
        "Command was cancelled by user before it could complete.".to_string()
    } else {
        let code = r.exit_code.map_or("(none)".to_string(), |c| c.to_string());
        format!(
            "Command: {command}\nDirectory: {}\nOutput: {}\nError: (none)\nExit Code: {code}\nSignal: (none)",
            str_arg(&args, "directory").unwrap_or("(root)"),
            if output.is_empty() {
                "(empty)"
            } else {
                &output
            }
        )
    };
    Ok(ToolOutcome::from_exec(r, text))
}

/// A background command runs until it ends, is stopped, or the session ends; the result is
/// Qwen Code's shell result with the task and its output file in place of the output.
async fn background(
    ctx: &ToolContext,
    args: &Value,
    command: &str,
    dir: &std::path::Path,
) -> ToolResult {
    let description = str_arg(args, "description").unwrap_or_default();
    let task = ctx
        .start_background(
            "run_shell_command",
            command,
            description,
            dir,
            BACKGROUND_TIMEOUT,
        )
        .await?;
    Ok(ToolOutcome::ok(format!(
        "Command: {command}\nDirectory: {}\nOutput: Started in the background as task {}; its output goes to {}. You will be told when it ends.\nError: (none)\nExit Code: (none)\nSignal: (none)",
        str_arg(args, "directory").unwrap_or("(root)"),
        task.id,
        task.output_path.display()
    )))
}

pub(super) fn todo_write(args: &Value) -> ToolResult {
    let items = todo_items(args, "content")?;
    let todos: Vec<Value> = args["todos"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|t| json!({"content": t["content"], "status": t["status"], "id": t["id"]}))
                .collect()
        })
        .unwrap_or_default();
    let text = if todos.is_empty() {
        "Todo list has been cleared.\n\n<system-reminder>\nYour todo list is now empty. DO NOT mention this explicitly to the user. You have no pending tasks in your todo list.\n</system-reminder>".to_string()
    } else {
        format!(
            "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable\n\n<system-reminder>\nYour todo list has changed. DO NOT mention this explicitly to the user. Here are the latest contents of your todo list:\n\n{}. Continue on with the tasks at hand if applicable.\n</system-reminder>",
            Value::Array(todos)
        )
    };
    let mut o = ToolOutcome::ok(text);
    o.plan = Some(Plan {
        explanation: None,
        items,
    });
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_snippets_show_four_lines_around_the_change() {
        let old = (1..=20)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let new = old.replace("\n10\n", "\nten\n");
        let s = edit_snippet(Some(&old), &new).unwrap();
        assert!(
            s.starts_with("Showing lines 6-14 of 20 from the edited file:\n\n---\n\n6\n"),
            "{s}"
        );
        assert!(s.ends_with("\n14"));
        assert_eq!(edit_snippet(Some("a"), "a"), None);
        assert_eq!(
            edit_snippet(None, "x\ny").unwrap(),
            "Showing lines 1-2 of 2 from the edited file:\n\n---\n\nx\ny"
        );
    }
}
