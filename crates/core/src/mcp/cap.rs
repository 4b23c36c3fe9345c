//! A stdio server's messages, each at most [`MAX_MESSAGE`] bytes. rmcp drops a longer line
//! without a word, so a call whose result it was waits out its `tool_timeout`. Here the line
//! is cut off instead and, once it has streamed past (counted, never held), replaced by a
//! JSON-RPC error for the same request id: "result too large (N bytes)". The call then ends
//! at once. The id is found by a small streaming scan of the line's top-level object, so it
//! works wherever in the line the server puts it.

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

/// The largest message taken from a stdio server. Below rmcp's own 16 MiB line cap, so rmcp
/// never drops a line itself.
pub(super) const MAX_MESSAGE: usize = 8 * 1024 * 1024;
/// How long a closed server gets to exit before it is left to the process-group kill.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// Finds the value of the `"id"` key of a JSON object's top level, fed one byte at a time.
#[derive(Default)]
struct IdScan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The next string at the top level is a key.
    expect_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    /// The last top-level key was `id`, and its value has not started.
    after_id_key: bool,
    capturing: bool,
    value: Vec<u8>,
    id: Option<Vec<u8>>,
}

/// Longest id value kept.
const MAX_ID: usize = 256;

impl IdScan {
    fn feed(&mut self, b: u8) {
        if self.in_string {
            if self.capturing {
                self.keep(b);
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    self.after_id_key = self.key == b"id";
                    return;
                }
            }
            if self.reading_key && self.key.len() < 8 {
                self.key.push(b);
            }
            return;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' if self.depth == 1 && self.expect_key => {
                self.expect_key = false;
                self.reading_key = true;
                self.in_string = true;
                self.key.clear();
            }
            b'"' => {
                self.in_string = true;
                if self.capturing {
                    self.keep(b);
                }
            }
            b':' if self.depth == 1 && self.after_id_key => {
                self.after_id_key = false;
                self.capturing = true;
                self.value.clear();
            }
            b'{' | b'[' => {
                if self.capturing {
                    self.keep(b);
                }
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = b == b'{';
                }
            }
            b',' | b'}' | b']' if self.depth == 1 => {
                if self.capturing {
                    self.capturing = false;
                    self.id = Some(std::mem::take(&mut self.value));
                }
                self.expect_key = b == b',';
                if b != b',' {
                    self.depth -= 1;
                }
            }
            b'}' | b']' => {
                if self.capturing {
                    self.keep(b);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            _ if self.capturing => self.keep(b),
            _ => {}
        }
    }

    fn keep(&mut self, b: u8) {
        if self.value.len() < MAX_ID {
            self.value.push(b);
        }
    }

    /// The id, if the line had one that is a number or a string.
    fn id(&self) -> Option<serde_json::Value> {
        let v: serde_json::Value = serde_json::from_slice(self.id.as_deref()?).ok()?;
        (v.is_number() || v.is_string()).then_some(v)
    }
}

/// A server's stdout with every line held to [`MAX_MESSAGE`] bytes (see the module's text).
pub(super) struct CappedLines<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line so far.
    line: usize,
    /// The current line went over the limit: the rest of it is counted, not passed on.
    over: bool,
    scan: IdScan,
    /// What is ready to be read, from `at` on.
    out: Vec<u8>,
    at: usize,
    scratch: Box<[u8]>,
}

impl<R> CappedLines<R> {
    pub(super) fn new(inner: R, limit: usize) -> Self {
        CappedLines {
            inner,
            limit,
            line: 0,
            over: false,
            scan: IdScan::default(),
            out: Vec::new(),
            at: 0,
            scratch: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Takes bytes from the server into `out`.
    fn process(&mut self, n: usize) {
        self.out.clear();
        self.at = 0;
        for i in 0..n {
            let b = self.scratch[i];
            if b == b'\n' {
                if self.over {
                    self.out.extend_from_slice(&self.refusal());
                } else {
                    self.out.push(b);
                }
                self.line = 0;
                self.over = false;
                self.scan = IdScan::default();
                continue;
            }
            self.line += 1;
            self.scan.feed(b);
            if self.over {
                continue;
            }
            if self.line > self.limit {
                // Ends the part already passed on: rmcp reads it as a line it cannot parse,
                // and ignores it.
                self.over = true;
                self.out.push(b'\n');
            } else {
                self.out.push(b);
            }
        }
    }

    /// The error that stands in for the line that was too long (nothing without an id).
    fn refusal(&self) -> Vec<u8> {
        let Some(id) = self.scan.id() else {
            tracing::warn!(
                "an MCP server sent a message of {} bytes without a request id; it was dropped",
                self.line
            );
            return Vec::new();
        };
        let message = format!(
            "result too large ({} bytes; at most {} are taken)",
            self.line, self.limit
        );
        tracing::warn!("MCP request {id}: {message}");
        let error = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32603, "message": message},
        });
        let mut line = error.to_string().into_bytes();
        line.push(b'\n');
        line
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CappedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        while this.at == this.out.len() {
            let mut read = ReadBuf::new(&mut this.scratch);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                return Poll::Ready(Ok(()));
            }
            this.process(n);
        }
        let n = buf.remaining().min(this.out.len() - this.at);
        buf.put_slice(&this.out[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// A stdio server as an MCP transport, its stdout through [`CappedLines`]. Closing it
/// closes the server's stdin and waits a moment for it to exit.
pub(super) struct CappedChild {
    child: Child,
    transport: AsyncRwTransport<RoleClient, CappedLines<ChildStdout>, ChildStdin>,
}

impl CappedChild {
    /// Starts `cmd` with piped stdio; returns the transport and the server's stderr.
    pub(super) fn spawn(
        mut cmd: tokio::process::Command,
    ) -> io::Result<(CappedChild, Option<ChildStderr>)> {
        use std::process::Stdio;
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        let missing = || io::Error::other("the server's stdio was not piped");
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stderr = child.stderr.take();
        let transport = AsyncRwTransport::new_client(CappedLines::new(stdout, MAX_MESSAGE), stdin);
        Ok((CappedChild { child, transport }, stderr))
    }

    /// The server's process id (its process group's, too).
    pub(super) fn id(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Transport<RoleClient> for CappedChild {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.transport.close().await?;
        let _ = tokio::time::timeout(EXIT_WAIT, self.child.wait()).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn scan(line: &str) -> Option<serde_json::Value> {
        let mut s = IdScan::default();
        line.bytes().for_each(|b| s.feed(b));
        s.id()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        assert_eq!(
            scan(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Some(7.into())
        );
        // Last, after a result full of other ids, quotes and braces in strings.
        let tricky = r#"{"result":{"id":1,"content":[{"text":"\"id\": 3 } {"}]},"jsonrpc":"2.0", "id" : "r-9"}"#;
        assert_eq!(scan(tricky), Some("r-9".into()));
        assert_eq!(
            scan(r#"{"method":"notifications/x","params":{"id":2}}"#),
            None
        );
    }

    async fn read_all(input: Vec<u8>, limit: usize) -> String {
        let mut out = String::new();
        CappedLines::new(&input[..], limit)
            .read_to_string(&mut out)
            .await
            .unwrap();
        out
    }

    #[tokio::test]
    async fn a_line_over_the_limit_becomes_an_error_for_its_request() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":4,"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
            "x".repeat(5000)
        );
        let input =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{}}}}\n{big}\n{{\"id\":5}}\n");
        let out = read_all(input.into_bytes(), 1000).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
        // The cut-off part, then the error for request 4, then the next message whole.
        assert_eq!(lines[1].len(), 1000);
        let err: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(err["id"], 4);
        assert_eq!(
            err["error"]["message"],
            format!(
                "result too large ({} bytes; at most 1000 are taken)",
                big.len()
            )
        );
        assert_eq!(lines[3], r#"{"id":5}"#);
        assert_eq!(lines.len(), 4);
    }
}
