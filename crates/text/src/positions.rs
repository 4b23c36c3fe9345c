//! Line/column positions over ropes, in the three encodings LSP negotiates.
//!
//! Only `\n`, `\r\n` and `\r` end a line (ropey is built with `cr_lines` and without
//! `unicode_lines`, so its line count matches LSP). Positions are line-end agnostic: a
//! `character` past the end of a line's content clamps to the content's end, so nothing
//! can point between `\r` and `\n`; a line past the last one means the end of the document.
//! A column inside a multi-unit character (half a surrogate pair, the middle of a UTF-8
//! sequence) rounds down to that character's start.
//!
//! Pure functions, no I/O: every operation is O(log n) on the rope.

use ropey::Rope;

/// How `character` counts: UTF-8 bytes, UTF-16 code units (LSP's default) or code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PositionEncoding {
    /// UTF-8 bytes.
    Utf8,
    /// UTF-16 code units.
    #[default]
    Utf16,
    /// Unicode code points.
    Utf32,
}

impl PositionEncoding {
    /// The LSP name (`utf-8`, `utf-16`, `utf-32`).
    pub fn as_str(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }

    /// The encoding an LSP name stands for.
    pub fn parse(s: &str) -> Option<PositionEncoding> {
        match s {
            "utf-8" => Some(PositionEncoding::Utf8),
            "utf-16" => Some(PositionEncoding::Utf16),
            "utf-32" => Some(PositionEncoding::Utf32),
            _ => None,
        }
    }

    /// Units of this encoding in `text`.
    pub fn len_of(self, text: &str) -> usize {
        match self {
            PositionEncoding::Utf8 => text.len(),
            PositionEncoding::Utf16 => text.chars().map(char::len_utf16).sum(),
            PositionEncoding::Utf32 => text.chars().count(),
        }
    }
}

/// A zero-based line and a column counted in the document's [`PositionEncoding`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    /// Zero-based line.
    pub line: u32,
    /// Zero-based offset in the line, in the encoding's code units.
    pub character: u32,
}

impl Position {
    /// A position from its two counts.
    pub const fn new(line: u32, character: u32) -> Position {
        Position { line, character }
    }
}

/// A half-open range of positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

impl Range {
    /// The range from `start` up to `end`.
    pub const fn new(start: Position, end: Position) -> Range {
        Range { start, end }
    }
}

/// The char index where `line`'s content ends (before its terminator, if any).
pub(crate) fn line_content_end(rope: &Rope, line: usize) -> usize {
    let line_start = rope.line_to_char(line);
    let next = if line + 1 < rope.len_lines() {
        rope.line_to_char(line + 1)
    } else {
        return rope.len_chars();
    };
    // The line has a terminator: `\n`, `\r` or `\r\n`.
    if next >= line_start + 2 && rope.char(next - 1) == '\n' && rope.char(next - 2) == '\r' {
        next - 2
    } else {
        next - 1
    }
}

/// The char index `pos` points at, clamped as described in the module docs.
pub fn position_to_char(rope: &Rope, pos: Position, enc: PositionEncoding) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    match line_in_chunk(rope, line) {
        Some((start, content)) => {
            rope.byte_to_char(start + column_to_byte(content, pos.character as usize, enc))
        }
        None => position_to_char_slow(rope, line, pos.character as usize, enc),
    }
}

/// The position of char index `idx` (clamped to the document; an index between `\r` and
/// `\n` maps to the end of that line's content).
pub fn char_to_position(rope: &Rope, idx: usize, enc: PositionEncoding) -> Position {
    let idx = idx.min(rope.len_chars());
    let byte = rope.char_to_byte(idx);
    let line = rope.byte_to_line(byte);
    let character = match line_in_chunk(rope, line) {
        Some((start, content)) => {
            let prefix = &content[..(byte - start).min(content.len())];
            match enc {
                PositionEncoding::Utf8 => prefix.len(),
                _ if prefix.is_ascii() => prefix.len(),
                _ => enc.len_of(prefix),
            }
        }
        None => char_column_slow(rope, line, idx, enc),
    };
    Position {
        line: line as u32,
        character: character as u32,
    }
}

/// The fast path: `line`'s byte offset and its content (without terminator) when the whole
/// line sits in one rope chunk, which is nearly always (chunks hold about a kilobyte).
/// Three O(log n) lookups and a short scan instead of seven lookups.
fn line_in_chunk(rope: &Rope, line: usize) -> Option<(usize, &str)> {
    let start = rope.line_to_byte(line);
    let (chunk, chunk_byte, _, _) = rope.chunk_at_byte(start);
    let rest = chunk.get(start - chunk_byte..)?;
    match rest.find(['\n', '\r']) {
        Some(i) => Some((start, &rest[..i])),
        None if chunk_byte + chunk.len() == rope.len_bytes() => Some((start, rest)),
        None => None,
    }
}

/// The byte offset of column `col` in a line's content, clamped to its end and rounded down
/// to a character boundary.
fn column_to_byte(content: &str, col: usize, enc: PositionEncoding) -> usize {
    match enc {
        PositionEncoding::Utf8 => {
            let mut b = col.min(content.len());
            while !content.is_char_boundary(b) {
                b -= 1;
            }
            b
        }
        _ if content.is_ascii() => col.min(content.len()),
        PositionEncoding::Utf16 => {
            let mut units = 0;
            for (i, c) in content.char_indices() {
                let next = units + c.len_utf16();
                if next > col {
                    return i;
                }
                units = next;
            }
            content.len()
        }
        PositionEncoding::Utf32 => content
            .char_indices()
            .nth(col)
            .map_or(content.len(), |(i, _)| i),
    }
}

/// [`position_to_char`] for a line that spans rope chunks: O(log n) lookups only.
fn position_to_char_slow(rope: &Rope, line: usize, col: usize, enc: PositionEncoding) -> usize {
    let start = rope.line_to_char(line);
    let end = line_content_end(rope, line);
    match enc {
        PositionEncoding::Utf32 => start + col.min(end - start),
        PositionEncoding::Utf16 => {
            let base = rope.char_to_utf16_cu(start);
            let limit = rope.char_to_utf16_cu(end);
            rope.utf16_cu_to_char((base + col).min(limit))
        }
        PositionEncoding::Utf8 => {
            let base = rope.char_to_byte(start);
            let limit = rope.char_to_byte(end);
            rope.byte_to_char((base + col).min(limit))
        }
    }
}

/// The column of char `idx` on `line`, for a line that spans rope chunks.
fn char_column_slow(rope: &Rope, line: usize, idx: usize, enc: PositionEncoding) -> usize {
    let start = rope.line_to_char(line);
    let idx = idx.min(line_content_end(rope, line));
    match enc {
        PositionEncoding::Utf32 => idx - start,
        PositionEncoding::Utf16 => rope.char_to_utf16_cu(idx) - rope.char_to_utf16_cu(start),
        PositionEncoding::Utf8 => rope.char_to_byte(idx) - rope.char_to_byte(start),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    fn p(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn astral_characters_in_each_encoding() {
        // "a😀b": 😀 is 4 UTF-8 bytes, 2 UTF-16 units (a surrogate pair), 1 code point.
        let rope = Rope::from_str("a😀b\nx");
        assert_eq!(position_to_char(&rope, p(0, 1), Utf16), 1);
        assert_eq!(position_to_char(&rope, p(0, 3), Utf16), 2); // after the pair: 'b'
        assert_eq!(position_to_char(&rope, p(0, 5), Utf8), 2);
        assert_eq!(position_to_char(&rope, p(0, 2), Utf32), 2);
        // Inside the character rounds down to its start.
        assert_eq!(position_to_char(&rope, p(0, 2), Utf16), 1);
        assert_eq!(position_to_char(&rope, p(0, 3), Utf8), 1);
        // And back.
        assert_eq!(char_to_position(&rope, 2, Utf16), p(0, 3));
        assert_eq!(char_to_position(&rope, 2, Utf8), p(0, 5));
        assert_eq!(char_to_position(&rope, 2, Utf32), p(0, 2));
        assert_eq!(char_to_position(&rope, 4, Utf16), p(1, 0));
        // Two-byte and three-byte UTF-8 characters are one UTF-16 unit.
        let rope = Rope::from_str("é日x");
        assert_eq!(position_to_char(&rope, p(0, 2), Utf16), 2);
        assert_eq!(position_to_char(&rope, p(0, 5), Utf8), 2);
        assert_eq!(char_to_position(&rope, 2, Utf8), p(0, 5));
    }

    #[test]
    fn past_line_end_clamps_and_crlf_is_one_break() {
        let rope = Rope::from_str("ab\r\ncd\ref\ngh");
        assert_eq!(rope.len_lines(), 4);
        for enc in [Utf8, Utf16, Utf32] {
            // Past the end of "ab" clamps before "\r\n", never between "\r" and "\n".
            assert_eq!(position_to_char(&rope, p(0, 2), enc), 2);
            assert_eq!(position_to_char(&rope, p(0, 3), enc), 2);
            assert_eq!(position_to_char(&rope, p(0, 99), enc), 2);
            assert_eq!(position_to_char(&rope, p(1, 0), enc), 4);
            assert_eq!(position_to_char(&rope, p(1, 9), enc), 6); // lone "\r" ends line 1
            assert_eq!(position_to_char(&rope, p(2, 0), enc), 7);
            assert_eq!(position_to_char(&rope, p(3, 5), enc), 12); // last line, no terminator
            // A line past the end is the end of the document.
            assert_eq!(position_to_char(&rope, p(9, 0), enc), rope.len_chars());
            // The "\n" of "\r\n" maps to the end of the line's content.
            assert_eq!(char_to_position(&rope, 3, enc), p(0, 2));
            assert_eq!(char_to_position(&rope, rope.len_chars(), enc), p(3, 2));
        }
        let rope = Rope::from_str("x\r\n");
        assert_eq!(char_to_position(&rope, rope.len_chars(), Utf16), p(1, 0));
        let empty = Rope::new();
        assert_eq!(position_to_char(&empty, p(0, 4), Utf16), 0);
        assert_eq!(position_to_char(&empty, p(3, 4), Utf16), 0);
        assert_eq!(char_to_position(&empty, empty.len_chars(), Utf8), p(0, 0));
    }

    #[test]
    fn unicode_line_separators_are_not_line_breaks() {
        // LSP knows only \n, \r\n and \r; U+2028 and form feed stay inside the line.
        let rope = Rope::from_str("a\u{2028}b\u{c}c\nd");
        assert_eq!(rope.len_lines(), 2);
        assert_eq!(position_to_char(&rope, p(1, 0), Utf16), 6);
    }

    #[test]
    fn round_trips_every_char_boundary() {
        let text = "fn 😀() {\r\n  let é = \"日本\";\r\n}\n🦀\rlast";
        let rope = Rope::from_str(text);
        for enc in [Utf8, Utf16, Utf32] {
            for idx in 0..=rope.len_chars() {
                let line = rope.char_to_line(idx);
                if idx > line_content_end(&rope, line) {
                    continue; // inside a "\r\n" terminator
                }
                let pos = char_to_position(&rope, idx, enc);
                assert_eq!(
                    position_to_char(&rope, pos, enc),
                    idx,
                    "{enc:?} {idx} {pos:?}"
                );
            }
        }
    }

    #[test]
    fn fast_path_matches_the_rope_lookups_on_a_large_document() {
        // Many chunks, lines that straddle chunk boundaries (one very long line), CRLF, CR
        // and astral characters: both paths must agree everywhere.
        let mut text = String::new();
        for i in 0..3000 {
            let eol = ["\n", "\r\n", "\r"][i % 3];
            text.push_str(&format!("line {i} é😀 {}{eol}", "x".repeat(i % 50)));
            if i == 1500 {
                text.push_str(&"日本語🦀 ".repeat(2000));
                text.push('\n');
            }
        }
        let rope = Rope::from_str(&text);
        assert!(rope.chunks().count() > 50);
        let mut seed = 0x1234_5678_9abc_def0_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..5_000 {
            let line = next(rope.len_lines() + 2);
            let col = next(12_000);
            let idx = next(rope.len_chars() + 1);
            for enc in [Utf8, Utf16, Utf32] {
                let fast = position_to_char(&rope, p(line as u32, col as u32), enc);
                let slow = if line >= rope.len_lines() {
                    rope.len_chars()
                } else {
                    position_to_char_slow(&rope, line, col, enc)
                };
                assert_eq!(fast, slow, "{enc:?} line {line} col {col}");
                let pos = char_to_position(&rope, idx, enc);
                let l = rope.char_to_line(idx);
                assert_eq!(pos.line as usize, l);
                assert_eq!(
                    pos.character as usize,
                    char_column_slow(&rope, l, idx, enc),
                    "{enc:?} {idx}"
                );
            }
        }
    }

    #[test]
    fn encoding_names() {
        for enc in [Utf8, Utf16, Utf32] {
            assert_eq!(PositionEncoding::parse(enc.as_str()), Some(enc));
        }
        assert_eq!(PositionEncoding::parse("utf-7"), None);
        assert_eq!(Utf16.len_of("a😀"), 3);
        assert_eq!(Utf8.len_of("a😀"), 5);
        assert_eq!(Utf32.len_of("a😀"), 2);
    }
}
