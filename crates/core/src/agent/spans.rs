//! A session's spans, for OpenTelemetry: the session, each turn, each model request and each
//! tool call, with token usage, retries and outcome (latency is the span's own duration).
//! They are `tracing` spans of the target [`TARGET`]: the binary exports them when `[otel]`
//! asks (`crates/interpreter/src/otel.rs`); otherwise no subscriber enables the target and a
//! span costs one disabled-callsite check.
//!
//! Attribute names follow OpenTelemetry's GenAI conventions where one exists. No span holds a
//! tool's arguments or output, and the prompt only with `[otel] log_user_prompt`, redacted.

use interpreter_protocol::TokenUsage;
use tracing::Span;
use tracing::field::Empty;

/// The `tracing` target every span here has; the exporter listens to it alone.
pub const TARGET: &str = "interpreter::otel";

/// A session's span: the parent of its turns. A session is a trace's root; a subagent's
/// (`parent_id` set) sits under the tool call that started it.
pub(super) fn session(id: &str, parent_id: Option<&str>, config: &crate::config::Config) -> Span {
    let (model, provider) = (config.model.as_str(), config.provider.id.as_str());
    match parent_id {
        None => tracing::info_span!(
            target: "interpreter::otel",
            parent: None,
            "session",
            otel.name = "session",
            session.id = id,
            gen_ai.request.model = model,
            gen_ai.provider.name = provider,
        ),
        Some(parent) => tracing::info_span!(
            target: "interpreter::otel",
            "session",
            otel.name = "subagent",
            session.id = id,
            session.parent_id = parent,
            gen_ai.request.model = model,
            gen_ai.provider.name = provider,
        ),
    }
}

/// A turn's span, under its session's; `prompt` only when `log_user_prompt` is on.
pub(super) fn turn(session: &Span, turn_id: &str, harness: &str, prompt: Option<&str>) -> Span {
    let span = tracing::info_span!(
        target: "interpreter::otel",
        parent: session,
        "turn",
        otel.name = "turn",
        turn.id = turn_id,
        interpreter.harness = harness,
        user.prompt = Empty,
        interpreter.turn.outcome = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cached_input_tokens = Empty,
        otel.status_code = Empty,
    );
    if let Some(p) = prompt {
        span.record("user.prompt", crate::secrets::redact(p).as_ref());
    }
    span
}

/// Records how a turn ended and what it spent.
pub(super) fn end_turn(span: &Span, outcome: &str, failed: bool, usage: &TokenUsage) {
    span.record("interpreter.turn.outcome", outcome);
    record_usage(span, usage);
    if failed {
        span.record("otel.status_code", "ERROR");
    }
}

/// A model request's span, under the current (turn) span.
pub(super) fn model_request(model: &str, provider: &str) -> Span {
    tracing::info_span!(
        target: "interpreter::otel",
        "model_request",
        otel.name = "chat",
        gen_ai.operation.name = "chat",
        gen_ai.request.model = model,
        gen_ai.provider.name = provider,
        interpreter.retries = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cached_input_tokens = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    )
}

/// Records a request's end: its usage, or its error (a short kind, never a body).
pub(super) fn end_request(
    span: &Span,
    retries: u64,
    usage: Option<&TokenUsage>,
    error: Option<&str>,
) {
    span.record("interpreter.retries", int(retries));
    if let Some(u) = usage {
        record_usage(span, u);
    }
    if let Some(kind) = error {
        span.record("error.type", kind);
        span.record("otel.status_code", "ERROR");
    }
}

/// A tool call's span, under the current (turn) span.
pub(super) fn tool_call(tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        target: "interpreter::otel",
        "tool_call",
        otel.name = format!("execute_tool {tool}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        interpreter.tool.outcome = Empty,
        otel.status_code = Empty,
    )
}

/// Records a call's outcome.
pub(super) fn end_tool_call(span: &Span, failed: bool) {
    span.record(
        "interpreter.tool.outcome",
        if failed { "error" } else { "ok" },
    );
    if failed {
        span.record("otel.status_code", "ERROR");
    }
}

/// A model error's kind, for `error.type`: never its message, which may quote a body.
pub(super) fn error_kind(e: &crate::model::ModelError) -> &'static str {
    use crate::model::ModelError as E;
    match e {
        E::Http { .. } => "http",
        E::QuotaExhausted { .. } => "quota_exhausted",
        E::Connect { .. } => "connect",
        E::StreamDisconnected(_) => "stream_disconnected",
        E::StreamError { .. } => "stream_error",
        E::Timeout(_) => "timeout",
        E::Cancelled => "cancelled",
        E::TooLarge { .. } => "too_large",
    }
}

fn record_usage(span: &Span, u: &TokenUsage) {
    span.record("gen_ai.usage.input_tokens", int(u.input_tokens));
    span.record("gen_ai.usage.output_tokens", int(u.output_tokens));
    span.record(
        "gen_ai.usage.cached_input_tokens",
        int(u.cached_input_tokens),
    );
}

/// OpenTelemetry has signed integers only: a `u64` would be exported as a string.
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
