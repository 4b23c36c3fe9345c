//! The task that owns a session: it takes submissions (an [`Op`] with an id) in order and
//! answers each when it is done. While a turn runs, interrupts, approval and question answers,
//! diagnostics and steering act at once; every other op waits for the turn to end.

use futures::FutureExt;
use futures::future::BoxFuture;
use interpreter_protocol::{
    ApprovalDecision, ApprovalRequest, Event, InputItem, Op, TurnEndReason, TurnEnded,
};
use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::EventSink;
use super::session::Session;
use crate::mcp::McpServerConfig;
use crate::tools::Approver;

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

struct Submission {
    id: String,
    op: Op,
    done: oneshot::Sender<OpResult>,
    /// An interrupt came after it while it waited: a turn op then ends as cancelled.
    interrupted: bool,
}

impl Submission {
    /// An op the session gives itself: nobody waits for its result.
    fn own(op: Op) -> Submission {
        let (done, _) = oneshot::channel();
        Submission {
            id: uuid::Uuid::now_v7().to_string(),
            op,
            done,
            interrupted: false,
        }
    }

    fn finish(self, r: OpResult) {
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
    /// The session's id in the store.
    pub fn id(&self) -> &str {
        &self.id
    }

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
    pub fn upgrade(&self) -> Option<SessionHandle> {
        Some(SessionHandle {
            id: self.id.clone(),
            ops: self.ops.upgrade()?,
        })
    }
}

/// Approvals asked and not yet answered, by call id.
#[derive(Default)]
pub(super) struct Approvals {
    pending: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
}

impl Approvals {
    fn answer(&self, call_id: &str, decision: ApprovalDecision) {
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(call_id);
        match waiting {
            Some(tx) => {
                let _ = tx.send(decision);
            }
            None => tracing::debug!("approval for `{call_id}` came when none was asked"),
        }
    }
}

/// Asks the front end with an [`Event::ApprovalRequested`]; the answer comes back as an
/// [`Op::Approval`] routed to [`Approvals`].
pub(super) struct EventApprover {
    pub(super) approvals: Arc<Approvals>,
    pub(super) events: EventSink,
}

impl Approver for EventApprover {
    fn request(&self, req: ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> {
        let (tx, rx) = oneshot::channel();
        self.approvals
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(req.call_id.clone(), tx);
        self.events.send(Event::ApprovalRequested(req));
        Box::pin(async move { rx.await.unwrap_or(ApprovalDecision::Cancelled) })
    }
}

/// Starts the session's task.
pub(super) fn start(session: Session, mcp: Vec<McpServerConfig>) -> SessionHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let id = session.id.clone();
    tokio::spawn(run(session, rx, mcp));
    SessionHandle { id, ops: tx }
}

async fn run(
    mut s: Session,
    mut rx: mpsc::UnboundedReceiver<Submission>,
    mcp: Vec<McpServerConfig>,
) {
    // The front end's servers and config.toml's `[mcp_servers]`, before any op: a prompt
    // waits for their tools.
    let cwd = s.workspace.cwd().to_path_buf();
    let (tools, warnings) = crate::mcp::connect_session_servers(&s.config, mcp, &cwd).await;
    for message in warnings {
        s.events.send(Event::Warning { message });
    }
    if let Some(tools) = tools {
        s.set_external_tools(tools);
    }
    let mut queue = VecDeque::new();
    loop {
        let sub = match queue.pop_front() {
            Some(sub) => sub,
            None => match rx.try_recv() {
                Ok(sub) => sub,
                // Idle with an active goal: a turn toward it.
                Err(mpsc::error::TryRecvError::Empty) if s.goal_turn().is_some() => {
                    let text = s.goal_turn().unwrap_or_default();
                    let id = uuid::Uuid::now_v7().to_string();
                    if drive(&mut s, &id, TurnKind::Goal(text), &mut rx, &mut queue)
                        .await
                        .is_none()
                    {
                        return;
                    }
                    continue;
                }
                Err(_) => match rx.recv().await {
                    Some(sub) => sub,
                    None => break,
                },
            },
        };
        let Submission {
            id,
            op,
            done,
            interrupted,
        } = sub;
        let kind = match op {
            Op::UserInput { items } | Op::Steer { items } => TurnKind::User(items),
            Op::Compact => TurnKind::Compact,
            Op::Shutdown => {
                // The log (and its writer lock) goes first: whoever waited for this may
                // reopen the session at once.
                s.log = None;
                let _ = done.send(OpResult::Done);
                break;
            }
            Op::Interrupt => {
                let _ = done.send(OpResult::Done);
                continue;
            }
            Op::Approval { call_id, decision } => {
                s.approvals.answer(&call_id, decision);
                let _ = done.send(OpResult::Done);
                continue;
            }
            Op::Answer { call_id, answer } => {
                s.asks.answer(&call_id, answer);
                let _ = done.send(OpResult::Done);
                continue;
            }
            Op::Diagnostics {
                request_id,
                diagnostics,
            } => {
                s.asks.diagnosed(&request_id, diagnostics);
                let _ = done.send(OpResult::Done);
                continue;
            }
            Op::Undo { turns, restore } => {
                let result = s.undo(turns, restore).await;
                let _ = done.send(undone(&s, result));
                continue;
            }
            Op::Rewind { turn_id, restore } => {
                let result = s.rewind(&turn_id, restore).await;
                let _ = done.send(undone(&s, result));
                continue;
            }
            op => {
                let _ = done.send(apply(&mut s, op));
                continue;
            }
        };
        if interrupted {
            let ended = cancelled_turn(&s, &id);
            let _ = done.send(OpResult::Turn(ended));
            continue;
        }
        match drive(&mut s, &id, kind, &mut rx, &mut queue).await {
            Some(ended) => {
                requeue_late_steer(&s, &mut queue, &ended);
                let _ = done.send(OpResult::Turn(ended));
            }
            // The turn panicked: the session's state cannot be trusted any more.
            None => {
                let _ = done.send(OpResult::Failed("the turn panicked".into()));
                return;
            }
        }
    }
}

/// Input steered in as the turn ended, too late for its last request, is not lost: it runs
/// next (unless the user stopped the turn).
fn requeue_late_steer(s: &Session, queue: &mut VecDeque<Submission>, ended: &TurnEnded) {
    let late = std::mem::take(&mut *s.steer.lock().unwrap_or_else(|e| e.into_inner()));
    if !late.is_empty() && ended.reason != TurnEndReason::Cancelled {
        queue.push_front(Submission::own(Op::UserInput { items: late }));
    }
}

/// An op that changes the session between turns.
/// A goal op that came while a turn ran, with where its result goes.
pub(super) type GoalOp = (Op, oneshot::Sender<OpResult>);

/// Applies the goal ops that came while the turn ran.
pub(super) fn apply_goal_ops(s: &mut Session) {
    let ops = std::mem::take(&mut *s.goal_ops.lock().unwrap_or_else(|e| e.into_inner()));
    for (op, done) in ops {
        let _ = done.send(apply(s, op));
    }
}

fn apply(s: &mut Session, op: Op) -> OpResult {
    match op {
        Op::SetPermissions(p) => s.set_permissions(p),
        Op::SetModel { model } => {
            if model.trim().is_empty() {
                return fail(s, "model must not be empty".into());
            }
            s.set_model(model.trim());
        }
        Op::SetHarness { harness } => {
            if let Err(e) = s.set_harness(&harness) {
                // A face that showed the choice shows the harness in use again.
                s.settings_changed();
                return fail(s, e);
            }
        }
        Op::SetEffort { effort } => s.set_effort(effort),
        Op::Replay => s.replay(),
        Op::SetTitle { title } => {
            if let Err(e) = s.set_title(&title) {
                return fail(s, e);
            }
        }
        Op::SetOutputSchema { schema } => s.output_schema = schema,
        Op::PreviewRequest { prompt } => s.preview_request(&prompt),
        Op::SetGoal {
            objective,
            status,
            token_budget,
        } => {
            if let Err(e) = s.set_goal(objective, status, token_budget) {
                return fail(s, e);
            }
        }
        Op::ClearGoal => s.clear_goal(),
        // Handled by the loop.
        Op::UserInput { .. }
        | Op::Steer { .. }
        | Op::Compact
        | Op::Interrupt
        | Op::Approval { .. }
        | Op::Answer { .. }
        | Op::Diagnostics { .. }
        | Op::Undo { .. }
        | Op::Rewind { .. }
        | Op::Shutdown => {}
    }
    OpResult::Done
}

/// An undo's result: done (its `Event::Undone` is out), or an error said as `Event::Error`.
fn undone(s: &Session, result: Result<interpreter_protocol::UndoReport, String>) -> OpResult {
    match result {
        Ok(report) => OpResult::Undone(report),
        Err(message) => fail(s, message),
    }
}

fn fail(s: &Session, message: String) -> OpResult {
    s.events.send(Event::Error {
        message: message.clone(),
    });
    OpResult::Failed(message)
}

/// A turn interrupted before it started: it starts and ends at once.
fn cancelled_turn(s: &Session, id: &str) -> TurnEnded {
    s.events.send(Event::TurnStarted {
        turn_id: id.to_string(),
    });
    let ended = TurnEnded {
        turn_id: id.to_string(),
        reason: TurnEndReason::Cancelled,
    };
    s.events.send(Event::TurnEnded(ended.clone()));
    ended
}

/// What a turn is for.
pub(super) enum TurnKind {
    User(Vec<InputItem>),
    /// Work toward the thread's goal: the session starts it while idle.
    Goal(String),
    Compact,
}

/// Runs one turn while answering the ops that act at once. None when the turn panicked
/// (its `TurnEnded` is sent here); the session must then end.
async fn drive(
    s: &mut Session,
    turn_id: &str,
    kind: TurnKind,
    rx: &mut mpsc::UnboundedReceiver<Submission>,
    queue: &mut VecDeque<Submission>,
) -> Option<TurnEnded> {
    let cancel = CancellationToken::new();
    let approvals = s.approvals.clone();
    let asks = s.asks.clone();
    let steer = s.steer.clone();
    let goal_ops = s.goal_ops.clone();
    let events = s.events.clone();
    let turn =
        AssertUnwindSafe(s.run_turn(turn_id.to_string(), kind, cancel.clone())).catch_unwind();
    tokio::pin!(turn);
    let mut open = true;
    loop {
        tokio::select! {
            ended = &mut turn => {
                return match ended {
                    Ok(ended) => Some(ended),
                    Err(_) => {
                        tracing::error!("turn {turn_id} panicked");
                        let ended = TurnEnded {
                            turn_id: turn_id.to_string(),
                            reason: TurnEndReason::Failed {
                                message: "internal error: the turn panicked; the session has stopped".into(),
                            },
                        };
                        events.send(Event::TurnEnded(ended.clone()));
                        None
                    }
                };
            }
            sub = rx.recv(), if open => match sub {
                // Every handle is gone: nobody is listening, stop the turn.
                None => {
                    open = false;
                    cancel.cancel();
                }
                Some(sub) => match &sub.op {
                    // Everything submitted before the interrupt stops: the running turn and
                    // the turns waiting behind it.
                    Op::Interrupt => {
                        cancel.cancel();
                        for waiting in queue.iter_mut() {
                            waiting.interrupted = true;
                        }
                        sub.finish(OpResult::Done);
                    }
                    Op::Approval { call_id, decision } => {
                        approvals.answer(call_id, *decision);
                        sub.finish(OpResult::Done);
                    }
                    Op::Answer { call_id, answer } => {
                        asks.answer(call_id, answer.clone());
                        sub.finish(OpResult::Done);
                    }
                    Op::Diagnostics { request_id, diagnostics } => {
                        asks.diagnosed(request_id, diagnostics.clone());
                        sub.finish(OpResult::Done);
                    }
                    // A cancelled turn takes no more input: the steer becomes a turn of its own.
                    Op::Steer { items } if !cancel.is_cancelled() => {
                        steer
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .extend(items.iter().cloned());
                        sub.finish(OpResult::Done);
                    }
                    // The running turn applies them before its next request: a goal client is
                    // answered without waiting for the turn's end.
                    Op::SetGoal { .. } | Op::ClearGoal => goal_ops
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((sub.op, sub.done)),
                    Op::Shutdown => {
                        cancel.cancel();
                        queue.push_back(sub);
                    }
                    _ => queue.push_back(sub),
                },
            },
        }
    }
}
