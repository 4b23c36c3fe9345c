//! OpenAI Responses API wire format (what Codex and many gateways speak).

use interpreter_protocol::TokenUsage;
use serde_json::{Value, json};

use super::chat::{error_message, truncate_for_log};
use super::types::{
    FinishReason, HistoryItem, ModelError, ModelRequest, ModelResponse, RawToolCall, StreamDelta,
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
            HistoryItem::Assistant {
                text, tool_calls, ..
            } => {
                if !text.is_empty() {
                    input.push(json!({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text}]}));
                }
                for c in tool_calls {
                    input.push(json!({"type": "function_call", "call_id": c.id,
                        "name": c.name, "arguments": c.arguments}));
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
    let tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "name": t.name, "description": t.description,
                   "parameters": t.parameters, "strict": false})
        })
        .collect();
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

/// Accumulates a streamed Responses API reply.
#[derive(Debug, Default)]
pub struct ResponsesStream {
    provider: String,
    text: String,
    item_text: String,
    reasoning: String,
    item_reasoning: String,
    calls: Vec<RawToolCall>,
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
            "response.output_text.delta" => {
                let d = s("delta");
                self.produced += d.len() as u64;
                self.text.push_str(&d);
                out.push(StreamDelta::Text(d));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let d = s("delta");
                self.produced += d.len() as u64;
                self.reasoning.push_str(&d);
                out.push(StreamDelta::Reasoning(d));
            }
            "response.output_item.done" => self.item_done(v.get("item").unwrap_or(&Value::Null)),
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

    fn item_done(&mut self, item: &Value) {
        let before = self.item_text.len() + self.item_reasoning.len();
        self.produced += super::limits::ITEM_COST;
        self.item(item);
        let after = self.item_text.len() + self.item_reasoning.len();
        self.produced += (after - before) as u64;
    }

    fn item(&mut self, item: &Value) {
        match item.get("type").and_then(Value::as_str) {
            // The done items repeat what the deltas streamed; they count only without deltas.
            Some("message") if !self.text.is_empty() => {}
            Some("reasoning") if !self.reasoning.is_empty() => {}
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(t) = part.get("text").and_then(Value::as_str) {
                        self.item_text.push_str(t);
                    }
                }
            }
            Some("reasoning") => {
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
                self.calls.push(RawToolCall {
                    id,
                    name,
                    arguments,
                });
            }
            _ => {}
        }
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
        if self.calls.is_empty() {
            "before response.completed".to_string()
        } else {
            let names: Vec<&str> = self
                .calls
                .iter()
                .map(|c| truncate_for_log(&c.name))
                .collect();
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
        let text = if self.text.is_empty() {
            self.item_text
        } else {
            self.text
        };
        let reasoning = if self.reasoning.is_empty() {
            self.item_reasoning
        } else {
            self.reasoning
        };
        let finish_reason = if !self.calls.is_empty() && finish == FinishReason::Stop {
            FinishReason::ToolCalls
        } else {
            finish
        };
        Ok(ModelResponse {
            text,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            signed_reasoning: Vec::new(),
            tool_calls: self.calls,
            finish_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(r.text, "Hi");
        assert_eq!(r.tool_calls[0].id, "call_1");
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_eq!(r.usage.unwrap().cached_input_tokens, 12);
    }

    #[test]
    fn text_from_done_item_when_no_deltas() {
        let r = feed(&[
            ("response.output_item.done", json!({"type": "response.output_item.done", "item": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi!"}]}})),
            ("response.completed", json!({"type": "response.completed", "response": {}})),
        ])
        .unwrap();
        assert_eq!(r.text, "Hi!");
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
