//! What the faces share and the agent does not: slash commands, the text of events in a
//! terminal, a session's view from its events, the cap on one protocol message and the wording
//! of common states. It knows the protocol, never the core: a change here rebuilds the faces,
//! not the agent.

pub mod export;
pub mod hooks;
pub mod mcp;
pub mod review;
pub mod slash;
pub mod terminal_text;
pub mod view;

/// Default cap on one protocol message (an ACP line, an LSP frame's body).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// At most this much of a refused message is quoted back in the error.
pub const MAX_QUOTE_BYTES: usize = 200;

/// The cap on one ACP or LSP message: `INTERPRETER_MAX_MESSAGE_BYTES` (bytes, at least 1024),
/// else [`DEFAULT_MAX_MESSAGE_BYTES`]. A bigger message is discarded as it streams in, never
/// held whole, and answered with an error.
pub fn max_message_bytes() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        match std::env::var("INTERPRETER_MAX_MESSAGE_BYTES") {
            Ok(v) => match v.trim().parse::<usize>() {
                Ok(n) => n.max(1024),
                Err(_) => {
                    tracing::warn!(
                        "INTERPRETER_MAX_MESSAGE_BYTES={v:?} is not a number of bytes; using {DEFAULT_MAX_MESSAGE_BYTES}"
                    );
                    DEFAULT_MAX_MESSAGE_BYTES
                }
            },
            Err(_) => DEFAULT_MAX_MESSAGE_BYTES,
        }
    })
}

/// The start of a refused message for its error: at most [`MAX_QUOTE_BYTES`] bytes, cut at a
/// character boundary, invalid UTF-8 replaced.
pub fn quote(bytes: &[u8]) -> String {
    let mut end = bytes.len().min(MAX_QUOTE_BYTES);
    loop {
        match std::str::from_utf8(&bytes[..end]) {
            Ok(t) => break t.to_string(),
            // A character cut at the end: step back over it.
            Err(e) if e.error_len().is_none() && end > 0 => end = e.valid_up_to(),
            Err(_) => {
                let lossy = String::from_utf8_lossy(&bytes[..end]).into_owned();
                let mut cut = lossy.len().min(MAX_QUOTE_BYTES);
                while !lossy.is_char_boundary(cut) {
                    cut -= 1;
                }
                break lossy[..cut].to_string();
            }
        }
    }
}

/// How every front end words [`interpreter_protocol::Event::ModelWaiting`]:
/// "waiting for kimi: 15 s" (", attempt 2" after a retry).
pub fn waiting_text(provider: &str, attempt: u32, elapsed_ms: u64) -> String {
    let mut s = format!("waiting for {provider}: {} s", elapsed_ms / 1000);
    if attempt > 1 {
        s.push_str(&format!(", attempt {attempt}"));
    }
    s
}

/// Reads one protocol line (ACP, MCP) into `raw`, keeping at most `max` bytes of it (plus its line end) and
/// discarding the rest as it comes. Returns the line's whole length without its `\n`, or None
/// at the end of the input.
pub fn read_capped_line(
    input: &mut impl std::io::BufRead,
    raw: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<usize>> {
    raw.clear();
    let mut total = 0usize;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((total > 0).then_some(total));
        }
        let (n, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = (max + 2).saturating_sub(raw.len()).min(n);
        raw.extend_from_slice(&buf[..room]);
        total += n;
        input.consume(n);
        if done {
            return Ok(Some(total - 1));
        }
    }
}
