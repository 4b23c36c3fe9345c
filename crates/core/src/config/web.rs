//! The `[web]` section: what the fetch and search tools may reach (`tools::web` does the
//! fetching).

use serde::Deserialize;
use std::time::Duration;

/// The `[web]` section of config.toml.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebToml {
    /// Fetch and search tools are offered (default true).
    pub(crate) enabled: Option<bool>,
    /// Let fetches reach loopback, private and link-local addresses (default false).
    pub(crate) allow_private: Option<bool>,
    /// When not empty, only these domains (and their subdomains) may be fetched.
    #[serde(default)]
    pub(crate) allowed_domains: Vec<String>,
    /// These domains (and their subdomains) are never fetched.
    #[serde(default)]
    pub(crate) denied_domains: Vec<String>,
    /// Seconds a fetch may take, body included (default 30).
    pub(crate) timeout_secs: Option<u64>,
    /// Bytes of a body read at most (default 5 MiB); the rest is not read.
    pub(crate) max_bytes: Option<u64>,
    /// Which search backend the search tools use: `auto` (default), `searxng`, `kimi-code`,
    /// `moonshot-builtin`, `openai-hosted` or `off` (see [`SearchBackend`]).
    pub(crate) search: Option<String>,
    /// The search endpoint: SearXNG's (`GET <url>?q=<query>&format=json`, answering
    /// `{"results": [{"title", "url", "content"}]}`), or Kimi Code's search service.
    pub(crate) search_url: Option<String>,
    /// The Chromium (or Chrome, Edge) executable little-coder's Browser tools drive; by
    /// default one is looked for on PATH and in the usual install folders.
    pub(crate) browser: Option<String>,
}

/// Where a web search goes.
#[derive(Clone, PartialEq, Eq)]
pub enum SearchBackend {
    /// A SearXNG endpoint (or one that answers like it), asked by the search tools.
    Searx(reqwest::Url),
    /// Kimi Code's search service on the provider's key (`POST <base>/search`), asked by the
    /// search tools.
    KimiCode {
        /// The service's address.
        url: reqwest::Url,
        /// The provider's key, sent as a bearer token.
        key: Option<String>,
    },
    /// Moonshot's `$web_search` builtin: the model calls it, the call's arguments go back
    /// as its result, and Moonshot searches on the next request (Chat Completions only).
    MoonshotBuiltin,
    /// OpenAI's hosted `web_search` tool (Responses only); `live` lets it reach the live web,
    /// else it reads OpenAI's cache (Codex's `web_search = "live" | "cached"`).
    OpenAiHosted {
        /// External web access.
        live: bool,
    },
}

impl std::fmt::Debug for SearchBackend {
    // The key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchBackend::Searx(u) => write!(f, "Searx({u})"),
            SearchBackend::KimiCode { url, .. } => write!(f, "KimiCode({url})"),
            SearchBackend::MoonshotBuiltin => f.write_str("MoonshotBuiltin"),
            SearchBackend::OpenAiHosted { live } => write!(f, "OpenAiHosted(live: {live})"),
        }
    }
}

/// What picks the search backend besides `[web]`: the provider in use and Codex's top-level
/// `web_search` setting.
pub(crate) struct SearchContext<'a> {
    pub(crate) provider: &'a crate::model::provider::ProviderConfig,
    /// Codex's `web_search`: `disabled`, `cached` or `live`.
    pub(crate) codex_web_search: Option<&'a str>,
}

/// What the web tools may do.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// The tools are offered.
    pub enabled: bool,
    pub(crate) allow_private: bool,
    pub(crate) allowed_domains: Vec<String>,
    pub(crate) denied_domains: Vec<String>,
    pub(crate) timeout: Duration,
    pub(crate) max_bytes: u64,
    /// The search backend, if any: without one no search tool is offered.
    pub search: Option<SearchBackend>,
    /// The browser executable `[web] browser` (or `INTERPRETER_BROWSER`) names, if any.
    pub(crate) browser: Option<std::path::PathBuf>,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            enabled: true,
            allow_private: false,
            allowed_domains: Vec::new(),
            denied_domains: Vec::new(),
            timeout: Duration::from_secs(30),
            max_bytes: 5 * 1024 * 1024,
            search: None,
            browser: None,
        }
    }
}

impl WebConfig {
    pub(crate) fn from_toml(t: &WebToml, ctx: &SearchContext<'_>) -> anyhow::Result<WebConfig> {
        let d = WebConfig::default();
        let domains = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|s| {
                    s.trim()
                        .trim_start_matches("*.")
                        .trim_end_matches('.')
                        .to_ascii_lowercase()
                })
                .filter(|s| !s.is_empty())
                .collect()
        };
        let enabled = t.enabled.unwrap_or(d.enabled);
        let search = match enabled {
            true => search_backend(t, ctx)?,
            false => None,
        };
        Ok(WebConfig {
            enabled,
            allow_private: t.allow_private.unwrap_or(d.allow_private),
            allowed_domains: domains(&t.allowed_domains),
            denied_domains: domains(&t.denied_domains),
            timeout: t
                .timeout_secs
                .map_or(d.timeout, |s| Duration::from_secs(s.max(1))),
            max_bytes: t.max_bytes.unwrap_or(d.max_bytes).max(1024),
            search,
            browser: t
                .browser
                .as_deref()
                .map(str::trim)
                .filter(|b| !b.is_empty())
                .map(std::path::PathBuf::from),
        })
    }

    /// Whether the harness offers its own search tool (`WebSearch`): a backend we ask
    /// ourselves. Hosted backends are declared in the request instead.
    pub(crate) fn can_search(&self) -> bool {
        matches!(
            self.search,
            Some(SearchBackend::Searx(_) | SearchBackend::KimiCode { .. })
        )
    }

    /// Why `host` may not be fetched, if it may not.
    pub(crate) fn domain_refusal(&self, host: &str) -> Option<String> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let under = |d: &String| host == *d || host.ends_with(&format!(".{d}"));
        if let Some(d) = self.denied_domains.iter().find(|d| under(d)) {
            return Some(format!("{host} is denied by [web] denied_domains ({d})"));
        }
        if !self.allowed_domains.is_empty() && !self.allowed_domains.iter().any(under) {
            return Some(format!(
                "{host} is not in [web] allowed_domains ({})",
                self.allowed_domains.join(", ")
            ));
        }
        None
    }
}

/// The backend `[web] search` names, else the one `auto` picks: Codex's hosted `web_search`
/// when Codex's setting asks for it on a Responses provider, a configured `search_url`, or
/// Kimi Code's service on a Kimi Code provider. Moonshot's builtin costs per call, so it is
/// used only when named.
fn search_backend(t: &WebToml, ctx: &SearchContext<'_>) -> anyhow::Result<Option<SearchBackend>> {
    use crate::model::provider::WireApi;
    let url = t
        .search_url
        .as_deref()
        .map(|u| reqwest::Url::parse(u).map_err(|e| anyhow::anyhow!("[web] search_url `{u}`: {e}")))
        .transpose()?;
    let codex = ctx.codex_web_search.map(str::trim);
    let wire = ctx.provider.wire_api;
    let service = crate::model::catalog::search_service(&ctx.provider.id, &ctx.provider.base_url);
    let kimi_provider = service.is_some();
    let kimi = |url: Option<reqwest::Url>| -> anyhow::Result<SearchBackend> {
        let url = match url {
            Some(u) => u,
            None => reqwest::Url::parse(
                service
                    .as_deref()
                    .unwrap_or(crate::model::catalog::KIMI_CODE_SEARCH),
            )?,
        };
        Ok(SearchBackend::KimiCode {
            url,
            key: ctx.provider.resolve_api_key().ok().flatten(),
        })
    };
    let live = codex != Some("cached");
    let mode = t.search.as_deref().map(str::trim).unwrap_or("auto");
    Ok(match mode {
        "off" => None,
        "searxng" => Some(SearchBackend::Searx(url.ok_or_else(|| {
            anyhow::anyhow!("[web] search = \"searxng\" needs search_url")
        })?)),
        "kimi-code" => Some(kimi(url)?),
        "moonshot-builtin" if wire != WireApi::Chat => anyhow::bail!(
            "[web] search = \"moonshot-builtin\" needs a Chat Completions provider (Moonshot's builtin $web_search)"
        ),
        "moonshot-builtin" => Some(SearchBackend::MoonshotBuiltin),
        "openai-hosted" if wire != WireApi::Responses => anyhow::bail!(
            "[web] search = \"openai-hosted\" needs a Responses provider (OpenAI's hosted web_search)"
        ),
        "openai-hosted" => Some(SearchBackend::OpenAiHosted { live }),
        "auto" => match codex {
            Some("disabled") => None,
            Some("live" | "cached") if wire == WireApi::Responses => {
                Some(SearchBackend::OpenAiHosted { live })
            }
            _ => match url {
                Some(u) => Some(SearchBackend::Searx(u)),
                None if kimi_provider => Some(kimi(None)?),
                None => None,
            },
        },
        other => anyhow::bail!(
            "[web] search `{other}`: expected auto, searxng, kimi-code, moonshot-builtin, openai-hosted or off"
        ),
    })
}
