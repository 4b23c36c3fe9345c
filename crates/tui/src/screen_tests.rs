//! The inline screen under resizes and at tiny sizes (issue 22, item 7): layout math
//! saturates, ratatui's buffer is always the viewport, and a frame that panics is caught.

use interpreter_protocol::{ApprovalPolicy, ApprovalRequest, Event, ToolKind};
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::Line;
use std::time::Instant;

use super::app::App;
use super::event_loop::{DrawFailures, guarded_paint, paint};
use super::render;
use super::screen::Screen;
use super::tests::{configured, delta, exec, turn};
use super::theme::Theme;

/// An app mid-turn with everything the viewport can hold: a running command, an answer
/// streaming, a queued message, and the slash popup or (`asking`) an approval prompt.
fn busy_app(asking: bool) -> App {
    let mut app = App::new(Theme::new(true), ApprovalPolicy::OnRequest);
    app.on_event(configured());
    app.on_event(turn("t1"));
    app.on_event(exec("c1", "cargo test --workspace"));
    for i in 0..40 {
        app.on_event(delta(&format!("streamed line {i} with some words in it\n")));
    }
    app.queued.push_back("and then the docs".into());
    if asking {
        app.on_event(Event::ApprovalRequested(ApprovalRequest {
            call_id: "c2".into(),
            tool: "shell".into(),
            kind: ToolKind::Execute,
            title: "rm -rf build".into(),
            reason: "commands ask first in auto mode".into(),
            command: Some("rm -rf build".into()),
            changes: vec![],
            remember_key: "exec:rm -rf".into(),
            dangerous: false,
        }));
    } else {
        app.on_key(KeyEvent::new(KeyCode::Char('/'), KeyModifiers::NONE));
    }
    app
}

/// Resizes the test terminal and tells the screen, as the event loop does.
fn resize(screen: &mut Screen<TestBackend>, w: u16, h: u16) {
    screen.backend_mut().resize(w, h);
    screen.resized(w, h).expect("resized");
}

fn history(n: usize) -> Vec<Line<'static>> {
    (0..n).map(|i| Line::from(format!("history {i}"))).collect()
}

/// The storm's bug: a narrower terminal made ratatui move its buffer to row 0 while the
/// viewport stayed lower down, so the next frame indexed outside the buffer (exit 101).
#[test]
fn a_narrower_terminal_keeps_the_viewport_where_it_is_and_the_history_above_it() {
    let mut screen = Screen::new(TestBackend::new(80, 20), 0).expect("screen");
    screen.insert_history(&history(13)).expect("history");
    let rows: Vec<Line<'static>> = (0..2).map(|i| Line::from(format!("row {i}"))).collect();
    screen.draw(&rows, None).expect("draw");
    assert_eq!(screen.area().y, 13);
    resize(&mut screen, 60, 20);
    // The same height as before: nothing else puts ratatui's buffer back in its place.
    screen
        .draw(&rows, Some((0, 1)))
        .expect("draw after the resize");
    let area = screen.area();
    assert_eq!((area.width, area.height), (60, 2));
    let text = screen_text(screen.backend());
    assert_eq!(text[area.y as usize], "row 0", "{text:#?}");
    // ratatui clears the whole screen when a viewport narrows; the transcript stays.
    assert_eq!(text[0], "history 0", "{text:#?}");
}

#[test]
fn frames_at_tiny_sizes_fit_the_screen() {
    for app in [busy_app(false), busy_app(true)] {
        for w in [0u16, 1, 2, 3, 80] {
            for h in [0u16, 1, 2, 3, 24] {
                let frame = render::frame(&app, w, h.saturating_sub(1).max(1), Instant::now());
                let max = usize::from(h.saturating_sub(1).max(1));
                assert!(
                    frame.rows.len() <= max,
                    "{w}×{h}: {} rows",
                    frame.rows.len()
                );
                if let Some((_, y)) = frame.cursor {
                    assert!(usize::from(y) < frame.rows.len(), "{w}×{h}: cursor row {y}");
                }
            }
        }
    }
}

/// Every size to every other, through 0, 1 and 2 in each direction, with history written and
/// the viewport drawn at each: no panic, and the viewport is always inside the screen.
#[test]
fn resizes_through_zero_one_and_two_rows_and_columns() {
    let sizes = [
        (80u16, 24u16),
        (0, 0),
        (1, 1),
        (2, 2),
        (80, 1),
        (1, 24),
        (0, 24),
        (80, 0),
        (2, 60),
        (200, 2),
        (40, 10),
    ];
    let mut app = busy_app(false);
    let mut screen = Screen::new(TestBackend::new(80, 24), 5).expect("screen");
    for &(w1, h1) in &sizes {
        for &(w2, h2) in &sizes {
            for (w, h) in [(w1, h1), (w2, h2)] {
                resize(&mut screen, w, h);
                app.on_event(delta("more text\n\nand a new block\n"));
                app.info("a finished cell");
                paint(&mut app, &mut screen, Instant::now()).expect("paint");
                let area = screen.area();
                if w == 0 || h == 0 {
                    assert!(area.is_empty(), "{w}×{h}: {area:?}");
                    assert!(!app.history.is_empty(), "{w}×{h}: history written nowhere");
                } else {
                    assert!(
                        area.bottom() <= h && area.height >= 1,
                        "{w}×{h}: the viewport {area:?} is not on the screen"
                    );
                    assert!(app.history.is_empty(), "{w}×{h}: history not written");
                }
            }
        }
    }
}

/// A frame that panics: the session goes on, the screen says so once, the next frame draws.
#[test]
fn a_panicking_frame_is_caught_said_once_and_drawn_again() {
    let mut app = App::new(Theme::new(true), ApprovalPolicy::OnRequest);
    app.on_event(configured());
    let mut screen = Screen::new(TestBackend::new(60, 12), 0).expect("screen");
    let mut failures = DrawFailures::default();
    for _ in 0..3 {
        guarded_paint(&mut app, &mut screen, &mut failures, |_, _| {
            panic!("index outside of buffer (a test)")
        })
        .expect("a caught panic is not an error");
    }
    assert_eq!((failures.in_a_row, failures.total), (3, 3));
    let first = failures.first.clone().expect("the first failure");
    assert!(
        first.contains("index outside of buffer (a test)"),
        "{first}"
    );
    assert!(
        first.contains("screen_tests.rs"),
        "where it panicked: {first}"
    );
    guarded_paint(&mut app, &mut screen, &mut failures, |a, s| {
        paint(a, s, Instant::now())
    })
    .expect("paint");
    assert_eq!(failures.in_a_row, 0);
    let b = screen.backend();
    let all: Vec<String> = screen_lines(b.scrollback())
        .into_iter()
        .chain(screen_text(b))
        .collect();
    let said = all
        .iter()
        .filter(|l| l.contains("The screen could not be drawn"))
        .count();
    assert_eq!(said, 1, "{all:#?}");
    assert!(all.iter().any(|l| l.contains("Ask anything")), "{all:#?}");
}

fn screen_text(b: &TestBackend) -> Vec<String> {
    screen_lines(b.buffer())
}

fn screen_lines(buf: &ratatui::buffer::Buffer) -> Vec<String> {
    let w = usize::from(buf.area.width).max(1);
    buf.content
        .chunks(w)
        .map(|row| {
            row.iter()
                .map(|c| c.symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}
