//! The newline-delimited JSON-RPC transport of `interpreter acp`.
//!
//! The `agent-client-protocol` crate's `Stdio` reads lines with `AsyncBufReadExt::lines`, which
//! fails on a line that is not UTF-8, and a failed read ends the whole connection. Here every
//! line is decoded lossily instead, so such a line reaches the crate's JSON-RPC parser and is
//! answered with a parse error (-32700) like any other malformed line, and the agent keeps
//! serving. Found while writing the `acp_framing` fuzz target (fuzz/, docs/fuzzing.md).

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use std::io::{BufRead, BufReader, Read};
use tokio::io::AsyncWriteExt;

/// One line as the JSON-RPC layer sees it: the trailing `\n` or `\r\n` removed, invalid UTF-8
/// replaced with U+FFFD.
pub fn decode_line(raw: &[u8]) -> String {
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
    let spawned = std::thread::Builder::new()
        .name("acp-input".into())
        .spawn(move || {
            let mut input = BufReader::new(input);
            let mut raw = Vec::new();
            loop {
                raw.clear();
                let item = match input.read_until(b'\n', &mut raw) {
                    Ok(0) => return,
                    Ok(_) => Ok(decode_line(&raw)),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
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
    use crate::config::Overrides;
    use futures::{SinkExt, StreamExt};

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
