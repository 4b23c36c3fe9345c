//! `[web]` for everything the browser loads. Interception is enabled on the browser target,
//! not on a page: there it pauses every request of every target (the page, its frames in
//! other processes, workers, service workers), which a page's own Fetch domain misses. Each
//! paused request is checked as webfetch checks a URL (scheme, domains, every address the
//! host resolves to) and continued or failed; what was refused is recorded for the result.

use std::sync::{Arc, Mutex};

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams, RequestPattern,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use futures::StreamExt as _;

use crate::tools::web::{self, WebConfig};

/// Refusals kept for the next result, at most.
const MAX_RECORDED: usize = 50;

/// A request the rules refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Blocked {
    pub(crate) url: String,
    /// Why, in webfetch's words.
    pub(crate) why: String,
    /// A page or frame document, not a subresource.
    pub(crate) document: bool,
}

/// What the rules refused since the last [`Refusals::take`].
#[derive(Debug, Default)]
pub(crate) struct Refusals(Mutex<Vec<Blocked>>);

impl Refusals {
    fn push(&self, b: Blocked) {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if v.len() < MAX_RECORDED {
            v.push(b);
        }
    }

    pub(crate) fn take(&self) -> Vec<Blocked> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// What webfetch's rules say of a URL.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Check {
    Allowed,
    /// The rules refuse it (scheme, domain, a private address): why.
    Refused(String),
    /// Its host does not resolve: why.
    Unreachable(String),
}

/// What webfetch's rules say of loading `url`. `data:` and `blob:` never reach the network.
pub(crate) async fn check(cfg: &WebConfig, url: &str) -> Check {
    if url.starts_with("data:") || url.starts_with("blob:") {
        return Check::Allowed;
    }
    let checked = match web::check_url(url) {
        Ok(u) => u,
        Err(e) => return Check::Refused(e.to_string()),
    };
    match tokio::time::timeout(cfg.timeout, web::resolve_checked(cfg, &checked)).await {
        Ok(Ok(_)) => Check::Allowed,
        Ok(Err(e @ web::FetchError::Refused(_))) => Check::Refused(e.to_string()),
        Ok(Err(e)) => Check::Unreachable(e.to_string()),
        Err(_) => Check::Unreachable(format!(
            "{} did not resolve within {} s",
            checked.host_str().unwrap_or_default(),
            cfg.timeout.as_secs()
        )),
    }
}

/// Pauses every request of `browser` and answers each by the rules; the task ends with the
/// connection. Each request is judged on a task of its own, so one slow lookup holds up no
/// other request.
pub(crate) async fn start(
    browser: Arc<Browser>,
    cfg: Arc<WebConfig>,
    refusals: Arc<Refusals>,
) -> Result<tokio::task::JoinHandle<()>, String> {
    let mut paused = browser
        .event_listener::<EventRequestPaused>()
        .await
        .map_err(|e| format!("could not listen for the browser's requests: {e}"))?;
    let enable = EnableParams::builder()
        .pattern(RequestPattern::builder().url_pattern("*").build())
        .build();
    tokio::time::timeout(cfg.timeout, browser.execute(enable))
        .await
        .map_err(|_| "the browser did not take the request rules in time".to_string())?
        .map_err(|e| format!("could not apply the request rules: {e}"))?;
    Ok(tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            let (browser, cfg, refusals) = (browser.clone(), cfg.clone(), refusals.clone());
            tokio::spawn(async move {
                let id = event.request_id.clone();
                let fail = |reason| FailRequestParams::new(id.clone(), reason);
                let answer = match check(&cfg, &event.request.url).await {
                    Check::Allowed => {
                        let go = ContinueRequestParams::new(id.clone());
                        browser.execute(go).await.map(drop)
                    }
                    Check::Refused(why) => {
                        refusals.push(Blocked {
                            url: event.request.url.clone(),
                            why,
                            document: event.resource_type == ResourceType::Document,
                        });
                        let reason = ErrorReason::BlockedByClient;
                        browser.execute(fail(reason)).await.map(drop)
                    }
                    Check::Unreachable(_) => {
                        let reason = ErrorReason::NameNotResolved;
                        browser.execute(fail(reason)).await.map(drop)
                    }
                };
                if let Err(e) = answer {
                    tracing::debug!("answering a paused browser request: {e}");
                }
            });
        }
    }))
}
