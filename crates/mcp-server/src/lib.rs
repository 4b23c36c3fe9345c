//! `interpreter mcp-server`: the agent as an MCP server on stdio, in the contract of Codex's
//! `codex mcp-server` (docs/mcp-server.md): a `codex` tool that starts a thread and a
//! `codex-reply` tool that continues one, progress as `codex/event` notifications, approvals
//! as elicitations. stdout carries MCP JSON-RPC only.
#![warn(missing_docs, unreachable_pub)]

mod params;
mod server;
mod transport;
mod turn;

use interpreter_core::config::Overrides;
use rmcp::ServiceExt;

/// Serves MCP on stdin and stdout until the client closes stdin; the exit code.
pub async fn serve(overrides: Overrides) -> i32 {
    let base = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("Error: reading the current directory: {e}");
            return 1;
        }
    };
    let server = server::Server::new(overrides, base);
    let io = transport::stdio();
    let code = match server.clone().serve((io.sink, io.stream)).await {
        Ok(running) => match running.waiting().await {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("Error: the MCP session ended: {e}");
                1
            }
        },
        Err(e) => {
            eprintln!("Error: the MCP handshake failed: {e}");
            1
        }
    };
    server.shut_down().await;
    // The last answers leave before the process does.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), io.writer).await;
    code
}
