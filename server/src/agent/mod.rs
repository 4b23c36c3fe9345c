//! The agent core. A session is owned by one task: front ends hand it [`Op`]s through a
//! [`SessionHandle`] and observe it through [`Event`]s, nothing else. A turn loops model →
//! tool calls → results until the model answers. The core knows no front end.
//!
//! [`Op`]: interpreter_protocol::Op

pub(crate) mod agents_md;
mod asks;
mod compact;
mod diagnostics;
mod session;
mod subagent;
mod task;
#[cfg(test)]
mod tests;
mod transcript;
mod turn;

use interpreter_protocol::Event;
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{Config, MissingKey};
use crate::mcp::McpServerConfig;
use crate::tools::CommandRunner;
use crate::workspace::FileBackend;

pub(crate) use asks::Asks;
pub(crate) use task::{OpResult, SessionHandle, WeakSessionHandle};

/// What a front end can do for its session besides approvals. Everything is off by
/// default: a session whose front end offers nothing sends what it always sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FaceAbilities {
    /// It can put questions to the user (`Event::QuestionAsked`).
    pub questions: bool,
    /// It can report the editor's diagnostics (`Event::DiagnosticsRequested`).
    pub diagnostics: bool,
}

/// Where a session's events go. Sending never blocks and never fails the session: a front
/// end that went away just stops listening. Secrets are redacted on the way out
/// (`secrets::EventRedactor`), so no front end ever sees a key.
#[derive(Clone)]
pub(crate) struct EventSink(SinkKind, Arc<crate::secrets::EventRedactor>);

#[derive(Clone)]
enum SinkKind {
    Channel(tokio::sync::mpsc::UnboundedSender<Event>),
    /// Translated at once, in the sender's task, so order with other output is kept.
    Callback(Arc<dyn Fn(Event) + Send + Sync>),
}

impl EventSink {
    /// A sink and the receiving end of its channel.
    pub(crate) fn new() -> (EventSink, tokio::sync::mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (EventSink(SinkKind::Channel(tx), Default::default()), rx)
    }

    /// A sink that calls `f` for every event, in the session's task.
    pub(crate) fn from_fn(f: impl Fn(Event) + Send + Sync + 'static) -> EventSink {
        EventSink(SinkKind::Callback(Arc::new(f)), Default::default())
    }

    pub(crate) fn send(&self, e: Event) {
        for e in self.1.redact(e) {
            match &self.0 {
                SinkKind::Channel(tx) => {
                    let _ = tx.send(e);
                }
                SinkKind::Callback(f) => f(e),
            }
        }
    }
}

/// Everything a session is made of. The capabilities a front end lends it (where files and
/// commands live) are fixed here; everything that changes later is an `Op`.
pub(crate) struct SessionOptions {
    pub config: Config,
    pub cwd: PathBuf,
    pub extra_roots: Vec<PathBuf>,
    /// Where file text comes from: the disk, the ACP client, the LSP client's buffers.
    pub backend: Arc<dyn FileBackend>,
    /// Where commands run; None for local process groups.
    pub runner: Option<Arc<dyn CommandRunner>>,
    pub events: EventSink,
    /// Write the session log (off for `--ephemeral`).
    pub persist: bool,
    pub output_schema: Option<serde_json::Value>,
    /// MCP servers to connect before the first op runs (a prompt waits for their tools).
    pub mcp_servers: Vec<McpServerConfig>,
    /// What the front end can do besides approvals (questions, diagnostics).
    pub face: FaceAbilities,
}

/// Which session to open.
pub(crate) enum SessionStart {
    /// A new session; `id` when the front end must know it before the session exists.
    New { id: Option<String> },
    /// A stored session, with its whole history; this process becomes its one writer at
    /// once (a session another process writes is [`SessionError::Busy`]).
    Resume { id: String },
    /// A stored session opened for display first (ACP `session/load`): it writes nothing,
    /// and takes the log, until its first turn, which fails if another process has it.
    Load { id: String },
}

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    /// The provider needs a key that is not set.
    #[error(transparent)]
    MissingKey(#[from] MissingKey),
    /// No stored session has that id (or its log is unreadable).
    #[error("{0:#}")]
    NotFound(anyhow::Error),
    /// Another process (or another session of this one) writes that session.
    #[error(transparent)]
    Busy(#[from] crate::store::SessionBusy),
    /// Anything else: the workspace, the harness name, the session log.
    #[error("{0:#}")]
    Other(#[from] anyhow::Error),
}

/// Opens a session and starts the task that owns it. Session set-up reads the disk
/// (AGENTS.md, skills, the store), so it runs on a blocking thread.
pub(crate) async fn spawn(
    mut opts: SessionOptions,
    start: SessionStart,
) -> Result<SessionHandle, SessionError> {
    let mcp_servers = std::mem::take(&mut opts.mcp_servers);
    let opened = tokio::task::spawn_blocking(move || session::Session::open(opts, start))
        .await
        .map_err(|e| SessionError::Other(anyhow::anyhow!("opening the session failed: {e}")))?;
    let session = opened?;
    Ok(task::start(session, mcp_servers))
}
