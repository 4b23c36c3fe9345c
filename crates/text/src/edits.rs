//! Minimal text edits between two versions of a document, for editors.
//!
//! A line diff (`similar`, Myers, under a deadline) finds the changed hunks; each hunk is then
//! refined to character-level edits so that cursors, marks and folds outside the changed
//! characters stay where they are (Neovim and Helix apply edits as sent). All edits refer to
//! the old text, are sorted, and never overlap: the shape LSP's `TextEdit[]` needs.
//!
//! Pure functions: no I/O, no LSP types.

use ropey::Rope;
use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};
use std::borrow::Cow;
use std::time::{Duration, Instant};

use super::documents::LineEnding;
use super::positions::{PositionEncoding, Range, char_to_position, position_to_char};

/// Budget for one diff. Past it `similar` approximates (bigger, still correct edits).
pub(crate) const DIFF_DEADLINE: Duration = Duration::from_millis(100);

/// Hunks with more characters than this on either side are not refined below the line
/// level (a char diff is O(N·D)); their common prefix and suffix are still trimmed.
const MAX_REFINE_CHARS: usize = 4096;

/// Replace `range` (in the old text) with `new_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub range: Range,
    pub new_text: String,
}

/// Rewrites lone `\n` (and lone `\r`) as the document's line ending when it is not LF, so
/// text from the model (which writes `\n`) matches a CRLF buffer. LF documents are left
/// alone.
pub fn normalize_line_endings(text: &str, eol: LineEnding) -> Cow<'_, str> {
    if eol == LineEnding::Lf {
        return Cow::Borrowed(text);
    }
    let target = eol.as_str();
    let mut out = String::with_capacity(text.len() + text.len() / 32);
    let mut changed = false;
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            '\r' if chars.peek().map(|(_, n)| *n) == Some('\n') => {
                chars.next();
                out.push_str(target);
                changed |= target != "\r\n";
            }
            '\r' | '\n' => {
                out.push_str(target);
                changed |= target.len() != 1 || target.as_bytes()[0] != c as u8;
            }
            c => out.push(c),
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// Splits `text` into lines that keep their terminators (`\n`, `\r\n` or a lone `\r`, as in
/// LSP).
fn split_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(text.len() / 32 + 1);
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..=i]);
                start = i + 1;
            }
            b'\r' => {
                let end = if bytes.get(i + 1) == Some(&b'\n') {
                    i + 1
                } else {
                    i
                };
                lines.push(&text[start..=end]);
                start = end + 1;
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The edits that turn `old` into `new`, with positions in `enc`. `new` is taken as is; call
/// [`normalize_line_endings`] first for text from the model.
pub fn minimal_edits(old: &Rope, new: &str, enc: PositionEncoding) -> Vec<TextEdit> {
    let deadline = Instant::now() + DIFF_DEADLINE;
    let old_text = old.to_string();
    // The rope breaks lines exactly where `split_lines` does, so old line i starts at
    // `old.line_to_char(i)`.
    let old_lines = split_lines(&old_text);
    let new_lines = split_lines(new);
    let ops =
        capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, Some(deadline));
    let mut edits = Vec::new();
    // Consecutive non-equal ops form one hunk: (old lines, new lines).
    let mut hunk: Option<(std::ops::Range<usize>, std::ops::Range<usize>)> = None;
    let mut flush = |hunk: &mut Option<(std::ops::Range<usize>, std::ops::Range<usize>)>| {
        if let Some((or, nr)) = hunk.take() {
            let old_hunk = old_lines[or.clone()].concat();
            let new_hunk = new_lines[nr].concat();
            let base = old.line_to_char(or.start);
            refine(old, base, &old_hunk, &new_hunk, enc, deadline, &mut edits);
        }
    };
    for op in &ops {
        let (tag, or, nr) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            flush(&mut hunk);
            continue;
        }
        match &mut hunk {
            Some((ho, hn)) => {
                ho.end = or.end;
                hn.end = nr.end;
            }
            None => hunk = Some((or, nr)),
        }
    }
    flush(&mut hunk);
    edits
}

/// Char-level edits for one changed hunk starting at char `base` of `old`.
fn refine(
    old: &Rope,
    base: usize,
    old_hunk: &str,
    new_hunk: &str,
    enc: PositionEncoding,
    deadline: Instant,
    edits: &mut Vec<TextEdit>,
) {
    let old_chars: Vec<char> = old_hunk.chars().collect();
    let new_chars: Vec<char> = new_hunk.chars().collect();
    // Common prefix and suffix first: cheap, and usually all there is.
    let prefix = old_chars
        .iter()
        .zip(&new_chars)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = old_chars[prefix..]
        .iter()
        .rev()
        .zip(new_chars[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let o = &old_chars[prefix..old_chars.len() - suffix];
    let n = &new_chars[prefix..new_chars.len() - suffix];
    let base = base + prefix;
    let push = |edits: &mut Vec<TextEdit>, start: usize, end: usize, text: String| {
        // Never split a "\r\n" pair in the old text: an edit boundary between them would have
        // no LSP position. Widen the edit over the pair instead.
        let (mut start, mut end, mut text) = (start, end, text);
        if start > 0
            && start < old.len_chars()
            && old.char(start) == '\n'
            && old.char(start - 1) == '\r'
        {
            start -= 1;
            text.insert(0, '\r');
        }
        if end > 0 && end < old.len_chars() && old.char(end) == '\n' && old.char(end - 1) == '\r' {
            end += 1;
            text.push('\n');
        }
        let range = Range::new(
            char_to_position(old, start, enc),
            char_to_position(old, end, enc),
        );
        debug_assert_eq!(position_to_char(old, range.start, enc), start);
        debug_assert_eq!(position_to_char(old, range.end, enc), end);
        edits.push(TextEdit {
            range,
            new_text: text,
        });
    };
    if o.is_empty() && n.is_empty() {
        return;
    }
    if o.len() > MAX_REFINE_CHARS || n.len() > MAX_REFINE_CHARS || Instant::now() >= deadline {
        push(edits, base, base + o.len(), n.iter().collect());
        return;
    }
    let ops = capture_diff_slices_deadline(Algorithm::Myers, o, n, Some(deadline));
    let mut group: Option<(usize, usize, String)> = None;
    for op in ops {
        match op {
            DiffOp::Equal { .. } => {
                if let Some((s, e, t)) = group.take() {
                    push(edits, s, e, t);
                }
            }
            _ => {
                let (_, or, nr) = op.as_tag_tuple();
                let text: String = n[nr].iter().collect();
                match &mut group {
                    Some((_, e, t)) => {
                        *e = base + or.end;
                        t.push_str(&text);
                    }
                    None => group = Some((base + or.start, base + or.end, text)),
                }
            }
        }
    }
    if let Some((s, e, t)) = group.take() {
        push(edits, s, e, t);
    }
}

/// Applies edits that all refer to `old` (LSP `TextEdit[]` semantics).
#[cfg(test)]
fn apply_edits(old: &Rope, edits: &[TextEdit], enc: PositionEncoding) -> String {
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                position_to_char(old, e.range.start, enc),
                position_to_char(old, e.range.end, enc),
                e.new_text.as_str(),
            )
        })
        .collect();
    spans.sort_by_key(|(s, e, _)| (*s, *e));
    let mut out = String::with_capacity(old.len_bytes());
    let mut at = 0;
    for (s, e, t) in spans {
        assert!(s >= at, "overlapping edits");
        out.extend(old.slice(at..s).chunks());
        out.push_str(t);
        at = e;
    }
    out.extend(old.slice(at..).chunks());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::positions::Position;

    /// A tiny deterministic generator (xorshift64*), so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    const PIECES: &[&str] = &[
        "a", "b", "fn", " ", "x", "😀", "é", "日本", "\n", "\r\n", "\r", "\t", "{", "}", "🦀", "=",
    ];

    fn random_text(rng: &mut Rng, len: usize) -> String {
        (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect()
    }

    fn mutate(rng: &mut Rng, text: &str) -> String {
        let mut chars: Vec<String> = text.chars().map(String::from).collect();
        for _ in 0..rng.below(6) {
            let at = rng.below(chars.len() + 1);
            match rng.below(3) {
                0 => chars.insert(at, PIECES[rng.below(PIECES.len())].to_string()),
                1 if at < chars.len() => {
                    chars.remove(at);
                }
                _ if at < chars.len() => chars[at] = PIECES[rng.below(PIECES.len())].to_string(),
                _ => {}
            }
        }
        chars.concat()
    }

    fn check(old: &str, new: &str, enc: PositionEncoding) -> Vec<TextEdit> {
        let rope = Rope::from_str(old);
        let edits = minimal_edits(&rope, new, enc);
        assert_eq!(
            apply_edits(&rope, &edits, enc),
            new,
            "old={old:?} new={new:?} edits={edits:?}"
        );
        for w in edits.windows(2) {
            assert!(
                w[0].range.end <= w[1].range.start,
                "unsorted or overlapping: {edits:?}"
            );
        }
        edits
    }

    #[test]
    fn randomized_edits_reproduce_the_new_text() {
        let mut rng = Rng(0x5eed_1234_abcd_0042);
        for round in 0..3000 {
            let len = rng.below(60);
            let old = random_text(&mut rng, len);
            let new = if round % 10 == 0 {
                let len = rng.below(60);
                random_text(&mut rng, len)
            } else {
                mutate(&mut rng, &old)
            };
            for enc in [
                PositionEncoding::Utf8,
                PositionEncoding::Utf16,
                PositionEncoding::Utf32,
            ] {
                check(&old, &new, enc);
            }
        }
    }

    #[test]
    fn edits_are_character_level() {
        let old = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
        let new = "fn main() {\n    let y = 1;\n    println!(\"{x}\");\n}\n";
        let edits = check(old, new, PositionEncoding::Utf16);
        assert_eq!(
            edits,
            vec![TextEdit {
                range: Range::new(Position::new(1, 8), Position::new(1, 9)),
                new_text: "y".into()
            }]
        );
        assert!(check(old, old, PositionEncoding::Utf16).is_empty());
    }

    #[test]
    fn utf16_columns_after_astral_characters() {
        let edits = check("😀a\n", "😀b\n", PositionEncoding::Utf16);
        assert_eq!(edits[0].range.start, Position::new(0, 2));
        let edits = check("😀a\n", "😀b\n", PositionEncoding::Utf8);
        assert_eq!(edits[0].range.start, Position::new(0, 4));
    }

    #[test]
    fn end_of_file_without_newline() {
        let edits = check("a\nb", "a\nb\nc", PositionEncoding::Utf16);
        assert_eq!(edits[0].range.start, Position::new(1, 1));
        check("a\nb", "a\n", PositionEncoding::Utf16);
        check("", "x\ny", PositionEncoding::Utf16);
        check("x\ny", "", PositionEncoding::Utf16);
    }

    #[test]
    fn crlf_pairs_are_never_split() {
        // Inserting a line in a CRLF document: the edit must not start between \r and \n.
        let old = "a\r\nb\r\n";
        let new = "a\r\nnew\r\nb\r\n";
        let edits = check(old, new, PositionEncoding::Utf16);
        assert!(
            edits.iter().all(|e| !e.new_text.starts_with('\n')),
            "{edits:?}"
        );
        // A lone \n replaced by \r\n and back.
        check("a\nb", "a\r\nb", PositionEncoding::Utf16);
        check("a\r\nb", "a\nb", PositionEncoding::Utf16);
        check("a\r\nb", "a\rb", PositionEncoding::Utf16);
    }

    #[test]
    fn line_endings_normalize_to_the_document() {
        assert_eq!(
            normalize_line_endings("a\nb\r\nc", LineEnding::CrLf),
            "a\r\nb\r\nc"
        );
        assert_eq!(normalize_line_endings("a\nb", LineEnding::Lf), "a\nb");
        assert!(matches!(
            normalize_line_endings("a\r\nb", LineEnding::CrLf),
            Cow::Borrowed(_)
        ));
        assert_eq!(normalize_line_endings("a\nb\r\n", LineEnding::Cr), "a\rb\r");
        // Model output with \n against a CRLF buffer: only the changed line is edited.
        let old = "one\r\ntwo\r\nthree\r\n";
        let model = "one\ntwo!\nthree\n";
        let new = normalize_line_endings(model, LineEnding::CrLf);
        let edits = check(old, &new, PositionEncoding::Utf16);
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].new_text, "!");
    }

    #[test]
    fn large_hunks_fall_back_to_one_trimmed_edit() {
        let old: String = (0..3000).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("LINE {i}\n")).collect();
        let edits = check(&old, &new, PositionEncoding::Utf16);
        assert!(!edits.is_empty());
    }
}
