//! The provider-neutral conversation: what the agent keeps in history and hands to a client.
//! Each wire module converts these to and from its own JSON.

pub use interpreter_protocol::MessagePhase;
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
    /// One model reply: its messages and calls in the order the provider sent them.
    Assistant(AssistantReply),
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

/// A model reply as history keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredReply")]
pub struct AssistantReply {
    /// Messages and calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) parts: Vec<Part<ToolCall>>,
    /// Plain reasoning text, for wires that send it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reasoning: Option<String>,
    /// The reasoning as the provider signed it (Anthropic Messages), sent back verbatim
    /// on that wire; the other wires use `reasoning`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) signed_reasoning: Vec<SignedReasoning>,
}

/// One piece of a reply: a message or a tool call. `C` is a checked [`ToolCall`] in history
/// and a [`RawToolCall`] in a response fresh off the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part<C> {
    /// Visible text.
    Message(OutputMessage),
    /// A tool call.
    Call(C),
}

/// One assistant message of a reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputMessage {
    /// The provider's id for it (Responses `msg_…`), sent back with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<String>,
    /// Commentary or final answer, where the wire says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) phase: Option<MessagePhase>,
    /// The text; may be empty.
    #[serde(default)]
    pub(crate) text: String,
}

impl OutputMessage {
    /// A message with no id and no phase.
    pub fn plain(text: impl Into<String>) -> Self {
        OutputMessage {
            text: text.into(),
            ..Default::default()
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The phase, where the wire gave one.
    pub fn phase(&self) -> Option<MessagePhase> {
        self.phase
    }
}

/// The reply as logs store it: `parts` today, `text` and `tool_calls` in logs written before
/// replies kept their order (text first, then the calls).
#[derive(Deserialize)]
struct StoredReply {
    #[serde(default)]
    parts: Vec<Part<ToolCall>>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    signed_reasoning: Vec<SignedReasoning>,
}

impl From<StoredReply> for AssistantReply {
    fn from(s: StoredReply) -> Self {
        let mut parts = s.parts;
        if parts.is_empty() {
            if !s.text.is_empty() {
                parts.push(Part::Message(OutputMessage::plain(s.text)));
            }
            parts.extend(s.tool_calls.into_iter().map(Part::Call));
        }
        AssistantReply {
            parts,
            reasoning: s.reasoning,
            signed_reasoning: s.signed_reasoning,
        }
    }
}

impl<C> Part<C> {
    fn message(&self) -> Option<&OutputMessage> {
        match self {
            Part::Message(m) => Some(m),
            Part::Call(_) => None,
        }
    }

    fn call(&self) -> Option<&C> {
        match self {
            Part::Call(c) => Some(c),
            Part::Message(_) => None,
        }
    }
}

/// What replies and responses share: their parts, read in order.
pub trait Parts {
    /// The kind of call: checked in history, raw in a response.
    type Call: 'static;

    /// Messages and calls in order.
    fn parts(&self) -> &[Part<Self::Call>];

    /// The messages, in order.
    fn messages(&self) -> impl Iterator<Item = &OutputMessage> {
        self.parts().iter().filter_map(Part::message)
    }

    /// The calls, in order.
    fn calls(&self) -> impl Iterator<Item = &Self::Call> {
        self.parts().iter().filter_map(Part::call)
    }

    /// All visible text, the messages joined by a blank line (for wires and readers that take
    /// one text).
    fn text(&self) -> String {
        let mut out = String::new();
        for m in self.messages().filter(|m| !m.text.is_empty()) {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&m.text);
        }
        out
    }

    /// The reply has calls.
    fn has_calls(&self) -> bool {
        self.calls().next().is_some()
    }
}

impl Parts for AssistantReply {
    type Call = ToolCall;

    fn parts(&self) -> &[Part<ToolCall>] {
        &self.parts
    }
}

impl Parts for ModelResponse {
    type Call = RawToolCall;

    fn parts(&self) -> &[Part<RawToolCall>] {
        &self.parts
    }
}

impl AssistantReply {
    /// A reply of one plain message and then `calls` (text-action harnesses, tests).
    pub fn new(text: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        let text = text.into();
        let mut parts = Vec::with_capacity(calls.len() + 1);
        if !text.is_empty() {
            parts.push(Part::Message(OutputMessage::plain(text)));
        }
        parts.extend(calls.into_iter().map(Part::Call));
        AssistantReply {
            parts,
            ..Default::default()
        }
    }

    /// Reasoning text, for wires that send it back.
    pub fn reasoning(&self) -> Option<&str> {
        self.reasoning.as_deref()
    }
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
    /// A search the provider runs itself, declared beside the tools.
    pub(crate) hosted_search: Option<HostedSearch>,
    /// The sampling temperature, when the harness sets one (Chat only).
    pub(crate) temperature: Option<f64>,
}

/// A web search the provider runs itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostedSearch {
    /// Moonshot's builtin `$web_search` (Chat Completions): its calls are answered with their
    /// own arguments, and Moonshot searches on the next request.
    Moonshot,
    /// OpenAI's hosted `web_search` (Responses); `live` reaches the live web.
    OpenAi {
        /// External web access.
        live: bool,
    },
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
    /// Messages and calls, in the order the wire delivered them.
    pub(crate) parts: Vec<Part<RawToolCall>>,
    pub(crate) reasoning: Option<String>,
    /// Signed reasoning blocks (Messages wire only), to keep in history.
    pub signed_reasoning: Vec<SignedReasoning>,
    pub(crate) finish_reason: FinishReason,
    pub(crate) usage: Option<TokenUsage>,
}

/// Streamed pieces, handed to the caller as they arrive, one per wire delta.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    /// Answer text of the response's `message`-th message (0-based, in order).
    Text {
        /// Which message of the response it belongs to.
        message: usize,
        /// The delta as the provider sent it.
        text: String,
    },
    /// Reasoning text.
    Reasoning(String),
    /// The response's `message`-th message is whole (its wire said so before the response
    /// ended: Responses `output_item.done`, Messages `content_block_stop`).
    MessageDone {
        /// Which message of the response.
        message: usize,
        /// Its whole text.
        text: String,
        /// Its phase, where the wire gave one.
        phase: Option<MessagePhase>,
    },
    /// The provider ran a hosted search (Responses `web_search_call`).
    HostedSearch {
        /// The provider's item id.
        id: String,
        /// What it did: `{"type": "search", "query"}`, `open_page`, `find_in_page`.
        action: serde_json::Value,
    },
}

#[cfg(test)]
impl ModelResponse {
    /// The calls, for tests that index them.
    pub(crate) fn tool_calls(&self) -> Vec<&RawToolCall> {
        self.calls().collect()
    }

    /// The response as history keeps it, its calls taken as they came.
    pub(crate) fn into_history(self) -> HistoryItem {
        let parts = self
            .parts
            .into_iter()
            .map(|p| match p {
                Part::Message(m) => Part::Message(m),
                Part::Call(c) => Part::Call(ToolCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                }),
            })
            .collect();
        HistoryItem::Assistant(AssistantReply {
            parts,
            reasoning: self.reasoning,
            signed_reasoning: self.signed_reasoning,
        })
    }
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
