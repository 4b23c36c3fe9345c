//! What the Grep and Glob tools of the Claude-style harnesses share: Claude Code's Grep
//! arguments (which Kimi Code copies: `-i`, `-n`, `-A`/`-B`/`-C`, `glob`, `type`,
//! `multiline`, `head_limit`, `offset`) turned into a search, the search and glob runs off
//! the async threads, content lines and paging. Each harness words its results.

use serde_json::Value;
use std::path::{Path, PathBuf};

use super::ToolContext;
use super::files::{self, FileHits, SearchOptions};
use super::table::ToolError;

/// A Grep call's arguments, resolved.
pub(crate) struct GrepCall {
    pub pattern: String,
    pub root: PathBuf,
    pub opts: SearchOptions,
    /// `-n`: line numbers in content mode (default on).
    pub numbers: bool,
    pub offset: usize,
    /// `head_limit`; 0 means all.
    pub head_limit: usize,
}

fn flag(args: &Value, k: &str) -> bool {
    args.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn uint(args: &Value, k: &str) -> Option<usize> {
    // Claude Code's schema says `number`: accept 3.0 as well as 3.
    let v = args.get(k)?;
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
        .map(|n| n as usize)
}

/// Reads a Grep call. Context on both sides is `-C` (or Claude Code's `context`).
pub(crate) fn grep_call(
    ctx: &ToolContext,
    args: &Value,
    default_head_limit: usize,
) -> Result<GrepCall, ToolError> {
    let Some(pattern) = args.get("pattern").and_then(Value::as_str) else {
        return Err(ToolError::message("`pattern` is required."));
    };
    let root = ctx
        .workspace
        .resolve(args.get("path").and_then(Value::as_str).unwrap_or("."))?;
    let around = uint(args, "-C")
        .or_else(|| uint(args, "context"))
        .unwrap_or(0);
    let opts = SearchOptions {
        case_insensitive: flag(args, "-i"),
        glob: args.get("glob").and_then(Value::as_str).map(String::from),
        file_type: args.get("type").and_then(Value::as_str).map(String::from),
        include_ignored: flag(args, "include_ignored"),
        multiline: flag(args, "multiline"),
        before: uint(args, "-B").unwrap_or(around),
        after: uint(args, "-A").unwrap_or(around),
        max_lines: 200_000,
        buffers: ctx.workspace.buffers(),
    };
    Ok(GrepCall {
        pattern: pattern.to_string(),
        root,
        opts,
        numbers: args.get("-n").and_then(Value::as_bool).unwrap_or(true),
        offset: uint(args, "offset").unwrap_or(0),
        head_limit: uint(args, "head_limit").unwrap_or(default_head_limit),
    })
}

/// Runs the search on a blocking thread.
pub(crate) async fn search(call: &GrepCall) -> Result<Vec<FileHits>, ToolError> {
    let (root, pattern, opts) = (call.root.clone(), call.pattern.clone(), call.opts.clone());
    match tokio::task::spawn_blocking(move || files::search(&root, &pattern, &opts)).await {
        Ok(Ok(h)) => Ok(h),
        Ok(Err(e)) => Err(ToolError::Message(e)),
        Err(e) => Err(ToolError::message(format!("search failed: {e}"))),
    }
}

/// Content-mode lines: `path:N:text` for matches, `path-N-text` for context lines (without
/// numbers: `path:text`), lines cut at 500 characters.
pub(crate) fn content_lines(
    hits: &[FileHits],
    numbers: bool,
    show: impl Fn(&Path) -> String,
) -> Vec<String> {
    hits.iter()
        .flat_map(|f| {
            let path = show(&f.path);
            f.lines
                .iter()
                .map(|l| {
                    let sep = if l.is_match { ':' } else { '-' };
                    let text = files::clip_line(&l.text, 500);
                    if numbers {
                        format!("{path}{sep}{}{sep}{text}", l.number)
                    } else {
                        format!("{path}{sep}{text}")
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `items[offset..offset+limit]` (limit 0: to the end) and the total.
pub(crate) fn paged<T>(items: Vec<T>, offset: usize, limit: usize) -> (Vec<T>, usize) {
    let total = items.len();
    let limit = if limit == 0 { usize::MAX } else { limit };
    (items.into_iter().skip(offset).take(limit).collect(), total)
}

/// Files under `root` matching `pattern`, on a blocking thread (see [`files::glob`]).
pub(crate) async fn glob(
    ctx: &ToolContext,
    root: PathBuf,
    pattern: &str,
    include_ignored: bool,
    limit: usize,
) -> Result<(Vec<PathBuf>, bool), ToolError> {
    let buffers = ctx.workspace.buffers();
    let pattern = pattern.to_string();
    let found = tokio::task::spawn_blocking(move || {
        files::glob(&root, &pattern, include_ignored, limit, &buffers)
    })
    .await;
    match found {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(ToolError::Message(e)),
        Err(e) => Err(ToolError::message(format!("glob failed: {e}"))),
    }
}
