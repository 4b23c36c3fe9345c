//! The status line: model, harness, permission mode, context used of the window, and cost.

use interpreter_protocol::{PermissionMode, SandboxMode};
use ratatui::text::{Line, Span};

use super::ctx::clean;
use super::theme::Theme;
use super::wrap::str_width;
use interpreter_face::slash;
use interpreter_face::view::SessionView;

/// The mode a session's permissions amount to, as the faces name it.
pub(crate) fn mode_of(view: &SessionView) -> PermissionMode {
    match view.settings.permissions.sandbox {
        SandboxMode::ReadOnly => PermissionMode::ReadOnly,
        SandboxMode::WorkspaceWrite => PermissionMode::Auto,
        SandboxMode::DangerFullAccess => PermissionMode::FullAccess,
    }
}

/// "12.3k".
pub(crate) fn tokens(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// The status line at `width`; `hint` is shown on the right when there is room.
pub(crate) fn line(
    theme: &Theme,
    view: Option<&SessionView>,
    width: u16,
    hint: &str,
) -> Line<'static> {
    let Some(view) = view else {
        return Line::from(Span::styled("  starting…", theme.dim()));
    };
    let s = &view.settings;
    let mode = mode_of(view);
    let sep = || Span::styled(" · ", theme.dim());
    let mut spans = vec![
        Span::raw("  "),
        Span::styled(clean(&s.model), theme.text()),
        sep(),
        Span::styled(clean(&s.harness), theme.text()),
        sep(),
        Span::styled(
            mode.as_str(),
            theme.mode(mode == PermissionMode::FullAccess),
        ),
    ];
    let window = view
        .tokens
        .as_ref()
        .and_then(|t| t.context_window)
        .or(s.context_window);
    let used = view.tokens.as_ref().map(|t| t.context_used).unwrap_or(0);
    let ctx = match window {
        Some(w) if w > 0 => format!(
            "{}/{} ({}%)",
            tokens(used),
            tokens(w),
            used.saturating_mul(100) / w
        ),
        _ => format!("{} tokens", tokens(used)),
    };
    spans.push(sep());
    spans.push(Span::styled(ctx, theme.dim()));
    if let Some(cost) = view.tokens.as_ref().and_then(|t| t.cost_usd) {
        spans.push(sep());
        spans.push(Span::styled(format!("${cost:.4}"), theme.dim()));
    }
    if let Some(goal) = &view.goal {
        let budget = goal
            .token_budget
            .map(|b| format!("/{}", tokens(b)))
            .unwrap_or_default();
        spans.push(sep());
        spans.push(Span::styled(
            format!(
                "goal {} {}{budget}",
                slash::goal_status_name(goal.status),
                tokens(goal.tokens_used)
            ),
            theme.text(),
        ));
    }
    let running = view.running_tasks();
    if running > 0 {
        spans.push(sep());
        let noun = if running == 1 { "task" } else { "tasks" };
        spans.push(Span::styled(
            format!("{running} background {noun} running"),
            theme.text(),
        ));
    }
    let used_width: usize = spans.iter().map(|s| str_width(&s.content)).sum();
    let room = usize::from(width).saturating_sub(used_width);
    if !hint.is_empty() && str_width(hint) + 4 <= room {
        spans.push(Span::raw(" ".repeat(room - str_width(hint) - 1)));
        spans.push(Span::styled(hint.to_string(), theme.dim()));
    }
    Line::from(spans)
}
