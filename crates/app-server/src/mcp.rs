//! The MCP methods: `mcpServerStatus/list`, `config/mcpServer/reload` and
//! `mcpServer/oauth/login`. A thread's servers
//! are what its session reported (`SessionView::mcp_servers`); without a thread, the servers
//! of the configuration are started, listed and stopped, in a task of their own so that a
//! slow server never holds the read loop.

use interpreter_core::config::Config;
use interpreter_core::mcp::McpTransport;
use interpreter_core::mcp::oauth::{self, PendingLogin};
use interpreter_protocol::{McpServerInfo, Op};
use serde_json::{Value, json};
use std::sync::Arc;

use super::Server;
use super::transport::RpcError;
use super::turns::loaded;
use super::wire::{McpStatusListParams, mcp_server_status_json};

/// `mcpServerStatus/list`; answers `id` itself (see the module comment).
pub(crate) fn list(server: &Arc<Server>, id: &Value, params: Value) {
    let p: McpStatusListParams = match super::parse(params) {
        Ok(p) => p,
        Err(e) => return server.out.respond(id, Err(e)),
    };
    if let Some(thread_id) = &p.thread_id {
        let result = loaded(server, thread_id).map(|t| {
            let servers = t
                .state()
                .view
                .as_ref()
                .map(|v| v.mcp_servers.clone())
                .unwrap_or_default();
            page(servers, &p, true)
        });
        return server.out.respond(id, result.and_then(|r| r));
    }
    let server = server.clone();
    let id = id.clone();
    tokio::spawn(async move {
        let result = match configured(&server) {
            Ok((config, cwd)) => {
                let servers = interpreter_core::mcp::discover(&config, &cwd).await;
                page(servers, &p, false)
            }
            Err(e) => Err(e),
        };
        server.out.respond(&id, result);
    });
}

/// The configuration of a thread started now in the server's folder.
fn configured(server: &Server) -> Result<(Config, std::path::PathBuf), RpcError> {
    let cwd = std::env::current_dir()
        .map_err(|e| RpcError::internal(format!("reading the current directory: {e}")))?;
    let mut o = server.overrides.clone();
    o.project = Some(cwd.clone());
    let config = Config::load(&o)
        .map_err(|e| RpcError::internal(format!("invalid configuration: {e:#}")))?;
    Ok((config, cwd))
}

/// One page of the list, by name; the cursor is the index of the page's first server.
fn page(
    mut servers: Vec<McpServerInfo>,
    p: &McpStatusListParams,
    thread: bool,
) -> Result<Value, RpcError> {
    if let Some(name) = &p.server_name {
        servers.retain(|s| &s.name == name);
    }
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    let start = match &p.cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= servers.len())
            .ok_or_else(|| RpcError::invalid_params(format!("invalid cursor `{c}`")))?,
    };
    let limit = p.limit.filter(|n| *n > 0).unwrap_or(usize::MAX);
    let end = start.saturating_add(limit).min(servers.len());
    let data: Vec<Value> = servers[start..end]
        .iter()
        .map(|s| mcp_server_status_json(s, thread))
        .collect();
    let next = (end < servers.len()).then(|| end.to_string());
    Ok(json!({"data": data, "nextCursor": next}))
}

/// `config/mcpServer/reload`: every loaded thread reads config.toml's servers again and
/// reconnects them once it is idle (a running turn ends first); their statuses follow as
/// `mcpServer/startupStatus/updated`. Threads started later read the file anyway.
pub(crate) fn reload(server: &Server) -> Result<Value, RpcError> {
    for t in server.all_threads() {
        // The ticket is not awaited: the answer does not wait for the servers.
        drop(t.handle.submit(Op::ReloadMcpServers));
    }
    Ok(json!({}))
}

/// `mcpServer/oauth/login` params, as the schema has them.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct OauthLoginParams {
    name: String,
    #[serde(default)]
    scopes: Option<Vec<String>>,
    #[serde(default)]
    timeout_secs: Option<u64>,
    #[serde(default)]
    thread_id: Option<String>,
    /// `auto`, `cimd` or `dcr`.
    #[serde(default)]
    client_registration: Option<String>,
}

/// `mcpServer/oauth/login`: answers with the authorization URL for the client to open, then
/// waits for the browser in the background and sends `mcpServer/oauthLogin/completed`. A
/// successful sign-in makes every loaded thread reconnect its servers (as `reload`), so the
/// server joins the next turn. Answers `id` itself: discovery and registration take network
/// round trips that must not hold the read loop.
pub(crate) fn oauth_login(server: &Arc<Server>, id: &Value, params: Value) {
    let p: OauthLoginParams = match super::parse(params) {
        Ok(p) => p,
        Err(e) => return server.out.respond(id, Err(e)),
    };
    if let Some(t) = &p.thread_id
        && let Err(e) = loaded(server, t)
    {
        return server.out.respond(id, Err(e));
    }
    if p.client_registration.as_deref() == Some("cimd") {
        let e = RpcError::invalid_params(
            "clientRegistration `cimd` is not supported; use `auto` or `dcr` (dynamic registration)",
        );
        return server.out.respond(id, Err(e));
    }
    let server = server.clone();
    let id = id.clone();
    tokio::spawn(async move {
        let target = configured(&server).and_then(|(config, _)| oauth_target(&config, &p.name));
        let (settings, url) = match target {
            Ok(t) => t,
            Err(e) => return server.out.respond(&id, Err(e)),
        };
        let scopes = p.scopes.clone().unwrap_or_default();
        let pending = match PendingLogin::start(&settings, &p.name, &url, &scopes).await {
            Ok(pending) => pending,
            Err(e) => return server.out.respond(&id, Err(RpcError::internal(e))),
        };
        let login_id = uuid::Uuid::new_v4().to_string();
        server.out.respond(
            &id,
            Ok(json!({"authorizationUrl": pending.authorization_url(), "loginId": login_id})),
        );
        let timeout = p
            .timeout_secs
            .filter(|s| *s > 0)
            .map_or(oauth::LOGIN_TIMEOUT, std::time::Duration::from_secs);
        let result = pending.finish(timeout).await;
        server.out.notify(
            "mcpServer/oauthLogin/completed",
            json!({
                "name": p.name,
                "success": result.is_ok(),
                "error": result.as_ref().err(),
                "loginId": login_id,
                "threadId": p.thread_id,
            }),
        );
        if result.is_ok() {
            let _ = reload(&server);
        }
    });
}

/// The token store and URL of the configured streamable HTTP server `name`.
fn oauth_target(config: &Config, name: &str) -> Result<(oauth::OAuthSettings, String), RpcError> {
    let Some(s) = config.mcp_servers.iter().find(|s| s.name == name) else {
        return Err(RpcError::invalid_params(format!(
            "no MCP server named `{name}` is configured"
        )));
    };
    match &s.transport {
        McpTransport::Http {
            url,
            oauth: Some(settings),
            ..
        } => Ok((settings.clone(), url.clone())),
        McpTransport::Http { .. } => Err(RpcError::invalid_params(format!(
            "`{name}` authenticates with a bearer token or header, not OAuth"
        ))),
        McpTransport::Stdio { .. } => Err(RpcError::invalid_params(format!(
            "`{name}` is a stdio server: OAuth login is only for streamable HTTP servers"
        ))),
    }
}
