//! little-coder's seven Browser tools, with the seed's names and schemas, on the session's
//! headless Chromium (`tools::browser`). Offered only when a browser was found; a call that
//! comes anyway (a resumed session) says what to install.

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::sync::Arc;

use crate::harness::pi::tools as pi;
use crate::harness::session_tools::describe;
use crate::tools::browser::{Target, parse_cursor, parse_scroll};
use crate::tools::table::{
    DescribeFn, FnTool, RunFn, Tool, ToolError, ToolResult, spec, str_arg, str_or_empty,
};
use crate::tools::{ToolContext, ToolOutcome};

/// The seven, in the seed's order.
pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        navigate(),
        click(),
        type_text(),
        scroll(),
        extract(),
        back(),
        history(),
    ]
}

fn tool(
    name: &str,
    description: &str,
    parameters: Value,
    describe: DescribeFn,
    run: RunFn,
) -> Arc<dyn Tool> {
    FnTool::plain(
        pi::WORDING,
        spec(name, description, parameters),
        describe,
        run,
    )
}

fn ok(text: Result<String, ToolError>) -> ToolResult {
    text.map(ToolOutcome::ok)
}

/// A call with no browser on the machine fails before anything else, naming what to install.
fn browser_found(ctx: &ToolContext) -> Result<(), ToolError> {
    crate::tools::browser::find_executable(ctx.web.browser.as_deref())
        .map(drop)
        .map_err(ToolError::message)
}

fn navigate() -> Arc<dyn Tool> {
    tool(
        "BrowserNavigate",
        "Navigate the browser to a URL. Must start with http:// or https://.",
        json!({"type":"object","required":["url"],"properties":{"url":{"type":"string","description":"URL to navigate to"}}}),
        |a, _| {
            describe(
                ToolKind::Fetch,
                format!("Browse {}", str_or_empty(a, "url")),
            )
        },
        |a, c| {
            Box::pin(async move {
                let url = str_arg(&a, "url")
                    .map(str::trim)
                    .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
                    .ok_or_else(|| {
                        ToolError::message("`url` must start with http:// or https://.")
                    })?;
                browser_found(c)?;
                ok(c.browser.navigate(c, "BrowserNavigate", url).await)
            })
        },
    )
}

fn click() -> Arc<dyn Tool> {
    tool(
        "BrowserClick",
        "Click an element by CSS selector, or by ARIA role (with optional accessible name).",
        json!({"type":"object","properties":{"selector":{"type":"string","description":"CSS selector"},"role":{"type":"string","description":"ARIA role (e.g. button, link)"},"name":{"type":"string","description":"Accessible name for role"}}}),
        |a, _| {
            let what = Target::parse(a).map_or_else(|_| "an element".into(), |t| t.describe());
            describe(ToolKind::Fetch, format!("Click {what}"))
        },
        |a, c| {
            Box::pin(async move {
                let target = Target::parse(&a).map_err(ToolError::message)?;
                browser_found(c)?;
                ok(c.browser.click(c, "BrowserClick", &target).await)
            })
        },
    )
}

fn type_text() -> Arc<dyn Tool> {
    tool(
        "BrowserType",
        "Fill a form field by selector. Optionally submit by pressing Enter.",
        json!({"type":"object","required":["selector","text"],"properties":{"selector":{"type":"string","description":"CSS selector of the input"},"text":{"type":"string","description":"Text to type"},"submit":{"type":"boolean","description":"Press Enter after typing"}}}),
        |a, _| {
            describe(
                ToolKind::Fetch,
                format!("Type into {}", str_or_empty(a, "selector")),
            )
        },
        |a, c| {
            Box::pin(async move {
                let selector = str_arg(&a, "selector")
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| ToolError::message("`selector` is required."))?;
                let text =
                    str_arg(&a, "text").ok_or_else(|| ToolError::message("`text` is required."))?;
                let submit = a.get("submit").and_then(Value::as_bool).unwrap_or(false);
                browser_found(c)?;
                ok(c.browser
                    .fill(c, "BrowserType", selector, text, submit)
                    .await)
            })
        },
    )
}

fn scroll() -> Arc<dyn Tool> {
    tool(
        "BrowserScroll",
        "Scroll the current page up or down by a pixel amount (default 800px down).",
        json!({"type":"object","properties":{"direction":{"type":"string","description":"up or down"},"amount":{"type":"integer","description":"Pixels (default 800)"}}}),
        |a, _| {
            let way = str_arg(a, "direction").unwrap_or("down");
            describe(ToolKind::Fetch, format!("Scroll the page {way}"))
        },
        |a, c| {
            Box::pin(async move {
                let dy = parse_scroll(a.get("direction"), a.get("amount"))
                    .map_err(ToolError::message)?;
                browser_found(c)?;
                ok(c.browser.scroll(c, "BrowserScroll", dy).await)
            })
        },
    )
}

fn extract() -> Arc<dyn Tool> {
    tool(
        "BrowserExtract",
        "Extract the current page's readable text. Returns a 2KB chunk with cursor+has_more so one page can't swamp context. Call repeatedly with the last 'next=' cursor.",
        json!({"type":"object","properties":{"cursor":{"type":"string","description":"Byte offset to start from (default 0)"}}}),
        |_, _| describe(ToolKind::Fetch, "Read the browser's page".into()),
        |a, c| {
            Box::pin(async move {
                let cursor = parse_cursor(a.get("cursor")).map_err(ToolError::message)?;
                browser_found(c)?;
                ok(c.browser.extract(c, cursor).await)
            })
        },
    )
}

fn back() -> Arc<dyn Tool> {
    tool(
        "BrowserBack",
        "Navigate back in the browser's history.",
        json!({"type":"object","properties":{}}),
        |_, _| describe(ToolKind::Fetch, "Browser: back".into()),
        |_, c| {
            Box::pin(async move {
                browser_found(c)?;
                ok(c.browser.back(c, "BrowserBack").await)
            })
        },
    )
}

fn history() -> Arc<dyn Tool> {
    tool(
        "BrowserHistory",
        "List the last 20 URLs visited in this session.",
        json!({"type":"object","properties":{}}),
        |_, _| describe(ToolKind::Fetch, "Browser history".into()),
        |_, c| Box::pin(async move { Ok(ToolOutcome::ok(c.browser.history().await)) }),
    )
}
