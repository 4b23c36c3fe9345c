//! What the tools do to the page, each a DevTools call with a deadline: read its address,
//! title and text, find an element by CSS selector or in the accessibility tree by role and
//! name, click it with the mouse, fill it, press Enter, scroll, go back, and wait for the
//! navigation an action started.

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::accessibility::QueryAxTreeParams;
use chromiumoxide::cdp::browser_protocol::dom::ResolveNodeParams;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    InsertTextParams, MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameStartedLoading, EventLoadEventFired, GetNavigationHistoryParams,
    NavigateToHistoryEntryParams,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    CallArgument, CallFunctionOnParams, EvaluateParams, RemoteObjectId,
};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::types::Command;
use futures::StreamExt as _;
use serde_json::Value;

use super::chunks::{self, Target};

/// How long an action may take to start a navigation before it counts as one that did not.
const NAVIGATION_START: Duration = Duration::from_millis(800);
/// Names of an element's role that a "not found" lists at most.
const NAMES_LISTED: usize = 12;

/// Why a call to the page failed.
#[derive(Debug)]
pub(crate) enum Fault {
    /// No answer before the deadline.
    Timeout,
    /// An answer that is an error, in words for the model.
    Failed(String),
}

impl From<chromiumoxide::error::CdpError> for Fault {
    fn from(e: chromiumoxide::error::CdpError) -> Fault {
        match e {
            chromiumoxide::error::CdpError::Timeout => Fault::Timeout,
            other => Fault::Failed(other.to_string()),
        }
    }
}

/// Sends `cmd` to the page and waits at most `limit` for its answer.
async fn call<T: Command>(page: &Page, cmd: T, limit: Duration) -> Result<T::Response, Fault> {
    match tokio::time::timeout(limit, page.execute(cmd)).await {
        Ok(r) => Ok(r?.result),
        Err(_) => Err(Fault::Timeout),
    }
}

/// The value of the JavaScript expression `expr` in the page (promises awaited).
pub(crate) async fn eval(page: &Page, expr: &str, limit: Duration) -> Result<Value, Fault> {
    let params = EvaluateParams::builder()
        .expression(expr)
        .return_by_value(true)
        .await_promise(true)
        .build()
        .map_err(Fault::Failed)?;
    let r = call(page, params, limit).await?;
    if let Some(e) = r.exception_details {
        return Err(Fault::Failed(
            e.exception.and_then(|x| x.description).unwrap_or(e.text),
        ));
    }
    Ok(r.result.value.unwrap_or(Value::Null))
}

/// Calls `function` (JavaScript source) with the element as `this` and `args`; its value.
async fn on_element(
    page: &Page,
    element: &RemoteObjectId,
    function: &str,
    args: Vec<Value>,
    limit: Duration,
) -> Result<Value, Fault> {
    let mut params = CallFunctionOnParams::builder()
        .function_declaration(function)
        .object_id(element.clone())
        .return_by_value(true)
        .await_promise(true);
    for a in args {
        params = params.argument(CallArgument::builder().value(a).build());
    }
    let r = call(page, params.build().map_err(Fault::Failed)?, limit).await?;
    if let Some(e) = r.exception_details {
        return Err(Fault::Failed(
            e.exception.and_then(|x| x.description).unwrap_or(e.text),
        ));
    }
    Ok(r.result.value.unwrap_or(Value::Null))
}

/// The page's address and title.
pub(crate) async fn location(page: &Page, limit: Duration) -> Result<(String, String), Fault> {
    let v = eval(page, "[location.href, document.title]", limit).await?;
    let s = |i: usize| {
        v.get(i)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Ok((s(0), s(1)))
}

/// The page's readable text (`innerText`), tidied.
pub(crate) async fn text(page: &Page, limit: Duration) -> Result<String, Fault> {
    let v = eval(
        page,
        "(document.body || document.documentElement)?.innerText ?? ''",
        limit,
    )
    .await?;
    Ok(chunks::tidy(v.as_str().unwrap_or_default()))
}

/// The element `target` names, or why there is none (in words for the model).
pub(crate) async fn find(
    page: &Page,
    target: &Target,
    limit: Duration,
) -> Result<Result<RemoteObjectId, String>, Fault> {
    match target {
        Target::Selector(selector) => by_selector(page, selector, limit).await,
        Target::Role { role, name } => by_role(page, role, name.as_deref(), limit).await,
    }
}

async fn by_selector(
    page: &Page,
    selector: &str,
    limit: Duration,
) -> Result<Result<RemoteObjectId, String>, Fault> {
    let params = EvaluateParams::builder()
        .expression(format!("document.querySelector({})", Value::from(selector)))
        .build()
        .map_err(Fault::Failed)?;
    let r = call(page, params, limit).await?;
    if let Some(e) = r.exception_details {
        let why = e.exception.and_then(|x| x.description).unwrap_or(e.text);
        let why = why.lines().next().unwrap_or_default().to_string();
        return Ok(Err(format!(
            "`{selector}` is not a CSS selector the page takes: {why}"
        )));
    }
    Ok(r.result
        .object_id
        .ok_or_else(|| format!("No element on the page matches `{selector}`.")))
}

/// The first element the accessibility tree gives `role`, named `name` (exactly, else the
/// first whose name contains it) when a name is given.
async fn by_role(
    page: &Page,
    role: &str,
    name: Option<&str>,
    limit: Duration,
) -> Result<Result<RemoteObjectId, String>, Fault> {
    let doc = EvaluateParams::builder()
        .expression("document")
        .build()
        .map_err(Fault::Failed)?;
    let Some(root) = call(page, doc, limit).await?.result.object_id else {
        return Ok(Err("The page has no document.".into()));
    };
    let query = QueryAxTreeParams::builder()
        .object_id(root)
        .role(role)
        .build();
    let nodes = call(page, query, limit).await?.nodes;
    let named: Vec<(String, i64)> = nodes
        .iter()
        .filter(|n| !n.ignored)
        .filter_map(|n| {
            let id = n.backend_dom_node_id?;
            let label = n
                .name
                .as_ref()
                .and_then(|v| v.value.as_ref())
                .and_then(Value::as_str)
                .unwrap_or_default();
            Some((label.to_string(), *id.inner()))
        })
        .collect();
    let pick = match name {
        None => named.first(),
        Some(n) => named
            .iter()
            .find(|(label, _)| chunks::same_name(label, n))
            .or_else(|| {
                named
                    .iter()
                    .find(|(label, _)| chunks::name_within(label, n))
            }),
    };
    let Some((_, id)) = pick else {
        return Ok(Err(not_found(role, name, &named)));
    };
    let resolve = ResolveNodeParams::builder()
        .backend_node_id(chromiumoxide::cdp::browser_protocol::dom::BackendNodeId::new(*id))
        .build();
    let object = call(page, resolve, limit).await?.object;
    Ok(object
        .object_id
        .ok_or_else(|| format!("The {role} was found but could not be reached.")))
}

fn not_found(role: &str, name: Option<&str>, named: &[(String, i64)]) -> String {
    if named.is_empty() {
        return format!(
            "No element with role `{role}` is on the page (roles are ARIA's: button, link, textbox, checkbox, heading, …)."
        );
    }
    let names: Vec<String> = named
        .iter()
        .take(NAMES_LISTED)
        .map(|(n, _)| format!("\"{}\"", n.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect();
    let more = match named.len() > NAMES_LISTED {
        true => format!(" and {} more", named.len() - NAMES_LISTED),
        false => String::new(),
    };
    format!(
        "No {role} named \"{}\" is on the page. Its {role}s: {}{more}.",
        name.unwrap_or_default(),
        names.join(", ")
    )
}

/// Clicks the element: the mouse at its centre once it is scrolled into view, or the
/// element's own `click()` when it has no box or something else covers that point.
pub(crate) async fn click(
    page: &Page,
    element: &RemoteObjectId,
    limit: Duration,
) -> Result<(), Fault> {
    const AIM: &str = "function() {
        this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
        const r = this.getBoundingClientRect();
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        const hit = document.elementFromPoint(x, y);
        return [x, y, r.width > 0 && r.height > 0 && hit !== null && this.contains(hit)];
    }";
    let aim = on_element(page, element, AIM, vec![], limit).await?;
    let (x, y) = (
        aim[0].as_f64().unwrap_or(0.0),
        aim[1].as_f64().unwrap_or(0.0),
    );
    if aim[2] != Value::Bool(true) {
        on_element(page, element, "function() { this.click(); }", vec![], limit).await?;
        return Ok(());
    }
    for kind in [
        DispatchMouseEventType::MouseMoved,
        DispatchMouseEventType::MousePressed,
        DispatchMouseEventType::MouseReleased,
    ] {
        let mut e = DispatchMouseEventParams::builder()
            .r#type(kind.clone())
            .x(x)
            .y(y);
        if kind != DispatchMouseEventType::MouseMoved {
            e = e.button(MouseButton::Left).click_count(1);
        }
        call(page, e.build().map_err(Fault::Failed)?, limit).await?;
    }
    Ok(())
}

/// Empties the form field and types `text` into it; None, or why it cannot be filled.
pub(crate) async fn fill(
    page: &Page,
    element: &RemoteObjectId,
    text: &str,
    limit: Duration,
) -> Result<Option<String>, Fault> {
    const FOCUS: &str = "function() {
        this.scrollIntoView({block: 'center', behavior: 'instant'});
        if (this.isContentEditable) {
            this.focus();
            document.getSelection().selectAllChildren(this);
            document.execCommand('delete');
            return null;
        }
        const tag = this.tagName.toLowerCase();
        if (!['input', 'textarea'].includes(tag) || this.disabled || this.readOnly) {
            return `<${tag}> is not a text field that can be filled`;
        }
        this.focus();
        this.value = '';
        this.dispatchEvent(new Event('input', {bubbles: true}));
        return null;
    }";
    let refused = on_element(page, element, FOCUS, vec![], limit).await?;
    if let Some(why) = refused.as_str() {
        return Ok(Some(why.to_string()));
    }
    if !text.is_empty() {
        call(page, InsertTextParams::new(text), limit).await?;
    }
    let changed = "function() { this.dispatchEvent(new Event('change', {bubbles: true})); }";
    on_element(page, element, changed, vec![], limit).await?;
    Ok(None)
}

/// Presses and releases Enter in the focused element (a form field submits its form).
pub(crate) async fn press_enter(page: &Page, limit: Duration) -> Result<(), Fault> {
    for kind in [DispatchKeyEventType::KeyDown, DispatchKeyEventType::KeyUp] {
        let mut e = DispatchKeyEventParams::builder()
            .r#type(kind.clone())
            .key("Enter")
            .code("Enter")
            .windows_virtual_key_code(13)
            .native_virtual_key_code(13);
        if kind == DispatchKeyEventType::KeyDown {
            e = e.text("\r").unmodified_text("\r");
        }
        call(page, e.build().map_err(Fault::Failed)?, limit).await?;
    }
    Ok(())
}

/// Scrolls the window by `dy` pixels; where the view then starts, the page's height and the
/// view's height, in pixels.
pub(crate) async fn scroll(page: &Page, dy: i64, limit: Duration) -> Result<[i64; 3], Fault> {
    let v = eval(
        page,
        &format!(
            "(() => {{ window.scrollBy({{top: {dy}, behavior: 'instant'}}); const d = document.scrollingElement || document.documentElement; return [Math.round(window.scrollY), Math.round(d.scrollHeight), Math.round(window.innerHeight)]; }})()"
        ),
        limit,
    )
    .await?;
    let n = |i: usize| v.get(i).and_then(Value::as_i64).unwrap_or(0);
    Ok([n(0), n(1), n(2)])
}

/// Goes one entry back in the page's history; false when it is at its first entry.
pub(crate) async fn back(page: &Page, limit: Duration) -> Result<bool, Fault> {
    let h = call(page, GetNavigationHistoryParams::default(), limit).await?;
    let Some(previous) = usize::try_from(h.current_index - 1)
        .ok()
        .and_then(|i| h.entries.get(i))
    else {
        return Ok(false);
    };
    // The blank page the browser opened with is not a page the model visited.
    if previous.url == "about:blank" {
        return Ok(false);
    }
    call(page, NavigateToHistoryEntryParams::new(previous.id), limit).await?;
    Ok(true)
}

/// Watches the main frame from before an action, to wait for a navigation it starts.
pub(crate) struct Watch {
    started: EventStream<EventFrameStartedLoading>,
    loaded: EventStream<EventLoadEventFired>,
}

impl Watch {
    pub(crate) async fn new(page: &Page, limit: Duration) -> Result<Watch, Fault> {
        let listen = async {
            Ok::<_, chromiumoxide::error::CdpError>(Watch {
                started: page.event_listener::<EventFrameStartedLoading>().await?,
                loaded: page.event_listener::<EventLoadEventFired>().await?,
            })
        };
        match tokio::time::timeout(limit, listen).await {
            Ok(w) => Ok(w?),
            Err(_) => Err(Fault::Timeout),
        }
    }

    /// Waits for the page to load if the action started a navigation (within
    /// [`NAVIGATION_START`]); false when it started one that did not load within `limit`.
    pub(crate) async fn settle(mut self, page: &Page, limit: Duration) -> bool {
        let main = tokio::time::timeout(limit, page.mainframe())
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
        let started = tokio::time::timeout(NAVIGATION_START, async {
            while let Some(e) = self.started.next().await {
                if main.as_ref().is_none_or(|m| *m == e.frame_id) {
                    return true;
                }
            }
            false
        })
        .await
        .unwrap_or(false);
        if !started {
            return true;
        }
        tokio::time::timeout(limit, self.loaded.next())
            .await
            .is_ok()
    }
}
