//! The task that owns a session: it takes submissions (an [`Op`] with an id) in order and
//! answers each when it is done. While a turn runs, interrupts, approval and question answers,
//! diagnostics and steering act at once; every other op waits for the turn to end.

use futures::FutureExt;
use interpreter_protocol::{Event, Op, TurnEndReason, TurnEnded};
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::handle::{OpResult, Submission};
use super::session::Session;
use super::turn::TurnKind;
use crate::mcp::{McpServerConfig, StatusReport};

/// Starts the session's task.
pub(super) fn start(
    session: Session,
    ops: mpsc::UnboundedReceiver<Submission>,
    mcp: Vec<McpServerConfig>,
) {
    tokio::spawn(run(session, ops, mcp));
}

async fn run(
    mut s: Session,
    mut rx: mpsc::UnboundedReceiver<Submission>,
    mcp: Vec<McpServerConfig>,
) {
    // The front end's servers and config.toml's `[mcp_servers]`, before any op: a prompt
    // waits for their tools.
    connect_mcp(&mut s, mcp.clone()).await;
    let mut queue = VecDeque::new();
    loop {
        let sub = match queue.pop_front() {
            Some(sub) => sub,
            None => match rx.try_recv() {
                Ok(sub) => sub,
                // Idle with a scheduled prompt due, or an active goal: a turn for it.
                Err(mpsc::error::TryRecvError::Empty) if let Some(kind) = idle_turn(&s) => {
                    let id = uuid::Uuid::now_v7().to_string();
                    if drive(&mut s, &id, kind, &mut rx, &mut queue)
                        .await
                        .is_none()
                    {
                        return;
                    }
                    continue;
                }
                Err(_) => match idle_wait(s.services.schedule.clone(), &mut rx).await {
                    Idle::Op(sub) => sub,
                    Idle::Due => continue,
                    Idle::Closed => break,
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
                s.close().await;
                let _ = done.send(OpResult::Done);
                break;
            }
            Op::Interrupt => {
                let _ = done.send(OpResult::Done);
                continue;
            }
            Op::Approval { call_id, decision } => {
                s.services.approvals.answer(&call_id, decision);
                let _ = done.send(OpResult::Done);
                continue;
            }
            Op::Answer { call_id, answer } => {
                s.services.asks.answer(&call_id, answer);
                let _ = done.send(OpResult::Done);
                continue;
            }
            Op::Diagnostics {
                request_id,
                diagnostics,
            } => {
                s.services.asks.diagnosed(&request_id, diagnostics);
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
            Op::ReloadMcpServers => {
                reload_mcp(&mut s, mcp.clone()).await;
                let _ = done.send(OpResult::Done);
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

/// Connects the session's MCP servers (config.toml's and `from_client`), telling the face
/// each server's status as it goes, and gives the session their tools.
async fn connect_mcp(s: &mut Session, from_client: Vec<McpServerConfig>) {
    let cwd = s.services.workspace.cwd().to_path_buf();
    let events = s.services.events.clone();
    let report = move |r: StatusReport| {
        events.send(match r {
            StatusReport::All(servers) => Event::McpServers { servers },
            StatusReport::One(server) => Event::McpServerUpdated(server),
        })
    };
    let (tools, warnings) =
        crate::mcp::connect_session_servers(&s.config, from_client, &cwd, &report).await;
    for message in warnings {
        s.services.events.send(Event::Warning { message });
    }
    s.set_external_tools(tools);
}

/// `Op::ReloadMcpServers`: config.toml read again (with the overrides the session was opened
/// with), the old servers stopped, the new list connected. A config that no longer loads
/// keeps the servers it had, with an error.
async fn reload_mcp(s: &mut Session, from_client: Vec<McpServerConfig>) {
    if let Some(overrides) = s.config.loaded_with.clone() {
        match crate::config::Config::load(&overrides) {
            Ok(fresh) => {
                s.config.mcp_servers = fresh.mcp_servers;
                s.config.mcp_skipped = fresh.mcp_skipped;
                for message in fresh
                    .warnings
                    .into_iter()
                    .filter(|w| w.contains("MCP server"))
                {
                    s.services.events.send(Event::Warning { message });
                }
            }
            Err(e) => {
                s.services.events.send(Event::Error {
                    message: format!("reloading the MCP servers: {e:#}"),
                });
                return;
            }
        }
    }
    // Stops the old servers before the new ones start: a stdio server may hold a lock.
    s.set_external_tools(None);
    connect_mcp(s, from_client).await;
}

/// The turn an idle session starts on its own: a scheduled prompt that is due (announced
/// first), else work toward the thread's goal.
fn idle_turn(s: &Session) -> Option<TurnKind> {
    if let Some(fire) = s.services.schedule.take_due(chrono::Local::now()) {
        s.services.events.send(Event::ScheduledPrompt {
            job_id: fire.job.id.clone(),
            cron: fire.job.cron.clone(),
            prompt: fire.job.prompt.clone(),
        });
        return Some(TurnKind::User(vec![
            interpreter_protocol::InputItem::Text {
                text: fire.message(),
            },
        ]));
    }
    s.goal_turn().map(TurnKind::Goal)
}

/// What ended an idle wait.
enum Idle {
    Op(Submission),
    /// A scheduled prompt is due.
    Due,
    /// Every handle is gone.
    Closed,
}

/// Waits for the next op, or for the next scheduled prompt to be due.
async fn idle_wait(
    schedule: std::sync::Arc<crate::tools::schedule::Schedule>,
    rx: &mut mpsc::UnboundedReceiver<Submission>,
) -> Idle {
    loop {
        let changed = schedule.changed.notified();
        let due = schedule.next_due().map(|at| {
            (at - chrono::Local::now())
                .to_std()
                .unwrap_or(std::time::Duration::ZERO)
        });
        tokio::select! {
            sub = rx.recv() => return sub.map_or(Idle::Closed, Idle::Op),
            _ = tokio::time::sleep(due.unwrap_or_default()), if due.is_some() => return Idle::Due,
            _ = changed => continue,
        }
    }
}

/// Input steered in as the turn ended, too late for its last request, is not lost: it runs
/// next (unless the user stopped the turn).
fn requeue_late_steer(s: &Session, queue: &mut VecDeque<Submission>, ended: &TurnEnded) {
    let late = std::mem::take(&mut *s.active.steer.lock().unwrap_or_else(|e| e.into_inner()));
    if !late.is_empty() && ended.reason != TurnEndReason::Cancelled {
        queue.push_front(Submission::own(Op::UserInput { items: late }));
    }
}

/// An op that changes the session between turns.
fn apply(s: &mut Session, op: Op) -> OpResult {
    match op {
        Op::SetPermissions(p) => s.set_permissions(p),
        Op::SetModel { model } => {
            if model.trim().is_empty() {
                return s.fail("model must not be empty".into());
            }
            s.set_model(model.trim());
        }
        Op::SetHarness { harness } => {
            if let Err(e) = s.set_harness(&harness) {
                // A face that showed the choice shows the harness in use again.
                s.settings_changed();
                return s.fail(e);
            }
        }
        Op::SetEffort { effort } => s.set_effort(effort),
        Op::Replay => s.replay(),
        Op::SetTitle { title } => {
            if let Err(e) = s.set_title(&title) {
                return s.fail(e);
            }
        }
        Op::SetOutputSchema { schema } => s.state.output_schema = schema,
        Op::PreviewRequest { prompt } => s.preview_request(&prompt),
        Op::SetGoal { .. } | Op::ClearGoal => return s.apply_goal_op(op),
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
        | Op::ReloadMcpServers
        | Op::Shutdown => {}
    }
    OpResult::Done
}

/// An undo's result: done (its `Event::Undone` is out), or an error said as `Event::Error`.
fn undone(s: &Session, result: Result<interpreter_protocol::UndoReport, String>) -> OpResult {
    match result {
        Ok(report) => OpResult::Undone(report),
        Err(message) => s.fail(message),
    }
}

/// A turn interrupted before it started: it starts and ends at once.
fn cancelled_turn(s: &Session, id: &str) -> TurnEnded {
    s.services.events.send(Event::TurnStarted {
        turn_id: id.to_string(),
    });
    let ended = TurnEnded {
        turn_id: id.to_string(),
        reason: TurnEndReason::Cancelled,
    };
    s.services.events.send(Event::TurnEnded(ended.clone()));
    ended
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
    let approvals = s.services.approvals.clone();
    let asks = s.services.asks.clone();
    let steer = s.active.steer.clone();
    let goal_ops = s.active.goal_ops.clone();
    let events = s.services.events.clone();
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
