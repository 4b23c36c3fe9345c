//! What the core asks of its front end besides approvals: questions for the user and the
//! editor's diagnostics. Both work like approvals: an event goes out
//! (`Event::QuestionAsked`, `Event::DiagnosticsRequested`), the answer comes back as an op
//! (`Op::Answer`, `Op::Diagnostics`) routed here by the session's task, and the wait ends on
//! the answer, the approval timeout or the turn's cancellation. A front end that did not say
//! it can do one of them is never sent its event.

use interpreter_protocol::{
    DiagnosticMap, DiagnosticsRequest, Event, Question, QuestionAnswer, QuestionRequest,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::events::{EventSink, FaceAbilities};

/// Longest the session waits for the editor's diagnostics (the editor bounds its own wait
/// for language servers to settle well below this).
const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(10);

/// Questions and diagnostics requests in flight, shared by a session and its subagents.
pub(crate) struct Asks {
    events: EventSink,
    abilities: FaceAbilities,
    /// How long a question (or an approval) waits for its answer.
    timeout: Duration,
    questions: Mutex<HashMap<String, oneshot::Sender<QuestionAnswer>>>,
    diagnostics: Mutex<HashMap<String, oneshot::Sender<Option<DiagnosticMap>>>>,
    /// Held while the user is asked anything: calls running together ask one at a time.
    asking: tokio::sync::Mutex<()>,
}

impl Asks {
    pub(crate) fn new(events: EventSink, abilities: FaceAbilities, timeout: Duration) -> Asks {
        Asks {
            events,
            abilities,
            timeout,
            questions: Mutex::default(),
            diagnostics: Mutex::default(),
            asking: tokio::sync::Mutex::default(),
        }
    }

    /// Whether anyone can be asked a question.
    pub(crate) fn can_ask(&self) -> bool {
        self.abilities.questions
    }

    /// Whether the front end offers the editor's diagnostics.
    pub(crate) fn offers_diagnostics(&self) -> bool {
        self.abilities.diagnostics
    }

    /// How long questions and approvals wait for an answer.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Waits for the user to be free: one approval or question is on screen at a time.
    pub(crate) async fn one_at_a_time(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.asking.lock().await
    }

    /// Asks the user; `Unavailable` at once when nobody can be asked.
    pub(crate) async fn ask(
        &self,
        call_id: &str,
        questions: Vec<Question>,
        cancel: &CancellationToken,
    ) -> QuestionAnswer {
        if !self.can_ask() {
            return QuestionAnswer::Unavailable;
        }
        let _asking = self.one_at_a_time().await;
        let (tx, rx) = oneshot::channel();
        lock(&self.questions).insert(call_id.to_string(), tx);
        self.events.send(Event::QuestionAsked(QuestionRequest {
            call_id: call_id.to_string(),
            questions,
        }));
        let answer = tokio::select! {
            a = rx => a.unwrap_or(QuestionAnswer::Cancelled),
            _ = tokio::time::sleep(self.timeout) => QuestionAnswer::TimedOut,
            _ = cancel.cancelled() => QuestionAnswer::Cancelled,
        };
        lock(&self.questions).remove(call_id);
        answer
    }

    /// The editor's diagnostics for `paths` (none: every file it has diagnostics for);
    /// `None` when it has none to give (not offered, failed, too slow, cancelled).
    pub(crate) async fn diagnostics(
        &self,
        paths: Vec<PathBuf>,
        cancel: &CancellationToken,
    ) -> Option<DiagnosticMap> {
        if !self.offers_diagnostics() {
            return None;
        }
        let request_id = uuid::Uuid::now_v7().to_string();
        let (tx, rx) = oneshot::channel();
        lock(&self.diagnostics).insert(request_id.clone(), tx);
        self.events
            .send(Event::DiagnosticsRequested(DiagnosticsRequest {
                request_id: request_id.clone(),
                paths,
            }));
        let got = tokio::select! {
            d = rx => d.ok().flatten(),
            _ = tokio::time::sleep(DIAGNOSTICS_TIMEOUT) => {
                tracing::debug!("the editor did not send diagnostics within {DIAGNOSTICS_TIMEOUT:?}");
                None
            }
            _ = cancel.cancelled() => None,
        };
        lock(&self.diagnostics).remove(&request_id);
        got
    }

    /// Routes an `Op::Answer`.
    pub(crate) fn answer(&self, call_id: &str, answer: QuestionAnswer) {
        match lock(&self.questions).remove(call_id) {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            None => tracing::debug!("answer for `{call_id}` came when no question was asked"),
        }
    }

    /// Routes an `Op::Diagnostics`.
    pub(crate) fn diagnosed(&self, request_id: &str, diagnostics: Option<DiagnosticMap>) {
        match lock(&self.diagnostics).remove(request_id) {
            Some(tx) => {
                let _ = tx.send(diagnostics);
            }
            None => tracing::debug!("diagnostics for `{request_id}` came after the wait ended"),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
