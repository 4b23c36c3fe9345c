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
    /// A search endpoint that answers `GET <url>?q=<query>&format=json` with SearXNG's JSON
    /// (`{"results": [{"title", "url", "content"}]}`).
    pub(crate) search_url: Option<String>,
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
    pub(crate) search_url: Option<reqwest::Url>,
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
            search_url: None,
        }
    }
}

impl WebConfig {
    pub(crate) fn from_toml(t: &WebToml) -> anyhow::Result<WebConfig> {
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
        let search_url = t
            .search_url
            .as_deref()
            .map(|u| {
                reqwest::Url::parse(u).map_err(|e| anyhow::anyhow!("[web] search_url `{u}`: {e}"))
            })
            .transpose()?;
        Ok(WebConfig {
            enabled: t.enabled.unwrap_or(d.enabled),
            allow_private: t.allow_private.unwrap_or(d.allow_private),
            allowed_domains: domains(&t.allowed_domains),
            denied_domains: domains(&t.denied_domains),
            timeout: t
                .timeout_secs
                .map_or(d.timeout, |s| Duration::from_secs(s.max(1))),
            max_bytes: t.max_bytes.unwrap_or(d.max_bytes).max(1024),
            search_url,
        })
    }

    /// Whether a search tool can be offered.
    pub(crate) fn can_search(&self) -> bool {
        self.enabled && self.search_url.is_some()
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
