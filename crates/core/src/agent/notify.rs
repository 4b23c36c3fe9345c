//! Codex's `notify = ["program", "arg", …]`: when a turn of the session the user drives
//! completes, the program runs with the turn as JSON for its last argument, in Codex's shape
//! (`{"type": "agent-turn-complete", "thread-id", "turn-id", "cwd", "client",
//! "input-messages", "last-assistant-message"}`). It runs in the background (the turn never
//! waits for it), confined like a command of the session and without the keys in its
//! environment, and is stopped after [`NOTIFY_TIMEOUT`]; a failure is a warning.

use serde_json::json;
use std::time::Duration;

use super::session::Session;
use crate::model::{HistoryItem, Part};
use crate::tools::CommandRunner;

/// How long a notify program may run.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a closing session waits for notify programs still running (exec ends right
/// after its turn); past it they are stopped.
const NOTIFY_GRACE: Duration = Duration::from_secs(5);

/// Codex's payload for a completed turn.
pub(super) fn payload(
    thread_id: &str,
    turn_id: &str,
    cwd: &std::path::Path,
    client: &str,
    input_messages: &[String],
    last_assistant_message: Option<&str>,
) -> String {
    json!({
        "type": "agent-turn-complete",
        "thread-id": thread_id,
        "turn-id": turn_id,
        "cwd": cwd,
        "client": client,
        "input-messages": input_messages,
        "last-assistant-message": last_assistant_message,
    })
    .to_string()
}

impl Session {
    /// Runs the configured notify program for the turn that just completed.
    pub(super) fn notify_turn_complete(&mut self, turn_id: &str, history_start: usize) {
        if self.config.notify.is_empty() || self.parent_id.is_some() {
            return;
        }
        let turn = self.state.history.get(history_start..).unwrap_or_default();
        let input: Vec<String> = turn
            .iter()
            .filter_map(|item| match item {
                HistoryItem::User {
                    text,
                    synthetic: false,
                    ..
                } => Some(text.clone()),
                _ => None,
            })
            .collect();
        let last = turn.iter().rev().find_map(|item| match item {
            HistoryItem::Assistant(reply) => {
                let text: Vec<&str> = reply
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Message(m) => Some(m.text()),
                        Part::Call(_) => None,
                    })
                    .collect();
                let text = text.join("\n");
                (!text.trim().is_empty()).then_some(text)
            }
            _ => None,
        });
        let cwd = self.services.workspace.cwd().to_path_buf();
        let client = match self.services.env.face.client {
            "" => "interpreter",
            name => name,
        };
        let json = payload(&self.id, turn_id, &cwd, client, &input, last.as_deref());
        let mut argv = self.config.notify.clone();
        argv.push(json);
        let Ok(command) = shlex::try_join(argv.iter().map(String::as_str)) else {
            self.warn("notify: the program or its arguments cannot be passed to a shell");
            return;
        };
        let confinement = self
            .services
            .policy
            .confinement(self.services.workspace.roots());
        let runner = crate::tools::LocalRunner {
            max_processes: self.config.max_processes,
        };
        let events = self.services.events.clone();
        self.state.notifying.retain(|h| !h.is_finished());
        let task = tokio::spawn(async move {
            let cancel = tokio_util::sync::CancellationToken::new();
            let ran = match &confinement {
                Some(c) => {
                    runner
                        .run_confined(c, &command, &cwd, NOTIFY_TIMEOUT, &cancel, Box::new(|_| {}))
                        .await
                }
                None => {
                    runner
                        .run(
                            &command,
                            &cwd,
                            NOTIFY_TIMEOUT,
                            &cancel,
                            "notify",
                            Box::new(|_| {}),
                        )
                        .await
                }
            };
            let failed = match ran {
                Ok(r) if r.succeeded() => return,
                Ok(r) => format!(
                    "exited with {:?}: {}",
                    r.exit_code,
                    r.output.trim().chars().take(500).collect::<String>()
                ),
                Err(e) => e.to_string(),
            };
            events.send(interpreter_protocol::Event::Warning {
                message: format!("notify program failed: {failed}"),
            });
        });
        self.state.notifying.push(task);
    }

    /// Closes the session: its `SessionEnd` hooks run, then the log (and its writer lock)
    /// goes, so whoever waits may reopen the session at once; then the notify programs still
    /// running get their moment.
    pub(super) async fn close(&mut self) {
        self.end_hooks().await;
        self.state.log = None;
        self.finish_notifying().await;
    }

    /// Lets the notify programs still running finish, for a moment, before the session
    /// closes; the rest are stopped.
    async fn finish_notifying(&mut self) {
        let deadline = tokio::time::Instant::now() + NOTIFY_GRACE;
        for mut task in std::mem::take(&mut self.state.notifying) {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                // Dropping the run stops the program's process group.
                task.abort();
                tracing::warn!("a notify program was still running when the session closed");
            }
        }
    }

    fn warn(&self, message: &str) {
        self.services
            .events
            .send(interpreter_protocol::Event::Warning {
                message: message.to_string(),
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_is_codexs() {
        let p = payload(
            "t1",
            "u1",
            std::path::Path::new("/w"),
            "interpreter-exec",
            &["fix it".into()],
            Some("Fixed."),
        );
        assert_eq!(
            p,
            r#"{"type":"agent-turn-complete","thread-id":"t1","turn-id":"u1","cwd":"/w","client":"interpreter-exec","input-messages":["fix it"],"last-assistant-message":"Fixed."}"#
        );
    }
}
