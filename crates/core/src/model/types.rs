//! The provider-neutral conversation: what the agent keeps in history and hands to a client.
//! Each wire module converts these to and from its own JSON.

use interpreter_protocol::TokenUsage;
use serde::{Deserialize, Serialize};

/// One entry of a session's history. This is also what the session log stores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HistoryItem {
    /// What the user (or the harness on their behalf) said.
    User {
        /// The message text.
        text: String,
        /// Attached images, as data URLs.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
        /// Synthetic context (AGENTS.md, environment, reminders) rather than the user's words.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        synthetic: bool,
    },
    /// One model reply.
    Assistant {
        /// The visible answer; may be empty when the reply only calls tools.
        #[serde(default)]
        text: String,
        /// Plain reasoning text, for wires that send it back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// The calls the reply made, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The reasoning as the provider signed it (Anthropic Messages), sent back verbatim
        /// on that wire; the other wires use `reasoning`. Absent in older session logs.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        signed_reasoning: Vec<SignedReasoning>,
    },
    /// A tool's answer to one call.
    ToolResult {
        /// The call it answers.
        call_id: String,
        /// What the model reads.
        output: String,
        /// The tool failed; wires that can flag it do.
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

/// A tool call as history keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub(crate) id: String,
    pub(crate) name: String,
    /// Always valid JSON text: broken arguments are replaced by `{}` before they reach history.
    pub arguments: String,
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub(crate) name: String,
    pub(crate) description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Everything a request needs besides the provider's own settings.
#[derive(Debug, Clone)]
pub struct ModelRequest<'a> {
    pub(crate) model: &'a str,
    pub(crate) system: &'a str,
    pub(crate) history: &'a [HistoryItem],
    pub(crate) tools: &'a [ToolSpec],
    /// Stable per session so the provider's prefix cache hits.
    pub prompt_cache_key: &'a str,
    pub(crate) max_output_tokens: u64,
    pub(crate) reasoning_effort: Option<&'a str>,
    pub(crate) output_schema: Option<&'a serde_json::Value>,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    Stop,
    /// It called tools and waits for their results.
    ToolCalls,
    /// It hit the output token limit.
    Length,
    /// The provider's filter cut it off.
    ContentFilter,
}

/// A tool call as it came off the wire, before its arguments are checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RawToolCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: String,
}

/// A complete model response.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    pub(crate) text: String,
    pub(crate) reasoning: Option<String>,
    /// Signed reasoning blocks (Messages wire only), to keep in history.
    pub signed_reasoning: Vec<SignedReasoning>,
    pub(crate) tool_calls: Vec<RawToolCall>,
    pub(crate) finish_reason: FinishReason,
    pub(crate) usage: Option<TokenUsage>,
}

/// Streamed pieces, handed to the caller as they arrive.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    /// Answer text.
    Text(String),
    /// Reasoning text.
    Reasoning(String),
}

/// Why a model request failed. Each variant's text names the provider.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// An HTTP error status. `message` is the provider's text, verbatim where it gave one.
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        /// The provider's name from the config.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's error text.
        message: String,
        /// A `Retry-After` the provider sent, in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// The account is out of quota or credit: retrying cannot help.
    #[error("{provider}: quota exhausted: {message}")]
    QuotaExhausted {
        /// The provider's name from the config.
        provider: String,
        /// The provider's error text.
        message: String,
    },
    /// No HTTP answer at all: DNS, TCP or TLS failed.
    #[error("could not reach {provider} at {url}: {message}")]
    Connect {
        /// The provider's name from the config.
        provider: String,
        /// The endpoint tried.
        url: String,
        /// What the connection reported.
        message: String,
    },
    /// The stream ended or broke before the response completed.
    #[error("stream disconnected before completion: {0}")]
    StreamDisconnected(String),
    /// The provider reported an error inside an otherwise successful stream.
    #[error("stream disconnected before completion: {provider} reported: {message}")]
    StreamError {
        /// The provider's name from the config.
        provider: String,
        /// The error the stream carried.
        message: String,
    },
    /// No answer within the configured wait.
    #[error("{0}")]
    Timeout(String),
    /// The turn was cancelled while waiting.
    #[error("cancelled")]
    Cancelled,
    /// The response grew past a bound of `model::limits`; it was stopped, and not retried.
    #[error("{provider} sent more than {limit} in one response; it was stopped")]
    TooLarge {
        /// The provider's name from the config.
        provider: String,
        /// The bound it crossed, with how it follows from `max_output_tokens`.
        limit: String,
    },
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
            ModelError::QuotaExhausted { .. }
            | ModelError::Cancelled
            | ModelError::TooLarge { .. } => false,
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
