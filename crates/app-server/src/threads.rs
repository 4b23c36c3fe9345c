//! Loaded threads: opening a session for a thread (new, resumed, forked) with the event sink
//! that keeps its record (`state.rs`), and the `Thread` object the protocol shows.

use interpreter_protocol::{Op, Permissions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::oneshot;

use super::state::{LoadedThread, ThreadShared};
use super::transport::RpcError;
use super::wire::{self, Thread, ThreadStatus};
use interpreter_core::agent::{EventSink, SessionError, SessionOptions, SessionStart};
use interpreter_core::config::Config;
use interpreter_core::sessions::Sessions;
use interpreter_face::view::SessionView;

/// How to open a thread's session.
pub(crate) struct Open {
    pub start: SessionStart,
    pub cwd: PathBuf,
    pub config: Config,
    pub persist: bool,
    /// Applied after opening (the stored or requested policy, `ask_commands` included).
    pub permissions: Option<Permissions>,
}

/// Opens the session for `shared`'s thread and waits until it is configured; with `replay`
/// its stored turns are read into the thread's history.
pub(crate) async fn open(
    shared: &Arc<ThreadShared>,
    open: Open,
    replay: bool,
) -> Result<LoadedThread, RpcError> {
    if !open.cwd.is_absolute() || !open.cwd.is_dir() {
        return Err(RpcError::invalid_params(format!(
            "cwd must be an existing absolute directory: {}",
            open.cwd.display()
        )));
    }
    let sink = {
        let shared = shared.clone();
        EventSink::from_fn(move |e| shared.event(e))
    };
    let opts = SessionOptions {
        persist: open.persist,
        // The seed's clients answer `item/tool/requestUserInput`.
        face: interpreter_core::agent::FaceAbilities {
            questions: true,
            diagnostics: false,
            schedules: true,
            client: "interpreter-app-server",
        },
        ..SessionOptions::new(open.config, open.cwd, sink)
    };
    let resume = matches!(open.start, SessionStart::Resume { .. });
    let handle = Sessions::open(opts, open.start)
        .await
        .map_err(|e| match e {
            SessionError::MissingKey(m) => RpcError::new(
                -32001,
                format!("Authentication required: {m}; log in with account/login/start"),
            ),
            SessionError::NotFound(e) => RpcError::invalid_request(format!("{e:#}")),
            SessionError::Busy(busy) => {
                RpcError::invalid_request(format!("{busy}, or fork the thread (thread/fork)"))
            }
            other if resume => RpcError::invalid_request(other.to_string()),
            other => RpcError::internal(other.to_string()),
        })?;
    if let Some(p) = open.permissions {
        let _ = handle.submit(Op::SetPermissions(p));
    }
    if replay {
        let (tx, rx) = oneshot::channel();
        shared.state().transcript = Some(tx);
        let _ = handle.submit(Op::Replay).done().await;
        if let Ok(items) = rx.await {
            let turns = super::history::turns_from_transcript(&shared.id, &items, &cwd_of(shared));
            shared.state().history = turns;
        }
    }
    if shared.state().view.is_none() {
        return Err(RpcError::internal("the session ended while opening"));
    }
    Ok(LoadedThread {
        shared: shared.clone(),
        handle,
    })
}

fn cwd_of(shared: &ThreadShared) -> PathBuf {
    shared
        .state()
        .view
        .as_ref()
        .map(|v| v.cwd.clone())
        .unwrap_or_default()
}

/// The `Thread` of a loaded thread; `turns` only when asked.
pub(crate) fn loaded_thread(t: &LoadedThread, store: &Sessions, turns: bool) -> Thread {
    let st = t.state();
    let view = st.view.as_ref();
    let path = (!t.shared.ephemeral)
        .then(|| store.log_path(t.id()))
        .flatten()
        .map(|p| p.display().to_string());
    Thread {
        id: t.id().to_string(),
        session_id: t.id().to_string(),
        preview: st.preview.clone(),
        ephemeral: t.shared.ephemeral,
        model_provider: view
            .map(|v| v.settings.provider.clone())
            .unwrap_or_default(),
        model: view.map(|v| v.settings.model.clone()),
        created_at: st.created_at,
        updated_at: chrono::Utc::now().timestamp(),
        status: st.status(),
        path,
        cwd: view
            .map(|v| v.cwd.display().to_string())
            .unwrap_or_default(),
        cli_version: env!("CARGO_PKG_VERSION").to_string(),
        source: t.shared.source,
        name: view.and_then(|v| v.title.clone()),
        turns: if turns {
            st.history.iter().chain(st.turns.iter()).cloned().collect()
        } else {
            vec![]
        },
    }
}

/// The `Thread` of a stored thread that is not loaded.
pub(crate) fn stored_thread(
    s: &interpreter_core::sessions::SessionSummary,
    path: Option<&Path>,
) -> Thread {
    Thread {
        id: s.meta.id.clone(),
        session_id: s.meta.id.clone(),
        preview: s.preview.clone(),
        ephemeral: false,
        model_provider: s.meta.provider.clone(),
        model: Some(s.model.clone()),
        created_at: unix_seconds(&s.meta.created_at),
        updated_at: s
            .modified
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
        status: ThreadStatus::NotLoaded,
        path: path.map(|p| p.display().to_string()),
        cwd: s.meta.cwd.display().to_string(),
        cli_version: env!("CARGO_PKG_VERSION").to_string(),
        source: "unknown",
        name: s.title.clone(),
        turns: vec![],
    }
}

/// An RFC 3339 time as unix seconds (0 when unreadable).
pub(crate) fn unix_seconds(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.timestamp())
        .unwrap_or(0)
}

/// A fresh thread id: the session ids the store uses.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The protocol's sandbox object for a view's permissions.
pub(crate) fn sandbox_of(view: &SessionView, config: &Config) -> serde_json::Value {
    wire::sandbox_policy(view.settings.permissions.sandbox, config.network_access)
}
