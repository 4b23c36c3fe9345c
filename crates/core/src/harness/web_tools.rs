//! The web tools under their originals' names: Kimi Code's `FetchURL` and `WebSearch`, Claude
//! Code's `WebFetch` and `WebSearch`. The fetching and searching is `tools::web`'s.

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;

use crate::sandbox::Intent;
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, Wording, spec, str_arg, str_or_empty,
};
use crate::tools::truncate::truncate_head;
use crate::tools::web::{self, FetchError, Page};
use crate::tools::{CallDescription, ToolContext, ToolOutcome};

/// What a page shows the model at most (Kimi Code's cap).
const MAX_PAGE_CHARS: usize = 50_000;
/// Search results a call returns by default and at most.
const DEFAULT_RESULTS: usize = 8;
const MAX_RESULTS: usize = 20;

/// Whose texts a tool uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Kimi,
    Claude,
}

fn describe_fetch(a: &Value, _: &crate::workspace::Workspace) -> CallDescription {
    CallDescription::new(
        ToolKind::Fetch,
        format!("Fetch {}", str_or_empty(a, "url")),
        vec![],
    )
}

fn describe_search(a: &Value, _: &crate::workspace::Workspace) -> CallDescription {
    CallDescription::new(
        ToolKind::Fetch,
        format!("Search the web: {}", str_or_empty(a, "query")),
        vec![],
    )
}

/// Kimi Code's `FetchURL`.
pub(crate) fn fetch_url(wording: Wording) -> Arc<dyn Tool> {
    FnTool::plain(
        wording,
        spec(
            "FetchURL",
            "Fetch a web page (http or https) and get its main text as Markdown. Use it to read documentation, issues or articles the user points to or a search found. Very large pages are cut.",
            json!({"type": "object", "properties": {
                "url": {"type": "string", "description": "The URL to fetch"}
            }, "required": ["url"], "additionalProperties": false}),
        ),
        describe_fetch,
        |a, c| Box::pin(run_fetch(c, a, Flavor::Kimi)),
    )
}

/// Claude Code's `WebFetch`.
pub(crate) fn web_fetch(wording: Wording) -> Arc<dyn Tool> {
    FnTool::plain(
        wording,
        spec(
            "WebFetch",
            "Fetch a web page (http or https) and read it as Markdown to answer `prompt`. HTTP URLs stay HTTP; very large pages are cut. Read-only: it never changes anything.",
            json!({"type": "object", "properties": {
                "url": {"type": "string", "format": "uri", "description": "The URL to fetch content from"},
                "prompt": {"type": "string", "description": "What to find out from the page"}
            }, "required": ["url", "prompt"], "additionalProperties": false}),
        ),
        describe_fetch,
        |a, c| Box::pin(run_fetch(c, a, Flavor::Claude)),
    )
}

/// `WebSearch` (both harnesses name it so; Claude Code's takes domain filters).
pub(crate) fn web_search(flavor: Flavor, wording: Wording) -> Arc<dyn Tool> {
    let parameters = match flavor {
        Flavor::Kimi => json!({"type": "object", "properties": {
            "query": {"type": "string", "minLength": 1, "description": "What to search for"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": DEFAULT_RESULTS, "description": "How many results"}
        }, "required": ["query"], "additionalProperties": false}),
        Flavor::Claude => json!({"type": "object", "properties": {
            "query": {"type": "string", "minLength": 2, "description": "The search query to use"},
            "allowed_domains": {"type": "array", "items": {"type": "string"}, "description": "Only include results from these domains"},
            "blocked_domains": {"type": "array", "items": {"type": "string"}, "description": "Never include results from these domains"}
        }, "required": ["query"], "additionalProperties": false}),
    };
    let run: crate::tools::table::RunFn = match flavor {
        Flavor::Kimi => |a, c| Box::pin(run_search(c, a, Flavor::Kimi)),
        Flavor::Claude => |a, c| Box::pin(run_search(c, a, Flavor::Claude)),
    };
    FnTool::plain(
        wording,
        spec(
            "WebSearch",
            "Search the web and get titles, URLs and snippets. Use it for facts newer than your training or outside the repository; fetch a result to read it. Cite the URLs you use.",
            parameters,
        ),
        describe_search,
        run,
    )
}

/// The answer to Moonshot's builtin `$web_search`: the call's own arguments, which tell
/// Moonshot to search on the next request. Authorized like any search, so `[web]` and the
/// network-off modes hold.
pub(crate) fn moonshot_search() -> Arc<dyn Tool> {
    FnTool::plain(
        Wording {
            prefix: "",
            wrap: None,
        },
        spec(
            crate::model::chat::MOONSHOT_SEARCH,
            "Moonshot's builtin web search (declared as a builtin_function).",
            json!({"type": "object"}),
        ),
        describe_search,
        |a, c| Box::pin(run_moonshot_search(c, a)),
    )
}

async fn run_moonshot_search(ctx: &ToolContext, args: Value) -> ToolResult {
    let query = str_or_empty(&args, "query").to_string();
    ctx.authorize(
        Intent::Fetch {
            target: query.clone(),
            host: "api.moonshot.ai".into(),
        },
        crate::model::chat::MOONSHOT_SEARCH,
        ToolKind::Fetch,
        &format!("Search the web: {query}"),
        vec![],
    )
    .await?;
    Ok(ToolOutcome::ok(args.to_string()))
}

async fn run_fetch(ctx: &ToolContext, args: Value, flavor: Flavor) -> ToolResult {
    let Some(url) = str_arg(&args, "url").filter(|u| !u.trim().is_empty()) else {
        return Err(ToolError::message("`url` is required."));
    };
    let tool = match flavor {
        Flavor::Kimi => "FetchURL",
        Flavor::Claude => "WebFetch",
    };
    let page = fetch_page(ctx, tool, url, &ctx.web)
        .await?
        .map_err(|e| fetch_error(tool, e))?;
    Ok(ToolOutcome::ok(page_text(&page, flavor, &args)))
}

/// Asks the policy about fetching `url` as tool `tool`, then fetches it with `cfg`. The
/// outer error is a refusal or a cancel; the inner one, the fetch's, for the caller to word.
pub(crate) async fn fetch_page(
    ctx: &ToolContext,
    tool: &str,
    url: &str,
    cfg: &web::WebConfig,
) -> Result<Result<Page, FetchError>, ToolError> {
    ctx.authorize_fetch(tool, url, &format!("Fetch {url}"))
        .await?;
    tokio::select! {
        f = web::fetch(cfg, url) => Ok(f),
        _ = ctx.cancel.cancelled() => Err(ToolError::message("The fetch was cancelled.")),
    }
}

fn fetch_error(tool: &str, e: FetchError) -> ToolError {
    match e {
        FetchError::Status { status, url } => {
            ToolError::message(format!("{tool} failed with HTTP {status} for {url}."))
        }
        other => ToolError::message(format!("{tool} failed: {other}.")),
    }
}

fn page_text(page: &Page, flavor: Flavor, args: &Value) -> String {
    let cite = match &page.title {
        Some(t) => format!("[{t}]({})", page.url),
        None => page.url.clone(),
    };
    let mut text = match flavor {
        Flavor::Kimi => format!(
            "Fetched {cite} ({}). Cite it as a Markdown link when you use it.\n\n",
            page.content_type
        ),
        Flavor::Claude => format!(
            "Fetched {cite} ({}). Answer from it: {}\n\n",
            page.content_type,
            str_or_empty(args, "prompt")
        ),
    };
    text.push_str(&truncate_head(&page.text, MAX_PAGE_CHARS, usize::MAX));
    if page.cut {
        text.push_str(
            "\n\n[The page is longer than the fetch reads ([web] max_bytes); this is its start.]",
        );
    }
    text
}

async fn run_search(ctx: &ToolContext, args: Value, flavor: Flavor) -> ToolResult {
    let Some(query) = str_arg(&args, "query")
        .map(str::trim)
        .filter(|q| !q.is_empty())
    else {
        return Err(ToolError::message("`query` is required."));
    };
    authorize_search(ctx, "WebSearch", query).await?;
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_RESULTS, |n| n.clamp(1, MAX_RESULTS as u64) as usize);
    let list = |k: &str| -> Vec<String> {
        args.get(k)
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(|d| d.as_str())
                    .map(|d| d.to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (allowed, blocked) = (list("allowed_domains"), list("blocked_domains"));
    // Domain rules drop results after the search: ask for more then.
    let filtered = !(allowed.is_empty()
        && blocked.is_empty()
        && ctx.web.allowed_domains.is_empty()
        && ctx.web.denied_domains.is_empty());
    let ask = if filtered { MAX_RESULTS } else { limit };
    let hits: Vec<_> = search_hits(ctx, query, ask)
        .await?
        .map_err(|e| ToolError::message(format!("WebSearch failed: {e}.")))?
        .into_iter()
        .filter(|h| {
            let host = reqwest::Url::parse(&h.url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
                .unwrap_or_default();
            let under = |d: &String| host == *d || host.ends_with(&format!(".{d}"));
            (allowed.is_empty() || allowed.iter().any(under)) && !blocked.iter().any(under)
        })
        .take(limit)
        .collect();
    if hits.is_empty() {
        return Ok(ToolOutcome::ok(format!("No results for \"{query}\".")));
    }
    let mut text = format!("Web search results for \"{query}\":\n");
    for (i, h) in hits.iter().enumerate() {
        let _ = write!(text, "\n{}. [{}]({})", i + 1, h.title.trim(), h.url);
        let snippet = h.content.split_whitespace().collect::<Vec<_>>().join(" ");
        if !snippet.is_empty() {
            let _ = write!(text, "\n   {snippet}");
        }
    }
    if flavor == Flavor::Claude {
        text.push_str("\n\nCite the sources you use as Markdown links.");
    }
    Ok(ToolOutcome::ok(text))
}

/// Asks the policy about searching the web for `query` as tool `tool`.
pub(crate) async fn authorize_search(
    ctx: &ToolContext,
    tool: &str,
    query: &str,
) -> Result<(), ToolError> {
    let host = match &ctx.web.search {
        Some(web::SearchBackend::Searx(u) | web::SearchBackend::KimiCode { url: u, .. }) => {
            u.host_str().unwrap_or_default().to_string()
        }
        _ => String::new(),
    };
    ctx.authorize(
        Intent::Fetch {
            target: query.to_string(),
            host,
        },
        tool,
        ToolKind::Fetch,
        &format!("Search the web: {query}"),
        vec![],
    )
    .await?;
    Ok(())
}

/// Up to `limit` hits for `query` from the configured backend (asked about already). The
/// outer error is a cancel; the inner one, the search's.
pub(crate) async fn search_hits(
    ctx: &ToolContext,
    query: &str,
    limit: usize,
) -> Result<Result<Vec<web::SearchHit>, String>, ToolError> {
    tokio::select! {
        f = web::search(&ctx.web, query, limit) => Ok(f.map_err(|e| e.to_string())),
        _ = ctx.cancel.cancelled() => Err(ToolError::message("The search was cancelled.")),
    }
}
