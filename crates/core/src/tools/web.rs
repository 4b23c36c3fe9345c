//! The web for the model: fetching a page (`FetchURL`, `WebFetch`, `webfetch`) and searching
//! (`WebSearch`, `SearchWeb`, `websearch`) through a configured backend.
//!
//! A fetch takes http and https only, follows at most [`MAX_REDIRECTS`] redirects (each hop
//! checked again), and is bounded in time and bytes. Every address a host resolves to is
//! checked before the connection, and the connection goes to the addresses that were checked
//! (no second lookup a rebinding DNS could answer differently): loopback, private,
//! link-local, shared, unique-local and unspecified addresses are refused unless
//! `[web] allow_private` is set. `[web] allowed_domains` and `denied_domains` hold for every
//! hop. HTML becomes Markdown (`htmd`); other text is kept as is; anything else is refused.

use std::net::{IpAddr, SocketAddr};

use futures::StreamExt as _;
use serde::Deserialize;

pub(crate) use crate::config::web::{SearchBackend, WebConfig};

/// Redirects a fetch follows at most.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// A fetched page.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    /// Where it was fetched from, after redirects.
    pub(crate) url: String,
    pub(crate) content_type: String,
    /// Its `<title>`, for HTML.
    pub(crate) title: Option<String>,
    /// Markdown for HTML, else the text as it came.
    pub(crate) text: String,
    /// The HTML as it came, for an HTML page.
    pub(crate) html: Option<String>,
    /// The body was longer than `max_bytes`: only the start was read.
    pub(crate) cut: bool,
}

/// Why a fetch failed, in words for the model.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    #[error("{0}")]
    Refused(String),
    #[error("HTTP {status}")]
    Status { status: u16, url: String },
    #[error("{0}")]
    Failed(String),
}

/// Fetches `url` as `cfg` allows.
pub(crate) async fn fetch(cfg: &WebConfig, url: &str) -> Result<Page, FetchError> {
    let mut url = check_url(url)?;
    let deadline = tokio::time::Instant::now() + cfg.timeout;
    for _ in 0..=MAX_REDIRECTS {
        let addrs = resolve_checked(cfg, &url).await?;
        let host = url.host_str().unwrap_or_default().to_string();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .resolve_to_addrs(&host, &addrs)
            .user_agent(concat!("interpreter/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| FetchError::Failed(format!("could not make an HTTP client: {e}")))?;
        let sent = client
            .get(url.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/html, text/*;q=0.9, application/json;q=0.8, */*;q=0.1",
            )
            .send();
        let resp = match tokio::time::timeout_at(deadline, sent).await {
            Err(_) => return Err(timed_out(cfg)),
            Ok(Err(e)) => {
                return Err(FetchError::Failed(format!(
                    "could not fetch {url}: {}",
                    plain(&e)
                )));
            }
            Ok(Ok(r)) => r,
        };
        if resp.status().is_redirection() {
            let Some(next) = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
            else {
                return Err(FetchError::Failed(format!(
                    "{url} answered {} without a Location",
                    resp.status()
                )));
            };
            let next = url
                .join(next)
                .map_err(|e| FetchError::Failed(format!("bad redirect from {url}: {e}")))?;
            url = check_url(next.as_str())?;
            continue;
        }
        return read_page(cfg, url, resp, deadline).await;
    }
    Err(FetchError::Failed(format!(
        "more than {MAX_REDIRECTS} redirects, last to {url}"
    )))
}

fn timed_out(cfg: &WebConfig) -> FetchError {
    FetchError::Failed(format!(
        "the fetch did not finish within {} s ([web] timeout_secs)",
        cfg.timeout.as_secs()
    ))
}

/// A reqwest error with its causes, without the URL it repeats.
fn plain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(u) = e.url() {
        text = text.replace(&format!(" for url ({u})"), "");
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

/// The URL if it is one we fetch: http or https, a host, no credentials.
pub(crate) fn check_url(raw: &str) -> Result<reqwest::Url, FetchError> {
    let url = reqwest::Url::parse(raw.trim())
        .map_err(|e| FetchError::Refused(format!("`{raw}` is not a valid URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::Refused(format!(
            "only http and https URLs can be fetched, not `{}:`",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(FetchError::Refused(format!("`{raw}` has no host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(FetchError::Refused(
            "URLs with credentials in them are not fetched".into(),
        ));
    }
    Ok(url)
}

/// The addresses `url`'s host resolves to, each one allowed; an error naming the first that
/// is not.
pub(crate) async fn resolve_checked(
    cfg: &WebConfig,
    url: &reqwest::Url,
) -> Result<Vec<SocketAddr>, FetchError> {
    let host = url.host_str().unwrap_or_default();
    if let Some(why) = cfg.domain_refusal(host) {
        return Err(FetchError::Refused(why));
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| FetchError::Failed(format!("could not resolve {host}: {e}")))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(FetchError::Failed(format!("{host} has no address")));
    }
    if !cfg.allow_private
        && let Some(a) = addrs.iter().find(|a| !is_public(a.ip()))
    {
        return Err(FetchError::Refused(format!(
            "{host} is at {}, a private, loopback or link-local address; set [web] allow_private = true to fetch such addresses",
            a.ip()
        )));
    }
    Ok(addrs)
}

/// An address on the public internet.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                // Shared address space (carrier-grade NAT), 100.64.0.0/10.
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
                // Benchmarking, 198.18.0.0/15, and reserved, 240.0.0.0/4.
                || (o[0] == 198 && (o[1] & 0xfe) == 18)
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // Unique local fc00::/7 and link-local fe80::/10.
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                // NAT64 and 6to4 can reach anything in IPv4: judged as IPv4 would be.
                || (s[0] == 0x64 && s[1] == 0xff9b)
                || s[0] == 0x2002
                // Documentation 2001:db8::/32.
                || (s[0] == 0x2001 && s[1] == 0x0db8))
        }
    }
}

async fn read_page(
    cfg: &WebConfig,
    url: reqwest::Url,
    resp: reqwest::Response,
    deadline: tokio::time::Instant,
) -> Result<Page, FetchError> {
    let status = resp.status().as_u16();
    if !resp.status().is_success() {
        return Err(FetchError::Status {
            status,
            url: url.to_string(),
        });
    }
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let texty = mime.is_empty()
        || mime.starts_with("text/")
        || mime.ends_with("+xml")
        || mime.ends_with("+json")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
        );
    if !texty {
        return Err(FetchError::Refused(format!(
            "{url} is `{mime}`, not a page or text"
        )));
    }
    let mut body = Vec::new();
    let mut cut = false;
    let mut stream = resp.bytes_stream();
    loop {
        let next = match tokio::time::timeout_at(deadline, stream.next()).await {
            Err(_) => return Err(timed_out(cfg)),
            Ok(n) => n,
        };
        let Some(chunk) = next else { break };
        let chunk =
            chunk.map_err(|e| FetchError::Failed(format!("reading {url}: {}", plain(&e))))?;
        let room = (cfg.max_bytes as usize).saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let raw = String::from_utf8_lossy(&body).into_owned();
    let html = mime == "text/html"
        || mime == "application/xhtml+xml"
        || (mime.is_empty() && looks_like_html(&raw));
    let (title, text, html) = match html {
        true => (html_title(&raw), html_to_markdown(&raw), Some(raw)),
        false => (None, raw, None),
    };
    Ok(Page {
        url: url.to_string(),
        content_type: mime,
        title,
        text,
        html,
        cut,
    })
}

fn looks_like_html(s: &str) -> bool {
    let start = s
        .trim_start()
        .get(..256)
        .unwrap_or(s.trim_start())
        .to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}

/// The text of the first `<title>`.
fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let end = open_end + lower[open_end..].find("</title")?;
    let title = html
        .get(open_end..end)?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!title.is_empty()).then(|| htmd::convert(&title).unwrap_or(title))
}

/// HTML as Markdown, without scripts, styles and other parts that are not text.
pub(crate) fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "svg", "canvas", "iframe", "head", "nav",
            "form", "button",
        ])
        .build();
    let md = converter.convert(html).unwrap_or_else(|_| html.to_string());
    // Pages leave long runs of blank lines where their chrome was.
    let mut out = String::with_capacity(md.len());
    let mut blanks = 0;
    for line in md.lines() {
        if line.trim().is_empty() {
            blanks += 1;
            if blanks > 1 {
                continue;
            }
        } else {
            blanks = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim().to_string()
}

/// The text a reader sees in `html`: no markup, no scripts or styles, a line per block,
/// spaces collapsed.
pub(crate) fn html_to_text(html: &str) -> String {
    use html5ever::tendril::TendrilSink;
    use markup5ever_rcdom::{Handle, NodeData, RcDom};
    const SKIP: &[&str] = &[
        "script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "head",
    ];
    const BLOCK: &[&str] = &[
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "pre",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "table",
        "ul",
        "ol",
        "dt",
        "dd",
        "title",
    ];
    // Newlines in text are spaces, except in `<pre>`.
    fn walk(node: &Handle, out: &mut String, pre: bool) {
        match &node.data {
            NodeData::Text { contents } if pre => out.push_str(&contents.borrow()),
            NodeData::Text { contents } => out.push_str(&contents.borrow().replace('\n', " ")),
            NodeData::Element { name, .. } => {
                let tag = name.local.as_ref();
                if SKIP.contains(&tag) {
                    return;
                }
                let block = BLOCK.contains(&tag);
                if block {
                    out.push('\n');
                }
                for child in node.children.borrow().iter() {
                    walk(child, out, pre || tag == "pre");
                }
                if block {
                    out.push('\n');
                }
            }
            _ => {
                for child in node.children.borrow().iter() {
                    walk(child, out, pre);
                }
            }
        }
    }
    let dom = html5ever::parse_document(RcDom::default(), Default::default())
        .from_utf8()
        .read_from(&mut html.as_bytes());
    let Ok(dom) = dom else {
        return String::new();
    };
    let mut raw = String::new();
    walk(&dom.document, &mut raw, false);
    raw.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// One search result.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct SearchHit {
    #[serde(default)]
    pub(crate) title: String,
    pub(crate) url: String,
    /// The snippet.
    #[serde(default)]
    pub(crate) content: String,
}

#[derive(Deserialize)]
struct SearxReply {
    #[serde(default)]
    results: Vec<SearchHit>,
}

/// Kimi Code's answer: `{"search_results": [{"title", "url", "snippet", "content", ...}]}`.
#[derive(Deserialize)]
struct KimiReply {
    #[serde(default)]
    search_results: Vec<KimiHit>,
}

#[derive(Deserialize)]
struct KimiHit {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    snippet: String,
    #[serde(default)]
    content: String,
}

impl From<KimiHit> for SearchHit {
    fn from(h: KimiHit) -> SearchHit {
        let content = match h.snippet.trim().is_empty() {
            true => h.content.chars().take(500).collect(),
            false => h.snippet,
        };
        SearchHit {
            title: h.title,
            url: h.url,
            content,
        }
    }
}

/// Searches the configured backend for `query`: at most `limit` results, those of the
/// allowed domains. The backend is the user's own choice, so its address is not checked.
pub(crate) async fn search(
    cfg: &WebConfig,
    query: &str,
    limit: usize,
) -> Result<Vec<SearchHit>, FetchError> {
    let client = reqwest::Client::builder()
        .timeout(cfg.timeout)
        .user_agent(concat!("interpreter/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| FetchError::Failed(format!("could not make an HTTP client: {e}")))?;
    let request = match &cfg.search {
        Some(SearchBackend::Searx(base)) => {
            let mut url = base.clone();
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            client.get(url)
        }
        Some(SearchBackend::KimiCode { url, key }) => {
            let Some(key) = key else {
                return Err(FetchError::Refused(
                    "Kimi Code's search service needs the provider's API key, and none is set"
                        .into(),
                ));
            };
            client
                .post(url.clone())
                .bearer_auth(key)
                .json(&serde_json::json!({
                    "text_query": query,
                    "limit": limit.min(20),
                    "enable_page_crawling": false,
                    "timeout_seconds": cfg.timeout.as_secs().clamp(1, 30),
                }))
        }
        _ => {
            return Err(FetchError::Refused(
                "no search backend is configured ([web] search, search_url)".into(),
            ));
        }
    };
    let resp = request
        .send()
        .await
        .map_err(|e| FetchError::Failed(format!("the search failed: {}", plain(&e))))?;
    if !resp.status().is_success() {
        return Err(FetchError::Failed(format!(
            "the search backend answered HTTP {}",
            resp.status().as_u16()
        )));
    }
    let bytes = read_bounded(resp, cfg.max_bytes).await?;
    let hits = match cfg.search {
        Some(SearchBackend::KimiCode { .. }) => serde_json::from_slice::<KimiReply>(&bytes)
            .map(|r| r.search_results.into_iter().map(SearchHit::from).collect())
            .map_err(|e| {
                FetchError::Failed(format!(
                    "the search service's answer is not Kimi Code's JSON: {e}"
                ))
            })?,
        _ => serde_json::from_slice::<SearxReply>(&bytes)
            .map(|r| r.results)
            .map_err(|e| {
                FetchError::Failed(format!(
                    "the search backend's answer is not SearXNG JSON: {e}"
                ))
            })?,
    };
    Ok(hits
        .into_iter()
        .filter(|h| {
            reqwest::Url::parse(&h.url)
                .ok()
                .and_then(|u| u.host_str().map(|h| cfg.domain_refusal(h).is_none()))
                .unwrap_or(false)
        })
        .take(limit)
        .collect())
}

/// A body of at most `max` bytes: a longer one is an error, not read on.
async fn read_bounded(mut resp: reqwest::Response, max: u64) -> Result<Vec<u8>, FetchError> {
    let mut out = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| FetchError::Failed(format!("reading the search results: {}", plain(&e))))?
    {
        if (out.len() + chunk.len()) as u64 > max {
            return Err(FetchError::Failed(format!(
                "the search results are longer than {max} bytes ([web] max_bytes)"
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "web_tests.rs"]
mod tests;
