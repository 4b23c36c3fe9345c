//! Where a session's events go, and what the face that reads them can do.

use interpreter_protocol::Event;
use std::sync::Arc;

/// What a front end can do for its session besides approvals. Everything is off by
/// default: a session whose front end offers nothing sends what it always sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceAbilities {
    /// It can put questions to the user (`Event::QuestionAsked`).
    pub questions: bool,
    /// It can report the editor's diagnostics (`Event::DiagnosticsRequested`).
    pub diagnostics: bool,
    /// It keeps the session open between turns, so scheduled prompts can run (`CronCreate`).
    pub schedules: bool,
    /// The face's name, as Codex's `notify` payload gives its `client` ("" for `interpreter`).
    pub client: &'static str,
}

/// Where a session's events go. Sending never blocks and never fails the session: a front
/// end that went away just stops listening. Secrets are redacted on the way out
/// (`secrets::EventRedactor`), so no front end ever sees a key.
#[derive(Clone)]
pub struct EventSink(SinkKind, Arc<crate::secrets::EventRedactor>);

#[derive(Clone)]
enum SinkKind {
    Channel(tokio::sync::mpsc::UnboundedSender<Event>),
    /// Translated at once, in the sender's task, so order with other output is kept.
    Callback(Arc<dyn Fn(Event) + Send + Sync>),
}

impl EventSink {
    /// A sink and the receiving end of its channel.
    pub fn new() -> (EventSink, tokio::sync::mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (EventSink(SinkKind::Channel(tx), Default::default()), rx)
    }

    /// A sink that calls `f` for every event, in the session's task.
    pub fn from_fn(f: impl Fn(Event) + Send + Sync + 'static) -> EventSink {
        EventSink(SinkKind::Callback(Arc::new(f)), Default::default())
    }

    /// A sink that drops every event (one that is replaced before the session starts).
    pub fn discard() -> EventSink {
        EventSink::from_fn(|_| {})
    }

    pub(crate) fn send(&self, e: Event) {
        for e in self.1.redact(e) {
            match &self.0 {
                SinkKind::Channel(tx) => {
                    let _ = tx.send(e);
                }
                SinkKind::Callback(f) => f(e),
            }
        }
    }
}
