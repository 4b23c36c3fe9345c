//! The MCP methods: `mcpServerStatus/list` and `config/mcpServer/reload`. A thread's servers
//! are what its session reported (`SessionView::mcp_servers`); without a thread, the servers
//! of the configuration are started, listed and stopped, in a task of their own so that a
//! slow server never holds the read loop.

use interpreter_core::config::Config;
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
