//! `interpreter acp`: an Agent Client Protocol v1 agent on stdio.
//!
//! Every request handler returns at once: turns, loads and anything that waits on the client
//! run in spawned tasks, so `session/cancel` and permission answers are never stuck behind a
//! turn. The only module that knows ACP types.
#![warn(missing_docs, unreachable_pub)]

mod answer;
mod background;
mod client;
mod commands;
mod content;
mod diagnostics;
mod handlers;
mod permission;
mod questions;
mod replay;
mod settings;
mod subagents;
pub mod transport;
mod trust;
mod updates;

use agent_client_protocol::v1::schema::{ClientCapabilities, SessionId};
use agent_client_protocol::{Agent, ConnectTo, on_receive_notification, on_receive_request};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use interpreter_core::agent::SessionHandle;
use interpreter_core::config::Overrides;
use settings::Settings;
use updates::Translator;

/// Largest prompt accepted, in bytes of text.
const MAX_PROMPT_BYTES: usize = 4 * 1024 * 1024;

pub(crate) struct AcpState {
    overrides: Overrides,
    client_caps: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

pub(crate) struct AcpSession {
    id: String,
    cwd: PathBuf,
    /// The agent session: ops in, events out (through `translator`).
    handle: SessionHandle,
    /// Holds the session's settings, kept from the session's events (`Translator::settings`).
    translator: Arc<Translator>,
    commands: Vec<agent_client_protocol::v1::schema::AvailableCommand>,
    /// The end of the turn a `session/prompt` is running, for prompts that join it.
    running: Mutex<Option<RunningTurn>>,
    /// A project the user has not answered for: asked at the first prompt (`trust.rs`).
    pending_trust: Mutex<Option<trust::PendingTrust<handlers::OpenRequest>>>,
}

/// The end of a running turn, awaitable by every prompt that joined it.
type RunningTurn =
    futures::future::Shared<futures::future::BoxFuture<'static, interpreter_core::agent::OpResult>>;

impl AcpState {
    fn caps(&self) -> ClientCapabilities {
        self.client_caps
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default()
    }

    fn session(&self, id: &SessionId) -> Option<Arc<AcpSession>> {
        self.sessions.lock().ok()?.get(&*id.0).cloned()
    }

    fn insert(&self, s: Arc<AcpSession>) {
        if let Ok(mut map) = self.sessions.lock() {
            map.insert(s.id.clone(), s);
        }
    }

    fn remove(&self, id: &str) -> Option<Arc<AcpSession>> {
        self.sessions.lock().ok()?.remove(id)
    }
}

impl AcpSession {
    fn settings(&self) -> Settings {
        self.translator.settings()
    }

    /// Stops the running prompt (and any queued behind it); they answer `cancelled`.
    fn cancel_turn(&self) {
        let _ = self.handle.submit(interpreter_protocol::Op::Interrupt);
    }
}

/// Serves ACP on stdin/stdout until the client goes away. Returns the exit status.
pub async fn serve(overrides: Overrides) -> i32 {
    serve_on(overrides, transport::stdio()).await
}

/// Serves one ACP connection on `transport` until its input ends: [`transport::stdio`] in
/// production, in-memory lines in tests and in the fuzz target.
pub async fn serve_on(overrides: Overrides, transport: impl ConnectTo<Agent> + 'static) -> i32 {
    let state = Arc::new(AcpState {
        overrides,
        client_caps: Mutex::new(ClientCapabilities::default()),
        sessions: Mutex::new(HashMap::new()),
    });
    let s = |st: &Arc<AcpState>| st.clone();
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14) = (
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
        s(&state),
    );
    let result = Agent
        .v1()
        .name("interpreter")
        .on_receive_request(
            async move |req, responder, _cx| handlers::initialize(&s1, req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, _cx| handlers::authenticate(&s2, req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, cx| handlers::new_session(&s3, req, responder, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, cx| handlers::load_session(&s4, req, responder, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, cx| handlers::resume_session(&s5, req, responder, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, cx| handlers::list_sessions(&s6, req, responder, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, _cx| handlers::close_session(&s7, req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, _cx| handlers::delete_session(&s8, req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, cx| handlers::prompt(&s9, req, responder, cx),
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n, _cx| handlers::cancel(&s10, n),
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req, responder, _cx| handlers::set_mode(&s11, req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, _cx| handlers::set_config_option(&s12, req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, _cx| handlers::logout(&s13, req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req, responder, cx| handlers::fork_session(&s14, req, responder, cx),
            on_receive_request!(),
        )
        .connect_to(transport)
        .await;
    // Leave no turn running behind a closed connection.
    if let Ok(map) = state.sessions.lock() {
        for s in map.values() {
            s.cancel_turn();
        }
    }
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("interpreter acp: connection error: {}", e.message);
            1
        }
    }
}
