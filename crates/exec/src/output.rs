//! What exec prints: each event as JSON Lines (`--json`) or as the human transcript, and
//! fatal errors. `ModelWaiting` is a stderr line in both modes (no event of Codex's stream).

use interpreter_protocol::Event;

use crate::human::HumanWriter;
use crate::jsonl::JsonlWriter;

/// Exit status for bad configuration or a missing key.
pub(crate) const EXIT_CONFIG: i32 = 2;

pub(crate) enum Output {
    Json(JsonlWriter<std::io::Stdout>),
    Human(HumanWriter<std::io::Stderr>),
}

impl Output {
    pub(crate) fn event(&mut self, e: &Event) {
        match (self, e) {
            // Progress, not an event of Codex's stream: stderr only.
            (
                Output::Json(_),
                Event::ModelWaiting {
                    provider,
                    attempt,
                    elapsed_ms,
                },
            ) => eprintln!(
                "{}…",
                interpreter_face::terminal_text::sanitize(&interpreter_face::waiting_text(
                    provider,
                    *attempt,
                    *elapsed_ms
                ))
            ),
            (Output::Json(w), e) => w.event(e),
            (Output::Human(w), e) => w.event(e),
        }
    }
    pub(crate) fn last_message(&self) -> Option<String> {
        match self {
            Output::Json(w) => w.last_message.clone(),
            Output::Human(w) => w.last_message.clone(),
        }
    }
}

/// Prints a fatal error and returns the exit code. In JSON mode stdout carries events only,
/// so errors before a thread exists go to stderr in both modes.
pub(crate) fn fail(code: i32, message: &str) -> i32 {
    eprintln!("Error: {}", interpreter_core::secrets::redact(message));
    code
}
