//! Taking turns back: the checkpoints taken around each user turn, and `Op::Undo` /
//! `Op::Rewind`, which put the files back (never over the user's later edits) and cut the
//! turns out of the history the model sees. The log keeps the turns and records the undo.

use interpreter_protocol::{Event, Restore, SkippedFile, ToolKind, UndoReport, UndoableTurn};

use super::active_turn::{Before, TurnCheckpoint};
use super::session::Session;
use crate::checkpoint::Taken;
use crate::model::HistoryItem;
use crate::store::{LogLine, TurnMark};

/// A turn's checkpoints, once it ended.
pub(super) struct Ended {
    pub before: Option<Taken>,
    pub after: Option<Taken>,
    /// No tool ran: nothing of the turn's to put back.
    pub quiet: bool,
}

/// How long the session waits for a snapshot: a little past the snapshot's own deadline, for
/// a walk stuck in one system call (a hung network mount).
const SNAPSHOT_WAIT: std::time::Duration =
    crate::checkpoint::SNAPSHOT_DEADLINE.saturating_add(std::time::Duration::from_secs(5));

impl Session {
    /// A user or goal turn starts: its snapshot before starts beside the model request.
    pub(super) fn begin_checkpoint(&mut self) {
        let _ = self.services.workspace.take_written();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let failed = std::sync::Arc::new(std::sync::Mutex::new(None));
        self.active.checkpoint = (self.services.checkpoints.is_some() && self.parent_id.is_none())
            .then(|| TurnCheckpoint {
                before: Before::Pending(tokio::spawn({
                    let (stop, failed) = (stop.clone(), failed.clone());
                    let cp = self.services.checkpoints.clone();
                    async move {
                        let cp = cp?;
                        let taken = tokio::task::spawn_blocking(move || cp.snapshot_until(stop))
                            .await
                            .ok()?;
                        match taken {
                            Ok(t) => Some(t),
                            Err(e) if e.is::<crate::checkpoint::Stopped>() => None,
                            Err(e) => {
                                tracing::warn!("checkpoint: {e:#}");
                                *failed.lock().unwrap_or_else(|e| e.into_inner()) =
                                    Some(format!("{e:#}"));
                                None
                            }
                        }
                    }
                })),
                stop_before: stop,
                before_failed: failed,
                walk_after: false,
                tools_ran: false,
                after: None,
            });
    }

    /// The snapshot before the turn, once taken. Tools wait for it: it must hold the folder
    /// as the user left it.
    pub(super) async fn settle_before(&mut self) -> Option<Taken> {
        let mut tc = self.active.checkpoint.take()?;
        if let Before::Pending(handle) = &mut tc.before {
            tc.before = Before::Taken(self.waited(handle).await);
        }
        let failed = tc
            .before_failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(why) = failed
            && let Some(cp) = &self.services.checkpoints
            && !cp.warned.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            self.services.events.send(Event::Warning {
                message: format!(
                    "turns of this session cannot be undone: no checkpoint could be taken ({why})"
                ),
            });
        }
        self.active.checkpoint = Some(tc);
        match &self.active.checkpoint.as_ref()?.before {
            Before::Taken(taken) => taken.clone(),
            Before::Pending(_) => None,
        }
    }

    /// Waits for a snapshot, at most [`SNAPSHOT_WAIT`]; past it the turn goes on without one
    /// (said once). Borrows nothing of the session across the wait.
    fn waited<'a>(
        &self,
        handle: &'a mut tokio::task::JoinHandle<Option<Taken>>,
    ) -> impl Future<Output = Option<Taken>> + Send + 'a {
        let cp = self.services.checkpoints.clone();
        let events = self.services.events.clone();
        async move {
            match tokio::time::timeout(SNAPSHOT_WAIT, handle).await {
                Ok(joined) => joined.unwrap_or(None),
                Err(_) => {
                    let why = format!(
                        "the snapshot took longer than {} s",
                        SNAPSHOT_WAIT.as_secs()
                    );
                    tracing::warn!("checkpoint: {why}");
                    if let Some(cp) = cp
                        && !cp.warned.swap(true, std::sync::atomic::Ordering::Relaxed)
                    {
                        events.send(Event::Warning {
                            message: format!(
                                "turns of this session cannot be undone: no checkpoint could be taken ({why})"
                            ),
                        });
                    }
                    None
                }
            }
        }
    }

    /// A tool call of the turn runs: one that may write beyond the workspace takes a walk.
    pub(super) fn note_tool_for_checkpoint(&mut self, kind: ToolKind, starts_subagent: bool) {
        let own_writes_only = matches!(
            kind,
            ToolKind::Read | ToolKind::Search | ToolKind::Edit | ToolKind::Think
        );
        let Some(tc) = &mut self.active.checkpoint else {
            return;
        };
        tc.tools_ran = true;
        if starts_subagent || !own_writes_only {
            tc.walk_after = true;
        }
        if let Some(stale) = tc.after.take() {
            stale.abort();
        }
    }

    /// A round of tool calls ended: a walk the turn's end needs starts now, beside the next
    /// model request.
    pub(super) fn checkpoint_after_tools(&mut self) {
        if !self
            .active
            .checkpoint
            .as_ref()
            .is_some_and(|tc| tc.walk_after)
        {
            return;
        }
        let walk = tokio::spawn(self.checkpoint());
        if let Some(stale) = self
            .active
            .checkpoint
            .as_mut()
            .and_then(|tc| tc.after.replace(walk))
        {
            stale.abort();
        }
    }

    /// The turn's snapshots before and after. After a command (or an MCP tool, a subagent) the
    /// after one is the walk started beside the last model request; after a turn that only
    /// wrote through the workspace it looks again at those files only (none: it is the before
    /// one).
    pub(super) async fn end_checkpoint(&mut self) -> Ended {
        let quiet = self
            .active
            .checkpoint
            .as_ref()
            .is_some_and(|tc| !tc.tools_ran);
        // A turn that ran no tool changed nothing of ours: its snapshot is not waited for.
        // Stopped, it keeps the files it read for the next turn's.
        if let Some(tc) = &self.active.checkpoint
            && quiet
            && let Before::Pending(handle) = &tc.before
            && !handle.is_finished()
        {
            tc.stop_before
                .store(true, std::sync::atomic::Ordering::Relaxed);
            self.active.checkpoint = None;
            return Ended {
                before: None,
                after: None,
                quiet,
            };
        }
        if quiet && let Some(tc) = &self.active.checkpoint {
            // Nothing to undo: a failed snapshot is not worth a word.
            tc.before_failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
        }
        let before = self.settle_before().await;
        let (Some(mut tc), Some(taken)) = (self.active.checkpoint.take(), before.clone()) else {
            return Ended {
                before,
                after: None,
                quiet,
            };
        };
        let written = self.services.workspace.take_written();
        let after = if let Some(mut walk) = tc.after.take() {
            self.waited(&mut walk).await
        } else if tc.walk_after {
            let mut walk = tokio::spawn(self.checkpoint());
            self.waited(&mut walk).await
        } else if written.is_empty() {
            Some(taken)
        } else {
            let mut again =
                tokio::spawn(self.checkpoint_of(move |cp| cp.snapshot_paths(&taken, &written)));
            self.waited(&mut again).await
        };
        Ended {
            before,
            after,
            quiet,
        }
    }

    /// The folder's checkpoint now, or None (no checkpoints here, or taking one failed:
    /// said as a warning). Borrows nothing of the session across the wait.
    pub(super) fn checkpoint(&self) -> impl Future<Output = Option<Taken>> + Send + 'static {
        self.checkpoint_of(|cp| cp.snapshot())
    }

    /// A checkpoint taken by `take` on a blocking thread; a failure is said once.
    fn checkpoint_of(
        &self,
        take: impl FnOnce(&crate::checkpoint::Lazy) -> anyhow::Result<Taken> + Send + 'static,
    ) -> impl Future<Output = Option<Taken>> + Send + 'static {
        let cp = self.services.checkpoints.clone();
        let events = self.services.events.clone();
        async move {
            let cp = cp?;
            let taker = cp.clone();
            match tokio::task::spawn_blocking(move || take(&taker)).await {
                Ok(Ok(taken)) => Some(taken),
                Ok(Err(e)) if e.is::<crate::checkpoint::Stopped>() => None,
                Ok(Err(e)) => {
                    tracing::warn!("checkpoint: {e:#}");
                    if !cp.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                        events.send(Event::Warning {
                            message: format!(
                                "turns of this session cannot be undone: no checkpoint could be taken ({e:#})"
                            ),
                        });
                    }
                    None
                }
                Err(_) => None,
            }
        }
    }

    /// Records a finished user turn: in the log (before its end, so a resumed session can
    /// undo it) and among the undoable turns. The store may forget the rest.
    pub(super) fn mark_turn(&mut self, turn_id: &str, history_start: usize, ended: Ended) {
        if self.parent_id.is_some() {
            return;
        }
        let Ended {
            before,
            after,
            quiet,
        } = ended;
        let uncovered = match (&before, &after) {
            (Some(b), Some(a)) => crate::checkpoint::uncovered(b, a),
            _ => Vec::new(),
        };
        let mark = TurnMark {
            turn_id: turn_id.to_string(),
            history_start,
            before: before.map(|t| t.id),
            after: after.map(|t| t.id),
            uncovered,
            quiet,
        };
        self.log_line(&LogLine::Checkpoint {
            turn_id: mark.turn_id.clone(),
            history_start,
            before: mark.before.clone(),
            after: mark.after.clone(),
            uncovered: mark.uncovered.clone(),
            quiet,
        });
        self.state.turns.push(mark);
        // Older turns can no longer be taken back (`undo_turns`).
        if self.state.turns.len() > self.config.undo_turns {
            self.state.turns.remove(0);
        }
        self.keep_checkpoints();
        self.send_undoable();
    }

    /// Tells the store which snapshots this session's undoable turns need, off the async
    /// threads (it may collect what nothing needs any more).
    fn keep_checkpoints(&self) {
        let Some(cp) = self.services.checkpoints.clone() else {
            return;
        };
        let ids: Vec<String> = self
            .state
            .turns
            .iter()
            .flat_map(|t| t.before.iter().chain(&t.after))
            .cloned()
            .collect();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = cp.keep(ids) {
                tracing::warn!("checkpoint store: {e:#}");
            }
        });
    }

    /// Tells the faces which turns can be taken back now.
    pub(super) fn send_undoable(&self) {
        if self.parent_id.is_some() {
            return;
        }
        let turns = self
            .state
            .turns
            .iter()
            .map(|m| UndoableTurn {
                turn_id: m.turn_id.clone(),
                prompt: self.prompt_of(m),
                files: m.quiet || (m.before.is_some() && m.after.is_some()),
            })
            .collect();
        self.services.events.send(Event::UndoableTurns { turns });
    }

    /// What the user typed to start the turn: its first message of their own.
    fn prompt_of(&self, mark: &TurnMark) -> String {
        self.state
            .history
            .get(mark.history_start..)
            .unwrap_or_default()
            .iter()
            .find_map(|item| match item {
                HistoryItem::User {
                    text,
                    synthetic: false,
                    ..
                } => Some(text.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// `Op::Undo`: the last `turns` turns.
    pub(super) async fn undo(
        &mut self,
        turns: u32,
        restore: Restore,
    ) -> Result<UndoReport, String> {
        let n = turns as usize;
        if n == 0 {
            return Err("undo needs at least one turn".into());
        }
        if n > self.state.turns.len() {
            return Err(self.too_far(n));
        }
        self.take_back(self.state.turns.len() - n, restore).await
    }

    /// A tool's `revert_turn` (deepseek-tui): the files of the last `n` finished turns go
    /// back; the conversation keeps them. The call's result is what was put back.
    pub(super) async fn revert_turns(&mut self, n: u32) -> crate::tools::ToolOutcome {
        use crate::tools::ToolOutcome;
        if self.parent_id.is_some() {
            return ToolOutcome::error("Only the main session can revert turns.");
        }
        match self.undo(n, interpreter_protocol::Restore::Code).await {
            Ok(r) => {
                let skipped: Vec<serde_json::Value> = r
                    .skipped
                    .iter()
                    .map(|k| serde_json::json!({"path": k.path, "reason": k.reason}))
                    .collect();
                ToolOutcome::ok(
                    serde_json::json!({
                        "reverted_turns": r.turn_ids.len(),
                        "restored": r.restored,
                        "removed": r.removed,
                        "skipped": skipped,
                    })
                    .to_string(),
                )
            }
            Err(e) => ToolOutcome::error(format!("revert_turn failed: {e}")),
        }
    }

    /// `Op::Rewind`: back to just before `turn_id`.
    pub(super) async fn rewind(
        &mut self,
        turn_id: &str,
        restore: Restore,
    ) -> Result<UndoReport, String> {
        let Some(first) = self.state.turns.iter().position(|t| t.turn_id == turn_id) else {
            return Err(format!(
                "turn `{turn_id}` cannot be rewound to: it is not one of this session's last {} turns (a compaction, or the start of the session, is in the way)",
                self.state.turns.len()
            ));
        };
        self.take_back(first, restore).await
    }

    fn too_far(&self, n: usize) -> String {
        match self.state.turns.len() {
            0 => "there is no turn to undo since the session started or was last compacted"
                .to_string(),
            k => format!(
                "only {k} turn(s) can be undone, not {n}: earlier turns are before the session's last compaction or its start"
            ),
        }
    }

    /// Takes back the turns from index `first` on.
    async fn take_back(&mut self, first: usize, restore: Restore) -> Result<UndoReport, String> {
        let marks: Vec<TurnMark> = self.state.turns[first..].to_vec();
        let mut report = UndoReport {
            turn_ids: marks.iter().map(|m| m.turn_id.clone()).collect(),
            ..Default::default()
        };
        // Turns that ran no tool changed no file: the files go back to before the first that
        // did.
        let loud: Vec<&TurnMark> = marks.iter().filter(|m| !m.quiet).collect();
        if matches!(restore, Restore::Code | Restore::Both) && !loud.is_empty() {
            let (Some(before), Some(after)) = (
                loud.first().and_then(|m| m.before.clone()),
                loud.last().and_then(|m| m.after.clone()),
            ) else {
                return Err("those turns have no checkpoint (taking one failed when they ran: the warning then said why), so their files cannot be put back".into());
            };
            let Some(cp) = self.services.checkpoints.clone() else {
                return Err("this session keeps no checkpoints".into());
            };
            // A file an editor holds with unsaved changes is the user's edit: it stays.
            let (lister, b, a) = (cp.clone(), before.clone(), after.clone());
            let changed = blocking(move || lister.changed(&b, &a)).await?;
            let unsaved = self.services.workspace.unsaved(&changed).await;
            let done = blocking(move || cp.restore(&before, &after, &unsaved)).await?;
            report.restored = done.restored;
            report.removed = done.removed;
            report.skipped = done
                .skipped
                .into_iter()
                .map(|(path, reason)| SkippedFile { path, reason })
                .collect();
            // What the turns changed that no checkpoint could hold: named, never touched.
            for u in marks.iter().flat_map(|m| &m.uncovered) {
                let named = report.restored.contains(&u.path)
                    || report.removed.contains(&u.path)
                    || report.skipped.iter().any(|k| k.path == u.path);
                if !named {
                    report.skipped.push(SkippedFile {
                        path: u.path.clone(),
                        reason: u.reason.clone(),
                    });
                }
            }
            // What the agent read may no longer be on disk: it reads again.
            self.services.workspace.forget_reads();
        }
        if matches!(restore, Restore::Conversation | Restore::Both) {
            self.state.history.truncate(marks[0].history_start);
            self.state.turns.truncate(first);
            self.log_line(&LogLine::Undo {
                turn_ids: report.turn_ids.clone(),
            });
            if let Some(log) = &mut self.state.log {
                let _ = log.sync();
            }
            report.conversation = true;
        }
        self.services.events.send(Event::Undone(report.clone()));
        self.send_undoable();
        Ok(report)
    }
}

/// Runs checkpoint work off the async threads; its failure is the undo's.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("undo failed: {e}"))?
        .map_err(|e| format!("undo failed: {e:#}"))
}
