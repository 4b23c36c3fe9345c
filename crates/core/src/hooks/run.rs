//! Running a session's hooks: the matching handlers of an event start together, each with
//! its JSON on stdin, confined as a command of the session is (same sandbox, no keys, its
//! process tree ended with it), for at most its timeout. Each run is shown to the front end
//! as it starts and ends (`HookStarted`, `HookCompleted`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use interpreter_protocol::{Event, HookRun, HookRunStatus, HookSource};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::output::{self, Ran, Verdict};
use super::{Dialect, Handler, HookEvent, Hooks};
use crate::sandbox::Confinement;
use crate::tools::events::EventSink;

/// Where the session is, for the hooks it runs now.
#[derive(Debug, Clone, Default)]
pub(crate) struct Place {
    /// The session's folder.
    pub(crate) cwd: PathBuf,
    /// How its commands are confined (None: they are not).
    pub(crate) confinement: Option<Confinement>,
    /// The turn running, if any.
    pub(crate) turn_id: Option<String>,
    /// Claude Code's name for the session's approval mode.
    pub(crate) permission_mode: &'static str,
}

/// A session's hooks and what running them needs.
pub(crate) struct HookRunner {
    hooks: Arc<Hooks>,
    session_id: String,
    transcript_path: Option<PathBuf>,
    model: String,
    max_processes: usize,
    events: EventSink,
    place: Mutex<Place>,
}

/// One input of one handler: what follows the call id in the run's id, and the event's own
/// fields.
pub(crate) type Payload = (String, Map<String, Value>);

impl HookRunner {
    pub(crate) fn new(
        hooks: Arc<Hooks>,
        session_id: String,
        transcript_path: Option<PathBuf>,
        model: String,
        max_processes: usize,
        events: EventSink,
    ) -> Self {
        HookRunner {
            hooks,
            session_id,
            transcript_path,
            model,
            max_processes,
            events,
            place: Mutex::new(Place::default()),
        }
    }

    /// The same hooks for another session (a subagent's).
    pub(crate) fn for_session(&self, session_id: String, events: EventSink) -> Self {
        let runner = HookRunner::new(
            self.hooks.clone(),
            session_id,
            None,
            self.model.clone(),
            self.max_processes,
            events,
        );
        runner.set_place(self.place());
        runner
    }

    /// What a background hook run needs, owned.
    fn detached(&self) -> HookRunner {
        let runner = HookRunner::new(
            self.hooks.clone(),
            self.session_id.clone(),
            self.transcript_path.clone(),
            self.model.clone(),
            self.max_processes,
            self.events.clone(),
        );
        runner.set_place(self.place());
        runner
    }

    /// Whether any hook runs for `event`.
    pub(crate) fn has(&self, event: HookEvent) -> bool {
        self.hooks.handlers.iter().any(|h| h.event == event)
    }

    /// Where hooks run from now on.
    pub(crate) fn set_place(&self, place: Place) {
        *self.place.lock().unwrap_or_else(|e| e.into_inner()) = place;
    }

    fn place(&self) -> Place {
        self.place.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Runs the handlers of `event` whose matcher takes one of `names` (by dialect), each
    /// once per payload `payloads` gives for its dialect; what they decided, together.
    pub(crate) async fn run(
        &self,
        event: HookEvent,
        names: impl Fn(Dialect) -> Vec<String>,
        payloads: impl Fn(Dialect) -> Vec<Payload>,
        cancel: &CancellationToken,
    ) -> Verdict {
        let handlers = self.hooks.matching(event, names);
        if handlers.is_empty() {
            return Verdict::default();
        }
        let place = self.place();
        let mut runs = Vec::new();
        for h in handlers {
            for (suffix, fields) in payloads(h.dialect) {
                if h.run_async {
                    // Reported when it ends; what it says decides nothing.
                    let me = self.detached();
                    let (h, place) = (h.clone(), place.clone());
                    tokio::spawn(async move {
                        let cancel = CancellationToken::new();
                        me.run_one(h, suffix, fields, &place, &cancel).await;
                    });
                    continue;
                }
                runs.push(self.run_one(h.clone(), suffix, fields, &place, cancel));
            }
        }
        let mut verdict = Verdict::default();
        for v in futures::future::join_all(runs).await {
            verdict.add(v);
        }
        verdict
    }

    /// Runs `event`'s hooks once each with the event's own fields `extra`; `matcher` is what
    /// its matchers read (None for the events that read none).
    pub(crate) async fn run_plain(
        &self,
        event: HookEvent,
        matcher: Option<&str>,
        extra: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Verdict {
        let inputs: Vec<String> = matcher.into_iter().map(str::to_string).collect();
        self.run(
            event,
            |_| inputs.clone(),
            |_| vec![(String::new(), extra.clone())],
            cancel,
        )
        .await
    }

    async fn run_one(
        &self,
        h: Arc<Handler>,
        suffix: String,
        fields: Map<String, Value>,
        place: &Place,
        cancel: &CancellationToken,
    ) -> Verdict {
        let mut input = json!({
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": place.cwd,
            "hook_event_name": h.event.name(),
            "model": self.model,
            "permission_mode": place.permission_mode,
        });
        if let (Some(turn), Some(obj)) = (&place.turn_id, input.as_object_mut()) {
            obj.insert("turn_id".into(), json!(turn));
        }
        if let Some(obj) = input.as_object_mut() {
            obj.extend(fields);
        }
        let id = match suffix.is_empty() {
            true => h.key.clone(),
            false => format!("{}:{suffix}", h.key),
        };
        let started_at = now_ms();
        let mut run = HookRun {
            id,
            event_name: h.event.name().to_string(),
            source: h.source,
            source_path: h.path.clone(),
            command: h.command.clone(),
            status: HookRunStatus::Running,
            status_message: h.status_message.clone(),
            started_at,
            completed_at: None,
            duration_ms: None,
            entries: Vec::new(),
        };
        self.events.send(Event::HookStarted {
            turn_id: place.turn_id.clone(),
            run: run.clone(),
        });
        let file_path = input["tool_input"]["file_path"]
            .as_str()
            .map(str::to_string);
        let ran = self
            .spawn(&h, input.to_string(), file_path, place, cancel)
            .await;
        let (verdict, status, entries) = output::parse(h.event, ran);
        let completed_at = now_ms();
        run.status = status;
        run.entries = entries;
        run.completed_at = Some(completed_at);
        run.duration_ms = Some(completed_at - started_at);
        self.events.send(Event::HookCompleted {
            turn_id: place.turn_id.clone(),
            run,
        });
        verdict
    }

    async fn spawn(
        &self,
        h: &Handler,
        input: String,
        file_path: Option<String>,
        place: &Place,
        cancel: &CancellationToken,
    ) -> Ran {
        let project = self
            .hooks
            .project_dir
            .clone()
            .unwrap_or_else(|| place.cwd.clone());
        let mut env = vec![
            ("CLAUDE_PROJECT_DIR", project.display().to_string()),
            ("CODEX_PROJECT_DIR", project.display().to_string()),
        ];
        // Older Claude Code hooks read the edited file from the environment.
        if let Some(path) = file_path {
            env.push(("CLAUDE_FILE_PATHS", path));
        }
        // A user's own hook may also write beside the file that defines it (its logs, as
        // Claude Code's documented hooks keep in ~/.claude); a project's may not.
        let confinement = match (place.confinement.clone(), h.source, h.path.parent()) {
            (Some(c), HookSource::User, Some(dir)) => Some(c.also_writable(dir)),
            (c, _, _) => c,
        };
        let ran = crate::tools::exec::run_program(
            &h.command,
            &place.cwd,
            input.into_bytes(),
            &env,
            h.timeout,
            cancel,
            confinement.as_ref(),
            self.max_processes,
        )
        .await;
        match ran {
            Err(e) => Ran::Failed(format!("the hook could not start: {e}")),
            Ok(r) if r.timed_out => Ran::Failed(format!(
                "the hook ran longer than its timeout of {} s and was stopped",
                h.timeout.as_secs()
            )),
            Ok(r) if r.cancelled => Ran::Failed("the turn was cancelled while the hook ran".into()),
            Ok(r) => Ran::Exited {
                code: r.exit_code,
                stdout: r.stdout,
                stderr: r.stderr,
            },
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis()
        .try_into()
        .unwrap_or(i64::MAX)
}
