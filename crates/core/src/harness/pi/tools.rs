//! pi's four tools with its parameters and result texts. Reads and bash output are cut at
//! 2000 lines or 50 KB, whichever comes first: a read keeps the head, bash the tail, and a
//! notice says what was shown and how to go on.

use interpreter_protocol::{ToolKind, ToolStatus};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use crate::harness::session_tools::describe;
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, ToolTable, Wording, location, spec, str_arg, str_or_empty,
};
use crate::tools::{ToolContext, ToolOutcome, media, patch_runner};

/// Errors read as pi's: the message alone.
pub(in crate::harness) const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};
const MAX_LINES: usize = 2000;
const MAX_BYTES: usize = 50 * 1024;
/// pi sets no timeout on bash; ours stops a command after this.
const BASH_DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

pub(super) fn table() -> ToolTable {
    ToolTable::new(vec![read(), bash(), edit(), write()])
}

pub(in crate::harness) fn file_tool(
    name: &str,
    description: &str,
    parameters: Value,
    kind: ToolKind,
    verb: &'static str,
    run: crate::tools::table::RunFn,
) -> Arc<dyn Tool> {
    let describe_fn: fn(&Value, &crate::workspace::Workspace) -> crate::tools::CallDescription =
        match (kind, verb) {
            (ToolKind::Read, _) => |a, ws| {
                crate::tools::CallDescription::new(
                    ToolKind::Read,
                    format!("Read {}", str_or_empty(a, "path")),
                    location(ws, a, "path"),
                )
            },
            _ => |a, ws| {
                crate::tools::CallDescription::new(
                    ToolKind::Edit,
                    format!("Edit {}", str_or_empty(a, "path")),
                    location(ws, a, "path"),
                )
            },
        };
    FnTool::plain(
        WORDING,
        spec(name, description, parameters),
        describe_fn,
        run,
    )
}

pub(in crate::harness) fn read() -> Arc<dyn Tool> {
    file_tool(
        "read",
        "Read a file. Text comes back as it is, at most 2000 lines or 50 KB (whichever comes first); for longer files go on with offset until you have what you need. Images (jpg, png, gif, webp) come back as images.",
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
            "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
            "limit": {"type": "number", "description": "Maximum number of lines to read"}
        }, "required": ["path"]}),
        ToolKind::Read,
        "Read",
        |a, c| Box::pin(run_read(c, a)),
    )
}

pub(in crate::harness) fn bash() -> Arc<dyn Tool> {
    FnTool::plain(
        WORDING,
        spec(
            "bash",
            "Run a bash command in the working directory; stdout and stderr come back together. Output is cut to the last 2000 lines or 50 KB. Give timeout (seconds) for commands that may hang.",
            json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "Bash command to execute"},
                "timeout": {"type": "number", "description": "Timeout in seconds (optional)"}
            }, "required": ["command"]}),
        ),
        |a, _| {
            let mut d = describe(ToolKind::Execute, str_or_empty(a, "command"));
            d.command = Some(str_or_empty(a, "command"));
            d
        },
        |a, c| Box::pin(run_bash(c, a)),
    )
}

pub(in crate::harness) fn edit() -> Arc<dyn Tool> {
    file_tool(
        "edit",
        "Edit one file by exact text replacement. Each edits[].oldText must match a unique region of the original file exactly, and edits must not overlap; merge nearby changes into one edit, and keep oldText to the lines that change plus enough context to be unique.",
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
            "edits": {"type": "array", "description": "One or more replacements, each matched against the original file (not one after another). No overlapping or nested edits.", "items": {
                "type": "object", "properties": {
                    "oldText": {"type": "string", "description": "Exact text to replace; unique in the original file"},
                    "newText": {"type": "string", "description": "The text that replaces it"}
                }, "required": ["oldText", "newText"]}}
        }, "required": ["path", "edits"]}),
        ToolKind::Edit,
        "Edit",
        |a, c| Box::pin(run_edit(c, a)),
    )
}

fn write() -> Arc<dyn Tool> {
    file_tool(
        "write",
        "Write a file: created if missing (with its parent folders), replaced if it exists.",
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
            "content": {"type": "string", "description": "Content to write to the file"}
        }, "required": ["path", "content"]}),
        ToolKind::Edit,
        "Write",
        |a, c| Box::pin(run_write(c, a)),
    )
}

/// pi's size format: `512B`, `50.0KB`, `1.2MB`.
fn size(n: usize) -> String {
    match n {
        n if n < 1024 => format!("{n}B"),
        n if n < 1024 * 1024 => format!("{:.1}KB", n as f64 / 1024.0),
        n => format!("{:.1}MB", n as f64 / (1024.0 * 1024.0)),
    }
}

fn number(args: &Value, key: &str) -> Option<usize> {
    args.get(key)
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n >= 1.0)
        .map(|n| n as usize)
}

async fn run_read(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path")
        .map(|p| p.trim_start_matches('@'))
        .filter(|p| !p.is_empty())
    else {
        return Err(ToolError::message(
            "Validation failed for tool \"read\": path is required",
        ));
    };
    if media::is_image_path(std::path::Path::new(raw)) {
        return read_image(ctx, raw).await;
    }
    let offset = number(&args, "offset").unwrap_or(1);
    let limit = number(&args, "limit");
    let w = match crate::skills::read_builtin(raw) {
        Some(t) => crate::workspace::window::from_text(
            t,
            offset as i64,
            limit.unwrap_or(MAX_LINES).min(MAX_LINES),
        ),
        None => {
            let path = ctx.workspace.resolve(raw)?;
            if !tokio::fs::metadata(&path).await.is_ok_and(|m| m.is_file()) {
                return Err(ToolError::message(format!(
                    "ENOENT: no such file or directory, access '{}'",
                    path.display()
                )));
            }
            ctx.workspace
                .read_lines(
                    &path,
                    offset as i64,
                    limit.unwrap_or(MAX_LINES).min(MAX_LINES),
                    MAX_BYTES + 1,
                )
                .await
                .map_err(|e| ToolError::message(e.to_string()))?
        }
    };
    let total = w.total_lines;
    if offset > 1 && offset > total {
        return Err(ToolError::message(format!(
            "Offset {offset} is beyond end of file ({total} lines total)"
        )));
    }
    Ok(ToolOutcome::ok(read_text(
        &w.lines, offset, total, limit, raw,
    )))
}

/// The lines shown within 2000 lines and 50 KB, then pi's notice.
fn read_text(
    lines: &[(usize, String)],
    offset: usize,
    total: usize,
    limit: Option<usize>,
    raw: &str,
) -> String {
    if let Some((n, first)) = lines.first()
        && first.len() > MAX_BYTES
    {
        return format!(
            "[Line {n} is {}, exceeds {} limit. Use bash: sed -n '{n}p' {raw} | head -c {MAX_BYTES}]",
            size(first.len()),
            size(MAX_BYTES)
        );
    }
    let mut out = String::new();
    let mut kept = 0;
    for (_, line) in lines {
        let add = line.len() + usize::from(kept > 0);
        if out.len() + add > MAX_BYTES {
            break;
        }
        if kept > 0 {
            out.push('\n');
        }
        out.push_str(line);
        kept += 1;
    }
    let end = offset + kept - usize::from(kept > 0);
    if kept < lines.len() {
        let _ = write!(
            out,
            "\n\n[Showing lines {offset}-{end} of {total} ({} limit). Use offset={} to continue.]",
            size(MAX_BYTES),
            end + 1
        );
    } else if end < total && limit.is_none_or(|l| l > MAX_LINES) {
        let _ = write!(
            out,
            "\n\n[Showing lines {offset}-{end} of {total}. Use offset={} to continue.]",
            end + 1
        );
    } else if end < total {
        let _ = write!(
            out,
            "\n\n[{} more lines in file. Use offset={} to continue.]",
            total - end,
            end + 1
        );
    }
    out
}

async fn read_image(ctx: &ToolContext, raw: &str) -> ToolResult {
    if !ctx.model_images {
        return Err(ToolError::message(format!(
            "{raw} is an image, and the current model does not take images."
        )));
    }
    let path = ctx.workspace.resolve(raw)?;
    let img = media::read_image(&path, media::WIDE_FIT, None)
        .await
        .map_err(ToolError::message)?;
    let mut o = ToolOutcome::ok(format!("Read image file [{}]", img.mime));
    o.images = vec![img.data_url];
    Ok(o)
}

async fn run_bash(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(command) = str_arg(&args, "command").filter(|c| !c.trim().is_empty()) else {
        return Err(ToolError::message(
            "Validation failed for tool \"bash\": command is required",
        ));
    };
    let timeout = args
        .get("timeout")
        .and_then(Value::as_f64)
        .filter(|t| t.is_finite() && *t > 0.0)
        .map_or(BASH_DEFAULT_TIMEOUT, Duration::from_secs_f64);
    let r = ctx
        .authorize_and_run(
            "bash",
            ToolKind::Execute,
            command,
            ctx.workspace.cwd(),
            timeout,
            "Failed to run the command",
        )
        .await?;
    let mut text = tail(&r.output);
    let ended = if r.timed_out {
        Some(format!(
            "Command timed out after {} seconds",
            timeout.as_secs()
        ))
    } else if r.cancelled {
        Some("Command aborted".to_string())
    } else {
        r.exit_code
            .filter(|c| *c != 0)
            .map(|c| format!("Command exited with code {c}"))
    };
    let failed = ended.is_some();
    if let Some(e) = ended {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&e);
    } else if text.is_empty() {
        text = "(no output)".into();
    }
    let mut o = if failed {
        ToolOutcome::error(text)
    } else {
        ToolOutcome::ok(text)
    };
    o.user_output = r.output;
    o.exit_code = r.exit_code;
    if failed {
        o.status = ToolStatus::Failed;
    }
    Ok(o)
}

/// The end of `output` within 2000 lines and 50 KB, with pi's notice when cut.
fn tail(output: &str) -> String {
    let trimmed = output.trim_end_matches('\n');
    if trimmed.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = trimmed.split('\n').collect();
    let total = lines.len();
    let mut start = total;
    let mut bytes = 0;
    while start > 0 && total - start < MAX_LINES {
        let add = lines[start - 1].len() + usize::from(start < total);
        if bytes + add > MAX_BYTES {
            break;
        }
        bytes += add;
        start -= 1;
    }
    if start == 0 {
        return trimmed.to_string();
    }
    if start == total {
        // One line over the limit: its end.
        let line = lines[total - 1];
        let mut cut = line.len() - MAX_BYTES;
        while !line.is_char_boundary(cut) {
            cut += 1;
        }
        return format!(
            "{}\n\n[Showing last {} of line {total} (line is {})]",
            &line[cut..],
            size(MAX_BYTES),
            size(line.len())
        );
    }
    let shown = lines[start..].join("\n");
    let by_bytes = total - start < MAX_LINES;
    let limit = if by_bytes {
        format!(" ({} limit)", size(MAX_BYTES))
    } else {
        String::new()
    };
    format!(
        "{shown}\n\n[Showing lines {}-{total} of {total}{limit}]",
        start + 1
    )
}

async fn run_edit(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path")
        .map(|p| p.trim_start_matches('@'))
        .filter(|p| !p.is_empty())
    else {
        return Err(ToolError::message(
            "Validation failed for tool \"edit\": path is required",
        ));
    };
    let mut edits: Vec<(String, String)> = Vec::new();
    // Older pi sent one oldText/newText at the top level: taken as one edit.
    if let (Some(o), Some(n)) = (str_arg(&args, "oldText"), str_arg(&args, "newText")) {
        edits.push((o.to_string(), n.to_string()));
    }
    let list = match args.get("edits") {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
        Some(v) => v.clone(),
        None => Value::Null,
    };
    for e in list.as_array().into_iter().flatten() {
        let (Some(o), Some(n)) = (str_arg(e, "oldText"), str_arg(e, "newText")) else {
            return Err(ToolError::message(
                "Edit tool input is invalid. Each edit needs oldText and newText.",
            ));
        };
        edits.push((o.to_string(), n.to_string()));
    }
    if edits.is_empty() {
        return Err(ToolError::message(
            "Edit tool input is invalid. edits must contain at least one replacement.",
        ));
    }
    let path = ctx.workspace.resolve(raw)?;
    if !tokio::fs::metadata(&path).await.is_ok_and(|m| m.is_file()) {
        return Err(ToolError::message(format!("File not found: {raw}")));
    }
    let original = ctx
        .workspace
        .read_text(&path)
        .await
        .map_err(|e| ToolError::message(e.to_string()))?;
    let updated = apply_edits(&original, &edits, raw).map_err(ToolError::message)?;
    let change = patch_runner::write_one(ctx, "edit", &path, Some(original), updated).await?;
    let mut o = ToolOutcome::ok(format!(
        "Successfully replaced {} block(s) in {raw}.",
        edits.len()
    ));
    o.changes = vec![change];
    Ok(o)
}

/// Applies every edit to `original`, each matched against the original: unique, not empty,
/// not overlapping. A BOM and CRLF line ends are kept.
fn apply_edits(original: &str, edits: &[(String, String)], raw: &str) -> Result<String, String> {
    let (bom, body) = match original.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", original),
    };
    let crlf = body.contains("\r\n");
    let text = body.replace("\r\n", "\n");
    let one = edits.len() == 1;
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for (i, (old, _)) in edits.iter().enumerate() {
        let old = old.replace("\r\n", "\n");
        if old.is_empty() {
            return Err(match one {
                true => format!("oldText must not be empty in {raw}."),
                false => format!("edits[{i}].oldText must not be empty in {raw}."),
            });
        }
        let found: Vec<usize> = text.match_indices(&old).map(|(at, _)| at).collect();
        match found.len() {
            0 if one => {
                return Err(format!(
                    "Could not find the exact text in {raw}. The old text must match exactly including all whitespace and newlines."
                ));
            }
            0 => {
                return Err(format!(
                    "Could not find edits[{i}] in {raw}. The oldText must match exactly including all whitespace and newlines."
                ));
            }
            1 => spans.push((found[0], found[0] + old.len(), i)),
            k if one => {
                return Err(format!(
                    "Found {k} occurrences of the text in {raw}. The text must be unique. Please provide more context to make it unique."
                ));
            }
            k => {
                return Err(format!(
                    "Found {k} occurrences of edits[{i}] in {raw}. Each oldText must be unique. Please provide more context to make it unique."
                ));
            }
        }
    }
    spans.sort();
    for pair in spans.windows(2) {
        if pair[1].0 < pair[0].1 {
            let (a, b) = (pair[0].2.min(pair[1].2), pair[0].2.max(pair[1].2));
            return Err(format!(
                "edits[{a}] and edits[{b}] overlap in {raw}. Merge them into one edit or target disjoint regions."
            ));
        }
    }
    let mut out = text.clone();
    for &(start, end, i) in spans.iter().rev() {
        out.replace_range(start..end, &edits[i].1.replace("\r\n", "\n"));
    }
    if out == text {
        return Err(match one {
            true => format!(
                "No changes made to {raw}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            ),
            false => {
                format!("No changes made to {raw}. The replacements produced identical content.")
            }
        });
    }
    let out = if crlf { out.replace('\n', "\r\n") } else { out };
    Ok(format!("{bom}{out}"))
}

pub(in crate::harness) async fn run_write(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path")
        .map(|p| p.trim_start_matches('@'))
        .filter(|p| !p.is_empty())
    else {
        return Err(ToolError::message(
            "Validation failed for tool \"write\": path is required",
        ));
    };
    let Some(content) = str_arg(&args, "content") else {
        return Err(ToolError::message(
            "Validation failed for tool \"write\": content is required",
        ));
    };
    let path = ctx.workspace.resolve(raw)?;
    let old = ctx
        .workspace
        .read_optional(&path)
        .await
        .map_err(|e| ToolError::message(e.to_string()))?;
    let change = patch_runner::write_one(ctx, "write", &path, old, content.to_string()).await?;
    // pi counts the string's UTF-16 units.
    let mut o = ToolOutcome::ok(format!(
        "Successfully wrote {} bytes to {raw}",
        content.encode_utf16().count()
    ));
    o.changes = vec![change];
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn edits_match_the_original_once_and_do_not_overlap() {
        let text = "alpha\nbeta\ngamma\n";
        assert_eq!(
            apply_edits(text, &edits(&[("alpha", "A"), ("gamma", "G")]), "f").unwrap(),
            "A\nbeta\nG\n"
        );
        assert!(
            apply_edits(text, &edits(&[("delta", "D")]), "f")
                .unwrap_err()
                .starts_with("Could not find the exact text in f.")
        );
        assert!(
            apply_edits(text, &edits(&[("a", "A"), ("zz", "Z")]), "f")
                .unwrap_err()
                .starts_with("Found 5 occurrences of edits[0] in f.")
        );
        assert!(
            apply_edits(text, &edits(&[("alpha\nbeta", "x"), ("beta", "y")]), "f")
                .unwrap_err()
                .starts_with("edits[0] and edits[1] overlap in f.")
        );
        assert!(
            apply_edits(text, &edits(&[("beta", "beta")]), "f")
                .unwrap_err()
                .starts_with("No changes made to f.")
        );
        assert!(
            apply_edits(text, &edits(&[("", "x")]), "f")
                .unwrap_err()
                .starts_with("oldText must not be empty")
        );
        assert_eq!(
            apply_edits("\u{feff}a\r\nb\r\n", &edits(&[("a\nb", "c\nd")]), "f").unwrap(),
            "\u{feff}c\r\nd\r\n"
        );
    }

    #[test]
    fn reads_and_outputs_are_cut_with_pis_notices() {
        let lines: Vec<(usize, String)> = (1..=3).map(|n| (n, format!("line {n}"))).collect();
        assert_eq!(read_text(&lines, 1, 3, None, "f"), "line 1\nline 2\nline 3");
        assert_eq!(
            read_text(&lines[..2], 1, 3, Some(2), "f"),
            "line 1\nline 2\n\n[1 more lines in file. Use offset=3 to continue.]"
        );
        let many: Vec<(usize, String)> = (1..=2000).map(|n| (n, "x".to_string())).collect();
        assert!(
            read_text(&many, 1, 2500, None, "f")
                .ends_with("[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
        );
        let wide: Vec<(usize, String)> = (1..=100).map(|n| (n, "y".repeat(1000))).collect();
        assert!(
            read_text(&wide, 1, 100, None, "f").ends_with(
                "[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]"
            )
        );
        assert_eq!(tail("a\nb\n"), "a\nb");
        let long: String = (1..=2500).map(|n| format!("{n}\n")).collect();
        assert!(
            tail(&long).ends_with("[Showing lines 501-2500 of 2500]"),
            "{}",
            &tail(&long)[..20]
        );
        assert!(tail(&long).starts_with("501\n"));
    }
}
