//! The machinery tools share, whatever a harness calls them: running commands, reading and
//! searching files, applying patches, keeping the plan. Harnesses parse their own argument
//! shapes and render results in their own conventions on top of these.

pub mod apply_patch;
pub(crate) mod background;
pub(crate) mod browser;
pub(crate) mod diagnostics;
pub(crate) mod edit;
pub(crate) mod evidence;
pub mod exec;
pub mod files;
pub(crate) mod goal;
pub(crate) mod media;
pub(crate) mod names;
pub(crate) mod patch_runner;
pub(crate) mod pdf;
pub(crate) mod plan;
pub(crate) mod question;
pub(crate) mod schedule;
pub(crate) mod search_tools;
pub(crate) mod shell_session;
pub(crate) mod table;
pub(crate) mod task_list;
pub mod truncate;
pub mod web;
pub(crate) mod worktree;

use interpreter_protocol::{
    ApprovalDecision, ApprovalRequest, Event, FileChange, Plan, ToolKind, ToolStatus,
};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub(crate) mod asks;
pub(crate) mod events;

use crate::sandbox::{Intent, Policy, Verdict};
use crate::workspace::Workspace;
use events::EventSink;

/// Asks whoever drives the session whether a tool call may run.
pub(crate) trait Approver: Send + Sync {
    fn request(
        &self,
        req: ApprovalRequest,
    ) -> futures::future::BoxFuture<'static, ApprovalDecision>;
}

/// Runs shell commands: locally by default, or in the client's terminals (ACP `terminal/*`).
pub trait CommandRunner: Send + Sync {
    /// Runs `command` in a shell in `cwd`, unconfined, killing it at `timeout` or on `cancel`.
    /// `call_id` is the tool call it serves (a client terminal is shown there); `on_chunk` gets
    /// output as it arrives, where the runner can stream it.
    fn run<'a>(
        &'a self,
        command: &'a str,
        cwd: &'a std::path::Path,
        timeout: std::time::Duration,
        cancel: &'a CancellationToken,
        call_id: &'a str,
        on_chunk: Box<dyn FnMut(&str) + Send + 'a>,
    ) -> futures::future::BoxFuture<'a, std::io::Result<exec::ExecResult>>;

    /// Whether this runner can hold its commands to the process sandbox. Runners that cannot
    /// (the editor's terminals) keep the default: their commands count as unconfined
    /// (`Intent::Exec`) for the approval policy.
    fn can_confine(&self) -> bool {
        false
    }

    /// Runs `command` (confined when `confinement` is given) with `input` written to its
    /// stdin as it comes, for interactive programs. The default refuses: the editor's
    /// terminals take no input from the agent.
    #[allow(clippy::too_many_arguments)]
    fn run_with_input<'a>(
        &'a self,
        confinement: Option<&'a crate::sandbox::Confinement>,
        command: &'a str,
        cwd: &'a std::path::Path,
        timeout: std::time::Duration,
        cancel: &'a CancellationToken,
        input: exec::Input,
        on_chunk: Box<dyn FnMut(&str) + Send + 'a>,
    ) -> futures::future::BoxFuture<'a, std::io::Result<exec::ExecResult>> {
        let _ = (confinement, command, cwd, timeout, cancel, input, on_chunk);
        Box::pin(async {
            Err(std::io::Error::other(
                "this command runner cannot write to a command's input",
            ))
        })
    }

    /// Like `run`, confined by `confinement`. The default refuses: a runner that cannot
    /// confine must never run a command that was allowed because it would be confined.
    fn run_confined<'a>(
        &'a self,
        confinement: &'a crate::sandbox::Confinement,
        command: &'a str,
        cwd: &'a std::path::Path,
        timeout: std::time::Duration,
        cancel: &'a CancellationToken,
        on_chunk: Box<dyn FnMut(&str) + Send + 'a>,
    ) -> futures::future::BoxFuture<'a, std::io::Result<exec::ExecResult>> {
        let _ = (confinement, command, cwd, timeout, cancel, on_chunk);
        Box::pin(async {
            Err(std::io::Error::other(
                "this command runner cannot apply the process sandbox",
            ))
        })
    }
}

/// Commands in a local process group (see `exec`), at most `max_processes` alive at once.
pub(crate) struct LocalRunner {
    pub(crate) max_processes: usize,
}

impl CommandRunner for LocalRunner {
    fn run<'a>(
        &'a self,
        command: &'a str,
        cwd: &'a std::path::Path,
        timeout: std::time::Duration,
        cancel: &'a CancellationToken,
        _call_id: &'a str,
        on_chunk: Box<dyn FnMut(&str) + Send + 'a>,
    ) -> futures::future::BoxFuture<'a, std::io::Result<exec::ExecResult>> {
        Box::pin(exec::run_command_confined(
            command,
            cwd,
            timeout,
            cancel,
            None,
            self.max_processes,
            on_chunk,
        ))
    }

    fn can_confine(&self) -> bool {
        true
    }

    fn run_with_input<'a>(
        &'a self,
        confinement: Option<&'a crate::sandbox::Confinement>,
        command: &'a str,
        cwd: &'a std::path::Path,
        timeout: std::time::Duration,
        cancel: &'a CancellationToken,
        input: exec::Input,
        on_chunk: Box<dyn FnMut(&str) + Send + 'a>,
    ) -> futures::future::BoxFuture<'a, std::io::Result<exec::ExecResult>> {
        Box::pin(exec::run_command_with_input(
            command,
            cwd,
            timeout,
            cancel,
            confinement,
            self.max_processes,
            Some(input),
            on_chunk,
        ))
    }

    fn run_confined<'a>(
        &'a self,
        confinement: &'a crate::sandbox::Confinement,
        command: &'a str,
        cwd: &'a std::path::Path,
        timeout: std::time::Duration,
        cancel: &'a CancellationToken,
        on_chunk: Box<dyn FnMut(&str) + Send + 'a>,
    ) -> futures::future::BoxFuture<'a, std::io::Result<exec::ExecResult>> {
        Box::pin(exec::run_command_confined(
            command,
            cwd,
            timeout,
            cancel,
            Some(confinement),
            self.max_processes,
            on_chunk,
        ))
    }
}

/// What a tool call has to work with.
pub(crate) struct ToolContext {
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) policy: Arc<Policy>,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) runner: Arc<dyn CommandRunner>,
    pub(crate) events: EventSink,
    pub(crate) cancel: CancellationToken,
    pub(crate) call_id: String,
    /// Budget for what the model sees of one output.
    pub(crate) output_token_limit: usize,
    /// Starts subagents; None inside a subagent (they do not nest).
    pub(crate) subagents: Option<Arc<dyn Subagents>>,
    /// The session is in plan mode (read-only until the user approves leaving it).
    pub(crate) plan_mode: bool,
    /// Questions for the user and the editor's diagnostics, through the front end.
    pub(crate) asks: Arc<asks::Asks>,
    /// The session's background tasks.
    pub(crate) tasks: Arc<background::BackgroundTasks>,
    /// What fetches and searches may reach.
    pub(crate) web: Arc<web::WebConfig>,
    /// The model takes images (a Read of an image file can show it).
    pub(crate) model_images: bool,
    /// The session's scheduled prompts.
    pub(crate) schedule: Arc<schedule::Schedule>,
    /// The session's goal as the call found it.
    pub(crate) goal: Option<interpreter_protocol::Goal>,
    /// Evidence the session keeps (little-coder's Evidence tools).
    pub(crate) evidence: Arc<evidence::Evidence>,
    /// The session's task list (Claude Code's TaskCreate and its siblings).
    pub(crate) task_list: Arc<task_list::TaskList>,
    /// The session's long-lived shell (little-coder's ShellSession).
    pub(crate) shell: Arc<shell_session::ShellSession>,
    /// The worktree the session works in (Claude Code's EnterWorktree), if any.
    pub(crate) worktree: Option<Arc<worktree::WorktreeSession>>,
    /// The session's headless browser (little-coder's Browser tools), started on first use.
    pub(crate) browser: Arc<browser::Browser>,
}

/// A change to the session a tool asks for; the session applies it after the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ModeChange {
    /// Enter plan mode: read-only, the previous permissions kept for later.
    EnterPlan,
    /// Leave plan mode (the user approved): the previous permissions come back.
    ExitPlan,
    /// The user cancelled while the call asked them: the turn ends, as after an interrupt.
    StopTurn,
    /// The model marked the thread's goal (`update_goal`).
    Goal(interpreter_protocol::GoalStatus),
    /// The model made or changed the goal with a harness's goal tools (Kimi Code's).
    GoalEdit(Box<goal::GoalEdit>),
    /// Put back the files of the last N turns (deepseek-tui's `revert_turn`); the session
    /// writes the call's result from what it restored.
    RevertTurns(u32),
    /// Work in a worktree, or leave it (Claude Code's EnterWorktree and ExitWorktree).
    Worktree(worktree::WorktreeMove),
}

/// A self-contained task for a subagent.
pub(crate) struct SubagentTask {
    /// Everything the subagent needs to know.
    pub prompt: String,
    /// Explore and plan subagents only read.
    pub read_only: bool,
    /// Continue this earlier subagent (its session id) with `prompt`, instead of a new one.
    pub resume: Option<String>,
}

/// Runs subagents: sessions of their own, with a fresh history, linked to the caller.
pub(crate) trait Subagents: Send + Sync {
    fn run<'a>(
        &'a self,
        task: SubagentTask,
        cancel: &'a CancellationToken,
    ) -> futures::future::BoxFuture<'a, ToolOutcome>;
    /// The call names a custom agent from a file (a type the harness's own list lacks).
    fn custom_type(&self) -> bool;
}

/// An external tool (one of an MCP server's) as an entry of the session's table.
struct External {
    set: Arc<dyn ExternalTools>,
    /// As the model sees it (the harness may name it its own way).
    spec: crate::model::ToolSpec,
    /// The set's own name for it.
    name: String,
}

impl table::Tool for External {
    fn spec(&self) -> &crate::model::ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &serde_json::Value, _ws: &Workspace) -> CallDescription {
        self.set
            .describe(&self.name, args)
            .unwrap_or_else(|| CallDescription {
                kind: ToolKind::Other,
                title: self.spec.name.clone(),
                locations: vec![],
                command: None,
            })
    }
    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> futures::future::BoxFuture<'a, ToolOutcome> {
        self.set.call(&self.name, args, ctx)
    }
}

/// The table entries of a set of external tools, named as `rename` says (a harness's
/// convention, such as Claude Code's `mcp__<server>__<tool>`), then held to what providers
/// accept and made unique among themselves and the `taken` names (the harness's own tools):
/// every name is one the model can call, and a call reaches the tool it names.
pub(crate) fn external_entries<'a>(
    set: Arc<dyn ExternalTools>,
    rename: &dyn Fn(&str) -> String,
    taken: impl IntoIterator<Item = &'a str>,
) -> Vec<Arc<dyn table::Tool>> {
    let mut names = names::UniqueNames::reserving(taken);
    set.specs()
        .into_iter()
        .map(|mut spec| {
            let name = std::mem::take(&mut spec.name);
            spec.name = names.claim(&rename(&name));
            Arc::new(External {
                set: set.clone(),
                spec,
                name,
            }) as Arc<dyn table::Tool>
        })
        .collect()
}

/// How a tool call ended, for both the model and the user.
#[derive(Debug, Clone)]
pub(crate) struct ToolOutcome {
    /// What goes back to the model.
    pub model_output: String,
    /// What the user sees (may be longer than the model's copy).
    pub user_output: String,
    pub(crate) status: ToolStatus,
    pub(crate) exit_code: Option<i32>,
    pub(crate) changes: Vec<FileChange>,
    pub(crate) plan: Option<Plan>,
    /// A change to the session the call asks for (plan mode).
    pub mode_change: Option<ModeChange>,
    /// Images for the model (data URLs): they follow the response's results in a message.
    pub(crate) images: Vec<String>,
    /// The subagent a call ran (harnesses name it in results, to continue it later).
    pub(crate) subagent: Option<Box<SubagentRun>>,
}

/// A subagent a call ran: its session, and the type it was started as (a resumed one keeps
/// its own).
#[derive(Debug, Clone)]
pub(crate) struct SubagentRun {
    pub(crate) id: String,
    pub(crate) kind: String,
}

impl ToolOutcome {
    /// The id of the subagent the call ran, or "".
    pub(crate) fn subagent_id(&self) -> String {
        self.subagent
            .as_ref()
            .map(|s| s.id.clone())
            .unwrap_or_default()
    }
}

impl ToolOutcome {
    /// A command's outcome: the model reads the harness's own wording of it, the user sees
    /// the whole output; failed unless the command [succeeded](exec::ExecResult::succeeded).
    pub(crate) fn from_exec(r: exec::ExecResult, model_output: String) -> Self {
        ToolOutcome {
            model_output,
            status: if r.succeeded() {
                ToolStatus::Completed
            } else {
                ToolStatus::Failed
            },
            exit_code: r.exit_code,
            user_output: r.output,
            ..ToolOutcome::ok("")
        }
    }

    pub(crate) fn ok(text: impl Into<String>) -> Self {
        let t = text.into();
        ToolOutcome {
            model_output: t.clone(),
            user_output: t,
            status: ToolStatus::Completed,
            exit_code: None,
            changes: Vec::new(),
            plan: None,
            mode_change: None,
            images: Vec::new(),
            subagent: None,
        }
    }

    pub(crate) fn error(text: impl Into<String>) -> Self {
        ToolOutcome {
            status: ToolStatus::Failed,
            ..Self::ok(text)
        }
    }

    pub(crate) fn declined(reason: impl Into<String>) -> Self {
        ToolOutcome {
            status: ToolStatus::Declined,
            ..Self::ok(reason)
        }
    }

    pub(crate) fn is_error(&self) -> bool {
        self.status != ToolStatus::Completed
    }
}

/// Tools from outside the harness (MCP servers), listed after the harness's own so the
/// cached prompt prefix stays the same when they change.
pub(crate) trait ExternalTools: Send + Sync {
    fn specs(&self) -> Vec<crate::model::ToolSpec>;
    /// None when the tool is not one of these.
    fn describe(&self, tool: &str, args: &serde_json::Value) -> Option<CallDescription>;
    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> futures::future::BoxFuture<'a, ToolOutcome>;
}

/// How a harness describes a call before it runs (for the begin event and approvals).
#[derive(Debug, Clone)]
pub(crate) struct CallDescription {
    pub(crate) kind: ToolKind,
    pub(crate) title: String,
    pub(crate) locations: Vec<PathBuf>,
    pub(crate) command: Option<String>,
}

impl CallDescription {
    /// A call that runs no command.
    pub(crate) fn new(kind: ToolKind, title: String, locations: Vec<PathBuf>) -> Self {
        CallDescription {
            kind,
            title,
            locations,
            command: None,
        }
    }
}

impl ToolContext {
    /// Applies the policy; asks the driver when needed. Err holds the refusal for the model.
    pub(crate) async fn authorize(
        &self,
        intent: Intent,
        tool: &str,
        kind: ToolKind,
        title: &str,
        changes: Vec<FileChange>,
    ) -> Result<(), ToolOutcome> {
        let verdict = self.check(intent, tool, kind, title, changes).await;
        if verdict.is_ok() {
            self.events.send(Event::ToolCallRunning {
                call_id: self.call_id.clone(),
            });
        }
        verdict
    }

    async fn check(
        &self,
        intent: Intent,
        tool: &str,
        kind: ToolKind,
        title: &str,
        changes: Vec<FileChange>,
    ) -> Result<(), ToolOutcome> {
        match self.policy.decide(&intent) {
            Verdict::Allow => Ok(()),
            Verdict::Deny { reason } => Err(ToolOutcome::declined(format!(
                "Refused by the sandbox policy: {reason}"
            ))),
            Verdict::Ask { reason, dangerous } => {
                // A dangerous command asks every time: there is nothing to remember.
                let remember_key = match dangerous {
                    true => String::new(),
                    false => crate::sandbox::remember_key(&intent).unwrap_or_default(),
                };
                let req = ApprovalRequest {
                    call_id: self.call_id.clone(),
                    tool: tool.to_string(),
                    kind,
                    title: title.to_string(),
                    reason,
                    command: intent.command().map(String::from),
                    changes,
                    remember_key,
                    dangerous,
                };
                let offers_always = req.offers_always();
                let offers_save = req.offers_save();
                let timeout = self.asks.timeout();
                let _asking = self.asks.one_at_a_time().await;
                let decision = tokio::select! {
                    d = self.approver.request(req) => d,
                    _ = self.cancel.cancelled() => ApprovalDecision::Cancelled,
                    // Nobody answered: the call does not run, and the turn goes on.
                    _ = tokio::time::sleep(timeout) => return Err(ToolOutcome::declined(format!(
                        "Nobody answered the approval request within {} seconds, so the call did not run.",
                        timeout.as_secs()
                    ))),
                };
                match decision {
                    ApprovalDecision::AllowOnce => Ok(()),
                    ApprovalDecision::AllowAlways => {
                        // Only what was offered is remembered; otherwise it is a yes once.
                        if offers_always {
                            self.policy.remember(&intent);
                        }
                        Ok(())
                    }
                    ApprovalDecision::AllowAlwaysSave => {
                        if offers_always {
                            self.policy.remember(&intent);
                        }
                        if offers_save && let Err(e) = self.policy.save(&intent) {
                            self.events.send(Event::Warning {
                                message: format!("The rule was not saved: {e}"),
                            });
                        }
                        Ok(())
                    }
                    ApprovalDecision::Reject => Err(ToolOutcome::declined(
                        "The user rejected this tool call. Do not retry it; ask the user or choose another approach.",
                    )),
                    ApprovalDecision::Cancelled => {
                        Err(ToolOutcome::declined("The tool call was cancelled."))
                    }
                }
            }
        }
    }

    /// Asks the user directly, whatever the policy (leaving plan mode is always the user's
    /// call). Cancelling the turn answers `Cancelled`.
    pub(crate) async fn ask_user(&self, tool: &str, title: &str, reason: &str) -> ApprovalDecision {
        let req = ApprovalRequest {
            call_id: self.call_id.clone(),
            tool: tool.to_string(),
            kind: ToolKind::Think,
            title: title.to_string(),
            reason: reason.to_string(),
            command: None,
            changes: vec![],
            remember_key: String::new(),
            dangerous: false,
        };
        let _asking = self.asks.one_at_a_time().await;
        let decision = tokio::select! {
            d = self.approver.request(req) => d,
            _ = self.cancel.cancelled() => ApprovalDecision::Cancelled,
        };
        if matches!(
            decision,
            ApprovalDecision::AllowOnce
                | ApprovalDecision::AllowAlways
                | ApprovalDecision::AllowAlwaysSave
        ) {
            self.events.send(Event::ToolCallRunning {
                call_id: self.call_id.clone(),
            });
        }
        decision
    }

    /// Runs `command` through the runner with its output streamed to the front end as
    /// `ToolCallOutputDelta` events.
    pub(crate) async fn run_streamed(
        &self,
        command: &str,
        cwd: &std::path::Path,
        timeout: std::time::Duration,
    ) -> std::io::Result<exec::ExecResult> {
        let events = self.events.clone();
        let call_id = self.call_id.clone();
        let on_chunk = Box::new(move |chunk: &str| {
            events.send(Event::ToolCallOutputDelta {
                call_id: call_id.clone(),
                chunk: chunk.to_string(),
            })
        });
        self.run_command(command, cwd, timeout, on_chunk).await
    }

    /// A shell tool's whole run: asks the policy about `command` as tool `tool`, then runs it
    /// in `cwd` with its output streamed. `failed` starts the error when it cannot start.
    /// Asks the policy about reaching `url` (a fetch of its host; "always" is per host).
    pub(crate) async fn authorize_fetch(
        &self,
        tool: &str,
        url: &str,
        title: &str,
    ) -> Result<(), ToolOutcome> {
        let host = reqwest::Url::parse(url.trim())
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let target = url.to_string();
        self.authorize(
            Intent::Fetch { target, host },
            tool,
            ToolKind::Fetch,
            title,
            vec![],
        )
        .await
    }

    pub(crate) async fn authorize_and_run(
        &self,
        tool: &str,
        kind: ToolKind,
        command: &str,
        cwd: &std::path::Path,
        timeout: std::time::Duration,
        failed: &str,
    ) -> Result<exec::ExecResult, table::ToolError> {
        self.authorize(self.command_intent(command), tool, kind, command, vec![])
            .await?;
        self.run_streamed(command, cwd, timeout)
            .await
            .map_err(|e| table::ToolError::message(format!("{failed}: {e}")))
    }

    /// Runs a subagent, or explains that none can run here.
    /// The subagent call being run names a custom agent from a file.
    pub(crate) fn custom_agent_type(&self) -> bool {
        self.subagents.as_ref().is_some_and(|s| s.custom_type())
    }

    pub(crate) async fn run_subagent(&self, task: SubagentTask) -> ToolOutcome {
        match &self.subagents {
            Some(s) => s.run(task, &self.cancel).await,
            None => ToolOutcome::error("Subagents cannot start subagents of their own."),
        }
    }

    /// The intent of running `command` through this context's runner: `Shell` when the
    /// runner can confine it (the policy then knows whether the sandbox will), else `Exec`.
    pub(crate) fn command_intent(&self, command: &str) -> Intent {
        let command = command.to_string();
        if self.runner.can_confine() {
            Intent::Shell { command }
        } else {
            Intent::Exec { command }
        }
    }

    /// Runs `command` through the runner, confined as the policy says when the runner can.
    pub(crate) async fn run_command(
        &self,
        command: &str,
        cwd: &std::path::Path,
        timeout: std::time::Duration,
        on_chunk: Box<dyn FnMut(&str) + Send + '_>,
    ) -> std::io::Result<exec::ExecResult> {
        let confinement = self
            .runner
            .can_confine()
            .then(|| self.policy.confinement(self.workspace.roots()))
            .flatten();
        match &confinement {
            Some(c) => {
                self.runner
                    .run_confined(c, command, cwd, timeout, &self.cancel, on_chunk)
                    .await
            }
            None => {
                self.runner
                    .run(command, cwd, timeout, &self.cancel, &self.call_id, on_chunk)
                    .await
            }
        }
    }
}
