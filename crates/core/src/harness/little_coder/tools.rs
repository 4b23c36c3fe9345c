//! little-coder's tools in the original's order: pi's read, bash and edit; a write that
//! refuses existing files (the original's runtime invariant); the seven Browser tools
//! (`browser.rs`), when a browser was found; the evidence notes; glob; the web; and the
//! persistent shell.

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use crate::harness::pi::tools as pi;
use crate::harness::session_tools::describe;
use crate::harness::web_tools;
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, ToolTable, spec, str_arg, str_or_empty,
};
use crate::tools::truncate::truncate_head;
use crate::tools::{CallDescription, ToolContext, ToolOutcome, search_tools};

/// glob lists at most this many paths.
const GLOB_LIMIT: usize = 500;
/// webfetch shows at most this many characters of a page.
const PAGE_CHARS: usize = 25_000;
const SEARCH_RESULTS: usize = 8;
const SHELL_DEFAULT_TIMEOUT: u64 = 30;
const SHELL_MAX_TIMEOUT: u64 = 600;
/// ShellSession output: this many lines from the head and from the tail.
const SHELL_EDGE_LINES: usize = 100;
const SHELL_MAX_BYTES: usize = 30 * 1024;

/// The tools; the Browser tools only with `browser` (a Chromium-family browser was found).
/// Without one they still answer calls, unlisted (a resumed session may make them), with an
/// error that says what to install.
pub(super) fn table(browser: bool) -> ToolTable {
    let mut tools = vec![pi::read(), pi::bash(), pi::edit(), write()];
    let mut hidden = Vec::new();
    match browser {
        true => tools.extend(super::browser::tools()),
        false => hidden.extend(super::browser::tools()),
    }
    tools.extend([
        evidence_add(),
        evidence_get(),
        evidence_list(),
        glob(),
        webfetch(),
        websearch(),
        shell_session(),
        shell_session_cwd(),
        shell_session_reset(),
    ]);
    ToolTable::new(tools).with_hidden(hidden)
}

fn tool(
    name: &str,
    description: &str,
    parameters: Value,
    describe: crate::tools::table::DescribeFn,
    run: crate::tools::table::RunFn,
) -> Arc<dyn Tool> {
    FnTool::plain(
        pi::WORDING,
        spec(name, description, parameters),
        describe,
        run,
    )
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn write() -> Arc<dyn Tool> {
    pi::file_tool(
        "write",
        "Create a new file with the given content; parent folders are made. Refused when the file exists: change existing files with edit.",
        json!({"type": "object", "required": ["path", "content"], "properties": {
            "path": {"type": "string", "description": "Path of the new file (relative or absolute)"},
            "content": {"type": "string", "description": "The whole content of the file"}
        }}),
        ToolKind::Edit,
        "Write",
        |a, c| Box::pin(run_write(c, a)),
    )
}

async fn run_write(ctx: &ToolContext, args: Value) -> ToolResult {
    let path_arg = str_or_empty(&args, "path");
    let raw = path_arg.trim_start_matches('@');
    if !raw.is_empty() {
        let path = ctx.workspace.resolve(raw)?;
        if tokio::fs::metadata(&path).await.is_ok() {
            return Err(ToolError::message(format!(
                "{raw} already exists, and write only creates new files. Change it with edit: {}",
                json!({"path": raw, "edits": [{"oldText": "<exact text now in the file>", "newText": "<its replacement>"}]})
            )));
        }
    }
    pi::run_write(ctx, args).await
}

fn evidence_add() -> Arc<dyn Tool> {
    tool(
        "EvidenceAdd",
        "Save a short piece of evidence with its source and a one-line note, for a fact you will cite in your answer. The snippet is cut to 1 KB.",
        json!({"type": "object", "required": ["source", "note", "snippet"], "properties": {
            "source": {"type": "string", "description": "The URL or other origin of the fact"},
            "note": {"type": "string", "description": "One line saying what it shows"},
            "snippet": {"type": "string", "description": "The exact span to cite (at most 1 KB)"}
        }}),
        |a, _| {
            describe(
                ToolKind::Think,
                format!("Save evidence: {}", str_or_empty(a, "note")),
            )
        },
        |a, c| Box::pin(async move { add(c, &a) }),
    )
}

fn add(ctx: &ToolContext, args: &Value) -> ToolResult {
    let field = |k: &str| {
        str_arg(args, k)
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| ToolError::message(format!("`{k}` is required.")))
    };
    let (source, note, snippet) = (field("source")?, field("note")?, field("snippet")?);
    let e = ctx
        .evidence
        .add(source, note, snippet)
        .map_err(ToolError::message)?;
    let cut = match e.snippet.len() < snippet.len() {
        true => " (snippet cut to 1 KB)",
        false => "",
    };
    Ok(ToolOutcome::ok(format!(
        "Saved evidence {} from {}{cut}.",
        e.id, e.source
    )))
}

fn evidence_get() -> Arc<dyn Tool> {
    tool(
        "EvidenceGet",
        "Get a saved piece of evidence by its id.",
        json!({"type": "object", "required": ["id"], "properties": {
            "id": {"type": "string", "description": "The id EvidenceAdd or EvidenceList gave (E1, E2, …)"}
        }}),
        |a, _| {
            describe(
                ToolKind::Think,
                format!("Evidence {}", str_or_empty(a, "id")),
            )
        },
        |a, c| {
            Box::pin(async move {
                let id = str_or_empty(&a, "id");
                let e = c.evidence.get(&id).ok_or_else(|| {
                    ToolError::message(format!(
                        "No evidence has the id \"{id}\"; EvidenceList shows the saved ids."
                    ))
                })?;
                Ok(ToolOutcome::ok(format!(
                    "{}\nsource: {}\nnote: {}\n\n{}",
                    e.id, e.source, e.note, e.snippet
                )))
            })
        },
    )
}

fn evidence_list() -> Arc<dyn Tool> {
    tool(
        "EvidenceList",
        "List the evidence saved in this session: id, source and note.",
        no_arguments(),
        |_, _| describe(ToolKind::Think, "List evidence".into()),
        |_, c| {
            Box::pin(async move {
                let entries = c.evidence.list();
                if entries.is_empty() {
                    return Ok(ToolOutcome::ok("No evidence saved yet."));
                }
                let mut text = String::new();
                for e in entries {
                    let _ = writeln!(text, "{}  {}  {}", e.id, e.source, e.note);
                }
                Ok(ToolOutcome::ok(text.trim_end().to_string()))
            })
        },
    )
}

fn glob() -> Arc<dyn Tool> {
    tool(
        "glob",
        "Find files by glob pattern. Returns the matching paths sorted, at most 500. Ignored folders (node_modules, build output, .git) are skipped; pass `path` for a focused search.",
        json!({"type": "object", "required": ["pattern"], "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, e.g. **/*.py"},
            "path": {"type": "string", "description": "Folder to search (default: the working directory)"}
        }}),
        |a, ws| {
            CallDescription::new(
                ToolKind::Search,
                format!("Glob {}", str_or_empty(a, "pattern")),
                crate::tools::table::location(ws, a, "path"),
            )
        },
        |a, c| Box::pin(run_glob(c, a)),
    )
}

async fn run_glob(ctx: &ToolContext, args: Value) -> ToolResult {
    let pattern = str_arg(&args, "pattern")
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| ToolError::message("`pattern` is required."))?;
    let root = ctx.workspace.resolve_dir(str_arg(&args, "path"))?;
    let (mut found, more) = search_tools::glob(ctx, root, pattern, false, GLOB_LIMIT).await?;
    if found.is_empty() {
        return Ok(ToolOutcome::ok(format!("No files match {pattern}.")));
    }
    found.sort();
    let mut text = found
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    if more {
        let _ = write!(
            text,
            "\n\n(The first {GLOB_LIMIT} matches; give a narrower pattern or a path for the rest.)"
        );
    }
    Ok(ToolOutcome::ok(text))
}

fn webfetch() -> Arc<dyn Tool> {
    tool(
        "webfetch",
        "Fetch a URL and get its text, HTML stripped; at most 25,000 characters.",
        json!({"type": "object", "required": ["url"], "properties": {
            "url": {"type": "string", "description": "The URL to fetch (http or https)"},
            "prompt": {"type": "string", "description": "What you want from the page (for your own record)"}
        }}),
        |a, _| describe(ToolKind::Fetch, format!("Fetch {}", str_or_empty(a, "url"))),
        |a, c| Box::pin(run_webfetch(c, a)),
    )
}

async fn run_webfetch(ctx: &ToolContext, args: Value) -> ToolResult {
    let url = str_arg(&args, "url")
        .map(str::trim)
        .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        .ok_or_else(|| ToolError::message("`url` must start with http:// or https://."))?;
    let page = web_tools::fetch_page(ctx, "webfetch", url, &ctx.web)
        .await?
        .map_err(|e| ToolError::message(format!("Fetching {url} failed: {e}.")))?;
    let mut text = truncate_head(&page.text, PAGE_CHARS, usize::MAX);
    if page.cut || text.len() < page.text.len() {
        text.push_str("\n\n[The page goes on; this is its start.]");
    }
    Ok(ToolOutcome::ok(text))
}

fn websearch() -> Arc<dyn Tool> {
    tool(
        "websearch",
        "Search the web and get the top results (about 8) as Markdown: title, URL and snippet.",
        json!({"type": "object", "required": ["query"], "properties": {
            "query": {"type": "string", "description": "What to search for"}
        }}),
        |a, _| {
            describe(
                ToolKind::Fetch,
                format!("Search the web: {}", str_or_empty(a, "query")),
            )
        },
        |a, c| Box::pin(run_websearch(c, a)),
    )
}

async fn run_websearch(ctx: &ToolContext, args: Value) -> ToolResult {
    let query = str_arg(&args, "query")
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .ok_or_else(|| ToolError::message("`query` is required."))?;
    web_tools::authorize_search(ctx, "websearch", query).await?;
    let hits = web_tools::search_hits(ctx, query, SEARCH_RESULTS)
        .await?
        .map_err(|e| ToolError::message(format!("The search failed: {e}.")))?;
    if hits.is_empty() {
        return Ok(ToolOutcome::ok(format!("No results for \"{query}\".")));
    }
    let mut text = format!("## Results for \"{query}\"\n");
    for h in hits {
        let _ = write!(text, "\n- [{}]({})", h.title.trim(), h.url);
        let snippet = h.content.split_whitespace().collect::<Vec<_>>().join(" ");
        if !snippet.is_empty() {
            let _ = write!(text, "\n  {snippet}");
        }
    }
    Ok(ToolOutcome::ok(text))
}

fn shell_session() -> Arc<dyn Tool> {
    FnTool::plain(
        pi::WORDING,
        spec(
            "ShellSession",
            "Run a command in a bash session that persists across calls: cd, variables and functions stay. One command per call. The timeout is 30 s unless you give one (at most 600; use 120-300 for installs and builds); a command that runs past it resets the session. Long output keeps its head and tail, and a last line says [exit=N cwd=… timed_out=…].",
            json!({"type": "object", "required": ["command"], "properties": {
                "command": {"type": "string", "description": "The command to run"},
                "timeout": {"type": "integer", "description": "Seconds (default 30, at most 600)"}
            }}),
        ),
        |a, _| {
            let mut d = describe(ToolKind::Execute, str_or_empty(a, "command"));
            d.command = Some(str_or_empty(a, "command"));
            d
        },
        |a, c| Box::pin(run_shell(c, a)),
    )
}

async fn run_shell(ctx: &ToolContext, args: Value) -> ToolResult {
    let command = str_arg(&args, "command")
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| ToolError::message("`command` is required."))?;
    let secs = args
        .get("timeout")
        .and_then(Value::as_u64)
        .filter(|t| *t > 0)
        .unwrap_or(SHELL_DEFAULT_TIMEOUT)
        .min(SHELL_MAX_TIMEOUT);
    let run = ctx
        .shell
        .run(ctx, "ShellSession", command, Duration::from_secs(secs))
        .await?;
    let mut text = head_and_tail(run.output.trim_end_matches('\n'));
    if !text.is_empty() {
        text.push('\n');
    }
    let _ = write!(
        text,
        "[exit={} cwd={} timed_out={}]",
        run.exit_code.unwrap_or(-1),
        run.cwd,
        run.timed_out
    );
    let mut o = match run.exit_code {
        Some(0) => ToolOutcome::ok(text),
        _ => ToolOutcome::error(text),
    };
    o.user_output = run.output;
    o.exit_code = run.exit_code;
    Ok(o)
}

/// `output` within [`SHELL_EDGE_LINES`] lines from each end and [`SHELL_MAX_BYTES`].
fn head_and_tail(output: &str) -> String {
    let lines: Vec<&str> = output.split('\n').collect();
    let text = if lines.len() > 2 * SHELL_EDGE_LINES {
        format!(
            "{}\n[... {} lines omitted ...]\n{}",
            lines[..SHELL_EDGE_LINES].join("\n"),
            lines.len() - 2 * SHELL_EDGE_LINES,
            lines[lines.len() - SHELL_EDGE_LINES..].join("\n")
        )
    } else {
        output.to_string()
    };
    if text.len() <= SHELL_MAX_BYTES {
        return text;
    }
    let half = SHELL_MAX_BYTES / 2;
    let head = &text[..text.floor_char_boundary(half)];
    let tail = &text[text.ceil_char_boundary(text.len() - half)..];
    format!(
        "{head}\n[... {} bytes omitted ...]\n{tail}",
        text.len() - head.len() - tail.len()
    )
}

fn shell_session_cwd() -> Arc<dyn Tool> {
    tool(
        "ShellSessionCwd",
        "Print the working directory of the shell session.",
        no_arguments(),
        |_, _| describe(ToolKind::Read, "Shell session folder".into()),
        |_, c| {
            Box::pin(async move { Ok(ToolOutcome::ok(c.shell.cwd(c, "ShellSessionCwd").await?)) })
        },
    )
}

fn shell_session_reset() -> Arc<dyn Tool> {
    tool(
        "ShellSessionReset",
        "Stop the shell session and start a fresh one in the working directory. Use it only when the session stops answering.",
        no_arguments(),
        |_, _| describe(ToolKind::Execute, "Reset the shell session".into()),
        |_, c| {
            Box::pin(async move {
                Ok(ToolOutcome::ok(match c.shell.reset(c).await {
                    true => "The shell session was reset; the next command starts a fresh one.",
                    false => "No shell session was running; the next command starts one.",
                }))
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_its_head_and_tail() {
        let many: Vec<String> = (1..=250).map(|n| n.to_string()).collect();
        let text = head_and_tail(&many.join("\n"));
        assert!(text.starts_with("1\n2\n"));
        assert!(text.contains("\n100\n[... 50 lines omitted ...]\n151\n"));
        assert!(text.ends_with("\n250"));
        let wide = "x".repeat(SHELL_MAX_BYTES * 2);
        let cut = head_and_tail(&wide);
        assert!(cut.len() < SHELL_MAX_BYTES + 100 && cut.contains("bytes omitted"));
    }

    #[test]
    fn the_tools_are_the_originals_with_the_browser_when_one_was_found() {
        let names = |browser: bool| -> Vec<String> {
            table(browser)
                .spec_slice()
                .iter()
                .map(|s| s.name.clone())
                .collect()
        };
        let browser = [
            "BrowserNavigate",
            "BrowserClick",
            "BrowserType",
            "BrowserScroll",
            "BrowserExtract",
            "BrowserBack",
            "BrowserHistory",
        ];
        let with = names(true);
        assert_eq!(with[4..11], browser);
        let mut without = with.clone();
        without.drain(4..11);
        assert_eq!(names(false), without);
        // Unlisted, they still answer a call (with what to install).
        assert!(table(false).get("BrowserNavigate").is_some());
        assert_eq!(
            without,
            [
                "read",
                "bash",
                "edit",
                "write",
                "EvidenceAdd",
                "EvidenceGet",
                "EvidenceList",
                "glob",
                "webfetch",
                "websearch",
                "ShellSession",
                "ShellSessionCwd",
                "ShellSessionReset"
            ]
        );
    }
}
