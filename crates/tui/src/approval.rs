//! The inline approval prompt: what the call wants to do (the command, or the diff of an
//! edit), why the policy asks, and the keys that answer it.

use interpreter_protocol::{ApprovalDecision, ApprovalRequest, ToolKind};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};

use super::cells::{Ctx, clean, diff_lines};
use super::wrap::Wrapped;
use interpreter_core::face::terminal_text::{escape_invisible, escape_one_line};

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
        // Every line of the command, escaped: `echo ok` and `rm -rf …` on two lines must not
        // read as one, nor U+202E reverse what follows it.
        Some(cmd) => {
            let shown = escape_invisible(cmd);
            for (i, line) in shown.trim_end_matches('\n').split('\n').enumerate() {
                let prompt = if i == 0 { "  $ " } else { "  > " };
                out.push(Wrapped {
                    line: Line::from(vec![
                        Span::styled(prompt, t.dim()),
                        Span::styled(clean(line), t.code()),
                    ]),
                    indent: vec![Span::raw("    ")],
                    hard: true,
                });
            }
        }
        None => out.push(Wrapped::indented(
            Line::from(vec![
                Span::raw("  "),
                Span::styled(clean(&escape_one_line(&req.title)), t.text()),
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
    let reason = clean(&escape_one_line(req.reason.trim()));
    if req.dangerous {
        out.push(Wrapped::indented(
            Line::from(vec![
                Span::styled("  dangerous: ", t.warn()),
                Span::styled(reason, t.text()),
            ]),
            2,
        ));
    } else if !reason.is_empty() && !reason.eq_ignore_ascii_case(question) {
        out.push(Wrapped::indented(
            Line::from(Span::styled(format!("  {reason}"), t.dim())),
            2,
        ));
    }
    let key = |k: &str| Span::styled(k.to_string(), t.key());
    let dim = |s: &str| Span::styled(s.to_string(), t.dim());
    let mut keys = vec![Span::raw("  "), key("y"), dim(" yes  ")];
    // No "always" for what the policy asks about every time.
    if req.offers_always() {
        let always = always_label(&req.remember_key);
        keys.extend([key("a"), dim(&format!(" {always}  "))]);
    }
    keys.extend([key("n"), dim(" no  "), key("Esc"), dim(" cancel the turn")]);
    out.push(Wrapped::indented(Line::from(keys), 2));
    out
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
        let theme = Theme::new(false);
        let ctx = Ctx {
            theme: &theme,
            cwd: Path::new("/w"),
        };
        lines(&ctx, req)
            .into_iter()
            .map(|w| w.line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
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
        assert!(shown(&ok).last().unwrap().contains("always for `echo ok`"));
        assert_eq!(decision_for(&a, &ok), Some(ApprovalDecision::AllowAlways));
    }
}
