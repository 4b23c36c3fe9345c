//! Turning a scripted [`Reply`] into wire bytes for the Chat Completions and
//! Responses APIs.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde_json::{Value, json};

use crate::script::{MessageSpec, Reply, ScriptEvent, StreamErrorSpec, ToolCallSpec};

/// One step of a streamed body.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Send(Bytes),
    Sleep(u64),
    /// End the body with an error so that the connection is aborted mid-body.
    Abort,
    /// Send these bytes again and again until the client hangs up.
    Forever(Bytes),
    /// Send these bytes this many times.
    Repeat(Bytes, u64),
}

/// One piece of a tool call's arguments as it is streamed.
pub(crate) enum Fragment {
    Text(String),
    /// This many bytes of `a`, made as they are sent.
    Pad(u64),
}

/// The pieces a tool call's arguments are sent in.
pub(crate) fn fragments(tc: &ToolCallSpec) -> Vec<Fragment> {
    const PAD: &str = "{{pad}}";
    match (tc.pad, tc.arguments.split_once(PAD)) {
        (Some(bytes), Some((before, after))) => vec![
            Fragment::Text(before.to_string()),
            Fragment::Pad(bytes),
            Fragment::Text(after.to_string()),
        ],
        _ => split_fragments(&tc.arguments, tc.fragments.unwrap_or(2))
            .into_iter()
            .map(Fragment::Text)
            .collect(),
    }
}

/// The events of a pad of `bytes` bytes: `event` makes the event of one piece.
pub(crate) fn pad_actions(out: &mut Vec<Action>, bytes: u64, event: impl Fn(&str) -> Action) {
    const PIECE: u64 = 1 << 20;
    if let Action::Send(piece) = event(&"a".repeat(PIECE as usize)) {
        out.push(Action::Repeat(piece, bytes / PIECE));
    }
    if !bytes.is_multiple_of(PIECE) {
        out.push(event(&"a".repeat((bytes % PIECE) as usize)));
    }
}

/// The arguments with their pad made (for what has to hold them whole).
pub(crate) fn padded_arguments(tc: &ToolCallSpec) -> String {
    match tc.pad {
        Some(bytes) => tc.arguments.replace("{{pad}}", &"a".repeat(bytes as usize)),
        None => tc.arguments.clone(),
    }
}

/// How many copies of an endless delta go in one write.
const ENDLESS_BATCH: usize = 64;

/// After `text` was rendered as its deltas: the last of them, repeated forever.
pub(crate) fn endless(out: &mut Vec<Action>) {
    if let Some(Action::Send(delta)) = out.last() {
        let batch = Bytes::from(delta.repeat(ENDLESS_BATCH));
        out.push(Action::Forever(batch));
    }
}

/// What the renderer needs to know about the request being answered.
#[derive(Clone, Debug)]
pub struct RequestInfo {
    /// The request's `model`, echoed back.
    pub model: String,
    /// The request asked for `stream_options.include_usage`.
    pub include_usage: bool,
    /// Rough prompt token count: request body length / 4.
    pub prompt_estimate: u64,
    /// 1-based number of the model request, used in ids.
    pub seq: u64,
}

impl RequestInfo {
    pub fn from_body(body: &Value, body_len: usize, seq: u64) -> Self {
        RequestInfo {
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("mock-model")
                .to_string(),
            include_usage: body
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            prompt_estimate: (body_len / 4) as u64,
            seq,
        }
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Splits text into a few deltas on spaces, keeping the spaces; the pieces
/// concatenate to exactly `text`. Empty text gives no pieces.
pub fn split_text(text: &str) -> Vec<String> {
    const MAX_PIECES: usize = 8;
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    if words.is_empty() {
        return Vec::new();
    }
    let per = words.len().div_ceil(MAX_PIECES);
    words.chunks(per).map(|c| c.concat()).collect()
}

/// Splits `s` into `n` (at least 1, at most one per char) pieces on char boundaries.
pub fn split_fragments(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let n = n.clamp(1, chars.len());
    let base = chars.len() / n;
    let extra = chars.len() % n;
    let mut out = Vec::with_capacity(n);
    let mut at = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(chars[at..at + len].iter().collect());
        at += len;
    }
    out
}

/// Final token counts of a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
    pub reasoning: u64,
}

impl Usage {
    pub fn of(reply: &Reply, info: &RequestInfo) -> Usage {
        let spec = reply.usage.clone().unwrap_or_default();
        let produced: usize = reply
            .events
            .iter()
            .map(|e| match e {
                ScriptEvent::Text(t) | ScriptEvent::Reasoning(t) | ScriptEvent::Endless(t) => {
                    t.len()
                }
                ScriptEvent::ToolCall(t) => t.arguments.len(),
                ScriptEvent::Message(m) => m.whole().len(),
                _ => 0,
            })
            .sum();
        Usage {
            prompt: spec.prompt_tokens.unwrap_or(info.prompt_estimate),
            completion: spec.completion_tokens.unwrap_or((produced / 4) as u64),
            cached: spec.cached_tokens.unwrap_or(0),
            reasoning: spec.reasoning_tokens.unwrap_or(0),
        }
    }

    pub fn chat_json(&self) -> Value {
        json!({
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
            "prompt_tokens_details": {"cached_tokens": self.cached},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning},
        })
    }

    pub fn responses_json(&self) -> Value {
        json!({
            "input_tokens": self.prompt,
            "input_tokens_details": {"cached_tokens": self.cached},
            "output_tokens": self.completion,
            "output_tokens_details": {"reasoning_tokens": self.reasoning},
            "total_tokens": self.prompt + self.completion,
        })
    }
}

fn stream_error_type(e: &StreamErrorSpec) -> String {
    e.kind
        .clone()
        .or_else(|| e.code.clone())
        .unwrap_or_else(|| "server_error".to_string())
}

/// The JSON error object used for in-stream chat errors and non-stream failures.
pub fn stream_error_json(e: &StreamErrorSpec) -> Value {
    json!({"error": {"message": e.message, "type": stream_error_type(e), "code": e.code}})
}

fn sse_data(v: &Value) -> Action {
    Action::Send(Bytes::from(format!("data: {v}\n\n")))
}

// ---------------------------------------------------------------- chat

/// The SSE body of a streamed `chat/completions` reply.
pub fn chat_stream(reply: &Reply, info: &RequestInfo) -> Vec<Action> {
    let id = format!("chatcmpl-mock-{}", info.seq);
    let created = now_secs();
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": info.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut out = vec![sse_data(&chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ))];
    let mut tool_index = 0usize;
    let mut errored = false;
    for event in &reply.events {
        match event {
            ScriptEvent::Reasoning(t) => {
                for piece in split_text(t) {
                    out.push(sse_data(&chunk(
                        json!({"reasoning_content": piece}),
                        Value::Null,
                    )));
                }
            }
            ScriptEvent::Text(t) => {
                for piece in split_text(t) {
                    out.push(sse_data(&chunk(json!({"content": piece}), Value::Null)));
                }
            }
            ScriptEvent::Message(m) => {
                for piece in m.pieces() {
                    out.push(sse_data(&chunk(json!({"content": piece}), Value::Null)));
                }
            }
            ScriptEvent::ToolCall(tc) => {
                let piece = |frag: &str| {
                    let call = json!({"index": tool_index, "function": {"arguments": frag}});
                    sse_data(&chunk(json!({"tool_calls": [call]}), Value::Null))
                };
                for (i, frag) in fragments(tc).into_iter().enumerate() {
                    match frag {
                        Fragment::Text(frag) if i == 0 => {
                            let call = json!({"index": tool_index, "id": tc.id, "type": "function",
                                   "function": {"name": tc.name, "arguments": frag}});
                            out.push(sse_data(&chunk(json!({"tool_calls": [call]}), Value::Null)));
                        }
                        Fragment::Text(frag) => out.push(piece(&frag)),
                        Fragment::Pad(bytes) => pad_actions(&mut out, bytes, piece),
                    }
                }
                tool_index += 1;
            }
            ScriptEvent::DelayMs(ms) => out.push(Action::Sleep(*ms)),
            ScriptEvent::Raw(raw) => out.push(Action::Send(Bytes::from(raw.clone()))),
            ScriptEvent::StreamError(e) => {
                out.push(sse_data(&stream_error_json(e)));
                errored = true;
            }
            ScriptEvent::Cut(true) => {
                out.push(Action::Abort);
                return out;
            }
            ScriptEvent::Cut(false) => {}
            ScriptEvent::Endless(t) => {
                out.push(sse_data(&chunk(json!({"content": t}), Value::Null)));
                endless(&mut out);
                return out;
            }
        }
    }
    if errored {
        return out;
    }
    let usage = Usage::of(reply, info).chat_json();
    let mut finish = chunk(json!({}), json!(reply.effective_finish_reason()));
    if reply.omits_usage() {
        out.push(sse_data(&finish));
    } else if info.include_usage {
        out.push(sse_data(&finish));
        out.push(sse_data(&json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": info.model,
            "choices": [],
            "usage": usage,
        })));
    } else {
        finish["usage"] = usage;
        out.push(sse_data(&finish));
    }
    out.push(Action::Send(Bytes::from_static(b"data: [DONE]\n\n")));
    out
}

/// The `chat.completion` object for a `"stream": false` request.
pub fn chat_json(reply: &Reply, info: &RequestInfo) -> Value {
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut tool_calls = Vec::new();
    for event in &reply.events {
        match event {
            ScriptEvent::Text(t) => content.push_str(t),
            ScriptEvent::Message(m) => content.push_str(&m.whole()),
            ScriptEvent::Reasoning(t) => reasoning.push_str(t),
            ScriptEvent::ToolCall(tc) => tool_calls.push(json!({
                "id": tc.id, "type": "function",
                "function": {"name": tc.name, "arguments": tc.arguments},
            })),
            _ => {}
        }
    }
    let mut message = json!({
        "role": "assistant",
        "content": if content.is_empty() && !tool_calls.is_empty() { Value::Null } else { json!(content) },
    });
    if !reasoning.is_empty() {
        message["reasoning_content"] = json!(reasoning);
    }
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    let mut out = json!({
        "id": format!("chatcmpl-mock-{}", info.seq),
        "object": "chat.completion",
        "created": now_secs(),
        "model": info.model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.effective_finish_reason()}],
        "usage": Usage::of(reply, info).chat_json(),
    });
    if let Some(o) = out.as_object_mut().filter(|_| reply.omits_usage()) {
        o.remove("usage");
    }
    out
}

// ---------------------------------------------------------------- responses

enum OpenItem {
    Reasoning {
        id: String,
        index: usize,
        text: String,
    },
    Message {
        id: String,
        index: usize,
        text: String,
        phase: Option<String>,
    },
}

struct ResponsesWriter {
    out: Vec<Action>,
    sequence: u64,
    items: Vec<Value>,
    open: Option<OpenItem>,
    seq: u64,
}

impl ResponsesWriter {
    fn event(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        self.out.push(Action::Send(Bytes::from(format!(
            "event: {kind}\ndata: {data}\n\n"
        ))));
    }

    fn next_index(&self) -> usize {
        self.items.len() + usize::from(self.open.is_some())
    }

    fn close(&mut self) {
        let Some(open) = self.open.take() else {
            return;
        };
        let (index, item) = match open {
            OpenItem::Reasoning { id, index, text } => (
                index,
                json!({"type": "reasoning", "id": id,
                       "summary": [{"type": "summary_text", "text": text}]}),
            ),
            OpenItem::Message {
                id,
                index,
                text,
                phase,
            } => {
                let mut item = json!({"type": "message", "role": "assistant", "id": id,
                       "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]});
                if let Some(phase) = phase {
                    item["phase"] = json!(phase);
                }
                (index, item)
            }
        };
        self.event(
            "response.output_item.done",
            json!({"output_index": index, "item": item.clone()}),
        );
        self.items.push(item);
    }

    fn reasoning(&mut self, text: &str) {
        if !matches!(self.open, Some(OpenItem::Reasoning { .. })) {
            self.close();
            let index = self.next_index();
            let id = format!("rs_mock_{}_{index}", self.seq);
            self.event(
                "response.output_item.added",
                json!({"output_index": index, "item": {"type": "reasoning", "id": id, "summary": []}}),
            );
            self.open = Some(OpenItem::Reasoning {
                id,
                index,
                text: String::new(),
            });
        }
        let (id, index) = match &mut self.open {
            Some(OpenItem::Reasoning { id, index, text: t }) => {
                t.push_str(text);
                (id.clone(), *index)
            }
            _ => unreachable!(),
        };
        for piece in split_text(text) {
            self.event(
                "response.reasoning_summary_text.delta",
                json!({"item_id": id, "output_index": index, "summary_index": 0, "delta": piece}),
            );
        }
    }

    /// Opens a message item, closing what was open.
    fn open_message(&mut self, phase: Option<String>) {
        self.close();
        let index = self.next_index();
        let id = format!("msg_mock_{}_{index}", self.seq);
        let mut item = json!({"type": "message", "id": id, "role": "assistant",
                              "status": "in_progress", "content": []});
        if let Some(phase) = &phase {
            item["phase"] = json!(phase);
        }
        self.event(
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
        );
        self.open = Some(OpenItem::Message {
            id,
            index,
            text: String::new(),
            phase,
        });
    }

    /// A message of its own, in its deltas, closed at once.
    fn message(&mut self, spec: &MessageSpec) {
        self.open_message(spec.phase.clone());
        self.text_deltas(&spec.whole(), spec.pieces());
        self.close();
    }

    fn text(&mut self, text: &str) {
        if !matches!(self.open, Some(OpenItem::Message { .. })) {
            self.open_message(None);
        }
        self.text_deltas(text, split_text(text));
    }

    /// `text` into the open message, sent as `pieces`.
    fn text_deltas(&mut self, text: &str, pieces: Vec<String>) {
        let (id, index) = match &mut self.open {
            Some(OpenItem::Message {
                id, index, text: t, ..
            }) => {
                t.push_str(text);
                (id.clone(), *index)
            }
            _ => unreachable!(),
        };
        for piece in pieces {
            self.event(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": index, "content_index": 0, "delta": piece}),
            );
        }
    }

    fn tool_call(&mut self, tc: &ToolCallSpec) {
        let whole;
        let tc = match tc.pad {
            None => tc,
            Some(_) => {
                whole = ToolCallSpec {
                    arguments: padded_arguments(tc),
                    pad: None,
                    ..tc.clone()
                };
                &whole
            }
        };
        self.close();
        let index = self.next_index();
        let id = format!("fc_mock_{}_{index}", self.seq);
        self.event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "function_call", "id": id, "call_id": tc.id,
                   "name": tc.name, "arguments": "", "status": "in_progress"}}),
        );
        for frag in split_fragments(&tc.arguments, tc.fragments.unwrap_or(2)) {
            self.event(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": index, "delta": frag}),
            );
        }
        let item = json!({"type": "function_call", "id": id, "call_id": tc.id, "name": tc.name,
                          "arguments": tc.arguments, "status": "completed"});
        self.event(
            "response.output_item.done",
            json!({"output_index": index, "item": item.clone()}),
        );
        self.items.push(item);
    }
}

fn response_id(info: &RequestInfo) -> String {
    format!("resp_mock_{}", info.seq)
}

/// The final `response` object and the event type that carries it
/// (`response.completed` or `response.incomplete`).
fn final_response(
    reply: &Reply,
    info: &RequestInfo,
    created: u64,
    items: Vec<Value>,
) -> (&'static str, Value) {
    let incomplete = match reply.effective_finish_reason().as_str() {
        "length" => Some("max_output_tokens"),
        "content_filter" => Some("content_filter"),
        _ => None,
    };
    let mut response = json!({
        "id": response_id(info),
        "object": "response",
        "created_at": created,
        "model": info.model,
        "status": if incomplete.is_some() { "incomplete" } else { "completed" },
        "output": items,
        "usage": Usage::of(reply, info).responses_json(),
    });
    if let Some(o) = response.as_object_mut().filter(|_| reply.omits_usage()) {
        o.remove("usage");
    }
    match incomplete {
        Some(reason) => {
            response["incomplete_details"] = json!({"reason": reason});
            ("response.incomplete", response)
        }
        None => ("response.completed", response),
    }
}

/// The SSE body of a streamed `responses` reply.
pub fn responses_stream(reply: &Reply, info: &RequestInfo) -> Vec<Action> {
    let created = now_secs();
    let mut w = ResponsesWriter {
        out: Vec::new(),
        sequence: 0,
        items: Vec::new(),
        open: None,
        seq: info.seq,
    };
    w.event(
        "response.created",
        json!({"response": {"id": response_id(info), "object": "response", "created_at": created,
               "status": "in_progress", "model": info.model, "output": []}}),
    );
    let mut errored = false;
    for event in &reply.events {
        match event {
            ScriptEvent::Reasoning(t) => w.reasoning(t),
            ScriptEvent::Text(t) => w.text(t),
            ScriptEvent::Message(m) => w.message(m),
            ScriptEvent::ToolCall(tc) => w.tool_call(tc),
            ScriptEvent::DelayMs(ms) => w.out.push(Action::Sleep(*ms)),
            ScriptEvent::Raw(raw) => w.out.push(Action::Send(Bytes::from(raw.clone()))),
            ScriptEvent::StreamError(e) => {
                w.event(
                    "response.failed",
                    json!({"response": {"id": response_id(info), "object": "response",
                           "created_at": created, "status": "failed",
                           "error": {"code": e.code.clone().unwrap_or_else(|| stream_error_type(e)),
                                     "message": e.message}}}),
                );
                errored = true;
            }
            ScriptEvent::Cut(true) => {
                w.out.push(Action::Abort);
                return w.out;
            }
            ScriptEvent::Cut(false) => {}
            ScriptEvent::Endless(t) => {
                w.text(t);
                endless(&mut w.out);
                return w.out;
            }
        }
    }
    if errored {
        return w.out;
    }
    w.close();
    let items = std::mem::take(&mut w.items);
    let (kind, response) = final_response(reply, info, created, items);
    w.event(kind, json!({"response": response}));
    w.out
}

/// The `response` object for a `"stream": false` Responses request.
pub fn responses_json(reply: &Reply, info: &RequestInfo) -> Value {
    let mut w = ResponsesWriter {
        out: Vec::new(),
        sequence: 0,
        items: Vec::new(),
        open: None,
        seq: info.seq,
    };
    for event in &reply.events {
        match event {
            ScriptEvent::Reasoning(t) => w.reasoning(t),
            ScriptEvent::Text(t) => w.text(t),
            ScriptEvent::Message(m) => w.message(m),
            ScriptEvent::ToolCall(tc) => w.tool_call(tc),
            _ => {}
        }
    }
    w.close();
    final_response(reply, info, now_secs(), w.items).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_text_keeps_everything() {
        for text in [
            "",
            "one",
            "a b c",
            "  leading and trailing  ",
            "many words here to split into at most eight pieces of text ok yes",
        ] {
            let pieces = split_text(text);
            assert_eq!(pieces.concat(), text);
            assert!(pieces.len() <= 8);
        }
        assert_eq!(split_text("a b c"), vec!["a ", "b ", "c"]);
    }

    #[test]
    fn split_fragments_on_char_boundaries() {
        assert_eq!(split_fragments("", 3), vec![""]);
        assert_eq!(split_fragments("abcdefg", 3), vec!["abc", "de", "fg"]);
        assert_eq!(split_fragments("ab", 5), vec!["a", "b"]);
        assert_eq!(split_fragments("héllo→", 2).concat(), "héllo→");
        assert_eq!(split_fragments("xyz", 0), vec!["xyz"]);
    }
}
