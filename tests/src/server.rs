//! The HTTP side of the mock: routing, the reply cursor, recording.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::render::{self, Action, RequestInfo};
use crate::render_messages;
use crate::script::{ErrorSpec, Reply, ScriptEvent};
use crate::{Script, render::stream_error_json};

/// One request as the mock saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Lowercased header name → value (repeated headers joined with ", ").
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON, else as a (lossy UTF-8) string; "" when empty.
    pub body: Value,
}

impl RecordedRequest {
    /// A `POST` to a `…/chat/completions`, `…/responses` or `…/messages` endpoint, other than
    /// a title request (see [`RecordedRequest::is_title_request`]).
    pub fn is_model_request(&self) -> bool {
        self.method == "POST" && endpoint_of(&self.path).is_some() && !self.is_title_request()
    }

    /// A harness's title request (opencode's): a model request whose user message asks for a
    /// conversation title. The mock answers it at once, with no reply of the script.
    pub fn is_title_request(&self) -> bool {
        self.method == "POST" && endpoint_of(&self.path).is_some() && is_title_body(&self.body)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// How to run a [`MockServer`](crate::MockServer).
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Append every recorded request to this file as JSONL.
    pub record_path: Option<PathBuf>,
    /// Log one line per request to stderr. The library also logs when the
    /// environment variable `MOCK_LLM_LOG` is set.
    pub log: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Chat,
    Responses,
    /// Anthropic Messages (`…/v1/messages`).
    Messages,
}

pub(crate) fn endpoint_of(path: &str) -> Option<Endpoint> {
    let path = path.trim_end_matches('/');
    if path.ends_with("/chat/completions") {
        Some(Endpoint::Chat)
    } else if path.ends_with("/responses") {
        Some(Endpoint::Responses)
    } else if path.ends_with("/messages") {
        Some(Endpoint::Messages)
    } else {
        None
    }
}

struct Cursor {
    script: Script,
    reply_index: usize,
    used_in_reply: u32,
    /// Model requests answered so far (scripted or exhausted).
    served: u64,
}

pub(crate) struct Shared {
    cursor: Mutex<Cursor>,
    requests: Mutex<Vec<RecordedRequest>>,
    record_file: Option<Mutex<File>>,
    log: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    pub(crate) fn new(script: Script, options: &ServerOptions) -> anyhow::Result<Shared> {
        let record_file = match &options.record_path {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("opening record file {}", path.display()))?,
            )),
            None => None,
        };
        Ok(Shared {
            cursor: Mutex::new(Cursor {
                script,
                reply_index: 0,
                used_in_reply: 0,
                served: 0,
            }),
            requests: Mutex::new(Vec::new()),
            record_file,
            log: options.log || std::env::var_os("MOCK_LLM_LOG").is_some(),
        })
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }

    pub(crate) fn clear_requests(&self) {
        lock(&self.requests).clear();
    }

    pub(crate) fn set_script(&self, script: Script) {
        let mut c = lock(&self.cursor);
        c.script = script;
        c.reply_index = 0;
        c.used_in_reply = 0;
    }

    fn record(&self, request: RecordedRequest) {
        if let Some(file) = &self.record_file {
            let mut line = serde_json::to_string(&request).expect("request serializes");
            line.push('\n');
            let mut f = lock(file);
            if let Err(e) = f.write_all(line.as_bytes()).and_then(|()| f.flush()) {
                eprintln!("mock-llm: failed to write record file: {e}");
            }
        }
        lock(&self.requests).push(request);
    }

    /// The reply for the next model request, its number, and a label for logs.
    fn next_reply(&self) -> (Reply, u64, String) {
        let mut c = lock(&self.cursor);
        c.served += 1;
        let seq = c.served;
        if let Some(reply) = c.script.replies.get(c.reply_index).cloned() {
            let total = reply.repeat_count();
            let label = if total > 1 {
                format!(
                    "reply {}/{} (repeat {}/{})",
                    c.reply_index + 1,
                    c.script.replies.len(),
                    c.used_in_reply + 1,
                    total
                )
            } else {
                format!("reply {}/{}", c.reply_index + 1, c.script.replies.len())
            };
            c.used_in_reply += 1;
            if c.used_in_reply >= total {
                c.reply_index += 1;
                c.used_in_reply = 0;
            }
            return (reply, seq, label);
        }
        let reply = c.script.when_exhausted.clone().unwrap_or_else(|| Reply {
            status: Some(500),
            error: Some(ErrorSpec {
                kind: Some("mock_exhausted".to_string()),
                message: Some(format!("mock script exhausted after {} requests", seq - 1)),
                code: None,
            }),
            ..Reply::default()
        });
        (reply, seq, "script exhausted".to_string())
    }
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .expect("valid response")
}

fn not_found(method: &Method, path: &str) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        &json!({"error": {"type": "not_found_error",
                          "message": format!("mock-llm: no route for {method} {path}"),
                          "code": null}}),
    )
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let method = parts.method.clone();
    let path = parts.uri.path().to_string();
    let bytes = match axum::body::to_bytes(body, 256 * 1024 * 1024).await {
        Ok(b) => b,
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": {"type": "invalid_request_error",
                                  "message": format!("mock-llm: could not read body: {e}")}}),
            );
        }
    };

    // Control endpoints: not recorded.
    if let Some(control) = path.strip_prefix("/_mock/") {
        return handle_control(&shared, &method, control, &bytes);
    }

    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let parsed: Value = if bytes.is_empty() {
        Value::String(String::new())
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    shared.record(RecordedRequest {
        method: method.to_string(),
        path: path.clone(),
        headers,
        body: parsed.clone(),
    });

    let endpoint = endpoint_of(&path);
    match (&method, endpoint) {
        (&Method::POST, Some(endpoint)) => {
            // A history the real API would refuse gets its 400, and uses up no reply.
            let verdict = match endpoint {
                Endpoint::Chat => crate::validate::chat(&parsed),
                Endpoint::Messages => crate::validate::messages(&parsed),
                Endpoint::Responses => Ok(()),
            };
            if let Err(message) = verdict {
                if shared.log {
                    eprintln!("mock-llm: {method} {path} -> 400 (invalid history: {message})");
                }
                return invalid_request(endpoint, &message);
            }
            if is_title_body(&parsed) {
                if shared.log {
                    eprintln!("mock-llm: {method} {path} -> title request");
                }
                let title = format!("Title of {}", last_user_text(&parsed).unwrap_or_default());
                return model_reply(endpoint, Reply::text(&title), 0, &parsed, bytes.len()).await;
            }
            let (reply, seq, label) = shared.next_reply();
            if shared.log {
                eprintln!(
                    "mock-llm: {method} {path} -> {label} (status {})",
                    reply.status_code()
                );
            }
            let reply = fill_templates(reply, &parsed);
            model_reply(endpoint, reply, seq, &parsed, bytes.len()).await
        }
        (&Method::POST, None) if path.ends_with("/coding/v1/search") => {
            if shared.log {
                eprintln!("mock-llm: {method} {path} -> Kimi Code search");
            }
            let host = parts
                .headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok());
            let bearer = parts
                .headers
                .get(header::AUTHORIZATION)
                .and_then(|h| h.to_str().ok())
                .is_some_and(|h| h.starts_with("Bearer ") && h.len() > 7);
            match bearer {
                true => crate::web::kimi_search(&parsed, host),
                false => json_response(
                    StatusCode::UNAUTHORIZED,
                    &json!({"error": {"message": "missing API key", "type": "authentication_error"}}),
                ),
            }
        }
        (&Method::GET, _) if path.starts_with("/web/") || path == "/search" => {
            if shared.log {
                eprintln!("mock-llm: {method} {path} -> web");
            }
            let host = parts
                .headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok());
            match crate::web::answer(&path, parts.uri.query(), host).await {
                Some(page) => page,
                None => not_found(&method, &path),
            }
        }
        (&Method::GET, _) if path.trim_end_matches('/').ends_with("/models") => {
            if shared.log {
                eprintln!("mock-llm: {method} {path} -> model list");
            }
            json_response(
                StatusCode::OK,
                &json!({"object": "list",
                        "data": [{"id": "mock-model", "object": "model", "owned_by": "mock"}]}),
            )
        }
        _ => {
            if shared.log {
                eprintln!("mock-llm: {method} {path} -> 404");
            }
            not_found(&method, &path)
        }
    }
}

fn handle_control(shared: &Shared, method: &Method, control: &str, body: &Bytes) -> Response {
    match (method, control.trim_end_matches('/')) {
        (&Method::GET, "requests") => json_response(StatusCode::OK, &json!(shared.requests())),
        (&Method::DELETE, "requests") => {
            shared.clear_requests();
            json_response(StatusCode::OK, &json!({"ok": true}))
        }
        (&Method::POST, "script") => match Script::from_json(&String::from_utf8_lossy(body)) {
            Ok(script) => {
                if shared.log {
                    eprintln!(
                        "mock-llm: script replaced ({} replies)",
                        script.replies.len()
                    );
                }
                shared.set_script(script);
                json_response(StatusCode::OK, &json!({"ok": true}))
            }
            Err(e) => json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": {"type": "invalid_request_error",
                                      "message": format!("{e:#}")}}),
            ),
        },
        _ => not_found(method, &format!("/_mock/{control}")),
    }
}

/// A response with `content_type`, then the reply's scripted headers (which
/// override the defaults).
fn scripted(reply: &Reply, status: StatusCode, content_type: &str, body: Body) -> Response {
    let mut response = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(body)
        .expect("valid response");
    if content_type == "text/event-stream" {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    for (name, value) in &reply.headers {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => {
                response.headers_mut().insert(n, v);
            }
            _ => eprintln!("mock-llm: skipping invalid scripted header {name:?}: {value:?}"),
        }
    }
    response
}

/// A 400 for a request that breaks the wire's rules, in that wire's error shape.
fn invalid_request(endpoint: Endpoint, message: &str) -> Response {
    let body = match endpoint {
        Endpoint::Messages => render_messages::error_json("invalid_request_error", message),
        _ => json!({"error": {"type": "invalid_request_error", "message": message, "code": null}}),
    };
    json_response(StatusCode::BAD_REQUEST, &body)
}

fn error_reply(endpoint: Endpoint, reply: &Reply, status: StatusCode) -> Response {
    let spec = reply.error.clone().unwrap_or_default();
    if endpoint == Endpoint::Messages {
        // Anthropic's shape; a kind derived from the status by `Reply::error` is renamed.
        let kind = match spec.kind.as_deref() {
            None
            | Some("server_error" | "rate_limit_reached_error" | "permission_denied_error") => {
                render_messages::error_kind(status.as_u16()).to_string()
            }
            Some(k) => k.to_string(),
        };
        let message = spec
            .message
            .unwrap_or_else(|| format!("mock error (status {})", status.as_u16()));
        let body = render_messages::error_json(&kind, &message);
        return scripted(
            reply,
            status,
            "application/json",
            Body::from(body.to_string()),
        );
    }
    let body = json!({"error": {
        "type": spec.kind.unwrap_or_else(|| "mock_error".to_string()),
        "message": spec.message.unwrap_or_else(|| format!("mock error (status {})", status.as_u16())),
        "code": spec.code,
    }});
    scripted(
        reply,
        status,
        "application/json",
        Body::from(body.to_string()),
    )
}

/// A body that plays `actions`: sends bytes, sleeps (after what came before has
/// been handed to the connection), or fails to abort the connection.
fn action_body(actions: Vec<Action>) -> Body {
    // The state: what is left to play, and bytes still to repeat (u64::MAX: forever).
    let start = (actions.into_iter(), None::<(Bytes, u64)>);
    let stream = futures::stream::unfold(start, |(mut it, repeat)| async move {
        if let Some((bytes, n)) = repeat.filter(|(_, n)| *n > 0) {
            let left = if n == u64::MAX { n } else { n - 1 };
            return Some((Ok(bytes.clone()), (it, Some((bytes, left)))));
        }
        loop {
            match it.next()? {
                Action::Send(bytes) => return Some((Ok(bytes), (it, None))),
                Action::Sleep(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                Action::Forever(bytes) => {
                    return Some((Ok(bytes.clone()), (it, Some((bytes, u64::MAX)))));
                }
                Action::Repeat(bytes, n) if n > 0 => {
                    return Some((Ok(bytes.clone()), (it, Some((bytes, n - 1)))));
                }
                Action::Repeat(..) => {}
                Action::Abort => {
                    // Let the connection flush what came before, then fail the body.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    return Some((
                        Err(std::io::Error::other("mock-llm: stream cut by script")),
                        (Vec::new().into_iter(), None),
                    ));
                }
            }
        }
    });
    Body::from_stream(stream)
}

/// `{{last_user}}` in a text event becomes the request's last user message, so one script
/// can answer many concurrent sessions, each with its own text. `{{last_uuid}}` in a tool
/// call's arguments becomes the last UUID the request's messages hold (a subagent's id from
/// an earlier result), so a script can continue a subagent the agent named.
fn fill_templates(mut reply: Reply, body: &Value) -> Reply {
    const UUID: &str = "{{last_uuid}}";
    if reply
        .events
        .iter()
        .any(|e| matches!(e, ScriptEvent::ToolCall(c) if c.arguments.contains(UUID)))
    {
        let uuid = last_uuid(body).unwrap_or_default();
        for e in &mut reply.events {
            if let ScriptEvent::ToolCall(c) = e {
                c.arguments = c.arguments.replace(UUID, &uuid);
            }
        }
    }
    const TEMPLATE: &str = "{{last_user}}";
    if !reply
        .events
        .iter()
        .any(|e| matches!(e, ScriptEvent::Text(t) if t.contains(TEMPLATE)))
    {
        return reply;
    }
    let last_user = last_user_text(body).unwrap_or_default();
    for e in &mut reply.events {
        if let ScriptEvent::Text(t) = e {
            *t = t.replace(TEMPLATE, &last_user);
        }
    }
    reply
}

/// The user message a title request starts with (opencode's, as the seed sends it).
const TITLE_ASK: &str = "Generate a title for this conversation:\n";

fn is_title_body(body: &Value) -> bool {
    body.get("messages")
        .and_then(Value::as_array)
        .is_some_and(|m| {
            m.iter().any(|m| {
                m.get("role").and_then(Value::as_str) == Some("user")
                    && m.get("content").and_then(Value::as_str) == Some(TITLE_ASK)
            })
        })
}

/// The last `8-4-4-4-12` hex id in the request's conversation.
fn last_uuid(body: &Value) -> Option<String> {
    let text = body
        .get("messages")
        .or_else(|| body.get("input"))?
        .to_string();
    let bytes = text.as_bytes();
    let shape = [8, 4, 4, 4, 12];
    let is_at = |start: usize| -> bool {
        let mut i = start;
        for (n, len) in shape.iter().enumerate() {
            if n > 0 {
                if bytes.get(i) != Some(&b'-') {
                    return false;
                }
                i += 1;
            }
            for _ in 0..*len {
                match bytes.get(i) {
                    Some(b) if b.is_ascii_hexdigit() => i += 1,
                    _ => return false,
                }
            }
        }
        true
    };
    (0..bytes.len().saturating_sub(35))
        .rev()
        .find(|&i| is_at(i) && (i == 0 || !bytes[i - 1].is_ascii_hexdigit()))
        .map(|i| text[i..i + 36].to_string())
}

fn last_user_text(body: &Value) -> Option<String> {
    let text_of = |content: &Value| -> Option<String> {
        match content {
            Value::String(s) => Some(s.clone()),
            Value::Array(parts) => parts
                .iter()
                .find_map(|p| p.get("text").and_then(Value::as_str).map(String::from)),
            _ => None,
        }
    };
    let items = body
        .get("messages")
        .or_else(|| body.get("input"))
        .and_then(Value::as_array)?;
    items
        .iter()
        .rev()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .find_map(|m| text_of(m.get("content")?).filter(|t| !t.starts_with("<system-reminder>")))
}

async fn model_reply(
    endpoint: Endpoint,
    reply: Reply,
    seq: u64,
    body: &Value,
    body_len: usize,
) -> Response {
    if reply.hang {
        // Dropped (with the connection) when the client gives up.
        std::future::pending::<()>().await;
    }
    if reply.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(reply.delay_ms)).await;
    }
    let status =
        StatusCode::from_u16(reply.status_code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status != StatusCode::OK {
        return error_reply(endpoint, &reply, status);
    }
    let info = RequestInfo::from_body(body, body_len, seq);
    let stream = body.get("stream").and_then(Value::as_bool) != Some(false);

    if stream {
        let actions = match endpoint {
            Endpoint::Chat => render::chat_stream(&reply, &info),
            Endpoint::Responses => render::responses_stream(&reply, &info),
            Endpoint::Messages => render_messages::messages_stream(&reply, &info),
        };
        return scripted(
            &reply,
            StatusCode::OK,
            "text/event-stream",
            action_body(actions),
        );
    }

    // Non-streaming: mid-stream delays add up before the answer; a stream_error
    // becomes a 500 error body; a cut aborts the (200) body.
    let delay: u64 = reply
        .events
        .iter()
        .map(|e| match e {
            ScriptEvent::DelayMs(ms) => *ms,
            _ => 0,
        })
        .sum();
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    for event in &reply.events {
        match event {
            ScriptEvent::StreamError(e) => {
                return scripted(
                    &reply,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "application/json",
                    Body::from(stream_error_json(e).to_string()),
                );
            }
            ScriptEvent::Cut(true) => {
                return scripted(
                    &reply,
                    StatusCode::OK,
                    "application/json",
                    action_body(vec![
                        Action::Send(Bytes::from_static(b"{\"id\":")),
                        Action::Abort,
                    ]),
                );
            }
            _ => {}
        }
    }
    let value = match endpoint {
        Endpoint::Chat => render::chat_json(&reply, &info),
        Endpoint::Responses => render::responses_json(&reply, &info),
        Endpoint::Messages => render_messages::messages_json(&reply, &info),
    };
    scripted(
        &reply,
        StatusCode::OK,
        "application/json",
        Body::from(value.to_string()),
    )
}

/// Binds 127.0.0.1:`port` and serves on a dedicated thread with its own
/// runtime, so the server keeps answering whatever the caller's thread does
/// (blocking on a child process, a current-thread runtime, no runtime at all).
pub(crate) fn spawn(
    shared: Arc<Shared>,
    port: u16,
) -> anyhow::Result<(
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<()>,
)> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))
        .with_context(|| format!("binding 127.0.0.1:{port}"))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("building the mock server runtime")?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let app = router(shared);
    let thread = std::thread::Builder::new()
        .name(format!("mock-llm-{}", addr.port()))
        .spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => {
                        eprintln!("mock-llm: listener: {e}");
                        return;
                    }
                };
                tokio::select! {
                    result = axum::serve(listener, app) => {
                        if let Err(e) = result {
                            eprintln!("mock-llm: server error: {e}");
                        }
                    }
                    _ = stop_rx => {}
                }
            });
            // Drops every connection task still running (slow or stuck streams).
            runtime.shutdown_background();
        })
        .context("spawning the mock server thread")?;
    Ok((addr, stop_tx, thread))
}
