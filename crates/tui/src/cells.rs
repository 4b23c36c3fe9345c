//! Transcript cells: what a user message, an answer, a tool call, a plan or an error looks
//! like, as lines. Everything that came from outside (the model, a command, a path) is
//! cleaned of control sequences here, before any of our own styling is added.

use interpreter_protocol::{
    FileChange, FileChangeKind, Plan, PlanStatus, ToolCallBegin, ToolCallEnd, ToolKind, ToolStatus,
};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};
use std::path::{Path, PathBuf};

use super::ctx::{Ctx, clean};
use super::markdown;
use super::theme::Theme;
use super::wrap::Wrapped;

/// Lines of a command's output shown under it.
const OUTPUT_TAIL: usize = 5;
/// Diff lines shown for one file before the rest is summarised.
const DIFF_LINES: usize = 120;
/// Reasoning lines kept in the transcript.
const REASONING_LINES: usize = 6;

/// One finished entry of the transcript.
#[derive(Debug, Clone)]
pub(crate) enum Cell {
    /// The banner at the top of a session.
    Banner {
        cwd: PathBuf,
        resumed: Option<String>,
    },
    /// A message the user sent.
    User(String),
    /// A piece of the agent's answer (a whole message, or the part of a streaming one that
    /// is complete).
    Agent { markdown: String, first: bool },
    /// The model's reasoning for one response.
    Reasoning { text: String, secs: Option<u64> },
    /// A tool call, running or done.
    Tool(Box<ToolCell>),
    /// A plan the model set.
    Plan(Plan),
    /// Something the UI says (a setting changed, `/status`).
    Info(Vec<String>),
    /// A non-fatal problem.
    Warning(String),
    /// An error (a failed turn, a refused op).
    Error(String),
}

/// A tool call and what is known of it so far.
#[derive(Debug, Clone)]
pub(crate) struct ToolCell {
    pub begin: ToolCallBegin,
    pub end: Option<ToolCallEnd>,
    /// Output streamed so far (the tail only).
    pub live_output: String,
    /// Seconds it has been running, for a live cell.
    pub running_secs: Option<u64>,
    /// The subagent the call started, shown inside it.
    pub subagent: Option<super::subagent::SubagentView>,
}

impl Cell {
    /// The cell's lines (before wrapping).
    pub(crate) fn lines(&self, ctx: &Ctx<'_>) -> Vec<Wrapped> {
        let t = ctx.theme;
        match self {
            Cell::Banner { cwd, resumed } => banner(ctx, cwd, resumed.as_deref()),
            Cell::User(text) => user(t, text),
            Cell::Agent { markdown, first } => agent(t, markdown, *first),
            Cell::Reasoning { text, secs } => reasoning(t, text, *secs),
            Cell::Tool(c) => c.lines(ctx),
            Cell::Plan(p) => plan(t, p),
            Cell::Info(lines) => lines
                .iter()
                .map(|l| {
                    Wrapped::indented(
                        Line::from(Span::styled(format!("  {}", clean(l)), t.dim())),
                        2,
                    )
                })
                .collect(),
            Cell::Warning(m) => mark_lines(t.warn(), "⚠ ", &clean(m), t.warn()),
            Cell::Error(m) => mark_lines(t.error_strong(), "✗ ", &clean(m), t.error()),
        }
    }
}

fn banner(ctx: &Ctx<'_>, cwd: &Path, resumed: Option<&str>) -> Vec<Wrapped> {
    let t = ctx.theme;
    let mut out = vec![Wrapped::indented(
        Line::from(vec![
            Span::styled(">_ ", t.bullet()),
            Span::styled("interpreter", t.header()),
            Span::styled(format!(" v{}", env!("CARGO_PKG_VERSION")), t.dim()),
            Span::styled(format!("  {}", clean(&cwd.display().to_string())), t.dim()),
        ]),
        3,
    )];
    if let Some(title) = resumed {
        out.push(Wrapped::indented(
            Line::from(vec![
                Span::styled("   resumed ", t.dim()),
                Span::styled(clean(title), t.text()),
            ]),
            3,
        ));
    }
    out
}

fn user(t: &Theme, text: &str) -> Vec<Wrapped> {
    clean(text)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let prefix = if i == 0 { "› " } else { "  " };
            Wrapped::indented(
                Line::from(vec![
                    Span::styled(prefix, t.user()),
                    Span::styled(l.to_string(), t.header()),
                ]),
                2,
            )
        })
        .collect()
}

/// Agent text: the first line of a message gets the bullet, every line an indent.
pub(crate) fn agent(t: &Theme, md: &str, first: bool) -> Vec<Wrapped> {
    let mut out = Vec::new();
    for (i, mut w) in markdown::render(md, t).into_iter().enumerate() {
        let lead = if i == 0 && first {
            Span::styled("• ", t.bullet())
        } else {
            Span::raw("  ")
        };
        w.line.spans.insert(0, lead);
        w.indent.insert(0, Span::raw("  "));
        out.push(w);
    }
    out
}

fn reasoning(t: &Theme, text: &str, secs: Option<u64>) -> Vec<Wrapped> {
    let head = match secs {
        Some(s) => format!("thought for {}", elapsed(s)),
        None => "thinking".into(),
    };
    let mut out = vec![Wrapped::indented(
        Line::from(vec![
            Span::styled("• ", t.dim()),
            Span::styled(head, t.reasoning()),
        ]),
        2,
    )];
    let text = clean(text);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let skip = lines.len().saturating_sub(REASONING_LINES);
    if skip > 0 {
        out.push(Wrapped::indented(
            Line::from(Span::styled(format!("  … {skip} lines"), t.dim())),
            2,
        ));
    }
    for l in &lines[skip..] {
        out.push(Wrapped::indented(
            Line::from(Span::styled(format!("  {}", l.trim_end()), t.reasoning())),
            2,
        ));
    }
    out
}

/// "12 s", "3 min 4 s".
pub(crate) fn elapsed(secs: u64) -> String {
    if secs < 60 {
        format!("{secs} s")
    } else {
        format!("{} min {} s", secs / 60, secs % 60)
    }
}

fn plan(t: &Theme, p: &Plan) -> Vec<Wrapped> {
    let mut out = vec![Wrapped::indented(
        Line::from(vec![
            Span::styled("• ", t.bullet()),
            Span::styled("Plan", t.header()),
        ]),
        2,
    )];
    if let Some(e) = p.explanation.as_deref().filter(|e| !e.trim().is_empty()) {
        out.push(Wrapped::indented(
            Line::from(Span::styled(format!("  {}", clean(e)), t.dim())),
            2,
        ));
    }
    for item in &p.items {
        let (mark, style) = match item.status {
            PlanStatus::Completed => ("✔ ", t.ok()),
            PlanStatus::InProgress => ("▸ ", t.header()),
            PlanStatus::Pending => ("□ ", t.dim()),
        };
        out.push(Wrapped::indented(
            Line::from(vec![
                Span::raw("  "),
                Span::styled(mark, style),
                Span::styled(clean(&item.step), style),
            ]),
            4,
        ));
    }
    out
}

fn mark_lines(mark_style: Style, mark: &str, text: &str, style: Style) -> Vec<Wrapped> {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 { mark } else { "  " };
            Wrapped::indented(
                Line::from(vec![
                    Span::styled(lead.to_string(), mark_style),
                    Span::styled(l.to_string(), style),
                ]),
                2,
            )
        })
        .collect()
}

impl ToolCell {
    /// A cell for a call that just began.
    pub(crate) fn new(begin: ToolCallBegin) -> ToolCell {
        ToolCell {
            begin,
            end: None,
            live_output: String::new(),
            running_secs: None,
            subagent: None,
        }
    }

    fn lines(&self, ctx: &Ctx<'_>) -> Vec<Wrapped> {
        let t = ctx.theme;
        let (mark, mark_style) = match self.end.as_ref().map(|e| e.status) {
            None => ("• ", t.bullet()),
            Some(ToolStatus::Completed) => ("✓ ", t.ok()),
            Some(ToolStatus::Failed) => ("✗ ", t.error_strong()),
            Some(ToolStatus::Declined) => ("⊘ ", t.warn()),
        };
        let running = self.end.is_none();
        let (verb, subject, subject_style) = self.headline(ctx, running);
        let mut head = vec![
            Span::styled(mark, mark_style),
            Span::styled(verb, t.header()),
            Span::raw(" "),
            Span::styled(subject, subject_style),
        ];
        if let (true, Some(s)) = (running, self.running_secs) {
            head.push(Span::styled(format!(" · {}", elapsed(s)), t.dim()));
        }
        let mut out = vec![Wrapped::indented(Line::from(head), 4)];
        if let Some(s) = &self.subagent {
            out.extend(s.lines(ctx));
        }
        match &self.end {
            None => out.extend(tail(t, &self.live_output, None)),
            Some(end) => out.extend(self.body(ctx, end)),
        }
        out
    }

    /// The verb and what it acts on: "Ran" + the command, "Read" + the path.
    fn headline(&self, ctx: &Ctx<'_>, running: bool) -> (String, String, Style) {
        let t = ctx.theme;
        let b = &self.begin;
        let paths = || {
            b.locations
                .iter()
                .map(|p| ctx.path(p))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let pick = |now: &str, done: &str| if running { now } else { done }.to_string();
        match b.kind {
            ToolKind::Execute => (
                pick("Running", "Ran"),
                clean(b.command.as_deref().unwrap_or(&b.title)),
                t.code(),
            ),
            ToolKind::Read if !b.locations.is_empty() => {
                (pick("Reading", "Read"), paths(), t.text())
            }
            _ if self.end.as_ref().is_some_and(|e| !e.changes.is_empty()) => {
                let changes = self
                    .end
                    .as_ref()
                    .map(|e| e.changes.as_slice())
                    .unwrap_or(&[]);
                ("Edited".into(), changes_summary(ctx, changes), t.text())
            }
            ToolKind::Edit | ToolKind::Delete | ToolKind::Move => {
                let changes = self
                    .end
                    .as_ref()
                    .map(|e| e.changes.as_slice())
                    .unwrap_or(&[]);
                let subject = if changes.is_empty() {
                    if b.locations.is_empty() {
                        clean(&b.title)
                    } else {
                        paths()
                    }
                } else {
                    changes_summary(ctx, changes)
                };
                (pick("Editing", "Edited"), subject, t.text())
            }
            ToolKind::Search => (pick("Searching", "Searched"), clean(&b.title), t.text()),
            ToolKind::Think => (pick("Planning", "Planned"), clean(&b.title), t.text()),
            ToolKind::Fetch => match b.title.strip_prefix("Search the web: ") {
                Some(query) => (
                    pick("Searching the web for", "Searched the web for"),
                    clean(query),
                    t.text(),
                ),
                None => (
                    pick("Fetching", "Fetched"),
                    clean(b.title.strip_prefix("Fetch ").unwrap_or(&b.title)),
                    t.text(),
                ),
            },
            ToolKind::Read | ToolKind::Other => {
                (pick("Calling", "Called"), clean(&b.title), t.text())
            }
        }
    }

    fn body(&self, ctx: &Ctx<'_>, end: &ToolCallEnd) -> Vec<Wrapped> {
        let t = ctx.theme;
        let mut out = Vec::new();
        match (self.begin.kind, end.status) {
            (_, ToolStatus::Declined) => out.push(note(t.warn(), "declined")),
            // A replayed call may not know its kind; its stored changes still show.
            (_, ToolStatus::Completed) if !end.changes.is_empty() => {
                for c in &end.changes {
                    out.extend(diff_lines(ctx, c));
                }
            }
            (ToolKind::Execute, status) => {
                out.extend(tail(t, &end.output, None));
                let code = match (end.exit_code, status) {
                    (Some(c), _) => format!("exit {c}"),
                    (None, ToolStatus::Completed) => "done".into(),
                    (None, _) => "failed".into(),
                };
                let style = if status == ToolStatus::Completed {
                    t.ok()
                } else {
                    t.error()
                };
                out.push(note(style, &code));
            }
            (ToolKind::Edit | ToolKind::Delete | ToolKind::Move, ToolStatus::Completed) => {
                for c in &end.changes {
                    out.extend(diff_lines(ctx, c));
                }
            }
            (ToolKind::Other, ToolStatus::Completed) => out.extend(tail(t, &end.output, None)),
            (_, ToolStatus::Completed) => {}
            (_, ToolStatus::Failed) => out.extend(tail(t, &end.output, Some(t.error()))),
        }
        out
    }
}

fn note(style: Style, text: &str) -> Wrapped {
    Wrapped::indented(
        Line::from(vec![
            Span::raw("  └ "),
            Span::styled(text.to_string(), style),
        ]),
        4,
    )
}

/// The last lines of `output`, under a call.
fn tail(t: &Theme, output: &str, style: Option<Style>) -> Vec<Wrapped> {
    let text = clean(output);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.iter().all(|l| l.trim().is_empty()) {
        return Vec::new();
    }
    let skip = lines.len().saturating_sub(OUTPUT_TAIL);
    let style = style.unwrap_or(t.dim());
    let mut out = Vec::new();
    if skip > 0 {
        out.push(Wrapped::indented(
            Line::from(Span::styled(format!("  │ … {skip} lines above"), t.dim())),
            4,
        ));
    }
    for l in &lines[skip..] {
        out.push(Wrapped {
            line: Line::from(vec![
                Span::styled("  │ ", t.dim()),
                Span::styled(l.trim_end().to_string(), style),
            ]),
            indent: vec![Span::styled("  │ ", t.dim())],
            hard: true,
        });
    }
    out
}

/// "calc.py (+1 -1)" for each changed file.
fn changes_summary(ctx: &Ctx<'_>, changes: &[FileChange]) -> String {
    changes
        .iter()
        .map(|c| {
            let (add, del) = counts(c);
            let path = match &c.move_path {
                Some(to) => format!("{} → {}", ctx.path(&c.path), ctx.path(to)),
                None => ctx.path(&c.path),
            };
            let kind = match c.kind {
                FileChangeKind::Add => " (new)",
                FileChangeKind::Delete => " (deleted)",
                FileChangeKind::Update => "",
            };
            format!("{path}{kind} (+{add} -{del})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn counts(c: &FileChange) -> (usize, usize) {
    let old = c.old_text.as_deref().unwrap_or("");
    let new = c.new_text.as_deref().unwrap_or("");
    let diff = TextDiff::from_lines(old, new);
    let mut add = 0;
    let mut del = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => add += 1,
            ChangeTag::Delete => del += 1,
            ChangeTag::Equal => {}
        }
    }
    (add, del)
}

/// A file's change as a coloured unified diff with line numbers.
pub(crate) fn diff_lines(ctx: &Ctx<'_>, c: &FileChange) -> Vec<Wrapped> {
    let t = ctx.theme;
    let old = clean(c.old_text.as_deref().unwrap_or(""));
    let new = clean(c.new_text.as_deref().unwrap_or(""));
    let diff = TextDiff::from_lines(&old, &new);
    let mut out = Vec::new();
    let mut shown = 0usize;
    let mut hidden = 0usize;
    for (i, group) in diff.grouped_ops(2).iter().enumerate() {
        if i > 0 {
            out.push(hard(vec![Span::styled("    ⋮", t.hunk())]));
        }
        for op in group {
            for change in diff.iter_changes(op) {
                if shown >= DIFF_LINES {
                    hidden += 1;
                    continue;
                }
                shown += 1;
                let (sign, style, num) = match change.tag() {
                    ChangeTag::Delete => ("-", t.error(), change.old_index()),
                    ChangeTag::Insert => ("+", t.ok(), change.new_index()),
                    ChangeTag::Equal => (" ", t.dim(), change.new_index()),
                };
                let num = num.map(|n| format!("{:>4} ", n + 1)).unwrap_or_default();
                let text = change.value().trim_end_matches(['\n', '\r']).to_string();
                out.push(hard(vec![
                    Span::styled(num, t.dim()),
                    Span::styled(format!("{sign}{text}"), style),
                ]));
            }
        }
    }
    if hidden > 0 {
        out.push(hard(vec![Span::styled(
            format!("    … {hidden} more diff lines"),
            t.dim(),
        )]));
    }
    out
}

fn hard(spans: Vec<Span<'static>>) -> Wrapped {
    Wrapped {
        line: Line::from(spans),
        indent: vec![Span::raw("      ")],
        hard: true,
    }
}
