//! A model provider as a session talks to it: where (base URL, wire API), how to
//! authenticate, and the retry and timeout settings. Config builds one from the catalog
//! entry and the user's `[model_providers]` table.

use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// A bearer token an embedding app manages and refreshes (the app-server's
/// `chatgptAuthTokens` login). Sessions read it at each request, so a refreshed token reaches
/// the running ones; it is never written to disk, and it is redacted like any key. It belongs
/// to the OpenAI account it was given for: only a provider that requires OpenAI auth
/// ([`ProviderAuth::requires_openai_auth`]) sends it, never another in place of its own key.
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

/// The HTTP API a provider speaks (`wire_api` in config.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireApi {
    /// OpenAI's Chat Completions (`/chat/completions`), which most compatible providers offer.
    Chat,
    /// OpenAI's Responses API (`/responses`).
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

/// How a provider authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProviderAuth {
    /// How its key goes on the request.
    pub scheme: AuthScheme,
    /// Codex's `requires_openai_auth`: the provider takes the OpenAI account's login (the
    /// app-server's `chatgptAuthTokens`) in place of a key. The built-in `openai` provider
    /// does; any other only with `requires_openai_auth = true` in its table.
    pub requires_openai_auth: bool,
}

/// A provider after merging the catalog entry with the user's table.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Its key in `[model_providers]` and the catalog; session logs record it.
    pub id: String,
    /// The name people see: the table's `name`, else the catalog's, else the id.
    pub name: String,
    /// The API root, without a trailing slash; the wire appends its endpoint.
    pub base_url: String,
    /// The environment variable the key is read from when `api_key` is not set.
    pub env_key: Option<String>,
    /// A key written in config.toml (`api_key`, else `experimental_bearer_token`); it wins
    /// over `env_key`.
    pub api_key: Option<String>,
    /// The API it speaks: the endpoint, request body and stream format follow from it.
    pub wire_api: WireApi,
    pub(crate) auth: ProviderAuth,
    pub(crate) http_headers: BTreeMap<String, String>,
    pub(crate) query_params: BTreeMap<String, String>,
    pub(crate) request_max_retries: u32,
    pub(crate) stream_max_retries: u32,
    pub(crate) stream_idle_timeout_ms: u64,
    pub(crate) connect_timeout_ms: u64,
    pub(crate) request_timeout_ms: u64,
    pub(crate) retry_base_delay_ms: u64,
    /// A token an embedding app manages: while it holds one, requests to a provider that
    /// requires OpenAI auth carry it as the bearer token in place of the configured key; other
    /// providers ignore it (see [`ProviderConfig::login_token`]).
    pub external_token: Option<ExternalToken>,
}

impl ProviderConfig {
    /// Whether the OpenAI login (an app's `chatgptAuthTokens`) stands in for a key here.
    pub fn requires_openai_auth(&self) -> bool {
        self.auth.requires_openai_auth
    }

    /// The app's login token, when this provider takes it: a login token belongs to its
    /// provider, so a provider that does not require OpenAI auth never gets it, whatever
    /// token the app attached, and uses its own key (or fails for want of one).
    pub(crate) fn login_token(&self) -> Option<String> {
        if !self.requires_openai_auth() {
            return None;
        }
        self.external_token.as_ref().and_then(ExternalToken::get)
    }

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
        // The app's token stands in for the key of a provider that takes it; requests read it
        // themselves.
        if self.login_token().is_some() {
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
        // The Codex SDK hands its key over as CODEX_API_KEY, for providers on OpenAI's auth.
        if self.auth.requires_openai_auth {
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
    /// The provider's id, as in `model_providers.<id>`.
    pub provider: String,
    /// The variable that was read and found unset or blank.
    pub env_key: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Overrides};
    use crate::model::wire;

    /// The provider `id` of a config whose `[model_providers]` tables are `tables`
    /// (`-c` overrides).
    fn provider(id: &str, tables: &[&str]) -> ProviderConfig {
        let o = Overrides {
            config: tables.iter().map(|s| s.to_string()).collect(),
            provider: Some(id.into()),
            model: Some("m".into()),
            ..Default::default()
        };
        Config::from_layers("/h".into(), None, None, &[], &o)
            .unwrap()
            .provider
    }

    fn with_token(mut p: ProviderConfig, token: &str) -> ProviderConfig {
        let t = ExternalToken::default();
        t.set(token);
        p.external_token = Some(t);
        p
    }

    fn auth_headers(p: &ProviderConfig, key: Option<&str>) -> Vec<(&'static str, String)> {
        wire::headers(p, key)
            .into_iter()
            .filter(|(name, _)| *name == "authorization" || *name == "x-api-key")
            .collect()
    }

    /// Codex's rule: the built-in `openai` provider requires OpenAI auth; a provider of the
    /// user's own, or another built-in one, only when its table says so.
    #[test]
    fn only_openai_requires_openai_auth_unless_a_table_says_so() {
        assert!(provider("openai", &[]).requires_openai_auth());
        assert!(!provider("kimi", &[]).requires_openai_auth());
        assert!(!provider("anthropic", &[]).requires_openai_auth());
        let other =
            r#"model_providers.other={base_url="http://127.0.0.1:9/v1", env_key="OTHER_KEY"}"#;
        assert!(!provider("other", &[other]).requires_openai_auth());
        let chatgpt = r#"model_providers.chatgpt={base_url="http://127.0.0.1:9/v1", requires_openai_auth=true}"#;
        assert!(provider("chatgpt", &[chatgpt]).requires_openai_auth());
        let off = "model_providers.openai.requires_openai_auth=false";
        assert!(!provider("openai", &[off]).requires_openai_auth());
    }

    /// Issue 34, class 11: the ChatGPT token goes only to the provider it was given for; any
    /// other provider sends its own key, or none, and a missing key is the missing-key error.
    #[test]
    fn a_login_token_never_stands_in_for_another_providers_key() {
        let token = "chatgpt-token-unit-XYZ";
        // The provider it was given for: the token, and no key is needed.
        let openai = with_token(provider("openai", &[]), token);
        assert!(matches!(openai.resolve_api_key(), Ok(None)));
        assert_eq!(
            auth_headers(&openai, None),
            [("authorization", format!("Bearer {token}"))]
        );
        // Another provider with a key of its own: its key, never the token.
        let own =
            r#"model_providers.other={base_url="http://127.0.0.1:9/v1", api_key="own-key-unit"}"#;
        let other = with_token(provider("other", &[own]), token);
        let key = other.resolve_api_key().unwrap();
        assert_eq!(key.as_deref(), Some("own-key-unit"));
        assert_eq!(
            auth_headers(&other, key.as_deref()),
            [("authorization", "Bearer own-key-unit".to_string())]
        );
        // One whose key goes in x-api-key: its key there, and no token anywhere.
        let anthropic = with_token(provider("anthropic", &[]), token);
        let headers = auth_headers(&anthropic, Some("sk-ant-unit"));
        assert_eq!(headers, [("x-api-key", "sk-ant-unit".to_string())]);
        // One whose key is missing: the missing-key error, not the token.
        let unset = r#"model_providers.nokey={base_url="http://127.0.0.1:9/v1", env_key="INTERPRETER_UNIT_UNSET_KEY"}"#;
        let nokey = with_token(provider("nokey", &[unset]), token);
        let err = nokey.resolve_api_key().unwrap_err();
        assert_eq!(err.env_key, "INTERPRETER_UNIT_UNSET_KEY");
        assert!(auth_headers(&nokey, None).is_empty());
        // A local provider without a key sends nothing.
        let local = r#"model_providers.local={base_url="http://127.0.0.1:9/v1"}"#;
        let local = with_token(provider("local", &[local]), token);
        assert!(matches!(local.resolve_api_key(), Ok(None)));
        assert!(auth_headers(&local, None).is_empty());
        // A provider of the user's own that asks for OpenAI auth gets the token.
        let chatgpt = r#"model_providers.chatgpt={base_url="http://127.0.0.1:9/v1", env_key="INTERPRETER_UNIT_UNSET_KEY", requires_openai_auth=true}"#;
        let chatgpt = with_token(provider("chatgpt", &[chatgpt]), token);
        assert!(matches!(chatgpt.resolve_api_key(), Ok(None)));
        assert_eq!(
            auth_headers(&chatgpt, None),
            [("authorization", format!("Bearer {token}"))]
        );
    }
}
