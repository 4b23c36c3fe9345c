//! What a session is: its harness and tool table, the history, its permissions and usage, the
//! goal, the undoable turns and the log that keeps them. Changed only by the session's task.

use interpreter_protocol::{Goal, Permissions, TokenUsage};
use std::collections::HashMap;
use std::sync::Arc;

use crate::harness::Harness;
use crate::model::HistoryItem;
use crate::store::{SessionLog, ToolDetail, TurnMark};
use crate::tools::table::ToolTable;

pub(super) struct SessionState {
    pub(super) harness: Arc<dyn Harness>,
    pub(super) system_prompt: String,
    /// The harness's tools followed by the external ones.
    pub(super) tools: ToolTable,
    pub(super) history: Vec<HistoryItem>,
    /// None for a session that does not persist, and for subagents.
    pub(super) log: Option<SessionLog>,
    pub(super) output_schema: Option<serde_json::Value>,
    pub(super) permissions: Permissions,
    pub(super) total_usage: TokenUsage,
    /// The last request's prompt plus output: what the conversation occupies.
    pub(super) context_used: u64,
    pub(super) title: Option<String>,
    /// The thread's goal (`agent/goal.rs`).
    pub(super) goal: Option<Goal>,
    /// Changes and plans of past tool calls, by call id (for replay).
    pub(super) details: HashMap<String, ToolDetail>,
    /// The text before the agent's first change, when a turn's diff was last sent.
    pub(super) diff_sent: Option<String>,
    /// In plan mode: the permissions to restore when the user approves leaving it.
    pub(super) plan_saved: Option<Permissions>,
    /// The user turns that can be undone, oldest first (since the last compaction).
    pub(super) turns: Vec<TurnMark>,
    /// The requests' `prompt_cache_key`: the harness's spelling of the session id.
    pub(crate) cache_key: String,
    /// The harness's title request was sent (once per session).
    pub(super) title_asked: bool,
    /// The title request, while it runs.
    pub(super) title_task: Option<TitleTask>,
    /// The worktree the session works in (Claude Code's EnterWorktree), if any.
    pub(super) worktree: Option<Arc<crate::tools::worktree::WorktreeSession>>,
    /// `notify` programs still running (`notify.rs`); shutdown gives them a moment.
    pub(super) notifying: Vec<tokio::task::JoinHandle<()>>,
    /// `SessionStart` (or `SubagentStart`) hooks ran in this process.
    pub(super) hooks_started: bool,
}

/// A running title request (`title.rs`): the title and what it used, or nothing when it
/// failed.
pub(super) type TitleTask = tokio::task::JoinHandle<Option<(String, TokenUsage)>>;

impl SessionState {
    /// A state with an empty history, no log and nothing used yet.
    pub(super) fn new(
        harness: Arc<dyn Harness>,
        system_prompt: String,
        tools: ToolTable,
        permissions: Permissions,
    ) -> SessionState {
        SessionState {
            harness,
            system_prompt,
            tools,
            history: Vec::new(),
            log: None,
            output_schema: None,
            permissions,
            total_usage: TokenUsage::default(),
            context_used: 0,
            title: None,
            goal: None,
            details: HashMap::new(),
            diff_sent: None,
            plan_saved: None,
            turns: Vec::new(),
            cache_key: String::new(),
            title_asked: false,
            title_task: None,
            worktree: None,
            notifying: Vec::new(),
            hooks_started: false,
        }
    }
}

/// A subagent that ended, kept so a later call can continue it (resume by id).
pub(super) struct FinishedSubagent {
    pub(super) id: String,
    /// The type it was started as.
    pub(super) kind: String,
    pub(super) history: Vec<HistoryItem>,
    pub(super) read_only: bool,
}

/// The session's last finished subagents, newest last; only [`MAX_FINISHED`] are kept, in
/// memory (a subagent's items are not logged, so a resumed session cannot continue one).
#[derive(Default)]
pub(super) struct FinishedSubagents(std::sync::Mutex<std::collections::VecDeque<FinishedSubagent>>);

const MAX_FINISHED: usize = 16;

impl FinishedSubagents {
    pub(super) fn keep(&self, done: FinishedSubagent) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|k| k.id != done.id);
        if kept.len() == MAX_FINISHED {
            kept.pop_front();
        }
        kept.push_back(done);
    }

    /// Takes the subagent `id` names; ids may come with a harness's prefix (`ses_`, `agent_`).
    pub(super) fn take(&self, id: &str) -> Option<FinishedSubagent> {
        let id = id.trim();
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = kept
            .iter()
            .position(|k| k.id == id || id.ends_with(&k.id))?;
        kept.remove(at)
    }
}
