//! A re-framing layer in front of tower-lsp-server's codec.
//!
//! tower-lsp-server reads stdin through tokio-util's `FramedRead`, which ends the stream after
//! the first decode error (tokio-rs/tokio#3976): one frame whose body is not a JSON-RPC
//! message, or a header without `Content-Length` or with a charset other than UTF-8, and the
//! server stops reading and `interpreter lsp` exits. Found while writing the `lsp_framing`
//! fuzz target (fuzz/, docs/fuzzing.md).
//!
//! [`Reframer`] parses the frames first, drops what tower-lsp-server could not decode (with a
//! warning in the log), and passes on the rest re-encoded from tower-lsp-server's own message
//! types, so every frame the codec sees decodes. Headers are read line by line (`\r\n` or
//! `\n`), so the result does not depend on how the input was cut. [`Reframed`] applies it to
//! an `AsyncRead`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};
use tower_lsp_server::jsonrpc::{Request, Response};

/// A header line longer than this is garbage; it is skipped up to its end.
const MAX_HEADER_LINE: usize = 8 * 1024;

/// Incremental LSP frame parser: bytes in, canonical decodable frames out.
#[derive(Debug, Default)]
pub struct Reframer {
    /// The partial header line, or the partial body.
    buf: Vec<u8>,
    state: State,
    /// Frames and header blocks dropped so far.
    pub dropped: u64,
}

#[derive(Debug)]
enum State {
    Header(HeaderBlock),
    /// Reading a body of this many bytes.
    Body(usize),
}

impl Default for State {
    fn default() -> Self {
        State::Header(HeaderBlock::default())
    }
}

/// What the header lines read so far said.
#[derive(Debug, Default)]
struct HeaderBlock {
    lines: usize,
    content_length: Option<Result<usize, String>>,
    /// Inside a line longer than [`MAX_HEADER_LINE`]: skipping to its end.
    overlong: bool,
}

impl Reframer {
    pub fn new() -> Self {
        Self::default()
    }

    /// True when no partial frame is buffered: the next byte starts a header.
    pub fn at_frame_boundary(&self) -> bool {
        matches!(&self.state, State::Header(b) if b.lines == 0 && !b.overlong)
            && self.buf.is_empty()
    }

    /// Adds bytes and appends the frames they complete to `out`.
    pub fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while !input.is_empty() {
            match &mut self.state {
                State::Body(len) => {
                    let len = *len;
                    let take = (len - self.buf.len()).min(input.len());
                    self.buf.extend_from_slice(&input[..take]);
                    input = &input[take..];
                    if self.buf.len() == len {
                        if !pass_body(&self.buf, out) {
                            self.dropped += 1;
                        }
                        self.buf.clear();
                        self.state = State::default();
                    }
                }
                State::Header(block) => {
                    let Some(nl) = input.iter().position(|&b| b == b'\n') else {
                        if !block.overlong {
                            self.buf.extend_from_slice(input);
                            if self.buf.len() > MAX_HEADER_LINE {
                                block.overlong = true;
                                self.buf.clear();
                            }
                        }
                        return;
                    };
                    let part = &input[..nl];
                    input = &input[nl + 1..];
                    if block.overlong || self.buf.len() + part.len() > MAX_HEADER_LINE {
                        // Not a header line: part of the block, which will have no length.
                        block.overlong = false;
                        block.lines += 1;
                        self.buf.clear();
                        continue;
                    }
                    self.buf.extend_from_slice(part);
                    let line = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
                    if !line.is_empty() {
                        block.lines += 1;
                        if let Some(len) = content_length(line) {
                            block.content_length = Some(len);
                        }
                        self.buf.clear();
                        continue;
                    }
                    self.buf.clear();
                    // A blank line ends the block (a blank line alone is no block).
                    if block.lines == 0 {
                        continue;
                    }
                    match block.content_length.take() {
                        Some(Ok(0)) => self.state = State::default(),
                        Some(Ok(len)) => self.state = State::Body(len),
                        Some(Err(why)) => {
                            tracing::warn!("lsp: dropping a frame header: {why}");
                            self.dropped += 1;
                            self.state = State::default();
                        }
                        None => {
                            tracing::warn!("lsp: dropping a frame header: no Content-Length");
                            self.dropped += 1;
                            self.state = State::default();
                        }
                    }
                }
            }
        }
    }
}

/// The length a `Content-Length` header line gives, if the line is one. Other headers are
/// ignored (re-encoded frames carry none), so a `Content-Type` the codec would refuse does not
/// end the session either.
fn content_length(line: &[u8]) -> Option<Result<usize, String>> {
    let line = String::from_utf8_lossy(line);
    let (name, value) = line.split_once(':')?;
    if !name.trim().eq_ignore_ascii_case("content-length") {
        return None;
    }
    let value = value.trim();
    Some(
        value
            .parse::<usize>()
            .map_err(|e| format!("bad Content-Length `{value}`: {e}")),
    )
}

/// Checks one body the way tower-lsp-server's codec will and appends it re-encoded as a frame.
/// False when it was dropped.
fn pass_body(body: &[u8], out: &mut Vec<u8>) -> bool {
    if body.is_empty() {
        return true; // the codec skips empty bodies too
    }
    let encoded = std::str::from_utf8(body)
        .map_err(|e| format!("the body is not UTF-8: {e}"))
        .and_then(|text| {
            // The codec's message type is `#[serde(untagged)] enum { Response, Request }`.
            if let Ok(response) = serde_json::from_str::<Response>(text) {
                serde_json::to_vec(&response).map_err(|e| e.to_string())
            } else {
                match serde_json::from_str::<Request>(text) {
                    Ok(request) => serde_json::to_vec(&request).map_err(|e| e.to_string()),
                    Err(e) => Err(format!("not a JSON-RPC message: {e}")),
                }
            }
        });
    match encoded {
        Ok(json) => {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", json.len()).as_bytes());
            out.extend_from_slice(&json);
            true
        }
        Err(why) => {
            tracing::warn!("lsp: dropping a message of {} bytes: {why}", body.len());
            false
        }
    }
}

/// An `AsyncRead` that passes its input through a [`Reframer`].
pub struct Reframed<R> {
    inner: R,
    reframer: Reframer,
    out: Vec<u8>,
    /// How much of `out` was already read.
    pos: usize,
    eof: bool,
}

impl<R> Reframed<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            reframer: Reframer::new(),
            out: Vec::new(),
            pos: 0,
            eof: false,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Reframed<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.pos < this.out.len() {
                let n = (this.out.len() - this.pos).min(buf.remaining());
                buf.put_slice(&this.out[this.pos..this.pos + n]);
                this.pos += n;
                if this.pos == this.out.len() {
                    this.out.clear();
                    this.pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                this.eof = true;
            } else {
                this.reframer.feed(read.filled(), &mut this.out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut f = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        f.extend_from_slice(body);
        f
    }

    fn reframe(input: &[u8]) -> (Vec<u8>, u64) {
        let mut r = Reframer::new();
        let mut out = Vec::new();
        // One byte at a time: frames split anywhere.
        for b in input {
            r.feed(std::slice::from_ref(b), &mut out);
        }
        (out, r.dropped)
    }

    #[test]
    fn valid_frames_pass_and_undecodable_ones_are_dropped() {
        // Already in the order tower-lsp-server serializes (re-encoding keeps the text).
        let good = br#"{"jsonrpc":"2.0","method":"shutdown","id":1}"#;
        let mut input = frame(good);
        input.extend(frame(b"{\"jsonrpc\":\"2.0\", broken"));
        input.extend(b"X-Nothing: 1\r\n\r\n".iter()); // a header without Content-Length
        input.extend(
            b"Content-Length: 2\r\nContent-Type: application/json; charset=latin1\r\n\r\n[]",
        );
        input.extend(frame(&[0xff, 0xfe]));
        input.extend(frame(good));
        let (out, dropped) = reframe(&input);
        let mut expected = frame(good);
        expected.extend(frame(good));
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(dropped, 4);
    }

    #[test]
    fn lf_only_headers_and_extra_headers_are_accepted() {
        let good = br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let mut input = format!(
            "content-length: {}\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n",
            good.len()
        )
        .into_bytes();
        input.extend_from_slice(good);
        let (out, dropped) = reframe(&input);
        assert_eq!(out, frame(good));
        assert_eq!(dropped, 0);
    }

    /// Regression: a frame whose body is not a JSON-RPC message used to end the server, so the
    /// next request (here `shutdown`) went unanswered.
    #[tokio::test]
    async fn the_server_keeps_serving_after_an_undecodable_frame() {
        let mut input = frame(br#"{"jsonrpc":"2.0", broken"#);
        input.extend(frame(br#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#));
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        let (mut ours, theirs) = tokio::io::duplex(1 << 20);
        super::super::serve_on(
            crate::cli::LspArgs {
                common: Default::default(),
                stdio: true,
            },
            std::io::Cursor::new(input),
            theirs,
        )
        .await;
        let mut written = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut ours, &mut written)
            .await
            .unwrap();
        let written = String::from_utf8_lossy(&written);
        assert!(
            written.contains(r#""id":7"#),
            "no answer to the request after the bad frame: {written}"
        );
    }
}
