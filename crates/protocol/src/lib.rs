//! Types that cross the boundary between the agent core and its front ends.
//!
//! A front end drives a session with [`Op`]s and observes it through [`Event`]s; nothing
//! else crosses. Front ends (ACP, LSP, exec, the terminal, the app-server) translate their
//! own wire formats to and from these. Nothing here does I/O, and nothing here knows a front
//! end's protocol.

#![warn(missing_docs)]

pub mod export;
pub mod ext;
mod mcp;
mod settings;

mod asks;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub use asks::{
    Diagnostic, DiagnosticMap, DiagnosticSeverity, DiagnosticsRequest, Position, Question,
    QuestionAnswer, QuestionOption, QuestionRequest, Range,
};

pub use mcp::{McpAuthStatus, McpServerInfo, McpServerStatus, McpToolInfo};

pub use settings::{
    ApprovalPolicy, PermissionMode, Permissions, ReasoningEffort, SandboxMode, UnknownValue,
};

/// Everything a front end can ask of a session. A session takes them in order; while a turn
/// runs, [`Op::Interrupt`], [`Op::Approval`] and [`Op::Steer`] act at once and the others
/// wait for the turn to end; [`Op::Answer`] and [`Op::Diagnostics`] act at once too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Starts a turn with this input. Its `TurnStarted`/`TurnEnded` carry the submission id.
    UserInput {
        /// The user's message: text, images, skill invocations.
        items: Vec<InputItem>,
    },
    /// Adds input to the running turn; it reaches the model with the next request. Without
    /// a running turn it starts one, like [`Op::UserInput`].
    Steer {
        /// What the user added.
        items: Vec<InputItem>,
    },
    /// Cancels the running turn: commands are killed and the model stream stops.
    Interrupt,
    /// Answers an [`Event::ApprovalRequested`].
    Approval {
        /// The call the request was about.
        call_id: String,
        /// The answer.
        decision: ApprovalDecision,
    },
    /// Answers an [`Event::QuestionAsked`].
    Answer {
        /// The call that asked.
        call_id: String,
        /// The user's answer.
        answer: QuestionAnswer,
    },
    /// Answers an [`Event::DiagnosticsRequested`].
    Diagnostics {
        /// As in the request.
        request_id: String,
        /// The files' diagnostics; `None` when the front end could not get them.
        diagnostics: Option<DiagnosticMap>,
    },
    /// Changes what the agent may do without asking, from the next tool call on.
    SetPermissions(Permissions),
    /// Switches the model from the next request on.
    SetModel {
        /// The provider's model name.
        model: String,
    },
    /// Switches the harness (prompt and tools) from the next request on.
    SetHarness {
        /// A harness name, as `interpreter debug prompt --harness` takes it.
        harness: String,
    },
    /// Changes the reasoning effort; `None` is the provider's default.
    SetEffort {
        /// The new effort.
        effort: Option<ReasoningEffort>,
    },
    /// Summarises the conversation to free context; runs as a turn of its own.
    Compact,
    /// Asks for the stored conversation as one [`Event::Transcript`].
    Replay,
    /// Names the session (replaces its title); logged and announced as
    /// [`Event::TitleChanged`].
    SetTitle {
        /// The new title; surrounding whitespace is dropped, empty is refused.
        title: String,
    },
    /// Sets the JSON Schema the final answer must follow, from the next turn on; `None`
    /// lifts it. A face that wants it for one turn sends it before that turn and `None`
    /// after it (ops run in order).
    SetOutputSchema {
        /// The schema, or `None`.
        schema: Option<serde_json::Value>,
    },
    /// Asks for the exact body of the next model request, were `prompt` sent, as an
    /// [`Event::RequestPreview`]. Nothing is sent.
    PreviewRequest {
        /// The user message to preview with.
        prompt: String,
    },
    /// Takes back the last `turns` turns: the files they changed go back to how they were
    /// before (a file changed since is kept and reported), and the turns leave the history
    /// the model sees (the session log keeps them, marked undone). Answered with
    /// [`Event::Undone`].
    Undo {
        /// How many turns, from the last one back; at least 1.
        turns: u32,
        /// What goes back: both unless said (the app-server's `thread/rollback` is the
        /// conversation only).
        #[serde(default = "Restore::both")]
        restore: Restore,
    },
    /// Goes back to just before the turn `turn_id`: its files, its conversation, or both.
    Rewind {
        /// A turn of this session, as `TurnStarted` named it.
        turn_id: String,
        /// What goes back.
        restore: Restore,
    },
    /// Sets the thread's goal, or changes it: a new objective (a new goal when there is none
    /// or the last one is finished), a status (`active` resumes, `paused` pauses), a token
    /// budget. While a goal is active and the session idle, it works toward it turn by turn.
    SetGoal {
        /// The objective.
        objective: Option<String>,
        /// The status the user sets.
        status: Option<GoalStatus>,
        /// Tokens the goal may use.
        token_budget: Option<u64>,
    },
    /// Removes the goal.
    ClearGoal,
    /// Reads the MCP servers of config.toml again and reconnects them all (a front end's own
    /// servers too), announced as [`Event::McpServers`] then one [`Event::McpServerUpdated`]
    /// per server.
    ReloadMcpServers,
    /// Ends the session: a running turn is cancelled, then the session stops.
    Shutdown,
}

/// A persistent objective on a session, worked on across turns until it is complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Goal {
    /// What to achieve, in the user's words.
    pub objective: String,
    /// Where it stands.
    pub status: GoalStatus,
    /// Tokens it may use, if the user set a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// Tokens its turns used so far.
    #[serde(default)]
    pub tokens_used: u64,
    /// Seconds its turns took so far.
    #[serde(default)]
    pub time_used_seconds: u64,
    /// How to tell it is done, when the user or the model said (Kimi Code's goals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_criterion: Option<String>,
    /// Goal turns it may take, if a budget was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_budget: Option<u64>,
    /// Goal turns so far.
    #[serde(default)]
    pub turns_used: u64,
    /// Seconds of work it may take, if a budget was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_budget_seconds: Option<u64>,
    /// When it was set, in Unix seconds.
    pub created_at: i64,
    /// When it last changed, in Unix seconds.
    pub updated_at: i64,
}

/// A goal's status, named as the Codex app-server names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GoalStatus {
    /// Worked on: the session starts turns toward it while idle.
    Active,
    /// Set aside by the user.
    Paused,
    /// The model found it cannot go on without the user.
    Blocked,
    /// The provider's usage limit stopped it.
    UsageLimited,
    /// It used its token budget.
    BudgetLimited,
    /// The model marked it achieved.
    Complete,
}

/// The settings a session runs with now; sent at start and after every change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSettings {
    /// The provider id (`kimi`, `openai`, a `[model_providers.<id>]` key).
    pub provider: String,
    /// The model name sent to the provider.
    pub model: String,
    /// The harness in use.
    pub harness: String,
    /// What runs without asking.
    pub permissions: Permissions,
    /// The reasoning effort; `None` is the provider's default.
    pub effort: Option<ReasoningEffort>,
    /// The model's context window in tokens, where known.
    pub context_window: Option<u64>,
}

/// A skill the session offers, for slash-command lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillInfo {
    /// The name the user types after `/`.
    pub name: String,
    /// What it does, from its front matter.
    pub description: String,
    /// What the arguments are, when the file says (`argument-hint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// A custom command from a file (its prompt is sent as the user's message), not a skill.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub command: bool,
}

/// A background task as the front end sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackgroundTask {
    /// The task's id, as the model names it (`TaskOutput`, `TaskStop`).
    pub task_id: String,
    /// The tool call that started it.
    pub call_id: String,
    /// The command line.
    pub command: String,
    /// What it does, in the model's words (may be empty).
    pub description: String,
    /// The file its output goes to.
    pub output_path: PathBuf,
    /// Where it stands.
    pub status: BackgroundStatus,
    /// The exit code, once it exited.
    pub exit_code: Option<i32>,
}

/// Where a background task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundStatus {
    /// Still running.
    Running,
    /// Exited 0.
    Completed,
    /// Exited non-zero, timed out, or could not start.
    Failed,
    /// Stopped (`TaskStop`, the session ended, or the agent that ran it exited).
    Stopped,
}

/// Everything a front end can observe about a running session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The session is ready; sent once when it is created or resumed.
    SessionConfigured(SessionConfigured),
    /// A setting changed (model, harness, permissions, effort); carries all of them.
    SettingsChanged(SessionSettings),
    /// A background task started, changed state or ended (`Bash` with `run_in_background`).
    /// It may come between turns: a task outlives the call that started it.
    BackgroundTask(BackgroundTask),
    /// Output of a running background task, as it arrives (bounded per task; its output
    /// file has the rest).
    BackgroundTaskOutput {
        /// The task's id.
        task_id: String,
        /// The new text.
        chunk: String,
    },
    /// A scheduled prompt (`CronCreate`) is due: the turn that follows runs it.
    ScheduledPrompt {
        /// The job's id.
        job_id: String,
        /// Its schedule, a five-field cron expression.
        cron: String,
        /// The prompt the turn runs.
        prompt: String,
    },
    /// The session got its title (from the first user message).
    TitleChanged {
        /// The title.
        title: String,
    },
    /// A turn started; `turn_id` is the id of the submission that started it.
    TurnStarted {
        /// The submission's id.
        turn_id: String,
    },
    /// A piece of the assistant's visible answer, as it streams: one per delta the provider
    /// sent, never merged.
    AgentMessageDelta {
        /// Shared by every piece of one message; a response with two messages has two ids.
        message_id: String,
        /// The new text.
        delta: String,
    },
    /// One whole message of the assistant (after its deltas). A response may hold several, in
    /// the order the provider sent them.
    AgentMessage {
        /// As in the deltas.
        message_id: String,
        /// The whole text.
        text: String,
        /// What the provider said the message is, where its wire says so (Responses).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<MessagePhase>,
    },
    /// A piece of the model's reasoning, as it streams.
    ReasoningDelta {
        /// Shared by every piece of one model response.
        message_id: String,
        /// The new text.
        delta: String,
    },
    /// The whole reasoning text of one model response.
    Reasoning {
        /// As in the deltas.
        message_id: String,
        /// The whole text.
        text: String,
    },
    /// A tool call was received and is about to be checked and run.
    ToolCallBegin(ToolCallBegin),
    /// The call passed its approval check and is running now.
    ToolCallRunning {
        /// The call.
        call_id: String,
    },
    /// Streaming output of a running tool (command output chunks).
    ToolCallOutputDelta {
        /// The call.
        call_id: String,
        /// The new output.
        chunk: String,
    },
    /// A tool call ended.
    ToolCallEnd(ToolCallEnd),
    /// The session must ask whether a tool call may run; answer with [`Op::Approval`].
    ApprovalRequested(ApprovalRequest),
    /// A tool call asks the user questions; answer with [`Op::Answer`]. Sent only to front
    /// ends that said they can ask (`FaceAbilities`); the call's `ToolCallEnd` closes it
    /// (answered, timed out or cancelled).
    QuestionAsked(QuestionRequest),
    /// The session wants the editor's diagnostics for some files; answer with
    /// [`Op::Diagnostics`]. Sent only to front ends that offer them.
    DiagnosticsRequested(DiagnosticsRequest),
    /// A subagent started for a tool call: its own calls carry its session id in
    /// `ToolCallBegin::subagent` until the matching [`Event::SubagentEnded`].
    SubagentStarted(SubagentStarted),
    /// A subagent finished (its parent call's `ToolCallEnd` follows).
    SubagentEnded(SubagentEnded),
    /// The model set or changed its plan.
    PlanUpdated(Plan),
    /// Token use after a model response.
    TokenCount(TokenCount),
    /// A hook started (`PreToolUse`, `Stop`, …); Codex's `hook/started`.
    HookStarted {
        /// The turn it runs in; none for a hook that runs between turns.
        turn_id: Option<String>,
        /// The run, with status `running`.
        run: HookRun,
    },
    /// A hook ended; Codex's `hook/completed`. Its entries say what it reported.
    HookCompleted {
        /// The turn it ran in; none for a hook that ran between turns.
        turn_id: Option<String>,
        /// The run, with its final status.
        run: HookRun,
    },
    /// A non-fatal problem the user should see (a retry, a skipped file, a config warning).
    Warning {
        /// What happened, for a person.
        message: String,
    },
    /// An op could not be carried out (an unknown harness, say); the session goes on.
    Error {
        /// What was wrong, for a person.
        message: String,
    },
    /// The agent is waiting for the model: no answer yet, or nothing visible in the stream,
    /// for a few seconds (K3 can think for minutes before its first token). Sent after 5 s
    /// and then every 10 s while that lasts; front ends show it as progress, not as an
    /// answer. The next delta, a retry warning or the turn's end supersedes it.
    ModelWaiting {
        /// The provider id.
        provider: String,
        /// 1 for the first try of this request, 2 for the first retry, …
        attempt: u32,
        /// Since the request started, retries and their back-off included.
        elapsed_ms: u64,
    },
    /// Compaction started (automatic near the context limit, or `/compact`).
    ContextCompacting {
        /// Ties the start to its end.
        compaction_id: String,
    },
    /// The history was replaced by a summary plus the user's messages.
    ContextCompacted {
        /// As in `ContextCompacting`.
        compaction_id: String,
        /// The handoff summary the model wrote.
        summary: String,
        /// Approximate tokens before.
        tokens_before: u64,
        /// Approximate tokens after.
        tokens_after: u64,
    },
    /// Everything the agent's file tools changed in this session so far, as a `git
    /// apply`-able patch. Sent when a turn that changed files ends.
    Diff {
        /// The patch.
        unified_diff: String,
    },
    /// The stored conversation, answering [`Op::Replay`].
    Transcript(Vec<TranscriptItem>),
    /// The body the next model request would have, answering [`Op::PreviewRequest`].
    RequestPreview {
        /// The JSON body, exactly as it would be sent.
        body: serde_json::Value,
        /// Approximate tokens of the system prompt and initial context.
        prompt_tokens: u64,
        /// Approximate tokens of the tool schemas.
        tool_tokens: u64,
    },
    /// A turn ended; always the last event of a turn.
    TurnEnded(TurnEnded),
    /// Turns were taken back ([`Op::Undo`], [`Op::Rewind`]).
    Undone(UndoReport),
    /// The turns that can be taken back now, oldest first: sent whenever that changes (a
    /// turn ended, an undo, a compaction) and when a session is resumed.
    UndoableTurns {
        /// Oldest first; the last is what `/undo` takes back.
        turns: Vec<UndoableTurn>,
    },
    /// The goal was set or changed (by the user, the model, or its accounting).
    GoalUpdated {
        /// The goal now.
        goal: Goal,
        /// The turn that changed it, if one did.
        turn_id: Option<String>,
    },
    /// The goal was removed.
    GoalCleared,
    /// Every configured MCP server, each with its status: sent as the servers start (those
    /// starting, disabled, or left out of the config) and after [`Op::ReloadMcpServers`].
    /// Not sent when there is none.
    McpServers {
        /// In the order they were configured.
        servers: Vec<McpServerInfo>,
    },
    /// One MCP server's status changed (it is ready, failed, or needs a login).
    McpServerUpdated(McpServerInfo),
}

/// What an assistant message is for, as the Responses wire labels it: words on the way, or the
/// answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessagePhase {
    /// Said while working: the model goes on after it.
    Commentary,
    /// The answer to the user.
    FinalAnswer,
}

impl MessagePhase {
    /// The wire's name (`commentary`, `final_answer`).
    pub fn as_str(self) -> &'static str {
        match self {
            MessagePhase::Commentary => "commentary",
            MessagePhase::FinalAnswer => "final_answer",
        }
    }

    /// The phase a wire name stands for.
    pub fn parse(name: &str) -> Option<MessagePhase> {
        match name {
            "commentary" => Some(MessagePhase::Commentary),
            "final_answer" => Some(MessagePhase::FinalAnswer),
            _ => None,
        }
    }
}

/// One entry of a stored conversation, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TranscriptItem {
    /// A message the user typed (synthetic context is left out).
    UserMessage {
        /// The text.
        text: String,
        /// Attached images, as data URLs.
        images: Vec<String>,
        /// The turn it started, while that turn can be taken back (`Op::Rewind` takes it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn_id: Option<String>,
    },
    /// The model's reasoning for one response.
    Reasoning {
        /// The text.
        text: String,
    },
    /// One visible message of the model, in the order of its response.
    AgentMessage {
        /// The text.
        text: String,
        /// Its phase, where the provider gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<MessagePhase>,
    },
    /// A tool call in its final state, with its stored changes.
    ToolCall {
        /// How it began.
        begin: Box<ToolCallBegin>,
        /// How it ended.
        end: Box<ToolCallEnd>,
    },
    /// A plan the model set.
    Plan(Plan),
}

/// What a session is, once it is ready.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionConfigured {
    /// The session's id in the store.
    pub session_id: String,
    /// The folder the session works in (canonical).
    pub cwd: PathBuf,
    /// The workspace roots, cwd first.
    pub roots: Vec<PathBuf>,
    /// The settings it starts with.
    pub settings: SessionSettings,
    /// The skills it offers.
    pub skills: Vec<SkillInfo>,
    /// Its title, when resumed.
    pub title: Option<String>,
}

/// What kind of thing a tool does, so front ends can pick an icon and a review flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads files.
    Read,
    /// Changes files.
    Edit,
    /// Deletes files.
    Delete,
    /// Moves files.
    Move,
    /// Searches files.
    Search,
    /// Runs a command.
    Execute,
    /// Plans or delegates: no effect outside the session.
    Think,
    /// Reads from the web (fetch, search).
    Fetch,
    /// Anything else (MCP tools).
    Other,
}

/// A tool call, as received from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallBegin {
    /// The model's id for the call.
    pub call_id: String,
    /// The tool's name as the model called it.
    pub tool: String,
    /// What the tool does.
    pub kind: ToolKind,
    /// A short human title, e.g. "Read src/main.rs" or the command line.
    pub title: String,
    /// The arguments as the model sent them (parsed).
    pub input: serde_json::Value,
    /// Absolute paths the call touches.
    pub locations: Vec<PathBuf>,
    /// The command line, for execute tools.
    pub command: Option<String>,
    /// The subagent session that made this call (see [`Event::SubagentStarted`]); `None` for
    /// the session's own calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<String>,
}

/// A subagent started for a tool call of its parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentStarted {
    /// The parent's tool call that started it.
    pub call_id: String,
    /// The subagent's own session id (its tool calls carry it).
    pub session_id: String,
    /// What kind of subagent (`Explore`, `general-purpose`), as the call named it.
    pub name: String,
    /// The call's short description of the task.
    pub task: String,
    /// The whole prompt it was given.
    pub prompt: String,
}

/// How a subagent ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubagentState {
    /// It answered.
    Completed,
    /// It failed or ended without an answer.
    Failed,
    /// The turn was cancelled.
    Cancelled,
}

/// A subagent finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentEnded {
    /// As in [`SubagentStarted`].
    pub call_id: String,
    /// As in [`SubagentStarted`].
    pub session_id: String,
    /// How it ended.
    pub state: SubagentState,
    /// Its final message, or why it has none.
    pub summary: String,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// It ran and succeeded.
    Completed,
    /// It ran and failed, or its arguments were wrong.
    Failed,
    /// Refused by the user or the approval policy.
    Declined,
}

/// The end of a tool call, with what it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallEnd {
    /// The call.
    pub call_id: String,
    /// How it ended.
    pub status: ToolStatus,
    /// What the user sees (full output, not the model's truncated copy).
    pub output: String,
    /// A command's exit code.
    pub exit_code: Option<i32>,
    /// File changes the call made, with full before/after text for review.
    pub changes: Vec<FileChange>,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    /// Created.
    Add,
    /// Removed.
    Delete,
    /// Changed in place (or moved, with `move_path`).
    Update,
}

/// One file a tool call changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileChange {
    /// The file (absolute).
    pub path: PathBuf,
    /// What happened to it.
    pub kind: FileChangeKind,
    /// Set when the file moved; `path` is the old location.
    pub move_path: Option<PathBuf>,
    /// None for an added file.
    pub old_text: Option<String>,
    /// None for a deleted file.
    pub new_text: Option<String>,
}

/// The model's plan for the task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Why the plan is what it is, when the model says.
    pub explanation: Option<String>,
    /// The steps, in order.
    pub items: Vec<PlanItem>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanItem {
    /// What the step is.
    pub step: String,
    /// How far it is.
    pub status: PlanStatus,
}

/// How far a plan step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// Tokens of one request, or summed over many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// All prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Prompt tokens the provider served from its cache.
    pub cached_input_tokens: u64,
    /// Generated tokens, reasoning included.
    pub output_tokens: u64,
    /// Generated tokens spent on reasoning.
    pub reasoning_output_tokens: u64,
}

impl TokenUsage {
    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_output_tokens += other.reasoning_output_tokens;
    }
    /// Input and output tokens together.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// Token use and cost after a model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenCount {
    /// The last model request's usage.
    pub last: TokenUsage,
    /// Cumulative over the session.
    pub total: TokenUsage,
    /// Tokens the conversation occupies now (the last request's prompt plus its output).
    pub context_used: u64,
    /// The model's context window, where known.
    pub context_window: Option<u64>,
    /// Cumulative cost in USD where the provider's price is known.
    pub cost_usd: Option<f64>,
}

/// What [`Op::Rewind`] takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Restore {
    /// The files only; the conversation keeps the turns.
    Code,
    /// The conversation only; the files stay as they are (the app-server's `thread/rollback`).
    Conversation,
    /// Both.
    Both,
}

impl Restore {
    fn both() -> Restore {
        Restore::Both
    }
}

/// What an undo or rewind did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoReport {
    /// The turns taken back, oldest first.
    pub turn_ids: Vec<String>,
    /// Whether the conversation went back (the turns left the history).
    pub conversation: bool,
    /// Files put back as they were (paths relative to the session's folder).
    pub restored: Vec<String>,
    /// Files removed: the turns created them.
    pub removed: Vec<String>,
    /// Files left alone, with why (changed after the turn, too large, …).
    pub skipped: Vec<SkippedFile>,
}

/// A turn that can be taken back ([`Event::UndoableTurns`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoableTurn {
    /// As `TurnStarted` named it: what [`Op::Rewind`] takes.
    pub turn_id: String,
    /// What the user typed to start it (empty for a goal turn).
    pub prompt: String,
    /// Whether its files can be put back (a checkpoint was taken around it).
    pub files: bool,
}

/// A file an undo left alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    /// Relative to the session's folder.
    pub path: String,
    /// Why, in words for the user.
    pub reason: String,
}

/// The end of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEnded {
    /// As in `TurnStarted`.
    pub turn_id: String,
    /// Why it ended.
    pub reason: TurnEndReason,
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model gave its final answer.
    Completed,
    /// The user cancelled it.
    Cancelled,
    /// The model hit `max_turn_requests` model requests in this turn.
    MaxTurnRequests,
    /// The model's output was cut at its token limit.
    MaxTokens,
    /// The provider refused (content filter).
    Refusal,
    /// The provider failed, or the session could not keep its log.
    Failed {
        /// The provider's or the session's error text.
        message: String,
    },
}

/// User input to a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputItem {
    /// Text the user wrote.
    Text {
        /// The text.
        text: String,
    },
    /// An image as a data URL or a local path.
    Image {
        /// `data:` URL or path.
        url: String,
    },
    /// An image file on the user's machine; the session reads it and sends it as a data
    /// URL (png, jpeg, gif, webp; at most 20 MiB).
    LocalImage {
        /// The file (absolute, or relative to the session's cwd).
        path: PathBuf,
    },
    /// Runs one of the session's skills (`/<name> args`).
    Skill {
        /// The skill's name.
        name: String,
        /// What the user wrote after the name.
        args: String,
    },
}

/// A request from the core to whoever drives it: may this tool call run?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The call.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// What it does.
    pub kind: ToolKind,
    /// The call's title.
    pub title: String,
    /// Why the policy asks.
    pub reason: String,
    /// The command line, for commands.
    pub command: Option<String>,
    /// The file changes, for edits.
    pub changes: Vec<FileChange>,
    /// The key "always allow" remembers: a command prefix or a path. Empty when nothing
    /// would be remembered.
    pub remember_key: String,
    /// The rules found the command dangerous (`reason` says why): the policy asks about it
    /// every time, so "always allow" is not offered.
    #[serde(default)]
    pub dangerous: bool,
}

impl ApprovalRequest {
    /// Whether an "always allow" answer would be remembered, so a front end may offer it.
    pub fn offers_always(&self) -> bool {
        !self.dangerous && !self.remember_key.trim().is_empty()
    }

    /// Whether "always, and save" may be offered: the "always allow" key is a command prefix
    /// (`exec:…`), which a saved rule can express (docs/rules.md).
    pub fn offers_save(&self) -> bool {
        self.offers_always() && self.remember_key.starts_with("exec:")
    }
}

/// An answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run it this once.
    AllowOnce,
    /// Run it, and calls with the same `remember_key` for the rest of the session.
    AllowAlways,
    /// As `AllowAlways`, and saved as a rule in the user's rules file, so later sessions run
    /// it unasked too. Where it is not offered ([`ApprovalRequest::offers_save`]) it counts
    /// as `AllowAlways`.
    AllowAlwaysSave,
    /// Do not run it.
    Reject,
    /// The turn was cancelled while asking.
    Cancelled,
}

/// One run of one hook handler, in the shape of Codex's `HookRunSummary`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRun {
    /// Unique per run: the handler's key and, for a tool call, the call id.
    pub id: String,
    /// The event, as hooks files name it (`PreToolUse`).
    pub event_name: String,
    /// Whose file defined it.
    pub source: HookSource,
    /// The file that defined it.
    pub source_path: PathBuf,
    /// The command line it runs.
    pub command: String,
    /// Where it is.
    pub status: HookRunStatus,
    /// The handler's `statusMessage`, shown while it runs.
    pub status_message: Option<String>,
    /// Unix time in milliseconds when it started.
    pub started_at: i64,
    /// Unix time in milliseconds when it ended.
    pub completed_at: Option<i64>,
    /// How long it ran.
    pub duration_ms: Option<i64>,
    /// What it reported.
    pub entries: Vec<HookOutputEntry>,
}

/// Whose file a hook came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookSource {
    /// The user's own config (runs as written).
    User,
    /// A trusted project's (runs once its definition was approved).
    Project,
}

/// Where a hook run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookRunStatus {
    /// Still running.
    Running,
    /// Ended and let things go on.
    Completed,
    /// Could not run, timed out, exited non-zero (not 2) or printed bad JSON.
    Failed,
    /// Blocked what it ran for (exit 2, or a `deny`/`block` decision).
    Blocked,
    /// Asked the turn to stop (`continue: false`).
    Stopped,
}

/// The kind of one thing a hook reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutputKind {
    /// A `systemMessage` for the user.
    Warning,
    /// Why it stopped the turn.
    Stop,
    /// Why it blocked, sent to the model.
    Feedback,
    /// Context added for the model.
    Context,
    /// What went wrong running it.
    Error,
}

/// One thing a hook reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookOutputEntry {
    /// What it is.
    pub kind: HookOutputKind,
    /// Its text.
    pub text: String,
}
