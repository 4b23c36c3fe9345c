//! Rendering tests: recorded event sequences drive the app, and the terminal (scrollback and
//! viewport) is drawn on ratatui's `TestBackend` and compared with `insta` snapshots.

use interpreter_protocol::{
    ApprovalPolicy, ApprovalRequest, Event, FileChange, FileChangeKind, Permissions, Plan,
    PlanItem, PlanStatus, SandboxMode, SessionConfigured, SessionSettings, SkillInfo, TokenCount,
    TokenUsage, ToolCallBegin, ToolCallEnd, ToolKind, ToolStatus, TurnEndReason, TurnEnded,
};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::PathBuf;
use std::time::Instant;

use super::app::{Action, App};
use super::event_loop::paint;
use super::screen::Screen;
use super::theme::Theme;

const CWD: &str = "/work/repo";

fn settings() -> SessionSettings {
    SessionSettings {
        provider: "kimi".into(),
        model: "kimi-k3".into(),
        harness: "native".into(),
        permissions: Permissions {
            sandbox: SandboxMode::WorkspaceWrite,
            approval: ApprovalPolicy::OnRequest,
            ask_commands: true,
        },
        effort: None,
        context_window: Some(262_144),
    }
}

pub(super) fn configured() -> Event {
    Event::SessionConfigured(SessionConfigured {
        session_id: "0198-test".into(),
        cwd: PathBuf::from(CWD),
        roots: vec![PathBuf::from(CWD)],
        settings: settings(),
        skills: vec![SkillInfo {
            name: "deploy".into(),
            description: "Ship the current branch".into(),
            argument_hint: None,
            command: false,
        }],
        title: None,
    })
}

/// A terminal of `w`×`h` with a configured session, the viewport starting at the top.
struct Term {
    app: App,
    screen: Screen<TestBackend>,
}

impl Term {
    fn new(w: u16, h: u16) -> Term {
        Term::with_theme(w, h, Theme::new(true))
    }

    fn with_theme(w: u16, h: u16, theme: Theme) -> Term {
        let mut t = Term {
            app: App::new(theme, ApprovalPolicy::OnRequest),
            screen: Screen::new(TestBackend::new(w, h), 0).unwrap(),
        };
        t.feed([configured()]);
        t
    }

    fn feed(&mut self, events: impl IntoIterator<Item = Event>) {
        for e in events {
            self.app.on_event(e);
        }
        self.draw();
    }

    fn keys(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c), KeyModifiers::NONE);
        }
    }

    fn key(&mut self, code: KeyCode, mods: KeyModifiers) {
        self.app.on_key(KeyEvent::new(code, mods));
        self.draw();
    }

    fn draw(&mut self) {
        // The clock stands still at the turn's start, so elapsed times are 0 s.
        let now = self
            .app
            .turn
            .as_ref()
            .map_or_else(Instant::now, |t| t.started);
        paint(&mut self.app, &mut self.screen, now).unwrap();
    }

    /// Scrollback, then the screen, as text; trailing blanks trimmed.
    fn text(&self) -> String {
        let b = self.screen.backend();
        let mut out = lines(b.scrollback());
        out.extend(lines(b.buffer()));
        while out.last().is_some_and(|l| l.is_empty()) {
            out.pop();
        }
        out.join("\n")
    }
}

fn lines(buf: &Buffer) -> Vec<String> {
    let w = usize::from(buf.area.width);
    buf.content
        .chunks(w.max(1))
        .map(|row| {
            let mut s = String::new();
            let mut skip = 0;
            for c in row {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                s.push_str(c.symbol());
                skip = unicode_width::UnicodeWidthStr::width(c.symbol()).saturating_sub(1);
            }
            s.trim_end().to_string()
        })
        .collect()
}

pub(super) fn turn(id: &str) -> Event {
    Event::TurnStarted { turn_id: id.into() }
}

fn ended(id: &str, reason: TurnEndReason) -> Event {
    Event::TurnEnded(TurnEnded {
        turn_id: id.into(),
        reason,
    })
}

pub(super) fn delta(text: &str) -> Event {
    Event::AgentMessageDelta {
        message_id: "m1".into(),
        delta: text.into(),
    }
}

pub(super) fn exec(id: &str, command: &str) -> Event {
    Event::ToolCallBegin(ToolCallBegin {
        call_id: id.into(),
        tool: "shell".into(),
        kind: ToolKind::Execute,
        title: command.into(),
        input: serde_json::json!({"command": command}),
        locations: vec![],
        command: Some(command.into()),
        subagent: None,
    })
}

fn end(id: &str, status: ToolStatus, output: &str, code: Option<i32>) -> Event {
    Event::ToolCallEnd(ToolCallEnd {
        call_id: id.into(),
        status,
        output: output.into(),
        exit_code: code,
        changes: vec![],
    })
}

fn calc_change() -> FileChange {
    FileChange {
        path: PathBuf::from(CWD).join("calc.py"),
        kind: FileChangeKind::Update,
        move_path: None,
        old_text: Some(
            "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n".into(),
        ),
        new_text: Some(
            "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n".into(),
        ),
    }
}

/// A streamed answer: Markdown with a heading, a list, inline code, a link and a fenced code
/// block, in deltas cut at awkward places (inside the fence and inside a word).
const ANSWER: &[&str] = &[
    "## The fix\n\nThe bug is in `add`: it subt",
    "racts. See [the docs](https://docs.python.org/3/).\n\n- changed **one** line\n- ran the tests\n",
    "\n```python\ndef add(a, b):\n",
    "    return a + b\n```\n\nAll green.",
];

/// Two messages of one response (commentary, then the answer) are two cells.
#[test]
fn two_messages_of_one_response_are_two_cells() {
    let mut t = Term::new(80, 24);
    t.app.send_message("answer me");
    let message = |id: &str, text: &str| {
        [
            Event::AgentMessageDelta {
                message_id: id.into(),
                delta: text.into(),
            },
            Event::AgentMessage {
                message_id: id.into(),
                text: text.into(),
                phase: None,
            },
        ]
    };
    t.feed([turn("t1")]);
    t.feed(message("r1", "Looking first."));
    t.feed(message("r1-1", "All done."));
    t.feed([ended("t1", TurnEndReason::Completed)]);
    let text = t.text();
    assert!(
        text.contains("• Looking first.") && text.contains("• All done."),
        "{text}"
    );
    assert!(!text.contains("Looking first.All done."), "{text}");
}

#[test]
fn streamed_markdown_answer() {
    let mut t = Term::new(80, 24);
    t.app.send_message("fix the add function");
    t.feed([turn("t1")]);
    t.feed(ANSWER[..2].iter().map(|d| delta(d)));
    // Mid-stream: the finished blocks are in the scrollback, the list is still live.
    insta::assert_snapshot!("streamed_answer_midway", t.text());
    t.feed(ANSWER[2..].iter().map(|d| delta(d)));
    t.feed([
        Event::AgentMessage {
            message_id: "m1".into(),
            text: ANSWER.concat(),
            phase: None,
        },
        ended("t1", TurnEndReason::Completed),
    ]);
    insta::assert_snapshot!("streamed_answer", t.text());
}

#[test]
fn command_cells_succeeded_and_failed() {
    let mut t = Term::new(80, 24);
    t.feed([
        turn("t1"),
        exec("c1", "cargo test -q"),
        Event::ToolCallRunning {
            call_id: "c1".into(),
        },
        Event::ToolCallOutputDelta {
            call_id: "c1".into(),
            chunk: "running 3 tests\n".into(),
        },
    ]);
    insta::assert_snapshot!("command_running", t.text());
    let many: String = (1..=9).map(|i| format!("test t{i} ... ok\n")).collect();
    t.feed([
        end("c1", ToolStatus::Completed, &format!("running 9 tests\n{many}\ntest result: ok. 9 passed"), Some(0)),
        exec("c2", "python3 -c 'import calc; calc.div(1, 0)'"),
        end(
            "c2",
            ToolStatus::Failed,
            "Traceback (most recent call last):\n  File \"<string>\", line 1\nZeroDivisionError: division by zero\n",
            Some(1),
        ),
        ended("t1", TurnEndReason::Completed),
    ]);
    insta::assert_snapshot!("command_cells", t.text());
}

#[test]
fn edit_diff() {
    let mut t = Term::new(80, 24);
    let begin = ToolCallBegin {
        call_id: "e1".into(),
        tool: "apply_patch".into(),
        kind: ToolKind::Edit,
        title: "Edit calc.py".into(),
        input: serde_json::Value::Null,
        locations: vec![PathBuf::from(CWD).join("calc.py")],
        command: None,
        subagent: None,
    };
    t.feed([
        turn("t1"),
        Event::ToolCallBegin(begin),
        Event::ToolCallEnd(ToolCallEnd {
            call_id: "e1".into(),
            status: ToolStatus::Completed,
            output: "M calc.py".into(),
            exit_code: None,
            changes: vec![calc_change()],
        }),
        ended("t1", TurnEndReason::Completed),
    ]);
    insta::assert_snapshot!("edit_diff", t.text());
}

#[test]
fn plan_checklist() {
    let mut t = Term::new(80, 24);
    let item = |step: &str, status| PlanItem {
        step: step.into(),
        status,
    };
    t.feed([
        turn("t1"),
        Event::PlanUpdated(Plan {
            explanation: Some("Small fix, then tests.".into()),
            items: vec![
                item("Read calc.py", PlanStatus::Completed),
                item("Fix add()", PlanStatus::InProgress),
                item("Run the tests", PlanStatus::Pending),
            ],
        }),
    ]);
    insta::assert_snapshot!("plan", t.text());
}

#[test]
fn approval_prompt_and_answers() {
    let mut t = Term::new(80, 24);
    t.feed([
        turn("t1"),
        exec("c1", "rm -rf build"),
        Event::ApprovalRequested(ApprovalRequest {
            call_id: "c1".into(),
            tool: "shell".into(),
            kind: ToolKind::Execute,
            title: "rm -rf build".into(),
            reason: "commands ask first in auto mode".into(),
            command: Some("rm -rf build".into()),
            changes: vec![],
            remember_key: "exec:rm -rf".into(),
            dangerous: false,
        }),
    ]);
    insta::assert_snapshot!("approval_prompt", t.text());
    // Keys that mean nothing here are ignored; `a` allows the prefix for the session.
    t.keys("xa");
    let actions = t.app.take_actions();
    assert_eq!(
        actions,
        [Action::Op(interpreter_protocol::Op::Approval {
            call_id: "c1".into(),
            decision: interpreter_protocol::ApprovalDecision::AllowAlways,
        })]
    );
    // An edit's approval shows its diff; Esc refuses it and cancels the turn.
    t.feed([Event::ApprovalRequested(ApprovalRequest {
        call_id: "e1".into(),
        tool: "apply_patch".into(),
        kind: ToolKind::Edit,
        title: "Edit calc.py".into(),
        reason: String::new(),
        command: None,
        changes: vec![calc_change()],
        remember_key: "write:/work/repo/calc.py".into(),
        dangerous: false,
    })]);
    insta::assert_snapshot!("approval_prompt_edit", t.text());
    t.key(KeyCode::Esc, KeyModifiers::NONE);
    let actions = t.app.take_actions();
    assert_eq!(actions.len(), 2);
    assert_eq!(actions[1], Action::Op(interpreter_protocol::Op::Interrupt));
}

#[test]
fn slash_popup() {
    let mut t = Term::new(80, 24);
    t.keys("/");
    insta::assert_snapshot!("slash_popup", t.text());
    t.keys("re");
    insta::assert_snapshot!("slash_popup_filtered", t.text());
    t.key(KeyCode::Esc, KeyModifiers::NONE);
    assert!(t.app.popup.is_none());
}

#[test]
fn file_popup() {
    let mut t = Term::new(80, 24);
    t.app.files = Some(
        [
            "Cargo.toml",
            "README.md",
            "src/main.rs",
            "src/tui/markdown.rs",
            "tests/markdown_test.rs",
        ]
        .map(String::from)
        .to_vec(),
    );
    t.keys("look at @mark");
    insta::assert_snapshot!("file_popup", t.text());
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(t.app.composer.text(), "look at src/tui/markdown.rs ");
}

#[test]
fn status_line() {
    let mut t = Term::new(100, 6);
    t.feed([
        Event::SettingsChanged(SessionSettings {
            permissions: Permissions {
                sandbox: SandboxMode::DangerFullAccess,
                approval: ApprovalPolicy::OnRequest,
                ask_commands: false,
            },
            harness: "kimi-code".into(),
            ..settings()
        }),
        Event::TokenCount(TokenCount {
            last: TokenUsage::default(),
            total: TokenUsage {
                input_tokens: 30_000,
                cached_input_tokens: 20_000,
                output_tokens: 1_200,
                reasoning_output_tokens: 0,
            },
            context_used: 48_213,
            context_window: Some(262_144),
            cost_usd: Some(0.0123),
        }),
    ]);
    insta::assert_snapshot!("status_line", t.text());
}

#[test]
fn narrow_terminal() {
    let mut t = Term::new(40, 30);
    t.app
        .send_message("why does the build fail on CI but not locally?");
    t.feed([
        turn("t1"),
        exec("c1", "cargo build --locked --all-targets 2>&1 | tail -n 20"),
    ]);
    t.feed([end(
        "c1",
        ToolStatus::Failed,
        "error[E0432]: unresolved import `crate::tui::widgets::StatusLine`",
        Some(101),
    )]);
    t.feed(ANSWER.iter().map(|d| delta(d)));
    t.feed([ended("t1", TurnEndReason::Completed)]);
    t.keys("and on macOS?");
    insta::assert_snapshot!("narrow_40_columns", t.text());
}

#[test]
fn hostile_text_reaches_the_terminal_as_text() {
    let evil = "x\x1b]52;c;ZXZpbA==\x07\x1b[2J\u{9b}31my\x1b]0;pwned\x1b\\";
    let mut t = Term::new(60, 20);
    t.feed([
        turn("t1"),
        delta(evil),
        exec("c1", evil),
        end("c1", ToolStatus::Completed, evil, Some(0)),
        Event::Warning {
            message: evil.into(),
        },
        ended(
            "t1",
            TurnEndReason::Failed {
                message: evil.into(),
            },
        ),
    ]);
    let b = t.screen.backend();
    for cell in b
        .scrollback()
        .content
        .iter()
        .chain(b.buffer().content.iter())
    {
        assert!(
            !cell.symbol().chars().any(char::is_control),
            "a control character reached the screen: {:?}",
            cell.symbol()
        );
    }
    assert!(t.text().contains("xy"), "{}", t.text());
}

#[test]
fn no_color_draws_no_colours() {
    let mut t = Term::with_theme(60, 20, Theme::new(false));
    t.feed([
        turn("t1"),
        exec("c1", "false"),
        end("c1", ToolStatus::Failed, "", Some(1)),
    ]);
    t.feed(ANSWER.iter().map(|d| delta(d)));
    t.feed([ended("t1", TurnEndReason::Completed)]);
    let b = t.screen.backend();
    for cell in b
        .scrollback()
        .content
        .iter()
        .chain(b.buffer().content.iter())
    {
        assert_eq!(cell.fg, ratatui::style::Color::Reset, "{:?}", cell.symbol());
        assert_eq!(cell.bg, ratatui::style::Color::Reset, "{:?}", cell.symbol());
    }
    // Inline code keeps its backticks when it cannot be coloured.
    assert!(t.text().contains("`add`"), "{}", t.text());
}

#[test]
fn keys_ctrl_c_shift_tab_and_commands() {
    let mut t = Term::new(80, 24);
    // Shift+Tab asks for the next mode.
    t.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    let a = t.app.take_actions();
    assert!(
        matches!(&a[..], [Action::Op(interpreter_protocol::Op::SetPermissions(p))] if p.sandbox == SandboxMode::DangerFullAccess),
        "{a:?}"
    );
    // Ctrl+C clears a typed prompt, then needs a second press to quit.
    t.keys("half a thought");
    t.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert!(t.app.composer.is_empty());
    t.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert!(t.app.take_actions().is_empty());
    t.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(t.app.take_actions(), [Action::Quit]);
    // During a turn Ctrl+C interrupts it.
    t.feed([turn("t2")]);
    t.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(
        t.app.take_actions(),
        [Action::Op(interpreter_protocol::Op::Interrupt)]
    );
    // Ctrl+J and Shift+Enter insert newlines; Enter sends; slash commands become ops.
    t.feed([ended("t2", TurnEndReason::Cancelled)]);
    t.keys("/harness kimi-code");
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        t.app.take_actions(),
        [Action::Op(interpreter_protocol::Op::SetHarness {
            harness: "kimi-code".into()
        })]
    );
    t.keys("a");
    t.key(KeyCode::Char('j'), KeyModifiers::CONTROL);
    t.keys("b");
    t.key(KeyCode::Enter, KeyModifiers::SHIFT);
    t.keys("c");
    assert_eq!(t.app.composer.text(), "a\nb\nc");
    t.keys("/");
    t.app.composer.clear();
    t.keys("/deploy now");
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        t.app.take_actions(),
        [Action::Op(interpreter_protocol::Op::UserInput {
            items: vec![interpreter_protocol::InputItem::Skill {
                name: "deploy".into(),
                args: "now".into()
            }]
        })]
    );
    t.keys("/nope");
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    assert!(t.app.take_actions().is_empty());
    assert!(t.text().contains("unknown command /nope"), "{}", t.text());
}

#[test]
fn resumed_transcript_is_replayed() {
    use interpreter_protocol::TranscriptItem;
    let mut t = Term::new(80, 24);
    t.feed([Event::Transcript(vec![
        TranscriptItem::UserMessage {
            text: "say hi".into(),
            images: vec![],
            turn_id: None,
        },
        TranscriptItem::AgentMessage {
            text: "Hi there.".into(),
            phase: None,
        },
    ])]);
    let text = t.text();
    assert!(
        text.contains("› say hi") && text.contains("• Hi there."),
        "{text}"
    );
}

#[test]
fn a_pasted_image_path_is_a_chip_and_its_image_goes_with_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("screen shot.png");
    std::fs::write(&png, b"\x89PNG").unwrap();
    let png = std::fs::canonicalize(&png).unwrap();
    let mut t = Term::new(80, 24);
    // Dropped into a terminal: the path, its space escaped.
    t.app
        .on_paste(&png.display().to_string().replace(' ', "\\ "));
    assert_eq!(t.app.composer.text(), "[Image #1]");
    t.keys(" what is wrong here?");
    // A path to something that is not an image stays text.
    t.app.on_paste(" /etc/hostname");
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        t.app.take_actions(),
        [Action::Op(interpreter_protocol::Op::UserInput {
            items: vec![
                interpreter_protocol::InputItem::Text {
                    text: "[Image #1] what is wrong here? /etc/hostname".into()
                },
                interpreter_protocol::InputItem::LocalImage { path: png }
            ]
        })]
    );
}
