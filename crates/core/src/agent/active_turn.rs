//! What belongs to the turn running now, and what ops hand it while it runs: the input steered
//! in, goal ops, the turn's checkpoints, the diagnostics it has seen and how far the goal
//! counted it. Types only: `goal.rs`, `undo.rs` and `diagnostics.rs` act on them.

use interpreter_protocol::{Diagnostic, Goal, GoalStatus, InputItem, Op};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::oneshot;

use super::handle::OpResult;
use crate::checkpoint::Taken;

/// The running turn's part of a session. The queues outlive a turn: the task hands them ops
/// while one runs.
#[derive(Default)]
pub(super) struct ActiveTurn {
    /// The turn running now, for what it changes (the goal).
    pub(super) running: Option<RunningTurn>,
    /// Input added to the running turn (`Op::Steer`), for its next request.
    pub(super) steer: Arc<Mutex<Vec<InputItem>>>,
    /// Goal ops that came while a turn ran, for it to apply before its next request.
    pub(super) goal_ops: Arc<Mutex<Vec<GoalOp>>>,
    /// The running turn's checkpoints (`undo.rs`).
    pub(super) checkpoint: Option<TurnCheckpoint>,
    /// The editor's diagnostics of files the agent edits, as last seen (before or after an
    /// edit), so an edit reports only what it made new.
    pub(super) diagnostics_seen: Seen,
}

/// A goal op that came while a turn ran, with where its result goes.
pub(super) type GoalOp = (Op, oneshot::Sender<OpResult>);

/// The turn running now: its id, and how far the goal has counted it. A goal counts a turn
/// between two of its requests, so a turn that crosses the budget learns of it while it runs,
/// and once more at its end.
#[derive(Debug)]
pub(crate) struct RunningTurn {
    pub(crate) id: String,
    pub(super) tokens_counted: u64,
    pub(super) counted_until: Instant,
    /// The provider said the account is out of quota: the goal stops as usage-limited.
    pub(crate) quota_exhausted: bool,
    /// The turn works toward the goal: the goal was active when the turn started or when the
    /// turn was last counted. Its tokens then go to the goal until the turn ends, whatever
    /// the goal's status became meanwhile (its budget reached, `update_goal`, a pause), so the
    /// goal's total is what its turns cost.
    pub(super) for_goal: bool,
    /// The turn was told that the goal's budget is used: the request after that is its last.
    pub(super) wrap_up: bool,
}

impl RunningTurn {
    pub(crate) fn new(id: String, total_tokens: u64, goal: Option<&Goal>) -> Self {
        RunningTurn {
            id,
            tokens_counted: total_tokens,
            counted_until: Instant::now(),
            quota_exhausted: false,
            for_goal: goal.is_some_and(|g| g.status == GoalStatus::Active),
            wrap_up: false,
        }
    }
}

/// What the session last saw of the files it edits.
#[derive(Default)]
pub(super) struct Seen {
    pub(super) by_path: HashMap<PathBuf, Vec<Diagnostic>>,
    /// Files changed in the running turn, for the check at its end.
    pub(super) changed: BTreeSet<PathBuf>,
}

/// The checkpoints of the turn running now.
pub(crate) struct TurnCheckpoint {
    /// The snapshot before the turn: taken beside its first model request, settled before its
    /// first tool call runs.
    pub(super) before: Before,
    /// Stops that snapshot (a turn that ran no tool does not wait for it).
    pub(super) stop_before: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Why that snapshot failed: said only if a tool needs it (a turn that runs none has
    /// nothing to undo, and its own failure is said already).
    pub(super) before_failed: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    /// A tool that may write beyond the workspace's own writes ran (a command, an MCP tool, a
    /// subagent): the snapshot after the turn walks the folder. Otherwise it looks again only
    /// at what the workspace wrote.
    pub(super) walk_after: bool,
    /// A tool ran: the snapshot before is needed. A turn that only answered stops it.
    pub(super) tools_ran: bool,
    /// That walk, started once a round of tool calls ended, beside the next model request:
    /// when the answer calls no more tools it is the turn's after. A tool call drops it.
    pub(super) after: Option<tokio::task::JoinHandle<Option<Taken>>>,
}

pub(super) enum Before {
    Pending(tokio::task::JoinHandle<Option<Taken>>),
    Taken(Option<Taken>),
}
