//! An incremental Server-Sent Events decoder: feed it bytes as they arrive, take whole events.
//!
//! Tolerant on purpose: CRLF or LF line ends, `data:` with or without a space, multi-line data,
//! comment lines (`: keep-alive`), and invalid UTF-8 (replaced, never a panic).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, if the stream gave one.
    pub event: Option<String>,
    /// Its `data:` lines, joined by newlines.
    pub data: String,
}

/// Turns a byte stream into events.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    /// Bytes in `data`.
    data_len: usize,
    /// The event being read grew past `MAX_LINE`: its data is dropped until it ends.
    oversized: bool,
}

/// Lines longer than this without a newline are garbage; drop them rather than grow forever.
/// An event whose data lines add up to more is dropped the same way.
const MAX_LINE: usize = 16 * 1024 * 1024;

impl SseDecoder {
    /// An empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes and returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(pos) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + pos;
            let mut line = &self.buf[start..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            start = end + 1;
            if let Some(ev) = self.line(&line) {
                out.push(ev);
            }
        }
        self.buf.drain(..start);
        if self.buf.len() > MAX_LINE {
            self.buf.clear();
        }
        out
    }

    /// Flushes a final event that was not followed by a blank line (a stream that just ends).
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(&rest)
                .trim_end_matches('\r')
                .to_string();
            if let Some(ev) = self.line(&line) {
                return Some(ev);
            }
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" if self.oversized => {}
            "data" if self.data_len + value.len() > MAX_LINE => {
                self.data.clear();
                self.data_len = 0;
                self.oversized = true;
            }
            "data" => {
                self.data_len += value.len() + 1;
                self.data.push(value.to_string());
            }
            "event" => self.event = Some(value.to_string()),
            // `id` and `retry` do not matter to us; unknown fields are ignored per the spec.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        self.data_len = 0;
        self.oversized = false;
        if self.data.is_empty() {
            self.event = None;
            return None;
        }
        let data = std::mem::take(&mut self.data).join("\n");
        Some(SseEvent {
            event: self.event.take(),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(d.feed(c));
        }
        out.extend(d.finish());
        out
    }

    #[test]
    fn splits_events_across_arbitrary_chunk_boundaries() {
        let text = b"data: {\"a\":1}\n\nevent: x\ndata: two\n\n";
        for split in 0..text.len() {
            let evs = all(&[&text[..split], &text[split..]]);
            assert_eq!(evs.len(), 2, "split at {split}");
            assert_eq!(evs[0].data, "{\"a\":1}");
            assert_eq!(evs[1].event.as_deref(), Some("x"));
        }
    }

    #[test]
    fn crlf_comments_no_space_and_multiline() {
        let evs = all(&[b": keep-alive\r\n\r\ndata:nospace\r\n\r\ndata: a\ndata: b\n\n"]);
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].data, "nospace");
        assert_eq!(evs[1].data, "a\nb");
    }

    #[test]
    fn trailing_event_without_blank_line_is_flushed() {
        let evs = all(&[b"data: [DONE]"]);
        assert_eq!(
            evs,
            vec![SseEvent {
                event: None,
                data: "[DONE]".into()
            }]
        );
    }

    #[test]
    fn an_event_of_many_data_lines_is_bounded() {
        let mut d = SseDecoder::new();
        let line = format!("data: {}\n", "x".repeat(1024 * 1024));
        for _ in 0..20 {
            assert!(d.feed(line.as_bytes()).is_empty());
        }
        assert!(d.data_len <= MAX_LINE, "{}", d.data_len);
        // The oversized event is dropped; the next one is whole.
        assert!(d.feed(b"\n").is_empty());
        assert_eq!(d.feed(b"data: ok\n\n")[0].data, "ok");
    }

    #[test]
    fn invalid_utf8_does_not_panic() {
        let evs = all(&[b"data: \xff\xfe\n\n"]);
        assert_eq!(evs.len(), 1);
    }
}
