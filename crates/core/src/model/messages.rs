//! Anthropic Messages API wire format (Anthropic, and the Anthropic-compatible endpoints of
//! Kimi, DeepSeek, Z.ai, MiniMax and DashScope): request bodies and the streaming
//! accumulator.
//!
//! The neutral history maps onto alternating `user`/`assistant` messages: consecutive items of
//! one role merge into one message, tool results open the user message that follows their
//! calls, empty text is never sent, and signed reasoning goes back verbatim (the API requires
//! the thinking blocks of a tool-use turn). Tool call ids from other wires (`functions.Read:1`)
//! are rewritten to the id pattern this API accepts, the same way on both sides of a pair.

use interpreter_protocol::{ReasoningEffort, TokenUsage};
use serde_json::{Map, Value, json};

use super::catalog::ModelInfo;
use super::chat::{error_message, truncate_for_log};
use super::types::{
    FinishReason, HistoryItem, ModelError, ModelRequest, ModelResponse, OutputMessage, Part,
    RawToolCall, SignedReasoning, StreamDelta,
};

/// The API version every request names.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The API accepts at most four `cache_control` breakpoints per request.
const MAX_BREAKPOINTS: usize = 4;

/// Builds the request body. Deterministic: the same history gives byte-identical JSON.
pub(crate) fn build_body(req: &ModelRequest<'_>, info: ModelInfo) -> Value {
    let mut messages = messages(req.history);
    // System and tools take one breakpoint each; the rest go on the conversation.
    let fixed = usize::from(!req.system.is_empty()) + usize::from(!req.tools.is_empty());
    place_breakpoints(&mut messages, MAX_BREAKPOINTS - fixed);
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("max_tokens".into(), json!(req.output_cap()));
    if !req.system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": req.system, "cache_control": ephemeral()}]),
        );
    }
    body.insert(
        "messages".into(),
        Value::Array(messages.into_iter().map(Message::into_json).collect()),
    );
    if !req.tools.is_empty() {
        let last = req.tools.len() - 1;
        let tools: Vec<Value> = req
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut tool = json!({"name": t.name, "description": t.description,
                                      "input_schema": t.parameters});
                if i == last {
                    tool["cache_control"] = ephemeral();
                }
                tool
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if req.shape.tool_choice_auto {
            body.insert("tool_choice".into(), json!({"type": "auto"}));
        }
    }
    if let Some(budget) = thinking_budget(req, info) {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The thinking budget for the configured effort: only when an effort is set (otherwise the
/// provider's default applies), the model takes a budget, and it fits under `max_tokens`
/// with the API's minimum of 1024.
fn thinking_budget(req: &ModelRequest<'_>, info: ModelInfo) -> Option<u64> {
    let effort: ReasoningEffort = req.reasoning_effort?.parse().ok()?;
    if !info.thinking_budget {
        return None;
    }
    let wanted = match effort {
        ReasoningEffort::Minimal => 1_024,
        ReasoningEffort::Low => 4_000,
        ReasoningEffort::Medium => 10_000,
        ReasoningEffort::High => 20_000,
        ReasoningEffort::XHigh => 28_000,
        ReasoningEffort::Max => 32_000,
    };
    let budget = wanted.min(req.output_cap().saturating_sub(1));
    (budget >= 1_024).then_some(budget)
}

/// One message under construction.
struct Message {
    role: &'static str,
    blocks: Vec<Value>,
}

impl Message {
    fn into_json(self) -> Value {
        json!({"role": self.role, "content": self.blocks})
    }
}

fn push(messages: &mut Vec<Message>, role: &'static str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    match messages.last_mut() {
        Some(last) if last.role == role => last.blocks.extend(blocks),
        _ => messages.push(Message { role, blocks }),
    }
}

fn messages(history: &[HistoryItem]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(history.len());
    for item in history {
        match item {
            HistoryItem::User { text, images, .. } => {
                let mut blocks: Vec<Value> = images.iter().map(|u| image_block(u)).collect();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                push(&mut out, "user", blocks);
            }
            HistoryItem::Assistant(reply) => {
                let mut blocks: Vec<Value> =
                    reply.signed_reasoning.iter().map(thinking_block).collect();
                // Text and calls in the order the model wrote them.
                for part in &reply.parts {
                    match part {
                        Part::Message(m) if m.text.is_empty() => {}
                        Part::Message(m) => blocks.push(json!({"type": "text", "text": m.text})),
                        Part::Call(c) => {
                            let input = match serde_json::from_str::<Value>(&c.arguments) {
                                Ok(v @ Value::Object(_)) => v,
                                _ => json!({}),
                            };
                            blocks.push(json!({"type": "tool_use", "id": tool_id(&c.id),
                                               "name": c.name, "input": input}));
                        }
                    }
                }
                // Reasoning alone (no text, no call) is no message the API takes.
                if blocks.iter().any(|b| b["type"] != "thinking") {
                    push(&mut out, "assistant", blocks);
                }
            }
            HistoryItem::ToolResult {
                call_id,
                output,
                is_error,
            } => {
                let mut block = json!({"type": "tool_result", "tool_use_id": tool_id(call_id)});
                if !output.is_empty() {
                    block["content"] = json!(output);
                }
                if *is_error {
                    block["is_error"] = json!(true);
                }
                push(&mut out, "user", vec![block]);
            }
        }
    }
    out
}

fn thinking_block(r: &SignedReasoning) -> Value {
    if r.redacted {
        json!({"type": "redacted_thinking", "data": r.signature})
    } else {
        json!({"type": "thinking", "thinking": r.text, "signature": r.signature})
    }
}

/// A data URL as a base64 image; an http(s) URL as a URL image; anything else as a note.
fn image_block(url: &str) -> Value {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((meta, data)) = rest.split_once(',')
        && let Some(media_type) = meta.strip_suffix(";base64")
    {
        return json!({"type": "image", "source": {"type": "base64", "media_type": media_type,
                                                  "data": data}});
    }
    if url.starts_with("https://") || url.starts_with("http://") {
        return json!({"type": "image", "source": {"type": "url", "url": url}});
    }
    json!({"type": "text", "text": format!("[image not sent: {url}]")})
}

/// Tool ids must match `^[a-zA-Z0-9_-]+$`. Other wires' ids are rewritten: invalid characters
/// become `_` and a hash of the original keeps rewritten ids apart.
pub(crate) fn tool_id(id: &str) -> String {
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !id.is_empty() && id.chars().all(valid) {
        return id.to_string();
    }
    let clean: String = id.chars().map(|c| if valid(c) { c } else { '_' }).collect();
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{clean}_{:08x}", hash as u32)
}

/// Marks the last block of the last message and of the user message before it, so the next
/// request (which appends to this one) reads the prefix this one wrote.
fn place_breakpoints(messages: &mut [Message], budget: usize) {
    let Some(last) = messages.len().checked_sub(1) else {
        return;
    };
    let mut targets = vec![last];
    if let Some(prev) = (0..last).rev().find(|&i| messages[i].role == "user") {
        targets.push(prev);
    }
    for i in targets.into_iter().take(budget) {
        if let Some(block) = messages[i]
            .blocks
            .iter_mut()
            .rev()
            .find(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
        {
            block["cache_control"] = ephemeral();
        }
    }
}

/// One content block of a streamed message.
#[derive(Debug)]
enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        json: String,
        initial: String,
    },
}

/// Accumulates a streamed Messages reply.
#[derive(Debug, Default)]
pub(crate) struct MessagesStream {
    provider: String,
    blocks: Vec<(u64, Block)>,
    stop_reason: Option<String>,
    usage: TokenUsage,
    saw_usage: bool,
    done: bool,
    /// Content bytes so far (see `model::limits`).
    produced: u64,
}

impl MessagesStream {
    /// An empty accumulator for a response from `provider` (named in errors and logs).
    pub(crate) fn new(provider: &str) -> Self {
        MessagesStream {
            provider: provider.to_string(),
            ..Default::default()
        }
    }

    /// Handles one SSE event (`event` is its name; the payload's `type` wins).
    pub(crate) fn handle(
        &mut self,
        event: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamDelta>, ModelError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            tracing::warn!(provider = %self.provider, "skipping a stream event that is not JSON: {}", truncate_for_log(data));
            return Ok(Vec::new());
        };
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .or(event)
            .unwrap_or("");
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.take_usage(u);
                }
            }
            "content_block_start" => return Ok(self.block_start(&v)),
            "content_block_delta" => return Ok(self.block_delta(&v)),
            "content_block_stop" => return Ok(self.block_stop(&v)),
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(u) = v.get("usage") {
                    self.take_usage(u);
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let err = v.get("error").unwrap_or(&v);
                return Err(ModelError::StreamError {
                    provider: self.provider.clone(),
                    message: error_message(err),
                });
            }
            // `ping` and events this client does not know.
            _ => {}
        }
        Ok(Vec::new())
    }

    fn take_usage(&mut self, u: &Value) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        let input = [
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ]
        .iter()
        .filter_map(|k| n(k))
        .sum::<u64>();
        // message_delta repeats or completes what message_start said; never go down.
        self.usage.input_tokens = self.usage.input_tokens.max(input);
        if let Some(c) = n("cache_read_input_tokens") {
            self.usage.cached_input_tokens = self.usage.cached_input_tokens.max(c);
        }
        if let Some(o) = n("output_tokens") {
            self.usage.output_tokens = self.usage.output_tokens.max(o);
        }
        self.saw_usage = true;
    }

    fn block_start(&mut self, v: &Value) -> Vec<StreamDelta> {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let cb = v.get("content_block").unwrap_or(&Value::Null);
        let s = |k: &str| cb.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let mut out = Vec::new();
        self.produced += super::limits::ITEM_COST;
        let block = match cb.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                let text = s("thinking");
                self.produced += (text.len() + s("signature").len()) as u64;
                if !text.is_empty() {
                    out.push(StreamDelta::Reasoning(text.clone()));
                }
                Block::Thinking {
                    text,
                    signature: s("signature"),
                }
            }
            Some("redacted_thinking") => {
                let data = s("data");
                self.produced += data.len() as u64;
                Block::Redacted { data }
            }
            Some("tool_use") => {
                let (id, name) = (s("id"), s("name"));
                let initial = cb
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                    .map(Value::to_string)
                    .unwrap_or_default();
                self.produced += (id.len() + name.len() + initial.len()) as u64;
                Block::ToolUse {
                    id,
                    name,
                    json: String::new(),
                    initial,
                }
            }
            _ => {
                let text = s("text");
                self.produced += text.len() as u64;
                if !text.is_empty() {
                    out.push(StreamDelta::Text {
                        message: self.message_ordinal(self.blocks.len()),
                        text: text.clone(),
                    });
                }
                Block::Text(text)
            }
        };
        self.blocks.push((index, block));
        out
    }

    /// The place among the response's messages of the text block at `at` in `blocks`.
    fn message_ordinal(&self, at: usize) -> usize {
        self.blocks[..at]
            .iter()
            .filter(|(_, b)| matches!(b, Block::Text(_)))
            .count()
    }

    fn block_delta(&mut self, v: &Value) -> Vec<StreamDelta> {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let delta = v.get("delta").unwrap_or(&Value::Null);
        let s = |k: &str| {
            delta
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "text_delta" {
            return self.text_delta(index, s("text"));
        }
        let Some((_, block)) = self.blocks.iter_mut().rev().find(|(i, _)| *i == index) else {
            tracing::debug!(provider = %self.provider, "delta for unknown block {index}");
            return Vec::new();
        };
        let piece = match kind {
            "thinking_delta" => s("thinking"),
            "signature_delta" => s("signature"),
            "input_json_delta" => s("partial_json"),
            _ => String::new(),
        };
        self.produced += piece.len() as u64;
        match (kind, block) {
            ("thinking_delta", Block::Thinking { text, .. }) => {
                let t = piece;
                text.push_str(&t);
                if !t.is_empty() {
                    return vec![StreamDelta::Reasoning(t)];
                }
            }
            ("signature_delta", Block::Thinking { signature, .. }) => signature.push_str(&piece),
            ("input_json_delta", Block::ToolUse { json, .. }) => json.push_str(&piece),
            _ => {}
        }
        Vec::new()
    }

    /// A text block that stops is a whole message.
    fn block_stop(&mut self, v: &Value) -> Vec<StreamDelta> {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let Some(at) = self.blocks.iter().rposition(|(i, _)| *i == index) else {
            return Vec::new();
        };
        let (_, Block::Text(text)) = &self.blocks[at] else {
            return Vec::new();
        };
        let message = self.message_ordinal(at);
        vec![StreamDelta::MessageDone {
            message,
            text: text.clone(),
            phase: None,
        }]
    }

    /// Text for block `index`; a delta with no open text block opens one.
    fn text_delta(&mut self, index: u64, t: String) -> Vec<StreamDelta> {
        if t.is_empty() {
            return Vec::new();
        }
        self.produced += t.len() as u64;
        let at = match self
            .blocks
            .iter()
            .rposition(|(i, b)| *i == index && matches!(b, Block::Text(_)))
        {
            Some(at) => at,
            None => {
                self.blocks.push((index, Block::Text(String::new())));
                self.blocks.len() - 1
            }
        };
        let message = self.message_ordinal(at);
        if let (_, Block::Text(text)) = &mut self.blocks[at] {
            text.push_str(&t);
        }
        vec![StreamDelta::Text { message, text: t }]
    }

    /// Content bytes so far: text, reasoning, signatures and tool calls (see `model::limits`).
    pub(crate) fn output_bytes(&self) -> u64 {
        self.produced
    }

    /// Where the stream was when it broke, for error messages.
    pub(crate) fn partial_state(&self) -> String {
        let calls: Vec<&str> = self
            .blocks
            .iter()
            .filter_map(|(_, b)| match b {
                Block::ToolUse { name, .. } => Some(truncate_for_log(name)),
                _ => None,
            })
            .collect();
        if calls.is_empty() {
            "before the response completed".to_string()
        } else {
            format!("in the middle of a tool call ({})", calls.join(", "))
        }
    }

    /// Ends the stream. Without `message_stop` or a stop reason the stream was cut.
    pub(crate) fn finish(self) -> Result<ModelResponse, ModelError> {
        if !self.done && self.stop_reason.is_none() {
            return Err(ModelError::StreamDisconnected(format!(
                "the stream ended {}",
                self.partial_state()
            )));
        }
        let mut reasoning: Option<String> = None;
        let mut signed = Vec::new();
        let mut parts = Vec::new();
        for (_, block) in self.blocks {
            match block {
                Block::Text(text) => parts.push(Part::Message(OutputMessage::plain(text))),
                Block::Thinking { text, signature } => {
                    let r = reasoning.get_or_insert_with(String::new);
                    if !r.is_empty() && !text.is_empty() {
                        r.push('\n');
                    }
                    r.push_str(&text);
                    if !signature.is_empty() {
                        signed.push(SignedReasoning {
                            text,
                            signature,
                            redacted: false,
                        });
                    }
                }
                Block::Redacted { data } => signed.push(SignedReasoning {
                    text: String::new(),
                    signature: data,
                    redacted: true,
                }),
                Block::ToolUse {
                    id,
                    name,
                    json,
                    initial,
                } => parts.push(Part::Call(RawToolCall {
                    id: if id.is_empty() {
                        format!("toolu_{}", uuid::Uuid::new_v4().simple())
                    } else {
                        id
                    },
                    name,
                    arguments: if json.trim().is_empty() {
                        initial
                    } else {
                        json
                    },
                })),
            }
        }
        let finish_reason = match self.stop_reason.as_deref() {
            Some("max_tokens") => FinishReason::Length,
            Some("refusal") => FinishReason::ContentFilter,
            _ if parts.iter().any(|p| matches!(p, Part::Call(_))) => FinishReason::ToolCalls,
            _ => FinishReason::Stop,
        };
        Ok(ModelResponse {
            parts,
            reasoning,
            signed_reasoning: signed,
            finish_reason,
            usage: self.saw_usage.then_some(self.usage),
        })
    }
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
