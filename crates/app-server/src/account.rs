//! `account/*` (the API-key login, and `chatgptAuthTokens`: a token the embedding app manages),
//! `model/list` from the provider catalog, and the seed's `interpreter/harness/list` and
//! `interpreter/harness/set`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::Server;
use super::transport::RpcError;
use interpreter_core::config::Config;
use interpreter_core::harness;
use interpreter_core::model::catalog;

fn config(server: &Server) -> Result<Config, RpcError> {
    Config::load(&server.overrides)
        .map_err(|e| RpcError::internal(format!("invalid configuration: {e:#}")))
}

/// The account a `chatgptAuthTokens` login names (never the token).
#[derive(Clone, Debug)]
pub(crate) struct TokenAccount {
    email: Option<String>,
    plan_type: String,
}

/// The account the configured provider uses: the `chatgptAuthTokens` login for a provider
/// that takes it (requires OpenAI auth), else the provider's own key.
pub(crate) fn read(server: &Server) -> Result<Value, RpcError> {
    let config = config(server)?;
    if config.provider.requires_openai_auth()
        && let Some(a) = server.token_account.lock().ok().and_then(|a| a.clone())
    {
        return Ok(json!({
            "account": {"type": "chatgpt", "email": a.email, "planType": a.plan_type},
            "requiresOpenaiAuth": false,
        }));
    }
    Ok(match config.provider.resolve_api_key() {
        Ok(Some(_)) => json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": false}),
        // A local provider needs no key.
        Ok(None) => json!({"account": null, "requiresOpenaiAuth": false}),
        Err(_) => json!({"account": null, "requiresOpenaiAuth": true}),
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LoginParams {
    #[serde(rename = "type")]
    kind: String,
    api_key: Option<String>,
    access_token: Option<String>,
    chatgpt_account_id: Option<String>,
    chatgpt_plan_type: Option<String>,
}

/// `apiKey`: stores the key for the configured provider in config.toml (mode 0600), as
/// `interpreter login` does; threads opened from now on use it. `chatgptAuthTokens`: see
/// [`login_tokens`].
pub(crate) fn login(server: &Server, params: Value) -> Result<Value, RpcError> {
    let p: LoginParams = super::parse(params)?;
    match p.kind.as_str() {
        "apiKey" => {}
        "chatgptAuthTokens" => return login_tokens(server, p),
        other => {
            return Err(RpcError::invalid_request(format!(
                "login type `{other}` is not supported: use `apiKey` or `chatgptAuthTokens`"
            )));
        }
    }
    let key = p
        .api_key
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .ok_or_else(|| RpcError::invalid_params("apiKey must not be empty"))?;
    let config = config(server)?;
    interpreter_core::config::set_api_key(&config.home, &config.provider.id, &key)
        .map_err(|e| RpcError::internal(format!("{e:#}")))?;
    server
        .out
        .notify("account/updated", json!({"authMode": "apikey"}));
    Ok(json!({"type": "apiKey"}))
}

/// An access token the embedding app manages: every model request of every thread (running
/// ones too) to a provider that requires OpenAI auth (the built-in `openai`, or a table with
/// `requires_openai_auth = true`) carries it as the bearer token until the app logs in again
/// with a fresh one or logs out. Threads on any other provider use that provider's own key:
/// the token never stands in for it. Kept in memory only, and redacted everywhere.
fn login_tokens(server: &Server, p: LoginParams) -> Result<Value, RpcError> {
    let token = p
        .access_token
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| RpcError::invalid_params("accessToken must not be empty"))?;
    if p.chatgpt_account_id.as_deref().is_none_or(str::is_empty) {
        return Err(RpcError::invalid_params(
            "chatgptAccountId must not be empty",
        ));
    }
    server.token.set(&token);
    let claims = jwt_claims(&token);
    let plan_type = p
        .chatgpt_plan_type
        .or_else(|| {
            claims
                .pointer("/https:~1~1api.openai.com~1auth/chatgpt_plan_type")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".to_string());
    let email = claims
        .get("email")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Ok(mut account) = server.token_account.lock() {
        *account = Some(TokenAccount {
            email,
            plan_type: plan_type.clone(),
        });
    }
    server.out.notify(
        "account/updated",
        json!({"authMode": "chatgptAuthTokens", "planType": plan_type}),
    );
    Ok(json!({"type": "chatgptAuthTokens"}))
}

/// The claims of a JWT, unverified (they only name the account); `{}` for anything else.
fn jwt_claims(token: &str) -> Value {
    use base64::Engine as _;
    token
        .split('.')
        .nth(1)
        .and_then(|p| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p.trim_end_matches('='))
                .ok()
        })
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| json!({}))
}

/// Forgets an app's token, and removes the configured provider's key from config.toml (a key
/// in the environment stays).
pub(crate) fn logout(server: &Server) -> Result<Value, RpcError> {
    server.token.clear();
    if let Ok(mut account) = server.token_account.lock() {
        *account = None;
    }
    let config = config(server)?;
    interpreter_core::config::remove_api_key(&config.home, &config.provider.id)
        .map_err(|e| RpcError::internal(format!("{e:#}")))?;
    server
        .out
        .notify("account/updated", json!({"authMode": null}));
    Ok(json!({}))
}

/// The configured provider's models; the configured model is the default.
pub(crate) fn model_list(server: &Server) -> Result<Value, RpcError> {
    let config = config(server)?;
    let mut names: Vec<String> = catalog::provider(&config.provider.id)
        .map(|p| p.models.iter().map(|m| m.to_string()).collect())
        .unwrap_or_default();
    if !names.contains(&config.model) {
        names.insert(0, config.model.clone());
    }
    let data: Vec<Value> = names
        .iter()
        .map(|name| {
            json!({
                "id": name,
                "model": name,
                "displayName": name,
                "description": format!("{} ({})", name, config.provider.name),
                "hidden": false,
                "isDefault": *name == config.model,
                "defaultReasoningEffort": config.reasoning_effort.map(|e| e.as_str()).unwrap_or("medium"),
                "supportedReasoningEfforts": efforts(name),
                "inputModalities": ["text", "image"],
            })
        })
        .collect();
    Ok(json!({"data": data, "nextCursor": null}))
}

fn efforts(model: &str) -> Vec<Value> {
    let mut words = vec!["low", "medium", "high"];
    if catalog::model_info(model).kimi {
        words.push("max");
    }
    words
        .into_iter()
        .map(|w| json!({"reasoningEffort": w, "description": format!("{w} reasoning effort")}))
        .collect()
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct HarnessListParams {
    model: Option<String>,
}

/// The harnesses, the one recommended for the model first.
pub(crate) fn harness_list(server: &Server, params: Value) -> Result<Value, RpcError> {
    let p: HarnessListParams = super::parse(params)?;
    let config = config(server)?;
    let model = p.model.unwrap_or(config.model);
    let recommended = harness::default_for(&config.provider, &model);
    // Only the harnesses that speak the provider's wire.
    let mut names: Vec<(&str, (&str, &str))> = harness::harnesses()
        .filter(|h| h.wires.contains(&config.provider.wire_api))
        .map(|h| (h.name, (h.label, h.about)))
        .collect();
    names.sort_by_key(|(n, _)| *n != recommended);
    let data: Vec<Value> = names
        .into_iter()
        .map(|(id, (label, description))| {
            let label = if id == recommended {
                format!("{label} (recommended)")
            } else {
                label.to_string()
            };
            json!({"id": id, "label": label, "description": description, "isRecommended": id == recommended})
        })
        .collect();
    Ok(json!({"data": data}))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct HarnessSetParams {
    harness: Option<String>,
    profile: Option<String>,
}

/// Writes `harness` (or `profiles.<p>.harness`) in config.toml; `null` removes it, so the
/// model picks. Threads opened from now on use it.
pub(crate) fn harness_set(server: &Server, params: Value) -> Result<Value, RpcError> {
    let p: HarnessSetParams = super::parse(params)?;
    if let Some(h) = &p.harness {
        harness::check(h).map_err(RpcError::invalid_params)?;
    }
    let config = config(server)?;
    interpreter_core::config::set_harness(&config.home, p.profile.as_deref(), p.harness.as_deref())
        .map_err(|e| RpcError::internal(format!("{e:#}")))?;
    Ok(json!({}))
}
