//! The newline-delimited JSON-RPC transport of `interpreter acp`.
//!
//! The `agent-client-protocol` crate's `Stdio` reads lines with `AsyncBufReadExt::lines`, which
//! fails on a line that is not UTF-8, and a failed read ends the whole connection. Here every
//! line is decoded lossily instead, so such a line reaches the crate's JSON-RPC parser and is
//! answered with a parse error (-32700) like any other malformed line, and the agent keeps
//! serving. Found by the `acp_framing` fuzz target (fuzz/, docs/fuzzing.md).

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use std::io::BufRead;
use tokio::io::AsyncWriteExt;

/// One line as the JSON-RPC layer sees it: the trailing `\n` or `\r\n` removed, invalid UTF-8
/// replaced with U+FFFD.
pub fn decode_line(raw: &[u8]) -> String {
    let line = raw.strip_suffix(b"\n").unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

/// The agent's stdin and stdout as a line transport.
pub fn stdio() -> Lines<impl Sink<String, Error = std::io::Error>, impl Stream<Item = std::io::Result<String>>>
{
    Lines::new(stdout_lines(), stdin_lines())
}

/// Reads stdin on a thread of its own (a blocking read cannot be cancelled, and a runtime
/// must not wait for it at shutdown), one decoded line at a time.
fn stdin_lines() -> impl Stream<Item = std::io::Result<String>> + Send + 'static {
    let (mut tx, rx) = futures::channel::mpsc::channel::<std::io::Result<String>>(16);
    let spawned = std::thread::Builder::new()
        .name("acp-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut raw = Vec::new();
            loop {
                raw.clear();
                let item = match stdin.read_until(b'\n', &mut raw) {
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
        tracing::error!("could not start the stdin reader thread: {e}");
    }
    rx
}

/// Writes each outgoing message as one line on stdout, flushed.
fn stdout_lines() -> impl Sink<String, Error = std::io::Error> + Send + 'static {
    futures::sink::unfold(tokio::io::stdout(), async |mut out, line: String| {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        out.write_all(&bytes).await?;
        out.flush().await?;
        Ok::<_, std::io::Error>(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_line_strips_line_ends_and_replaces_invalid_utf8() {
        assert_eq!(decode_line(b"{}\n"), "{}");
        assert_eq!(decode_line(b"{}\r\n"), "{}");
        assert_eq!(decode_line(b"{}"), "{}");
        assert_eq!(decode_line(b"\xff\xfe\n"), "\u{fffd}\u{fffd}");
    }
}
