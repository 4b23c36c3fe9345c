//! `mock_llm`: a scripted mock model server (OpenAI Chat and Responses, Anthropic Messages) for
//! end-to-end tests.
//!
//! One [`Script`] drives the three wire protocols: `POST …/chat/completions`
//! (Chat Completions SSE), `POST …/responses` (Responses API SSE) and
//! `POST …/v1/messages` (Anthropic Messages SSE, thinking signed by the mock). Each model
//! request consumes the next [`Reply`]. Every request is recorded
//! ([`MockServer::requests`], `GET /_mock/requests`, optional JSONL file), and the history
//! of every Chat and Messages request is checked against that API's rules
//! ([`validate`]): one that breaks a rule gets the API's 400 and uses up no reply.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use mock_llm::{MockServer, Reply, Script};
//! let server = MockServer::start(Script::new([Reply::text("Hello from the mock model.")])).await?;
//! let base_url = server.url(); // "http://127.0.0.1:PORT/v1"
//! // … point the agent at base_url, run it …
//! assert_eq!(server.model_requests().len(), 1);
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;

pub mod e2e;
pub mod render;
mod render_messages;
pub mod script;
mod server;
pub mod validate;
mod web;

pub use script::{ErrorSpec, Reply, Script, ScriptEvent, StreamErrorSpec, ToolCallSpec, UsageSpec};
pub use server::{RecordedRequest, ServerOptions};

/// A running mock server on 127.0.0.1. It serves on its own thread and runtime,
/// and stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<server::Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockServer {
    /// Starts on a free port of 127.0.0.1.
    pub async fn start(script: Script) -> anyhow::Result<MockServer> {
        Self::start_with(script, ServerOptions::default())
    }

    /// Same as [`MockServer::start`], for code without an async context.
    pub fn start_blocking(script: Script) -> anyhow::Result<MockServer> {
        Self::start_with(script, ServerOptions::default())
    }

    /// Starts with explicit options (port, record file, logging). Works with or
    /// without a tokio runtime on the calling thread.
    pub fn start_with(script: Script, options: ServerOptions) -> anyhow::Result<MockServer> {
        let shared = Arc::new(server::Shared::new(script, &options)?);
        let (addr, stop, thread) = server::spawn(shared.clone(), options.port)?;
        Ok(MockServer {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Base URL including `/v1`: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every recorded request (model endpoints and others), in arrival order.
    /// `/_mock/…` control requests are not recorded.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    /// Only the `POST` requests to a model endpoint (chat, responses, messages).
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_model_request)
            .collect()
    }

    /// The title requests a harness sent (answered by the mock, not from the script).
    pub fn title_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_title_request)
            .collect()
    }

    /// Forgets the requests recorded so far (the record file is kept as is).
    pub fn clear_requests(&self) {
        self.shared.clear_requests();
    }

    /// Replaces the script and rewinds the reply cursor (recordings are kept).
    pub fn set_script(&self, script: Script) {
        self.shared.set_script(script);
    }

    /// Stops the server now (also done on drop).
    pub fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("url", &self.url())
            .finish()
    }
}

#[cfg(test)]
mod tests;
