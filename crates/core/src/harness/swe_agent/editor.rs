//! `str_replace_editor`, SWE-agent's file tool: view (`cat -n` of a file or a two-level
//! listing of a folder), create, str_replace (unique match), insert and undo_edit, with the
//! original's texts. Paths are absolute, as the original requires.

use futures::future::BoxFuture;
use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::WORDING;
use crate::model::ToolSpec;
use crate::tools::table::{Tool, ToolError, ToolResult, spec, str_or_empty};
use crate::tools::{CallDescription, ToolContext, ToolOutcome, files, patch_runner};
use crate::workspace::Workspace;

/// Longer outputs are clipped, as the original does.
const MAX_RESPONSE_CHARS: usize = 16_000;
/// Lines shown around an edit.
const SNIPPET_LINES: usize = 4;
const CLIPPED: &str = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";

/// The editor, with the texts before each edit (for undo_edit), per session.
pub(crate) struct Editor {
    spec: ToolSpec,
    history: Mutex<HashMap<PathBuf, Vec<String>>>,
}

impl Editor {
    pub(crate) fn new() -> Editor {
        Editor {
            spec: spec(
                "str_replace_editor",
                "View, create and edit files: view, create, str_replace, insert, undo_edit.",
                json!({"type": "object", "properties": {
                    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
                    "path": {"type": "string", "description": "Absolute path to a file or folder"},
                    "file_text": {"type": "string"},
                    "view_range": {"type": "array", "items": {"type": "integer"}},
                    "old_str": {"type": "string"},
                    "new_str": {"type": "string"},
                    "insert_line": {"type": "integer"}
                }, "required": ["command", "path"]}),
            ),
            history: Mutex::new(HashMap::new()),
        }
    }
}

impl Tool for Editor {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &Value, ws: &Workspace) -> CallDescription {
        let command = str_or_empty(args, "command");
        let path = str_or_empty(args, "path");
        CallDescription {
            kind: if command == "view" {
                ToolKind::Read
            } else {
                ToolKind::Edit
            },
            title: format!("str_replace_editor {command} {path}"),
            locations: ws.resolve(&path).ok().into_iter().collect(),
            command: None,
        }
    }
    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { WORDING.outcome(self.call(ctx, &args).await) })
    }
}

fn fail(text: impl Into<String>) -> ToolError {
    ToolError::message(text)
}

fn required<'a>(args: &'a Value, key: &str, command: &str) -> Result<&'a str, ToolError> {
    args.get(key).and_then(Value::as_str).ok_or_else(|| {
        fail(format!(
            "Parameter `{key}` is required for command: {command}"
        ))
    })
}

/// `cat -n` of `text` from line `first`, as the original shows files.
fn cat_n(text: &str, first: usize) -> String {
    let mut out = String::new();
    for (i, line) in text.split('\n').enumerate() {
        let _ = writeln!(out, "{:6}\t{}", i + first, line.replace('\t', "        "));
    }
    out
}

fn clip(text: String) -> String {
    if text.chars().count() <= MAX_RESPONSE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_RESPONSE_CHARS).collect();
    cut.push_str(CLIPPED);
    cut
}

fn result_of_cat(text: &str, shown_as: &str, first: usize) -> String {
    clip(format!(
        "Here's the result of running `cat -n` on {shown_as}:\n{}",
        cat_n(text, first)
    ))
}

/// The lines around line `center` (0-based) of `text`, numbered.
fn snippet(text: &str, center: usize, extra: usize) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let start = center.saturating_sub(SNIPPET_LINES);
    let end = (center + extra + SNIPPET_LINES + 1).min(lines.len());
    cat_n(&lines[start..end].join("\n"), start + 1)
}

impl Editor {
    async fn call(&self, ctx: &ToolContext, args: &Value) -> ToolResult {
        if let Some(why) = args.get("invalid").and_then(Value::as_str) {
            return Err(fail(format!(
                "Could not parse the str_replace_editor command: {why}.\nUsage: str_replace_editor <view|create|str_replace|insert|undo_edit> <absolute path> [--file_text TEXT] [--view_range START END] [--old_str TEXT] [--new_str TEXT] [--insert_line N]"
            )));
        }
        let command = args.get("command").and_then(Value::as_str).unwrap_or("");
        let raw = required(args, "path", command)?;
        let path = self.checked_path(ctx, raw, command).await?;
        match command {
            "view" => view(ctx, &path, raw, args).await,
            "create" => {
                self.create(ctx, &path, raw, required(args, "file_text", command)?)
                    .await
            }
            "str_replace" => {
                let old = required(args, "old_str", command)?;
                let new = args.get("new_str").and_then(Value::as_str).unwrap_or("");
                self.replace(ctx, &path, raw, old, new).await
            }
            "insert" => {
                let line = args
                    .get("insert_line")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| {
                        fail("Parameter `insert_line` is required for command: insert")
                    })?;
                let new = required(args, "new_str", command)?;
                self.insert(ctx, &path, raw, line as usize, new).await
            }
            "undo_edit" => self.undo(ctx, &path, raw).await,
            other => Err(fail(format!(
                "Unrecognized command {other}. The allowed commands for the str_replace_editor tool are: view, create, str_replace, insert, undo_edit"
            ))),
        }
    }

    /// The workspace path, with the original's checks: absolute, existing (except for
    /// create), a folder only for view.
    async fn checked_path(
        &self,
        ctx: &ToolContext,
        raw: &str,
        command: &str,
    ) -> Result<PathBuf, ToolError> {
        if !raw.starts_with('/') && !raw.starts_with("builtin://") {
            let suggested = ctx.workspace.cwd().join(raw);
            return Err(fail(format!(
                "The path {raw} is not an absolute path, it should start with `/`. Maybe you meant {}?",
                suggested.display()
            )));
        }
        if raw.starts_with("builtin://") {
            return Ok(PathBuf::from(raw));
        }
        let path = ctx.workspace.resolve(raw)?;
        let meta = tokio::fs::metadata(&path).await;
        match (command, meta) {
            ("create", Ok(m)) if !m.is_dir() => Err(fail(format!(
                "File already exists at: {raw}. Cannot overwrite files using command `create`."
            ))),
            ("create", _) => Ok(path),
            (_, Err(_)) => Err(fail(format!(
                "The path {raw} does not exist. Please provide a valid path."
            ))),
            ("view", Ok(_)) => Ok(path),
            (_, Ok(m)) if m.is_dir() => Err(fail(format!(
                "The path {raw} is a directory and only the `view` command can be used on directories"
            ))),
            _ => Ok(path),
        }
    }

    async fn create(&self, ctx: &ToolContext, path: &Path, raw: &str, text: &str) -> ToolResult {
        let change =
            patch_runner::write_one(ctx, "str_replace_editor", path, None, text.to_string())
                .await?;
        self.remember(path, String::new());
        let mut o = ToolOutcome::ok(format!("File created successfully at: {raw}"));
        o.changes = vec![change];
        Ok(o)
    }

    async fn replace(
        &self,
        ctx: &ToolContext,
        path: &Path,
        raw: &str,
        old: &str,
        new: &str,
    ) -> ToolResult {
        let text = read(ctx, path).await?;
        let (old_t, new_t) = (old.replace('\t', "        "), new.replace('\t', "        "));
        let hits: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
        let (old, new) = if hits.is_empty() && text.contains(&old_t) {
            (old_t.as_str(), new_t.as_str())
        } else {
            (old, new)
        };
        let hits: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
        match hits.as_slice() {
            [] => Err(fail(format!(
                "No replacement was performed, old_str `{old}` did not appear verbatim in {raw}."
            ))),
            [at] => {
                let updated = format!("{}{new}{}", &text[..*at], &text[at + old.len()..]);
                let line = text[..*at].matches('\n').count();
                let change = patch_runner::write_one(
                    ctx,
                    "str_replace_editor",
                    path,
                    Some(text.clone()),
                    updated.clone(),
                )
                .await?;
                self.remember(path, text);
                let mut o = ToolOutcome::ok(format!(
                    "The file {raw} has been edited. Here's the result of running `cat -n` on a snippet of {raw}:\n{}Review the changes and make sure they are as expected. Edit the file again if necessary.",
                    snippet(&updated, line, new.matches('\n').count())
                ));
                o.changes = vec![change];
                Ok(o)
            }
            many => {
                let lines: Vec<String> = many
                    .iter()
                    .map(|i| (text[..*i].matches('\n').count() + 1).to_string())
                    .collect();
                Err(fail(format!(
                    "No replacement was performed. Multiple occurrences of old_str `{old}` in lines {}. Please ensure it is unique",
                    lines.join(", ")
                )))
            }
        }
    }

    async fn insert(
        &self,
        ctx: &ToolContext,
        path: &Path,
        raw: &str,
        line: usize,
        new: &str,
    ) -> ToolResult {
        let text = read(ctx, path).await?;
        let lines: Vec<&str> = text.split('\n').collect();
        if line > lines.len() {
            return Err(fail(format!(
                "Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, {}]",
                lines.len()
            )));
        }
        let mut out: Vec<&str> = lines[..line].to_vec();
        out.extend(new.split('\n'));
        out.extend(&lines[line..]);
        let updated = out.join("\n");
        let change = patch_runner::write_one(
            ctx,
            "str_replace_editor",
            path,
            Some(text.clone()),
            updated.clone(),
        )
        .await?;
        self.remember(path, text);
        let mut o = ToolOutcome::ok(format!(
            "The file {raw} has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n{}Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
            snippet(&updated, line, new.matches('\n').count())
        ));
        o.changes = vec![change];
        Ok(o)
    }

    async fn undo(&self, ctx: &ToolContext, path: &Path, raw: &str) -> ToolResult {
        let previous = self
            .history
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(path)
            .and_then(Vec::pop);
        let Some(previous) = previous else {
            return Err(fail(format!("No edit history found for {raw}.")));
        };
        let current = read(ctx, path).await?;
        let change = patch_runner::write_one(
            ctx,
            "str_replace_editor",
            path,
            Some(current),
            previous.clone(),
        )
        .await?;
        let mut o = ToolOutcome::ok(format!(
            "Last edit to {raw} undone successfully. {}",
            result_of_cat(&previous, raw, 1)
        ));
        o.changes = vec![change];
        Ok(o)
    }

    fn remember(&self, path: &Path, before: String) {
        self.history
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(path.to_path_buf())
            .or_default()
            .push(before);
    }
}

async fn read(ctx: &ToolContext, path: &Path) -> Result<String, ToolError> {
    ctx.workspace.read_text(path).await.map_err(|e| {
        fail(format!(
            "Ran into {e} while trying to read {}",
            path.display()
        ))
    })
}

async fn view(ctx: &ToolContext, path: &Path, raw: &str, args: &Value) -> ToolResult {
    if let Some(text) = crate::skills::read_builtin(raw) {
        return Ok(ToolOutcome::ok(result_of_cat(text, raw, 1)));
    }
    if tokio::fs::metadata(path).await.is_ok_and(|m| m.is_dir()) {
        if args.get("view_range").is_some() {
            return Err(fail(
                "The `view_range` parameter is not allowed when `path` points to a directory.",
            ));
        }
        let dir = path.to_path_buf();
        let (entries, _) = tokio::task::spawn_blocking(move || files::list_dir(&dir, 2, 2_000))
            .await
            .unwrap_or_default();
        let listing: String = entries
            .iter()
            .map(|e| format!("{raw}/{}\n", e.trim_start()))
            .collect();
        return Ok(ToolOutcome::ok(clip(format!(
            "Here's the files and directories up to 2 levels deep in {raw}, excluding hidden items:\n{raw}\n{listing}"
        ))));
    }
    let text = read(ctx, path).await?;
    let Some(range) = args.get("view_range") else {
        return Ok(ToolOutcome::ok(result_of_cat(&text, raw, 1)));
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let bad = || fail("Invalid `view_range`. It should be a list of two integers.");
    let r: Vec<i64> = range
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    let [start, end] = r[..] else {
        return Err(bad());
    };
    let n = lines.len() as i64;
    if start < 1 || start > n {
        return Err(fail(format!(
            "Invalid `view_range`: {range}. Its first element `{start}` should be within the range of lines of the file: [1, {n}]"
        )));
    }
    let end = if end == -1 { n } else { end };
    if end < start || end > n {
        return Err(fail(format!(
            "Invalid `view_range`: {range}. Its second element `{end}` should be larger or equal than its first `{start}` and at most {n}"
        )));
    }
    let part = lines[(start - 1) as usize..end as usize].join("\n");
    Ok(ToolOutcome::ok(result_of_cat(&part, raw, start as usize)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cat_n_and_snippets_number_like_the_original() {
        assert_eq!(cat_n("a\nb", 1), "     1\ta\n     2\tb\n");
        let text = (1..=12)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(snippet(&text, 5, 0).lines().next(), Some("     2\t2"));
        assert_eq!(snippet(&text, 5, 0).lines().count(), 9);
        let long = "x".repeat(MAX_RESPONSE_CHARS + 10);
        assert!(clip(long).ends_with("</NOTE>"));
    }
}
