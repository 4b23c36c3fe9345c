//! Turning a scripted [`Reply`] into Anthropic Messages wire bytes: the SSE stream
//! (`message_start`, content blocks for thinking with its signature, text and `tool_use`
//! with `input_json_delta`, `message_delta`, `message_stop`, `ping`, `error`) and the
//! non-streamed `message` object.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::render::{Action, RequestInfo, Usage, split_text};
use crate::script::{Reply, ScriptEvent, StreamErrorSpec};
use crate::validate::thinking_signature;

fn event(kind: &str, mut data: Value) -> Action {
    data["type"] = json!(kind);
    Action::Send(Bytes::from(format!("event: {kind}\ndata: {data}\n\n")))
}

/// Chat's finish reasons in the script, as Messages stop reasons.
fn stop_reason(reply: &Reply) -> &'static str {
    match reply.effective_finish_reason().as_str() {
        "tool_calls" => "tool_use",
        "length" => "max_tokens",
        "content_filter" => "refusal",
        _ => "end_turn",
    }
}

fn usage_json(u: &Usage) -> Value {
    json!({"input_tokens": u.prompt.saturating_sub(u.cached),
           "cache_read_input_tokens": u.cached,
           "cache_creation_input_tokens": 0,
           "output_tokens": u.completion})
}

/// The Anthropic error object for an in-stream error or an error status.
pub fn error_json(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// Anthropic's error type for an HTTP status.
pub fn error_kind(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn stream_error_kind(e: &StreamErrorSpec) -> String {
    e.kind
        .clone()
        .or_else(|| e.code.clone())
        .unwrap_or_else(|| "overloaded_error".to_string())
}

/// The SSE body of a streamed `messages` reply.
pub fn messages_stream(reply: &Reply, info: &RequestInfo) -> Vec<Action> {
    let usage = Usage::of(reply, info);
    let mut start_usage = usage_json(&usage);
    start_usage["output_tokens"] = json!(1);
    let mut start = json!({"message": {"id": format!("msg_mock_{}", info.seq), "type": "message",
                   "role": "assistant", "model": info.model, "content": [],
                   "stop_reason": null, "stop_sequence": null, "usage": start_usage}});
    let mut delta = json!({"delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
                           "usage": {"output_tokens": usage.completion}});
    if reply.omits_usage() {
        for v in [&mut start["message"], &mut delta] {
            if let Some(o) = v.as_object_mut() {
                o.remove("usage");
            }
        }
    }
    let mut out = vec![event("message_start", start), event("ping", json!({}))];
    let mut index = 0usize;
    for e in &reply.events {
        match e {
            ScriptEvent::Reasoning(t) => {
                out.push(event(
                    "content_block_start",
                    json!({"index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                ));
                for piece in split_text(t) {
                    out.push(event(
                        "content_block_delta",
                        json!({"index": index, "delta": {"type": "thinking_delta", "thinking": piece}}),
                    ));
                }
                out.push(event(
                    "content_block_delta",
                    json!({"index": index, "delta": {"type": "signature_delta", "signature": thinking_signature(t)}}),
                ));
            }
            ScriptEvent::Text(_) | ScriptEvent::Message(_) => {
                let pieces = match e {
                    ScriptEvent::Message(m) => m.pieces(),
                    ScriptEvent::Text(t) => split_text(t),
                    _ => unreachable!(),
                };
                out.push(event(
                    "content_block_start",
                    json!({"index": index, "content_block": {"type": "text", "text": ""}}),
                ));
                for piece in pieces {
                    out.push(event(
                        "content_block_delta",
                        json!({"index": index, "delta": {"type": "text_delta", "text": piece}}),
                    ));
                }
            }
            ScriptEvent::ToolCall(tc) => {
                out.push(event(
                    "content_block_start",
                    json!({"index": index, "content_block": {"type": "tool_use", "id": tc.id,
                           "name": tc.name, "input": {}}}),
                ));
                let piece = |frag: &str| {
                    event(
                        "content_block_delta",
                        json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": frag}}),
                    )
                };
                for frag in crate::render::fragments(tc) {
                    match frag {
                        crate::render::Fragment::Text(frag) => out.push(piece(&frag)),
                        crate::render::Fragment::Pad(bytes) => {
                            crate::render::pad_actions(&mut out, bytes, piece)
                        }
                    }
                }
            }
            ScriptEvent::DelayMs(ms) => {
                out.push(Action::Sleep(*ms));
                continue;
            }
            ScriptEvent::Raw(raw) => {
                out.push(Action::Send(Bytes::from(raw.clone())));
                continue;
            }
            ScriptEvent::StreamError(err) => {
                out.push(event(
                    "error",
                    error_json(&stream_error_kind(err), &err.message),
                ));
                return out;
            }
            ScriptEvent::Cut(true) => {
                out.push(Action::Abort);
                return out;
            }
            ScriptEvent::Cut(false) => continue,
            ScriptEvent::Endless(t) => {
                out.push(event(
                    "content_block_start",
                    json!({"index": index, "content_block": {"type": "text", "text": ""}}),
                ));
                out.push(event(
                    "content_block_delta",
                    json!({"index": index, "delta": {"type": "text_delta", "text": t}}),
                ));
                crate::render::endless(&mut out);
                return out;
            }
        }
        out.push(event("content_block_stop", json!({"index": index})));
        index += 1;
    }
    out.push(event("message_delta", delta));
    out.push(event("message_stop", json!({})));
    out
}

/// The `message` object for a `"stream": false` request.
pub fn messages_json(reply: &Reply, info: &RequestInfo) -> Value {
    let mut content = Vec::new();
    for e in &reply.events {
        match e {
            ScriptEvent::Reasoning(t) => content.push(
                json!({"type": "thinking", "thinking": t, "signature": thinking_signature(t)}),
            ),
            ScriptEvent::Text(t) => content.push(json!({"type": "text", "text": t})),
            ScriptEvent::Message(m) => content.push(json!({"type": "text", "text": m.whole()})),
            ScriptEvent::ToolCall(tc) => {
                let input: Value = serde_json::from_str(&tc.arguments).unwrap_or(json!({}));
                content.push(
                    json!({"type": "tool_use", "id": tc.id, "name": tc.name, "input": input}),
                );
            }
            _ => {}
        }
    }
    let mut message = json!({"id": format!("msg_mock_{}", info.seq), "type": "message",
           "role": "assistant", "model": info.model, "content": content,
           "stop_reason": stop_reason(reply), "stop_sequence": null,
           "usage": usage_json(&Usage::of(reply, info))});
    if let Some(o) = message.as_object_mut().filter(|_| reply.omits_usage()) {
        o.remove("usage");
    }
    message
}
