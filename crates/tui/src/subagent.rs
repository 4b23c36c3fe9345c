//! A subagent inside the tool cell of the call that started it: its name and task, its own
//! tool calls with their live status, and how it ended.

use interpreter_protocol::{SubagentState, ToolStatus};
use ratatui::text::{Line, Span};

use super::ctx::{Ctx, clean};
use super::wrap::Wrapped;
use interpreter_face::terminal_text::escape_one_line;

/// The calls shown at most; older ones are counted.
const SHOWN_CALLS: usize = 8;

#[derive(Debug, Clone)]
pub(crate) struct SubagentView {
    pub session_id: String,
    pub name: String,
    pub task: String,
    /// Its tool calls: id, title, and how each ended (None while running).
    pub calls: Vec<(String, String, Option<ToolStatus>)>,
    pub ended: Option<(SubagentState, String)>,
}

impl SubagentView {
    pub(crate) fn lines(&self, ctx: &Ctx<'_>) -> Vec<Wrapped> {
        let t = ctx.theme;
        let one = |s: &str| clean(&escape_one_line(s));
        let state = match &self.ended {
            None => Span::styled("running", t.bullet()),
            Some((SubagentState::Completed, _)) => Span::styled("done", t.ok()),
            Some((SubagentState::Failed, _)) => Span::styled("failed", t.error()),
            Some((SubagentState::Cancelled, _)) => Span::styled("cancelled", t.warn()),
        };
        let name = if self.name.is_empty() {
            "subagent"
        } else {
            &self.name
        };
        let mut out = vec![Wrapped::indented(
            Line::from(vec![
                Span::styled("  ↳ ", t.dim()),
                Span::styled(one(name), t.header()),
                Span::styled(format!(" {} · ", one(&self.task)), t.text()),
                state,
                Span::styled(format!(" · {} tool calls", self.calls.len()), t.dim()),
            ]),
            6,
        )];
        let skip = self.calls.len().saturating_sub(SHOWN_CALLS);
        if skip > 0 {
            out.push(Wrapped::indented(
                Line::from(Span::styled(
                    format!("      … {skip} earlier calls"),
                    t.dim(),
                )),
                6,
            ));
        }
        for (_, title, status) in self.calls.iter().skip(skip) {
            let (mark, style) = match status {
                None => ("• ", t.bullet()),
                Some(ToolStatus::Completed) => ("✓ ", t.ok()),
                Some(ToolStatus::Failed) => ("✗ ", t.error_strong()),
                Some(ToolStatus::Declined) => ("⊘ ", t.warn()),
            };
            out.push(Wrapped::indented(
                Line::from(vec![
                    Span::raw("      "),
                    Span::styled(mark, style),
                    Span::styled(one(title), t.text()),
                ]),
                8,
            ));
        }
        if let Some((_, summary)) = &self.ended {
            let first = summary.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            if !first.is_empty() {
                out.push(Wrapped::indented(
                    Line::from(vec![
                        Span::styled("      └ ", t.dim()),
                        Span::styled(one(first), t.dim()),
                    ]),
                    8,
                ));
            }
        }
        out
    }
}
