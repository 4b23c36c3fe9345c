//! The composer: multi-line input with a cursor, history on Up/Down, and pastes folded to a
//! placeholder when they are big (the placeholder is expanded when the message is sent). A
//! pasted or dropped image file, or the clipboard's image (Ctrl+V), becomes an `[Image #N]`
//! chip; the image goes with the message.

use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::char_width;

/// A paste longer than this many lines, or bytes, is shown folded.
const FOLD_LINES: usize = 10;
const FOLD_BYTES: usize = 1000;
/// Rows the composer grows to before it scrolls.
pub(crate) const MAX_ROWS: usize = 8;

/// The text being written and where the cursor is.
#[derive(Debug, Default)]
pub(crate) struct Composer {
    text: String,
    /// A byte offset into `text`, on a character boundary.
    cursor: usize,
    history: Vec<String>,
    /// Which history entry is shown, while browsing.
    browsing: Option<usize>,
    /// What was typed before browsing started.
    draft: String,
    /// Folded pastes: placeholder and the text it stands for.
    pastes: Vec<(String, String)>,
    /// Image chips: `[Image #N]` and the file it stands for.
    images: Vec<(String, std::path::PathBuf)>,
}

/// The image file a paste names, if it names one: terminals paste a dropped file as its path,
/// quoted or with its spaces escaped, or as a `file://` URL.
fn image_path(pasted: &str) -> Option<std::path::PathBuf> {
    let t = pasted.trim();
    if t.contains('\n') {
        return None;
    }
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|q| t.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .map_or_else(|| t.replace("\\ ", " "), str::to_string);
    let raw = unquoted.strip_prefix("file://").unwrap_or(&unquoted);
    let path = std::path::PathBuf::from(raw);
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let image = matches!(ext.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp");
    (image && path.is_file()).then(|| std::fs::canonicalize(&path).unwrap_or(path))
}

impl Composer {
    /// The text as typed (placeholders not expanded).
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset.
    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    /// True when nothing is typed.
    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text; the cursor goes to the end.
    pub(crate) fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    /// Empties the composer.
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.pastes.clear();
        self.images.clear();
        self.browsing = None;
    }

    /// The images whose chips are still in `sent` (the message being sent), forgotten.
    pub(crate) fn take_images(&mut self, sent: &str) -> Vec<std::path::PathBuf> {
        self.images
            .drain(..)
            .filter(|(chip, _)| sent.contains(chip.as_str()))
            .map(|(_, path)| path)
            .collect()
    }

    /// Takes the message to send, with folded pastes expanded, and remembers it in history.
    pub(crate) fn take(&mut self) -> String {
        let typed = std::mem::take(&mut self.text);
        let mut out = typed.clone();
        for (placeholder, content) in self.pastes.drain(..) {
            out = out.replacen(&placeholder, &content, 1);
        }
        if !typed.trim().is_empty() && self.history.last() != Some(&typed) {
            self.history.push(typed);
        }
        self.cursor = 0;
        self.browsing = None;
        out
    }

    /// Inserts `s` at the cursor.
    pub(crate) fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
        self.browsing = None;
    }

    /// Inserts one character.
    pub(crate) fn insert_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.insert_str(c.encode_utf8(&mut buf));
    }

    /// An image file as the next `[Image #N]` chip at the cursor.
    pub(crate) fn add_image(&mut self, path: std::path::PathBuf) {
        let chip = format!("[Image #{}]", self.images.len() + 1);
        self.insert_str(&chip);
        self.images.push((chip, path));
    }

    /// A bracketed paste: line endings normalised, control characters dropped, and folded
    /// when it is big.
    pub(crate) fn paste(&mut self, raw: &str) {
        let text = raw
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\t', "    ");
        let text: String = text
            .chars()
            .filter(|c| *c == '\n' || !c.is_control())
            .collect();
        if let Some(path) = image_path(&text) {
            self.add_image(path);
            return;
        }
        let lines = text.lines().count();
        if lines > FOLD_LINES || text.len() > FOLD_BYTES {
            let n = self.pastes.len() + 1;
            let placeholder = if n == 1 {
                format!("[pasted {lines} lines]")
            } else {
                format!("[pasted {lines} lines #{n}]")
            };
            self.insert_str(&placeholder);
            self.pastes.push((placeholder, text));
        } else {
            self.insert_str(&text);
        }
    }

    /// Deletes the character before the cursor.
    pub(crate) fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    /// Deletes the character under the cursor.
    pub(crate) fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    /// Deletes the word before the cursor (Ctrl+W).
    pub(crate) fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        let start = trimmed
            .rfind(char::is_whitespace)
            .map(|i| i + 1)
            .unwrap_or(0);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Deletes from the start of the line to the cursor (Ctrl+U).
    pub(crate) fn delete_to_line_start(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    pub(crate) fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub(crate) fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    pub(crate) fn home(&mut self) {
        self.cursor = self.line_start();
    }

    pub(crate) fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Up: the line above, or the previous history entry on the first line.
    pub(crate) fn up(&mut self) {
        let start = self.line_start();
        if start == 0 {
            self.history_prev();
            return;
        }
        let col = self.text[start..self.cursor].chars().count();
        let prev_start = self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = advance(&self.text, prev_start, start - 1, col);
    }

    /// Down: the line below, or the next history entry on the last line.
    pub(crate) fn down(&mut self) {
        let end = self.line_end();
        if end == self.text.len() {
            self.history_next();
            return;
        }
        let col = self.text[self.line_start()..self.cursor].chars().count();
        let next_start = end + 1;
        let next_end = self.text[next_start..]
            .find('\n')
            .map_or(self.text.len(), |i| next_start + i);
        self.cursor = advance(&self.text, next_start, next_end, col);
    }

    fn history_prev(&mut self) {
        let at = match self.browsing {
            Some(0) => return,
            Some(i) => i - 1,
            None if self.history.is_empty() => return,
            None => {
                self.draft = self.text.clone();
                self.history.len() - 1
            }
        };
        self.browsing = Some(at);
        self.text = self.history[at].clone();
        self.cursor = self.text.len();
    }

    fn history_next(&mut self) {
        let Some(i) = self.browsing else { return };
        if i + 1 < self.history.len() {
            self.browsing = Some(i + 1);
            self.text = self.history[i + 1].clone();
        } else {
            self.browsing = None;
            self.text = std::mem::take(&mut self.draft);
        }
        self.cursor = self.text.len();
    }

    /// The `@word` or `/word` the cursor is in: its byte range and text.
    pub(crate) fn token_at_cursor(&self) -> (usize, usize, &str) {
        let start = self.text[..self.cursor]
            .rfind(char::is_whitespace)
            .map_or(0, |i| i + 1);
        let end = self.text[self.cursor..]
            .find(char::is_whitespace)
            .map_or(self.text.len(), |i| self.cursor + i);
        (start, end, &self.text[start..end])
    }

    /// Replaces `start..end` with `with`, the cursor after it.
    pub(crate) fn replace(&mut self, start: usize, end: usize, with: &str) {
        self.text.replace_range(start..end, with);
        self.cursor = start + with.len();
    }

    /// The composer's rows at `width` and the cursor's (column, row) among them.
    pub(crate) fn render(
        &self,
        theme: &Theme,
        width: u16,
        placeholder: &str,
    ) -> (Vec<Line<'static>>, (u16, u16)) {
        let width = usize::from(width.max(4));
        let prompt = Span::styled("› ", theme.user());
        if self.text.is_empty() {
            let line = Line::from(vec![
                prompt,
                Span::styled(placeholder.to_string(), theme.dim()),
            ]);
            return (vec![line], (2, 0));
        }
        let avail = width - 2;
        let mut rows: Vec<String> = vec![String::new()];
        let mut row_width = 0;
        let mut cursor = (0usize, 0usize);
        for (i, c) in self.text.char_indices() {
            if i == self.cursor {
                cursor = (row_width, rows.len() - 1);
            }
            if c == '\n' {
                rows.push(String::new());
                row_width = 0;
                continue;
            }
            let cw = char_width(c);
            if row_width + cw > avail {
                rows.push(String::new());
                row_width = 0;
                if i == self.cursor {
                    cursor = (0, rows.len() - 1);
                }
            }
            if let Some(r) = rows.last_mut() {
                r.push(c);
            }
            row_width += cw;
        }
        if self.cursor == self.text.len() {
            if row_width >= avail {
                rows.push(String::new());
                row_width = 0;
            }
            cursor = (row_width, rows.len() - 1);
        }
        // Keep the cursor's row in view when the text is taller than the composer.
        let first = cursor.1.saturating_sub(MAX_ROWS - 1);
        let lines = rows
            .into_iter()
            .enumerate()
            .skip(first)
            .take(MAX_ROWS)
            .map(|(i, r)| {
                let lead = if i == 0 {
                    prompt.clone()
                } else {
                    Span::raw("  ")
                };
                Line::from(vec![lead, Span::raw(r)])
            })
            .collect();
        let col = u16::try_from(cursor.0 + 2).unwrap_or(u16::MAX);
        let row = u16::try_from(cursor.1 - first).unwrap_or(0);
        (lines, (col, row))
    }
}

/// The offset `col` characters into the line `start..end` (or its end).
fn advance(text: &str, start: usize, end: usize, col: usize) -> usize {
    text[start..end]
        .char_indices()
        .nth(col)
        .map_or(end, |(i, _)| start + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_history_and_pastes() {
        let mut c = Composer::default();
        c.insert_str("hello");
        c.insert_char('\n');
        c.insert_str("world");
        c.up();
        assert_eq!(c.cursor(), 5);
        c.home();
        c.insert_char('>');
        assert_eq!(c.take(), ">hello\nworld");
        c.insert_str("draft");
        c.up();
        assert_eq!(c.text(), ">hello\nworld");
        c.down();
        c.down();
        assert_eq!(c.text(), "draft");
        c.clear();
        let big: String = (0..40).map(|i| format!("line {i}\r\n")).collect();
        c.insert_str("see ");
        c.paste(&big);
        assert_eq!(c.text(), "see [pasted 40 lines]");
        let sent = c.take();
        assert!(sent.starts_with("see line 0\nline 1\n"), "{sent}");
        c.insert_str("a b @sr");
        assert_eq!(c.token_at_cursor(), (4, 7, "@sr"));
        c.delete_word();
        assert_eq!(c.text(), "a b ");
    }

    #[test]
    fn cursor_position_follows_wrapping() {
        let mut c = Composer::default();
        c.insert_str("abcdefgh");
        let (lines, cur) = c.render(&Theme::new(false), 6, "");
        // A full last row puts the cursor at the start of the next one.
        assert_eq!(lines.len(), 3);
        assert_eq!(cur, (2, 2));
    }
}
