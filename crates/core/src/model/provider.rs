//! A model provider as a session talks to it: where (base URL, wire API), how to
//! authenticate, and the retry and timeout settings. Config builds one from the catalog
//! entry and the user's `[model_providers]` table.

use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// A bearer token an embedding app manages and refreshes (the app-server's
/// `chatgptAuthTokens` login). Sessions read it at each request, so a refreshed token reaches
/// the running ones; it is never written to disk, and it is redacted like any key.
#[derive(Debug, Clone, Default)]
pub struct ExternalToken(Arc<RwLock<Option<String>>>);

impl ExternalToken {
    /// Takes a new token (registered as a secret first).
    pub fn set(&self, token: &str) {
        crate::secrets::register(token);
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Some(token.to_string());
    }

    /// Forgets the token.
    pub fn clear(&self) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The current token.
    pub fn get(&self) -> Option<String> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireApi {
    Chat,
    Responses,
    /// The Anthropic Messages API.
    Messages,
}

impl WireApi {
    pub(crate) fn parse(s: &str) -> Result<WireApi> {
        match s {
            "chat" => Ok(WireApi::Chat),
            "responses" => Ok(WireApi::Responses),
            "messages" => Ok(WireApi::Messages),
            other => {
                bail!("unknown wire_api `{other}` (expected `chat`, `responses` or `messages`)")
            }
        }
    }

    /// The config.toml spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            WireApi::Chat => "chat",
            WireApi::Responses => "responses",
            WireApi::Messages => "messages",
        }
    }
}

/// How a provider's key goes on the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthScheme {
    /// `Authorization: Bearer <key>`.
    #[default]
    Bearer,
    /// `x-api-key: <key>`, as Anthropic's API takes it.
    XApiKey,
}

impl AuthScheme {
    pub(crate) fn parse(s: &str) -> Result<AuthScheme> {
        match s {
            "bearer" => Ok(AuthScheme::Bearer),
            "x-api-key" => Ok(AuthScheme::XApiKey),
            other => bail!("unknown auth `{other}` (expected `bearer` or `x-api-key`)"),
        }
    }
}

/// A provider after merging the catalog entry with the user's table.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub id: String,
    pub name: String,
    pub base_url: String,
    pub env_key: Option<String>,
    pub api_key: Option<String>,
    pub wire_api: WireApi,
    pub(crate) auth: AuthScheme,
    pub(crate) http_headers: BTreeMap<String, String>,
    pub(crate) query_params: BTreeMap<String, String>,
    pub(crate) request_max_retries: u32,
    pub(crate) stream_max_retries: u32,
    pub(crate) stream_idle_timeout_ms: u64,
    pub(crate) connect_timeout_ms: u64,
    pub(crate) request_timeout_ms: u64,
    pub(crate) retry_base_delay_ms: u64,
    /// A token an embedding app manages: while it holds one, requests carry it as the bearer
    /// token in place of the configured key.
    pub external_token: Option<ExternalToken>,
}

impl ProviderConfig {
    /// Registers a provider's secrets: its key, the variable it came from, and the values of
    /// headers and query parameters whose names look secret (`Authorization`, `x-api-key`, …).
    pub(crate) fn register_secrets(&self, api_key: Option<&str>) {
        if let Some(k) = api_key {
            crate::secrets::register(k);
        }
        if let Some(v) = &self.env_key {
            crate::secrets::register_env_var(v);
        }
        for (name, value) in self.http_headers.iter().chain(&self.query_params) {
            if crate::secrets::secret_name(name) {
                // "Bearer abc": the token is the secret.
                crate::secrets::register(value.rsplit(' ').next().unwrap_or(value));
            }
        }
    }

    /// The bearer key, if the provider needs one. A missing key is a clear error naming the
    /// variable and the config key.
    pub fn resolve_api_key(&self) -> Result<Option<String>, MissingKey> {
        // The app's token stands in for a key; requests read it themselves.
        if self
            .external_token
            .as_ref()
            .is_some_and(|t| t.get().is_some())
        {
            return Ok(None);
        }
        if let Some(k) = self.api_key.as_ref().filter(|k| !k.is_empty()) {
            crate::secrets::register(k);
            return Ok(Some(k.clone()));
        }
        let Some(var) = &self.env_key else {
            return Ok(None);
        };
        let mut candidates = vec![var.as_str()];
        // The Codex SDK hands its key over as CODEX_API_KEY.
        if self.id == "openai" {
            candidates.push("CODEX_API_KEY");
        }
        for v in candidates {
            if let Some(val) = crate::secrets::env_var(v)
                && !val.trim().is_empty()
            {
                // A key is redacted everywhere and not inherited by commands we run.
                crate::secrets::register(&val);
                crate::secrets::register_env_var(v);
                return Ok(Some(val.trim().to_string()));
            }
        }
        Err(MissingKey {
            provider: self.id.clone(),
            env_key: var.clone(),
        })
    }
}

/// The provider needs a key and none is set; the text says where to put one.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "missing API key for provider `{provider}`: set the environment variable {env_key} (or change model_providers.{provider}.env_key / model_providers.{provider}.api_key in config.toml, or run `interpreter login`)"
)]
pub struct MissingKey {
    pub provider: String,
    pub env_key: String,
}
