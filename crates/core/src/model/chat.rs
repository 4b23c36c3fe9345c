//! OpenAI Chat Completions wire format (also Moonshot, DeepSeek, GLM, Qwen, OpenRouter, Ollama,
//! llama.cpp): request bodies and the streaming accumulator.

use interpreter_protocol::TokenUsage;
use serde_json::{Value, json};

use super::catalog::ModelInfo;
use super::types::{
    FinishReason, HistoryItem, HostedSearch, ModelError, ModelRequest, ModelResponse,
    OutputMessage, Part, Parts as _, RawToolCall, StreamDelta,
};

/// The name Moonshot's builtin search is declared and called under.
pub(crate) const MOONSHOT_SEARCH: &str = "$web_search";

/// The history as Chat messages, the system prompt first.
fn messages(req: &ModelRequest<'_>, info: ModelInfo) -> Vec<Value> {
    let mut messages = Vec::with_capacity(req.history.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for item in req.history {
        match item {
            HistoryItem::User { text, images, .. } => {
                if images.is_empty() {
                    messages.push(json!({"role": "user", "content": text}));
                } else {
                    let mut parts = vec![json!({"type": "text", "text": text})];
                    parts.extend(
                        images
                            .iter()
                            .map(|u| json!({"type": "image_url", "image_url": {"url": u}})),
                    );
                    messages.push(json!({"role": "user", "content": parts}));
                }
            }
            HistoryItem::Assistant(reply) => {
                // One message is all this wire can say: the texts joined, then the calls.
                let text = reply.text();
                let tool_calls: Vec<_> = reply.calls().collect();
                let reasoning = &reply.reasoning;
                // Empty assistant messages are a 400 on Moonshot; they carry nothing anyway.
                if text.is_empty() && tool_calls.is_empty() {
                    continue;
                }
                let mut m = serde_json::Map::new();
                m.insert("role".into(), json!("assistant"));
                m.insert(
                    "content".into(),
                    if text.is_empty() {
                        Value::Null
                    } else {
                        json!(text)
                    },
                );
                let echo = match reasoning {
                    Some(r) => Some(r.as_str()),
                    // Thinking providers reject tool-call messages without it; empty is fine.
                    None if info.echo_reasoning && !tool_calls.is_empty() => Some(""),
                    None => None,
                };
                if let Some(r) = echo {
                    m.insert("reasoning_content".into(), json!(r));
                }
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(m));
            }
            HistoryItem::ToolResult {
                call_id, output, ..
            } => {
                messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": output}));
            }
        }
    }
    messages
}

/// Builds the request body. Deterministic: the same history gives byte-identical JSON, so the
/// provider's prefix cache hits.
pub(crate) fn build_body(req: &ModelRequest<'_>, info: ModelInfo, send_cache_key: bool) -> Value {
    let messages = messages(req, info);
    let mut body = serde_json::Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    // Without it Moonshot picks a tiny default and thinking eats it.
    body.insert("max_completion_tokens".into(), json!(req.max_output_tokens));
    let mut tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}})
        })
        .collect();
    if req.hosted_search == Some(HostedSearch::Moonshot) {
        tools.push(json!({"type": "builtin_function", "function": {"name": MOONSHOT_SEARCH}}));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if send_cache_key {
        body.insert("prompt_cache_key".into(), json!(req.prompt_cache_key));
    }
    if info.kimi {
        let mut thinking = json!({"type": "enabled", "keep": "all"});
        if let Some(e) = req.reasoning_effort {
            thinking["effort"] = json!(e);
        }
        body.insert("thinking".into(), thinking);
    } else if let Some(e) = req.reasoning_effort {
        body.insert("reasoning_effort".into(), json!(e));
    }
    if let Some(schema) = req.output_schema {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": "codex_output_schema", "strict": true, "schema": schema}}),
        );
    }
    Value::Object(body)
}

#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Accumulates a streamed chat completion.
#[derive(Debug, Default)]
pub struct ChatStream {
    provider: String,
    text: String,
    reasoning: String,
    saw_reasoning: bool,
    calls: Vec<PartialCall>,
    finish: Option<FinishReason>,
    usage: Option<TokenUsage>,
    done: bool,
    /// Content bytes so far (see `model::limits`).
    produced: u64,
}

impl ChatStream {
    /// A fresh stream; `provider` names it in errors and logs.
    pub fn new(provider: &str) -> Self {
        ChatStream {
            provider: provider.to_string(),
            ..Default::default()
        }
    }

    /// Handles one SSE `data` payload.
    pub fn handle(&mut self, data: &str) -> Result<Vec<StreamDelta>, ModelError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            tracing::warn!(provider = %self.provider, "skipping a stream line that is not JSON: {}", truncate_for_log(data));
            return Ok(Vec::new());
        };
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            return Err(ModelError::StreamError {
                provider: self.provider.clone(),
                message: error_message(err),
            });
        }
        let mut out = Vec::new();
        let choice = v.get("choices").and_then(|c| c.get(0));
        if let Some(u) = v.get("usage").filter(|u| u.is_object()).or_else(|| {
            choice
                .and_then(|c| c.get("usage"))
                .filter(|u| u.is_object())
        }) {
            self.usage = Some(parse_usage(u));
        }
        let Some(choice) = choice else {
            return Ok(out);
        };
        if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(r) = delta.get(key).and_then(Value::as_str) {
                    self.saw_reasoning = true;
                    if !r.is_empty() {
                        self.produced += r.len() as u64;
                        self.reasoning.push_str(r);
                        out.push(StreamDelta::Reasoning(r.to_string()));
                    }
                    break;
                }
            }
            if let Some(t) = delta.get("content").and_then(Value::as_str)
                && !t.is_empty()
            {
                self.produced += t.len() as u64;
                self.text.push_str(t);
                out.push(StreamDelta::Text {
                    message: 0,
                    text: t.to_string(),
                });
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for c in calls {
                    self.tool_call_delta(c);
                }
            }
        }
        if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(match f {
                "tool_calls" | "function_call" => FinishReason::ToolCalls,
                "length" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                _ => FinishReason::Stop,
            });
        }
        Ok(out)
    }

    fn tool_call_delta(&mut self, c: &Value) {
        let id = c.get("id").and_then(Value::as_str).unwrap_or("");
        let index = match c.get("index").and_then(Value::as_u64) {
            Some(i) => i,
            // No index (some servers): a new id starts a call, anything else continues the last.
            None => match self.calls.last() {
                Some(last) if id.is_empty() || last.id == id => last.index,
                Some(last) => last.index + 1,
                None => 0,
            },
        };
        let pos = match self.calls.iter().position(|p| p.index == index) {
            Some(p) => p,
            None => {
                self.produced += super::limits::ITEM_COST;
                self.calls.push(PartialCall {
                    index,
                    ..Default::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos];
        let before = call.id.len() + call.name.len() + call.arguments.len();
        if call.id.is_empty() && !id.is_empty() {
            call.id = id.to_string();
        }
        if let Some(f) = c.get("function") {
            if let Some(n) = f.get("name").and_then(Value::as_str)
                && call.name.is_empty()
            {
                call.name = n.to_string();
            }
            match f.get("arguments") {
                Some(Value::String(a)) => call.arguments.push_str(a),
                // Some servers send the whole arguments object once.
                Some(v @ Value::Object(_)) => call.arguments.push_str(&v.to_string()),
                _ => {}
            }
        }
        let after = call.id.len() + call.name.len() + call.arguments.len();
        self.produced += (after - before) as u64;
    }

    /// Content bytes so far: text, reasoning and tool calls (see `model::limits`).
    pub(crate) fn output_bytes(&self) -> u64 {
        self.produced
    }

    /// Where the stream was when it broke, for error messages.
    pub fn partial_state(&self) -> String {
        if self.calls.is_empty() {
            "before the response completed".to_string()
        } else {
            format!(
                "in the middle of a tool call ({})",
                self.calls
                    .iter()
                    .map(|c| truncate_for_log(&c.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }

    /// Ends the stream. A stream that stopped without a finish reason or `[DONE]` was cut.
    pub fn finish(self) -> Result<ModelResponse, ModelError> {
        if !self.done && self.finish.is_none() {
            return Err(ModelError::StreamDisconnected(format!(
                "the stream ended {}",
                self.partial_state()
            )));
        }
        let tool_calls: Vec<Part<RawToolCall>> = self
            .calls
            .into_iter()
            .map(|c| {
                Part::Call(RawToolCall {
                    id: if c.id.is_empty() {
                        format!("call_{}", uuid::Uuid::new_v4().simple())
                    } else {
                        c.id
                    },
                    name: c.name,
                    arguments: c.arguments,
                })
            })
            .collect();
        // Trust the calls over the label: some servers say "stop" with calls present.
        let finish_reason = match self.finish {
            _ if !tool_calls.is_empty() && self.finish != Some(FinishReason::Length) => {
                FinishReason::ToolCalls
            }
            Some(f) => f,
            None => FinishReason::Stop,
        };
        let mut parts = Vec::with_capacity(tool_calls.len() + 1);
        if !self.text.is_empty() {
            parts.push(Part::Message(OutputMessage::plain(self.text)));
        }
        parts.extend(tool_calls);
        Ok(ModelResponse {
            parts,
            reasoning: (self.saw_reasoning || !self.reasoning.is_empty()).then_some(self.reasoning),
            signed_reasoning: Vec::new(),
            finish_reason,
            usage: self.usage,
        })
    }
}

pub(crate) fn parse_usage(u: &Value) -> TokenUsage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let cached = n(u.pointer("/prompt_tokens_details/cached_tokens"))
        .max(n(u.get("cached_tokens")))
        .max(n(u.get("prompt_cache_hit_tokens")));
    TokenUsage {
        input_tokens: n(u.get("prompt_tokens")),
        cached_input_tokens: cached,
        output_tokens: n(u.get("completion_tokens")),
        reasoning_output_tokens: n(u.pointer("/completion_tokens_details/reasoning_tokens")),
    }
}

/// The human part of a provider error object (`{"message", "type", "code"}` or a bare string).
pub(crate) fn error_message(err: &Value) -> String {
    match err {
        Value::String(s) => s.clone(),
        Value::Object(o) => o
            .get("message")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| err.to_string()),
        other => other.to_string(),
    }
}

pub(crate) fn truncate_for_log(s: &str) -> &str {
    let mut end = s.len().min(200);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::catalog::model_info;
    use crate::model::sse::SseDecoder;
    use crate::model::types::{AssistantReply, ToolCall, ToolSpec};

    fn run(stream: &str) -> (Vec<StreamDelta>, Result<ModelResponse, ModelError>) {
        let mut dec = SseDecoder::new();
        let mut acc = ChatStream::new("mock");
        let mut deltas = Vec::new();
        // Feed in small pieces to exercise boundaries.
        for chunk in stream.as_bytes().chunks(7) {
            for ev in dec.feed(chunk) {
                match acc.handle(&ev.data) {
                    Ok(d) => deltas.extend(d),
                    Err(e) => return (deltas, Err(e)),
                }
            }
        }
        if let Some(ev) = dec.finish()
            && let Err(e) = acc.handle(&ev.data)
        {
            return (deltas, Err(e));
        }
        (deltas, acc.finish())
    }

    fn chunk(delta: Value, finish: Option<&str>) -> String {
        format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    }

    #[test]
    fn text_reasoning_and_usage_with_done() {
        let s = [
            chunk(json!({"role": "assistant", "content": ""}), None),
            chunk(json!({"reasoning_content": "think "}), None),
            chunk(json!({"reasoning_content": "hard"}), None),
            chunk(json!({"content": "Hel"}), None),
            chunk(json!({"content": "lo"}), None),
            chunk(json!({}), Some("stop")),
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":5,\"prompt_tokens_details\":{\"cached_tokens\":12},\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\n".into(),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let (deltas, r) = run(&s);
        let r = r.unwrap();
        assert_eq!(r.text(), "Hello");
        assert_eq!(r.reasoning.as_deref(), Some("think hard"));
        assert_eq!(r.finish_reason, FinishReason::Stop);
        assert_eq!(
            r.usage,
            Some(TokenUsage {
                input_tokens: 42,
                cached_input_tokens: 12,
                output_tokens: 5,
                reasoning_output_tokens: 2
            })
        );
        assert_eq!(deltas.len(), 4);
    }

    #[test]
    fn fragmented_parallel_tool_calls_accumulate_per_index() {
        let s = [
            chunk(json!({"tool_calls": [{"index": 0, "id": "functions.read:0", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}), None),
            chunk(json!({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "shell", "arguments": "{\"comm"}}]}), None),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}), None),
            chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": "and\":\"ls\"}"}}]}), None),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.txt\"}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let r = run(&s).1.unwrap();
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_eq!(r.tool_calls().len(), 2);
        assert_eq!(r.tool_calls()[0].id, "functions.read:0");
        assert_eq!(r.tool_calls()[0].arguments, "{\"path\":\"a.txt\"}");
        assert_eq!(r.tool_calls()[1].name, "shell");
        assert_eq!(r.tool_calls()[1].arguments, "{\"command\":\"ls\"}");
    }

    #[test]
    fn missing_index_continues_last_call_and_missing_id_is_generated() {
        let s = [
            chunk(
                json!({"tool_calls": [{"function": {"name": "shell", "arguments": "{\"a\""}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"function": {"arguments": ":1}"}}]}),
                None,
            ),
            chunk(json!({}), Some("stop")),
        ]
        .concat();
        let r = run(&s).1.unwrap();
        assert_eq!(r.tool_calls().len(), 1);
        assert_eq!(r.tool_calls()[0].arguments, "{\"a\":1}");
        assert!(r.tool_calls()[0].id.starts_with("call_"));
        // Calls present outrank a "stop" label.
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    }

    #[test]
    fn usage_inside_choice_and_moonshot_cached_tokens() {
        let s = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\",\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":1,\"cached_tokens\":4}}]}\n\ndata: [DONE]\n\n";
        let r = run(s).1.unwrap();
        let u = r.usage.unwrap();
        assert_eq!((u.input_tokens, u.cached_input_tokens), (9, 4));
    }

    #[test]
    fn garbage_lines_are_skipped() {
        let s = [
            "data: {not json\n\n".to_string(),
            ": comment\n\n".into(),
            "event: ping\ndata: \n\n".into(),
            chunk(json!({"content": "ok"}), Some("stop")),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let r = run(&s).1.unwrap();
        assert_eq!(r.text(), "ok");
    }

    #[test]
    fn truncated_stream_mid_tool_call_is_an_error() {
        let s = chunk(
            json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "apply_patch", "arguments": "{\"inp"}}]}),
            None,
        );
        let err = run(&s).1.unwrap_err();
        assert!(matches!(err, ModelError::StreamDisconnected(_)));
        let msg = err.to_string();
        assert!(
            msg.contains("stream disconnected before completion"),
            "{msg}"
        );
        assert!(msg.contains("apply_patch"), "{msg}");
    }

    #[test]
    fn finish_without_done_is_accepted_and_length_and_filter_map() {
        let r = run(&chunk(json!({"content": "x"}), Some("length")))
            .1
            .unwrap();
        assert_eq!(r.finish_reason, FinishReason::Length);
        let r = run(&chunk(json!({}), Some("content_filter"))).1.unwrap();
        assert_eq!(r.finish_reason, FinishReason::ContentFilter);
    }

    #[test]
    fn error_object_mid_stream() {
        let s = [
            chunk(json!({"content": "x"}), None),
            "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n".into(),
        ]
        .concat();
        let err = run(&s).1.unwrap_err();
        assert!(err.to_string().contains("overloaded"));
    }

    #[test]
    fn body_follows_kimi_rules() {
        let history = vec![
            HistoryItem::User {
                text: "hi".into(),
                images: vec![],
                synthetic: false,
            },
            HistoryItem::Assistant(AssistantReply::new(
                "",
                vec![ToolCall {
                    id: "c1".into(),
                    name: "shell".into(),
                    arguments: "{}".into(),
                }],
            )),
            HistoryItem::ToolResult {
                call_id: "c1".into(),
                output: "ok".into(),
                is_error: false,
            },
            HistoryItem::Assistant(AssistantReply::default()),
        ];
        let tools = vec![ToolSpec {
            name: "shell".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }];
        let req = ModelRequest {
            model: "kimi-k3",
            system: "sys",
            history: &history,
            tools: &tools,
            prompt_cache_key: "sess-1",
            max_output_tokens: 32768,
            reasoning_effort: None,
            output_schema: None,
            hosted_search: None,
            temperature: None,
        };
        let body = build_body(&req, model_info("kimi-k3"), true);
        assert!(body.get("temperature").is_none() && body.get("top_p").is_none());
        assert_eq!(body["max_completion_tokens"], 32768);
        assert_eq!(body["prompt_cache_key"], "sess-1");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["thinking"]["type"], "enabled");
        let msgs = body["messages"].as_array().unwrap();
        // The empty assistant message is dropped.
        assert_eq!(msgs.len(), 4);
        assert_eq!(msgs[2]["reasoning_content"], "");
        assert!(msgs[2]["content"].is_null());
        assert_eq!(msgs[3]["role"], "tool");
        // Byte-identical on a second build.
        assert_eq!(
            body.to_string(),
            build_body(&req, model_info("kimi-k3"), true).to_string()
        );
    }
    #[test]
    fn two_messages_and_a_call_are_one_chat_message_and_a_stream_is_one_message() {
        let reply = AssistantReply {
            parts: vec![
                Part::Message(OutputMessage {
                    id: Some("msg_1".into()),
                    phase: Some(super::super::MessagePhase::Commentary),
                    text: "Looking first.".into(),
                }),
                Part::Call(ToolCall {
                    id: "c1".into(),
                    name: "shell".into(),
                    arguments: "{}".into(),
                }),
                Part::Message(OutputMessage::plain("Then this.")),
            ],
            ..Default::default()
        };
        let history = [HistoryItem::Assistant(reply)];
        let req = ModelRequest {
            model: "m",
            system: "",
            history: &history,
            tools: &[],
            prompt_cache_key: "k",
            max_output_tokens: 10,
            reasoning_effort: None,
            output_schema: None,
            hosted_search: None,
            temperature: None,
        };
        let body = build_body(&req, model_info("gpt-4.1"), false);
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0]["content"], "Looking first.\n\nThen this.");
        assert_eq!(msgs[0]["tool_calls"][0]["id"], "c1");
        // Streamed content is one message, whatever its deltas.
        let (deltas, r) = run(concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"ab\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"cd\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        ));
        let r = r.unwrap();
        assert_eq!(r.messages().count(), 1);
        assert_eq!(r.text(), "abcd");
        assert_eq!(
            deltas,
            [
                StreamDelta::Text {
                    message: 0,
                    text: "ab".into()
                },
                StreamDelta::Text {
                    message: 0,
                    text: "cd".into()
                }
            ]
        );
    }
}
