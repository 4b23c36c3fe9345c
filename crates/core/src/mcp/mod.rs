//! MCP servers as tools: connects the servers a front end names (stdio or streamable HTTP,
//! with `rmcp`), lists their tools as `<server>__<tool>`, and runs calls under the session's
//! approval policy. Knows no front end: ACP's `McpServer` is converted at the ACP edge.
//!
//! A server that fails to start is a warning for the front end to show, never a failed
//! session. Stdio servers run in a process tree of their own, as commands do (a keeper above
//! them, a cgroup on Linux, a Job Object on Windows), which is ended when the tools are dropped
//! (session closed, agent exiting), after a short graceful shutdown when there is still a
//! runtime to run it, and when the server exits or the agent dies.

mod cap;
mod connect;
mod names;
pub mod oauth;
mod output;

use futures::future::BoxFuture;
use interpreter_protocol::{McpServerInfo, McpServerStatus, McpToolInfo, ToolKind};
use rmcp::model::CallToolRequestParams;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use crate::config::mcp::{McpServerConfig, McpTransport, OAuthSettings};
use crate::model::{ToolSpec, kimi_schema};
use crate::sandbox::Intent;
use crate::tools::exec::ServerTree;
use crate::tools::truncate::truncate_middle;
use crate::tools::{CallDescription, ExternalTools, ToolContext, ToolOutcome};
use connect::Client;

/// How long one server may take to start, answer the handshake and list its tools, unless
/// its `startup_timeout_sec` says otherwise.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a stdio server gets to exit after its stdin closes, before its group is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How tool schemas must be shaped for the session's provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum SchemaDialect {
    /// Schemas as the server gave them (with `type: "object"` at the root).
    #[default]
    Standard,
    /// Moonshot's restricted dialect ([`kimi_schema`]); tools that cannot follow it are left
    /// out with a warning.
    Kimi,
}

impl SchemaDialect {
    pub(crate) fn for_model(provider_id: &str, model: &str) -> Self {
        if kimi_schema::applies(provider_id, model) {
            SchemaDialect::Kimi
        } else {
            SchemaDialect::Standard
        }
    }
}

/// Connects the MCP servers of a session: config.toml's `[mcp_servers]` merged with the front
/// end's (`from_client`, which wins on a name clash; see `config::mcp::merge`), schemas shaped
/// for the session's provider and model. `report` hears every configured server's status
/// (config.toml's skipped entries among them): the whole list first, then each server as it
/// is ready or fails. None when no server connected; the warnings name the servers and tools
/// left out.
pub(crate) async fn connect_session_servers(
    config: &crate::config::Config,
    from_client: Vec<McpServerConfig>,
    cwd: &Path,
    report: &(dyn Fn(StatusReport) + Sync),
) -> (Option<Arc<dyn ExternalTools>>, Vec<String>) {
    let servers = crate::config::mcp::merge(&config.mcp_servers, from_client, cwd);
    let skipped = config
        .mcp_skipped
        .iter()
        .filter(|k| !servers.iter().any(|s| s.name == k.name));
    let mut all: Vec<McpServerInfo> = servers
        .iter()
        .map(|s| info(s, McpServerStatus::Starting, Vec::new()))
        .collect();
    all.extend(skipped.map(|k| McpServerInfo {
        name: k.name.clone(),
        status: match &k.why {
            None => McpServerStatus::Disabled,
            Some(why) => McpServerStatus::Failed { error: why.clone() },
        },
        auth: k.auth,
        tools: Vec::new(),
    }));
    if all.is_empty() {
        return (None, Vec::new());
    }
    report(StatusReport::All(all));
    if servers.is_empty() {
        return (None, Vec::new());
    }
    let dialect = SchemaDialect::for_model(&config.provider.id, &config.model);
    let (tools, warnings) =
        McpTools::connect(servers, dialect, &|one| report(StatusReport::One(one))).await;
    let tools = (!tools.is_empty()).then(|| Arc::new(tools) as Arc<dyn ExternalTools>);
    (tools, warnings)
}

/// Every server of `config` as a session in `cwd` would start them, each started, listed and
/// stopped again: its status and tools, in the configured order. For a face asked about the
/// servers outside any session (the app-server's `mcpServerStatus/list` without a thread).
pub async fn discover(config: &crate::config::Config, cwd: &Path) -> Vec<McpServerInfo> {
    let found = std::sync::Mutex::new(Vec::new());
    let report = |r: StatusReport| {
        let mut found = found.lock().unwrap_or_else(|e| e.into_inner());
        match r {
            StatusReport::All(all) => *found = all,
            StatusReport::One(one) => {
                if let Some(s) = found.iter_mut().find(|s| s.name == one.name) {
                    *s = one;
                }
            }
        }
    };
    // The tools are dropped here, which stops the servers.
    let _ = connect_session_servers(config, Vec::new(), cwd, &report).await;
    found.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// What [`connect_session_servers`] tells as servers start.
pub(crate) enum StatusReport {
    /// Every configured server, before any has finished starting.
    All(Vec<McpServerInfo>),
    /// One server is ready or failed.
    One(McpServerInfo),
}

/// Why a server did not start. Connecting gives `Failed` for every error but an HTTP
/// server's demand for an OAuth login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StartFailure {
    /// The server wants a login first (`interpreter mcp login NAME`).
    NeedsLogin(String),
    /// Anything else, for a person.
    Failed(String),
}

impl From<String> for StartFailure {
    fn from(error: String) -> Self {
        StartFailure::Failed(error)
    }
}

impl From<connect::Failure> for StartFailure {
    fn from(f: connect::Failure) -> Self {
        if f.needs_login {
            StartFailure::NeedsLogin(f.message)
        } else {
            StartFailure::Failed(f.message)
        }
    }
}

impl StartFailure {
    /// What the user reads about server `name`.
    fn warning(&self, name: &str) -> String {
        match self {
            StartFailure::NeedsLogin(m) => format!(
                "MCP server `{name}` needs a login: run `interpreter mcp login {name}` ({m})"
            ),
            StartFailure::Failed(m) => format!("MCP server `{name}` failed to start: {m}"),
        }
    }

    fn status(&self) -> McpServerStatus {
        match self {
            StartFailure::NeedsLogin(m) => McpServerStatus::NeedsLogin { error: m.clone() },
            StartFailure::Failed(m) => McpServerStatus::Failed { error: m.clone() },
        }
    }
}

/// The server's auth, with `o_auth` for one `interpreter mcp login` signed in to.
fn auth_of(config: &McpServerConfig) -> interpreter_protocol::McpAuthStatus {
    match (&config.transport, config.auth()) {
        (
            McpTransport::Http {
                url,
                oauth: Some(settings),
                ..
            },
            interpreter_protocol::McpAuthStatus::NotLoggedIn,
        ) if oauth::has_credentials(settings, &config.name, url) => {
            interpreter_protocol::McpAuthStatus::OAuth
        }
        (_, auth) => auth,
    }
}

fn info(
    config: &McpServerConfig,
    status: McpServerStatus,
    tools: Vec<McpToolInfo>,
) -> McpServerInfo {
    McpServerInfo {
        name: config.name.clone(),
        status,
        auth: auth_of(config),
        tools,
    }
}

/// A connected server's status: ready, with the tools its entry lets through.
fn ready_info(config: &McpServerConfig, tools: &[rmcp::model::Tool]) -> McpServerInfo {
    let tools = tools
        .iter()
        .filter(|t| config.offers(&t.name))
        .map(|t| McpToolInfo {
            name: t.name.to_string(),
            title: t
                .title
                .clone()
                .or_else(|| t.annotations.as_ref().and_then(|a| a.title.clone())),
            description: t.description.as_deref().map(str::to_string),
            input_schema: Value::Object((*t.input_schema).clone()),
        })
        .collect();
    info(config, McpServerStatus::Ready, tools)
}

/// The tools of a session's connected MCP servers.
pub(crate) struct McpTools {
    servers: Vec<Server>,
    tools: Vec<McpTool>,
}

struct Server {
    name: String,
    /// Before `client`: dropped first, so the keeper ends the tree before the transport's
    /// own kill reaches the keeper.
    process: Option<ServerTree>,
    client: Client,
    tool_timeout: Option<Duration>,
}

struct McpTool {
    /// Index into `McpTools::servers`.
    server: usize,
    /// The server's own name for the tool.
    tool: String,
    title: String,
    spec: ToolSpec,
}

impl McpTools {
    /// Connects every server at once, each within its `startup_timeout` (default
    /// [`CONNECT_TIMEOUT`]). Servers that fail are left out and described in the returned
    /// warnings ("MCP server `x` failed to start: …"), and so are tools whose schema cannot
    /// follow `dialect`.
    pub(crate) async fn connect(
        servers: Vec<McpServerConfig>,
        dialect: SchemaDialect,
        report: &(dyn Fn(McpServerInfo) + Sync),
    ) -> (McpTools, Vec<String>) {
        let results = futures::future::join_all(servers.iter().map(|s| async move {
            let limit = s.startup_timeout.unwrap_or(CONNECT_TIMEOUT);
            let result = connect::connect(s, limit).await.map_err(StartFailure::from);
            report(match &result {
                Ok(conn) => ready_info(s, &conn.tools),
                Err(failure) => info(s, failure.status(), Vec::new()),
            });
            result
        }))
        .await;
        let mut names = names::NameAllocator::default();
        let mut out = McpTools {
            servers: Vec::new(),
            tools: Vec::new(),
        };
        let mut warnings = Vec::new();
        for (config, result) in servers.into_iter().zip(results) {
            let conn = match result {
                Ok(c) => c,
                Err(failure) => {
                    let w = failure.warning(&config.name);
                    tracing::warn!("{w}");
                    warnings.push(w);
                    continue;
                }
            };
            tracing::info!("MCP server `{}`: {} tools", config.name, conn.tools.len());
            let index = out.servers.len();
            // Moonshot refuses function names that start with a digit.
            let prefix = match dialect {
                SchemaDialect::Kimi => kimi_schema::tool_name(&config.name),
                SchemaDialect::Standard => config.name.clone(),
            };
            for t in conn.tools.into_iter().filter(|t| config.offers(&t.name)) {
                let parameters = names::parameters_schema(&t.input_schema);
                let parameters = match dialect {
                    SchemaDialect::Standard => parameters,
                    SchemaDialect::Kimi => match kimi_schema::normalize(&parameters) {
                        Ok(p) => p,
                        Err(e) => {
                            let w = format!(
                                "MCP tool `{}` of server `{}` was left out: its input schema cannot be made valid for Kimi ({e})",
                                t.name, config.name
                            );
                            tracing::warn!("{w}");
                            warnings.push(w);
                            continue;
                        }
                    },
                };
                let name = names.allocate(&prefix, &t.name);
                let shown = t
                    .title
                    .clone()
                    .or_else(|| t.annotations.as_ref().and_then(|a| a.title.clone()))
                    .unwrap_or_else(|| t.name.to_string());
                let description = t
                    .description
                    .as_deref()
                    .filter(|d| !d.trim().is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(|| {
                        format!("`{}` from the MCP server `{}`.", t.name, config.name)
                    });
                out.tools.push(McpTool {
                    server: index,
                    tool: t.name.to_string(),
                    title: format!("{}: {shown}", config.name),
                    spec: ToolSpec {
                        name,
                        description,
                        parameters,
                    },
                });
            }
            out.servers.push(Server {
                name: config.name,
                client: conn.client,
                process: conn.process,
                tool_timeout: config.tool_timeout,
            });
        }
        (out, warnings)
    }

    /// True when no server connected.
    pub(crate) fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    fn find(&self, name: &str) -> Option<&McpTool> {
        self.tools.iter().find(|t| t.spec.name == name)
    }
}

impl ExternalTools for McpTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec.clone()).collect()
    }

    fn describe(&self, tool: &str, _args: &Value) -> Option<CallDescription> {
        let t = self.find(tool)?;
        Some(CallDescription {
            kind: ToolKind::Other,
            title: t.title.clone(),
            locations: vec![],
            command: None,
        })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let Some(t) = self.find(tool) else {
                return ToolOutcome::error(format!("Tool `{tool}` does not exist."));
            };
            let server = &self.servers[t.server];
            // MCP tools can do anything: they follow the mode like a command does (ask in
            // `auto`, run in `full-access`, refused in `read-only`), and "always allow" is
            // remembered per tool.
            let intent = Intent::Mcp {
                server: server.name.clone(),
                tool: t.tool.clone(),
                command: format!("mcp {}.{}", names::sanitize(&server.name, "mcp"), t.tool),
            };
            if let Err(refused) = ctx
                .authorize(intent, tool, ToolKind::Other, &t.title, vec![])
                .await
            {
                return refused;
            }
            let mut params = CallToolRequestParams::new(t.tool.clone());
            match args {
                Value::Object(map) => params = params.with_arguments(map),
                Value::Null => {}
                other => {
                    return ToolOutcome::error(format!(
                        "The arguments of `{tool}` must be a JSON object, not {other}."
                    ));
                }
            }
            // Dropping the call (cancel, timeout) sends `notifications/cancelled` to the server.
            let limit = server.tool_timeout.unwrap_or(Duration::MAX);
            let result = tokio::select! {
                r = tokio::time::timeout(limit, server.client.call_tool(params)) => match r {
                    Ok(r) => r,
                    Err(_) => {
                        return ToolOutcome::error(format!(
                            "The MCP server `{}` did not finish `{}` within {} s (tool_timeout_sec).",
                            server.name,
                            t.tool,
                            limit.as_secs_f64()
                        ));
                    }
                },
                _ = ctx.cancel.cancelled() => {
                    return ToolOutcome::error("The tool call was cancelled.");
                }
            };
            match result {
                Ok(r) => {
                    let text = output::result_text(&r);
                    let for_model = truncate_middle(&text, ctx.output_token_limit);
                    let mut outcome = if r.is_error == Some(true) {
                        ToolOutcome::error(text)
                    } else {
                        ToolOutcome::ok(text)
                    };
                    outcome.model_output = for_model;
                    outcome
                }
                // The stand-in for a message over the cap (`cap.rs`).
                Err(rmcp::ServiceError::McpError(e))
                    if e.message.starts_with("result too large") =>
                {
                    ToolOutcome::error(format!(
                        "The MCP server `{}` answered `{}` with a {}; ask for less.",
                        server.name, t.tool, e.message
                    ))
                }
                Err(e) => ToolOutcome::error(format!(
                    "The MCP server `{}` could not run `{}`: {e}",
                    server.name, t.tool
                )),
            }
        })
    }
}

impl Server {
    /// Closes the session (stdin EOF for stdio servers), waits a little, then kills what is
    /// left of the process tree.
    async fn shutdown(mut self) {
        let _ = self.client.close_with_timeout(SHUTDOWN_GRACE).await;
        drop(self.process.take());
    }
}

impl Drop for McpTools {
    fn drop(&mut self) {
        let servers = std::mem::take(&mut self.servers);
        if servers.is_empty() {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            // If the runtime shuts down before this runs, dropping the task drops the process
            // guards, which kill the groups.
            Ok(rt) => {
                rt.spawn(futures::future::join_all(
                    servers.into_iter().map(Server::shutdown),
                ));
            }
            Err(_) => drop(servers),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connect_error_is_a_failure_and_a_login_demand_names_the_command() {
        let failed = StartFailure::from("could not run `x`".to_string());
        assert_eq!(
            failed.status(),
            McpServerStatus::Failed {
                error: "could not run `x`".into()
            }
        );
        assert_eq!(
            failed.warning("docs"),
            "MCP server `docs` failed to start: could not run `x`"
        );
        let login = StartFailure::NeedsLogin("401 Unauthorized".into());
        assert_eq!(
            login.status(),
            McpServerStatus::NeedsLogin {
                error: "401 Unauthorized".into()
            }
        );
        assert!(
            login
                .warning("tracker")
                .contains("run `interpreter mcp login tracker` (401 Unauthorized)")
        );
    }
}
