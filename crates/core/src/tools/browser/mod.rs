//! A real browser for the model (little-coder's Browser tools): one headless Chromium per
//! session, started on the first call and stopped with the session, driven over the DevTools
//! protocol with `chromiumoxide`. Every request it makes obeys `[web]` (`guard.rs`), and so
//! does every connection (`proxy.rs`). A call that can reach the network is asked about as a
//! fetch of the page's host; every call waits at most `[web] timeout_secs` for each DevTools
//! answer and ends on cancellation. A browser that crashed or stopped answering is dropped,
//! and the next call starts a fresh one.
//!
//! Calls hold the session's browser for their whole run, taken first thing: the calls of one
//! response run together (they are fetches), and the lock's queue keeps them in call order.

mod chunks;
mod find;
mod guard;
mod launch;
mod page;
mod proxy;

use std::sync::Arc;
use std::time::Duration;

pub(crate) use chunks::{Target, parse_cursor, parse_scroll};
pub(crate) use find::find_executable;
use page::Fault;

use crate::tools::ToolContext;
use crate::tools::table::ToolError;

/// The session's browser: not started until a call needs it.
#[derive(Default)]
pub(crate) struct Browser {
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    running: Option<launch::Running>,
    history: chunks::History,
    /// The page the browser shows, as the last call left it.
    url: Option<String>,
    /// The text the last extract read, with its page's address: later cursors walk it.
    text: Option<(String, String)>,
}

/// An action's effect on where the page is, for its result.
struct Arrival {
    moved: bool,
    loaded: bool,
    /// The navigation ended on Chromium's error page.
    failed: bool,
    url: String,
    title: String,
    blocked: Vec<guard::Blocked>,
}

impl Browser {
    /// BrowserNavigate: opens `url` (http or https), after the policy's say-so for its host.
    /// The page's address and title, then the first chunk of its text.
    pub(crate) async fn navigate(
        &self,
        ctx: &ToolContext,
        tool: &str,
        url: &str,
    ) -> Result<String, ToolError> {
        let mut state = self.state.lock().await;
        ctx.authorize_fetch(tool, url, &format!("Browse {url}"))
            .await?;
        // A refused address never starts a browser.
        if let guard::Check::Refused(why) | guard::Check::Unreachable(why) =
            guard::check(&ctx.web, url).await
        {
            return Err(ToolError::message(format!(
                "Navigating to {url} failed: {why}."
            )));
        }
        let limit = ctx.web.timeout;
        let mut note = String::new();
        if state.running.as_ref().is_some_and(launch::Running::gone) {
            state.stop();
            note = "(The browser had stopped since the last call; this is a fresh one.)\n".into();
        }
        cancellable(ctx, state.navigate(ctx, url, limit, note)).await
    }

    /// BrowserClick.
    pub(crate) async fn click(
        &self,
        ctx: &ToolContext,
        tool: &str,
        target: &Target,
    ) -> Result<String, ToolError> {
        let mut state = self.state.lock().await;
        let what = target.describe();
        state
            .authorize_here(ctx, tool, &format!("Click {what}"))
            .await?;
        cancellable(ctx, async {
            let limit = ctx.web.timeout;
            let (page, refusals) = state.page()?;
            let element = match page::find(&page, target, limit).await {
                Ok(Ok(e)) => e,
                Ok(Err(why)) => return Err(ToolError::message(why)),
                Err(f) => return Err(state.fault(f, limit).await),
            };
            refusals.take();
            let watch = match page::Watch::new(&page, limit).await {
                Ok(w) => w,
                Err(f) => return Err(state.fault(f, limit).await),
            };
            if let Err(f) = page::click(&page, &element, limit).await {
                return Err(state.fault(f, limit).await);
            }
            let arrival = state.arrive(&page, &refusals, Some(watch), limit).await?;
            Ok(format!("Clicked {what}.{}", arrival.render()))
        })
        .await
    }

    /// BrowserType: fills the field `selector` names with `text`, then presses Enter when
    /// `submit` is set.
    pub(crate) async fn fill(
        &self,
        ctx: &ToolContext,
        tool: &str,
        selector: &str,
        text: &str,
        submit: bool,
    ) -> Result<String, ToolError> {
        let mut state = self.state.lock().await;
        state
            .authorize_here(ctx, tool, &format!("Type into `{selector}`"))
            .await?;
        cancellable(ctx, async {
            let limit = ctx.web.timeout;
            let (page, refusals) = state.page()?;
            let target = Target::Selector(selector.to_string());
            let element = match page::find(&page, &target, limit).await {
                Ok(Ok(e)) => e,
                Ok(Err(why)) => return Err(ToolError::message(why)),
                Err(f) => return Err(state.fault(f, limit).await),
            };
            match page::fill(&page, &element, text, limit).await {
                Ok(None) => {}
                Ok(Some(why)) => {
                    return Err(ToolError::message(format!("`{selector}` matches {why}.")));
                }
                Err(f) => return Err(state.fault(f, limit).await),
            }
            let typed = format!(
                "Typed {} characters into `{selector}`",
                text.chars().count()
            );
            if !submit {
                state.text = None;
                return Ok(format!("{typed}."));
            }
            refusals.take();
            let watch = match page::Watch::new(&page, limit).await {
                Ok(w) => w,
                Err(f) => return Err(state.fault(f, limit).await),
            };
            if let Err(f) = page::press_enter(&page, limit).await {
                return Err(state.fault(f, limit).await);
            }
            let arrival = state.arrive(&page, &refusals, Some(watch), limit).await?;
            Ok(format!("{typed} and pressed Enter.{}", arrival.render()))
        })
        .await
    }

    /// BrowserScroll: `dy` pixels, down when positive.
    pub(crate) async fn scroll(
        &self,
        ctx: &ToolContext,
        tool: &str,
        dy: i64,
    ) -> Result<String, ToolError> {
        let mut state = self.state.lock().await;
        let way = if dy < 0 { "up" } else { "down" };
        let title = format!("Scroll {way} {} px", dy.abs());
        state.authorize_here(ctx, tool, &title).await?;
        cancellable(ctx, async {
            let limit = ctx.web.timeout;
            let (page, _) = state.page()?;
            let (before, after) = match page::scroll(&page, 0, limit).await {
                Ok(b) => match page::scroll(&page, dy, limit).await {
                    Ok(a) => (b, a),
                    Err(f) => return Err(state.fault(f, limit).await),
                },
                Err(f) => return Err(state.fault(f, limit).await),
            };
            let [top, height, view] = after;
            let shown = format!(
                "{top}-{} of the page's {height} px",
                (top + view).min(height.max(view))
            );
            if before[0] == top {
                let end = if dy < 0 { "top" } else { "bottom" };
                return Ok(format!(
                    "The page did not move: the view is already at the {end} ({shown})."
                ));
            }
            Ok(format!(
                "Scrolled {way} {} px: the view now shows {shown}.",
                (top - before[0]).abs()
            ))
        })
        .await
    }

    /// BrowserExtract: the chunk of the page's text at `cursor`.
    pub(crate) async fn extract(
        &self,
        ctx: &ToolContext,
        cursor: usize,
    ) -> Result<String, ToolError> {
        let mut state = self.state.lock().await;
        cancellable(ctx, async {
            let limit = ctx.web.timeout;
            let (page, _) = state.page()?;
            let (url, _) = match page::location(&page, limit).await {
                Ok(l) => l,
                Err(f) => return Err(state.fault(f, limit).await),
            };
            let fresh = cursor == 0 || state.text.as_ref().is_none_or(|(u, _)| *u != url);
            if fresh {
                match page::text(&page, limit).await {
                    Ok(t) => state.text = Some((url, t)),
                    Err(f) => return Err(state.fault(f, limit).await),
                }
            }
            let text = state.text.as_ref().map(|(_, t)| t.as_str()).unwrap_or("");
            Ok(chunks::chunk(text, cursor)
                .map_err(ToolError::message)?
                .render())
        })
        .await
    }

    /// BrowserBack.
    pub(crate) async fn back(&self, ctx: &ToolContext, tool: &str) -> Result<String, ToolError> {
        let mut state = self.state.lock().await;
        state.authorize_here(ctx, tool, "Go back").await?;
        cancellable(ctx, async {
            let limit = ctx.web.timeout;
            let (page, refusals) = state.page()?;
            refusals.take();
            let watch = match page::Watch::new(&page, limit).await {
                Ok(w) => w,
                Err(f) => return Err(state.fault(f, limit).await),
            };
            match page::back(&page, limit).await {
                Ok(true) => {}
                Ok(false) => {
                    return Err(ToolError::message(
                        "There is no earlier page to go back to in this browser.",
                    ));
                }
                Err(f) => return Err(state.fault(f, limit).await),
            }
            let arrival = state.arrive(&page, &refusals, Some(watch), limit).await?;
            Ok(format!(
                "Went back to {}\nTitle: {}{}",
                arrival.url,
                arrival.title,
                arrival.notes()
            ))
        })
        .await
    }

    /// BrowserHistory: the pages this session's browser arrived at, the last 20.
    pub(crate) async fn history(&self) -> String {
        self.state.lock().await.history.render()
    }
}

impl State {
    fn stop(&mut self) {
        self.running = None;
        self.url = None;
        self.text = None;
    }

    /// Asks the policy about acting on the page the browser shows, as a fetch of its host.
    async fn authorize_here(
        &self,
        ctx: &ToolContext,
        tool: &str,
        title: &str,
    ) -> Result<(), ToolError> {
        let Some(url) = self.url.clone() else {
            return Err(ToolError::message(
                "No page is open in the browser: open one with BrowserNavigate first.",
            ));
        };
        ctx.authorize_fetch(tool, &url, &format!("{title} on {url}"))
            .await
            .map_err(ToolError::from)
    }

    /// The page, once a running browser shows one; an error when it stopped.
    fn page(&mut self) -> Result<(chromiumoxide::Page, Arc<guard::Refusals>), ToolError> {
        match &self.running {
            Some(r) if r.gone() => {
                let tail = r.stderr_tail();
                self.stop();
                Err(ToolError::message(format!(
                    "The browser stopped since the last call (it may have crashed){}. The next Browser call starts a fresh one: open the page again with BrowserNavigate.",
                    said(&tail)
                )))
            }
            Some(r) => Ok((r.page.clone(), r.refusals.clone())),
            None => Err(ToolError::message(
                "No page is open in the browser: open one with BrowserNavigate first.",
            )),
        }
    }

    async fn navigate(
        &mut self,
        ctx: &ToolContext,
        url: &str,
        limit: Duration,
        note: String,
    ) -> Result<String, ToolError> {
        if self.running.is_none() {
            let exe = find_executable(ctx.web.browser.as_deref()).map_err(ToolError::message)?;
            let started = launch::start(&exe, &ctx.web).await;
            self.running =
                Some(started.map_err(|e| {
                    ToolError::message(format!("The browser could not start: {e}."))
                })?);
        }
        let (page, refusals) = self.page()?;
        refusals.take();
        self.text = None;
        let went = tokio::time::timeout(limit + Duration::from_secs(2), page.goto(url)).await;
        let timed_out = matches!(
            went,
            Err(_) | Ok(Err(chromiumoxide::error::CdpError::Timeout))
        );
        if let Ok(Err(e)) = &went
            && !timed_out
        {
            let blocked = refusals.take();
            let why = match blocked.iter().find(|b| b.document) {
                Some(b) => format!("{} ({})", b.why, b.url),
                None => e.to_string(),
            };
            return Err(ToolError::message(format!(
                "Navigating to {url} failed: {why}."
            )));
        }
        // A page that is slow to load is still a page: what has loaded is shown.
        let mut arrival = self.arrive(&page, &refusals, None, limit).await?;
        arrival.loaded = !timed_out;
        let first = match page::text(&page, limit).await {
            Ok(t) => {
                let shown = chunks::chunk(&t, 0).map(|c| c.render()).unwrap_or_default();
                self.text = Some((arrival.url.clone(), t));
                shown
            }
            Err(f) => return Err(self.fault(f, limit).await),
        };
        Ok(format!(
            "{note}Navigated to {}\nTitle: {}{}\n\n{first}",
            arrival.url,
            arrival.title,
            arrival.notes()
        ))
    }

    /// Where an action left the page, once the navigation it started (if any) loaded; the
    /// page joins the history.
    async fn arrive(
        &mut self,
        page: &chromiumoxide::Page,
        refusals: &guard::Refusals,
        watch: Option<page::Watch>,
        limit: Duration,
    ) -> Result<Arrival, ToolError> {
        let loaded = match watch {
            Some(w) => w.settle(page, limit).await,
            None => true,
        };
        let (url, title) = match page::location(page, limit).await {
            Ok(l) => l,
            Err(f) => return Err(self.fault(f, limit).await),
        };
        let blocked = refusals.take();
        self.text = None;
        // A refused navigation leaves Chromium's error page, which is no page of the web:
        // the model is told where it led, and the page before stays the one calls act on.
        if url.starts_with("chrome-error:") {
            return Ok(Arrival {
                moved: false,
                loaded,
                failed: true,
                url: self.url.clone().unwrap_or_default(),
                title,
                blocked,
            });
        }
        let moved = self.url.as_deref() != Some(url.as_str());
        self.history.visit(&url);
        self.url = Some(url.clone());
        Ok(Arrival {
            moved,
            loaded,
            failed: false,
            url,
            title,
            blocked,
        })
    }

    /// A failed DevTools call as the model's error. A browser that is gone or did not answer
    /// is dropped: the next call starts a fresh one.
    async fn fault(&mut self, f: Fault, limit: Duration) -> ToolError {
        // A broken connection ends the handler a moment after the call saw it.
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Some(r) = self.running.as_ref().filter(|r| r.gone()) {
            let tail = r.stderr_tail();
            self.stop();
            return ToolError::message(format!(
                "The browser stopped (it may have crashed){}. The next Browser call starts a fresh one.",
                said(&tail)
            ));
        }
        match f {
            Fault::Timeout => {
                self.stop();
                ToolError::message(format!(
                    "The browser did not answer within {} s ([web] timeout_secs), so it was stopped. The next Browser call starts a fresh one.",
                    limit.as_secs()
                ))
            }
            Fault::Failed(e) => ToolError::message(format!("The browser could not do that: {e}")),
        }
    }
}

impl Arrival {
    /// After a click or a submit: where the page went, if it went anywhere.
    fn render(&self) -> String {
        match self.moved {
            true => format!(
                "\nNow at {}\nTitle: {}{}",
                self.url,
                self.title,
                self.notes()
            ),
            false => self.notes(),
        }
    }

    /// What the result must add: a page still loading, requests `[web]` refused.
    fn notes(&self) -> String {
        let mut out = String::new();
        if !self.loaded {
            out.push_str("\n(The page had not finished loading; BrowserExtract reads what has.)");
        }
        let led_to = self.blocked.iter().position(|b| b.document && self.failed);
        match led_to.map(|i| &self.blocked[i]) {
            Some(b) => out.push_str(&format!(
                "\nIt led to {}, which was blocked: {}.",
                b.url, b.why
            )),
            None if self.failed => out.push_str("\nThe page it led to failed to load."),
            None => {}
        }
        let others: Vec<_> = (0..self.blocked.len())
            .filter(|i| Some(*i) != led_to)
            .map(|i| &self.blocked[i])
            .collect();
        if let Some(b) = others.first() {
            out.push_str(&format!(
                "\n[web] blocked {} of the page's requests, such as {} ({}).",
                others.len(),
                b.url,
                b.why
            ));
        }
        out
    }
}

/// `body`, unless the call is cancelled first.
async fn cancellable(
    ctx: &ToolContext,
    body: impl Future<Output = Result<String, ToolError>>,
) -> Result<String, ToolError> {
    tokio::select! {
        r = body => r,
        () = ctx.cancel.cancelled() => Err(ToolError::message("The browser call was cancelled.")),
    }
}

/// ` (it said: …)` for a stderr tail, if there is one.
fn said(tail: &str) -> String {
    match tail.is_empty() {
        true => String::new(),
        false => format!(" (it said: {tail})"),
    }
}
