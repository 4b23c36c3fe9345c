//! An approval's command in the rows the prompt has for it. Runs of empty lines fold into one
//! row ("… 58 empty lines …"). When the command is still too tall, the lines that carry the
//! danger are kept first (each cut to a window around it when it is longer than its share),
//! then the first and the last line, then the lines next to the danger, then the rest from
//! the top; every run left out is one row saying how many lines it was. Every line is shown
//! escaped, so `echo ok` and `rm -rf …` on two lines never read as one, nor U+202E reverses
//! what follows it. Pure.

use ratatui::text::{Line, Span};
use std::ops::Range;

use super::ctx::clean;
use super::danger::split_lines;
use super::fit::{Fit, plural};
use super::theme::Theme;
use interpreter_face::terminal_text::escape_invisible;

/// A command's lines, as shown.
pub(crate) struct CommandText {
    lines: Vec<Shown>,
    /// The prompt signs of the first line and of the others.
    signs: [[Span<'static>; 1]; 2],
}

/// One line of the command.
struct Shown {
    /// The escaped text, the dangerous parts in a style of their own.
    body: Vec<Span<'static>>,
    /// The first dangerous part, in characters of the body: what a cut line keeps.
    focus: Option<Range<usize>>,
    /// Nothing but spaces and tabs.
    blank: bool,
}

/// A line, or a run of empty lines shown as one row.
#[derive(Clone)]
enum Unit {
    Line(usize),
    Blank(Range<usize>),
}

impl CommandText {
    /// `command`'s lines, with `danger` (byte ranges of `command`) marked.
    pub(crate) fn new(t: &Theme, command: &str, danger: &[Range<usize>]) -> CommandText {
        let lines = split_lines(command)
            .into_iter()
            .map(|line| shown(t, command, line, danger))
            .collect();
        CommandText {
            lines,
            signs: [
                [Span::styled("  $ ", t.dim())],
                [Span::styled("  > ", t.dim())],
            ],
        }
    }

    /// The command in at most `budget` rows (at least one) at `width`.
    pub(crate) fn rows(&self, t: &Theme, width: u16, budget: usize) -> Vec<Line<'static>> {
        let budget = budget.max(1);
        let units = self.units();
        // Everything, when it fits.
        let mut all = Vec::new();
        for u in &units {
            match self.unit_rows(t, u, width, budget.saturating_sub(all.len())) {
                Some(rows) if all.len() + rows.len() <= budget => all.extend(rows),
                _ => return self.chosen(t, &units, width, budget),
            }
        }
        all
    }

    /// Runs of two or more empty lines are one unit.
    fn units(&self) -> Vec<Unit> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.lines.len() {
            let start = i;
            while i < self.lines.len() && self.lines[i].blank {
                i += 1;
            }
            match i - start {
                0 => {
                    out.push(Unit::Line(i));
                    i += 1;
                }
                1 => out.push(Unit::Line(start)),
                _ => out.push(Unit::Blank(start..i)),
            }
        }
        out
    }

    /// The rows of `u` whole, if they are at most `cap`.
    fn unit_rows(&self, t: &Theme, u: &Unit, width: u16, cap: usize) -> Option<Vec<Line<'static>>> {
        match u {
            Unit::Blank(r) => Some(marker(t, r.start, &plural(r.len(), "empty line"), width))
                .filter(|rows| rows.len() <= cap),
            Unit::Line(i) => self.fit(t, *i).within(width, cap),
        }
    }

    /// The rows of `u` in at most `cap`, cut if need be.
    fn unit_cut(&self, t: &Theme, u: &Unit, width: u16, cap: usize) -> Vec<Line<'static>> {
        match u {
            Unit::Blank(r) => {
                let mut rows = marker(t, r.start, &plural(r.len(), "empty line"), width);
                rows.truncate(cap.max(1));
                rows
            }
            Unit::Line(i) => self
                .fit(t, *i)
                .fit(width, cap, self.lines[*i].focus.clone()),
        }
    }

    fn fit(&self, t: &Theme, i: usize) -> Fit<'_> {
        Fit {
            prefix: &self.signs[usize::from(i > 0)],
            body: &self.lines[i].body,
            indent: 4,
            hard: true,
            marker: t.dim(),
        }
    }

    fn dangerous(&self, u: &Unit) -> bool {
        matches!(u, Unit::Line(i) if self.lines[*i].focus.is_some())
    }

    /// The command does not fit: the units kept, in the order above, and a row for every
    /// run left out.
    fn chosen(&self, t: &Theme, units: &[Unit], width: u16, budget: usize) -> Vec<Line<'static>> {
        let n = units.len();
        let danger: Vec<usize> = (0..n).filter(|&u| self.dangerous(&units[u])).collect();
        // The runs of other units around the dangerous ones take a row each.
        let runs = (0..n)
            .filter(|&u| !self.dangerous(&units[u]) && (u == 0 || self.dangerous(&units[u - 1])))
            .count();
        // Half of it first, so the lines around the danger have room; what is left over
        // goes back to the danger at the end.
        let per_danger = (budget.saturating_sub(runs) / (2 * danger.len().max(1))).max(1);
        let per_other = (budget / 4).max(1);
        let near = danger
            .iter()
            .flat_map(|&d| [d.checked_sub(1), Some(d + 1)])
            .flatten();
        let order = danger
            .iter()
            .copied()
            .chain([0, n.saturating_sub(1)])
            .chain(near)
            .chain(0..n)
            .filter(|&u| u < n);
        let mut kept: Vec<Option<Vec<Line<'static>>>> = vec![None; n];
        // Nothing kept is one run left out: one row.
        let mut used = 1usize;
        for u in order {
            if kept[u].is_some() {
                continue;
            }
            let left = u > 0 && kept[u - 1].is_none();
            let right = u + 1 < n && kept[u + 1].is_none();
            // Keeping `u` splits the run it is in: the runs left and right of it remain.
            let runs = usize::from(left) + usize::from(right);
            let room = (budget + 1).saturating_sub(used + runs);
            if room == 0 {
                continue;
            }
            let cap = if self.dangerous(&units[u]) {
                per_danger
            } else {
                per_other
            };
            let rows = self.unit_cut(t, &units[u], width, cap.min(room));
            if rows.len() <= room {
                used = used + runs + rows.len() - 1;
                kept[u] = Some(rows);
            }
        }
        for &d in &danger {
            let spare = budget.saturating_sub(used);
            if let Some(rows) = kept[d].as_ref().filter(|_| spare > 0) {
                let more = self.unit_cut(t, &units[d], width, rows.len() + spare);
                if more.len() > rows.len() && more.len() <= rows.len() + spare {
                    used += more.len() - rows.len();
                    kept[d] = Some(more);
                }
            }
        }
        // Too few rows for the runs around what must be seen (the danger, or else the
        // first line): it alone, and a row saying the rest was left out if there is one.
        let must = Some(danger.first().copied().unwrap_or(0)).filter(|&u| kept[u].is_none());
        if let Some(u) = must {
            let rows = self.unit_cut(t, &units[u], width, budget.saturating_sub(1).max(1));
            let others = self.lines.len() - self.unit_lines(&units[u]);
            let mut rest = marker(
                t,
                1,
                &format!("{} left out", plural(others, "other line")),
                width,
            );
            rest.truncate(usize::from(budget > rows.len() && others > 0));
            return match u {
                0 => rows.into_iter().chain(rest).collect(),
                _ => rest.into_iter().chain(rows).collect(),
            };
        }
        let mut out = Vec::new();
        let mut u = 0;
        while u < n {
            if let Some(rows) = kept[u].take() {
                out.extend(rows);
                u += 1;
                continue;
            }
            let start = u;
            while u < n && kept[u].is_none() {
                u += 1;
            }
            out.extend(self.left_out(t, &units[start..u], width));
        }
        out.truncate(budget);
        out
    }

    /// The command's lines in `u`.
    fn unit_lines(&self, u: &Unit) -> usize {
        match u {
            Unit::Line(_) => 1,
            Unit::Blank(r) => r.len(),
        }
    }

    /// The row for a run of units left out.
    fn left_out(&self, t: &Theme, run: &[Unit], width: u16) -> Vec<Line<'static>> {
        let count: usize = run.iter().map(|u| self.unit_lines(u)).sum();
        let blank = run.iter().all(|u| match u {
            Unit::Line(i) => self.lines[*i].blank,
            Unit::Blank(_) => true,
        });
        let first = match run.first() {
            Some(Unit::Line(i)) => *i,
            Some(Unit::Blank(r)) => r.start,
            None => return Vec::new(),
        };
        let what = match blank {
            true => plural(count, "empty line"),
            false => format!("{} left out", plural(count, "line")),
        };
        let mut rows = marker(t, first, &what, width);
        rows.truncate(1);
        rows
    }
}

/// A row standing for lines not shown, at line `first` of the command.
fn marker(t: &Theme, first: usize, what: &str, width: u16) -> Vec<Line<'static>> {
    let sign = if first == 0 { "  $ " } else { "    " };
    let body = [Span::styled(format!("… {what} …"), t.dim())];
    let prefix = [Span::styled(sign, t.dim())];
    Fit {
        prefix: &prefix,
        body: &body,
        indent: 4,
        hard: false,
        marker: t.dim(),
    }
    .fit(width, 1, None)
}

/// Line `line` of `command`, escaped, with the parts of `danger` in it marked.
fn shown(t: &Theme, command: &str, line: Range<usize>, danger: &[Range<usize>]) -> Shown {
    let mut hits: Vec<Range<usize>> = danger
        .iter()
        .map(|d| d.start.max(line.start)..d.end.min(line.end))
        .filter(|d| d.start < d.end)
        .collect();
    hits.sort_by_key(|d| d.start);
    let mut body = Vec::new();
    let mut focus = None;
    let mut at = line.start;
    let mut chars = 0;
    let mut push = |text: &str, style, chars: &mut usize| {
        let text = clean(&escape_invisible(text));
        let n = text.chars().count();
        if n > 0 {
            body.push(Span::styled(text, style));
        }
        *chars += n;
    };
    for d in hits {
        if d.end <= at {
            continue;
        }
        let start = d.start.max(at);
        push(&command[at..start], t.code(), &mut chars);
        let from = chars;
        push(&command[start..d.end], t.danger(), &mut chars);
        focus.get_or_insert(from..chars);
        at = d.end;
    }
    push(&command[at..line.end], t.code(), &mut chars);
    Shown {
        body,
        focus,
        // Spaces and tabs only: a line of U+00A0 is a command to the shell, and is shown.
        blank: command[line].chars().all(|c| c == ' ' || c == '\t'),
    }
}
