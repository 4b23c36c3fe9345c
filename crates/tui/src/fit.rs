//! Text in the rows it is given. A prompt (an approval, a question) must show what it asks
//! and the keys that answer it on any screen, so each of its parts gets a number of rows,
//! and a line that needs more is cut to them: its head, or a window around the part that
//! matters, with a marker that says how many characters were left out. Pure.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::ops::Range;

use super::wrap::{Wrapped, str_width, wrap_into};

/// Characters kept before the part that matters when a window has to start inside a line.
const CONTEXT: usize = 12;
/// The line's first characters shown before a window that starts inside it.
const HEAD: usize = 24;
/// A window showing fewer characters than this (of a line that has them) tries shorter
/// markers.
const MIN_SHOWN: usize = 16;

/// One logical line to fit: `prefix` (a prompt sign, an indent) then `body`, the text that
/// may be cut.
pub(crate) struct Fit<'a> {
    pub prefix: &'a [Span<'static>],
    pub body: &'a [Span<'static>],
    /// Continuation rows start with this many spaces.
    pub indent: usize,
    /// Cut at the width (code) instead of wrapped at spaces.
    pub hard: bool,
    /// The style of the "… N characters left out" markers.
    pub marker: Style,
}

impl Fit<'_> {
    /// Every row of the line.
    pub(crate) fn rows(&self, width: u16) -> Vec<Line<'static>> {
        let all = Window {
            head: 0,
            start: 0,
            end: chars(self.body),
            marks: Marks::Whole,
        };
        self.window(all, width)
    }

    /// The rows of the line, at most `cap`: all of them when they fit, else a window: the
    /// one that shows `focus` (character indices into the body), after the line's first
    /// characters when there is room for them, or without a focus the line's head. A cut
    /// line is cut at the width, so a long word is not moved whole to the next row.
    pub(crate) fn fit(
        &self,
        width: u16,
        cap: usize,
        focus: Option<Range<usize>>,
    ) -> Vec<Line<'static>> {
        let cap = cap.max(1);
        let len = chars(self.body);
        if let Some(all) = self.within(width, cap) {
            return all;
        }
        // The most characters `cap` rows could show (a character is at least a column,
        // but for the rare zero-width one).
        let most = cap
            .saturating_mul(usize::from(width.max(1)))
            .saturating_mul(2)
            .saturating_add(16);
        let fits = |w: Window| w.end - w.start <= most && self.window(w, width).len() <= cap;
        let mut w = Window {
            head: 0,
            start: 0,
            end: 0,
            marks: Marks::Long,
        };
        if let Some(f) = focus.filter(|f| f.start < len) {
            let end = f.end.clamp(f.start + 1, len);
            // From the line's start when the part that matters is near enough to it, else
            // from a little before it, else from it.
            w.start = [0, f.start.saturating_sub(CONTEXT)]
                .into_iter()
                .find(|&start| fits(Window { start, end, ..w }))
                .unwrap_or(f.start);
            // The line's first characters too (`sh -c "…`), if they leave room for it.
            let head = Window {
                head: HEAD.min(w.start),
                end,
                ..w
            };
            let blank = slice(self.body, 0, HEAD)
                .iter()
                .all(|s| s.content.trim().is_empty());
            if w.start > HEAD && !blank && fits(head) {
                w.head = head.head;
            }
        }
        // The longest window from there that fits.
        let longest = |w: Window| {
            let (mut lo, mut hi) = (w.start, len.min(w.start.saturating_add(most)));
            // The marker after a window that stops short can make it longer than one that
            // reaches the end: try the end first.
            if fits(Window { end: hi, ..w }) {
                return Window { end: hi, ..w };
            }
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if fits(Window { end: mid, ..w }) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            Window { end: lo, ..w }
        };
        w = longest(w);
        // Markers that leave almost no room for the text itself (a narrow screen) shrink
        // to an ellipsis.
        if w.end - w.start < (len - w.start).min(MIN_SHOWN) {
            let short = longest(Window {
                head: 0,
                marks: Marks::Short,
                ..w
            });
            if short.end > w.end {
                w = short;
            }
        }
        // A window that reached the line's end gives the rows left to what comes before.
        if w.end == len && w.start > w.head {
            let (mut lo, mut hi) = (w.head.max(w.start.saturating_sub(most)), w.start);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if fits(Window { start: mid, ..w }) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            w.start = lo;
        }
        let mut rows = self.window(w, width);
        // Even the markers alone may not fit a very narrow screen.
        rows.truncate(cap);
        rows
    }

    /// Every row of the line if they are at most `cap`.
    pub(crate) fn within(&self, width: u16, cap: usize) -> Option<Vec<Line<'static>>> {
        // A row holds at most `width` columns: a line wider than `cap` rows of them cannot
        // fit, and is not wrapped whole to learn it (it may be megabytes).
        if self.width() > cap.saturating_mul(usize::from(width.max(1))) {
            return None;
        }
        Some(self.rows(width)).filter(|rows| rows.len() <= cap)
    }

    /// The display width of the whole line.
    fn width(&self) -> usize {
        self.prefix
            .iter()
            .chain(self.body)
            .map(|s| str_width(&s.content))
            .sum()
    }

    /// The rows of window `w` of the body, with its marks for what it leaves out.
    fn window(&self, w: Window, width: u16) -> Vec<Line<'static>> {
        let len = chars(self.body);
        let mut spans = self.prefix.to_vec();
        spans.extend(slice(self.body, 0, w.head));
        if w.start > w.head {
            let text = match (w.marks, w.head) {
                (Marks::Short, _) => "…".to_string(),
                (_, 0) => format!("… {} left out … ", characters(w.start)),
                _ => format!(" … {} left out … ", characters(w.start - w.head)),
            };
            spans.push(Span::styled(text, self.marker));
        }
        spans.extend(slice(self.body, w.start.max(w.head), w.end));
        if w.end < len {
            let text = match w.marks {
                Marks::Short => "…".to_string(),
                _ => format!(" … {}", plural(len - w.end, "more character")),
            };
            spans.push(Span::styled(text, self.marker));
        }
        let line = Wrapped {
            line: Line::from(spans),
            indent: if self.indent == 0 {
                Vec::new()
            } else {
                vec![Span::raw(" ".repeat(self.indent))]
            },
            hard: self.hard || w.marks != Marks::Whole,
        };
        let mut out = Vec::new();
        wrap_into(&line, width, &mut out);
        out
    }
}

/// The part of a line shown: its first `head` characters, then `start..end`; markers say
/// what is left out between and after.
#[derive(Debug, Clone, Copy)]
struct Window {
    head: usize,
    start: usize,
    end: usize,
    marks: Marks,
}

/// How a window says what it left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marks {
    /// Nothing is left out: the line wraps as it would anywhere.
    Whole,
    /// "… 3999 characters left out …", "… 15 more characters".
    Long,
    /// "…", where the long ones would leave no room.
    Short,
}

/// "1 character", "4873 characters".
pub(crate) fn characters(n: usize) -> String {
    plural(n, "character")
}

/// "1 line", "58 lines" and the like.
pub(crate) fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The number of characters in `spans`.
pub(crate) fn chars(spans: &[Span<'static>]) -> usize {
    spans.iter().map(|s| s.content.chars().count()).sum()
}

/// The characters `start..end` of `spans`, styles kept.
fn slice(spans: &[Span<'static>], start: usize, end: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut at = 0;
    for s in spans {
        let n = s.content.chars().count();
        let (from, to) = (start.max(at), end.min(at + n));
        if from < to {
            let text: String = s.content.chars().skip(from - at).take(to - from).collect();
            out.push(Span::styled(text, s.style));
        }
        at += n;
        if at >= end {
            break;
        }
    }
    out
}

/// Rows of `lines`, at most `cap`: when they are more, the first `cap - 1` and a marker
/// saying how many were left out (`what`: "lines of the diff").
pub(crate) fn head_rows(
    mut rows: Vec<Line<'static>>,
    cap: usize,
    what: &str,
    marker: Style,
) -> Vec<Line<'static>> {
    if rows.len() <= cap {
        return rows;
    }
    if cap <= 1 {
        rows.truncate(cap);
        return rows;
    }
    let left = rows.len() - (cap - 1);
    rows.truncate(cap - 1);
    rows.push(Line::from(Span::styled(
        format!("    … {left} more {what}"),
        marker,
    )));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(rows: &[Line<'static>]) -> Vec<String> {
        rows.iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_long_line_keeps_its_head_or_the_window_around_its_focus() {
        let prefix = [Span::raw("$ ")];
        let body_text = format!("{}rm -rf /tmp/x{}", "a".repeat(500), "b".repeat(500));
        let body = [Span::raw(body_text.clone())];
        let fit = Fit {
            prefix: &prefix,
            body: &body,
            indent: 2,
            hard: true,
            marker: Style::new(),
        };
        // 1015 characters after the prefix, 38 to a continuation row.
        assert_eq!(fit.rows(40).len(), 27);
        // Without a focus: the head, and what was left out.
        let head = text(&fit.fit(40, 3, None));
        assert_eq!(head.len(), 3);
        assert!(head[0].starts_with("$ aaaa"), "{head:?}");
        assert!(head[2].contains("more"), "{head:?}");
        // With one: a window around it, markers on both sides.
        let start = body_text.find("rm").unwrap();
        let window: String = text(&fit.fit(40, 3, Some(start..start + 13)))
            .iter()
            .map(|row| row.trim_start())
            .collect();
        assert!(window.contains("rm -rf /tmp/x"), "{window}");
        assert!(window.starts_with("$ aaaa"), "{window}");
        assert!(window.contains("left out"), "{window}");
        assert!(window.contains("more"), "{window}");
        // Tiny screens: never more rows than given, never a panic.
        for w in [1, 2, 5] {
            for cap in [0, 1, 2] {
                assert!(fit.fit(w, cap, Some(start..start + 13)).len() <= cap.max(1));
            }
        }
    }

    #[test]
    fn what_fits_is_shown_whole() {
        let body = [Span::raw("echo ok")];
        let fit = Fit {
            prefix: &[],
            body: &body,
            indent: 0,
            hard: false,
            marker: Style::new(),
        };
        assert_eq!(text(&fit.fit(80, 1, None)), ["echo ok"]);
    }
}
