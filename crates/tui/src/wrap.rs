//! Word wrapping of styled lines to the terminal's width, so the number of rows a cell takes
//! is known before it is drawn (history is inserted above the viewport by row count).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// A logical line and how its continuation rows start.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wrapped {
    /// The line, its first-row prefix included.
    pub line: Line<'static>,
    /// What continuation rows start with (an indent, a quote bar).
    pub indent: Vec<Span<'static>>,
    /// Code and diffs are cut at the width instead of wrapped at spaces.
    pub hard: bool,
}

impl Wrapped {
    /// A line whose continuation rows start with `indent` spaces.
    pub(crate) fn indented(line: Line<'static>, indent: usize) -> Wrapped {
        Wrapped {
            line,
            indent: if indent == 0 {
                Vec::new()
            } else {
                vec![Span::raw(" ".repeat(indent))]
            },
            hard: false,
        }
    }
}

/// The display width of one character (control characters count as nothing).
pub(crate) fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// The display width of `s`.
pub(crate) fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// The rows `lines` take at `width` columns.
pub(crate) fn wrap_all(lines: &[Wrapped], width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        wrap_into(l, width, &mut out);
    }
    out
}

/// Appends the rows of `w` at `width` columns to `out`.
pub(crate) fn wrap_into(w: &Wrapped, width: u16, out: &mut Vec<Line<'static>>) {
    let width = usize::from(width.max(1));
    let indent_width: usize = w.indent.iter().map(|s| str_width(&s.content)).sum();
    // An indent that leaves no room is dropped rather than looping forever.
    let indent: &[Span<'static>] = if indent_width + 1 >= width {
        &[]
    } else {
        &w.indent
    };
    let indent_width = if indent.is_empty() { 0 } else { indent_width };
    let mut rows = RowBuilder::new(width, indent, indent_width, w.line.style);
    for span in &w.line.spans {
        for c in span.content.chars() {
            rows.push(c, span.style, w.hard);
        }
    }
    rows.finish(out);
}

/// Builds rows one character at a time, keeping the current word so it can move to the next
/// row whole.
struct RowBuilder<'a> {
    width: usize,
    indent: &'a [Span<'static>],
    indent_width: usize,
    line_style: Style,
    /// Finished rows.
    rows: Vec<Vec<(char, Style)>>,
    row: Vec<(char, Style)>,
    row_width: usize,
    /// The row started with the indent (a continuation row).
    continued: bool,
    /// The characters of the word being read, not yet placed.
    word: Vec<(char, Style)>,
    word_width: usize,
}

impl<'a> RowBuilder<'a> {
    fn new(
        width: usize,
        indent: &'a [Span<'static>],
        indent_width: usize,
        line_style: Style,
    ) -> Self {
        RowBuilder {
            width,
            indent,
            indent_width,
            line_style,
            rows: Vec::new(),
            row: Vec::new(),
            row_width: 0,
            continued: false,
            word: Vec::new(),
            word_width: 0,
        }
    }

    fn push(&mut self, c: char, style: Style, hard: bool) {
        let cw = char_width(c);
        if hard {
            if self.row_width + cw > self.width && self.row_width > self.start_width() {
                self.break_row();
            }
            self.row.push((c, style));
            self.row_width += cw;
            return;
        }
        if c == ' ' {
            self.place_word();
            // A space that ends a row is dropped, and so is one that would start a wrapped row.
            if self.row_width + 1 > self.width {
                self.break_row();
            } else if !(self.continued && self.row_width == self.indent_width) {
                self.row.push((c, style));
                self.row_width += 1;
            }
            return;
        }
        self.word.push((c, style));
        self.word_width += cw;
    }

    fn start_width(&self) -> usize {
        if self.continued { self.indent_width } else { 0 }
    }

    /// Places the pending word on this row, the next one, or across rows when it is longer
    /// than a whole row.
    fn place_word(&mut self) {
        if self.word.is_empty() {
            return;
        }
        let word = std::mem::take(&mut self.word);
        let word_width = std::mem::take(&mut self.word_width);
        if self.row_width + word_width > self.width && self.row_width > self.start_width() {
            // Trailing spaces stay off the end of the row.
            while self.row.last().is_some_and(|(c, _)| *c == ' ') {
                self.row.pop();
                self.row_width -= 1;
            }
            self.break_row();
        }
        for (c, style) in word {
            let cw = char_width(c);
            if self.row_width + cw > self.width && self.row_width > self.start_width() {
                self.break_row();
            }
            self.row.push((c, style));
            self.row_width += cw;
        }
    }

    fn break_row(&mut self) {
        let row = std::mem::take(&mut self.row);
        self.rows.push(row);
        self.continued = true;
        self.row_width = self.indent_width;
    }

    fn finish(mut self, out: &mut Vec<Line<'static>>) {
        self.place_word();
        let last = std::mem::take(&mut self.row);
        self.rows.push(last);
        for (i, row) in self.rows.into_iter().enumerate() {
            let mut spans: Vec<Span<'static>> = if i > 0 {
                self.indent.to_vec()
            } else {
                Vec::new()
            };
            spans.extend(group(row));
            out.push(Line::from(spans).style(self.line_style));
        }
    }
}

/// Runs of characters with one style, as spans.
fn group(chars: Vec<(char, Style)>) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style = None;
    for (c, s) in chars {
        if style.is_some_and(|st| st != s) {
            spans.push(Span::styled(
                std::mem::take(&mut text),
                style.unwrap_or_default(),
            ));
        }
        style = Some(s);
        text.push(c);
    }
    if let Some(s) = style {
        spans.push(Span::styled(text, s));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str, width: u16, indent: usize) -> Vec<String> {
        wrap_all(
            &[Wrapped::indented(Line::from(text.to_string()), indent)],
            width,
        )
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
    }

    #[test]
    fn words_move_to_the_next_row_whole() {
        assert_eq!(
            rows("• the quick brown fox", 12, 2),
            ["• the quick", "  brown fox"]
        );
        assert_eq!(rows("abcdefghij", 4, 0), ["abcd", "efgh", "ij"]);
        assert_eq!(rows("", 10, 0), [""]);
        assert_eq!(rows("界界界", 4, 0), ["界界", "界"]);
    }

    #[test]
    fn hard_lines_are_cut() {
        let w = Wrapped {
            line: Line::from("let x = 1; let y = 2;"),
            indent: vec![],
            hard: true,
        };
        let out = wrap_all(&[w], 10);
        assert_eq!(out.len(), 3);
    }
}
