//! The inline approval prompt: what the call wants to do (the command, or the diff of an
//! edit), why the policy asks, and the keys that answer it.

use interpreter_protocol::{ApprovalDecision, ApprovalRequest, ToolKind};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};

use super::cells::{Ctx, clean, diff_lines};
use super::wrap::Wrapped;

/// Diff lines an approval prompt shows; the whole diff follows in the call's cell.
const PROMPT_DIFF_LINES: usize = 16;

/// What a key means while an approval is asked: None for keys that mean nothing here.
pub(crate) fn decision_for(key: &KeyEvent) -> Option<ApprovalDecision> {
    if key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    {
        return None;
    }
    match key.code {
        KeyCode::Char('y' | 'Y') => Some(ApprovalDecision::AllowOnce),
        KeyCode::Char('a' | 'A') => Some(ApprovalDecision::AllowAlways),
        KeyCode::Char('n' | 'N') => Some(ApprovalDecision::Reject),
        KeyCode::Esc => Some(ApprovalDecision::Cancelled),
        _ => None,
    }
}

/// What "always" covers, in words: the policy's keys are `exec:<prefix>`,
/// ``exec=`<whole line>` `` and `write:<paths>`.
pub(crate) fn always_label(key: &str) -> String {
    let key = key.trim();
    if key.is_empty() {
        return "always".into();
    }
    if key.starts_with("write:") {
        return "always for these files".into();
    }
    let shown = key
        .strip_prefix("exec:")
        .or_else(|| key.strip_prefix("exec=`").and_then(|k| k.strip_suffix('`')))
        .unwrap_or(key);
    format!("always for `{}`", clean(shown))
}

/// The prompt's lines.
pub(crate) fn lines(ctx: &Ctx<'_>, req: &ApprovalRequest) -> Vec<Wrapped> {
    let t = ctx.theme;
    let question = match req.kind {
        ToolKind::Execute => "Run this command?",
        ToolKind::Edit | ToolKind::Delete | ToolKind::Move => "Make this change?",
        _ => "Allow this tool call?",
    };
    let mut out = vec![Wrapped::indented(
        Line::from(vec![
            Span::styled("? ", t.warn()),
            Span::styled(question, t.header()),
        ]),
        2,
    )];
    match &req.command {
        Some(cmd) => out.push(Wrapped {
            line: Line::from(vec![
                Span::styled("  $ ", t.dim()),
                Span::styled(clean(cmd), t.code()),
            ]),
            indent: vec![Span::raw("    ")],
            hard: true,
        }),
        None => out.push(Wrapped::indented(
            Line::from(vec![
                Span::raw("  "),
                Span::styled(clean(&req.title), t.text()),
            ]),
            2,
        )),
    }
    let mut diff: Vec<Wrapped> = req
        .changes
        .iter()
        .flat_map(|c| diff_lines(ctx, c))
        .collect();
    if diff.len() > PROMPT_DIFF_LINES {
        let more = diff.len() - PROMPT_DIFF_LINES;
        diff.truncate(PROMPT_DIFF_LINES);
        diff.push(Wrapped::indented(
            Line::from(Span::styled(format!("    … {more} more lines"), t.dim())),
            4,
        ));
    }
    out.extend(diff);
    if !req.reason.trim().is_empty() && !req.reason.trim().eq_ignore_ascii_case(question) {
        out.push(Wrapped::indented(
            Line::from(Span::styled(format!("  {}", clean(&req.reason)), t.dim())),
            2,
        ));
    }
    let key = |k: &str| Span::styled(k.to_string(), t.key());
    let dim = |s: &str| Span::styled(s.to_string(), t.dim());
    let always = always_label(&req.remember_key);
    out.push(Wrapped::indented(
        Line::from(vec![
            Span::raw("  "),
            key("y"),
            dim(" yes  "),
            key("a"),
            dim(&format!(" {always}  ")),
            key("n"),
            dim(" no  "),
            key("Esc"),
            dim(" cancel the turn"),
        ]),
        2,
    ));
    out
}
