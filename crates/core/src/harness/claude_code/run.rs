//! Bash, Read, Write, Edit, Glob and Grep on our machinery, with the result texts of the
//! three Claude-style surfaces (`Flavor`): Claude Code, its bare profile, and Z Code.

use interpreter_protocol::ToolKind;
use serde_json::Value;
use std::fmt::Write as _;
use std::time::Duration;

use super::Flavor;
use super::specs::{
    BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, GLOB_LIMIT, GREP_HEAD_LIMIT, READ_MAX_LINE_CHARS,
    READ_MAX_LINES,
};
use crate::harness::task_tools;
use crate::tools::edit::{self, EditMiss};
use crate::tools::search_tools::{self, paged};
use crate::tools::table::{ToolError, ToolResult, str_arg};
use crate::tools::truncate::truncate_middle;
use crate::tools::{ToolContext, ToolOutcome, files, patch_runner};
use crate::workspace::window;

/// The longest a background command runs when no timeout is given.
const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);
/// Z Code refuses a windowed Read above this many estimated tokens.
const ZCODE_READ_MAX_TOKENS: usize = 25_000;
/// Z Code lists at most this many Glob results.
const ZCODE_GLOB_LIMIT: usize = 100;
/// Bare and Z Code success text after an edit.
const FILE_STATE_CURRENT: &str =
    "(file state is current in your context — no need to Read it back)";
const NOT_READ_YET: &str = "File has not been read yet. Read it first before writing to it.";

/// The path argument: Claude Code's `file_path`, or the `path` other surfaces use.
fn path_arg(args: &Value) -> Option<&str> {
    str_arg(args, "file_path").or_else(|| str_arg(args, "path"))
}

fn number(args: &Value, k: &str) -> Option<u64> {
    let v = args.get(k)?;
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
}

fn missing(tool: &str, param: &str) -> ToolError {
    ToolError::message(format!(
        "InputValidationError: {tool} failed due to the following issue:\nThe required parameter `{param}` is missing"
    ))
}

/// A failed call whose text is final (no wording added).
fn failed(text: impl Into<String>) -> ToolError {
    ToolError::from(ToolOutcome::error(text))
}

pub(super) async fn bash(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(command) = str_arg(&args, "command").filter(|c| !c.trim().is_empty()) else {
        return Err(missing("Bash", "command"));
    };
    if args.get("run_in_background").and_then(Value::as_bool) == Some(true) {
        // A background command runs until it ends, is stopped, or its session ends.
        let timeout = number(&args, "timeout").map_or(BACKGROUND_TIMEOUT, |ms| {
            Duration::from_millis(ms.max(1_000))
        });
        let description = str_arg(&args, "description").unwrap_or_default();
        let cwd = ctx.workspace.cwd();
        let task = ctx
            .start_background("Bash", command, description, cwd, timeout)
            .await?;
        return Ok(ToolOutcome::ok(task_tools::started(
            task_tools::Flavor::Claude,
            &task,
        )));
    }
    let timeout_ms = number(&args, "timeout")
        .unwrap_or(BASH_DEFAULT_TIMEOUT_MS)
        .clamp(1_000, BASH_MAX_TIMEOUT_MS);
    let r = ctx
        .authorize_and_run(
            "Bash",
            ToolKind::Execute,
            command,
            ctx.workspace.cwd(),
            Duration::from_millis(timeout_ms),
            "Bash failed",
        )
        .await?;
    let output = truncate_middle(r.output.trim(), ctx.output_token_limit);
    let ok = r.succeeded();
    let text = if r.cancelled {
        "[Request interrupted by user for tool use]".to_string()
    } else if r.timed_out {
        format!("Command timed out after {}s\n{output}", timeout_ms / 1000)
            .trim_end()
            .to_string()
    } else if !ok {
        let code = r.exit_code.unwrap_or(-1);
        format!("Exit code {code}\n{output}").trim_end().to_string()
    } else if output.is_empty() {
        "(Bash completed with no output)".to_string()
    } else {
        output
    };
    Ok(ToolOutcome::from_exec(r, text))
}

pub(super) async fn read(ctx: &ToolContext, args: Value, flavor: Flavor) -> ToolResult {
    let Some(raw) = path_arg(&args) else {
        return Err(missing("Read", "file_path"));
    };
    if crate::tools::pdf::is_pdf_path(std::path::Path::new(raw)) {
        let pages = args.get("pages").and_then(Value::as_str);
        return crate::harness::media_tools::pdf_outcome(
            ctx,
            raw,
            pages,
            10,
            crate::harness::media_tools::PDF_FIT,
        )
        .await;
    }
    if crate::tools::media::is_image_path(std::path::Path::new(raw)) {
        return crate::harness::media_tools::image_outcome(
            ctx,
            raw,
            crate::tools::media::WIDE_FIT,
            None,
        )
        .await;
    }
    let windowed = args.get("offset").is_some() || args.get("limit").is_some();
    let offset = number(&args, "offset").unwrap_or(1).max(1) as usize;
    let limit = match (flavor, number(&args, "limit")) {
        (Flavor::ZCode, Some(l)) => l.max(1) as usize,
        (Flavor::ZCode, None) => usize::MAX,
        (_, l) => l
            .unwrap_or(READ_MAX_LINES as u64)
            .clamp(1, READ_MAX_LINES as u64) as usize,
    };
    let w = match crate::skills::read_builtin(raw) {
        Some(t) => window::from_text(t, offset as i64, limit),
        None => match read_window(ctx, raw, offset, limit, flavor, windowed).await? {
            Ok(w) => w,
            // Z Code's answer to an unchanged file read again.
            Err(wasted) => return Ok(ToolOutcome::ok(wasted)),
        },
    };
    let mut body = String::new();
    for (n, line) in &w.lines {
        if !body.is_empty() {
            body.push('\n');
        }
        let _ = write!(body, "{n}\t{}", files::clip_line(line, READ_MAX_LINE_CHARS));
    }
    if flavor == Flavor::ZCode && windowed && approx_zcode_tokens(&body) > ZCODE_READ_MAX_TOKENS {
        return Err(failed(format!(
            "File content ({} tokens) exceeds maximum allowed tokens ({ZCODE_READ_MAX_TOKENS}). Use offset and limit parameters to read specific portions of the file.",
            approx_zcode_tokens(&body)
        )));
    }
    if flavor != Flavor::Full {
        return Ok(ToolOutcome::ok(truncate_middle(
            &body,
            ctx.output_token_limit,
        )));
    }
    let label = if w.lines.len() == 1 { "line" } else { "lines" };
    let end = if w.reached_end {
        " End of file reached."
    } else {
        ""
    };
    let _ = write!(
        body,
        "\n<system>{} {label} read from file starting from line {offset}. Total lines in file: {}.{end}</system>",
        w.lines.len(),
        w.total_lines
    );
    Ok(ToolOutcome::ok(body))
}

/// Z Code's estimate: characters / 3, CJK characters twice.
fn approx_zcode_tokens(s: &str) -> usize {
    let cjk = s
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count();
    (s.chars().count() + cjk).div_ceil(3)
}

/// The lines to show, or (Z Code) the text that says an unchanged file was read again.
async fn read_window(
    ctx: &ToolContext,
    raw: &str,
    offset: usize,
    limit: usize,
    flavor: Flavor,
    windowed: bool,
) -> Result<Result<window::LineWindow, String>, ToolError> {
    let ws = &ctx.workspace;
    let path = ws
        .resolve(raw)
        .map_err(|e| ToolError::message(format!("Read failed: {e}")))?;
    let not_found = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    if flavor != Flavor::ZCode {
        return ws
            .read_lines(&path, offset as i64, limit, (READ_MAX_LINE_CHARS + 1) * 4)
            .await
            .map(Ok)
            .map_err(|e| ToolError::message(format!("Read failed: {e}")));
    }
    let before = ws.seen_text(&path);
    let text = ws.read_text(&path).await.map_err(|e| {
        if not_found(&e) {
            failed(format!(
                "File does not exist. Note: your current working directory is {}.",
                ws.cwd().display()
            ))
        } else {
            ToolError::message(format!("Read failed: {e}"))
        }
    })?;
    if !windowed && before.as_deref() == Some(text.as_str()) {
        return Ok(Err(
            "Wasted call — file unchanged since your last Read. Refer to that earlier tool_result instead.".into(),
        ));
    }
    Ok(Ok(window::from_text(&text, offset as i64, limit)))
}

pub(super) async fn write(ctx: &ToolContext, args: Value, flavor: Flavor) -> ToolResult {
    let Some(raw) = path_arg(&args) else {
        return Err(missing("Write", "file_path"));
    };
    let Some(content) = str_arg(&args, "content") else {
        return Err(missing("Write", "content"));
    };
    let path = ctx
        .workspace
        .resolve(raw)
        .map_err(|e| ToolError::message(format!("Write failed: {e}")))?;
    let old = ctx
        .workspace
        .read_optional(&path)
        .await
        .map_err(|e| ToolError::message(format!("Write failed: {e}")))?;
    let change = patch_runner::write_one(ctx, "Write", &path, old, content.to_string()).await?;
    let text = match flavor {
        Flavor::ZCode => format!(
            "File created successfully at: {} {FILE_STATE_CURRENT}",
            path.display()
        ),
        _ => format!(
            "Wrote {} bytes to {}",
            content.len(),
            ctx.workspace.display_path(&path)
        ),
    };
    let mut o = ToolOutcome::ok(text);
    o.changes = vec![change];
    Ok(o)
}

pub(super) async fn edit(ctx: &ToolContext, args: Value, flavor: Flavor) -> ToolResult {
    let Some(raw) = path_arg(&args) else {
        return Err(missing("Edit", "file_path"));
    };
    let (Some(old_s), Some(new_s)) = (str_arg(&args, "old_string"), str_arg(&args, "new_string"))
    else {
        let which = if str_arg(&args, "old_string").is_none() {
            "old_string"
        } else {
            "new_string"
        };
        return Err(failed(format!("Edit failed: missing {which}")));
    };
    let ws = &ctx.workspace;
    let path = ws
        .resolve(raw)
        .map_err(|e| ToolError::message(format!("Edit failed: {e}")))?;
    match flavor {
        Flavor::Bare if !ws.has_seen(&path) => return Err(failed(NOT_READ_YET)),
        Flavor::ZCode if !ws.has_seen(&path) => {
            return Err(failed(format!(
                "<tool_use_error>{NOT_READ_YET}</tool_use_error>"
            )));
        }
        _ => {}
    }
    if old_s == new_s {
        return Err(failed(
            "No changes to make: old_string and new_string are exactly the same.",
        ));
    }
    if old_s.is_empty() {
        return Err(failed("Edit failed: old_string must not be empty"));
    }
    let all = args
        .get("replace_all")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let text = ws
        .read_text(&path)
        .await
        .map_err(|e| ToolError::message(format!("Edit failed: {e}")))?;
    let (new_text, count) = match edit::replace_exact(&text, old_s, new_s, all) {
        Ok(r) => r,
        Err(EditMiss::NotFound) => return Err(failed("Edit failed: old_string not found")),
        Err(EditMiss::Ambiguous(_)) => {
            return Err(failed(
                "Edit failed: old_string found multiple times; set replace_all to true or provide more context",
            ));
        }
    };
    let change = patch_runner::write_one(ctx, "Edit", &path, Some(text), new_text).await?;
    let message = match flavor {
        Flavor::Full => {
            let label = if count == 1 {
                "occurrence"
            } else {
                "occurrences"
            };
            format!("Replaced {count} {label} in {}", ws.display_path(&path))
        }
        Flavor::Bare | Flavor::ZCode => format!(
            "The file {} has been updated successfully. {FILE_STATE_CURRENT}",
            path.display()
        ),
    };
    let mut o = ToolOutcome::ok(message);
    o.changes = vec![change];
    Ok(o)
}

pub(super) async fn glob(ctx: &ToolContext, args: Value, flavor: Flavor) -> ToolResult {
    let Some(pattern) = str_arg(&args, "pattern") else {
        return Err(missing("Glob", "pattern"));
    };
    let root = ctx
        .workspace
        .resolve(str_arg(&args, "path").unwrap_or("."))
        .map_err(|e| ToolError::message(format!("Glob failed: {e}")))?;
    let (mut paths, _) = search_tools::glob(ctx, root, pattern, false, 100_000)
        .await
        .map_err(|e| ToolError::message(format!("Glob failed: {e}")))?;
    if paths.is_empty() {
        return Ok(ToolOutcome::ok("No files found"));
    }
    paths.sort();
    let limit = if flavor == Flavor::ZCode {
        paths.reverse();
        ZCODE_GLOB_LIMIT
    } else {
        GLOB_LIMIT
    };
    let truncated = paths.len() > limit;
    paths.truncate(limit);
    let mut out = paths
        .iter()
        .map(|p| ctx.workspace.display_path(p))
        .collect::<Vec<_>>()
        .join("\n");
    if truncated {
        out.push_str("\n(Results are truncated. Consider using a more specific path or pattern.)");
    }
    Ok(ToolOutcome::ok(out))
}

pub(super) async fn grep(ctx: &ToolContext, args: Value) -> ToolResult {
    let grep_failed = |e: ToolError| ToolError::message(format!("Grep failed: {e}"));
    let call = search_tools::grep_call(ctx, &args, GREP_HEAD_LIMIT).map_err(grep_failed)?;
    let mode = str_arg(&args, "output_mode").unwrap_or("files_with_matches");
    if !matches!(mode, "content" | "files_with_matches" | "count") {
        return Err(grep_failed(ToolError::message(format!(
            "unknown output_mode `{mode}` (content, files_with_matches or count)"
        ))));
    }
    let hits = search_tools::search(&call).await.map_err(grep_failed)?;
    let show = |p: &std::path::Path| ctx.workspace.display_path(p);
    let text = match mode {
        "content" if hits.is_empty() => "No matches found".to_string(),
        "content" => {
            let lines = search_tools::content_lines(&hits, call.numbers, show);
            let (page, total) = paged(lines, call.offset, call.head_limit);
            let mut out = page.join("\n");
            if call.offset + page.len() < total {
                let _ = write!(
                    out,
                    "\n\n[Showing results with pagination = limit: {}, offset: {}]",
                    call.head_limit, call.offset
                );
            }
            out
        }
        _ if hits.is_empty() => "No files found".to_string(),
        "count" => {
            let total: u64 = hits.iter().map(|f| f.matches).sum();
            let lines: Vec<String> = hits
                .iter()
                .map(|f| format!("{}:{}", show(&f.path), f.matches))
                .collect();
            let (page, _) = paged(lines, call.offset, call.head_limit);
            let files = if hits.len() == 1 { "file" } else { "files" };
            format!(
                "{}\n\nFound {total} total occurrences across {} {files}.",
                page.join("\n"),
                hits.len()
            )
        }
        _ => {
            let names: Vec<String> = hits.iter().map(|f| show(&f.path)).collect();
            let (page, total) = paged(names, call.offset, call.head_limit);
            let label = if total == 1 { "file" } else { "files" };
            format!("Found {total} {label}\n{}", page.join("\n"))
        }
    };
    Ok(ToolOutcome::ok(truncate_middle(
        &text,
        ctx.output_token_limit,
    )))
}
