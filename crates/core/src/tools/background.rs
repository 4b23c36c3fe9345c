//! Background tasks: commands that go on running while the session does (`Bash` with
//! `run_in_background`). A task is confined and approved like any command and runs in a
//! process tree of its own, so nothing it starts outlives it; the session stops every task
//! when it ends (the registry's drop), and the agent's exit kills them (the keeper).
//!
//! Output goes to a 0600 file under `<home>/tasks/<session>/`, bounded in size, and the last
//! part stays in memory for `TaskOutput`. When a task ends, the next model request carries a
//! notification (see [`BackgroundTasks::take_notifications`]), so the model never polls. The
//! registry is written next to the outputs, so a resumed session still knows its tasks (those
//! that were running are reported stopped: the agent that ran them exited).

use interpreter_protocol::{BackgroundStatus, BackgroundTask, Event};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use super::ToolContext;
use super::events::EventSink;
use super::exec::ExecResult;
use super::table::ToolError;

/// Tasks running at once per session; one more is refused with a clear message.
pub(crate) const MAX_RUNNING: usize = 16;
/// Tasks a session remembers; the oldest ended ones are forgotten past it.
const MAX_KEPT: usize = 100;
/// Bytes of a task's output kept in its file; past it the file says how much was dropped.
pub(crate) const MAX_OUTPUT_BYTES: u64 = 16 * 1024 * 1024;
/// The last bytes of a task's output kept in memory.
const TAIL_BYTES: usize = 64 * 1024;
/// Output streamed to the front end per task; the file has the rest.
const MAX_STREAMED_BYTES: usize = 1024 * 1024;

/// One task as the registry keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TaskRecord {
    pub(crate) id: String,
    pub(crate) call_id: String,
    pub(crate) command: String,
    pub(crate) description: String,
    pub(crate) output_path: PathBuf,
    pub(crate) status: BackgroundStatus,
    pub(crate) exit_code: Option<i32>,
    /// Why it ended, when not by its own exit: timed out, stopped, lost with its agent.
    pub(crate) note: Option<String>,
    /// Bytes it printed (all of them, kept or not).
    pub(crate) output_bytes: u64,
    /// The model has been told that it ended (a notification, or `TaskOutput` saw it).
    pub(crate) notified: bool,
    #[serde(skip)]
    tail: String,
    #[serde(skip)]
    stop: Option<CancellationToken>,
    /// Its stdin, for an interactive session (`exec_command`, `write_stdin`).
    #[serde(skip)]
    input: Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>,
    /// Output bytes the model has read already (`write_stdin` returns what came since).
    #[serde(skip)]
    read_offset: u64,
}

impl TaskRecord {
    pub(crate) fn running(&self) -> bool {
        self.status == BackgroundStatus::Running
    }

    /// The last `max_bytes` of its output: from memory while this agent ran it, else from
    /// its file.
    pub(crate) fn tail(&self, max_bytes: usize) -> String {
        let text = match self.tail.is_empty() {
            true => read_tail(&self.output_path, max_bytes).unwrap_or_default(),
            false => self.tail.clone(),
        };
        text[text.ceil_char_boundary(text.len().saturating_sub(max_bytes))..].to_string()
    }

    /// How it ended, in a few words: "completed (exit code 0)", "failed with exit code 2",
    /// "was stopped".
    pub(crate) fn outcome(&self) -> String {
        match (self.status, self.exit_code, &self.note) {
            (BackgroundStatus::Running, ..) => "is still running".into(),
            (_, _, Some(note)) => note.clone(),
            (BackgroundStatus::Completed, ..) => "completed (exit code 0)".into(),
            (BackgroundStatus::Failed, Some(code), _) => format!("failed with exit code {code}"),
            (BackgroundStatus::Failed, None, _) => "failed".into(),
            (BackgroundStatus::Stopped, ..) => "was stopped".into(),
        }
    }

    fn view(&self) -> BackgroundTask {
        BackgroundTask {
            task_id: self.id.clone(),
            call_id: self.call_id.clone(),
            command: self.command.clone(),
            description: self.description.clone(),
            output_path: self.output_path.clone(),
            status: self.status,
            exit_code: self.exit_code,
        }
    }
}

/// A session's background tasks.
pub(crate) struct BackgroundTasks {
    dir: PathBuf,
    /// A session that keeps nothing puts its outputs in a folder that goes with it.
    _temp: Option<tempfile::TempDir>,
    inner: Mutex<Inner>,
    changed: tokio::sync::Notify,
    /// Cancelled when the session ends: every task stops.
    ended: CancellationToken,
    events: EventSink,
}

#[derive(Default)]
struct Inner {
    tasks: BTreeMap<String, TaskRecord>,
    next: u64,
}

impl Drop for BackgroundTasks {
    fn drop(&mut self) {
        self.ended.cancel();
    }
}

impl BackgroundTasks {
    /// The tasks of session `session_id`, kept under `<home>/tasks/<session_id>/` when the
    /// session persists (and read back from there: a resume), else in a temporary folder.
    pub(crate) fn new(home: &Path, session_id: &str, persist: bool, events: EventSink) -> Self {
        let (dir, temp) = match persist {
            true => (home.join("tasks").join(session_id), None),
            false => match tempfile::Builder::new()
                .prefix("interpreter-tasks-")
                .tempdir()
            {
                Ok(t) => (t.path().to_path_buf(), Some(t)),
                Err(_) => (std::env::temp_dir().join("interpreter-tasks"), None),
            },
        };
        let mut inner = Inner::default();
        if persist && let Some(tasks) = load(&dir) {
            inner.next = tasks
                .keys()
                .map(|id| task_number(id))
                .filter(|n| *n != u64::MAX)
                .max()
                .unwrap_or(0);
            inner.tasks = tasks;
        }
        BackgroundTasks {
            dir,
            _temp: temp,
            inner: Mutex::new(inner),
            changed: tokio::sync::Notify::new(),
            ended: CancellationToken::new(),
            events,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of task `id`.
    pub(crate) fn get(&self, id: &str) -> Option<TaskRecord> {
        self.lock().tasks.get(id).cloned()
    }

    /// Every task, oldest first.
    pub(crate) fn list(&self) -> Vec<TaskRecord> {
        let mut v: Vec<_> = self.lock().tasks.values().cloned().collect();
        v.sort_by_key(|t| task_number(&t.id));
        v
    }

    /// The ids of the known tasks, for an error about an unknown one.
    pub(crate) fn unknown(&self, id: &str) -> String {
        let ids: Vec<String> = self.list().into_iter().map(|t| t.id).collect();
        match ids.is_empty() {
            true => format!("No task with id `{id}`: no background task was started."),
            false => format!("No task with id `{id}`. Known tasks: {}.", ids.join(", ")),
        }
    }

    /// Waits until task `id` ends or `timeout` passes; returns it as it then is.
    pub(crate) async fn wait(&self, id: &str, timeout: Duration) -> Option<TaskRecord> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            let task = self.get(id)?;
            if !task.running() {
                return Some(task);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self.get(id);
            }
        }
    }

    /// Marks that the model saw task `id` end, so no notification repeats it.
    pub(crate) fn mark_notified(&self, id: &str) {
        if let Some(t) = self.lock().tasks.get_mut(id)
            && !t.running()
        {
            t.notified = true;
        }
    }

    /// Stops task `id`; an error when there is none or it is not running.
    pub(crate) fn stop(&self, id: &str) -> Result<TaskRecord, String> {
        let mut inner = self.lock();
        let Some(task) = inner.tasks.get_mut(id) else {
            drop(inner);
            return Err(self.unknown(id));
        };
        if !task.running() {
            return Err(format!(
                "Task `{id}` is not running: it {}.",
                task.outcome()
            ));
        }
        if let Some(stop) = &task.stop {
            stop.cancel();
        }
        // The model asked for it: it needs no notification.
        task.notified = true;
        Ok(task.clone())
    }

    /// The tasks that ended since the model was last told, marked told.
    pub(crate) fn take_notifications(&self) -> Vec<TaskRecord> {
        let mut inner = self.lock();
        let mut ended: Vec<TaskRecord> = inner
            .tasks
            .values_mut()
            .filter(|t| !t.running() && !t.notified)
            .map(|t| {
                t.notified = true;
                t.clone()
            })
            .collect();
        ended.sort_by_key(|t| task_number(&t.id));
        ended
    }

    /// The tasks still running.
    pub(crate) fn running(&self) -> Vec<TaskRecord> {
        self.list()
            .into_iter()
            .filter(TaskRecord::running)
            .collect()
    }

    fn save(&self, inner: &Inner) {
        if self._temp.is_some() {
            return;
        }
        let Ok(json) = serde_json::to_vec_pretty(&inner.tasks) else {
            return;
        };
        let path = self.dir.join("tasks.json");
        let tmp = self.dir.join("tasks.json.tmp");
        let wrote = write_private(&tmp, &json).and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = wrote {
            tracing::warn!(
                "could not record the background tasks in {}: {e}",
                path.display()
            );
        }
    }

    /// Sends `bytes` to task `id`'s stdin.
    pub(crate) fn send_input(&self, id: &str, bytes: &[u8]) -> Result<(), String> {
        let inner = self.lock();
        let Some(t) = inner.tasks.get(id) else {
            drop(inner);
            return Err(self.unknown(id));
        };
        if !t.running() {
            return Err(format!("Process {id} is not running: it {}.", t.outcome()));
        }
        match &t.input {
            Some(tx) if tx.send(bytes.to_vec()).is_ok() => Ok(()),
            _ => Err(format!("Process {id} takes no input.")),
        }
    }

    /// Task `id` as it is, and its output since the last call (the bytes that are no longer
    /// kept in memory are counted, not shown).
    pub(crate) fn read_new(&self, id: &str) -> Option<(TaskRecord, String)> {
        let mut inner = self.lock();
        let t = inner.tasks.get_mut(id)?;
        let new = (t.output_bytes - t.read_offset.min(t.output_bytes)) as usize;
        t.read_offset = t.output_bytes;
        let shown = if new > t.tail.len() {
            format!(
                "[{} bytes of output are not shown; the file has them]\n{}",
                new - t.tail.len(),
                t.tail
            )
        } else {
            t.tail[t.tail.ceil_char_boundary(t.tail.len() - new)..].to_string()
        };
        Some((t.clone(), shown))
    }

    /// Registers a task and makes its output file; an error when too many run. `input`
    /// keeps its stdin open; a `quiet` task's end is not told in a notification (its caller
    /// polls it, as `write_stdin` does).
    fn register(
        &self,
        call_id: &str,
        command: &str,
        description: &str,
        input: Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>,
        quiet: bool,
    ) -> Result<(TaskRecord, std::fs::File, CancellationToken), String> {
        let mut inner = self.lock();
        let running = inner.tasks.values().filter(|t| t.running()).count();
        if running >= MAX_RUNNING {
            return Err(format!(
                "{running} background tasks are running, the most a session may have. Stop one with TaskStop, or wait for one to finish."
            ));
        }
        create_private_dir(&self.dir)
            .map_err(|e| format!("could not make {}: {e}", self.dir.display()))?;
        inner.next += 1;
        let id = format!("b{}", inner.next);
        let output_path = self.dir.join(format!("{id}.output"));
        let file = open_private_new(&output_path)
            .map_err(|e| format!("could not make {}: {e}", output_path.display()))?;
        let stop = self.ended.child_token();
        let record = TaskRecord {
            id: id.clone(),
            call_id: call_id.to_string(),
            command: command.to_string(),
            description: description.to_string(),
            output_path,
            status: BackgroundStatus::Running,
            exit_code: None,
            note: None,
            output_bytes: 0,
            notified: quiet,
            tail: String::new(),
            stop: Some(stop.clone()),
            input,
            read_offset: 0,
        };
        inner.tasks.insert(id, record.clone());
        forget_oldest(&mut inner.tasks);
        self.save(&inner);
        drop(inner);
        self.events.send(Event::BackgroundTask(record.view()));
        Ok((record, file, stop))
    }

    fn output(&self, id: &str, chunk: &str, file: &mut Option<std::fs::File>) {
        let mut inner = self.lock();
        let Some(t) = inner.tasks.get_mut(id) else {
            return;
        };
        let before = t.output_bytes;
        t.output_bytes += chunk.len() as u64;
        if let Some(f) = file {
            let room = MAX_OUTPUT_BYTES.saturating_sub(before) as usize;
            let kept = &chunk[..chunk.floor_char_boundary(room)];
            let mut wrote = f.write_all(kept.as_bytes());
            if kept.len() < chunk.len() {
                wrote = wrote.and_then(|()| {
                    write!(
                        f,
                        "\n[output past {} MiB is not kept; the task goes on]\n",
                        MAX_OUTPUT_BYTES >> 20
                    )
                });
                *file = None;
            }
            if let Err(e) = wrote {
                tracing::warn!("background task {id}: writing its output: {e}");
                *file = None;
            }
        }
        t.tail.push_str(chunk);
        if t.tail.len() > TAIL_BYTES * 2 {
            let cut = t.tail.ceil_char_boundary(t.tail.len() - TAIL_BYTES);
            t.tail.drain(..cut);
        }
        let stream = before < MAX_STREAMED_BYTES as u64;
        drop(inner);
        if stream {
            self.events.send(Event::BackgroundTaskOutput {
                task_id: id.to_string(),
                chunk: chunk.to_string(),
            });
        }
    }

    fn finish(&self, id: &str, ended: std::io::Result<ExecResult>, stopped_by: &str) {
        let mut inner = self.lock();
        let Some(t) = inner.tasks.get_mut(id) else {
            return;
        };
        t.stop = None;
        t.input = None;
        match ended {
            Ok(r) if r.cancelled => {
                t.status = BackgroundStatus::Stopped;
                t.note = Some(stopped_by.to_string());
            }
            Ok(r) if r.timed_out => {
                t.status = BackgroundStatus::Failed;
                t.note = Some(format!(
                    "was stopped after its timeout of {} s",
                    r.duration.as_secs()
                ));
            }
            Ok(r) => {
                t.exit_code = r.exit_code;
                t.status = match r.exit_code {
                    Some(0) => BackgroundStatus::Completed,
                    _ => BackgroundStatus::Failed,
                };
            }
            Err(e) => {
                t.status = BackgroundStatus::Failed;
                t.note = Some(format!("could not run: {e}"));
            }
        }
        let view = t.view();
        self.save(&inner);
        drop(inner);
        self.events.send(Event::BackgroundTask(view));
        self.changed.notify_waiters();
    }
}

/// How a background command starts.
pub(crate) struct Start<'a> {
    /// The tool that starts it (for the approval).
    pub(crate) tool: &'a str,
    pub(crate) command: &'a str,
    pub(crate) description: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) timeout: Duration,
    /// Keep its stdin open for `write_stdin`.
    pub(crate) interactive: bool,
    /// With `interactive`: a pseudo-terminal, not pipes (where there is one).
    pub(crate) tty: bool,
    /// No notification when it ends: its caller polls it.
    pub(crate) quiet: bool,
}

impl ToolContext {
    /// Asks the policy about `command` as tool `tool`, then starts it in the background in
    /// `cwd`, killed after `timeout`. Returns at once with the task.
    pub(crate) async fn start_background(
        &self,
        tool: &str,
        command: &str,
        description: &str,
        cwd: &Path,
        timeout: Duration,
    ) -> Result<TaskRecord, ToolError> {
        self.start_task(Start {
            tool,
            command,
            description,
            cwd,
            timeout,
            interactive: false,
            tty: false,
            quiet: false,
        })
        .await
    }

    /// Asks the policy, then starts `s.command` in the background as `s` says.
    pub(crate) async fn start_task(&self, s: Start<'_>) -> Result<TaskRecord, ToolError> {
        self.authorize(
            self.command_intent(s.command),
            s.tool,
            interpreter_protocol::ToolKind::Execute,
            s.command,
            vec![],
        )
        .await?;
        self.spawn_task(s)
    }

    /// Starts `s.command` as [`Self::start_task`] does, without asking the policy: for a
    /// helper the agent itself runs (terminus-2's tmux server), whose every input is asked
    /// about on its own. It is confined all the same, and stops when the session ends.
    pub(crate) fn spawn_task(&self, s: Start<'_>) -> Result<TaskRecord, ToolError> {
        let (input_tx, input_rx) = match s.interactive {
            true => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            }
            false => (None, None),
        };
        let (record, file, stop) = self
            .tasks
            .register(&self.call_id, s.command, s.description, input_tx, s.quiet)
            .map_err(ToolError::message)?;
        let runner = self.runner.clone();
        let confinement = runner
            .can_confine()
            .then(|| self.policy.confinement(self.workspace.roots()))
            .flatten();
        let tasks: Weak<BackgroundTasks> = Arc::downgrade(&self.tasks);
        let (id, command, cwd, call_id, timeout, tty) = (
            record.id.clone(),
            s.command.to_string(),
            s.cwd.to_path_buf(),
            self.call_id.clone(),
            s.timeout,
            s.tty,
        );
        tokio::spawn(async move {
            let mut file = Some(file);
            let sink = tasks.clone();
            let task_id = id.clone();
            let on_chunk = Box::new(move |chunk: &str| {
                if let Some(tasks) = sink.upgrade() {
                    tasks.output(&task_id, chunk, &mut file);
                }
            });
            let ended = match (input_rx, &confinement) {
                (Some(bytes), c) => {
                    let input = crate::tools::exec::Input { bytes, tty };
                    runner
                        .run_with_input(c.as_ref(), &command, &cwd, timeout, &stop, input, on_chunk)
                        .await
                }
                (None, Some(c)) => {
                    runner
                        .run_confined(c, &command, &cwd, timeout, &stop, on_chunk)
                        .await
                }
                (None, None) => {
                    runner
                        .run(&command, &cwd, timeout, &stop, &call_id, on_chunk)
                        .await
                }
            };
            if let Some(tasks) = tasks.upgrade() {
                let why = match tasks.ended.is_cancelled() {
                    true => "was stopped when its session ended",
                    false => "was stopped",
                };
                tasks.finish(&id, ended, why);
            }
        });
        Ok(record)
    }
}

/// The number in a task id (`b12` → 12), for ordering.
fn task_number(id: &str) -> u64 {
    id.trim_start_matches('b').parse().unwrap_or(u64::MAX)
}

/// Past [`MAX_KEPT`], the oldest ended tasks are forgotten (their files stay).
fn forget_oldest(tasks: &mut BTreeMap<String, TaskRecord>) {
    while tasks.len() > MAX_KEPT {
        let Some(oldest) = tasks
            .values()
            .filter(|t| !t.running())
            .min_by_key(|t| task_number(&t.id))
            .map(|t| t.id.clone())
        else {
            return;
        };
        tasks.remove(&oldest);
    }
}

/// The tasks a previous run of this session recorded; those it left running died with it.
fn load(dir: &Path) -> Option<BTreeMap<String, TaskRecord>> {
    let text = std::fs::read(dir.join("tasks.json")).ok()?;
    let mut tasks: BTreeMap<String, TaskRecord> = serde_json::from_slice(&text)
        .inspect_err(|e| tracing::warn!("ignoring {}: {e}", dir.join("tasks.json").display()))
        .ok()?;
    for t in tasks.values_mut().filter(|t| t.running()) {
        t.status = BackgroundStatus::Stopped;
        t.note = Some("was stopped when the agent that ran it exited".into());
        // The model of this run may not know: tell it.
        t.notified = false;
    }
    Some(tasks)
}

fn read_tail(path: &Path, max_bytes: usize) -> std::io::Result<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(max_bytes as u64)))?;
    let mut bytes = Vec::new();
    f.take(max_bytes as u64).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

fn open_private_new(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    crate::platform::create_mode(&mut o, 0o600).open(path)
}

pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    open_private_new(path)?.write_all(bytes)
}

#[cfg(test)]
#[path = "background_tests.rs"]
mod tests;
