//! A response's token usage when the provider does not say it. Budgets (a goal's, automatic
//! compaction's) count tokens, so a provider that reports no usage, or zero, must not make
//! them endless: what it leaves out is estimated from bytes.
//!
//! - **Input**: the request body as sent (the JSON bytes on the wire), [`BYTES_PER_TOKEN`]
//!   bytes a token, rounded up. JSON and code run at about 3-4 bytes a token, so this is near
//!   what a provider bills; an image's data URL counts as its bytes, far more than a provider
//!   bills for it, which errs on the side of stopping early.
//! - **Output**: the response's content as the wire read it (answer text, reasoning,
//!   signatures, tool names, ids and arguments, plus [`super::limits::ITEM_COST`] a call or
//!   block; the measure [`super::limits`] bounds), at the same rate. The SSE framing around
//!   it is left out: it is tens of bytes a delta, not tokens the model produced.
//!
//! A count the provider gives (above zero) is kept as it is; each of input and output is
//! estimated on its own, so a provider that reports only output tokens still gets its input
//! counted. A provider that reports small but non-zero counts is believed.

use interpreter_protocol::TokenUsage;

/// Bytes counted as one token when the provider gives no count.
pub(crate) const BYTES_PER_TOKEN: u64 = 4;

/// `bytes` as tokens, rounded up: any request or content counts at least one.
pub(crate) fn estimate_tokens(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The usage to count for one response: the provider's, with input and output tokens it left
/// out (missing, or zero) estimated from `request_bytes` and `content_bytes`.
pub(crate) fn with_estimates(
    reported: Option<TokenUsage>,
    request_bytes: u64,
    content_bytes: u64,
) -> TokenUsage {
    let mut u = reported.unwrap_or_default();
    if u.input_tokens == 0 {
        u.input_tokens = estimate_tokens(request_bytes).max(u.cached_input_tokens);
    }
    if u.output_tokens == 0 {
        u.output_tokens = estimate_tokens(content_bytes).max(u.reasoning_output_tokens);
    }
    if reported.is_none_or(|r| r.input_tokens == 0 || r.output_tokens == 0) {
        tracing::debug!(
            ?reported,
            request_bytes,
            content_bytes,
            "the provider reported no token usage (or zero): counting an estimate"
        );
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, cached: u64, output: u64) -> TokenUsage {
        TokenUsage {
            input_tokens: input,
            cached_input_tokens: cached,
            output_tokens: output,
            reasoning_output_tokens: 0,
        }
    }

    #[test]
    fn missing_usage_is_estimated_from_the_request_and_the_content() {
        let u = with_estimates(None, 40_001, 9);
        assert_eq!((u.input_tokens, u.output_tokens), (10_001, 3));
        assert_eq!(u.cached_input_tokens, 0);
    }

    #[test]
    fn zero_counts_are_estimated_field_by_field() {
        let zero = with_estimates(Some(usage(0, 0, 0)), 400, 40);
        assert_eq!((zero.input_tokens, zero.output_tokens), (100, 10));
        // Output reported, input not (a stream whose start event was lost).
        let half = with_estimates(Some(usage(0, 0, 7)), 400, 40);
        assert_eq!((half.input_tokens, half.output_tokens), (100, 7));
        // Cached tokens are part of the input: the estimate is never below them.
        let cached = with_estimates(Some(usage(0, 500, 7)), 400, 40);
        assert_eq!(cached.input_tokens, 500);
    }

    #[test]
    fn reported_counts_are_kept() {
        assert_eq!(
            with_estimates(Some(usage(42, 12, 5)), 1_000_000, 1_000_000),
            usage(42, 12, 5)
        );
    }

    #[test]
    fn an_empty_response_costs_no_output() {
        let u = with_estimates(None, 4, 0);
        assert_eq!((u.input_tokens, u.output_tokens), (1, 0));
    }
}
