//! What this process keeps about its threads: the loaded thread and its session handle, the
//! record the session's event sink and the request handlers share (its turns, the running
//! turn's items), and the server requests waiting for the client's answer. The crate's state
//! layer: it imports only `wire`, `transport` and `items`, never a handler.

use interpreter_protocol::{Op, TranscriptItem};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

use super::items::ToolItem;
use super::transport::Outbound;
use super::wire::{ThreadStatus, Turn, now_ms};
use interpreter_core::agent::SessionHandle;
use interpreter_face::view::SessionView;

/// A thread with a session open in this process.
pub(crate) struct LoadedThread {
    pub shared: Arc<ThreadShared>,
    pub handle: SessionHandle,
}

impl LoadedThread {
    pub(crate) fn id(&self) -> &str {
        &self.shared.id
    }

    /// Stops the session (a running turn is cancelled first) and waits for it.
    pub(crate) async fn shutdown(&self) {
        let _ = self.handle.submit(Op::Shutdown).done().await;
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, ThreadState> {
        self.shared.state()
    }
}

/// What the session's event sink and the request handlers share about one thread.
pub(crate) struct ThreadShared {
    pub id: String,
    pub out: Outbound,
    pub approvals: Arc<Pending>,
    pub ephemeral: bool,
    /// `appServer` for threads started here, `unknown` for stored ones.
    pub source: &'static str,
    state: Mutex<ThreadState>,
}

impl ThreadShared {
    pub(crate) fn new(
        id: String,
        out: Outbound,
        approvals: Arc<Pending>,
        ephemeral: bool,
        source: &'static str,
        created_at: i64,
    ) -> Arc<ThreadShared> {
        Arc::new(ThreadShared {
            id,
            out,
            approvals,
            ephemeral,
            source,
            state: Mutex::new(ThreadState {
                created_at,
                ..Default::default()
            }),
        })
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, ThreadState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running background task's item (`background.rs`).
pub(crate) struct TaskItem {
    pub turn_id: String,
    pub command: String,
    pub cwd: String,
    pub started_ms: i64,
    /// The end of its output, bounded.
    pub tail: String,
}

/// The face's record of a thread, kept from its events and its requests.
#[derive(Default)]
pub(crate) struct ThreadState {
    pub view: Option<SessionView>,
    pub created_at: i64,
    pub preview: String,
    /// Turns from before the thread was loaded here (replayed from the store).
    pub history: Vec<Turn>,
    /// Turns run here, in order; the last may be running.
    pub turns: Vec<Turn>,
    /// Turns submitted but not started: their id and the user's input as the client sent it.
    pub queued: HashMap<String, Vec<serde_json::Value>>,
    /// Queued turns that are reviews (`review/start`): what each reviews.
    pub reviews: HashMap<String, String>,
    /// The running turn.
    pub active: Option<TurnState>,
    /// Waiting for the session's transcript (`Op::Replay`).
    pub transcript: Option<oneshot::Sender<Vec<TranscriptItem>>>,
    /// Approvals asked and not answered.
    pub waiting_on_approval: usize,
    /// What the last undo did, for the response of the request that asked for it.
    pub last_undo: Option<interpreter_protocol::UndoReport>,
    /// The thread's goal, as the session last reported it.
    pub goal: Option<interpreter_protocol::Goal>,
    /// Background tasks running, by task id, shown as items.
    pub tasks: HashMap<String, TaskItem>,
}

impl ThreadState {
    pub(crate) fn status(&self) -> ThreadStatus {
        if self.active.is_none() && self.queued.is_empty() {
            return ThreadStatus::Idle;
        }
        ThreadStatus::Active {
            active_flags: if self.waiting_on_approval > 0 {
                vec!["waitingOnApproval"]
            } else {
                vec![]
            },
        }
    }

    /// The session's folder, once it is configured.
    pub(crate) fn cwd(&self) -> std::path::PathBuf {
        self.view
            .as_ref()
            .map(|v| v.cwd.clone())
            .unwrap_or_default()
    }

    /// The running turn's id, else the next queued one's.
    pub(crate) fn current_turn(&self) -> Option<String> {
        self.active.as_ref().map(|t| t.id.clone())
    }
}

/// The running turn, as far as its items go.
pub(crate) struct TurnState {
    pub id: String,
    pub started_ms: i64,
    /// Streaming agent messages and reasoning, by item id: the text so far.
    pub streaming: HashMap<String, String>,
    /// An answer whose phase is known only from what follows it.
    pub held_message: Option<(String, String)>,
    /// Tool calls shown as items, by call id.
    pub tools: HashMap<String, ToolItem>,
    /// Items completed in this turn, for `thread/read`.
    pub completed: Vec<Value>,
    /// A review turn: it ends with an `exitedReviewMode` item.
    pub review: bool,
}

impl TurnState {
    pub(crate) fn new(id: String) -> TurnState {
        TurnState {
            id,
            started_ms: now_ms(),
            streaming: HashMap::new(),
            held_message: None,
            tools: HashMap::new(),
            completed: Vec::new(),
            review: false,
        }
    }
}

/// One question waiting for the client.
pub(super) struct Asked {
    pub(super) thread_id: String,
    pub(super) turn_id: String,
    pub(super) call_id: String,
    /// A question for the user (`item/tool/requestUserInput`), not an approval.
    pub(super) question: bool,
}

/// Server requests sent and not yet answered, by request id.
#[derive(Default)]
pub(crate) struct Pending {
    next: AtomicU64,
    asked: Mutex<HashMap<u64, Asked>>,
}

impl Pending {
    /// Keeps `asked` until its answer comes; the request id to send it with.
    pub(super) fn remember(&self, asked: Asked) -> u64 {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut pending) = self.asked.lock() {
            pending.insert(id, asked);
        }
        id
    }

    /// The question request `id` answers; it is no longer pending.
    pub(crate) fn take(&self, id: u64) -> Option<Asked> {
        self.asked.lock().ok()?.remove(&id)
    }

    /// Forgets the questions of a turn that ended (the core cancelled them); their ids and
    /// whether each was an approval.
    pub(crate) fn drop_turn(&self, thread_id: &str, turn_id: &str) -> Vec<(u64, bool)> {
        let Ok(mut asked) = self.asked.lock() else {
            return vec![];
        };
        let ids: Vec<(u64, bool)> = asked
            .iter()
            .filter(|(_, a)| a.thread_id == thread_id && a.turn_id == turn_id)
            .map(|(id, a)| (*id, !a.question))
            .collect();
        for (id, _) in &ids {
            asked.remove(id);
        }
        ids
    }
}
