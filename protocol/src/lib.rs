//! Types that cross the boundary between the agent core and its front ends.
//!
//! The core emits [`Event`]s; front ends (ACP, LSP, exec) translate them into their own
//! wire formats. Nothing here does I/O, and nothing here knows a front end's protocol.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Everything a front end can observe about a running session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The session is ready; sent once when it is created or resumed.
    SessionConfigured(SessionConfigured),
    TurnStarted {
        turn_id: String,
    },
    /// A piece of the assistant's visible answer, as it streams.
    AgentMessageDelta {
        message_id: String,
        delta: String,
    },
    /// The assistant's whole message for one model response (after its deltas).
    AgentMessage {
        message_id: String,
        text: String,
    },
    ReasoningDelta {
        message_id: String,
        delta: String,
    },
    /// The whole reasoning text of one model response.
    Reasoning {
        message_id: String,
        text: String,
    },
    ToolCallBegin(ToolCallBegin),
    /// The call passed its approval check and is running now.
    ToolCallRunning {
        call_id: String,
    },
    /// Streaming output of a running tool (command output chunks).
    ToolCallOutputDelta {
        call_id: String,
        chunk: String,
    },
    ToolCallEnd(ToolCallEnd),
    PlanUpdated(Plan),
    TokenCount(TokenCount),
    /// A non-fatal problem the user should see (a retry, a skipped file, a config warning).
    Warning {
        message: String,
    },
    /// The agent is waiting for the model: no answer yet, or nothing visible in the stream,
    /// for a few seconds (K3 can think for minutes before its first token). Sent after 5 s
    /// and then every 10 s while that lasts; front ends show it as progress, not as an
    /// answer. The next delta, a retry warning or the turn's end supersedes it.
    ModelWaiting {
        provider: String,
        /// 1 for the first try of this request, 2 for the first retry, …
        attempt: u32,
        /// Since the request started, retries and their back-off included.
        elapsed_ms: u64,
    },
    /// The harness changed; takes effect on the next model request.
    HarnessChanged {
        harness: String,
    },
    ModelChanged {
        provider: String,
        model: String,
    },
    /// Compaction started (automatic near the context limit, or `/compact`).
    ContextCompacting {
        compaction_id: String,
    },
    /// The history was replaced by a summary plus the user's messages.
    ContextCompacted {
        compaction_id: String,
        summary: String,
        tokens_before: u64,
        tokens_after: u64,
    },
    TurnEnded(TurnEnded),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionConfigured {
    pub session_id: String,
    pub provider: String,
    pub model: String,
    pub harness: String,
    pub cwd: PathBuf,
}

/// What kind of thing a tool does, so front ends can pick an icon and a review flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    Think,
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallBegin {
    pub call_id: String,
    /// The tool's name as the model called it.
    pub tool: String,
    pub kind: ToolKind,
    /// A short human title, e.g. "Read src/main.rs" or the command line.
    pub title: String,
    /// The arguments as the model sent them (parsed).
    pub input: serde_json::Value,
    /// Absolute paths the call touches.
    pub locations: Vec<PathBuf>,
    /// The command line, for execute tools.
    pub command: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Completed,
    Failed,
    /// Refused by the user or the approval policy.
    Declined,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallEnd {
    pub call_id: String,
    pub status: ToolStatus,
    /// What the user sees (full output, not the model's truncated copy).
    pub output: String,
    pub exit_code: Option<i32>,
    /// File changes the call made, with full before/after text for review.
    pub changes: Vec<FileChange>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    Add,
    Delete,
    Update,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: PathBuf,
    pub kind: FileChangeKind,
    /// Set when the file moved; `path` is the old location.
    pub move_path: Option<PathBuf>,
    /// None for an added file.
    pub old_text: Option<String>,
    /// None for a deleted file.
    pub new_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub explanation: Option<String>,
    pub items: Vec<PlanItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanItem {
    pub step: String,
    pub status: PlanStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// All prompt tokens, cached ones included.
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_output_tokens: u64,
}

impl TokenUsage {
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_output_tokens += other.reasoning_output_tokens;
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenCount {
    /// The last model request's usage.
    pub last: TokenUsage,
    /// Cumulative over the session.
    pub total: TokenUsage,
    /// Tokens the conversation occupies now (the last request's prompt plus its output).
    pub context_used: u64,
    pub context_window: Option<u64>,
    /// Cumulative cost in USD where the provider's price is known.
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEnded {
    pub turn_id: String,
    pub reason: TurnEndReason,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model gave its final answer.
    Completed,
    Cancelled,
    /// The model hit `max_turn_requests` model requests in this turn.
    MaxTurnRequests,
    /// The model's output was cut at its token limit.
    MaxTokens,
    Refusal,
    Failed {
        message: String,
    },
}

/// User input to a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputItem {
    Text {
        text: String,
    },
    /// An image as a data URL or a local path.
    Image {
        url: String,
    },
}

/// A request from the core to whoever drives it: may this tool call run?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub tool: String,
    pub kind: ToolKind,
    pub title: String,
    pub reason: String,
    pub command: Option<String>,
    pub changes: Vec<FileChange>,
    /// The key "always allow" remembers: a command prefix or a path.
    pub remember_key: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    AllowOnce,
    AllowAlways,
    Reject,
    /// The turn was cancelled while asking.
    Cancelled,
}
