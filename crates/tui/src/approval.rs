//! The inline approval prompt: what the call wants to do (the command, or the diff of an
//! edit), why the policy asks, and the keys that answer it, in the rows the screen has.

use interpreter_protocol::{ApprovalDecision, ApprovalRequest, ToolKind};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};

use std::cell::RefCell;
use std::ops::Range;

use super::cells::diff_lines;
use super::ctx::{Ctx, clean};
use super::fit::{Fit, head_rows};
use super::fold::CommandText;
use super::wrap::{Wrapped, wrap_all};
use interpreter_face::terminal_text::escape_one_line;

/// Diff lines an approval prompt shows; the whole diff follows in the call's cell.
const PROMPT_DIFF_LINES: usize = 16;

/// What a key means while `req` is asked: None for keys that mean nothing here (`a` when
/// "always" is not offered).
pub(crate) fn decision_for(key: &KeyEvent, req: &ApprovalRequest) -> Option<ApprovalDecision> {
    if key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    {
        return None;
    }
    match key.code {
        KeyCode::Char('y' | 'Y') => Some(ApprovalDecision::AllowOnce),
        KeyCode::Char('a' | 'A') if req.offers_always() => Some(ApprovalDecision::AllowAlways),
        KeyCode::Char('s' | 'S') if req.offers_save() => Some(ApprovalDecision::AllowAlwaysSave),
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
    format!("always for `{}`", clean(&escape_one_line(shown)))
}

/// An approval request being asked, with what its layout needs kept.
pub(crate) struct Prompt {
    pub req: ApprovalRequest,
    /// The parts of the command the danger is about (byte ranges of it).
    danger: Vec<Range<usize>>,
    /// The last rows drawn, for (width, budget): a command may be megabytes.
    drawn: RefCell<Option<(u16, usize, Vec<Line<'static>>)>>,
}

impl Prompt {
    pub(crate) fn new(req: ApprovalRequest) -> Prompt {
        let danger = match (&req.command, req.dangerous) {
            (Some(cmd), true) => super::danger::locate(cmd, &req.reason),
            _ => Vec::new(),
        };
        Prompt {
            req,
            danger,
            drawn: RefCell::new(None),
        }
    }

    /// The prompt in at most `budget` rows (at least one) at `width`. The keys that answer
    /// it come first, then the reason, then the part of the command the danger is about,
    /// then the question; the command's other lines get what is left, folded
    /// ([`super::fold`]), and whatever does not fit says how much of it was left out.
    pub(crate) fn rows(&self, ctx: &Ctx<'_>, width: u16, budget: usize) -> Vec<Line<'static>> {
        let budget = budget.max(1);
        if let Some((w, b, rows)) = self.drawn.borrow().as_ref()
            && (*w, *b) == (width, budget)
        {
            return rows.clone();
        }
        let rows = self.layout(ctx, width, budget);
        *self.drawn.borrow_mut() = Some((width, budget, rows.clone()));
        rows
    }

    fn layout(&self, ctx: &Ctx<'_>, width: u16, budget: usize) -> Vec<Line<'static>> {
        let t = ctx.theme;
        let req = &self.req;
        let question = match req.kind {
            ToolKind::Execute => "Run this command?",
            ToolKind::Edit | ToolKind::Delete | ToolKind::Move => "Make this change?",
            _ => "Allow this tool call?",
        };
        let mut keys = wrap_all(&[keys_line(ctx, req)], width);
        keys.truncate(budget);
        let rest = budget - keys.len();
        // The command (or the change) gets a row at least; the reason up to half the rest.
        let body_min = usize::from(rest > 0);
        let reason_rows = self
            .reason(ctx, question)
            .map(|[label, reason]| {
                let cap = (rest.saturating_sub(1) / 2).max(1).min(rest - body_min);
                let fit = Fit {
                    prefix: std::slice::from_ref(&label),
                    body: std::slice::from_ref(&reason),
                    indent: 2,
                    hard: false,
                    marker: t.dim(),
                };
                if cap == 0 {
                    Vec::new()
                } else {
                    fit.fit(width, cap, None)
                }
            })
            .unwrap_or_default();
        let mut header = wrap_all(
            &[Wrapped::indented(
                Line::from(vec![
                    Span::styled("? ", t.warn()),
                    Span::styled(question, t.header()),
                ]),
                2,
            )],
            width,
        );
        header.truncate(rest - body_min - reason_rows.len());
        let body = rest - reason_rows.len() - header.len();
        let mut out = header;
        if body > 0 {
            out.extend(self.body(ctx, width, body));
        }
        out.extend(reason_rows);
        out.extend(keys);
        out
    }

    /// The reason line (its label, then the reason), or None when it would only repeat the
    /// question.
    fn reason(&self, ctx: &Ctx<'_>, question: &str) -> Option<[Span<'static>; 2]> {
        let t = ctx.theme;
        let reason = clean(&escape_one_line(self.req.reason.trim()));
        if self.req.dangerous {
            return Some([
                Span::styled("  dangerous: ", t.warn()),
                Span::styled(reason, t.text()),
            ]);
        }
        (!reason.is_empty() && !reason.eq_ignore_ascii_case(question))
            .then(|| [Span::styled("  ", t.dim()), Span::styled(reason, t.dim())])
    }

    /// What the call does, in `budget` rows: the command, or the title and the diff.
    fn body(&self, ctx: &Ctx<'_>, width: u16, budget: usize) -> Vec<Line<'static>> {
        let t = ctx.theme;
        if let Some(cmd) = &self.req.command {
            return CommandText::new(t, cmd, &self.danger).rows(t, width, budget);
        }
        let prefix = [Span::raw("  ")];
        let title = [Span::styled(
            clean(&escape_one_line(&self.req.title)),
            t.text(),
        )];
        let mut out = Fit {
            prefix: &prefix,
            body: &title,
            indent: 2,
            hard: false,
            marker: t.dim(),
        }
        .fit(width, (budget / 3).max(1), None);
        let mut diff: Vec<Wrapped> = self
            .req
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
        let room = budget.saturating_sub(out.len());
        out.extend(head_rows(wrap_all(&diff, width), room, "rows", t.dim()));
        out
    }
}

/// The keys that answer `req`.
fn keys_line(ctx: &Ctx<'_>, req: &ApprovalRequest) -> Wrapped {
    let t = ctx.theme;
    let key = |k: &str| Span::styled(k.to_string(), t.key());
    let dim = |s: &str| Span::styled(s.to_string(), t.dim());
    let mut keys = vec![Span::raw("  "), key("y"), dim(" yes  ")];
    // No "always" for what the policy asks about every time.
    if req.offers_always() {
        let always = always_label(&req.remember_key);
        keys.extend([key("a"), dim(&format!(" {always}  "))]);
    }
    // Saved to the user's rules file (docs/rules.md): commands' prefixes only.
    if req.offers_save() {
        keys.extend([key("s"), dim(" always, and save  ")]);
    }
    keys.extend([key("n"), dim(" no  "), key("Esc"), dim(" cancel the turn")]);
    Wrapped::indented(Line::from(keys), 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::Theme;
    use std::path::Path;

    fn request(command: &str, dangerous: bool) -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c1".into(),
            tool: "shell".into(),
            kind: ToolKind::Execute,
            title: command.into(),
            reason: if dangerous {
                "recursive delete outside the workspace".into()
            } else {
                "run this command?".into()
            },
            command: Some(command.into()),
            changes: vec![],
            remember_key: if dangerous { "" } else { "exec:echo ok" }.into(),
            dangerous,
        }
    }

    fn shown(req: &ApprovalRequest) -> Vec<String> {
        drawn(req, 80, 100)
    }

    /// The prompt for `req` at `width` in `rows`, as text.
    fn drawn(req: &ApprovalRequest, width: u16, rows: usize) -> Vec<String> {
        let theme = Theme::new(false);
        let ctx = Ctx {
            theme: &theme,
            cwd: Path::new("/w"),
        };
        let out: Vec<String> = Prompt::new(req.clone())
            .rows(&ctx, width, rows)
            .into_iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert!(
            out.len() <= rows.max(1),
            "{} rows in {rows}: {out:#?}",
            out.len()
        );
        out
    }

    /// Issue 22, item 11: `echo ok` and `rm -rf …` read as `echo okrm -rf …`, U+202E reversed
    /// the rest, and "always" was offered for a command the policy always asks about.
    #[test]
    fn a_multi_line_dangerous_command_shows_every_line_escaped_and_no_always() {
        let req = request("echo ok\nrm -rf /tmp/v\u{202E}x\u{200B}", true);
        let text = shown(&req);
        assert!(text.contains(&"  $ echo ok".to_string()), "{text:#?}");
        assert!(
            text.contains(&"  > rm -rf /tmp/v\\u{202e}x\\u{200b}".to_string()),
            "{text:#?}"
        );
        assert!(
            text.iter()
                .any(|l| l == "  dangerous: recursive delete outside the workspace"),
            "{text:#?}"
        );
        let keys = text.last().unwrap();
        assert!(!keys.contains("always"), "{keys}");
        let a = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
        assert_eq!(decision_for(&a, &req), None);
        // An ordinary command still offers it.
        let ok = request("echo ok", false);
        let keys = shown(&ok).join("\n");
        assert!(keys.contains("always for `echo ok`"), "{keys}");
        assert_eq!(decision_for(&a, &ok), Some(ApprovalDecision::AllowAlways));
        // … and "always, and save", which a dangerous command never offers.
        assert!(keys.contains("s always, and save"), "{keys}");
        let save = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::NONE);
        assert_eq!(
            decision_for(&save, &ok),
            Some(ApprovalDecision::AllowAlwaysSave)
        );
        assert_eq!(decision_for(&save, &req), None);
    }
}
