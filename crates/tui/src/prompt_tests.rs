//! Issue 34: the terminal shows what it asks. An approval prompt keeps the dangerous part of
//! its command, the reason and the answer keys on the screen whatever the command's shape,
//! and the question picker scrolls with the highlighted option, under the question and above
//! the keys; on screens of 24 and 10 rows and smaller, without a panic.

use interpreter_protocol::{
    ApprovalPolicy, ApprovalRequest, Event, Question, QuestionOption, QuestionRequest, ToolKind,
};
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::time::Instant;

use super::app::App;
use super::event_loop::paint;
use super::screen::Screen;
use super::tests::{configured, turn};
use super::theme::Theme;

/// What the core says about `rm -rf` of an absolute path (sandbox/command/rules.rs).
const RM_REASON: &str = "recursive delete outside the workspace";

/// Why the core finds `command` dangerous.
fn reason_of(command: &str) -> String {
    super::danger::reason_of(command).unwrap_or_else(|| panic!("not dangerous: {command}"))
}

/// The app asking `event`, drawn on a `w`×`h` screen.
struct Asked {
    app: App,
    screen: Screen<TestBackend>,
}

impl Asked {
    fn new(w: u16, h: u16, event: Event) -> Asked {
        let mut app = App::new(Theme::new(true), ApprovalPolicy::OnRequest);
        app.on_event(configured());
        app.on_event(turn("t1"));
        app.on_event(event);
        let mut a = Asked {
            app,
            screen: Screen::new(TestBackend::new(w, h), 0).expect("screen"),
        };
        a.draw();
        a
    }

    fn draw(&mut self) {
        let now = self
            .app
            .turn
            .as_ref()
            .map_or_else(Instant::now, |t| t.started);
        paint(&mut self.app, &mut self.screen, now).expect("paint");
    }

    fn press(&mut self, code: KeyCode, times: usize) {
        for _ in 0..times {
            self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
            self.draw();
        }
    }

    /// The screen's rows as text.
    fn screen(&self) -> Vec<String> {
        let buf = self.screen.backend().buffer();
        let w = usize::from(buf.area.width).max(1);
        buf.content
            .chunks(w)
            .map(|row| {
                let s: String = row.iter().map(|c| c.symbol()).collect();
                s.trim_end().to_string()
            })
            .collect()
    }

    fn shows(&self, text: &str) -> bool {
        self.screen().iter().any(|row| row.contains(text))
    }
}

fn dangerous(command: &str, reason: &str) -> Event {
    Event::ApprovalRequested(ApprovalRequest {
        call_id: "c1".into(),
        tool: "shell".into(),
        kind: ToolKind::Execute,
        title: command.into(),
        reason: reason.into(),
        command: Some(command.into()),
        changes: vec![],
        remember_key: String::new(),
        dangerous: true,
    })
}

/// Shows `event` on screens from 120×40 down to 20×4; on each, `check` the screen.
fn at_every_size(event: impl Fn() -> Event, check: impl Fn(&Asked, u16, u16)) {
    for (w, h) in [(120, 40), (80, 24), (80, 10), (40, 24), (40, 10), (30, 6)] {
        check(&Asked::new(w, h, event()), w, h);
    }
    // Tiny screens: no panic.
    for (w, h) in [(1, 1), (2, 2), (5, 3), (80, 2), (3, 40)] {
        let _ = Asked::new(w, h, event());
    }
}

#[test]
fn sixty_empty_lines_fold_and_the_rm_and_its_reason_stay_on_a_24_row_screen() {
    let command = format!("{}rm -rf /tmp/x-something", "\n".repeat(60));
    assert_eq!(reason_of(&command), RM_REASON);
    let a = Asked::new(80, 24, dangerous(&command, RM_REASON));
    let screen = a.screen().join("\n");
    assert!(a.shows("  $ … 60 empty lines …"), "{screen}");
    assert!(a.shows("  > rm -rf /tmp/x-something"), "{screen}");
    assert!(a.shows(&format!("dangerous: {RM_REASON}")), "{screen}");
    assert!(
        a.shows("n no") && a.shows("Esc cancel the turn"),
        "{screen}"
    );
    // One row for the empty lines, not sixty.
    let prompt = screen.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(prompt <= 8, "{screen}");
    // And on every screen.
    at_every_size(
        || dangerous(&command, RM_REASON),
        |a, w, h| {
            let s = a.screen().join("\n");
            assert!(a.shows("rm -rf"), "{w}×{h}:\n{s}");
            assert!(a.shows("dangerous:"), "{w}×{h}:\n{s}");
            assert!(a.shows("n no"), "{w}×{h}:\n{s}");
        },
    );
}

#[test]
fn the_dangerous_part_the_reason_and_the_keys_stay_whatever_the_commands_shape() {
    let mut many = String::new();
    for i in 0..300 {
        many.push_str(&format!("echo step {i}\n"));
    }
    many.push_str("rm -rf /srv/data\n");
    for i in 0..300 {
        many.push_str(&format!("echo after {i}\n"));
    }
    let shapes = [
        // Many lines, the rm in their middle.
        many,
        // A very long line, the rm after four thousand characters.
        format!("echo '{}' && rm -rf /srv/data; echo ok", "x".repeat(4000)),
        // The rm inside a long quoted script.
        format!("sh -c \"echo {}; rm -rf /srv/data\"", "y".repeat(4000)),
        // Blank lines and spaces around it.
        format!(
            "echo hi\n{}{}rm -rf /srv/data\n{}",
            "\n \n".repeat(80),
            " ".repeat(3000),
            "\n".repeat(40)
        ),
    ];
    for command in &shapes {
        assert_eq!(reason_of(command), RM_REASON);
        at_every_size(
            || dangerous(command, RM_REASON),
            |a, w, h| {
                let s = a.screen().join("\n");
                // Narrow screens break the path, not the command's start.
                assert!(a.shows("rm -rf"), "{w}×{h}:\n{s}");
                if w >= 40 {
                    assert!(a.shows("rm -rf /srv/data"), "{w}×{h}:\n{s}");
                }
                assert!(a.shows("dangerous:"), "{w}×{h}:\n{s}");
                assert!(a.shows("n no"), "{w}×{h}:\n{s}");
                // What was left out says so (when the command has more than a row, and
                // does not fit).
                assert!(
                    !(10..=24).contains(&h)
                        || a.shows("left out")
                        || a.shows("more")
                        || a.shows("empty lines"),
                    "{w}×{h}:\n{s}"
                );
            },
        );
    }
}

#[test]
fn a_long_reason_is_cut_to_its_share_and_the_command_and_keys_stay() {
    // A reason that quotes the command: `mkfs.<name> formats a disk`.
    let command = format!(
        "{}mkfs.{} /dev/sdb",
        "echo filler\n".repeat(50),
        "x".repeat(2000)
    );
    let reason = reason_of(&command);
    assert!(reason.len() > 2000, "{reason}");
    at_every_size(
        || dangerous(&command, &reason),
        |a, w, h| {
            let s = a.screen().join("\n");
            assert!(a.shows("dangerous: mkfs"), "{w}×{h}:\n{s}");
            assert!(a.shows("> mkfs"), "{w}×{h}:\n{s}");
            // How much was left out, or on a narrow screen that something was.
            assert!(a.shows(if w >= 40 { "more" } else { "…" }), "{w}×{h}:\n{s}");
            assert!(a.shows("n no"), "{w}×{h}:\n{s}");
        },
    );
    // A reason the core would not give names no part of the command: the prompt still
    // shows it, the command's first lines, and the keys.
    let made_up = format!("{RM_REASON}, {}", "and it goes on ".repeat(300));
    at_every_size(
        || dangerous(&command, &made_up),
        |a, w, h| {
            let s = a.screen().join("\n");
            assert!(a.shows("dangerous: recursive"), "{w}×{h}:\n{s}");
            assert!(a.shows("$ echo filler"), "{w}×{h}:\n{s}");
            assert!(a.shows("n no"), "{w}×{h}:\n{s}");
        },
    );
}

fn question(options: usize) -> Event {
    Event::QuestionAsked(QuestionRequest {
        call_id: "q1".into(),
        questions: vec![Question {
            id: "pick".into(),
            header: "Pick".into(),
            question: "Which option do you want?".into(),
            options: (1..=options)
                .map(|i| QuestionOption {
                    label: format!("Option {i}"),
                    description: String::new(),
                })
                .collect(),
            multi_select: false,
            allow_other: true,
        }],
    })
}

/// The picker shows the question, the keys and the highlighted option (`row`, 1-based).
fn assert_picker(a: &Asked, row: usize, label: &str) {
    let s = a.screen().join("\n");
    assert!(a.shows("Pick: Which option do you want?"), "{s}");
    assert!(a.shows("Enter choose"), "{s}");
    assert!(a.shows(&format!("› {row}. {label}")), "{s}");
}

#[test]
fn a_picker_of_500_options_scrolls_with_the_highlight() {
    for (w, h) in [(120, 40), (80, 24), (80, 10), (40, 6)] {
        let mut a = Asked::new(w, h, question(500));
        assert_picker(&a, 1, "Option 1");
        assert!(h < 10 || a.shows("more options"), "{:#?}", a.screen());
        a.press(KeyCode::Down, 30);
        assert_picker(&a, 31, "Option 31");
        a.press(KeyCode::Down, 469);
        assert_picker(&a, 500, "Option 500");
        assert!(a.shows("↑"), "{:#?}", a.screen());
        // Past the last option, "Other"; then round to the first.
        a.press(KeyCode::Down, 1);
        assert_picker(&a, 501, "Other (type your own answer)");
        a.press(KeyCode::Down, 1);
        assert_picker(&a, 1, "Option 1");
        // Up from the first goes to the end at once.
        a.press(KeyCode::Up, 2);
        assert_picker(&a, 500, "Option 500");
    }
    // Moving down a page scrolls by a row at a time, not a page: the option above stays.
    let mut a = Asked::new(80, 24, question(500));
    a.press(KeyCode::Down, 30);
    assert!(a.shows("  30. Option 30"), "{:#?}", a.screen());
    a.press(KeyCode::Up, 1);
    assert!(
        a.shows("› 30. Option 30") && a.shows("  31. Option 31"),
        "{:#?}",
        a.screen()
    );
    // Enter answers the highlighted option.
    a.app.take_actions();
    a.press(KeyCode::Enter, 1);
    let actions = format!("{:?}", a.app.take_actions());
    assert!(actions.contains("\"Option 30\""), "{actions}");
    // Tiny screens: no panic, the highlighted row is drawn.
    for (w, h) in [(1, 1), (2, 2), (20, 3), (80, 2)] {
        let mut a = Asked::new(w, h, question(500));
        a.press(KeyCode::Down, 30);
        if w >= 20 {
            assert!(a.shows("› 31."), "{w}×{h}: {:#?}", a.screen());
        }
    }
}

/// A tall prompt gives its rows back before the answer's transcript goes above it: answered,
/// the 500-option picker (the whole screen) and the model's next words arrive in one frame,
/// and those words are on the screen, not scrolled into the scrollback by a viewport that was
/// about to shrink.
#[test]
fn what_follows_an_answered_tall_picker_stays_on_the_screen() {
    let mut a = Asked::new(80, 24, question(500));
    a.press(KeyCode::Down, 30);
    a.app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    a.app.on_event(Event::AgentMessage {
        message_id: "m2".into(),
        text: "Option 31 it is.".into(),
        phase: None,
    });
    a.draw();
    let s = a.screen().join("\n");
    assert!(a.shows("Option 31 it is."), "{s}");
}
