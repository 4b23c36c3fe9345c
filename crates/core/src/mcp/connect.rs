//! Connecting one MCP server (does I/O): a stdio server is spawned in a process tree of its
//! own, as commands are (`tools::exec::spawn_server`: nothing it starts outlives it or the
//! session), with its stderr kept for error messages; an HTTP server gets a streamable HTTP session.
//! Then the MCP handshake and the tool list, all within one deadline.

use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;

use super::{McpServerConfig, McpTransport};
use crate::tools::exec::ServerTree;

pub(super) type Client = RunningService<RoleClient, ClientConfig>;

/// A live server: the MCP client, its tools, and for stdio the process tree to end.
pub(super) struct Connection {
    pub client: Client,
    pub tools: Vec<Tool>,
    pub process: Option<ServerTree>,
}

/// Stderr lines kept for an error message.
const STDERR_TAIL_LINES: usize = 8;
/// Longest stderr line kept, in bytes.
const STDERR_LINE_MAX: usize = 500;

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("interpreter", env!("CARGO_PKG_VERSION")),
    )
}

/// Connects, initializes and lists the tools of `config` within `timeout`. The error says
/// what went wrong, for the user; for a stdio server it ends with the server's last stderr
/// lines.
pub(super) async fn connect(
    config: &McpServerConfig,
    timeout: Duration,
) -> Result<Connection, Failure> {
    match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            // The same environment as commands: no key variables (the ones named in the
            // server's own config still reach it).
            for var in crate::secrets::secret_env_vars() {
                cmd.env_remove(var);
            }
            cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            #[cfg(unix)]
            cmd.process_group(0);
            // Its stdout through a cap on each message (`cap.rs`): a result too large ends
            // its call at once. The server and everything it starts live in one process
            // tree that ends with the session, as a command's does.
            let spawned = crate::tools::exec::spawn_server(cmd, |cmd| {
                let (transport, stderr) = super::cap::CappedChild::spawn(cmd)?;
                let pid = transport.id();
                Ok(((transport, stderr), pid))
            });
            let ((transport, stderr), tree) = spawned.map_err(|e| {
                Failure::failed(format!("could not run `{}`: {e}", command.display()))
            })?;
            let process = Some(tree);
            let mut tail = StderrTail::default();
            if let Some(stderr) = stderr {
                tail.follow(config.name.clone(), stderr);
            }
            let error = match tokio::time::timeout(timeout, handshake(transport)).await {
                Ok(Ok((client, tools))) => {
                    return Ok(Connection {
                        client,
                        tools,
                        process,
                    });
                }
                Ok(Err(e)) => e.message,
                Err(_) => format!(
                    "no answer to the MCP handshake within {} s",
                    timeout.as_secs_f64()
                ),
            };
            // Kill it now, so its stderr closes and the tail is complete.
            drop(process);
            Err(Failure::failed(tail.append_to(error).await))
        }
        McpTransport::Http {
            url,
            headers,
            oauth,
        } => connect_http(&config.name, url, headers, oauth.as_ref(), timeout).await,
    }
}

/// A streamable HTTP server: with the tokens `mcp login` saved when there are some.
async fn connect_http(
    name: &str,
    url: &str,
    headers: &[(String, String)],
    oauth: Option<&super::OAuthSettings>,
    timeout: Duration,
) -> Result<Connection, Failure> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(Failure::failed(format!("`{url}` is not an http(s) URL")));
    }
    let mut custom = HashMap::new();
    for (header, value) in headers {
        let n = reqwest::header::HeaderName::from_bytes(header.as_bytes())
            .map_err(|e| Failure::failed(format!("invalid header name `{header}`: {e}")))?;
        let v = reqwest::header::HeaderValue::from_str(value)
            .map_err(|e| Failure::failed(format!("invalid value for header `{header}`: {e}")))?;
        custom.insert(n, v);
    }
    install_crypto_provider();
    let transport_config =
        StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    let attempt = async {
        let signed_in = match oauth {
            Some(settings) => super::oauth::authorized_client(settings, name, url)
                .await
                .map_err(|(needs_login, message)| Failure {
                    message,
                    needs_login,
                })?,
            None => None,
        };
        match signed_in {
            Some(client) => {
                handshake(StreamableHttpClientTransport::with_client(
                    client,
                    transport_config,
                ))
                .await
            }
            None => handshake(StreamableHttpClientTransport::from_config(transport_config)).await,
        }
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(Ok((client, tools))) => Ok(Connection {
            client,
            tools,
            process: None,
        }),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Failure::failed(format!(
            "no answer from {url} within {} s",
            timeout.as_secs_f64()
        ))),
    }
}

async fn handshake<T, E, A>(transport: T) -> Result<(Client, Vec<Tool>), Failure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = client_config().serve(transport).await.map_err(|e| {
        let message = format!("the MCP handshake failed: {e}");
        if asks_for_sign_in(&e) {
            Failure::needs_login(message)
        } else {
            Failure::failed(message)
        }
    })?;
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| Failure::failed(format!("listing its tools failed: {e}")))?;
    Ok((client, tools))
}

/// Why a server did not connect.
#[derive(Debug)]
pub(super) struct Failure {
    pub message: String,
    /// The server answered 401: it needs `interpreter mcp login` (again).
    pub needs_login: bool,
}

impl Failure {
    fn failed(message: String) -> Failure {
        Failure {
            message,
            needs_login: false,
        }
    }

    fn needs_login(message: String) -> Failure {
        Failure {
            message,
            needs_login: true,
        }
    }
}

/// True when the handshake ended on the server's 401 (rmcp's `AuthRequiredError` somewhere in
/// the transport error's chain).
fn asks_for_sign_in(e: &rmcp::service::ClientInitializeError) -> bool {
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = e else {
        return false;
    };
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(err) = next {
        if err
            .downcast_ref::<rmcp::transport::streamable_http_client::AuthRequiredError>()
            .is_some()
        {
            return true;
        }
        next = err.source();
    }
    false
}

/// rmcp's HTTP client (reqwest 0.13) is built without a crypto provider so that it shares
/// the ring-based rustls of the rest of the binary; it needs a process default.
pub(super) fn install_crypto_provider() {
    // Err only means one is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The last lines a stdio server wrote to stderr. Every line is also logged.
#[derive(Default)]
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    reader: Option<tokio::task::JoinHandle<()>>,
}

impl StderrTail {
    fn follow(&mut self, server: String, mut stderr: tokio::process::ChildStderr) {
        let lines = self.lines.clone();
        self.reader = Some(tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            let mut line: Vec<u8> = Vec::new();
            loop {
                let n = match stderr.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                for &b in &buf[..n] {
                    if b == b'\n' {
                        push(&lines, &server, &line);
                        line.clear();
                    } else if line.len() < STDERR_LINE_MAX {
                        line.push(b);
                    }
                }
            }
            if !line.is_empty() {
                push(&lines, &server, &line);
            }
        }));
    }

    /// `message`, followed by the stderr tail if there is one. Waits a moment for the reader
    /// to reach the end, so the last lines of a crashed server are in.
    async fn append_to(&mut self, message: String) -> String {
        if let Some(reader) = self.reader.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
        }
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            message
        } else {
            let tail: Vec<&str> = lines.iter().map(String::as_str).collect();
            format!("{message}; its stderr ends with:\n{}", tail.join("\n"))
        }
    }
}

fn push(lines: &Mutex<VecDeque<String>>, server: &str, line: &[u8]) {
    let line = String::from_utf8_lossy(line).trim_end().to_string();
    if line.is_empty() {
        return;
    }
    tracing::info!(target: "interpreter::mcp", "MCP server `{server}` stderr: {line}");
    let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
    if lines.len() == STDERR_TAIL_LINES {
        lines.pop_front();
    }
    lines.push_back(line);
}
