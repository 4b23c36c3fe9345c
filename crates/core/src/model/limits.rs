//! Bounds on one model response, so that a broken or hostile provider cannot make a turn
//! unbounded in memory, session-log size, stderr or time. Both grow with the request's
//! `max_output_tokens`, which already bounds what an honest response can hold.
//!
//! - **Content** (answer text, reasoning, signatures, tool names, ids and arguments, and a
//!   fixed cost per tool call or content block): [`CONTENT_BYTES_PER_TOKEN`] bytes a token.
//!   A token is about 4 bytes of text; ×4 leaves room for long tokens (runs of spaces,
//!   escaped JSON). This is also the bound on output tokens: a response that streams text
//!   forever ends here, not at `request_timeout_ms`.
//! - **Stream** (every byte of the body: SSE framing, JSON around the deltas, keep-alive
//!   comments, empty deltas): [`STREAM_BYTES_PER_TOKEN`] bytes a token.
//!
//! Past either, the response ends with [`ModelError::TooLarge`] (not retried), before the
//! event that crossed the bound reaches the front end; nothing of it enters history or the
//! log.

use super::types::ModelError;

/// Content bytes one response may carry per token of `max_output_tokens`.
pub(crate) const CONTENT_BYTES_PER_TOKEN: u64 = 16;
/// Stream bytes one response may take per token of `max_output_tokens`.
pub(crate) const STREAM_BYTES_PER_TOKEN: u64 = 1024;
/// The bounds count at least this many tokens, so a request with a tiny
/// `max_output_tokens` still has room for a short answer.
const MIN_TOKENS: u64 = 4096;
/// What a tool call or content block costs besides its text (its bookkeeping), so a stream
/// of empty calls is bounded too.
pub(crate) const ITEM_COST: u64 = 64;

/// The bounds of one response.
#[derive(Debug, Clone)]
pub(crate) struct OutputLimits {
    provider: String,
    max_output_tokens: u64,
    content: u64,
    stream: u64,
}

impl OutputLimits {
    pub(crate) fn new(provider: &str, max_output_tokens: u64) -> Self {
        let tokens = max_output_tokens.max(MIN_TOKENS);
        OutputLimits {
            provider: provider.to_string(),
            max_output_tokens,
            content: tokens.saturating_mul(CONTENT_BYTES_PER_TOKEN),
            stream: tokens.saturating_mul(STREAM_BYTES_PER_TOKEN),
        }
    }

    /// `bytes` of content so far are within the bound.
    pub(crate) fn check_content(&self, bytes: u64) -> Result<(), ModelError> {
        if bytes <= self.content {
            return Ok(());
        }
        Err(self.too_large(format!(
            "{} bytes of text, reasoning and tool calls ({CONTENT_BYTES_PER_TOKEN} bytes a token of max_output_tokens = {})",
            self.content, self.max_output_tokens
        )))
    }

    /// `bytes` of stream so far are within the bound.
    pub(crate) fn check_stream(&self, bytes: u64) -> Result<(), ModelError> {
        if bytes <= self.stream {
            return Ok(());
        }
        Err(self.too_large(format!(
            "{} bytes of stream ({STREAM_BYTES_PER_TOKEN} bytes a token of max_output_tokens = {})",
            self.stream, self.max_output_tokens
        )))
    }

    fn too_large(&self, limit: String) -> ModelError {
        ModelError::TooLarge {
            provider: self.provider.clone(),
            limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StreamDelta;
    use crate::model::client::Accumulator;
    use crate::model::provider::{ProviderConfig, WireApi};
    use serde_json::json;

    fn provider(wire_api: WireApi) -> ProviderConfig {
        ProviderConfig {
            id: "hostile".into(),
            name: "Hostile".into(),
            base_url: "http://127.0.0.1:9".into(),
            env_key: None,
            api_key: None,
            wire_api,
            auth: Default::default(),
            http_headers: Default::default(),
            query_params: Default::default(),
            request_max_retries: 0,
            stream_max_retries: 0,
            stream_idle_timeout_ms: 1000,
            connect_timeout_ms: 1000,
            request_timeout_ms: 60_000,
            retry_base_delay_ms: 1,
            external_token: None,
        }
    }

    /// Feeds `chunk()` until the accumulator refuses it (at most `max` times); returns the
    /// error, the bytes fed and the bytes of deltas shown.
    fn feed_until_refused(
        wire: WireApi,
        max_output_tokens: u64,
        mut chunk: impl FnMut(usize) -> String,
        max: usize,
    ) -> (ModelError, usize, usize) {
        let mut acc = Accumulator::new(
            &provider(wire),
            OutputLimits::new("hostile", max_output_tokens),
        );
        let mut shown = 0;
        let mut fed = 0;
        for i in 0..max {
            let c = chunk(i);
            fed += c.len();
            let mut sink = |d: StreamDelta| match d {
                StreamDelta::Text { text: t, .. } | StreamDelta::Reasoning(t) => shown += t.len(),
                StreamDelta::MessageDone { .. } | StreamDelta::HostedSearch { .. } => {}
            };
            if let Err(e) = acc.feed(c.as_bytes(), &mut sink) {
                return (e, fed, shown);
            }
        }
        panic!("{fed} bytes were taken without a bound");
    }

    fn chat(delta: serde_json::Value) -> String {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
        )
    }

    #[test]
    fn huge_tool_arguments_are_stopped_at_the_content_bound() {
        let mb = "a".repeat(1 << 20);
        let (err, fed, _) = feed_until_refused(
            WireApi::Chat,
            32_768,
            |i| {
                let call = if i == 0 {
                    json!({"index": 0, "id": "c1", "function": {"name": "Probe", "arguments": mb}})
                } else {
                    json!({"index": 0, "function": {"arguments": mb}})
                };
                chat(json!({"tool_calls": [call]}))
            },
            100,
        );
        assert!(matches!(err, ModelError::TooLarge { .. }), "{err}");
        assert!(!err.is_retryable());
        assert!(
            err.to_string()
                .contains("hostile sent more than 524288 bytes")
        );
        assert!(fed <= 2 << 20, "{fed} bytes read");
        // Messages: 50 MB of input_json_delta in 1 MB pieces.
        let (err, fed, _) = feed_until_refused(
            WireApi::Messages,
            32_768,
            |i| {
                if i == 0 {
                    return "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Probe\",\"input\":{}}}\n\n".to_string();
                }
                let d = json!({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "input_json_delta", "partial_json": mb}});
                format!("event: content_block_delta\ndata: {d}\n\n")
            },
            50,
        );
        assert!(matches!(err, ModelError::TooLarge { .. }), "{err}");
        assert!(fed <= 2 << 20, "{fed} bytes read");
    }

    #[test]
    fn an_endless_message_ends_at_the_bound_and_never_shows_more() {
        for wire in [WireApi::Chat, WireApi::Responses, WireApi::Messages] {
            let (err, _, shown) = feed_until_refused(
                wire,
                8192,
                |i| {
                    match wire {
                    WireApi::Chat => chat(json!({"content": "all work and no play "})),
                    WireApi::Responses => format!(
                        "event: response.output_text.delta\ndata: {}\n\n",
                        json!({"type": "response.output_text.delta", "delta": "all work and no play "})
                    ),
                    WireApi::Messages if i == 0 => "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n".to_string(),
                    WireApi::Messages => format!(
                        "data: {}\n\n",
                        json!({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "text_delta", "text": "all work and no play "}})
                    ),
                }
                },
                1_000_000,
            );
            assert!(
                err.to_string().contains("max_output_tokens = 8192"),
                "{err}"
            );
            assert!(shown <= 8192 * 16, "{wire:?}: {shown} bytes shown");
        }
    }

    #[test]
    fn a_stream_of_nothing_ends_at_the_stream_bound() {
        // Keep-alive comments and empty deltas: no content, only bytes.
        let (err, fed, _) = feed_until_refused(
            WireApi::Chat,
            16,
            |i| {
                if i % 2 == 0 {
                    ": keep-alive\n\n".to_string()
                } else {
                    chat(json!({"content": ""}))
                }
            },
            10_000_000,
        );
        assert!(err.to_string().contains("bytes of stream"), "{err}");
        assert!(fed <= (4096 * 1024) + 1024, "{fed}");
    }

    #[test]
    fn bounds_grow_with_max_output_tokens_from_a_floor() {
        let l = OutputLimits::new("kimi", 32_768);
        assert!(l.check_content(512 * 1024).is_ok());
        let err = l.check_content(512 * 1024 + 1).unwrap_err().to_string();
        assert_eq!(
            err,
            "kimi sent more than 524288 bytes of text, reasoning and tool calls (16 bytes a token \
             of max_output_tokens = 32768) in one response; it was stopped"
        );
        assert!(l.check_stream(32 << 20).is_ok() && l.check_stream((32 << 20) + 1).is_err());
        let small = OutputLimits::new("m", 16);
        assert!(small.check_content(64 * 1024).is_ok());
        assert!(small.check_content(64 * 1024 + 1).is_err());
    }
}
