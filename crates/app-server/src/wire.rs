//! The app-server protocol's shapes (Codex `app-server-protocol` v2), as far as we speak it.
//! Field names and required fields follow the schemas; optional fields we have nothing for
//! are left out. Nothing outside `crates/app-server` sees these types.

use interpreter_protocol::Goal;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

/// The Codex protocol version this face implements (the Python SDK's release it was checked
/// against); reported in `userAgent`.
pub(crate) const CODEX_PROTOCOL_VERSION: &str = "0.163.0";

/// A conversation: one of our sessions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Thread {
    pub id: String,
    pub session_id: String,
    pub preview: String,
    pub ephemeral: bool,
    pub model_provider: String,
    pub model: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub status: ThreadStatus,
    /// The session log, for persisted threads.
    pub path: Option<String>,
    pub cwd: String,
    pub cli_version: String,
    pub source: &'static str,
    pub name: Option<String>,
    pub turns: Vec<Turn>,
}

/// Whether a thread is loaded here and what it is doing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(crate) enum ThreadStatus {
    NotLoaded,
    Idle,
    #[serde(rename_all = "camelCase")]
    Active {
        active_flags: Vec<&'static str>,
    },
}

/// One turn: a user message and what the agent did about it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Turn {
    pub id: String,
    pub items: Vec<Value>,
    pub status: TurnStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TurnError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum TurnStatus {
    InProgress,
    Completed,
    Interrupted,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TurnError {
    pub message: String,
}

/// Item statuses (`CommandExecutionStatus`, `PatchApplyStatus`, tool call statuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ItemStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

/// `ThreadItem`: what a turn is made of.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(crate) enum Item {
    UserMessage {
        id: String,
        content: Vec<Value>,
    },
    AgentMessage {
        id: String,
        text: String,
        phase: Option<&'static str>,
    },
    Reasoning {
        id: String,
        summary: Vec<String>,
        content: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    CommandExecution {
        id: String,
        command: String,
        cwd: String,
        /// A background terminal's process (our background task's id).
        #[serde(skip_serializing_if = "Option::is_none")]
        process_id: Option<String>,
        status: ItemStatus,
        command_actions: Vec<Value>,
        aggregated_output: Option<String>,
        exit_code: Option<i32>,
        duration_ms: Option<i64>,
    },
    FileChange {
        id: String,
        changes: Vec<FileUpdateChange>,
        status: ItemStatus,
    },
    #[serde(rename_all = "camelCase")]
    McpToolCall {
        id: String,
        server: String,
        tool: String,
        status: ItemStatus,
        arguments: Value,
        result: Option<Value>,
        error: Option<TurnError>,
        duration_ms: Option<i64>,
    },
    /// Our other tools (reads, searches, plans, subagents): Codex's generic tool call item.
    #[serde(rename_all = "camelCase")]
    DynamicToolCall {
        id: String,
        tool: String,
        arguments: Value,
        status: ItemStatus,
        success: Option<bool>,
        content_items: Option<Vec<Value>>,
        duration_ms: Option<i64>,
    },
    /// A web search: the provider's hosted one, or a harness's own search tool.
    WebSearch {
        id: String,
        query: String,
        action: Option<Value>,
    },
    ContextCompaction {
        id: String,
    },
    /// A review turn began (`review/start`): what it reviews.
    EnteredReviewMode {
        id: String,
        review: String,
    },
    /// A review turn ended: its findings as text.
    ExitedReviewMode {
        id: String,
        review: String,
    },
    /// A subagent the turn started: the seed's collab item for a spawned agent, whose
    /// receiver is the subagent's own session.
    #[serde(rename_all = "camelCase")]
    CollabAgentToolCall {
        id: String,
        tool: &'static str,
        status: ItemStatus,
        sender_thread_id: String,
        receiver_thread_ids: Vec<String>,
        prompt: Option<String>,
        model: Option<String>,
        reasoning_effort: Option<String>,
        agents_states: std::collections::BTreeMap<String, Value>,
    },
}

impl Item {
    pub(crate) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// One file of a `fileChange` item.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileUpdateChange {
    pub path: String,
    pub kind: Value,
    pub diff: String,
}

/// Token counts as `TokenUsageBreakdown`.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TokenBreakdown {
    pub total_tokens: u64,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_output_tokens: u64,
}

impl From<interpreter_protocol::TokenUsage> for TokenBreakdown {
    fn from(u: interpreter_protocol::TokenUsage) -> Self {
        TokenBreakdown {
            total_tokens: u.input_tokens + u.output_tokens,
            input_tokens: u.input_tokens,
            cached_input_tokens: u.cached_input_tokens,
            output_tokens: u.output_tokens,
            reasoning_output_tokens: u.reasoning_output_tokens,
        }
    }
}

/// `SandboxPolicy` for a sandbox mode.
pub(crate) fn sandbox_policy(mode: interpreter_protocol::SandboxMode, network: bool) -> Value {
    use interpreter_protocol::SandboxMode;
    match mode {
        SandboxMode::ReadOnly => serde_json::json!({"type": "readOnly"}),
        SandboxMode::WorkspaceWrite => {
            serde_json::json!({"type": "workspaceWrite", "writableRoots": [], "networkAccess": network})
        }
        SandboxMode::DangerFullAccess => serde_json::json!({"type": "dangerFullAccess"}),
    }
}

/// Milliseconds since the epoch, the clock of the protocol's `startedAtMs` and `completedAtMs`.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The seed's `ThreadGoal`.
pub(crate) fn goal_json(thread_id: &str, goal: &Goal) -> Value {
    json!({
        "threadId": thread_id,
        "objective": goal.objective,
        "status": goal.status,
        "tokenBudget": goal.token_budget,
        "tokensUsed": goal.tokens_used,
        "timeUsedSeconds": goal.time_used_seconds,
        "createdAt": goal.created_at,
        "updatedAt": goal.updated_at,
    })
}

/// `initialize` params: only what changes how we talk.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    #[serde(default)]
    pub capabilities: Option<InitializeCapabilities>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeCapabilities {
    #[serde(default)]
    pub opt_out_notification_methods: Option<Vec<String>>,
}

/// What `thread/start`, `thread/resume` and `thread/fork` share. The rest of their params
/// (personality, service tier, reviewer) changes nothing here and is ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadParams {
    /// Resume and fork: the thread.
    pub thread_id: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub approval_policy: Option<Value>,
    pub sandbox: Option<String>,
    /// Config keys for this thread, as `-c key=value` would set them.
    pub config: Option<serde_json::Map<String, Value>>,
    pub base_instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub ephemeral: Option<bool>,
    /// Resume and fork: leave `thread.turns` empty.
    pub exclude_turns: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadIdParams {
    pub thread_id: String,
}

/// `thread/rollback` (the seed's `numTurns`, at least 1) and `interpreter/thread/undo`
/// (one turn when absent).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadRollbackParams {
    pub thread_id: String,
    pub num_turns: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadReadParams {
    pub thread_id: String,
    #[serde(default)]
    pub include_turns: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadSetNameParams {
    pub thread_id: String,
    pub name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadListParams {
    pub cursor: Option<String>,
    pub limit: Option<u32>,
    /// One path or several.
    pub cwd: Option<Value>,
    pub archived: Option<bool>,
    pub search_term: Option<String>,
    pub sort_key: Option<String>,
    pub sort_direction: Option<String>,
    pub model_providers: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnStartParams {
    pub thread_id: String,
    pub input: Vec<Value>,
    pub model: Option<String>,
    pub cwd: Option<String>,
    pub effort: Option<String>,
    pub output_schema: Option<Value>,
    pub approval_policy: Option<Value>,
    pub sandbox_policy: Option<Value>,
}

/// `review/start`: the thread, what to review (`ReviewTarget`, read in `turns.rs`) and where.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReviewStartParams {
    pub thread_id: String,
    pub target: Value,
    pub delivery: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnInterruptParams {
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnSteerParams {
    pub thread_id: String,
    pub expected_turn_id: String,
    pub input: Vec<Value>,
}

/// A hook run in the protocol's `HookRunSummary` shape (`eventName` in camelCase).
pub(crate) fn hook_run_json(run: &interpreter_protocol::HookRun) -> Value {
    let mut event = run.event_name.clone();
    if let Some(first) = event.get_mut(..1) {
        first.make_ascii_lowercase();
    }
    let scope = match run.event_name.as_str() {
        "SessionStart" | "SubagentStart" | "SessionEnd" => "thread",
        _ => "turn",
    };
    json!({
        "id": run.id,
        "eventName": event,
        "handlerType": "command",
        "executionMode": "sync",
        "scope": scope,
        "sourcePath": run.source_path,
        "source": run.source,
        "displayOrder": 0,
        "status": run.status,
        "statusMessage": run.status_message,
        "startedAt": run.started_at,
        "completedAt": run.completed_at,
        "durationMs": run.duration_ms,
        "entries": run.entries,
    })
}

/// `ListMcpServerStatusParams`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct McpStatusListParams {
    pub cursor: Option<String>,
    pub limit: Option<usize>,
    pub server_name: Option<String>,
    pub thread_id: Option<String>,
}

/// Codex's `McpAuthStatus`.
fn mcp_auth(a: interpreter_protocol::McpAuthStatus) -> &'static str {
    use interpreter_protocol::McpAuthStatus as A;
    match a {
        A::Unknown => "unknown",
        A::Unsupported => "unsupported",
        A::NotLoggedIn => "notLoggedIn",
        A::BearerToken => "bearerToken",
        A::OAuth => "oAuth",
    }
}

/// `McpServerStatus`: its tools by name and its auth; `runtimeStatus` (Codex's
/// `McpServerConnectionStatus`) when the server is a thread's. We read no resources.
pub(crate) fn mcp_server_status_json(
    s: &interpreter_protocol::McpServerInfo,
    thread: bool,
) -> Value {
    use interpreter_protocol::McpServerStatus as S;
    let tools: serde_json::Map<String, Value> = s
        .tools
        .iter()
        .map(|t| {
            let mut tool = json!({"name": t.name, "inputSchema": t.input_schema});
            if let Some(title) = &t.title {
                tool["title"] = json!(title);
            }
            if let Some(d) = &t.description {
                tool["description"] = json!(d);
            }
            (t.name.clone(), tool)
        })
        .collect();
    let runtime = thread.then_some(match s.status {
        S::Starting => "starting",
        S::Ready => "connected",
        S::Failed { .. } => "failed",
        S::Disabled => "disabled",
        S::NeedsLogin { .. } => "authenticationRequired",
    });
    json!({
        "name": s.name,
        "tools": tools,
        "resources": [],
        "resourceTemplates": [],
        "authStatus": mcp_auth(s.auth),
        "runtimeStatus": runtime,
    })
}

/// `McpServerStatusUpdatedNotification` for a server that is starting, ready or failed; None
/// for a disabled one (it never starts).
pub(crate) fn mcp_startup_json(
    thread_id: &str,
    s: &interpreter_protocol::McpServerInfo,
) -> Option<Value> {
    use interpreter_protocol::McpServerStatus as S;
    let (status, error) = match &s.status {
        S::Starting => ("starting", None),
        S::Ready => ("ready", None),
        S::Failed { error } | S::NeedsLogin { error } => ("failed", Some(error.as_str())),
        S::Disabled => return None,
    };
    let mut params =
        json!({"threadId": thread_id, "name": s.name, "status": status, "error": error});
    // The schema's one reason: a sign-in (`mcpServer/oauth/login`) is the cure.
    if matches!(s.status, S::NeedsLogin { .. }) {
        params["failureReason"] = json!("reauthenticationRequired");
    }
    Some(params)
}
