//! The live viewport under the transcript: the answer being written, running tool calls, the
//! working indicator, queued messages, the composer or an approval prompt, a popup, and the
//! status line. Pure: it turns the app's state into rows.

use ratatui::text::{Line, Span};
use std::time::Instant;

use super::app::App;
use super::cells::{self, Cell};
use super::ctx::{Ctx, clean};
use super::wrap::{Wrapped, wrap_all};

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Rows of a running call's live output.
const LIVE_TOOL_ROWS: usize = 6;

/// What the viewport shows: its rows, and where the cursor goes (column, row) if anywhere.
pub(crate) struct Frame {
    pub rows: Vec<Line<'static>>,
    pub cursor: Option<(u16, u16)>,
}

/// The transcript rows of `cell` at `width`, with the blank row that follows every cell.
pub(crate) fn history_rows(app: &App, cell: &Cell, width: u16) -> Vec<Line<'static>> {
    let cwd = app.view.as_ref().map(|v| v.cwd.clone()).unwrap_or_default();
    let ctx = Ctx {
        theme: &app.theme,
        cwd: &cwd,
    };
    let mut rows = wrap_all(&cell.lines(&ctx), width);
    rows.push(Line::default());
    rows
}

/// The viewport at `width`, at most `max_rows` tall.
pub(crate) fn frame(app: &App, width: u16, max_rows: u16, now: Instant) -> Frame {
    let t = &app.theme;
    let cwd = app.view.as_ref().map(|v| v.cwd.clone()).unwrap_or_default();
    let ctx = Ctx {
        theme: t,
        cwd: &cwd,
    };
    let mut bottom: Vec<Line<'static>> = Vec::new();
    let mut cursor = None;
    // A prompt has the viewport but for the status line, and lays itself out in it: what it
    // asks and the keys that answer it are never cut off the bottom.
    let prompt_rows = usize::from(max_rows).saturating_sub(1).max(1);
    let prompt = !app.approvals.is_empty() || !app.questions.is_empty();
    if let Some(p) = app.approvals.front() {
        bottom.extend(p.rows(&ctx, width, prompt_rows));
    } else if let Some(form) = app.questions.front() {
        bottom.extend(form.rows(&ctx, width, prompt_rows));
    } else if app.picker.is_some() {
        bottom.push(Line::from(Span::styled(
            "Resume a session (Enter opens it, Esc starts a new one)",
            t.header(),
        )));
    } else if let Some(stage) = &app.rewind {
        let title = match stage {
            super::popup::Rewind::Turn => {
                "Rewind to before a prompt (Enter picks it, Esc closes)".to_string()
            }
            super::popup::Rewind::What(turn) => format!(
                "Rewind to before “{}”: what goes back? (Esc: another prompt)",
                clean(&interpreter_face::slash::prompt_line(turn))
            ),
        };
        bottom.push(Line::from(Span::styled(title, t.header())));
    } else {
        let placeholder = if app.view.is_some() {
            "Ask anything · / for commands · @ for files"
        } else {
            "starting the session…"
        };
        let (rows, (cx, cy)) = app.composer.render(t, width, placeholder);
        cursor = Some((cx, u16::try_from(bottom.len()).unwrap_or(0) + cy));
        bottom.extend(rows);
    }
    // The composer's popup waits under a prompt (the keys answer the prompt).
    if let Some(p) = app.popup.as_ref().filter(|_| !prompt) {
        bottom.extend(p.render(t, width));
    }
    bottom.push(super::status::line(t, app.view.as_ref(), width, &hint(app)));

    let mut top: Vec<Line<'static>> = Vec::new();
    for c in &app.running {
        let mut rows = wrap_all(&Cell::Tool(Box::new(c.clone())).lines(&ctx), width);
        if rows.len() > LIVE_TOOL_ROWS {
            rows.drain(1..rows.len() - (LIVE_TOOL_ROWS - 1));
        }
        top.extend(rows);
    }
    if let Some(line) = indicator(app, now) {
        top.push(line);
    }
    for q in &app.queued {
        let first = q.lines().next().unwrap_or("");
        top.push(Line::from(vec![
            Span::styled("  ↳ queued: ", t.dim()),
            Span::styled(clean(first), t.dim()),
        ]));
    }
    if !top.is_empty() || app.stream.is_some() {
        top.push(Line::default());
    }
    // The answer being written gets what room is left, showing its newest rows.
    let room = usize::from(max_rows).saturating_sub(top.len() + bottom.len());
    let mut rows = stream_rows(app, width, room.saturating_sub(1));
    if !rows.is_empty() && !top.is_empty() {
        rows.push(Line::default());
    }
    rows.extend(top);
    let over = (rows.len() + bottom.len()).saturating_sub(usize::from(max_rows));
    rows.drain(..over.min(rows.len()));
    let offset = u16::try_from(rows.len()).unwrap_or(0);
    rows.extend(bottom);
    rows.truncate(usize::from(max_rows.max(1)));
    let cursor = cursor
        .map(|(x, y)| (x, y + offset))
        .filter(|(_, y)| usize::from(*y) < rows.len());
    Frame { rows, cursor }
}

fn stream_rows(app: &App, width: u16, room: usize) -> Vec<Line<'static>> {
    let Some(s) = app
        .stream
        .as_ref()
        .filter(|s| !s.pending().trim().is_empty())
    else {
        return Vec::new();
    };
    if room == 0 {
        return Vec::new();
    }
    let lines: Vec<Wrapped> = cells::agent(&app.theme, s.pending(), !s.committed_any);
    let mut rows = wrap_all(&lines, width);
    if rows.len() > room {
        rows.drain(..rows.len() - room);
    }
    rows
}

/// "⠋ Working · 12 s", or what the model is waiting for.
fn indicator(app: &App, now: Instant) -> Option<Line<'static>> {
    let t = &app.theme;
    let turn = app.turn.as_ref()?;
    if !app.approvals.is_empty() || !app.questions.is_empty() {
        return None;
    }
    let elapsed = now.saturating_duration_since(turn.started);
    let frame = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
    let what = if let Some(w) = &turn.waiting {
        format!("{w}…")
    } else if app.thinking.is_some() {
        format!("Thinking · {}", cells::elapsed(elapsed.as_secs()))
    } else {
        format!("Working · {}", cells::elapsed(elapsed.as_secs()))
    };
    Some(Line::from(vec![
        Span::styled(format!("{frame} "), t.bullet()),
        Span::styled(what, t.header()),
        Span::styled("  (Ctrl+C to interrupt)", t.dim()),
    ]))
}

fn hint(app: &App) -> String {
    if app.quit_armed.is_some() {
        "Ctrl+C again to quit".into()
    } else if app.turn.is_some() {
        "Ctrl+C interrupts".into()
    } else {
        "/ commands · @ files · Shift+Tab mode".into()
    }
}
