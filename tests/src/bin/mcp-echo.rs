//! `mcp-echo`: a tiny MCP server for end-to-end tests, built on rmcp's server side.
//!
//! ```text
//! mcp-echo [--http] [--pid-file FILE] [--child-pid-file FILE] [--setsid-child-pid-file FILE]
//!          [--linger] [--schema-shapes] [--long-names] [--big]
//! ```
//!
//! Tools: `say {text}` answers `$MCP_ECHO_PREFIX` + text; `fail` answers an error result;
//! `sleep {seconds}` waits, for cancellation tests. `--schema-shapes` adds `shape_*` tools
//! whose input schemas have the shapes Moonshot's validator rejects (see
//! `crates/core/src/model/kimi_schema.rs`); calling one answers `ok`. `--long-names` adds tools
//! whose names tell apart only past what a 64-character cut keeps ([`LONG_NAMES`]); each
//! answers `I am <its name>`. `--big` adds `big {bytes}`, which answers that many bytes.
//!
//! Speaks MCP on stdin/stdout by default and exits when stdin closes. With `--http` it serves
//! streamable HTTP on 127.0.0.1 at a free port, prints `http://127.0.0.1:PORT/mcp` as its only
//! stdout line, and exits when stdin closes. `--pid-file` records its process id, so a test can
//! check that nothing is left running; `--child-pid-file` starts a `sleep` child (a stand-in for
//! what `npx` starts) and records its id; `--setsid-child-pid-file` starts `setsid sleep 300`,
//! which leaves the server's process group and session, and records its id; `--linger` keeps running for a minute after the MCP
//! session ends, like a server that ignores stdin EOF.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

#[derive(Debug, Parser)]
#[command(name = "mcp-echo", about = "A tiny MCP server for tests")]
struct Args {
    /// Serve streamable HTTP on 127.0.0.1 instead of stdio.
    #[arg(long)]
    http: bool,
    /// Write this process's id to FILE.
    #[arg(long)]
    pid_file: Option<PathBuf>,
    /// Start `sleep 300` as a child and write its id to FILE.
    #[arg(long)]
    child_pid_file: Option<PathBuf>,
    /// Start `setsid sleep 300` (its own session and group) and write its id to FILE.
    #[arg(long)]
    setsid_child_pid_file: Option<PathBuf>,
    /// Keep running for a minute after the session ends.
    #[arg(long)]
    linger: bool,
    /// Also list tools whose schemas Moonshot rejects as they are.
    #[arg(long)]
    schema_shapes: bool,
    /// Also list the tools of `LONG_NAMES`.
    #[arg(long)]
    long_names: bool,
    /// Also list `big {bytes}`.
    #[arg(long)]
    big: bool,
}

/// Names that differ only at their end: `echo__` plus each of the first two is 64
/// characters; the last two are 72 characters that share their first 66.
const LONG_NAMES: [&str; 4] = [
    "tttttttttttttttttttttttttttttttttttttttttttttttttttttt_one",
    "tttttttttttttttttttttttttttttttttttttttttttttttttttttt_two",
    "uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu_alpha",
    "uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu_gamma",
];

#[derive(Clone)]
struct Echo {
    prefix: String,
    schema_shapes: bool,
    long_names: bool,
    big: bool,
}

/// One tool per schema shape Moonshot rejects, and one (`shape_remote`) no rewrite can fix.
fn shape_tools() -> Vec<Tool> {
    let shapes = [
        (
            "shape_anyof",
            json!({"type": "object", "properties": {
                "v": {"type": "string", "anyOf": [{"minLength": 1}, {"maxLength": 0}]}}}),
        ),
        (
            "shape_tuple",
            json!({"type": "object", "properties": {
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}]},
                "nothing": {"type": "array", "items": false}}}),
        ),
        (
            "shape_bool",
            json!({"type": "object", "properties": {"any": true, "never": false},
                "required": ["any", "never"]}),
        ),
        (
            "shape_ref_sibling",
            json!({"type": "object", "properties": {
                "day": {"$ref": "#/$defs/date", "description": "The day"}},
                "$defs": {"date": {"type": "string", "format": "date"}}}),
        ),
        (
            "shape_definitions",
            json!({"type": "object", "properties": {"a": {"$ref": "#/definitions/A"}},
                "definitions": {"A": {"type": "object", "properties": {"n": {"type": "integer"}}}}}),
        ),
        (
            "shape_no_type",
            json!({"properties": {"x": {"type": "string"}}}),
        ),
        (
            "shape_remote",
            json!({"type": "object", "properties": {
                "x": {"$ref": "https://schemas.invalid/x.json"}}}),
        ),
    ];
    shapes
        .into_iter()
        .map(|(name, s)| Tool::new(name, "A tool with an unusual schema.", schema(s)))
        .collect()
}

fn schema(v: Value) -> Arc<Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mcp-echo", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = vec![
            Tool::new(
                "say",
                "Repeats the text.",
                schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
            ),
            // No `type` in the schema: the client must add it.
            Tool::new("fail", "Always fails.", schema(json!({"properties": {}}))),
            Tool::new(
                "sleep",
                "Waits.",
                schema(json!({
                    "type": "object",
                    "properties": {"seconds": {"type": "number"}}
                })),
            ),
        ];
        if self.schema_shapes {
            tools.extend(shape_tools());
        }
        if self.long_names {
            tools.extend(
                LONG_NAMES
                    .iter()
                    .map(|n| Tool::new(*n, "Says its name.", schema(json!({"type": "object"})))),
            );
        }
        if self.big {
            tools.push(Tool::new(
                "big",
                "Answers `bytes` bytes.",
                schema(json!({"type": "object", "properties": {"bytes": {"type": "integer"}}})),
            ));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match &*request.name {
            "say" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                CallToolResult::success(vec![ContentBlock::text(format!("{}{text}", self.prefix))])
            }
            "fail" => CallToolResult::error(vec![ContentBlock::text("it failed")]),
            "sleep" => {
                let secs = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0);
                tokio::time::sleep(std::time::Duration::from_secs_f64(secs)).await;
                CallToolResult::success(vec![ContentBlock::text("slept")])
            }
            other if self.schema_shapes && other.starts_with("shape_") => {
                CallToolResult::success(vec![ContentBlock::text("ok")])
            }
            other if self.long_names && LONG_NAMES.contains(&other) => {
                CallToolResult::success(vec![ContentBlock::text(format!("I am {other}"))])
            }
            "big" if self.big => {
                let n = args.get("bytes").and_then(Value::as_u64).unwrap_or(0);
                CallToolResult::success(vec![ContentBlock::text("x".repeat(n as usize))])
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(p) = &args.pid_file {
        std::fs::write(p, std::process::id().to_string()).context("writing the pid file")?;
    }
    // Kept alive (not waited for) until this process ends.
    let _child = match &args.child_pid_file {
        Some(p) => {
            let child = std::process::Command::new("sleep")
                .arg("300")
                .stdin(std::process::Stdio::null())
                .spawn()
                .context("starting the sleep child")?;
            std::fs::write(p, child.id().to_string()).context("writing the child pid file")?;
            Some(child)
        }
        None => None,
    };
    // Not a group leader, so `setsid` makes the new session itself and execs `sleep`: the
    // child's id is the sleep's.
    let _escaped = match &args.setsid_child_pid_file {
        Some(p) => {
            let child = std::process::Command::new("setsid")
                .args(["sleep", "300"])
                .stdin(std::process::Stdio::null())
                .spawn()
                .context("starting setsid sleep")?;
            std::fs::write(p, child.id().to_string()).context("writing the setsid pid file")?;
            Some(child)
        }
        None => None,
    };
    let echo = Echo {
        prefix: std::env::var("MCP_ECHO_PREFIX").unwrap_or_default(),
        schema_shapes: args.schema_shapes,
        long_names: args.long_names,
        big: args.big,
    };
    if !args.http {
        let running = echo.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        if args.linger {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        }
        return Ok(());
    }
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let service = StreamableHttpService::new(
        move || Ok(echo.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}/mcp", listener.local_addr()?);
    // Serve until stdin closes (the test, or whoever started us, went away).
    let stdin_closed = async {
        let mut sink = tokio::io::sink();
        let _ = tokio::io::copy(&mut tokio::io::stdin(), &mut sink).await;
    };
    // Not a graceful shutdown: open SSE streams would hold it forever.
    tokio::select! {
        r = axum::serve(listener, app) => r?,
        _ = stdin_closed => {}
    }
    Ok(())
}
