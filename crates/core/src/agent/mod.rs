//! The agent core. A session is owned by one task: front ends hand it [`Op`]s through a
//! [`SessionHandle`] and observe it through [`Event`]s, nothing else. A turn loops model →
//! tool calls → results until the model answers. The core knows no front end.
//!
//! [`Op`]: interpreter_protocol::Op

mod active_turn;
mod approvals;
mod compact;
mod diagnostics;
mod goal;
mod handle;
mod hooks;
mod notify;
mod services;
mod session;
mod spans;
mod state;
mod subagent;
mod task;
#[cfg(test)]
mod tests;
mod title;
mod transcript;
mod turn;
mod undo;

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{Config, MissingKey};
use crate::mcp::McpServerConfig;
use crate::tools::CommandRunner;
use crate::workspace::FileBackend;

pub(crate) use crate::tools::asks::Asks;
pub use crate::tools::events::{EventSink, FaceAbilities};
pub use handle::{OpResult, OpTicket, SessionHandle, WeakSessionHandle};
/// The `tracing` target of a session's spans (what `[otel]` exports).
pub use spans::TARGET as SPAN_TARGET;

/// Everything a session is made of. The capabilities a front end lends it (where files and
/// commands live) are fixed here; everything that changes later is an `Op`.
pub struct SessionOptions {
    /// The provider, model, modes and limits the session starts with.
    pub config: Config,
    /// The working directory: the first workspace root, and what relative paths are resolved
    /// against.
    pub cwd: PathBuf,
    /// More folders the tools may read and write (`--add-dir`, ACP `additionalDirectories`);
    /// relative ones are under `cwd`.
    pub extra_roots: Vec<PathBuf>,
    /// Where file text comes from: the disk, the ACP client, the LSP client's buffers.
    pub backend: Arc<dyn FileBackend>,
    /// Where commands run; None for local process groups.
    pub runner: Option<Arc<dyn CommandRunner>>,
    /// Where the session's events go (unless `events_with_handle` builds the sink).
    pub events: EventSink,
    /// Builds the sink from the session's own handle, for a face that answers the session's
    /// requests (approvals, questions, diagnostics) from inside its sink: the handle exists
    /// before the first event. Replaces `events` when set.
    pub events_with_handle: Option<Box<dyn FnOnce(WeakSessionHandle) -> EventSink + Send>>,
    /// The permissions the session opens with, when they are not the config's modes (a face
    /// mode that also asks before sandboxed commands). Set once, when it opens.
    pub permissions: Option<interpreter_protocol::Permissions>,
    /// Write the session log (off for `--ephemeral`).
    pub persist: bool,
    /// A JSON Schema the model's answers must follow (exec's `--output-schema`); the Chat and
    /// Responses wires send it, the Messages wire does not.
    pub output_schema: Option<serde_json::Value>,
    /// MCP servers to connect before the first op runs (a prompt waits for their tools).
    pub mcp_servers: Vec<McpServerConfig>,
    /// What the front end can do besides approvals (questions, diagnostics).
    pub face: FaceAbilities,
    /// Checkpoint the folder around each turn, so turns can be undone (off where files live
    /// in an editor's buffers, as in LSP sessions).
    pub checkpoints: bool,
}

impl SessionOptions {
    /// A session on the disk's files with local commands, logged, without MCP servers,
    /// output schema or abilities beyond approvals; set the rest with struct update.
    pub fn new(config: Config, cwd: PathBuf, events: EventSink) -> SessionOptions {
        SessionOptions {
            config,
            cwd,
            extra_roots: Vec::new(),
            backend: Arc::new(crate::workspace::DiskBackend),
            runner: None,
            events,
            events_with_handle: None,
            permissions: None,
            persist: true,
            output_schema: None,
            mcp_servers: Vec::new(),
            face: FaceAbilities::default(),
            checkpoints: true,
        }
    }
}

/// Which session to open.
pub enum SessionStart {
    /// A new session; `id` when the front end must know it before the session exists.
    New {
        /// The id to give it; None: a fresh UUID v7.
        id: Option<String>,
    },
    /// A stored session, with its whole history; this process becomes its one writer at
    /// once (a session another process writes is [`SessionError::Busy`]).
    Resume {
        /// Which stored session (its log is `<home>/sessions/<id>.jsonl`).
        id: String,
    },
    /// A stored session opened for display first (ACP `session/load`): it writes nothing,
    /// and takes the log, until its first turn, which fails if another process has it.
    Load {
        /// Which stored session (its log is `<home>/sessions/<id>.jsonl`).
        id: String,
    },
}

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
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
    // The handle comes first, so a sink built from it answers from the first event on.
    let start = match start {
        SessionStart::New { id: None } => SessionStart::New {
            id: Some(uuid::Uuid::now_v7().to_string()),
        },
        other => other,
    };
    let id = match &start {
        SessionStart::New { id } => id.clone().unwrap_or_default(),
        SessionStart::Resume { id } | SessionStart::Load { id } => id.clone(),
    };
    let (handle, ops) = SessionHandle::new(id);
    if let Some(sink_for) = opts.events_with_handle.take() {
        opts.events = sink_for(handle.downgrade());
    }
    let opened = tokio::task::spawn_blocking(move || session::Session::open(opts, start))
        .await
        .map_err(|e| SessionError::Other(anyhow::anyhow!("opening the session failed: {e}")))?;
    task::start(opened?, ops, mcp_servers);
    Ok(handle)
}
