//! `interpreter app-server --listen stdio://`: the Codex app-server protocol (JSON-RPC over
//! JSON lines) that the Python Codex SDK (`openai_codex`) speaks. Threads are our sessions
//! (same store, same ids), turns are turns, items are translated events.
//!
//! The read loop handles one message at a time and never awaits a turn: a turn's progress
//! reaches the client from the session's event sink (`events.rs`), which writes through the
//! same ordered queue as the responses. The only module that knows app-server types.
#![warn(missing_docs, unreachable_pub)]

mod account;
mod approvals;
mod background;
mod events;
mod goals;
mod history;
mod items;
mod mcp;
mod methods;
mod questions;
mod state;
mod threads;
mod transport;
mod turns;
mod wire;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};

use interpreter_core::config::Overrides;
use interpreter_protocol::Restore;
use interpreter_protocol::ext;
use state::LoadedThread;
use transport::{Incoming, Outbound, Read, RpcError};

/// How long shutting down waits for sessions to stop their turns and close their logs.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Everything one connection shares.
pub(crate) struct Server {
    out: Outbound,
    overrides: Overrides,
    /// The `chatgptAuthTokens` login: the app's token, and the account it names.
    token: interpreter_core::model::provider::ExternalToken,
    token_account: Mutex<Option<account::TokenAccount>>,
    threads: Mutex<HashMap<String, Arc<LoadedThread>>>,
    approvals: Arc<state::Pending>,
    initialized: AtomicBool,
    /// Notifications that must follow the response being prepared (`thread/started`).
    after: Mutex<Vec<(&'static str, Value)>>,
}

impl Server {
    fn after_response(&self, method: &'static str, params: Value) {
        if let Ok(mut after) = self.after.lock() {
            after.push((method, params));
        }
    }

    fn thread(&self, id: &str) -> Option<Arc<LoadedThread>> {
        self.threads.lock().ok()?.get(id).cloned()
    }

    fn insert(&self, t: Arc<LoadedThread>) {
        if let Ok(mut map) = self.threads.lock() {
            map.insert(t.id().to_string(), t);
        }
    }

    fn remove(&self, id: &str) -> Option<Arc<LoadedThread>> {
        self.threads.lock().ok()?.remove(id)
    }

    fn all_threads(&self) -> Vec<Arc<LoadedThread>> {
        self.threads
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// Serves stdin/stdout; the process exits when the client closes stdin or sends SIGTERM.
pub async fn serve(overrides: Overrides, listen: &str) -> i32 {
    if listen != "stdio://" {
        eprintln!("Error: --listen {listen}: only stdio:// is supported");
        return 2;
    }
    let code = serve_on(overrides, tokio::io::stdin(), tokio::io::stdout()).await;
    // A blocked stdin read (after SIGTERM) would hold the runtime's shutdown: leave now,
    // everything that matters is flushed and every session has stopped.
    std::process::exit(code);
}

/// Serves one connection until its input ends (or SIGTERM/SIGINT), then stops every
/// session it opened.
pub(crate) async fn serve_on(
    overrides: Overrides,
    input: impl AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> i32 {
    let (out, rx) = Outbound::new();
    let writer = tokio::spawn(transport::write_lines(rx, output));
    let server = Arc::new(Server {
        out,
        overrides,
        token: Default::default(),
        token_account: Mutex::new(None),
        threads: Mutex::new(HashMap::new()),
        approvals: Default::default(),
        initialized: AtomicBool::new(false),
        after: Mutex::new(Vec::new()),
    });
    let mut input = BufReader::new(input);
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        let read = tokio::select! {
            r = transport::read_line(&mut input, transport::MAX_MESSAGE_BYTES) => r,
            () = &mut stop => break,
        };
        match read {
            Ok(Read::Line(line)) => handle_line(&server, &line).await,
            Ok(Read::TooLong) => server.out.respond(
                &Value::Null,
                Err(RpcError::invalid_request(format!(
                    "Invalid request: a message is larger than {} MiB; it was skipped",
                    transport::MAX_MESSAGE_BYTES / (1024 * 1024)
                ))),
            ),
            Ok(Read::Eof) => break,
            Err(e) => {
                tracing::warn!("app-server: reading stdin: {e}");
                break;
            }
        }
    }
    shutdown(&server).await;
    drop(server);
    let _ = writer.await;
    0
}

/// Resolves on SIGTERM, SIGHUP or SIGINT (the SDK closes stdin, then terminates); on Windows
/// on Ctrl+C, Ctrl+Break or the console closing.
async fn stop_signal() {
    match interpreter_core::platform::StopSignals::new() {
        Ok(mut stops) => {
            stops.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

/// Stops every loaded thread: running turns are cancelled (their commands killed) and the
/// logs closed, within [`SHUTDOWN_GRACE`].
async fn shutdown(server: &Server) {
    let threads = server.all_threads();
    let stops = threads.iter().map(|t| t.shutdown());
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, futures::future::join_all(stops)).await;
    if let Ok(mut map) = server.threads.lock() {
        map.clear();
    }
}

async fn handle_line(server: &Arc<Server>, line: &[u8]) {
    match transport::parse(line) {
        Ok(None) => {}
        // These answer from inside, under the thread's lock (see `turns`).
        Ok(Some(Incoming::Request { id, method, params }))
            if server.initialized.load(Ordering::SeqCst) && method == "turn/start" =>
        {
            turns::start(server, &id, params).await
        }
        // Its git may take a while: on a task of its own, so the read loop goes on.
        Ok(Some(Incoming::Request { id, method, params }))
            if server.initialized.load(Ordering::SeqCst) && method == "review/start" =>
        {
            let server = server.clone();
            tokio::spawn(async move { turns::review(&server, &id, params).await });
        }
        Ok(Some(Incoming::Request { id, method, params }))
            if server.initialized.load(Ordering::SeqCst) && method == "thread/compact/start" =>
        {
            turns::compact(server, &id, params)
        }
        Ok(Some(Incoming::Request { id, method, params }))
            if server.initialized.load(Ordering::SeqCst) && method == "mcpServerStatus/list" =>
        {
            mcp::list(server, &id, params)
        }
        Ok(Some(Incoming::Request { id, method, params }))
            if server.initialized.load(Ordering::SeqCst) && method == "mcpServer/oauth/login" =>
        {
            mcp::oauth_login(server, &id, params)
        }
        Ok(Some(Incoming::Request { id, method, params })) => {
            let result = dispatch(server, &method, params).await;
            if let Err(e) = &result {
                tracing::debug!("app-server: {method} failed: {}", e.message);
            }
            server.out.respond(&id, result);
            let after = server.after.lock().map(|mut a| std::mem::take(&mut *a));
            for (method, params) in after.unwrap_or_default() {
                server.out.notify(method, params);
            }
        }
        // `initialized` and anything else the client announces need no answer.
        Ok(Some(Incoming::Notification { method })) => {
            tracing::debug!("app-server: notification {method}");
        }
        Ok(Some(Incoming::Response { id, result })) => {
            approvals::answered(server, &id, result);
        }
        Err((id, e)) => server.out.respond(&id, Err(e)),
    }
}

/// One request to its handler. Every handler returns without waiting for a turn.
async fn dispatch(server: &Arc<Server>, method: &str, params: Value) -> Result<Value, RpcError> {
    if method == "initialize" {
        return initialize(server, params);
    }
    if !server.initialized.load(Ordering::SeqCst) {
        return Err(RpcError::invalid_request(
            "Not initialized: send `initialize` first",
        ));
    }
    match method {
        "thread/start" => methods::thread_start(server, parse(params)?).await,
        "thread/resume" => methods::thread_resume(server, parse(params)?).await,
        "thread/fork" => methods::thread_fork(server, parse(params)?).await,
        "thread/read" => methods::thread_read(server, parse(params)?).await,
        "thread/list" => methods::thread_list(server, parse(params)?).await,
        "thread/archive" => methods::thread_archive(server, parse(params)?).await,
        "thread/unarchive" => methods::thread_unarchive(server, parse(params)?).await,
        "thread/name/set" => methods::thread_set_name(server, parse(params)?).await,
        "thread/rollback" => turns::rollback(server, parse(params)?, Restore::Conversation).await,
        "thread/goal/set" => goals::set(server, parse(params)?).await,
        "thread/goal/get" => goals::get(server, parse(params)?),
        "thread/goal/clear" => goals::clear(server, parse(params)?).await,
        ext::APP_SERVER_THREAD_UNDO => turns::rollback(server, parse(params)?, Restore::Both).await,
        "turn/interrupt" => turns::interrupt(server, parse(params)?),
        "turn/steer" => turns::steer(server, parse(params)?),
        "config/mcpServer/reload" => mcp::reload(server),
        "model/list" => account::model_list(server),
        "account/read" => account::read(server),
        "account/login/start" => account::login(server, params),
        "account/logout" => account::logout(server),
        ext::APP_SERVER_HARNESS_LIST => account::harness_list(server, params),
        ext::APP_SERVER_HARNESS_SET => account::harness_set(server, params),
        other => Err(RpcError::new(
            transport::METHOD_NOT_FOUND,
            format!("Method not found: `{other}`"),
        )),
    }
}

/// Params as `T`; missing params count as an empty object.
fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params)
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))
}

fn initialize(server: &Server, params: Value) -> Result<Value, RpcError> {
    if server.initialized.swap(true, Ordering::SeqCst) {
        return Err(RpcError::invalid_request("Already initialized"));
    }
    let params: wire::InitializeParams = parse(params)?;
    if let Some(methods) = params
        .capabilities
        .and_then(|c| c.opt_out_notification_methods)
    {
        server.out.opt_out(methods);
    }
    let os = std::env::consts::OS;
    let home = interpreter_core::config::home_dir();
    Ok(json!({
        "userAgent": format!(
            "interpreter/{} ({os}; {}) interpreter/{}",
            wire::CODEX_PROTOCOL_VERSION,
            std::env::consts::ARCH,
            env!("CARGO_PKG_VERSION")
        ),
        "serverInfo": {"name": "interpreter", "version": env!("CARGO_PKG_VERSION")},
        "codexHome": std::path::absolute(&home).unwrap_or(home),
        "platformFamily": std::env::consts::FAMILY,
        "platformOs": if os == "macos" { "macos" } else { os },
    }))
}
