//! The newline-delimited JSON-RPC transport of `interpreter acp`.
//!
//! The `agent-client-protocol` crate's `Stdio` reads lines with `AsyncBufReadExt::lines`, which
//! fails on a line that is not UTF-8, and a failed read ends the whole connection. Here every
//! line is decoded lossily instead, so such a line reaches the crate's JSON-RPC parser and is
//! answered with a parse error (-32700) like any other malformed line, and the agent keeps
//! serving. Found while writing the `acp_framing` fuzz target (fuzz/, docs/fuzzing.md).
//!
//! A line is capped ([`interpreter_face::max_message_bytes`], 16 MiB by default): a longer one
//! is discarded as it streams in (never held whole) and stands in the JSON-RPC layer for a
//! short line that is not JSON, so it is answered with a parse error whose `data` quotes at
//! most 200 bytes of it. A malformed line under the cap is shortened the same way, since the
//! parse error would otherwise echo all of it.

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use std::io::{BufReader, Read};

use interpreter_face::{MAX_QUOTE_BYTES, quote, read_capped_line};
use tokio::io::AsyncWriteExt;

/// One line as the JSON-RPC layer sees it: the trailing `\n` or `\r\n` removed, invalid UTF-8
/// replaced with U+FFFD.
pub(crate) fn decode_line(raw: &[u8]) -> String {
    let line = raw.strip_suffix(b"\n").unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

/// The agent's stdin and stdout as a line transport.
pub fn stdio() -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    transport(std::io::stdin(), stdout_lines())
}

/// A line transport over any byte source and line sink: [`stdio`] in production, in-memory
/// input in tests and in the fuzz target.
pub fn transport<R, O>(
    input: R,
    output: O,
) -> Lines<O, impl Stream<Item = std::io::Result<String>> + Send + 'static>
where
    R: Read + Send + 'static,
    O: Sink<String, Error = std::io::Error> + Send + 'static,
{
    Lines::new(output, read_lines(input))
}

/// Reads on a thread of its own (a blocking read cannot be cancelled, and a runtime must not
/// wait for it at shutdown), one decoded line at a time.
fn read_lines<R: Read + Send + 'static>(
    input: R,
) -> impl Stream<Item = std::io::Result<String>> + Send + 'static {
    let (mut tx, rx) = futures::channel::mpsc::channel::<std::io::Result<String>>(16);
    let max = interpreter_face::max_message_bytes();
    let spawned = std::thread::Builder::new()
        .name("acp-input".into())
        .spawn(move || {
            let mut input = BufReader::with_capacity(64 * 1024, input);
            let mut raw = Vec::new();
            loop {
                let item = match read_capped_line(&mut input, &mut raw, max) {
                    Ok(None) => return,
                    Ok(Some(len)) => Ok(checked_line(&raw, len, max)),
                    Err(e) => Err(e),
                };
                // Do not keep a big line's buffer around.
                if raw.capacity() > 1024 * 1024 {
                    raw = Vec::new();
                }
                let failed = item.is_err();
                if futures::executor::block_on(futures::SinkExt::send(&mut tx, item)).is_err()
                    || failed
                {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("acp: could not start the input reader thread: {e}");
    }
    rx
}

/// The line the JSON-RPC layer gets for `raw` (the kept part of a line `len` bytes long
/// without its `\n`): the line itself, or, for one over `max` bytes or a long one that is not
/// JSON, a short stand-in that is not JSON either and quotes at most [`MAX_QUOTE_BYTES`] of it.
fn checked_line(raw: &[u8], len: usize, max: usize) -> String {
    let content = len - usize::from(raw.ends_with(b"\r\n"));
    if content > max {
        tracing::warn!("acp: discarded a message of {content} bytes (over {max})");
        return format!(
            "{}… [interpreter: a message of {content} bytes, over the limit of {max} bytes (INTERPRETER_MAX_MESSAGE_BYTES), was discarded]",
            quote(raw)
        );
    }
    let line = decode_line(raw);
    if line.len() > MAX_QUOTE_BYTES
        && let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&line)
    {
        return format!(
            "{}… [interpreter: a message of {content} bytes that is not JSON: {e}]",
            quote(line.as_bytes())
        );
    }
    line
}

/// Writes each outgoing message as one line on stdout, flushed. A client that closed its end
/// has left: what it can no longer read is dropped, and the agent still exits cleanly when
/// its input ends.
fn stdout_lines() -> impl Sink<String, Error = std::io::Error> + Send + 'static {
    futures::sink::unfold(tokio::io::stdout(), |mut out, line: String| async move {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        let written = match out.write_all(&bytes).await {
            Ok(()) => out.flush().await,
            Err(e) => Err(e),
        };
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                tracing::debug!("acp: the client closed stdout; dropping a message");
                Ok(out)
            }
            Err(e) => Err(e),
            Ok(()) => Ok::<_, std::io::Error>(out),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::{SinkExt, StreamExt};
    use interpreter_core::config::Overrides;

    #[test]
    fn long_lines_are_cut_while_read_and_stand_ins_quote_200_bytes() {
        let mut input = b"x".repeat(5000);
        input.extend(b"\n{\"a\":1}\r\nlast");
        let mut r = BufReader::with_capacity(64, std::io::Cursor::new(input));
        let mut raw = Vec::new();
        assert_eq!(
            read_capped_line(&mut r, &mut raw, 1024).unwrap(),
            Some(5000)
        );
        assert!(raw.len() <= 1026, "{}", raw.len());
        let stand_in = checked_line(&raw, 5000, 1024);
        assert!(stand_in.starts_with(&"x".repeat(200)) && !stand_in.contains(&"x".repeat(201)));
        assert!(stand_in.contains("a message of 5000 bytes, over the limit of 1024 bytes"));
        assert!(serde_json::from_str::<serde_json::Value>(&stand_in).is_err());
        assert_eq!(read_capped_line(&mut r, &mut raw, 1024).unwrap(), Some(8));
        assert_eq!(checked_line(&raw, 8, 1024), "{\"a\":1}");
        assert_eq!(read_capped_line(&mut r, &mut raw, 1024).unwrap(), Some(4));
        assert_eq!(checked_line(&raw, 4, 1024), "last");
        assert_eq!(read_capped_line(&mut r, &mut raw, 1024).unwrap(), None);
        // Under the cap but not JSON: shortened too; short or valid lines are left alone.
        let bad = format!("{{\"jsonrpc\": {}", "y".repeat(900));
        let line = checked_line(bad.as_bytes(), bad.len(), 1024);
        assert!(line.len() < 400 && line.contains("not JSON"), "{line}");
        assert_eq!(checked_line(b"{oops", 5, 1024), "{oops");
        let ok = format!("{{\"text\":\"{}\"}}", "z".repeat(900));
        assert_eq!(checked_line(ok.as_bytes(), ok.len(), 1024), ok);
    }

    #[test]
    fn decode_line_strips_line_ends_and_replaces_invalid_utf8() {
        assert_eq!(decode_line(b"{}\n"), "{}");
        assert_eq!(decode_line(b"{}\r\n"), "{}");
        assert_eq!(decode_line(b"{}"), "{}");
        assert_eq!(decode_line(b"\xff\xfe\n"), "\u{fffd}\u{fffd}");
    }

    /// Regression: a line of invalid UTF-8 used to end the connection (`interpreter acp`
    /// exited 1 with "connection error: Internal error"), so the next request went unanswered.
    #[tokio::test]
    async fn invalid_utf8_line_is_answered_and_the_agent_keeps_serving() {
        let mut input = b"\xff\xfe\n".to_vec();
        input.extend_from_slice(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        );
        input.push(b'\n');
        let (tx, rx) = futures::channel::mpsc::unbounded::<String>();
        let sink = tx.sink_map_err(|e| std::io::Error::other(e.to_string()));
        let status = super::super::serve_on(
            Overrides::default(),
            transport(std::io::Cursor::new(input), sink),
        )
        .await;
        assert_eq!(status, 0, "the connection ended with an error");
        let lines: Vec<serde_json::Value> = rx
            .map(|l| serde_json::from_str(&l).expect("the agent wrote JSON"))
            .collect()
            .await;
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0]["error"]["code"], -32700);
        assert_eq!(lines[1]["id"], 1);
        assert_eq!(lines[1]["result"]["protocolVersion"], 1);
    }
}
