//! Truncation of tool output before it reaches the model: keep the head and the tail (where
//! errors and summaries usually are), cut the middle, and say how much was cut.

/// Rough bytes per token, as Codex estimates.
pub const BYTES_PER_TOKEN: usize = 4;

pub fn approx_tokens(s: &str) -> usize {
    s.len().div_ceil(BYTES_PER_TOKEN)
}

/// Keeps at most `max_tokens` (≈ 4 bytes each) of `s`: half from the start, half from the end,
/// cut at line boundaries where that is cheap, with a `…N tokens truncated…` marker.
pub fn truncate_middle(s: &str, max_tokens: usize) -> String {
    let budget = max_tokens.saturating_mul(BYTES_PER_TOKEN);
    if s.len() <= budget {
        return s.to_string();
    }
    let half = budget / 2;
    let mut head_end = floor_char_boundary(s, half);
    let mut tail_start = ceil_char_boundary(s, s.len() - half);
    // Prefer whole lines when a newline is near the cut.
    if let Some(nl) = s[..head_end].rfind('\n')
        && head_end - nl < half / 4 + 1
    {
        head_end = nl + 1;
    }
    if let Some(nl) = s[tail_start..].find('\n')
        && nl < half / 4 + 1
    {
        tail_start += nl + 1;
    }
    let cut_tokens = approx_tokens(&s[head_end..tail_start]);
    let total_lines = s.lines().count();
    format!(
        "Total output lines: {total_lines}\n\n{}…{cut_tokens} tokens truncated…{}",
        &s[..head_end],
        &s[tail_start..]
    )
}

/// Kimi Code's rule: at most `max_chars` in all and `max_line` per line, keeping the head.
pub fn truncate_head(s: &str, max_chars: usize, max_line: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars + 64));
    let mut truncated = false;
    for line in s.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let body = if body.chars().count() > max_line {
            truncated = true;
            let cut: String = body.chars().take(max_line).collect();
            format!("{cut}[...truncated]")
        } else {
            body.to_string()
        };
        if out.len() + body.len() + nl.len() > max_chars {
            let room = max_chars.saturating_sub(out.len());
            out.push_str(&body[..floor_char_boundary(&body, room)]);
            truncated = true;
            break;
        }
        out.push_str(&body);
        out.push_str(nl);
    }
    if truncated {
        out.push_str("[...truncated]\nOutput is truncated to fit in the message.");
    }
    out
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// A byte buffer that keeps the first and last `cap/2` bytes of an unbounded stream, so a
/// command that prints gigabytes costs a bounded amount of memory.
#[derive(Debug)]
pub struct HeadTailBuffer {
    cap: usize,
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped: u64,
}

impl HeadTailBuffer {
    pub fn new(cap: usize) -> Self {
        HeadTailBuffer {
            cap,
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            dropped: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        let half = self.cap / 2;
        if self.head.len() < half {
            let take = (half - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(self.cap - half);
        if over > 0 {
            self.tail.drain(..over);
            self.dropped += over as u64;
        }
    }

    pub fn into_string(self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            out.push_str(&format!("\n…{} bytes of output dropped…\n", self.dropped));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_untouched() {
        assert_eq!(truncate_middle("abc", 10), "abc");
    }

    #[test]
    fn middle_is_cut_with_marker_keeping_head_and_tail() {
        let s: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let t = truncate_middle(&s, 100);
        assert!(t.starts_with("Total output lines: 1000\n\nline 0\n"), "{t}");
        assert!(t.ends_with("line 999\n"));
        assert!(t.contains("tokens truncated…"));
        assert!(t.len() < 500, "{}", t.len());
    }

    #[test]
    fn multibyte_text_never_splits_a_char() {
        let s = "é".repeat(10_000);
        let t = truncate_middle(&s, 11);
        assert!(t.contains("truncated"));
    }

    #[test]
    fn head_truncation_caps_lines_and_total() {
        let long = "x".repeat(3000);
        let t = truncate_head(&format!("{long}\nshort\n"), 50_000, 2000);
        assert!(t.starts_with(&"x".repeat(2000)));
        assert!(t.contains("[...truncated]"));
        let t = truncate_head(&"abc\n".repeat(100), 20, 2000);
        assert!(t.starts_with("abc\nabc\nabc\nabc\nabc\n"));
        assert!(t.ends_with("Output is truncated to fit in the message."));
    }

    #[test]
    fn head_tail_buffer_is_bounded() {
        let mut b = HeadTailBuffer::new(100);
        for _ in 0..1000 {
            b.push(b"0123456789");
        }
        b.push(b"END");
        let s = b.into_string();
        assert!(s.starts_with("0123456789"));
        assert!(s.ends_with("END"));
        assert!(s.contains("bytes of output dropped"));
        assert!(s.len() < 200);
    }
}
