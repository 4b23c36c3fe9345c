//! Truncation of tool output before it reaches the model: keep the head and the tail (where
//! errors and summaries usually are), cut the middle, and say exactly how much was cut.
//!
//! A command's output is captured by [`HeadTailBuffer`], which keeps the first and last bytes
//! and counts what it drops in between (O(1) memory for any amount of output); the marker it
//! leaves there carries the exact counts, and [`truncate_middle`] and [`truncate_head`] fold
//! them into what they report, so the model hears how much output there really was.

/// Rough bytes per token, as Codex estimates.
pub(crate) const BYTES_PER_TOKEN: usize = 4;

/// A rough token count: bytes / 4, rounded up, as Codex estimates.
pub fn approx_tokens(s: &str) -> usize {
    s.len().div_ceil(BYTES_PER_TOKEN)
}

/// Text around the counts in the marker a [`HeadTailBuffer`] leaves where it dropped output.
const DROPPED_OPEN: &str = "\n…";
const DROPPED_MID: &str = " bytes (";
const DROPPED_CLOSE: &str = " lines) of output dropped…\n";

fn dropped_marker(bytes: u64, lines: u64) -> String {
    format!("{DROPPED_OPEN}{bytes}{DROPPED_MID}{lines}{DROPPED_CLOSE}")
}

/// Text as the command wrote it: what was kept of the start, what was dropped in the middle
/// (counted), and what was kept of the end.
struct Logical<'a> {
    head: &'a str,
    dropped_bytes: u64,
    dropped_lines: u64,
    tail: &'a str,
    /// The text held a dropped-output marker.
    captured: bool,
}

impl<'a> Logical<'a> {
    fn of(s: &'a str) -> Logical<'a> {
        if let Some((head, bytes, lines, tail)) = split_marker(s) {
            return Logical {
                head,
                dropped_bytes: bytes,
                dropped_lines: lines,
                tail,
                captured: true,
            };
        }
        let mid = ceil_char_boundary(s, s.len() / 2);
        Logical {
            head: &s[..mid],
            dropped_bytes: 0,
            dropped_lines: 0,
            tail: &s[mid..],
            captured: false,
        }
    }

    fn total_bytes(&self) -> u64 {
        self.head.len() as u64 + self.dropped_bytes + self.tail.len() as u64
    }

    /// Lines as `str::lines` counts them: newlines, plus an unterminated last line.
    fn total_lines(&self) -> u64 {
        let newlines = newlines(self.head) + self.dropped_lines + newlines(self.tail);
        let last = if self.tail.is_empty() {
            self.head.as_bytes().last()
        } else {
            self.tail.as_bytes().last()
        };
        newlines + u64::from(last.is_some_and(|b| *b != b'\n'))
    }
}

/// Finds the first dropped-output marker: (head, bytes, lines, tail).
fn split_marker(s: &str) -> Option<(&str, u64, u64, &str)> {
    let mut from = 0;
    while let Some(i) = s[from..].find(DROPPED_OPEN).map(|i| i + from) {
        let rest = &s[i + DROPPED_OPEN.len()..];
        let parse = || -> Option<(u64, u64, usize)> {
            let (bytes, rest2) = rest.split_once(DROPPED_MID)?;
            let (lines, _) = rest2.split_once(DROPPED_CLOSE)?;
            let len = bytes.len() + DROPPED_MID.len() + lines.len() + DROPPED_CLOSE.len();
            Some((bytes.parse().ok()?, lines.parse().ok()?, len))
        };
        if let Some((bytes, lines, len)) = parse() {
            let end = i + DROPPED_OPEN.len() + len;
            return Some((&s[..i], bytes, lines, &s[end..]));
        }
        from = i + DROPPED_OPEN.len();
    }
    None
}

fn newlines(s: &str) -> u64 {
    memchr::memchr_iter(b'\n', s.as_bytes()).count() as u64
}

/// Keeps at most `max_tokens` (≈ 4 bytes each) of `s`: half from the start, half from the end,
/// cut at line boundaries where that is cheap, with a marker saying exactly how many bytes
/// and lines were cut (including any the capture dropped before).
pub(crate) fn truncate_middle(s: &str, max_tokens: usize) -> String {
    let budget = max_tokens.saturating_mul(BYTES_PER_TOKEN);
    if s.len() <= budget {
        return s.to_string();
    }
    let text = Logical::of(s);
    let half = budget / 2;
    let mut head_end = floor_char_boundary(text.head, half);
    let tail_from = text.tail.len().saturating_sub(half);
    let mut tail_start = ceil_char_boundary(text.tail, tail_from);
    // Prefer whole lines when a newline is near the cut.
    if let Some(nl) = text.head[..head_end].rfind('\n')
        && head_end - nl < half / 4 + 1
    {
        head_end = nl + 1;
    }
    if let Some(nl) = text.tail[tail_start..].find('\n')
        && nl < half / 4 + 1
    {
        tail_start += nl + 1;
    }
    let cut_head = &text.head[head_end..];
    let cut_tail = &text.tail[..tail_start];
    let cut_bytes = cut_head.len() as u64 + text.dropped_bytes + cut_tail.len() as u64;
    let cut_lines = newlines(cut_head) + text.dropped_lines + newlines(cut_tail);
    format!(
        "Total output lines: {}\nTotal output bytes: {}\n\n{}…{cut_bytes} bytes ({cut_lines} lines) truncated…{}",
        text.total_lines(),
        text.total_bytes(),
        &text.head[..head_end],
        &text.tail[tail_start..]
    )
}

/// Kimi Code's rule: at most `max_chars` in all and `max_line` per line, keeping the head;
/// when anything is left out, says exactly how many bytes and lines.
pub(crate) fn truncate_head(s: &str, max_chars: usize, max_line: usize) -> String {
    let text = Logical::of(s);
    // The kept head of a capture is far longer than any budget; otherwise the marker is kept
    // as text and tells its own counts.
    let source = if text.captured && text.head.len() > max_chars {
        text.head
    } else {
        s
    };
    let (total_bytes, total_lines) = if source.len() == s.len() {
        let whole = Logical::of(s);
        if whole.captured {
            (s.len() as u64, s.lines().count() as u64)
        } else {
            (whole.total_bytes(), whole.total_lines())
        }
    } else {
        (text.total_bytes(), text.total_lines())
    };
    let mut out = String::with_capacity(source.len().min(max_chars + 64));
    let mut truncated = false;
    let mut kept_bytes = 0u64;
    let mut kept_lines = 0u64;
    for line in source.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let (shown, mut kept) = if body.chars().count() > max_line {
            truncated = true;
            let cut: String = body.chars().take(max_line).collect();
            let kept = cut.len();
            (format!("{cut}[...truncated]"), kept)
        } else {
            (body.to_string(), body.len())
        };
        if out.len() + shown.len() + nl.len() > max_chars {
            let room = max_chars.saturating_sub(out.len());
            let part = &shown[..floor_char_boundary(&shown, room)];
            out.push_str(part);
            kept = kept.min(part.len());
            if kept > 0 {
                kept_lines += 1;
            }
            kept_bytes += kept as u64;
            truncated = true;
            break;
        }
        out.push_str(&shown);
        out.push_str(nl);
        kept_bytes += (kept + nl.len()) as u64;
        kept_lines += 1;
    }
    if source.len() != s.len() {
        truncated = true;
    }
    if truncated {
        out.push_str(&format!(
            "[...truncated]\nOutput is truncated to fit in the message: {} of {total_bytes} bytes and {} of {total_lines} lines were left out.",
            total_bytes.saturating_sub(kept_bytes),
            total_lines.saturating_sub(kept_lines),
        ));
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
/// command that prints gigabytes costs a bounded amount of memory, and counts the bytes and
/// lines it drops in between. The tail is a ring: pushing copies and counts with `memcpy` and
/// `memchr`, never byte by byte.
#[derive(Debug)]
pub(crate) struct HeadTailBuffer {
    cap: usize,
    head: Vec<u8>,
    /// The last bytes, `ring_len` of them from `ring_start` (wrapping).
    ring: Vec<u8>,
    ring_start: usize,
    ring_len: usize,
    dropped_bytes: u64,
    dropped_lines: u64,
}

impl HeadTailBuffer {
    pub(crate) fn new(cap: usize) -> Self {
        HeadTailBuffer {
            cap,
            head: Vec::new(),
            ring: Vec::new(),
            ring_start: 0,
            ring_len: 0,
            dropped_bytes: 0,
            dropped_lines: 0,
        }
    }

    fn room(&self) -> usize {
        self.cap - self.cap / 2
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        let half = self.cap / 2;
        if self.head.len() < half {
            let take = (half - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        let room = self.room();
        if bytes.is_empty() || room == 0 {
            self.count_dropped(bytes);
            return;
        }
        if self.ring.len() < room {
            self.ring.resize(room, 0);
        }
        if bytes.len() >= room {
            // All that is held, and the start of this chunk, are dropped.
            self.drop_oldest(self.ring_len);
            let (drop, keep) = bytes.split_at(bytes.len() - room);
            self.count_dropped(drop);
            self.ring.copy_from_slice(keep);
            self.ring_start = 0;
            self.ring_len = room;
            return;
        }
        let over = (self.ring_len + bytes.len()).saturating_sub(room);
        self.drop_oldest(over);
        let end = (self.ring_start + self.ring_len) % room;
        let first = bytes.len().min(room - end);
        self.ring[end..end + first].copy_from_slice(&bytes[..first]);
        self.ring[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        self.ring_len += bytes.len();
    }

    /// The held bytes in order, as up to two slices.
    fn held(&self) -> (&[u8], &[u8]) {
        let room = self.ring.len();
        if room == 0 {
            return (&[], &[]);
        }
        let end = self.ring_start + self.ring_len;
        if end <= room {
            (&self.ring[self.ring_start..end], &[])
        } else {
            (&self.ring[self.ring_start..], &self.ring[..end - room])
        }
    }

    /// Drops (and counts) the oldest `n` held bytes.
    fn drop_oldest(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let (a, b) = self.held();
        let in_a = n.min(a.len());
        let lines = memchr::memchr_iter(b'\n', &a[..in_a]).count()
            + memchr::memchr_iter(b'\n', &b[..n - in_a]).count();
        self.dropped_bytes += n as u64;
        self.dropped_lines += lines as u64;
        self.ring_start = (self.ring_start + n) % self.ring.len();
        self.ring_len -= n;
    }

    fn count_dropped(&mut self, bytes: &[u8]) {
        self.dropped_bytes += bytes.len() as u64;
        self.dropped_lines += memchr::memchr_iter(b'\n', bytes).count() as u64;
    }

    /// Bytes dropped from the middle so far, and the newlines among them.
    #[cfg(test)]
    fn dropped(&self) -> (u64, u64) {
        (self.dropped_bytes, self.dropped_lines)
    }

    pub(crate) fn into_string(self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped_bytes > 0 {
            out.push_str(&dropped_marker(self.dropped_bytes, self.dropped_lines));
        }
        let (a, b) = self.held();
        let mut tail = Vec::with_capacity(a.len() + b.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
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
    fn middle_is_cut_with_exact_counts_keeping_head_and_tail() {
        let s: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let t = truncate_middle(&s, 100);
        assert!(
            t.starts_with(&format!(
                "Total output lines: 1000\nTotal output bytes: {}\n\nline 0\n",
                s.len()
            )),
            "{t}"
        );
        assert!(t.ends_with("line 999\n"));
        assert!(t.len() < 500, "{}", t.len());
        // What is shown plus what is said to be cut is all of it.
        let (head, rest) = t.split_once("\n\n").unwrap().1.split_once('…').unwrap();
        let (counts, tail) = rest.split_once('…').unwrap();
        let bytes: usize = counts.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(head.len() + bytes + tail.len(), s.len(), "{counts}");
        let lines: usize = counts
            .split('(')
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(head.lines().count() + lines + tail.lines().count(), 1000);
    }

    #[test]
    fn multibyte_text_never_splits_a_char() {
        let s = "é".repeat(10_000);
        let t = truncate_middle(&s, 11);
        assert!(t.contains("truncated"));
    }

    #[test]
    fn head_truncation_caps_lines_and_total_and_counts_the_rest() {
        let long = "x".repeat(3000);
        let t = truncate_head(&format!("{long}\nshort\n"), 50_000, 2000);
        assert!(t.starts_with(&"x".repeat(2000)));
        assert!(t.contains("[...truncated]"));
        assert!(
            t.ends_with("1000 of 3007 bytes and 0 of 2 lines were left out."),
            "{t}"
        );
        let t = truncate_head(&"abc\n".repeat(100), 20, 2000);
        assert!(t.starts_with("abc\nabc\nabc\nabc\nabc\n"));
        assert!(
            t.ends_with("Output is truncated to fit in the message: 380 of 400 bytes and 95 of 100 lines were left out."),
            "{t}"
        );
    }

    /// `yes | head -c 2G`: 2 GiB of `y\n` through the capture, then both truncations. The
    /// model must hear of all of it, not of the 1 MiB that was kept.
    #[test]
    fn gigabytes_through_the_capture_are_counted_exactly() {
        let total: u64 = 2 << 30;
        let chunk = b"y\n".repeat(32 * 1024);
        let mut b = HeadTailBuffer::new(1024 * 1024);
        let mut pushed = 0u64;
        while pushed < total {
            b.push(&chunk);
            pushed += chunk.len() as u64;
        }
        let kept = b.into_string();
        assert!(kept.len() < 1024 * 1024 + 100);
        let t = truncate_middle(&kept, 10_000);
        assert!(
            t.starts_with("Total output lines: 1073741824\nTotal output bytes: 2147483648\n\n"),
            "{}",
            &t[..200]
        );
        let (shown_head, rest) = t.split_once("\n\n").unwrap().1.split_once('…').unwrap();
        let (counts, shown_tail) = rest.split_once('…').unwrap();
        let bytes: u64 = counts.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(
            shown_head.len() as u64 + bytes + shown_tail.len() as u64,
            total
        );
        assert_eq!(
            counts,
            format!("{bytes} bytes ({} lines) truncated", bytes / 2)
        );
        let h = truncate_head(&kept, 50_000, 2000);
        assert!(
            h.ends_with(&format!(
                "{} of 2147483648 bytes and {} of 1073741824 lines were left out.",
                total - 50_000,
                (total - 50_000) / 2
            )),
            "{}",
            &h[h.len() - 200..]
        );
    }

    #[test]
    fn head_tail_buffer_is_bounded_and_counts_what_it_drops() {
        let mut b = HeadTailBuffer::new(100);
        for _ in 0..1000 {
            b.push(b"012345678\n");
        }
        b.push(b"END");
        assert_eq!(b.dropped(), (10003 - 100, (10003 - 100) / 10));
        let s = b.into_string();
        assert!(s.starts_with("012345678\n"));
        assert!(s.ends_with("END"));
        assert!(
            s.contains("9903 bytes (990 lines) of output dropped"),
            "{s}"
        );
        assert!(s.len() < 200);
        // One chunk larger than the whole buffer.
        let mut b = HeadTailBuffer::new(10);
        b.push(&b"a\n".repeat(100));
        assert_eq!(b.dropped(), (190, 95));
    }
}
