//! The mock model's script: which reply each model request gets.
//!
//! The JSON shape (see `tests/scripts/*.json`):
//!
//! ```json
//! {
//!   "replies": [
//!     {"status": 200, "headers": {}, "delay_ms": 0, "repeat": 1, "hang": false,
//!      "events": [{"reasoning": "…"}, {"text": "…"},
//!                 {"tool_call": {"id": "call_1", "name": "shell", "arguments": "{}", "fragments": 3}},
//!                 {"message": {"deltas": ["ab", "cd"], "phase": "commentary"}},
//!                 {"delay_ms": 50}, {"raw": "data: …\n\n"},
//!                 {"stream_error": {"message": "…", "code": "server_error"}}, {"cut": true},
//!                 {"endless": "text"}],
//!      "finish_reason": "stop",
//!      "usage": {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 2, "reasoning_tokens": 1}}
//!   ],
//!   "when_exhausted": {"status": 500, "error": {"type": "mock_exhausted", "message": "…"}}
//! }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Deserializer, Serialize};

/// A whole script: the replies served in order, and what to do once they run out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Script {
    #[serde(default)]
    pub replies: Vec<Reply>,
    /// Served (repeatedly) for every model request after `replies` are used up.
    /// Default: status 500, `{"error":{"type":"mock_exhausted","message":"mock script exhausted after N requests"}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_exhausted: Option<Reply>,
}

impl Script {
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Script {
            replies: replies.into_iter().collect(),
            when_exhausted: None,
        }
    }

    pub fn from_json(json: &str) -> anyhow::Result<Script> {
        serde_json::from_str(json).context("invalid mock script JSON")
    }

    pub fn from_file(path: impl AsRef<Path>) -> anyhow::Result<Script> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading mock script {}", path.display()))?;
        Script::from_json(&text).with_context(|| format!("in mock script {}", path.display()))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("script serializes")
    }

    /// Adds a reply at the end.
    pub fn reply(mut self, reply: Reply) -> Self {
        self.replies.push(reply);
        self
    }

    pub fn when_exhausted(mut self, reply: Reply) -> Self {
        self.when_exhausted = Some(reply);
        self
    }

    /// Number of model requests the script answers before it is exhausted.
    pub fn len_requests(&self) -> usize {
        self.replies.iter().map(|r| r.repeat_count() as usize).sum()
    }
}

/// One scripted answer to a model request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// HTTP status; default 200. Anything else answers with a JSON error body, no SSE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The error object for a non-200 status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorSpec>,
    /// Extra response headers (sent with errors and with streams alike).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Delay before the response headers are sent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// Accept the request and never answer: no status, no headers, the connection held open
    /// until the client gives up.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hang: bool,
    /// How many consecutive requests this reply serves (default 1; 0 counts as 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<ScriptEvent>,
    /// Default: "tool_calls" when the reply has a tool call, else "stop".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageSpec>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One step of a streamed reply. In JSON each is an object with a single key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptEvent {
    Reasoning(String),
    Text(String),
    /// An assistant message of its own (a new Responses `message` item, a new Messages text
    /// block, more content on Chat), sent in exactly the deltas given.
    Message(MessageSpec),
    ToolCall(ToolCallSpec),
    /// Sleep mid-stream (what was sent before is flushed first).
    DelayMs(u64),
    /// Bytes written verbatim into the body.
    Raw(String),
    /// An in-stream error event; the end of the stream (finish, usage, `[DONE]`,
    /// `response.completed`) is then left out.
    StreamError(StreamErrorSpec),
    /// `true`: end the body abruptly here (the connection is aborted).
    Cut(bool),
    /// Answer text that never ends: this text as one delta after another until the client
    /// hangs up (a provider stuck in a loop). Nothing after it is sent.
    Endless(String),
}

/// One message: `deltas` as they are sent (or `text`, split on spaces), and its Responses
/// `phase` (`commentary`, `final_answer`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deltas: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

impl MessageSpec {
    /// The deltas it is sent in.
    pub fn pieces(&self) -> Vec<String> {
        if self.deltas.is_empty() {
            crate::render::split_text(&self.text)
        } else {
            self.deltas.clone()
        }
    }

    /// The whole text.
    pub fn whole(&self) -> String {
        if self.deltas.is_empty() {
            self.text.clone()
        } else {
            self.deltas.concat()
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSpec {
    pub id: String,
    pub name: String,
    /// Sent as-is (may be invalid JSON on purpose). A JSON object or other
    /// non-string value is accepted too and serialized compactly.
    #[serde(deserialize_with = "string_or_json")]
    pub arguments: String,
    /// How many pieces `arguments` is sent in (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragments: Option<usize>,
    /// A huge input the mock never holds: `{{pad}}` in `arguments` becomes this many bytes
    /// of `a`, made as they are sent in 1 MiB pieces (Chat and Messages streams; the
    /// Responses stream, whose last event repeats the whole input, makes it at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pad: Option<u64>,
}

fn string_or_json<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(match value {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    })
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSpec {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamErrorSpec {
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Chat `error.type`; defaults to the code, else "server_error".
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// Token counts to report; each missing one gets its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Report no usage at all (a provider that leaves it out of the stream).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit: bool,
}

impl Reply {
    /// A 200 streamed reply with one text event.
    pub fn text(text: impl Into<String>) -> Self {
        Reply::default().then_text(text)
    }

    /// A 200 streamed reply with one tool call (arguments serialized from `arguments`,
    /// or used as-is when it is a JSON string).
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        Reply::default().then_tool_call(id, name, arguments)
    }

    /// A non-200 reply with a JSON error body. The error type is derived from the
    /// status (429 → "rate_limit_reached_error", 401 → "authentication_error", …).
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        let kind = match status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_denied_error",
            404 => "not_found_error",
            429 => "rate_limit_reached_error",
            500..=599 => "server_error",
            _ => "mock_error",
        };
        Reply {
            status: Some(status),
            error: Some(ErrorSpec {
                kind: Some(kind.to_string()),
                message: Some(message.into()),
                code: None,
            }),
            ..Reply::default()
        }
    }

    pub fn event(mut self, event: ScriptEvent) -> Self {
        self.events.push(event);
        self
    }

    pub fn then_text(self, text: impl Into<String>) -> Self {
        self.event(ScriptEvent::Text(text.into()))
    }

    /// A message of its own with a phase (see [`ScriptEvent::Message`]).
    pub fn then_message(self, text: impl Into<String>, phase: Option<&str>) -> Self {
        self.event(ScriptEvent::Message(MessageSpec {
            text: text.into(),
            deltas: Vec::new(),
            phase: phase.map(str::to_string),
        }))
    }

    /// A message sent in exactly these deltas.
    pub fn then_message_deltas(self, deltas: &[&str], phase: Option<&str>) -> Self {
        self.event(ScriptEvent::Message(MessageSpec {
            text: String::new(),
            deltas: deltas.iter().map(|d| d.to_string()).collect(),
            phase: phase.map(str::to_string),
        }))
    }

    pub fn then_reasoning(self, text: impl Into<String>) -> Self {
        self.event(ScriptEvent::Reasoning(text.into()))
    }

    pub fn then_tool_call(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        let arguments = match arguments {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        self.event(ScriptEvent::ToolCall(ToolCallSpec {
            id: id.into(),
            name: name.into(),
            arguments,
            fragments: None,
            pad: None,
        }))
    }

    /// A tool call whose arguments string is sent verbatim in `fragments` pieces.
    pub fn then_raw_tool_call(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
        fragments: usize,
    ) -> Self {
        self.event(ScriptEvent::ToolCall(ToolCallSpec {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            fragments: Some(fragments),
            pad: None,
        }))
    }

    /// A tool call whose `arguments` hold `{{pad}}`, sent with `bytes` bytes of `a` there
    /// (see [`ToolCallSpec::pad`]).
    pub fn then_padded_tool_call(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
        bytes: u64,
    ) -> Self {
        self.event(ScriptEvent::ToolCall(ToolCallSpec {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            fragments: None,
            pad: Some(bytes),
        }))
    }

    pub fn then_delay(self, ms: u64) -> Self {
        self.event(ScriptEvent::DelayMs(ms))
    }

    pub fn then_raw(self, raw: impl Into<String>) -> Self {
        self.event(ScriptEvent::Raw(raw.into()))
    }

    pub fn then_stream_error(self, message: impl Into<String>, code: impl Into<String>) -> Self {
        self.event(ScriptEvent::StreamError(StreamErrorSpec {
            message: message.into(),
            code: Some(code.into()),
            kind: None,
        }))
    }

    pub fn then_cut(self) -> Self {
        self.event(ScriptEvent::Cut(true))
    }

    /// Text streamed forever (see [`ScriptEvent::Endless`]).
    pub fn then_endless(self, text: impl Into<String>) -> Self {
        self.event(ScriptEvent::Endless(text.into()))
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// A provider that takes the request and never sends response headers.
    pub fn hang() -> Self {
        Reply {
            hang: true,
            ..Reply::default()
        }
    }

    pub fn with_delay(mut self, ms: u64) -> Self {
        self.delay_ms = ms;
        self
    }

    pub fn with_repeat(mut self, n: u32) -> Self {
        self.repeat = Some(n);
        self
    }

    pub fn with_finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    pub fn with_usage(
        mut self,
        prompt_tokens: u64,
        completion_tokens: u64,
        cached_tokens: u64,
        reasoning_tokens: u64,
    ) -> Self {
        self.usage = Some(UsageSpec {
            prompt_tokens: Some(prompt_tokens),
            completion_tokens: Some(completion_tokens),
            cached_tokens: Some(cached_tokens),
            reasoning_tokens: Some(reasoning_tokens),
            omit: false,
        });
        self
    }

    /// Reports no token usage, on every wire (a provider that never sends it).
    pub fn without_usage(mut self) -> Self {
        self.usage = Some(UsageSpec {
            omit: true,
            ..Default::default()
        });
        self
    }

    /// The reply leaves its usage out.
    pub fn omits_usage(&self) -> bool {
        self.usage.as_ref().is_some_and(|u| u.omit)
    }

    pub fn with_error_code(mut self, code: impl Into<String>) -> Self {
        self.error.get_or_insert_with(ErrorSpec::default).code = Some(code.into());
        self
    }

    pub fn status_code(&self) -> u16 {
        self.status.unwrap_or(200)
    }

    pub fn repeat_count(&self) -> u32 {
        self.repeat.unwrap_or(1).max(1)
    }

    pub fn has_tool_calls(&self) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e, ScriptEvent::ToolCall(_)))
    }

    pub fn effective_finish_reason(&self) -> String {
        match &self.finish_reason {
            Some(r) => r.clone(),
            None if self.has_tool_calls() => "tool_calls".to_string(),
            None => "stop".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_documented_shape() {
        let script = Script::from_json(
            r#"{
              "replies": [
                {
                  "status": 200,
                  "error": {"type": "rate_limit_reached_error", "message": "m", "code": "c"},
                  "headers": {"retry-after": "0"},
                  "delay_ms": 0,
                  "repeat": 1,
                  "events": [
                    {"reasoning": "thinking text"},
                    {"text": "some answer text"},
                    {"tool_call": {"id": "call_1", "name": "shell", "arguments": "{\"command\":\"ls\"}", "fragments": 3}},
                    {"delay_ms": 50},
                    {"raw": "data: {not json\n\n"},
                    {"stream_error": {"message": "upstream exploded", "code": "server_error"}},
                    {"cut": true}
                  ],
                  "finish_reason": "stop",
                  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 2, "reasoning_tokens": 1}
                }
              ],
              "when_exhausted": {"status": 500, "error": {"type": "mock_exhausted", "message": "mock script exhausted"}}
            }"#,
        )
        .unwrap();
        let r = &script.replies[0];
        assert_eq!(r.events.len(), 7);
        assert_eq!(
            r.events[2],
            ScriptEvent::ToolCall(ToolCallSpec {
                id: "call_1".into(),
                name: "shell".into(),
                arguments: "{\"command\":\"ls\"}".into(),
                fragments: Some(3),
                pad: None,
            })
        );
        assert_eq!(r.events[3], ScriptEvent::DelayMs(50));
        assert_eq!(r.events[6], ScriptEvent::Cut(true));
        assert_eq!(r.usage.as_ref().unwrap().cached_tokens, Some(2));
        assert_eq!(script.when_exhausted.unwrap().status, Some(500));
        // Round trip.
        let again = Script::from_json(&script_roundtrip()).unwrap();
        assert_eq!(again.replies.len(), 2);
    }

    fn script_roundtrip() -> String {
        Script::new([
            Reply::text("hi").then_reasoning("hmm"),
            Reply::tool_call("c1", "shell", json!({"command": "ls"})).with_repeat(2),
        ])
        .to_json()
    }

    #[test]
    fn object_arguments_are_serialized() {
        let s = Script::from_json(
            r#"{"replies":[{"events":[{"tool_call":{"id":"a","name":"b","arguments":{"x":1}}}]}]}"#,
        )
        .unwrap();
        match &s.replies[0].events[0] {
            ScriptEvent::ToolCall(t) => assert_eq!(t.arguments, r#"{"x":1}"#),
            e => panic!("{e:?}"),
        }
        assert_eq!(s.replies[0].effective_finish_reason(), "tool_calls");
        assert_eq!(s.len_requests(), 1);
    }

    #[test]
    fn constructors() {
        let e = Reply::error(429, "slow down").with_header("retry-after", "0");
        assert_eq!(e.status_code(), 429);
        assert_eq!(
            e.error.unwrap().kind.as_deref(),
            Some("rate_limit_reached_error")
        );
        assert_eq!(Reply::text("x").effective_finish_reason(), "stop");
        assert_eq!(Reply::text("x").with_repeat(0).repeat_count(), 1);
    }
}
