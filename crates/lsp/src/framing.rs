//! A re-framing layer in front of tower-lsp-server's codec.
//!
//! tower-lsp-server reads stdin through tokio-util's `FramedRead`, which ends the stream after
//! the first decode error (tokio-rs/tokio#3976): one frame whose body is not a JSON-RPC
//! message, or a header without `Content-Length` or with a charset other than UTF-8, and the
//! server stops reading and `interpreter lsp` exits. Found while writing the `lsp_framing`
//! fuzz target (fuzz/, docs/fuzzing.md).
//!
//! [`Reframer`] parses the frames first and passes on the ones tower-lsp-server can decode,
//! re-encoded from its own message types, so every frame the codec sees decodes. Headers are
//! read line by line (`\r\n` or `\n`), so the result does not depend on how the input was cut.
//! [`Reframed`] applies it to an `AsyncRead`.
//!
//! Hostile or broken input costs nothing else:
//! - **Resynchronisation.** A frame whose `Content-Length` promises more than comes would
//!   swallow the frames after it. A `Content-Length: N` line ending in a raw newline cannot be
//!   part of a JSON body (JSON strings hold no raw newline, and no JSON token starts with
//!   `C`), so when one turns up inside what was taken for a body, the body is cut there and
//!   the header read as the next frame's.
//! - **A cap per message** ([`interpreter_face::max_message_bytes`], 16 MiB by default): a
//!   bigger body is discarded as it streams in, keeping only its first bytes for the error.
//! - **An answer for what is refused.** Each refused frame becomes a `$/interpreter/rejected`
//!   notification ([`REJECTED`]) that `super::Intercept` answers with a JSON-RPC error: to the
//!   request's id when it can be read from the frame, else to id `null`, as JSON-RPC does for
//!   parse errors. Its message quotes at most 200 bytes of the frame.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};
use tower_lsp_server::jsonrpc::{Request, Response};

use interpreter_face::{MAX_QUOTE_BYTES, quote};

/// The method of the notification that stands for a refused frame (see the module docs).
pub(crate) const REJECTED: &str = "$/interpreter/rejected";

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// A header line longer than this is garbage; it is skipped up to its end.
const MAX_HEADER_LINE: usize = 8 * 1024;
/// The end of a line kept to spot a `Content-Length` header inside a body.
const TAIL: usize = 64;
/// The start of a body kept to find its id and quote it, when the body itself is not kept.
const KEEP: usize = 4096;

/// Incremental LSP frame parser: bytes in, canonical decodable frames out.
#[derive(Debug)]
pub struct Reframer {
    /// The partial header line, or the partial body.
    buf: Vec<u8>,
    state: State,
    /// Frames and header blocks dropped so far.
    pub dropped: u64,
    max_body: usize,
    /// The end of the current line of a body, to spot a header in it.
    tail: Vec<u8>,
}

#[derive(Debug)]
enum State {
    Header(HeaderBlock),
    /// Reading a body of this many bytes into `buf`.
    Body(usize),
    /// Discarding a body over the cap: its length, what is left of it, and its first bytes.
    Skip {
        len: usize,
        left: usize,
        start: Vec<u8>,
    },
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

impl Default for Reframer {
    fn default() -> Self {
        Self::with_limit(interpreter_face::max_message_bytes())
    }
}

impl Reframer {
    /// A re-framer with the default message size limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// A reframer whose bodies may be at most `max_body` bytes.
    pub fn with_limit(max_body: usize) -> Self {
        Reframer {
            buf: Vec::new(),
            state: State::default(),
            dropped: 0,
            max_body,
            tail: Vec::new(),
        }
    }

    /// True when no partial frame is buffered: the next byte starts a header.
    pub fn at_frame_boundary(&self) -> bool {
        matches!(&self.state, State::Header(b) if b.lines == 0 && !b.overlong)
            && self.buf.is_empty()
    }

    /// Adds bytes and appends the frames they complete to `out`.
    pub fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while !input.is_empty() {
            input = match self.state {
                State::Header(_) => self.feed_header(input, out),
                State::Body(len) => self.feed_body(len, input, out),
                State::Skip { .. } => self.feed_skip(input, out),
            };
        }
    }

    fn feed_header<'a>(&mut self, input: &'a [u8], out: &mut Vec<u8>) -> &'a [u8] {
        let State::Header(block) = &mut self.state else {
            return input;
        };
        let Some(nl) = input.iter().position(|&b| b == b'\n') else {
            if !block.overlong {
                self.buf.extend_from_slice(input);
                if self.buf.len() > MAX_HEADER_LINE {
                    block.overlong = true;
                    self.buf.clear();
                }
            }
            return &[];
        };
        let part = &input[..nl];
        if block.overlong || self.buf.len() + part.len() > MAX_HEADER_LINE {
            // Not a header line: part of the block, which will have no length.
            block.overlong = false;
            block.lines += 1;
            self.buf.clear();
        } else {
            self.buf.extend_from_slice(part);
            let line = std::mem::take(&mut self.buf);
            self.header_line(&line, out);
        }
        &input[nl + 1..]
    }

    /// One complete header line (without its `\n`).
    fn header_line(&mut self, line: &[u8], out: &mut Vec<u8>) {
        let State::Header(block) = &mut self.state else {
            return;
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.is_empty() {
            block.lines += 1;
            if let Some(len) = content_length(line) {
                block.content_length = Some(len);
            }
            return;
        }
        // A blank line ends the block (a blank line alone is no block).
        if block.lines == 0 {
            return;
        }
        let length = block.content_length.take();
        self.state = State::default();
        self.tail.clear();
        match length {
            Some(Ok(0)) => {}
            Some(Ok(len)) if len > self.max_body => {
                self.state = State::Skip {
                    len,
                    left: len,
                    start: Vec::new(),
                }
            }
            Some(Ok(len)) => self.state = State::Body(len),
            Some(Err(why)) => self.reject(None, &why, PARSE_ERROR, out),
            None => self.reject(
                None,
                "a frame header without Content-Length",
                PARSE_ERROR,
                out,
            ),
        }
    }

    fn feed_body<'a>(&mut self, len: usize, input: &'a [u8], out: &mut Vec<u8>) -> &'a [u8] {
        let take = (len - self.buf.len()).min(input.len());
        if let Some((at, header_bytes, line)) = spot_header(&mut self.tail, &input[..take]) {
            // The frame was shorter than it said: a header came inside it.
            self.buf.extend_from_slice(&input[..at]);
            let cut = self.buf.len().saturating_sub(header_bytes);
            let body = std::mem::take(&mut self.buf);
            self.resync(&body[..cut], len, out);
            self.header_line(&line, out);
            return &input[at..];
        }
        self.buf.extend_from_slice(&input[..take]);
        if self.buf.len() == len {
            let body = std::mem::take(&mut self.buf);
            self.state = State::default();
            self.pass_body(&body, out);
        }
        &input[take..]
    }

    fn feed_skip<'a>(&mut self, input: &'a [u8], out: &mut Vec<u8>) -> &'a [u8] {
        let State::Skip { len, left, start } = &mut self.state else {
            return input;
        };
        let (len, take) = (*len, (*left).min(input.len()));
        let room = KEEP.saturating_sub(start.len()).min(take);
        start.extend_from_slice(&input[..room]);
        if let Some((at, header_bytes, line)) = spot_header(&mut self.tail, &input[..take]) {
            let mut start = std::mem::take(start);
            let came = (len - *left + at).saturating_sub(header_bytes);
            start.truncate(came);
            self.state = State::default();
            self.resync(&start, len, out);
            self.header_line(&line, out);
            return &input[at..];
        }
        *left -= take;
        if *left == 0 {
            let start = std::mem::take(start);
            self.state = State::default();
            let why = format!(
                "a message of {len} bytes, over the limit of {} bytes (INTERPRETER_MAX_MESSAGE_BYTES)",
                self.max_body
            );
            self.reject(Some(&start), &why, INVALID_REQUEST, out);
        }
        &input[take..]
    }

    /// A body cut short by a header: passed on if what came is a whole message (only its
    /// length was wrong), else refused.
    fn resync(&mut self, body: &[u8], promised: usize, out: &mut Vec<u8>) {
        self.state = State::default();
        self.tail.clear();
        let trimmed = body.trim_ascii();
        if !trimmed.is_empty() && encode(trimmed).is_ok() {
            tracing::warn!(
                "lsp: a frame promised {promised} bytes but the next header came after {}; using what came",
                body.len()
            );
            self.pass_body(trimmed, out);
            return;
        }
        let why = format!(
            "a frame promised {promised} bytes, but the next frame's header came after {}",
            body.len()
        );
        self.reject(Some(body), &why, PARSE_ERROR, out);
    }

    /// Checks one body the way tower-lsp-server's codec will and appends it re-encoded as a
    /// frame, or refuses it.
    fn pass_body(&mut self, body: &[u8], out: &mut Vec<u8>) {
        if body.is_empty() {
            return; // the codec skips empty bodies too
        }
        match encode(body) {
            Ok(json) => push_frame(&json, out),
            Err(why) => {
                // Valid JSON that is no JSON-RPC message is an invalid request.
                let code = if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() {
                    INVALID_REQUEST
                } else {
                    PARSE_ERROR
                };
                self.reject(Some(body), &why, code, out)
            }
        }
    }

    /// Drops a frame, answering it through a [`REJECTED`] notification: to its id when the
    /// start of `body` names one.
    fn reject(&mut self, body: Option<&[u8]>, why: &str, code: i64, out: &mut Vec<u8>) {
        self.dropped += 1;
        let (id, message) = match body {
            Some(b) => {
                let more = if b.len() > MAX_QUOTE_BYTES { "…" } else { "" };
                (
                    request_id(b),
                    format!("{why}; it starts with {:?}{more}", quote(b)),
                )
            }
            None => (None, why.to_string()),
        };
        tracing::warn!("lsp: refusing a frame: {message}");
        let note = json!({"jsonrpc": "2.0", "method": REJECTED,
            "params": {"id": id, "code": code, "message": message}});
        push_frame(&serde_json::to_vec(&note).unwrap_or_default(), out);
    }
}

fn push_frame(json: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", json.len()).as_bytes());
    out.extend_from_slice(json);
}

/// A body as tower-lsp-server's codec will decode it, re-encoded; Err says why not.
fn encode(body: &[u8]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("the body is not UTF-8: {e}"))?;
    // The codec's message type is `#[serde(untagged)] enum { Response, Request }`.
    if let Ok(response) = serde_json::from_str::<Response>(text) {
        return serde_json::to_vec(&response).map_err(|e| e.to_string());
    }
    match serde_json::from_str::<Request>(text) {
        Ok(request) => serde_json::to_vec(&request).map_err(|e| e.to_string()),
        Err(e) => Err(format!("not a JSON-RPC message: {e}")),
    }
}

/// Feeds body bytes to the line tail; at the first line that ends in a `Content-Length: N`
/// header, returns where that line ends in `bytes` (after its `\n`), how many bytes the header
/// took (including the `\n`) and the header text.
fn spot_header(tail: &mut Vec<u8>, bytes: &[u8]) -> Option<(usize, usize, Vec<u8>)> {
    let mut from = 0;
    while let Some(i) = bytes[from..].iter().position(|&b| b == b'\n') {
        let nl = from + i;
        keep_tail(tail, &bytes[from..nl]);
        if let Some(start) = header_at_end(tail) {
            let line = tail[start..].to_vec();
            let taken = tail.len() - start + 1;
            tail.clear();
            return Some((nl + 1, taken, line));
        }
        tail.clear();
        from = nl + 1;
    }
    keep_tail(tail, &bytes[from..]);
    None
}

fn keep_tail(tail: &mut Vec<u8>, more: &[u8]) {
    tail.extend_from_slice(more);
    if tail.len() > TAIL {
        tail.drain(..tail.len() - TAIL);
    }
}

/// Where a `Content-Length: <digits>` header starts, when `line` (without `\n`) ends in one.
fn header_at_end(line: &[u8]) -> Option<usize> {
    const NAME: &[u8] = b"content-length";
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    let digits_end = end;
    while end > 0 && line[end - 1].is_ascii_digit() {
        end -= 1;
    }
    if end == digits_end || digits_end - end > 20 {
        return None;
    }
    while end > 0 && matches!(line[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    if end == 0 || line[end - 1] != b':' {
        return None;
    }
    end -= 1;
    let start = end.checked_sub(NAME.len())?;
    line[start..end].eq_ignore_ascii_case(NAME).then_some(start)
}

/// The length a `Content-Length` header line gives, if the line is one (junk before the
/// header name is allowed: what is left of a broken frame). Other headers are ignored
/// (re-encoded frames carry none), so a `Content-Type` the codec would refuse does not end the
/// session either.
fn content_length(line: &[u8]) -> Option<Result<usize, String>> {
    if let Some(start) = header_at_end(line) {
        let text = String::from_utf8_lossy(&line[start..]);
        let value = text.split_once(':').map(|(_, v)| v.trim()).unwrap_or("");
        return Some(
            value
                .parse::<usize>()
                .map_err(|e| format!("bad Content-Length `{value}`: {e}")),
        );
    }
    let line = String::from_utf8_lossy(line);
    let (name, value) = line.split_once(':')?;
    if !name.trim().eq_ignore_ascii_case("content-length") {
        return None;
    }
    let value = value.trim();
    Some(Err(format!(
        "bad Content-Length `{}`",
        quote(value.as_bytes())
    )))
}

/// The id of the request a (possibly cut or broken) body starts, read at its top level: a
/// number or string after `"id":`, before anything the scan cannot follow. Allocates nothing
/// for the values it skips.
pub(crate) fn request_id(body: &[u8]) -> Option<Value> {
    let mut s = TopLevel { b: body, i: 0 };
    s.ws();
    if !s.eat(b'{') {
        return None;
    }
    loop {
        s.ws();
        let key = s.string()?;
        s.ws();
        if !s.eat(b':') {
            return None;
        }
        s.ws();
        if key == "id" {
            return s.scalar();
        }
        s.skip_value()?;
        s.ws();
        if !s.eat(b',') {
            return None;
        }
    }
}

/// A scanner over the start of a JSON object that may be cut anywhere.
struct TopLevel<'a> {
    b: &'a [u8],
    i: usize,
}

impl TopLevel<'_> {
    fn ws(&mut self) {
        while self.b.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    /// A whole string token, decoded; None when cut or broken.
    fn string(&mut self) -> Option<String> {
        let raw = self.string_raw()?;
        serde_json::from_slice(raw).ok()
    }

    /// A whole string token as it is written, quotes included.
    fn string_raw(&mut self) -> Option<&[u8]> {
        let start = self.i;
        if !self.eat(b'"') {
            return None;
        }
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => return self.b.get(start..self.i),
                _ => {}
            }
        }
        None
    }

    /// A number or string value (an id); None for anything else or when cut.
    fn scalar(&mut self) -> Option<Value> {
        if self.b.get(self.i) == Some(&b'"') {
            return self.string().map(Value::String);
        }
        let start = self.i;
        while self
            .b
            .get(self.i)
            .is_some_and(|c| c.is_ascii_digit() || *c == b'-')
        {
            self.i += 1;
        }
        // A number that runs to the end of what came may be cut.
        if self.i == start || self.i == self.b.len() {
            return None;
        }
        serde_json::from_slice::<Value>(&self.b[start..self.i]).ok()
    }

    /// Skips one value of any kind, nested ones included.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    self.string_raw()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.i += 1;
                }
                b',' if depth == 0 => return Some(()),
                _ => self.i += 1,
            }
            if depth == 0 && matches!(self.b.get(self.i), Some(b',' | b'}')) {
                return Some(());
            }
        }
    }
}

/// An `AsyncRead` that passes its input through a [`Reframer`].
pub(crate) struct Reframed<R> {
    inner: R,
    reframer: Reframer,
    out: Vec<u8>,
    /// How much of `out` was already read.
    pos: usize,
    eof: bool,
}

impl<R> Reframed<R> {
    pub(crate) fn new(inner: R) -> Self {
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
#[path = "framing_tests.rs"]
mod tests;
