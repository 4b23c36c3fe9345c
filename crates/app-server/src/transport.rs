//! JSON lines in and out. One reader splits stdin into messages (each at most
//! [`MAX_MESSAGE_BYTES`]); one writer task owns stdout, so messages leave in the order they
//! were queued. A line that is not a message gets an error response and costs nothing else.

use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// The largest message read; a longer line is refused whole.
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// How much of a bad line an error message quotes.
const QUOTED_BYTES: usize = 200;

/// JSON-RPC error codes.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;

/// A JSON-RPC error to answer with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: interpreter_core::secrets::redact(&message.into()).into_owned(),
        }
    }

    pub(crate) fn invalid_request(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_REQUEST, message)
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(INTERNAL_ERROR, message)
    }
}

/// One message from the client.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming {
    /// A request: it gets exactly one response.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification (`initialized`): no response.
    Notification { method: String },
    /// The client's answer to one of our requests (approvals).
    Response {
        id: Value,
        result: Result<Value, Value>,
    },
}

/// Where messages for the client go. Cloning gives another sender to the same writer.
#[derive(Clone)]
pub(crate) struct Outbound {
    tx: mpsc::UnboundedSender<String>,
    /// Notification methods the client opted out of at `initialize`.
    opted_out: Arc<RwLock<HashSet<String>>>,
}

impl Outbound {
    /// An outbound queue and the receiving end its writer drains.
    pub(crate) fn new() -> (Outbound, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let out = Outbound {
            tx,
            opted_out: Default::default(),
        };
        (out, rx)
    }

    fn send(&self, v: &Value) {
        // A gone writer means the client is gone; nothing left to tell it.
        let _ = self.tx.send(v.to_string());
    }

    pub(crate) fn respond(&self, id: &Value, result: Result<Value, RpcError>) {
        match result {
            Ok(result) => self.send(&json!({"id": id, "result": result})),
            Err(e) => {
                self.send(&json!({"id": id, "error": {"code": e.code, "message": e.message}}))
            }
        }
    }

    pub(crate) fn notify(&self, method: &str, params: Value) {
        let opted_out = self
            .opted_out
            .read()
            .map(|s| s.contains(method))
            .unwrap_or(false);
        if !opted_out {
            self.send(&json!({"method": method, "params": params}));
        }
    }

    /// A request to the client; its answer arrives as an [`Incoming::Response`] with `id`.
    pub(crate) fn request(&self, id: u64, method: &str, params: Value) {
        self.send(&json!({"id": id, "method": method, "params": params}));
    }

    pub(crate) fn opt_out(&self, methods: impl IntoIterator<Item = String>) {
        if let Ok(mut set) = self.opted_out.write() {
            set.extend(methods);
        }
    }
}

/// Writes queued messages, one per line, until every sender is gone.
pub(crate) async fn write_lines(
    mut rx: mpsc::UnboundedReceiver<String>,
    mut out: impl AsyncWrite + Unpin,
) {
    while let Some(line) = rx.recv().await {
        let mut batch = line;
        batch.push('\n');
        // Everything queued meanwhile goes out in the same write.
        while let Ok(more) = rx.try_recv() {
            batch.push_str(&more);
            batch.push('\n');
        }
        if out.write_all(batch.as_bytes()).await.is_err() || out.flush().await.is_err() {
            tracing::debug!("app-server: stdout closed");
            return;
        }
    }
}

/// What one read produced.
pub(crate) enum Read {
    Line(Vec<u8>),
    /// A line longer than [`MAX_MESSAGE_BYTES`]; its bytes were skipped.
    TooLong,
    Eof,
}

/// Reads one line of at most `max` bytes (without its newline). A longer line is skipped
/// to its end, so the next read starts on the next message.
pub(crate) async fn read_line(
    r: &mut (impl tokio::io::AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Read> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Read::TooLong,
                (false, true) => Read::Eof,
                (false, false) => Read::Line(line),
            });
        }
        let (chunk, found) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long && line.len() + chunk.len() > max {
            too_long = true;
            line = Vec::new();
        }
        if !too_long {
            line.extend_from_slice(chunk);
        }
        let used = found.unwrap_or(buf.len());
        r.consume(used);
        if found.is_some() {
            return Ok(if too_long {
                Read::TooLong
            } else {
                Read::Line(line)
            });
        }
    }
}

/// Parses one line. `Err` carries the error response's id (null when unknown) and error.
pub(crate) fn parse(line: &[u8]) -> Result<Option<Incoming>, (Value, RpcError)> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_str(text).map_err(|e| {
        (
            Value::Null,
            RpcError::new(PARSE_ERROR, format!("Parse error: {e}: {}", quote(text))),
        )
    })?;
    let Value::Object(mut obj) = v else {
        return Err((
            Value::Null,
            RpcError::invalid_request(format!(
                "Invalid request: expected a JSON object: {}",
                quote(text)
            )),
        ));
    };
    let id = obj.remove("id");
    let method = obj.remove("method");
    match (id, method) {
        (Some(id), Some(Value::String(method))) if valid_id(&id) => Ok(Some(Incoming::Request {
            id,
            method,
            params: obj.remove("params").unwrap_or(Value::Null),
        })),
        (None, Some(Value::String(method))) => Ok(Some(Incoming::Notification { method })),
        (Some(id), None) if valid_id(&id) => {
            let result = match (obj.remove("result"), obj.remove("error")) {
                (Some(r), _) => Ok(r),
                (None, Some(e)) => Err(e),
                (None, None) => Ok(Value::Null),
            };
            Ok(Some(Incoming::Response { id, result }))
        }
        (id, _) => Err((
            id.filter(valid_id).unwrap_or(Value::Null),
            RpcError::invalid_request(format!(
                "Invalid request: a message needs a string `method` and a string or number `id`: {}",
                quote(text)
            )),
        )),
    }
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_number()
}

/// At most [`QUOTED_BYTES`] of `text`, cut on a character boundary.
pub(crate) fn quote(text: &str) -> String {
    if text.len() <= QUOTED_BYTES {
        return format!("`{text}`");
    }
    let mut end = QUOTED_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("`{}…` ({} bytes)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        let req = parse(br#"{"id":"a-1","method":"thread/start","params":{"x":1}}"#).unwrap();
        assert_eq!(
            req,
            Some(Incoming::Request {
                id: json!("a-1"),
                method: "thread/start".into(),
                params: json!({"x": 1})
            })
        );
        let n = parse(br#"{"jsonrpc":"2.0","method":"initialized"}"#).unwrap();
        assert_eq!(
            n,
            Some(Incoming::Notification {
                method: "initialized".into()
            })
        );
        let r = parse(br#"{"id":7,"result":{"decision":"accept"}}"#).unwrap();
        assert!(matches!(r, Some(Incoming::Response { result: Ok(_), .. })));
        assert_eq!(parse(b"  ").unwrap(), None);
    }

    #[test]
    fn bad_lines_are_errors_that_quote_little() {
        let (id, e) = parse(b"{not json").unwrap_err();
        assert_eq!((id, e.code), (Value::Null, PARSE_ERROR));
        let long = format!("[{}]", "1,".repeat(5000) + "1");
        let (_, e) = parse(long.as_bytes()).unwrap_err();
        assert_eq!(e.code, INVALID_REQUEST);
        assert!(e.message.len() < 400, "{}", e.message);
        let (id, e) = parse(br#"{"id":3,"method":5}"#).unwrap_err();
        assert_eq!((id, e.code), (json!(3), INVALID_REQUEST));
        let (_, e) = parse("{\"x\":\"é".repeat(100).as_bytes()).unwrap_err();
        assert_eq!(e.code, PARSE_ERROR);
    }

    #[tokio::test]
    async fn long_lines_are_skipped_whole() {
        let data = format!("{}\n{{\"ok\":1}}\nlast", "x".repeat(100));
        let mut r = tokio::io::BufReader::with_capacity(16, data.as_bytes());
        assert!(matches!(
            read_line(&mut r, 50).await.unwrap(),
            Read::TooLong
        ));
        assert!(
            matches!(read_line(&mut r, 50).await.unwrap(), Read::Line(l) if l == b"{\"ok\":1}")
        );
        assert!(matches!(read_line(&mut r, 50).await.unwrap(), Read::Line(l) if l == b"last"));
        assert!(matches!(read_line(&mut r, 50).await.unwrap(), Read::Eof));
    }

    #[tokio::test]
    async fn opted_out_notifications_are_dropped() {
        let (out, mut rx) = Outbound::new();
        out.opt_out(["item/agentMessage/delta".to_string()]);
        out.notify("item/agentMessage/delta", json!({}));
        out.notify("turn/completed", json!({}));
        assert!(rx.recv().await.unwrap().contains("turn/completed"));
        assert!(rx.try_recv().is_err());
    }
}
