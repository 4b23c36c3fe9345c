//! stdin and stdout as rmcp's transport. rmcp's own stdio transport drops a line over its cap
//! and a line that is not JSON without a word, so a client waits forever for the answer to a
//! 100 MB request. Here every line is read capped ([`interpreter_face::max_message_bytes`]):
//! a longer one is discarded as it streams in and answered with an Invalid Request error for
//! its id (found in the part kept), and a line that is not JSON gets a Parse error. One task
//! owns stdout, so nothing else ever writes there.

use futures::channel::mpsc;
use futures::{SinkExt, StreamExt};
use interpreter_face::read_capped_line;
use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{ErrorCode, NumberOrString, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use std::io::{BufReader, Read};
use tokio::io::AsyncWriteExt;

/// What goes out: rmcp's messages and the reader's errors, in one queue.
pub(crate) type Outgoing = mpsc::UnboundedSender<TxJsonRpcMessage<RoleServer>>;

/// The transport's halves for rmcp, and the writer task (awaited at exit so the last answers
/// leave).
pub(crate) struct Stdio {
    pub(crate) sink: Outgoing,
    pub(crate) stream: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    pub(crate) writer: tokio::task::JoinHandle<()>,
}

/// The process's stdin and stdout.
pub(crate) fn stdio() -> Stdio {
    let (sink, out) = mpsc::unbounded();
    let writer = tokio::spawn(write_lines(out, tokio::io::stdout()));
    let stream = read_messages(std::io::stdin(), sink.clone());
    Stdio {
        sink,
        stream,
        writer,
    }
}

async fn write_lines(
    mut out: mpsc::UnboundedReceiver<TxJsonRpcMessage<RoleServer>>,
    mut stdout: impl tokio::io::AsyncWrite + Unpin,
) {
    while let Some(msg) = out.next().await {
        let mut line = match serde_json::to_vec(&msg) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!("mcp-server: a message could not be serialized: {e}");
                continue;
            }
        };
        line.push(b'\n');
        if let Err(e) = async {
            stdout.write_all(&line).await?;
            stdout.flush().await
        }
        .await
        {
            // The client closed its end: nobody reads any more.
            tracing::debug!("mcp-server: stdout closed: {e}");
            return;
        }
    }
}

/// Reads on a thread of its own (a blocking read cannot be cancelled), one message at a time.
fn read_messages<R: Read + Send + 'static>(
    input: R,
    errors: Outgoing,
) -> mpsc::Receiver<RxJsonRpcMessage<RoleServer>> {
    let (mut tx, rx) = mpsc::channel(16);
    let max = interpreter_face::max_message_bytes();
    let spawned = std::thread::Builder::new()
        .name("mcp-input".into())
        .spawn(move || {
            let mut input = BufReader::with_capacity(64 * 1024, input);
            let mut raw = Vec::new();
            loop {
                let len = match read_capped_line(&mut input, &mut raw, max) {
                    Ok(Some(len)) => len,
                    Ok(None) => return,
                    Err(e) => {
                        tracing::error!("mcp-server: reading stdin: {e}");
                        return;
                    }
                };
                match check_line(&raw, len, max) {
                    Ok(None) => {}
                    Ok(Some(msg)) => {
                        if futures::executor::block_on(tx.send(msg)).is_err() {
                            return;
                        }
                    }
                    Err(answer) => {
                        let _ = errors.unbounded_send(*answer);
                    }
                }
                if raw.capacity() > 1024 * 1024 {
                    raw = Vec::new();
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("mcp-server: could not start the input reader thread: {e}");
    }
    rx
}

/// One line: a message for rmcp, nothing (a blank line), or the error that answers it.
fn check_line(
    raw: &[u8],
    len: usize,
    max: usize,
) -> Result<Option<RxJsonRpcMessage<RoleServer>>, Box<TxJsonRpcMessage<RoleServer>>> {
    let line = raw.strip_suffix(b"\n").unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let content = if raw.ends_with(b"\r\n") { len - 1 } else { len };
    if content > max {
        tracing::warn!("mcp-server: discarded a message of {content} bytes (over {max})");
        return Err(Box::new(TxJsonRpcMessage::<RoleServer>::error(
            ErrorData::invalid_request(
                format!(
                    "a message of {content} bytes is over the limit of {max} bytes (INTERPRETER_MAX_MESSAGE_BYTES); it was discarded"
                ),
                None,
            ),
            top_level_id(line),
        )));
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|e| {
        Box::new(TxJsonRpcMessage::<RoleServer>::error(
            ErrorData::new(
                ErrorCode::PARSE_ERROR,
                format!("not JSON: {e}: {}", interpreter_face::quote(line)),
                None,
            ),
            None,
        ))
    })?;
    let id = value.get("id").and_then(request_id);
    serde_json::from_value(value).map(Some).map_err(|e| {
        Box::new(TxJsonRpcMessage::<RoleServer>::error(
            ErrorData::invalid_request(format!("not an MCP message: {e}"), None),
            id,
        ))
    })
}

fn request_id(v: &serde_json::Value) -> Option<RequestId> {
    match v {
        serde_json::Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        serde_json::Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        _ => None,
    }
}

/// The `id` of a JSON object's top level, from the start of its text (the rest was cut).
fn top_level_id(text: &[u8]) -> Option<RequestId> {
    let (mut depth, mut in_string, mut escaped) = (0u32, false, false);
    let mut key_start = None;
    let mut last_key: &[u8] = b"";
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                if let Some(s) = key_start.take() {
                    last_key = &text[s..i];
                }
            }
        } else {
            match b {
                b'"' => {
                    in_string = true;
                    if depth == 1 {
                        key_start = Some(i + 1);
                    }
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth = depth.saturating_sub(1),
                b':' if depth == 1 && last_key == b"id" => {
                    let rest = &text[i + 1..];
                    let end = rest
                        .iter()
                        .position(|&c| c == b',' || c == b'}')
                        .unwrap_or(rest.len());
                    let value = serde_json::from_slice(rest[..end].trim_ascii()).ok()?;
                    return request_id(&value);
                }
                b',' if depth == 1 => last_key = b"",
                _ => {}
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_a_cut_message_is_found_wherever_it_is() {
        let id = |t: &str| top_level_id(t.as_bytes());
        assert_eq!(
            id(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"prompt":"xxx"#
            ),
            Some(NumberOrString::Number(7))
        );
        assert_eq!(
            id(r#"{"params":{"id":1,"a":"}\"id\":3"},"id":"r-9","x":1}"#),
            Some(NumberOrString::String("r-9".into()))
        );
        assert_eq!(id(r#"{"method":"x","params":{"prompt":"aaaa"#), None);
    }

    #[test]
    fn long_lines_are_refused_with_their_id_and_bad_lines_get_parse_errors() {
        let mut input = br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"p":""#.to_vec();
        input.extend(b"x".repeat(5000));
        input.extend(b"\"}}\nnot json\n\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n");
        let mut r = BufReader::with_capacity(64, std::io::Cursor::new(input));
        let mut raw = Vec::new();
        let mut out = Vec::new();
        while let Some(len) = read_capped_line(&mut r, &mut raw, 1024).unwrap() {
            assert!(raw.len() <= 1026);
            out.push(check_line(&raw, len, 1024));
        }
        let json = |m: &TxJsonRpcMessage<RoleServer>| serde_json::to_value(m).unwrap();
        let Err(big) = &out[0] else {
            panic!("{:?}", out[0])
        };
        assert_eq!(json(big)["id"], 3);
        assert_eq!(json(big)["error"]["code"], -32600);
        assert!(
            json(big)["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over the limit of 1024 bytes")
        );
        let Err(bad) = &out[1] else { panic!() };
        assert_eq!(json(bad)["error"]["code"], -32700);
        assert!(matches!(out[2], Ok(None)));
        assert!(matches!(out[3], Ok(Some(_))));
    }
}
