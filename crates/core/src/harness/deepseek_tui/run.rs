//! deepseek-tui's file and shell tools with the original's result texts: raw file text with a
//! continuation note, diffs before `Wrote N bytes to P` / `Created P (N bytes)` / `Replaced 1
//! occurrence in P`, JSON listings and matches, `Command failed (exit code: Some(N))` with the
//! output as STDERR, and long output compacted to a summary, head and tail.

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

use crate::tools::search_tools;
use crate::tools::table::{ToolError, ToolResult, str_arg};
use crate::tools::{ToolContext, ToolOutcome, files, patch_runner};
use crate::workspace::{diff, window};

const SHELL_DEFAULT_TIMEOUT_MS: u64 = 120_000;
const SHELL_MAX_TIMEOUT_MS: u64 = 600_000;
const READ_DEFAULT_LINES: u64 = 200;
const READ_MAX_LINES: u64 = 500;
/// Output longer than this is compacted to its first 572 and last 286 characters.
const COMPACT_OVER: usize = 900;
const COMPACT_HEAD: usize = 572;
const COMPACT_TAIL: usize = 286;

fn strings(a: &Value, k: &str) -> Vec<String> {
    a.get(k)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// DeepSeek TUI's shape for long command output.
fn compact(output: &str) -> String {
    let output = output.strip_suffix('\n').unwrap_or(output);
    let count = output.chars().count();
    if count <= COMPACT_OVER {
        return output.to_string();
    }
    let summary = output.lines().take(3).collect::<Vec<_>>().join("\n");
    let head: String = output.chars().take(COMPACT_HEAD).collect();
    let tail: String = output.chars().skip(count - COMPACT_TAIL).collect();
    format!(
        "[exec_shell output compacted to protect context]\nSummary: {summary}\nSnippet: {head}\n\n[... output truncated for context ...]\n\n{tail}\n(Original: {count} chars, omitted: {} chars.)",
        count - COMPACT_OVER
    )
}

pub(super) async fn exec_shell(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(command) = str_arg(&args, "command").filter(|c| !c.trim().is_empty()) else {
        return Err(ToolError::message(
            "exec_shell failed: `command` is required",
        ));
    };
    let timeout = args
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .unwrap_or(SHELL_DEFAULT_TIMEOUT_MS)
        .clamp(1, SHELL_MAX_TIMEOUT_MS);
    let cwd = ctx.workspace.resolve_dir(str_arg(&args, "cwd"))?;
    if args.get("background").and_then(Value::as_bool) == Some(true) {
        return super::more::start_background(ctx, &args, command, &cwd).await;
    }
    let r = ctx
        .authorize_and_run(
            "exec_shell",
            ToolKind::Execute,
            command,
            &cwd,
            Duration::from_millis(timeout),
            "exec_shell failed",
        )
        .await?;
    let text = if r.timed_out {
        format!(
            "Command timed out after {timeout} ms\n{}",
            compact(&r.output)
        )
    } else if r.cancelled {
        "Command cancelled by the user".to_string()
    } else if r.exit_code != Some(0) {
        format!(
            "Command failed (exit code: {:?})\n\nSTDOUT:\n\n\nSTDERR:\n{}",
            r.exit_code,
            compact(r.output.trim_end_matches('\n'))
        )
    } else if r.output.is_empty() {
        "(no output)".to_string()
    } else {
        compact(&r.output)
    };
    Ok(ToolOutcome::from_exec(r, text))
}

pub(super) async fn read_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path") else {
        return Err(ToolError::message("read_file failed: `path` is required"));
    };
    let start = args
        .get("start_line")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    let max = args
        .get("max_lines")
        .and_then(Value::as_u64)
        .unwrap_or(READ_DEFAULT_LINES)
        .clamp(1, READ_MAX_LINES);
    let w = match crate::skills::read_builtin(raw) {
        Some(t) => window::from_text(t, start as i64, max as usize),
        None => {
            let path = ctx.workspace.resolve(raw)?;
            ctx.workspace
                .read_lines(&path, start as i64, max as usize, 8 * 1024)
                .await
                .map_err(|e| ToolError::message(format!("read_file failed: {e}")))?
        }
    };
    let mut text: String = w.lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    if !w.reached_end {
        let next = w.lines.last().map_or(start as usize, |(n, _)| n + 1);
        text.push_str(&format!(
            "\n[truncated=\"true\" next_start_line=\"{next}\" total_lines=\"{}\"]",
            w.total_lines
        ));
    }
    Ok(ToolOutcome::ok(text))
}

pub(super) async fn write_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let (Some(raw), Some(content)) = (str_arg(&args, "path"), str_arg(&args, "content")) else {
        return Err(ToolError::message(
            "write_file failed: `path` and `content` are required",
        ));
    };
    let path = ctx.workspace.resolve(raw)?;
    let old = ctx
        .workspace
        .read_optional(&path)
        .await
        .map_err(|e| ToolError::message(format!("write_file failed: {e}")))?;
    let shown = ctx.workspace.display_path(&path);
    let d = diff::git_unified_diff(&shown, old.as_deref(), Some(content));
    let text = match &old {
        Some(_) => format!("{d}\nWrote {} bytes to {}", content.len(), path.display()),
        None => format!("{d}\nCreated {} ({} bytes)", path.display(), content.len()),
    };
    let change =
        patch_runner::write_one(ctx, "write_file", &path, old, content.to_string()).await?;
    let mut o = ToolOutcome::ok(text);
    o.changes = vec![change];
    Ok(o)
}

pub(super) async fn edit_file(ctx: &ToolContext, args: Value) -> ToolResult {
    let (Some(raw), Some(search), Some(replace)) = (
        str_arg(&args, "path"),
        str_arg(&args, "search"),
        str_arg(&args, "replace"),
    ) else {
        return Err(ToolError::message(
            "edit_file failed: `path`, `search` and `replace` are required",
        ));
    };
    let path = ctx.workspace.resolve(raw)?;
    let text = ctx
        .workspace
        .read_text(&path)
        .await
        .map_err(|e| ToolError::message(format!("edit_file failed: {e}")))?;
    if search.is_empty() || !text.contains(search) {
        return Err(ToolError::message("edit_file failed: search not found"));
    }
    let updated = text.replacen(search, replace, 1);
    let shown = ctx.workspace.display_path(&path);
    let d = diff::git_unified_diff(&shown, Some(&text), Some(&updated));
    let change = patch_runner::write_one(ctx, "edit_file", &path, Some(text), updated).await?;
    let mut o = ToolOutcome::ok(format!("{d}\nReplaced 1 occurrence in {}", path.display()));
    o.changes = vec![change];
    Ok(o)
}

pub(super) async fn list_dir(ctx: &ToolContext, args: Value) -> ToolResult {
    let dir = ctx
        .workspace
        .resolve(str_arg(&args, "path").unwrap_or("."))?;
    if !tokio::fs::metadata(&dir).await.is_ok_and(|m| m.is_dir()) {
        return Err(ToolError::message("list_dir failed: not a directory"));
    }
    let entries = tokio::task::spawn_blocking(move || files::list_dir(&dir, 1, 10_000).0)
        .await
        .unwrap_or_default();
    let list: Vec<Value> = entries
        .iter()
        .map(|e| match e.strip_suffix('/') {
            Some(d) => json!({"name": d, "is_dir": true}),
            None => json!({"name": e, "is_dir": false}),
        })
        .collect();
    Ok(ToolOutcome::ok(pretty(&Value::Array(list))))
}

/// A glob set from patterns; a bare name (`*.rs`) matches at any depth.
fn glob_set(patterns: &[String]) -> Option<globset::GlobSet> {
    if patterns.is_empty() {
        return None;
    }
    let mut b = globset::GlobSetBuilder::new();
    for p in patterns {
        for g in [p.clone(), format!("**/{p}")] {
            if let Ok(g) = globset::Glob::new(&g) {
                b.add(g);
            }
        }
    }
    b.build().ok()
}

pub(super) async fn grep_files(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(pattern) = str_arg(&args, "pattern") else {
        return Err(ToolError::message(
            "grep_files failed: `pattern` is required",
        ));
    };
    let context = args
        .get("context_lines")
        .and_then(Value::as_u64)
        .unwrap_or(2);
    let max = args
        .get("max_results")
        .and_then(Value::as_u64)
        .unwrap_or(100) as usize;
    let mut call_args = json!({"pattern": pattern, "path": str_arg(&args, "path").unwrap_or("."),
                               "-i": args.get("case_insensitive").and_then(Value::as_bool).unwrap_or(false),
                               "-C": context});
    let include = strings(&args, "include");
    if !include.is_empty() {
        call_args["glob"] = json!(format!("{{{}}}", include.join(",")));
    }
    let call = search_tools::grep_call(ctx, &call_args, 0)
        .map_err(|e| ToolError::message(format!("grep_files failed: {e}")))?;
    let hits = search_tools::search(&call)
        .await
        .map_err(|e| ToolError::message(format!("grep_files failed: {e}")))?;
    let exclude = glob_set(&strings(&args, "exclude"));
    let cwd = ctx.workspace.cwd().to_path_buf();
    let rel = |p: &Path| p.strip_prefix(&cwd).unwrap_or(p).to_path_buf();
    let mut matches = Vec::new();
    let mut total = 0;
    for f in hits
        .iter()
        .filter(|f| !exclude.as_ref().is_some_and(|x| x.is_match(rel(&f.path))))
    {
        for (i, l) in f.lines.iter().enumerate().filter(|(_, l)| l.is_match) {
            total += 1;
            if matches.len() >= max {
                continue;
            }
            let around = |range: &mut dyn Iterator<Item = &files::HitLine>| -> Vec<String> {
                range
                    .take_while(|c| !c.is_match)
                    .map(|c| c.text.clone())
                    .collect()
            };
            let mut before = around(&mut f.lines[..i].iter().rev());
            before.reverse();
            let after = around(&mut f.lines[i + 1..].iter());
            matches.push(
                json!({"file": ctx.workspace.display_path(&f.path), "line_number": l.number,
                                "line": l.text, "context_before": before, "context_after": after}),
            );
        }
    }
    let searched = files_searched(ctx, &call.root, &include).await;
    Ok(ToolOutcome::ok(pretty(&json!({
        "matches": matches, "total_matches": total, "files_searched": searched, "truncated": total > max
    }))))
}

/// How many files a search under `root` looked at.
async fn files_searched(ctx: &ToolContext, root: &Path, include: &[String]) -> usize {
    if root.is_file() {
        return 1;
    }
    let pattern = if include.is_empty() {
        "*".to_string()
    } else {
        format!("{{{}}}", include.join(","))
    };
    search_tools::glob(ctx, root.to_path_buf(), &pattern, false, 1_000_000)
        .await
        .map_or(0, |(p, _)| p.len())
}

/// How well a path matches a query: the name holding the query scores highest, then the
/// path, then the query's characters in order.
fn score(query: &str, path: &str, name: &str) -> Option<f64> {
    let (q, path, name) = (
        query.to_lowercase(),
        path.to_lowercase(),
        name.to_lowercase(),
    );
    if name == q {
        return Some(1.0);
    }
    if name.contains(&q) {
        return Some(0.9 + 0.09 * q.len() as f64 / name.len().max(1) as f64);
    }
    if path.contains(&q) {
        return Some(0.7 + 0.09 * q.len() as f64 / path.len().max(1) as f64);
    }
    let mut chars = path.chars();
    q.chars()
        .all(|c| chars.any(|p| p == c))
        .then(|| 0.5 * q.len() as f64 / path.len().max(1) as f64)
}

pub(super) async fn file_search(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(query) = str_arg(&args, "query").filter(|q| !q.is_empty()) else {
        return Err(ToolError::message(
            "file_search failed: `query` is required",
        ));
    };
    let root = ctx
        .workspace
        .resolve(str_arg(&args, "path").unwrap_or("."))?;
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(20) as usize;
    let extensions = strings(&args, "extensions");
    let exclude = glob_set(&strings(&args, "exclude"));
    let (paths, _) = search_tools::glob(ctx, root, "*", false, 1_000_000).await?;
    let mut found: Vec<(f64, String, String)> = paths
        .iter()
        .filter_map(|p| {
            let rel = ctx.workspace.display_path(p);
            let name = p.file_name()?.to_string_lossy().into_owned();
            let ext = p
                .extension()
                .map(|e| e.to_string_lossy().into_owned())
                .unwrap_or_default();
            if (!extensions.is_empty()
                && !extensions.iter().any(|e| e.trim_start_matches('.') == ext))
                || exclude.as_ref().is_some_and(|x| x.is_match(&rel))
            {
                return None;
            }
            Some((score(query, &rel, &name)?, rel, name))
        })
        .collect();
    found.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.truncate(limit);
    let list: Vec<Value> = found
        .into_iter()
        .map(|(s, path, name)| json!({"path": path, "name": name, "score": (s * 1000.0).round() / 1000.0}))
        .collect();
    Ok(ToolOutcome::ok(pretty(&Value::Array(list))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_is_compacted_like_the_original() {
        assert_eq!(compact("short\n"), "short");
        let long = "x".repeat(1000);
        let c = compact(&long);
        assert!(c.starts_with("[exec_shell output compacted to protect context]\nSummary: x"));
        assert!(c.ends_with("(Original: 1000 chars, omitted: 100 chars.)"));
    }

    #[test]
    fn names_score_above_paths_above_subsequences() {
        let name = score("calc", "src/calc.py", "calc.py").unwrap();
        let path = score("src", "src/calc.py", "calc.py").unwrap();
        let sub = score("scp", "src/calc.py", "calc.py").unwrap();
        assert!(name > path && path > sub, "{name} {path} {sub}");
        assert_eq!(score("zz", "src/calc.py", "calc.py"), None);
    }
}
