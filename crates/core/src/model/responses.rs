//! OpenAI Responses API wire format (what Codex and many gateways speak).

use interpreter_protocol::TokenUsage;
use serde_json::{Value, json};

use super::chat::{error_message, truncate_for_log};
use super::types::{
    FinishReason, HistoryItem, HostedSearch, MessagePhase, ModelError, ModelRequest, ModelResponse,
    OutputMessage, Part, RawToolCall, StreamDelta,
};

pub(crate) fn build_body(req: &ModelRequest<'_>) -> Value {
    let mut input = Vec::with_capacity(req.history.len());
    for item in req.history {
        match item {
            HistoryItem::User { text, images, .. } => {
                let mut content = vec![json!({"type": "input_text", "text": text})];
                content.extend(
                    images
                        .iter()
                        .map(|u| json!({"type": "input_image", "image_url": u})),
                );
                input.push(json!({"type": "message", "role": "user", "content": content}));
            }
            HistoryItem::Assistant(reply) => {
                for part in &reply.parts {
                    match part {
                        Part::Message(m) if m.text.is_empty() => {}
                        Part::Message(m) => {
                            let mut item = json!({"type": "message", "role": "assistant",
                                "content": [{"type": "output_text", "text": m.text}]});
                            if let Some(phase) = m.phase {
                                item["phase"] = json!(phase.as_str());
                            }
                            input.push(item);
                        }
                        Part::Call(c) => input.push(json!({"type": "function_call",
                            "call_id": c.id, "name": c.name, "arguments": c.arguments})),
                    }
                }
            }
            HistoryItem::ToolResult {
                call_id, output, ..
            } => {
                input.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
            }
        }
    }
    let mut tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "name": t.name, "description": t.description,
                   "parameters": t.parameters, "strict": false})
        })
        .collect();
    if let Some(HostedSearch::OpenAi { live }) = req.hosted_search {
        tools.push(json!({"type": "web_search", "external_web_access": live}));
    }
    let mut body = json!({
        "model": req.model,
        "instructions": req.system,
        "input": input,
        "tools": tools,
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "store": false,
        "stream": true,
        "include": [],
        "prompt_cache_key": req.prompt_cache_key,
    });
    if let Some(e) = req.reasoning_effort {
        body["reasoning"] = json!({"effort": e, "summary": "auto"});
    }
    if let Some(schema) = req.output_schema {
        body["text"] = json!({"format": {"name": "codex_output_schema", "type": "json_schema",
                                         "strict": true, "schema": schema}});
    }
    body
}

/// Accumulates a streamed Responses API reply: its output items in the order they came.
#[derive(Debug, Default)]
pub struct ResponsesStream {
    provider: String,
    parts: Vec<Part<RawToolCall>>,
    /// The provider's item id of each message part, by position in `parts`.
    message_items: Vec<(usize, String)>,
    /// Messages whose text came in deltas (their done item repeats it).
    streamed: Vec<usize>,
    reasoning: String,
    item_reasoning: String,
    usage: Option<TokenUsage>,
    finish: Option<FinishReason>,
    /// Content bytes so far (see `model::limits`).
    produced: u64,
}

impl ResponsesStream {
    /// A fresh stream; `provider` names it in errors and logs.
    pub fn new(provider: &str) -> Self {
        ResponsesStream {
            provider: provider.to_string(),
            ..Default::default()
        }
    }

    /// Takes one SSE event (its `event:` name and `data:`) and returns the text it streamed.
    pub fn handle(
        &mut self,
        event: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamDelta>, ModelError> {
        let Ok(v) = serde_json::from_str::<Value>(data.trim()) else {
            tracing::warn!(provider = %self.provider, "skipping a stream event that is not JSON: {}", truncate_for_log(data));
            return Ok(Vec::new());
        };
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .or(event)
            .unwrap_or("");
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let mut out = Vec::new();
        match kind {
            "response.output_item.added" => {
                let item = v.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("message") {
                    let at = self.message_at(item.get("id").and_then(Value::as_str));
                    self.take_phase(at, item);
                }
            }
            "response.output_text.delta" => {
                let d = s("delta");
                self.produced += d.len() as u64;
                let at = self.message_at(v.get("item_id").and_then(Value::as_str));
                if let Some(Part::Message(m)) = self.parts.get_mut(at) {
                    m.text.push_str(&d);
                }
                if !self.streamed.contains(&at) {
                    self.streamed.push(at);
                }
                out.push(StreamDelta::Text {
                    message: self.ordinal(at),
                    text: d,
                });
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let d = s("delta");
                self.produced += d.len() as u64;
                self.reasoning.push_str(&d);
                out.push(StreamDelta::Reasoning(d));
            }
            "response.output_item.done" => {
                out.extend(self.item_done(v.get("item").unwrap_or(&Value::Null)));
            }
            "response.completed" => {
                self.finish = Some(FinishReason::Stop);
                self.take_usage(&v);
            }
            "response.incomplete" => {
                let reason = v
                    .pointer("/response/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                self.finish = Some(if reason == "content_filter" {
                    FinishReason::ContentFilter
                } else {
                    FinishReason::Length
                });
                self.take_usage(&v);
            }
            "response.failed" => {
                let err = v.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(ModelError::StreamError {
                    provider: self.provider.clone(),
                    message: error_message(err),
                });
            }
            "error" => {
                let err = v.get("error").unwrap_or(&v);
                return Err(ModelError::StreamError {
                    provider: self.provider.clone(),
                    message: error_message(err),
                });
            }
            _ => {}
        }
        Ok(out)
    }

    /// Where in `parts` the message with the provider's `id` is, opened if new. Without an id
    /// (gateways that leave it out), the last message while no call came after it.
    fn message_at(&mut self, id: Option<&str>) -> usize {
        let id = id.filter(|i| !i.is_empty());
        let found = match id {
            Some(id) => self
                .message_items
                .iter()
                .find(|(_, i)| i == id)
                .map(|(at, _)| *at),
            None => self
                .parts
                .len()
                .checked_sub(1)
                .filter(|&at| matches!(self.parts[at], Part::Message(_))),
        };
        if let Some(at) = found {
            return at;
        }
        // Deltas without an id, then the item with one: the same message.
        if let Some(id) = id
            && let Some(Part::Message(m)) = self.parts.last_mut()
            && m.id.is_none()
        {
            m.id = Some(id.to_string());
            let at = self.parts.len() - 1;
            self.message_items.push((at, id.to_string()));
            return at;
        }
        let at = self.parts.len();
        self.parts.push(Part::Message(OutputMessage {
            id: id.map(str::to_string),
            ..Default::default()
        }));
        if let Some(id) = id {
            self.message_items.push((at, id.to_string()));
        }
        at
    }

    /// The message's place among the response's messages.
    fn ordinal(&self, at: usize) -> usize {
        self.parts[..at]
            .iter()
            .filter(|p| matches!(p, Part::Message(_)))
            .count()
    }

    fn take_phase(&mut self, at: usize, item: &Value) {
        let phase = item
            .get("phase")
            .and_then(Value::as_str)
            .and_then(MessagePhase::parse);
        if let (Some(phase), Some(Part::Message(m))) = (phase, self.parts.get_mut(at)) {
            m.phase = Some(phase);
        }
    }

    /// A finished output item; a message says it is whole.
    fn item_done(&mut self, item: &Value) -> Option<StreamDelta> {
        self.produced += super::limits::ITEM_COST;
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                let at = self.message_at(item.get("id").and_then(Value::as_str));
                self.take_phase(at, item);
                // The done item repeats what the deltas streamed; it counts only without them.
                if !self.streamed.contains(&at) {
                    let mut text = String::new();
                    for part in item
                        .get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(t) = part.get("text").and_then(Value::as_str) {
                            text.push_str(t);
                        }
                    }
                    self.produced += text.len() as u64;
                    if let Some(Part::Message(m)) = self.parts.get_mut(at) {
                        m.text = text;
                    }
                }
                let message = self.ordinal(at);
                if let Some(Part::Message(m)) = self.parts.get(at) {
                    return Some(StreamDelta::MessageDone {
                        message,
                        text: m.text.clone(),
                        phase: m.phase,
                    });
                }
            }
            Some("reasoning") if !self.reasoning.is_empty() => {}
            Some("reasoning") => {
                let before = self.item_reasoning.len();
                for part in item
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(t) = part.get("text").and_then(Value::as_str) {
                        if !self.item_reasoning.is_empty() {
                            self.item_reasoning.push('\n');
                        }
                        self.item_reasoning.push_str(t);
                    }
                }
                self.produced += (self.item_reasoning.len() - before) as u64;
            }
            Some("function_call") => {
                let g = |k: &str| {
                    item.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                let id = match g("call_id") {
                    id if !id.is_empty() => id,
                    _ => g("id"),
                };
                let (name, arguments) = (g("name"), g("arguments"));
                self.produced += (id.len() + name.len() + arguments.len()) as u64;
                self.parts.push(Part::Call(RawToolCall {
                    id,
                    name,
                    arguments,
                }));
            }
            Some("web_search_call") => {
                let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                return Some(StreamDelta::HostedSearch {
                    id: id.to_string(),
                    action: item.get("action").cloned().unwrap_or(Value::Null),
                });
            }
            _ => {}
        }
        None
    }

    fn take_usage(&mut self, v: &Value) {
        if let Some(u) = v.pointer("/response/usage").filter(|u| u.is_object()) {
            let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(TokenUsage {
                input_tokens: n("/input_tokens"),
                cached_input_tokens: n("/input_tokens_details/cached_tokens"),
                output_tokens: n("/output_tokens"),
                reasoning_output_tokens: n("/output_tokens_details/reasoning_tokens"),
            });
        }
    }

    /// Content bytes so far: text, reasoning and tool calls (see `model::limits`).
    pub(crate) fn output_bytes(&self) -> u64 {
        self.produced
    }

    /// Where the stream was when it broke, for error messages.
    pub fn partial_state(&self) -> String {
        let names: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Call(c) => Some(truncate_for_log(&c.name)),
                Part::Message(_) => None,
            })
            .collect();
        if names.is_empty() {
            "before response.completed".to_string()
        } else {
            format!("after tool calls ({})", names.join(", "))
        }
    }

    /// The complete response, or an error when the stream ended before `response.completed`.
    pub fn finish(self) -> Result<ModelResponse, ModelError> {
        let Some(finish) = self.finish else {
            return Err(ModelError::StreamDisconnected(format!(
                "the stream closed {}",
                self.partial_state()
            )));
        };
        let reasoning = if self.reasoning.is_empty() {
            self.item_reasoning
        } else {
            self.reasoning
        };
        let has_calls = self.parts.iter().any(|p| matches!(p, Part::Call(_)));
        let finish_reason = if has_calls && finish == FinishReason::Stop {
            FinishReason::ToolCalls
        } else {
            finish
        };
        Ok(ModelResponse {
            parts: self.parts,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            signed_reasoning: Vec::new(),
            finish_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::types::Parts as _;

    fn feed(events: &[(&str, Value)]) -> Result<ModelResponse, ModelError> {
        let mut s = ResponsesStream::new("mock");
        for (name, v) in events {
            s.handle(Some(name), &v.to_string())?;
        }
        s.finish()
    }

    #[test]
    fn message_function_call_and_usage() {
        let r = feed(&[
            ("response.created", json!({"type": "response.created", "response": {"id": "r"}})),
            ("response.output_text.delta", json!({"type": "response.output_text.delta", "delta": "Hi"})),
            ("response.output_item.done", json!({"type": "response.output_item.done", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": "{\"command\":\"ls\"}"}})),
            ("response.completed", json!({"type": "response.completed", "response": {"usage": {"input_tokens": 42, "input_tokens_details": {"cached_tokens": 12}, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}}}})),
        ])
        .unwrap();
        assert_eq!(r.text(), "Hi");
        assert_eq!(r.tool_calls()[0].id, "call_1");
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_eq!(r.usage.unwrap().cached_input_tokens, 12);
    }

    fn request(history: &[HistoryItem]) -> ModelRequest<'_> {
        ModelRequest {
            model: "m",
            system: "",
            history,
            tools: &[],
            prompt_cache_key: "k",
            max_output_tokens: 100,
            reasoning_effort: None,
            output_schema: None,
            hosted_search: None,
            temperature: None,
        }
    }

    #[test]
    fn two_messages_keep_their_phases_deltas_and_order_into_history_and_back() {
        let added = |id: &str, phase: &str| {
            (
                "response.output_item.added",
                json!({"type": "response.output_item.added",
                "item": {"type": "message", "id": id, "role": "assistant", "phase": phase, "content": []}}),
            )
        };
        let delta = |id: &str, d: &str| {
            (
                "response.output_text.delta",
                json!({"type": "response.output_text.delta", "item_id": id, "delta": d}),
            )
        };
        let done = |id: &str, phase: &str, text: &str| {
            (
                "response.output_item.done",
                json!({"type": "response.output_item.done",
                "item": {"type": "message", "id": id, "role": "assistant", "phase": phase,
                         "content": [{"type": "output_text", "text": text}]}}),
            )
        };
        let events = [
            added("msg_1", "commentary"),
            delta("msg_1", "Thinking "),
            delta("msg_1", "out loud first."),
            done("msg_1", "commentary", "Thinking out loud first."),
            (
                "response.output_item.done",
                json!({"type": "response.output_item.done", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": "{}"}}),
            ),
            added("msg_2", "final_answer"),
            delta("msg_2", "ab"),
            delta("msg_2", "cd"),
            delta("msg_2", "ef"),
            delta("msg_2", "gh"),
            done("msg_2", "final_answer", "abcdefgh"),
            (
                "response.completed",
                json!({"type": "response.completed", "response": {}}),
            ),
        ];
        let mut s = ResponsesStream::new("mock");
        let mut deltas = Vec::new();
        for (name, v) in &events {
            deltas.extend(s.handle(Some(name), &v.to_string()).unwrap());
        }
        let r = s.finish().unwrap();
        let texts: Vec<(usize, &str)> = deltas
            .iter()
            .filter_map(|d| match d {
                StreamDelta::Text { message, text } => Some((*message, text.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            texts,
            [
                (0, "Thinking "),
                (0, "out loud first."),
                (1, "ab"),
                (1, "cd"),
                (1, "ef"),
                (1, "gh")
            ]
        );
        let messages: Vec<(&str, Option<MessagePhase>)> =
            r.messages().map(|m| (m.text(), m.phase())).collect();
        assert_eq!(
            messages,
            [
                ("Thinking out loud first.", Some(MessagePhase::Commentary)),
                ("abcdefgh", Some(MessagePhase::FinalAnswer))
            ]
        );
        let history = [r.into_history()];
        let body = build_body(&request(&history));
        let input: Vec<String> = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| match i["type"].as_str().unwrap() {
                "message" => format!("message:{}:{}", i["phase"], i["content"][0]["text"]),
                kind => kind.to_string(),
            })
            .collect();
        assert_eq!(
            input,
            [
                r#"message:"commentary":"Thinking out loud first.""#,
                "function_call",
                r#"message:"final_answer":"abcdefgh""#
            ]
        );
    }

    #[test]
    fn an_empty_message_is_a_message_and_an_id_on_the_done_item_joins_its_deltas() {
        let r = feed(&[
            ("response.output_text.delta", json!({"type": "response.output_text.delta", "delta": "Hi"})),
            ("response.output_item.done", json!({"type": "response.output_item.done", "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Hi"}]}})),
            ("response.output_item.done", json!({"type": "response.output_item.done", "item": {"type": "message", "id": "msg_2", "role": "assistant", "phase": "final_answer", "content": [{"type": "output_text", "text": ""}]}})),
            ("response.completed", json!({"type": "response.completed", "response": {}})),
        ])
        .unwrap();
        let messages: Vec<(&str, Option<MessagePhase>)> =
            r.messages().map(|m| (m.text(), m.phase())).collect();
        assert_eq!(
            messages,
            [("Hi", None), ("", Some(MessagePhase::FinalAnswer))]
        );
    }

    #[test]
    fn text_from_done_item_when_no_deltas() {
        let r = feed(&[
            ("response.output_item.done", json!({"type": "response.output_item.done", "item": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi!"}]}})),
            ("response.completed", json!({"type": "response.completed", "response": {}})),
        ])
        .unwrap();
        assert_eq!(r.text(), "Hi!");
    }

    #[test]
    fn error_event_and_missing_completion() {
        let err = feed(&[("error", json!({"type": "error", "message": "boom"}))]).unwrap_err();
        assert!(
            err.to_string()
                .contains("stream disconnected before completion")
        );
        assert!(err.to_string().contains("boom"));
        let err = feed(&[(
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "delta": "x"}),
        )])
        .unwrap_err();
        assert!(matches!(err, ModelError::StreamDisconnected(_)));
    }
}
