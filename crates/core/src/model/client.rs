//! The HTTP side of a provider: one streamed request, with retries, timeouts and cancellation.

use futures::StreamExt;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::chat;
use super::limits::OutputLimits;
use super::provider::ProviderConfig;
use super::sse::{SseDecoder, SseEvent};
use super::types::{ModelError, ModelRequest, ModelResponse, StreamDelta};
use super::wire::{self, WireStream};

/// One HTTP client per connect timeout for the whole process: sessions to the same provider
/// share its connection pool, and TLS is configured once.
fn shared_http(connect_timeout_ms: u64) -> reqwest::Result<reqwest::Client> {
    static CLIENTS: std::sync::Mutex<Vec<(u64, reqwest::Client)>> =
        std::sync::Mutex::new(Vec::new());
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = clients.iter().find(|(t, _)| *t == connect_timeout_ms) {
        return Ok(c.clone());
    }
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_millis(connect_timeout_ms))
        .user_agent(concat!("interpreter/", env!("CARGO_PKG_VERSION")))
        .build()?;
    clients.push((connect_timeout_ms, client.clone()));
    Ok(client)
}

/// Cap on an error body we read into memory.
const MAX_ERROR_BODY: usize = 64 * 1024;

#[derive(Clone)]
pub(crate) struct ModelClient {
    /// Built on the first request (see [`shared_http`]): a session that never prompts never
    /// sets up TLS.
    http: std::sync::OnceLock<reqwest::Client>,
    provider: ProviderConfig,
    api_key: Option<String>,
    originator: String,
}

/// Called before each retry with a human line ("retrying in 2s (attempt 2/5): …").
pub(crate) type RetryNotice<'a> = &'a mut (dyn FnMut(String) + Send);
pub(crate) type DeltaSink<'a> = &'a mut (dyn FnMut(StreamDelta) + Send);
/// Called while nothing visible arrives (see [`Waiting`]).
pub(crate) type WaitNotice<'a> = &'a mut (dyn FnMut(Waiting) + Send);

/// The first [`Waiting`] notice comes after this long without visible output…
pub(crate) const WAIT_NOTICE_AFTER: Duration = Duration::from_secs(5);
/// …then one every this long while it lasts.
pub(crate) const WAIT_NOTICE_EVERY: Duration = Duration::from_secs(10);

/// The client is waiting for the provider: no response yet, or nothing visible in the stream
/// (K3 can think for minutes before its first token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Waiting {
    /// 1 for the first try of this request, 2 for the first retry, …
    pub attempt: u32,
    /// Since the request started, retries and their back-off included.
    pub elapsed: Duration,
}

/// When to tell the caller that it is waiting, for one request.
struct Watch<'a> {
    started: Instant,
    attempt: u32,
    /// Since when nothing visible arrived.
    quiet_since: Instant,
    last_notice: Option<Instant>,
    notify: WaitNotice<'a>,
}

impl Watch<'_> {
    fn next_notice(&self) -> Instant {
        let first = self.quiet_since + WAIT_NOTICE_AFTER;
        match self.last_notice {
            Some(t) => first.max(t + WAIT_NOTICE_EVERY),
            None => first,
        }
    }

    fn notify(&mut self) {
        let now = Instant::now();
        self.last_notice = Some(now);
        (self.notify)(Waiting {
            attempt: self.attempt,
            elapsed: now - self.started,
        });
    }

    /// Something visible arrived: the quiet period starts again.
    fn progress(&mut self) {
        self.quiet_since = Instant::now();
        self.last_notice = None;
    }

    fn next_attempt(&mut self) {
        self.attempt += 1;
        self.progress();
    }
}

/// Where an attempt stands in time: its total deadline (`request_timeout_ms`) and the idle
/// bound on every wait for the provider (`stream_idle_timeout_ms`).
#[derive(Clone, Copy)]
struct Bounds {
    deadline: Instant,
    idle: Duration,
}

impl ModelClient {
    pub(crate) fn new(provider: ProviderConfig, api_key: Option<String>) -> anyhow::Result<Self> {
        provider.register_secrets(api_key.as_deref());
        let originator = std::env::var("CODEX_INTERNAL_ORIGINATOR_OVERRIDE")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "interpreter".to_string());
        Ok(ModelClient {
            http: std::sync::OnceLock::new(),
            provider,
            api_key,
            originator,
        })
    }

    fn endpoint(&self) -> String {
        wire::endpoint(&self.provider)
    }

    /// The exact JSON body for a request (also used by `interpreter debug prompt`).
    pub(crate) fn request_body(&self, req: &ModelRequest<'_>) -> serde_json::Value {
        wire::build_body(&self.provider, req)
    }

    /// Streams one model response, retrying what is worth retrying.
    ///
    /// Every wait on the provider is bounded: connecting by `connect_timeout_ms`, the response
    /// headers and then each read of the body by `stream_idle_timeout_ms` (counted from the
    /// request on), a whole attempt by `request_timeout_ms`. A provider that never answers
    /// thus costs at most `(request_max_retries + 1) × stream_idle_timeout_ms` plus the
    /// back-off between attempts. While nothing visible arrives, `on_wait` hears about it
    /// after [`WAIT_NOTICE_AFTER`] and then every [`WAIT_NOTICE_EVERY`].
    ///
    /// The response always has a usage: what the provider left out is estimated from the
    /// body's bytes and the response's content (see [`super::usage`]).
    pub(crate) async fn stream(
        &self,
        req: &ModelRequest<'_>,
        on_delta: DeltaSink<'_>,
        on_retry: RetryNotice<'_>,
        on_wait: WaitNotice<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        // Serialized once: every attempt sends these bytes, and their length is the request's
        // size when the provider reports no usage.
        let body = bytes::Bytes::from(self.request_body(req).to_string());
        let limits = OutputLimits::new(&self.provider.id, req.max_output_tokens);
        let now = Instant::now();
        let mut watch = Watch {
            started: now,
            attempt: 0,
            quiet_since: now,
            last_notice: None,
            notify: on_wait,
        };
        let mut request_failures = 0u32;
        let mut stream_failures = 0u32;
        loop {
            watch.next_attempt();
            let err = match self
                .attempt(&body, &limits, on_delta, &mut watch, cancel)
                .await
            {
                Ok(r) => return Ok(r),
                Err(e) => e,
            };
            if !err.is_retryable() {
                return Err(err);
            }
            let (used, budget) = if err.is_stream_failure() {
                stream_failures += 1;
                (stream_failures, self.provider.stream_max_retries)
            } else {
                request_failures += 1;
                (request_failures, self.provider.request_max_retries)
            };
            if used > budget {
                return Err(err);
            }
            let delay = match &err {
                ModelError::Http {
                    retry_after_ms: Some(ms),
                    ..
                } => Duration::from_millis(*ms),
                _ => backoff(self.provider.retry_base_delay_ms, used),
            };
            on_retry(format!(
                "{err}; retrying in {:.1}s (retry {used}/{budget})",
                delay.as_secs_f64()
            ));
            tokio::select! {
                _ = cancel.cancelled() => return Err(ModelError::Cancelled),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// One try: send, wait for the headers, read the stream to its end.
    async fn attempt(
        &self,
        body: &bytes::Bytes,
        limits: &OutputLimits,
        on_delta: DeltaSink<'_>,
        watch: &mut Watch<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let url = self.endpoint();
        let request = self.build_request(&url, body)?;
        let bounds = Bounds {
            deadline: Instant::now() + Duration::from_millis(self.provider.request_timeout_ms),
            idle: Duration::from_millis(self.provider.stream_idle_timeout_ms),
        };
        let resp = self
            .response_headers(request, &url, bounds, watch, cancel)
            .await?;
        if !resp.status().is_success() {
            return Err(self.http_error(resp, bounds.idle).await);
        }
        let acc = Accumulator::new(&self.provider, limits.clone());
        self.read_stream(resp, bounds, acc, on_delta, watch, cancel)
            .await?
            .finish(on_delta, body.len() as u64)
    }

    /// The process-wide HTTP client (see [`shared_http`]), set up on first use.
    fn http(&self, url: &str) -> Result<&reqwest::Client, ModelError> {
        if let Some(h) = self.http.get() {
            return Ok(h);
        }
        let h = shared_http(self.provider.connect_timeout_ms).map_err(|e| ModelError::Connect {
            provider: self.provider.id.clone(),
            url: url.to_string(),
            message: format!("could not set up the HTTP client: {e}"),
        })?;
        Ok(self.http.get_or_init(|| h))
    }

    fn build_request(
        &self,
        url: &str,
        body: &bytes::Bytes,
    ) -> Result<reqwest::RequestBuilder, ModelError> {
        let mut rb = self
            .http(url)?
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .header("originator", &self.originator)
            .body(body.clone());
        if !self.provider.query_params.is_empty() {
            rb = rb.query(&self.provider.query_params);
        }
        for (k, v) in wire::headers(&self.provider, self.api_key.as_deref()) {
            rb = rb.header(k, v);
        }
        for (k, v) in &self.provider.http_headers {
            rb = rb.header(k, v);
        }
        Ok(rb)
    }

    /// Sends the request and waits for the response headers, at most the idle timeout: a
    /// provider that accepts the connection and never answers is a timeout, retried.
    async fn response_headers(
        &self,
        request: reqwest::RequestBuilder,
        url: &str,
        bounds: Bounds,
        watch: &mut Watch<'_>,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, ModelError> {
        let idle_end = Instant::now() + bounds.idle;
        let send = request.send();
        tokio::pin!(send);
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return Err(ModelError::Cancelled),
                _ = tokio::time::sleep_until(bounds.deadline) => {
                    return Err(self.timeout("waiting for the response"));
                }
                _ = tokio::time::sleep_until(idle_end) => {
                    return Err(ModelError::Timeout(format!(
                        "{} sent no response headers within {}s (stream_idle_timeout_ms)",
                        self.provider.id,
                        bounds.idle.as_secs_f64()
                    )));
                }
                _ = tokio::time::sleep_until(watch.next_notice()) => watch.notify(),
                r = &mut send => return r.map_err(|e| self.connect_error(url, e)),
            }
        }
    }

    /// Reads the SSE body to its end, each read within the idle timeout, into `acc` (within
    /// its limits).
    async fn read_stream(
        &self,
        resp: reqwest::Response,
        bounds: Bounds,
        mut acc: Accumulator,
        on_delta: DeltaSink<'_>,
        watch: &mut Watch<'_>,
        cancel: &CancellationToken,
    ) -> Result<Accumulator, ModelError> {
        let mut bytes = resp.bytes_stream();
        let mut idle_end = Instant::now() + bounds.idle;
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return Err(ModelError::Cancelled),
                _ = tokio::time::sleep_until(bounds.deadline) => {
                    return Err(self.timeout("streaming the response"));
                }
                _ = tokio::time::sleep_until(idle_end) => {
                    return Err(ModelError::StreamDisconnected(format!(
                        "no data from {} for {}s (idle timeout)",
                        self.provider.id,
                        bounds.idle.as_secs()
                    )));
                }
                _ = tokio::time::sleep_until(watch.next_notice()) => {
                    watch.notify();
                    continue;
                }
                n = bytes.next() => n,
            };
            idle_end = Instant::now() + bounds.idle;
            match next {
                None => break,
                Some(Err(e)) => {
                    return Err(ModelError::StreamDisconnected(format!(
                        "reading the stream from {} failed {}: {}",
                        self.provider.id,
                        acc.partial_state(),
                        error_chain(&e)
                    )));
                }
                Some(Ok(chunk)) => {
                    if acc.feed(&chunk, on_delta)? {
                        watch.progress();
                    }
                }
            }
        }
        Ok(acc)
    }

    fn timeout(&self, what: &str) -> ModelError {
        ModelError::Timeout(format!(
            "{} did not finish within {}s while {what} (request_timeout_ms)",
            self.provider.id,
            self.provider.request_timeout_ms / 1000
        ))
    }

    fn connect_error(&self, url: &str, e: reqwest::Error) -> ModelError {
        let mut message = crate::secrets::redact(&error_chain(&e)).into_owned();
        if message.contains("dns error") {
            message.push_str(
                " (the host name did not resolve: check the provider's base_url and the network)",
            );
        }
        if e.is_timeout() {
            return ModelError::Timeout(format!("connecting to {url}: {message}"));
        }
        ModelError::Connect {
            provider: self.provider.id.clone(),
            url: url.to_string(),
            message,
        }
    }

    /// The error an HTTP status stands for, with the provider's message. The body is read
    /// at most [`MAX_ERROR_BODY`] bytes and each read within `idle`.
    async fn http_error(&self, resp: reqwest::Response, idle: Duration) -> ModelError {
        let status = resp.status().as_u16();
        let retry_after_ms = retry_after(resp.headers());
        let mut body = Vec::new();
        let mut stream = resp.bytes_stream();
        while let Ok(Some(Ok(c))) = tokio::time::timeout(idle, stream.next()).await {
            body.extend_from_slice(&c);
            if body.len() > MAX_ERROR_BODY {
                body.truncate(MAX_ERROR_BODY);
                break;
            }
        }
        // Providers echo keys back in 401 bodies: the message must not carry them on.
        let text = crate::secrets::redact(String::from_utf8_lossy(&body).trim()).into_owned();
        let parsed: Option<serde_json::Value> = serde_json::from_str(&text).ok();
        let err_obj = parsed.as_ref().and_then(|v| v.get("error"));
        let message = match err_obj {
            Some(e) => chat::error_message(e),
            None if text.is_empty() => format!("HTTP {status} with an empty body"),
            None => text.clone(),
        };
        let kind = err_obj
            .and_then(|e| e.get("type").or_else(|| e.get("code")))
            .and_then(|t| t.as_str())
            .unwrap_or("");
        let quota = matches!(
            kind,
            "exceeded_current_quota_error" | "insufficient_quota" | "insufficient_balance"
        ) || (matches!(status, 402 | 403 | 429)
            && (message.contains("quota")
                || message.contains("balance")
                || message.contains("usage limit")));
        if quota {
            return ModelError::QuotaExhausted {
                provider: self.provider.id.clone(),
                message,
            };
        }
        ModelError::Http {
            provider: self.provider.id.clone(),
            status,
            message,
            retry_after_ms,
        }
    }
}

/// The SSE decoder and the wire's accumulator for one response, within its limits.
pub(super) struct Accumulator {
    decoder: SseDecoder,
    wire: WireStream,
    limits: OutputLimits,
    /// Bytes of the body so far.
    streamed: u64,
}

impl Accumulator {
    pub(super) fn new(provider: &ProviderConfig, limits: OutputLimits) -> Self {
        Accumulator {
            decoder: SseDecoder::new(),
            wire: WireStream::new(provider),
            limits,
            streamed: 0,
        }
    }

    /// Feeds a chunk of the body; true when it produced visible deltas.
    pub(super) fn feed(
        &mut self,
        chunk: &[u8],
        on_delta: DeltaSink<'_>,
    ) -> Result<bool, ModelError> {
        self.streamed += chunk.len() as u64;
        self.limits.check_stream(self.streamed)?;
        let mut visible = false;
        for ev in self.decoder.feed(chunk) {
            visible |= self.event(&ev, on_delta)?;
        }
        Ok(visible)
    }

    fn event(&mut self, ev: &SseEvent, on_delta: DeltaSink<'_>) -> Result<bool, ModelError> {
        let deltas = self.wire.handle(ev)?;
        // Checked before the deltas go out: what crossed the bound is never shown.
        self.limits.check_content(self.wire.output_bytes())?;
        let visible = !deltas.is_empty();
        for d in deltas {
            on_delta(d);
        }
        Ok(visible)
    }

    fn partial_state(&self) -> String {
        self.wire.partial_state()
    }

    /// The whole response, its usage completed (see [`super::usage`]) for a request body of
    /// `request_bytes`.
    pub(super) fn finish(
        mut self,
        on_delta: DeltaSink<'_>,
        request_bytes: u64,
    ) -> Result<ModelResponse, ModelError> {
        if let Some(ev) = self.decoder.finish() {
            self.event(&ev, on_delta)?;
        }
        let content_bytes = self.wire.output_bytes();
        let mut resp = self.wire.finish()?;
        resp.usage = Some(super::usage::with_estimates(
            resp.usage,
            request_bytes,
            content_bytes,
        ));
        Ok(resp)
    }
}

/// reqwest's Display hides the cause ("error sending request"); walk the chain.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        message.push_str(": ");
        message.push_str(&s.to_string());
        src = s.source();
    }
    message
}

fn backoff(base_ms: u64, attempt: u32) -> Duration {
    let exp = base_ms.saturating_mul(1u64 << attempt.saturating_sub(1).min(10));
    let capped = exp.min(32_000);
    // Up to 25% jitter, from the clock rather than a RNG dependency.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    let jitter = if capped > 0 {
        nanos % (capped / 4 + 1)
    } else {
        0
    };
    Duration::from_millis(capped + jitter)
}

/// `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, capped at 5 minutes.
fn retry_after(h: &reqwest::header::HeaderMap) -> Option<u64> {
    let get = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).map(str::trim);
    let ms = if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        ms as u64
    } else {
        let v = get("retry-after")?;
        if let Ok(secs) = v.parse::<f64>() {
            (secs * 1000.0) as u64
        } else {
            let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
            let now = chrono::Utc::now();
            (when.timestamp_millis() - now.timestamp_millis()).max(0) as u64
        }
    };
    Some(ms.min(300_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(2000));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(150));
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(0));
    }

    /// A resolver that fails every lookup, as when the network or DNS is down.
    struct NoDns;

    impl reqwest::dns::Resolve for NoDns {
        fn resolve(&self, _: reqwest::dns::Name) -> reqwest::dns::Resolving {
            Box::pin(async { Err("Temporary failure in name resolution".into()) })
        }
    }

    #[tokio::test]
    async fn dns_failure_is_retried_then_reported_clearly() {
        let provider = ProviderConfig {
            id: "kimi".into(),
            name: "Kimi".into(),
            base_url: "https://api.unresolvable.invalid/v1".into(),
            env_key: None,
            api_key: None,
            wire_api: crate::model::provider::WireApi::Chat,
            auth: Default::default(),
            http_headers: Default::default(),
            query_params: Default::default(),
            request_max_retries: 2,
            stream_max_retries: 0,
            stream_idle_timeout_ms: 1000,
            connect_timeout_ms: 1000,
            request_timeout_ms: 5000,
            retry_base_delay_ms: 1,
            external_token: None,
        };
        let mut client = ModelClient::new(provider, None).unwrap();
        client.http = std::sync::OnceLock::from(
            reqwest::Client::builder()
                .dns_resolver(std::sync::Arc::new(NoDns))
                .build()
                .unwrap(),
        );
        let req = ModelRequest {
            model: "kimi-k3",
            system: "s",
            history: &[],
            tools: &[],
            prompt_cache_key: "k",
            max_output_tokens: 16,
            reasoning_effort: None,
            output_schema: None,
            hosted_search: None,
            temperature: None,
        };
        let mut notices = Vec::new();
        let err = client
            .stream(
                &req,
                &mut |_| {},
                &mut |m| notices.push(m),
                &mut |_| {},
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, ModelError::Connect { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains(
                "could not reach kimi at https://api.unresolvable.invalid/v1/chat/completions"
            ) && text.contains("Temporary failure in name resolution")
                && text.contains("did not resolve"),
            "{text}"
        );
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices[0].contains("retrying"), "{}", notices[0]);
    }

    fn provider_at(base_url: String, idle_ms: u64, retries: u32) -> ProviderConfig {
        ProviderConfig {
            id: "silent".into(),
            name: "Silent".into(),
            base_url,
            env_key: None,
            api_key: None,
            wire_api: crate::model::provider::WireApi::Chat,
            auth: Default::default(),
            http_headers: Default::default(),
            query_params: Default::default(),
            request_max_retries: retries,
            stream_max_retries: 0,
            stream_idle_timeout_ms: idle_ms,
            connect_timeout_ms: 1000,
            request_timeout_ms: 60_000,
            retry_base_delay_ms: 1,
            external_token: None,
        }
    }

    fn request() -> ModelRequest<'static> {
        ModelRequest {
            model: "m",
            system: "s",
            history: &[],
            tools: &[],
            prompt_cache_key: "k",
            max_output_tokens: 16,
            reasoning_effort: None,
            output_schema: None,
            hosted_search: None,
            temperature: None,
        }
    }

    /// A provider that accepts the connection and never sends response headers fails within
    /// the idle timeout per attempt, each attempt retried, instead of waiting for
    /// `request_timeout_ms`.
    #[tokio::test]
    async fn a_provider_that_never_answers_fails_within_the_idle_bound() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // Accepts, reads nothing, answers nothing; keeps the sockets open.
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in listener.incoming().flatten() {
                held.push(s);
            }
        });
        let client =
            ModelClient::new(provider_at(format!("http://{addr}/v1"), 300, 2), None).unwrap();
        let mut notices = Vec::new();
        let started = std::time::Instant::now();
        let err = client
            .stream(
                &request(),
                &mut |_| {},
                &mut |m| notices.push(m),
                &mut |_| {},
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        let took = started.elapsed();
        assert!(
            err.to_string()
                .contains("silent sent no response headers within 0.3s (stream_idle_timeout_ms)"),
            "{err}"
        );
        assert_eq!(notices.len(), 2, "{notices:?}");
        // Three attempts of 0.3 s and two short back-offs; generous for a loaded machine.
        assert!(took < Duration::from_secs(10), "{took:?}");
    }

    #[test]
    fn waiting_notices_start_after_a_quiet_period_and_repeat() {
        let start = Instant::now();
        let mut seen = Vec::new();
        let mut sink = |w: Waiting| seen.push(w.attempt);
        let mut w = Watch {
            started: start,
            attempt: 1,
            quiet_since: start,
            last_notice: None,
            notify: &mut sink,
        };
        assert_eq!(w.next_notice(), start + WAIT_NOTICE_AFTER);
        w.notify();
        assert!(w.next_notice() >= start + WAIT_NOTICE_EVERY);
        w.progress();
        assert!(w.next_notice() >= start + WAIT_NOTICE_AFTER);
        w.next_attempt();
        w.notify();
        assert_eq!(seen, vec![1, 2]);
    }

    #[test]
    fn backoff_grows_and_caps() {
        assert!(backoff(500, 1) >= Duration::from_millis(500));
        assert!(backoff(500, 3) >= Duration::from_millis(2000));
        assert!(backoff(500, 30) <= Duration::from_millis(40_000));
    }
}
