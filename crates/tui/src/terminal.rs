//! Terminal set-up and restore. Raw mode and bracketed paste go on when the session starts
//! and come off however it ends: a normal exit, an error, a panic (the hook restores first),
//! SIGTERM, SIGHUP or SIGINT (the event loop ends and the guard restores). The alternate
//! screen is never used: history stays in the terminal's scrollback. A panic inside
//! [`catch_panic`] (drawing a frame) is the exception: the session goes on, so the terminal
//! stays as it is and the message is handed back instead of printed over the screen.

use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::{cursor, execute, terminal};
use std::cell::{Cell, RefCell};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The terminal is in our mode now.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Keyboard enhancement flags were pushed and must be popped.
static ENHANCED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread is inside [`catch_panic`].
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// What the panic hook saw inside [`catch_panic`]: where and why.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f`; a panic in it comes back as its message ("panicked at file:line: why"), with
/// the terminal left in our mode and nothing printed.
pub(crate) fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_panic_hook();
    let outer = CATCHING.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(outer));
    result.map_err(|payload| {
        CAUGHT.with(|m| m.borrow_mut().take()).unwrap_or_else(|| {
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into())
        })
    })
}

/// Restores the terminal when dropped.
pub(crate) struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Puts the terminal in raw mode with bracketed paste, and reports Shift+Enter where the
/// terminal can (the kitty keyboard protocol). Returns the guard and the cursor's row.
pub(crate) fn enter() -> std::io::Result<(Guard, u16)> {
    install_panic_hook();
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = Guard(());
    let mut out = std::io::stdout();
    execute!(out, EnableBracketedPaste, EnableFocusChange)?;
    if matches!(terminal::supports_keyboard_enhancement(), Ok(true)) {
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(true, Ordering::SeqCst);
    }
    let row = cursor::position().map(|(_, y)| y).unwrap_or(0);
    Ok((guard, row))
}

/// Undoes [`enter`]; safe to call more than once and from a panic hook.
pub(crate) fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = std::io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(out, DisableBracketedPaste, DisableFocusChange, cursor::Show);
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.try_with(Cell::get).unwrap_or(false) {
                let _ = CAUGHT.try_with(|m| *m.borrow_mut() = Some(info.to_string()));
                return;
            }
            let was_active = ACTIVE.load(Ordering::SeqCst);
            restore();
            if was_active {
                // The panic message starts on a fresh line, under the viewport.
                let _ = std::io::stdout().write_all(b"\r\n");
            }
            previous(info);
        }));
    });
}

/// Reads terminal events on a thread of its own and hands them to the event loop. It polls
/// with a timeout so a cursor-position query elsewhere is not starved, and ends when the
/// loop stops listening or the terminal goes away.
pub(crate) fn spawn_input() -> tokio::sync::mpsc::UnboundedReceiver<event::Event> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let spawned = std::thread::Builder::new()
        .name("tui-input".into())
        .spawn(move || {
            loop {
                if tx.is_closed() {
                    break;
                }
                match event::poll(Duration::from_millis(50)) {
                    Ok(true) => match event::read() {
                        Ok(e) => {
                            if tx.send(e).is_err() {
                                break;
                            }
                        }
                        Err(_) => break,
                    },
                    Ok(false) => {}
                    Err(_) => break,
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("could not start the terminal input thread: {e}");
    }
    rx
}

/// What to tell an unfocused user about `e`, if anything (`[tui] notifications`).
pub(crate) fn alert_for(
    e: &interpreter_protocol::Event,
    on: interpreter_core::config::TerminalNotifications,
) -> Option<String> {
    use interpreter_protocol::{Event, TurnEndReason};
    match e {
        Event::TurnEnded(t) if on.turn_complete && t.reason == TurnEndReason::Completed => {
            Some("Turn complete".into())
        }
        Event::ApprovalRequested(r) if on.approval => {
            Some(format!("Approval requested: {}", r.title))
        }
        Event::QuestionAsked(_) if on.approval => Some("A question is waiting".into()),
        _ => None,
    }
}

/// What tells the user: OSC 9 (a desktop notification) where the terminal is known to show
/// one, else BEL, which every terminal (and tmux) passes on.
pub(crate) fn alert_sequence(message: &str, osc9: bool) -> String {
    if !osc9 {
        return "\x07".into();
    }
    // The text cannot end the sequence early or carry controls of its own.
    let text: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    format!("\x1b]9;interpreter: {text}\x07")
}

/// Terminals that show OSC 9 as a notification.
fn shows_osc9() -> bool {
    let program = std::env::var("TERM_PROGRAM").unwrap_or_default();
    let term = std::env::var("TERM").unwrap_or_default();
    matches!(program.as_str(), "iTerm.app" | "WezTerm" | "ghostty")
        || term.contains("kitty")
        || term.contains("ghostty")
}

/// Writes the alert for `message` to the terminal.
pub(crate) fn notify(message: &str) {
    let mut out = std::io::stdout();
    let _ = out.write_all(alert_sequence(message, shows_osc9()).as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod alert_tests {
    use super::*;
    use interpreter_core::config::TerminalNotifications;
    use interpreter_protocol::{Event, TurnEndReason, TurnEnded};

    #[test]
    fn a_completed_turn_and_a_waiting_approval_alert_as_configured() {
        let ended = |reason| {
            Event::TurnEnded(TurnEnded {
                turn_id: "t".into(),
                reason,
            })
        };
        let all = TerminalNotifications {
            turn_complete: true,
            approval: true,
        };
        assert_eq!(
            alert_for(&ended(TurnEndReason::Completed), all).as_deref(),
            Some("Turn complete")
        );
        assert_eq!(alert_for(&ended(TurnEndReason::Cancelled), all), None);
        let off = TerminalNotifications {
            turn_complete: false,
            approval: true,
        };
        assert_eq!(alert_for(&ended(TurnEndReason::Completed), off), None);
    }

    #[test]
    fn osc9_carries_no_control_of_the_message_and_bel_is_the_fallback() {
        assert_eq!(
            alert_sequence("done\x1b]0;x\x07", true),
            "\x1b]9;interpreter: done ]0;x \x07"
        );
        assert_eq!(alert_sequence("done", false), "\x07");
    }
}
