//! The inline question picker: one question at a time, its options as a list (↑/↓ or the
//! digit keys, Space toggles in a multi-select question, Enter confirms), an "Other" row that
//! takes the user's own words, and Esc, which cancels the question and the turn. However many
//! options there are, the list scrolls so the highlighted one is drawn, under the question
//! and above the keys.

use interpreter_protocol::{QuestionAnswer, QuestionRequest};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

use super::ctx::{Ctx, clean};
use super::fit::{Fit, chars, plural};
use super::wrap::{Wrapped, wrap_all};
use interpreter_face::terminal_text::escape_one_line;

/// A question request being answered.
pub(crate) struct Form {
    pub req: QuestionRequest,
    /// The question shown.
    index: usize,
    /// The highlighted row (an option, or "Other" after them).
    cursor: usize,
    /// The first option row shown when the picker was last drawn: the list moves only as
    /// far as the highlighted row needs.
    scroll: Cell<usize>,
    /// Rows picked in a multi-select question.
    picked: BTreeSet<usize>,
    /// The user's own words, while the "Other" row takes them.
    typing: Option<String>,
    answers: BTreeMap<String, Vec<String>>,
}

/// What a key did.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Nothing to send yet.
    Pending,
    /// Every question is answered, or the user cancelled.
    Done(QuestionAnswer),
}

impl Form {
    pub(crate) fn new(req: QuestionRequest) -> Form {
        Form {
            req,
            index: 0,
            cursor: 0,
            scroll: Cell::new(0),
            picked: BTreeSet::new(),
            typing: None,
            answers: BTreeMap::new(),
        }
    }

    /// Rows of the current question: its options, then "Other" where it takes own words.
    fn row_count(&self) -> usize {
        let q = &self.req.questions[self.index];
        q.options.len() + usize::from(q.allow_other || q.options.is_empty())
    }

    fn is_other(&self, row: usize) -> bool {
        row >= self.req.questions[self.index].options.len()
    }

    pub(crate) fn key(&mut self, key: &KeyEvent) -> Outcome {
        if key.code == KeyCode::Esc {
            return Outcome::Done(QuestionAnswer::Cancelled);
        }
        if let Some(text) = self.typing.as_mut() {
            match key.code {
                KeyCode::Enter if !text.trim().is_empty() => {
                    let answer = vec![text.trim().to_string()];
                    return self.next(answer);
                }
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    text.push(c)
                }
                _ => {}
            }
            return Outcome::Pending;
        }
        let rows = self.row_count();
        let multi = self.req.questions[self.index].multi_select;
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.cursor = (self.cursor + rows - 1) % rows,
            KeyCode::Down | KeyCode::Char('j') => self.cursor = (self.cursor + 1) % rows,
            KeyCode::Char(c @ '1'..='9') => {
                let row = (c as usize) - ('1' as usize);
                if row < rows {
                    self.cursor = row;
                    if !multi {
                        return self.choose();
                    }
                    self.toggle();
                }
            }
            KeyCode::Char(' ') if multi => self.toggle(),
            KeyCode::Enter => return self.choose(),
            _ => {}
        }
        Outcome::Pending
    }

    fn toggle(&mut self) {
        if self.is_other(self.cursor) {
            self.typing = Some(String::new());
        } else if !self.picked.remove(&self.cursor) {
            self.picked.insert(self.cursor);
        }
    }

    /// Enter on the highlighted row: the choice, the picks so far, or typing for "Other".
    fn choose(&mut self) -> Outcome {
        if self.is_other(self.cursor) {
            self.typing = Some(String::new());
            return Outcome::Pending;
        }
        let q = &self.req.questions[self.index];
        let rows: Vec<usize> = match q.multi_select && !self.picked.is_empty() {
            true => self.picked.iter().copied().collect(),
            false => vec![self.cursor],
        };
        let answer = rows
            .into_iter()
            .map(|r| q.options[r].label.clone())
            .collect();
        self.next(answer)
    }

    /// Records the current question's answer and moves on.
    fn next(&mut self, answer: Vec<String>) -> Outcome {
        let id = self.req.questions[self.index].id.clone();
        self.answers.insert(id, answer);
        self.index += 1;
        self.cursor = 0;
        self.scroll.set(0);
        self.picked.clear();
        self.typing = None;
        if self.index < self.req.questions.len() {
            return Outcome::Pending;
        }
        Outcome::Done(QuestionAnswer::Answered {
            answers: std::mem::take(&mut self.answers),
        })
    }

    /// The picker in at most `budget` rows (at least one) at `width`: the highlighted row
    /// first, then the keys, then the question, then as many of the other options around
    /// the highlighted one as fit. The list scrolls with the highlight, and rows say how
    /// many options are above and below it.
    pub(crate) fn rows(&self, ctx: &Ctx<'_>, width: u16, budget: usize) -> Vec<Line<'static>> {
        let t = ctx.theme;
        let budget = budget.max(1);
        let mut keys = wrap_all(&[self.keys_line(ctx)], width);
        // A row for the highlighted option, whatever else is cut.
        keys.truncate(budget - 1);
        let rest = budget - keys.len();
        let head = self.head(ctx);
        let head = Fit {
            prefix: &head[..1],
            body: &head[1..],
            indent: 2,
            hard: false,
            marker: t.dim(),
        };
        let head_cap = (rest / 3).max(1).min(rest - 1);
        let head = match head_cap {
            0 => Vec::new(),
            cap => head.fit(width, cap, None),
        };
        let mut out = head;
        out.extend(self.list(ctx, width, rest - out.len()));
        out.extend(keys);
        out
    }

    /// The question's line: the sign, then its header, question and place.
    fn head(&self, ctx: &Ctx<'_>) -> Vec<Span<'static>> {
        let t = ctx.theme;
        let q = &self.req.questions[self.index];
        let shown = |s: &str| clean(&escape_one_line(s));
        let mut head = vec![Span::styled("? ", t.warn())];
        if !q.header.is_empty() {
            head.push(Span::styled(format!("{}: ", shown(&q.header)), t.dim()));
        }
        head.push(Span::styled(shown(&q.question), t.header()));
        if self.req.questions.len() > 1 {
            head.push(Span::styled(
                format!("  ({} of {})", self.index + 1, self.req.questions.len()),
                t.dim(),
            ));
        }
        head
    }

    /// The options in `room` rows: a window that holds the highlighted one, moved as
    /// little as it can from where it was, with a row for the options above and below it.
    fn list(&self, ctx: &Ctx<'_>, width: u16, room: usize) -> Vec<Line<'static>> {
        let t = ctx.theme;
        let n = self.row_count();
        let room = room.max(1);
        // An option may take a few rows, not all of them.
        let cap = room.saturating_sub(2).max(1);
        let mut heights: BTreeMap<usize, Vec<Line<'static>>> = BTreeMap::new();
        let mut rows_of = |row: usize| -> usize {
            heights
                .entry(row)
                .or_insert_with(|| self.option_rows(ctx, row, width, cap))
                .len()
        };
        let cursor = self.cursor.min(n.saturating_sub(1));
        let marks = |top: usize, end: usize| usize::from(top > 0) + usize::from(end < n);
        // Shown: options top..end, their rows counted in `used`.
        let mut top = cursor;
        let mut used = rows_of(cursor);
        let hint = self.scroll.get();
        while top > hint && used + rows_of(top - 1) + marks(top - 1, cursor + 1) <= room {
            top -= 1;
            used += rows_of(top);
        }
        let mut end = cursor + 1;
        while end < n && used + rows_of(end) + marks(top, end + 1) <= room {
            used += rows_of(end);
            end += 1;
        }
        // At the end of the list, the room left goes to the options above.
        while top > 0 && used + rows_of(top - 1) + marks(top - 1, end) <= room {
            top -= 1;
            used += rows_of(top);
        }
        self.scroll.set(top);
        let mut out = Vec::new();
        let above = top > 0 && used + marks(top, end) <= room;
        if above {
            out.push(Line::from(Span::styled(
                format!("    ↑ {}", plural(top, "more option")),
                t.dim(),
            )));
        }
        for row in top..end {
            out.extend(heights.remove(&row).unwrap_or_default());
        }
        if end < n && out.len() < room {
            out.push(Line::from(Span::styled(
                format!("    ↓ {}", plural(n - end, "more option")),
                t.dim(),
            )));
        }
        out.truncate(room);
        out
    }

    /// The rows of option `row` (or "Other"), at most `cap`.
    fn option_rows(&self, ctx: &Ctx<'_>, row: usize, width: u16, cap: usize) -> Vec<Line<'static>> {
        let t = ctx.theme;
        let q = &self.req.questions[self.index];
        let shown = |s: &str| clean(&escape_one_line(s));
        let here = row == self.cursor;
        let mark = match (q.multi_select, self.picked.contains(&row)) {
            (true, true) => "[x] ",
            (true, false) => "[ ] ",
            _ => "",
        };
        let (label, description) = match q.options.get(row) {
            Some(o) => (shown(&o.label), shown(&o.description)),
            None => match &self.typing {
                Some(text) => (format!("Other: {}▏", clean(text)), String::new()),
                None => ("Other (type your own answer)".into(), String::new()),
            },
        };
        let prefix = [
            Span::styled(if here { "  › " } else { "    " }, t.key()),
            Span::styled(format!("{}. {mark}", row + 1), t.dim()),
        ];
        let mut body = vec![Span::styled(
            label,
            if here { t.selected() } else { t.text() },
        )];
        if !description.is_empty() {
            body.push(Span::styled(format!(" — {description}"), t.dim()));
        }
        // What is being typed is at the end of the row: a cut row keeps it.
        let focus = (here && self.typing.is_some()).then(|| {
            let end = chars(&body[..1]);
            end.saturating_sub(1)..end
        });
        Fit {
            prefix: &prefix,
            body: &body,
            indent: 7,
            hard: false,
            marker: t.dim(),
        }
        .fit(width, cap, focus)
    }

    fn keys_line(&self, ctx: &Ctx<'_>) -> Wrapped {
        let t = ctx.theme;
        let q = &self.req.questions[self.index];
        let key = |k: &str| Span::styled(k.to_string(), t.key());
        let dim = |s: &str| Span::styled(s.to_string(), t.dim());
        let mut keys = vec![
            Span::raw("  "),
            key("↑↓"),
            dim(" move  "),
            key("Enter"),
            dim(" choose  "),
        ];
        if q.multi_select {
            keys.extend([key("Space"), dim(" toggle  ")]);
        }
        keys.extend([key("Esc"), dim(" cancel the turn")]);
        Wrapped::indented(Line::from(keys), 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_protocol::{Question, QuestionOption};

    fn form(multi: bool) -> Form {
        let option = |l: &str| QuestionOption {
            label: l.into(),
            description: String::new(),
        };
        Form::new(QuestionRequest {
            call_id: "c".into(),
            questions: vec![
                Question {
                    id: "db".into(),
                    header: "DB".into(),
                    question: "Which?".into(),
                    options: vec![option("SQLite"), option("Postgres")],
                    multi_select: false,
                    allow_other: true,
                },
                Question {
                    id: "extras".into(),
                    header: String::new(),
                    question: "Extras?".into(),
                    options: vec![option("Auth"), option("Cache")],
                    multi_select: multi,
                    allow_other: true,
                },
            ],
        })
    }

    fn press(f: &mut Form, code: KeyCode) -> Outcome {
        f.key(&KeyEvent::new(code, KeyModifiers::NONE))
    }

    #[test]
    fn keys_pick_options_toggle_multi_select_and_take_own_words() {
        let mut f = form(true);
        assert_eq!(press(&mut f, KeyCode::Down), Outcome::Pending);
        assert_eq!(press(&mut f, KeyCode::Enter), Outcome::Pending);
        press(&mut f, KeyCode::Char(' '));
        press(&mut f, KeyCode::Down);
        press(&mut f, KeyCode::Char(' '));
        let Outcome::Done(QuestionAnswer::Answered { answers }) = press(&mut f, KeyCode::Enter)
        else {
            panic!("not done");
        };
        assert_eq!(answers["db"], ["Postgres"]);
        assert_eq!(answers["extras"], ["Auth", "Cache"]);

        let mut f = form(false);
        press(&mut f, KeyCode::Char('3'));
        for c in "MariaDB".chars() {
            press(&mut f, KeyCode::Char(c));
        }
        assert_eq!(press(&mut f, KeyCode::Enter), Outcome::Pending);
        let Outcome::Done(QuestionAnswer::Answered { answers }) = press(&mut f, KeyCode::Char('1'))
        else {
            panic!("not done");
        };
        assert_eq!(
            (answers["db"].as_slice(), answers["extras"].as_slice()),
            (&["MariaDB".to_string()][..], &["Auth".to_string()][..])
        );
        assert_eq!(
            press(&mut form(false), KeyCode::Esc),
            Outcome::Done(QuestionAnswer::Cancelled)
        );
    }
}
