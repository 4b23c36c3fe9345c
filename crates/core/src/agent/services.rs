//! What a session uses and does not own: the model client, the workspace, where commands run,
//! the policy and its approver, the front end's asks and event sink, and the folder's
//! checkpoints. A subagent gets a clone, narrowed where its type says so.

use std::sync::Arc;

use super::EventSink;
use super::approvals::Approvals;
use crate::harness::PromptEnv;
use crate::model::ModelClient;
use crate::sandbox::Policy;
use crate::tools::{Approver, CommandRunner, ExternalTools};
use crate::workspace::Workspace;

#[derive(Clone)]
pub(super) struct SessionServices {
    pub(super) client: ModelClient,
    pub(super) workspace: Arc<Workspace>,
    pub(super) policy: Arc<Policy>,
    /// Asks the front end through events; answers come back as `Op::Approval`.
    pub(super) approver: Arc<dyn Approver>,
    pub(super) approvals: Arc<Approvals>,
    /// Questions and diagnostics requests to the front end.
    pub(super) asks: Arc<super::Asks>,
    pub(super) runner: Arc<dyn CommandRunner>,
    pub(super) events: EventSink,
    /// What the harness's prompt is built from (the folder, the shell, the instructions).
    pub(super) env: Arc<PromptEnv>,
    /// The folder's checkpoints (None for subagents and editor-buffer sessions).
    pub(super) checkpoints: Option<Arc<crate::checkpoint::Lazy>>,
    /// Commands running in the background; a subagent's are its session's.
    pub(super) tasks: Arc<crate::tools::background::BackgroundTasks>,
    /// Prompts the session runs on a schedule.
    pub(super) schedule: Arc<crate::tools::schedule::Schedule>,
    /// Evidence the session keeps; a subagent's is its session's.
    pub(super) evidence: Arc<crate::tools::evidence::Evidence>,
    /// The session's task list; a subagent's is its session's.
    pub(super) task_list: Arc<crate::tools::task_list::TaskList>,
    /// The session's long-lived shell; a subagent shares it.
    pub(super) shell: Arc<crate::tools::shell_session::ShellSession>,
    /// The session's browser, stopped when the last holder goes; a subagent shares it.
    pub(super) browser: Arc<crate::tools::browser::Browser>,
    /// Subagents that ended, which a later call may continue.
    pub(super) finished_subagents: Arc<super::state::FinishedSubagents>,
    /// The session's hooks; a subagent's run as its own session.
    pub(super) hooks: Arc<crate::hooks::HookRunner>,
    /// The MCP servers' tools, once connected.
    pub(super) external: Option<Arc<dyn ExternalTools>>,
}
