//! The provider-neutral conversation: what the agent keeps in history and hands to a client.
//! Each wire module converts these to and from its own JSON.

use interpreter_protocol::TokenUsage;
use serde::{Deserialize, Serialize};

/// One entry of a session's history. This is also what the session log stores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HistoryItem {
    User {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
        /// Synthetic context (AGENTS.md, environment, reminders) rather than the user's words.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        synthetic: bool,
    },
    Assistant {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The reasoning as the provider signed it (Anthropic Messages), sent back verbatim
        /// on that wire; the other wires use `reasoning`. Absent in older session logs.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        signed_reasoning: Vec<SignedReasoning>,
    },
    ToolResult {
        call_id: String,
        output: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// One reasoning block with the provider's signature. Messages providers require the blocks
/// of a tool-use turn back unchanged, so they are kept apart from the plain text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignedReasoning {
    /// The reasoning text; empty for a redacted block.
    #[serde(default)]
    pub text: String,
    /// The signature, or a redacted block's opaque data.
    pub signature: String,
    /// A `redacted_thinking` block: `signature` holds its data.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Always valid JSON text: broken arguments are replaced by `{}` before they reach history.
    pub arguments: String,
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Everything a request needs besides the provider's own settings.
#[derive(Debug, Clone)]
pub struct ModelRequest<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub history: &'a [HistoryItem],
    pub tools: &'a [ToolSpec],
    /// Stable per session so the provider's prefix cache hits.
    pub prompt_cache_key: &'a str,
    pub max_output_tokens: u64,
    pub reasoning_effort: Option<&'a str>,
    pub output_schema: Option<&'a serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
}

/// A tool call as it came off the wire, before its arguments are checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RawToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A complete model response.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    pub text: String,
    pub reasoning: Option<String>,
    /// Signed reasoning blocks (Messages wire only), to keep in history.
    pub signed_reasoning: Vec<SignedReasoning>,
    pub tool_calls: Vec<RawToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Option<TokenUsage>,
}

/// Streamed pieces, handed to the caller as they arrive.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    Text(String),
    Reasoning(String),
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// An HTTP error status. `message` is the provider's text, verbatim where it gave one.
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        provider: String,
        status: u16,
        message: String,
        retry_after_ms: Option<u64>,
    },
    #[error("{provider}: quota exhausted: {message}")]
    QuotaExhausted { provider: String, message: String },
    #[error("could not reach {provider} at {url}: {message}")]
    Connect {
        provider: String,
        url: String,
        message: String,
    },
    /// The stream ended or broke before the response completed.
    #[error("stream disconnected before completion: {0}")]
    StreamDisconnected(String),
    /// The provider reported an error inside an otherwise successful stream.
    #[error("stream disconnected before completion: {provider} reported: {message}")]
    StreamError { provider: String, message: String },
    #[error("{0}")]
    Timeout(String),
    #[error("cancelled")]
    Cancelled,
}

impl ModelError {
    /// Worth another attempt at the same request.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Http { status, .. } => {
                matches!(*status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
            }
            ModelError::Connect { .. } | ModelError::Timeout(_) => true,
            ModelError::StreamDisconnected(_) | ModelError::StreamError { .. } => true,
            ModelError::QuotaExhausted { .. } | ModelError::Cancelled => false,
        }
    }

    /// Stream failures draw on their own retry budget.
    pub fn is_stream_failure(&self) -> bool {
        matches!(
            self,
            ModelError::StreamDisconnected(_) | ModelError::StreamError { .. }
        )
    }
}
