//! OAuth sign-in for streamable HTTP MCP servers, by the MCP authorization spec through
//! rmcp's `auth`: discovery of the protected resource and its authorization server, dynamic
//! client registration, the authorization code with PKCE and the RFC 8707 `resource`, a
//! callback on a loopback port, and refresh. Tokens live in [`store::TokenStore`], never in
//! config.toml, a session or a log.
//!
//! `login` is `interpreter mcp login` (and `mcp add --url` in a terminal); sessions reach a
//! signed-in server through [`authorized_client`], which refreshes an expired token and
//! saves the new one.

mod browser;
mod callback;
mod store;

use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationManager, OAuthState};
use std::time::Duration;

pub use crate::config::mcp::{CredentialsStore, OAuthSettings};
use store::TokenStore;

/// How long the user has to finish signing in, from the moment the URL is shown.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// How long `mcp add` waits to learn whether a server offers OAuth.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The name dynamic client registration gives us.
const CLIENT_NAME: &str = "interpreter";

/// Signs in to the server `name` at `url`: always a fresh sign-in. `show` gets the
/// authorization URL (to print: a machine without a browser still has it), then the
/// browser is started on it (`$BROWSER`, else the system's opener). The tokens are saved only
/// once the whole exchange succeeded; any failure leaves the previous ones as they were.
pub async fn login(
    settings: &OAuthSettings,
    name: &str,
    url: &str,
    scopes: &[String],
    show: impl FnOnce(&str),
) -> Result<(), String> {
    let pending = PendingLogin::start(settings, name, url, scopes).await?;
    show(pending.authorization_url());
    if let Err(e) = browser::open(pending.authorization_url()) {
        tracing::warn!("could not start a browser ({e}); open the URL by hand");
    }
    pending.finish(LOGIN_TIMEOUT).await
}

/// A sign-in waiting for the browser: the authorization URL to visit, and the loopback
/// callback listening for its answer. The app-server hands the URL to its client (which opens
/// it) and finishes in the background.
pub struct PendingLogin {
    state: OAuthState,
    callback: callback::Callback,
    url: String,
    authorization_url: String,
}

impl PendingLogin {
    /// Discovers the server's authorization server, registers, and listens for the callback.
    pub async fn start(
        settings: &OAuthSettings,
        name: &str,
        url: &str,
        scopes: &[String],
    ) -> Result<PendingLogin, String> {
        super::connect::install_crypto_provider();
        let callback = callback::Callback::bind(settings.callback_port.unwrap_or(0)).await?;
        let mut manager = AuthorizationManager::new(url)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        manager.set_credential_store(TokenStore::new(settings, name, url));
        let mut state = OAuthState::Unauthorized(manager);
        let mut request = rmcp::transport::auth::AuthorizationRequest::new(callback.redirect_uri())
            .with_client_name(CLIENT_NAME);
        if !scopes.is_empty() {
            request = request.with_scopes(scopes.iter().cloned());
        }
        state
            .start_authorization(request)
            .await
            .map_err(|e| describe(url, &e))?;
        let authorization_url = state
            .get_authorization_url()
            .await
            .map_err(|e| describe(url, &e))?;
        Ok(PendingLogin {
            state,
            callback,
            url: url.to_string(),
            authorization_url,
        })
    }

    /// Where the user signs in.
    pub fn authorization_url(&self) -> &str {
        &self.authorization_url
    }

    /// Waits up to `timeout` for the browser to come back, then exchanges the code and saves
    /// the tokens.
    pub async fn finish(mut self, timeout: Duration) -> Result<(), String> {
        let back = tokio::time::timeout(timeout, self.callback.wait())
            .await
            .map_err(|_| {
                format!(
                    "no sign-in came back within {} s; run the login again",
                    timeout.as_secs()
                )
            })??;
        self.state
            .handle_callback_url(&back)
            .await
            .map_err(|e| describe(&self.url, &e))
    }
}

/// Forgets the server's tokens; false when there were none.
pub fn logout(settings: &OAuthSettings, name: &str, url: &str) -> Result<bool, String> {
    TokenStore::new(settings, name, url).clear_now()
}

/// True when tokens are saved for the server (Codex's `o_auth` status).
pub fn has_credentials(settings: &OAuthSettings, name: &str, url: &str) -> bool {
    matches!(
        TokenStore::new(settings, name, url).load_now(),
        Ok(Some(c)) if c.token_response.is_some()
    )
}

/// True when the server at `url` publishes OAuth metadata (so `mcp add` can offer the
/// sign-in); false when it does not, or does not answer within a few seconds.
pub async fn supports_oauth(url: &str) -> bool {
    super::connect::install_crypto_provider();
    let probe = async {
        let manager = AuthorizationManager::new(url).await.ok()?;
        manager.resolve_metadata().await.ok()
    };
    matches!(
        tokio::time::timeout(PROBE_TIMEOUT, probe).await,
        Ok(Some(_))
    )
}

/// A session's HTTP client for a signed-in server: the saved tokens, refreshed when they
/// expire (the new ones saved). None when no tokens are saved. An error says why they cannot
/// be used, and whether a new sign-in is the cure (true: the issuer changed and they were
/// dropped) or not (false: the server's metadata did not load).
pub(super) async fn authorized_client(
    settings: &OAuthSettings,
    name: &str,
    url: &str,
) -> Result<Option<AuthClient<rmcp_reqwest::Client>>, (bool, String)> {
    if !has_credentials(settings, name, url) {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| (false, describe(url, &e)))?;
    manager.set_credential_store(TokenStore::new(settings, name, url));
    match manager.initialize_from_store().await {
        Ok(true) => Ok(Some(AuthClient::new(
            rmcp_reqwest::Client::default(),
            manager,
        ))),
        Ok(false) => Err((
            true,
            "its sign-in was dropped: the authorization server changed".into(),
        )),
        Err(e) => Err((false, describe(url, &e))),
    }
}

/// An rmcp auth error for the user: what failed, without a token.
fn describe(url: &str, e: &AuthError) -> String {
    match e {
        AuthError::NoAuthorizationSupport => {
            format!("{url} does not offer OAuth sign-in (no authorization server metadata)")
        }
        // rmcp keeps the PKCE verifier under the `state` it sent: another one came back.
        AuthError::InternalError(m) if m == "Authorization state not found" => format!(
            "signing in to {url} failed: the callback carried a `state` of a sign-in this login did not start (a forged or stale request); nothing was saved"
        ),
        other => format!("signing in to {url} failed: {other}"),
    }
}
