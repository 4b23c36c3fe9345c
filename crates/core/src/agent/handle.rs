//! The front ends' way into a session: a [`SessionHandle`] takes ops, each answered by an
//! [`OpTicket`] with an [`OpResult`]. The session's task (`task.rs`) reads the submissions.

use interpreter_protocol::{Op, TurnEnded};
use tokio::sync::{mpsc, oneshot};

/// How an op ended.
#[derive(Debug, Clone, PartialEq)]
pub enum OpResult {
    /// A turn (user input or compaction) ended this way; `TurnEnded` was sent first.
    Turn(TurnEnded),
    /// The op was carried out.
    Done,
    /// `Op::Undo` or `Op::Rewind` was carried out (`Event::Undone` was sent first).
    Undone(interpreter_protocol::UndoReport),
    /// The op could not be carried out; an `Event::Error` says why.
    Failed(String),
}

/// Resolves once the session has carried out an op (after every event it caused).
pub struct OpTicket {
    /// The submission's id; a turn's `turn_id`.
    pub id: String,
    done: oneshot::Receiver<OpResult>,
}

impl OpTicket {
    /// Waits for the op. A session that ended first (its task gone) answers `Failed`.
    pub async fn done(self) -> OpResult {
        self.done
            .await
            .unwrap_or_else(|_| OpResult::Failed("the session has ended".into()))
    }
}

pub(super) struct Submission {
    pub(super) id: String,
    pub(super) op: Op,
    pub(super) done: oneshot::Sender<OpResult>,
    /// An interrupt came after it while it waited: a turn op then ends as cancelled.
    pub(super) interrupted: bool,
}

impl Submission {
    /// An op the session gives itself: nobody waits for its result.
    pub(super) fn own(op: Op) -> Submission {
        let (done, _) = oneshot::channel();
        Submission {
            id: uuid::Uuid::now_v7().to_string(),
            op,
            done,
            interrupted: false,
        }
    }

    pub(super) fn finish(self, r: OpResult) {
        let _ = self.done.send(r);
    }
}

/// The front ends' way into a session. Cloning gives another handle to the same session;
/// when the last one is dropped the session cancels its turn and ends.
#[derive(Clone)]
pub struct SessionHandle {
    id: String,
    ops: mpsc::UnboundedSender<Submission>,
}

impl SessionHandle {
    /// A handle and the receiving end its ops go to (the session's task).
    pub(super) fn new(id: String) -> (SessionHandle, mpsc::UnboundedReceiver<Submission>) {
        let (ops, rx) = mpsc::unbounded_channel();
        (SessionHandle { id, ops }, rx)
    }

    /// The session's id in the store.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A handle that does not keep the session alive, for a sink built by
    /// `events_with_handle`.
    pub fn downgrade(&self) -> WeakSessionHandle {
        WeakSessionHandle {
            id: self.id.clone(),
            ops: self.ops.downgrade(),
        }
    }

    /// Hands the session an op. The ticket resolves when it is done.
    pub fn submit(&self, op: Op) -> OpTicket {
        let id = uuid::Uuid::now_v7().to_string();
        let (tx, rx) = oneshot::channel();
        let sub = Submission {
            id: id.clone(),
            op,
            done: tx,
            interrupted: false,
        };
        if let Err(mpsc::error::SendError(sub)) = self.ops.send(sub) {
            sub.finish(OpResult::Failed("the session has ended".into()));
        }
        OpTicket { id, done: rx }
    }
}

/// A handle that does not keep the session alive (for the session's own event sink).
#[derive(Clone)]
pub struct WeakSessionHandle {
    id: String,
    ops: mpsc::WeakUnboundedSender<Submission>,
}

impl WeakSessionHandle {
    /// A full handle again; None once every [`SessionHandle`] is gone and the session is
    /// ending.
    pub fn upgrade(&self) -> Option<SessionHandle> {
        Some(SessionHandle {
            id: self.id.clone(),
            ops: self.ops.upgrade()?,
        })
    }
}
