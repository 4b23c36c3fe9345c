//! The terminal session's state, kept from the session's events and the user's keys. It does
//! no I/O: it turns events into transcript cells and keys into [`Action`]s, which the event
//! loop (`mod.rs`) carries out.

use interpreter_protocol::{
    ApprovalPolicy, Event, HookRunStatus, Op, TranscriptItem, TurnEndReason,
};
use std::collections::VecDeque;
use std::time::Instant;

use super::cells::{Cell, ToolCell};
use super::composer::Composer;
use super::ctx::clean;
use super::popup::Popup;
use super::status::mode_of;
use super::stream::AgentStream;
use super::theme::Theme;
use interpreter_face::view::SessionView;

/// Bytes of a running command's output kept for its live cell.
const LIVE_OUTPUT_BYTES: usize = 8 * 1024;

/// What the event loop must do for the app.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Hand the session an op.
    Op(Op),
    /// Leave.
    Quit,
    /// Close this session and open a new one.
    NewSession,
    /// Continue a stored session of this folder; None opens the picker.
    Resume(Option<String>),
    /// Start indexing the workspace's files for the `@` finder.
    IndexFiles,
    /// Put the clipboard's image in the composer as a chip (Ctrl+V, Alt+V).
    PasteClipboardImage,
    /// Write the session to a file (`/export [file]`; empty: `<session-id>.md`).
    Export(String),
    /// `/review`: gather the target's diff, then send the review prompt, showing `shown`.
    Review {
        shown: String,
        target: interpreter_face::review::Target,
        focus: String,
    },
}

/// A turn in progress.
#[derive(Debug, Clone)]
pub(crate) struct Turn {
    pub started: Instant,
    /// "waiting for kimi: 15 s", while the model is slow.
    pub waiting: Option<String>,
}

/// Reasoning as it streams.
#[derive(Debug, Clone)]
pub(crate) struct Thinking {
    pub message_id: String,
    pub text: String,
    pub started: Instant,
}

/// Everything the terminal session shows.
pub(crate) struct App {
    pub theme: Theme,
    /// The session, once it is configured.
    pub view: Option<SessionView>,
    /// The configured approval policy the modes are built on.
    pub base_approval: ApprovalPolicy,
    /// Cells finished and not yet written to the terminal's scrollback.
    pub history: Vec<Cell>,
    pub stream: Option<AgentStream>,
    pub thinking: Option<Thinking>,
    /// Tool calls running now, in the order they began.
    pub running: Vec<ToolCell>,
    running_since: Vec<(String, Instant)>,
    pub approvals: VecDeque<super::approval::Prompt>,
    /// Questions the agent asks, answered one request at a time.
    pub questions: VecDeque<super::question::Form>,
    pub composer: Composer,
    pub popup: Option<Popup>,
    /// The popup was closed with Esc for this text; it stays closed until the text changes.
    pub popup_dismissed: Option<String>,
    pub turn: Option<Turn>,
    /// Messages typed while a turn ran, sent when it ends.
    pub queued: VecDeque<String>,
    /// Set by a first Ctrl+C on an empty prompt: a second one quits.
    pub quit_armed: Option<Instant>,
    /// The workspace's files, once indexed.
    pub files: Option<Vec<String>>,
    files_requested: bool,
    /// The stored sessions, while the picker is open.
    pub picker: Option<Vec<super::popup::SessionEntry>>,
    /// The rewind picker, while it is open.
    pub rewind: Option<super::popup::Rewind>,
    /// Set by an Esc on an empty prompt: a second one opens the rewind picker.
    pub esc_armed: Option<Instant>,
    actions: Vec<Action>,
    /// The session has been shown its banner.
    bannered: bool,
    /// The session being opened is a resumed one (its banner says so).
    pub resumed: bool,
    /// The settings as last shown, to say what a change changed.
    last_settings: Option<interpreter_protocol::SessionSettings>,
    /// The response whose reasoning is in the transcript already.
    reasoning_shown: Option<String>,
}

impl App {
    /// An app with no session yet.
    pub(crate) fn new(theme: Theme, base_approval: ApprovalPolicy) -> App {
        App {
            theme,
            view: None,
            base_approval,
            history: Vec::new(),
            stream: None,
            thinking: None,
            running: Vec::new(),
            running_since: Vec::new(),
            approvals: VecDeque::new(),
            questions: VecDeque::new(),
            composer: Composer::default(),
            popup: None,
            popup_dismissed: None,
            turn: None,
            queued: VecDeque::new(),
            quit_armed: None,
            files: None,
            files_requested: false,
            picker: None,
            rewind: None,
            esc_armed: None,
            actions: Vec::new(),
            bannered: false,
            resumed: false,
            last_settings: None,
            reasoning_shown: None,
        }
    }

    /// The actions asked for since the last call.
    pub(crate) fn take_actions(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.actions)
    }

    pub(crate) fn act(&mut self, a: Action) {
        self.actions.push(a);
    }

    /// Queues `op` for the session.
    pub(crate) fn op(&mut self, op: Op) {
        self.actions.push(Action::Op(op));
    }

    /// Asks for the file index the first time the `@` finder opens.
    pub(crate) fn want_files(&mut self) {
        if !self.files_requested {
            self.files_requested = true;
            self.actions.push(Action::IndexFiles);
        }
    }

    /// A new session replaces the old one (`/new`, `/resume`).
    pub(crate) fn reset_session(&mut self, resumed: bool) {
        self.finish_output();
        self.running.clear();
        self.approvals.clear();
        self.questions.clear();
        self.turn = None;
        self.view = None;
        self.bannered = false;
        self.resumed = resumed;
    }

    /// Adds a finished cell to the transcript.
    pub(crate) fn push(&mut self, cell: Cell) {
        self.history.push(cell);
    }

    /// Says something in the transcript.
    pub(crate) fn info(&mut self, text: impl Into<String>) {
        self.push(Cell::Info(vec![text.into()]));
    }

    fn goal_updated(&mut self, goal: &interpreter_protocol::Goal) {
        self.push(Cell::Info(vec![format!(
            "Goal {}: {} ({} tokens used)",
            interpreter_face::slash::goal_status_name(goal.status),
            goal.objective,
            goal.tokens_used
        )]));
    }

    /// A scheduled prompt is due: the turn that follows runs it.
    fn scheduled_prompt(&mut self, job_id: &str, cron: &str, prompt: &str) {
        let line = format!(
            "Scheduled prompt {job_id} (`{}`): {}",
            super::ctx::clean(cron),
            super::ctx::clean(prompt)
        );
        self.info(line);
    }

    /// A background task started or ended: one line in the transcript.
    fn background_task(&mut self, t: &interpreter_protocol::BackgroundTask) {
        use interpreter_protocol::BackgroundStatus as S;
        let what = match t.status {
            S::Running => "started".to_string(),
            S::Completed => "completed".to_string(),
            S::Failed => match t.exit_code {
                Some(code) => format!("failed (exit code {code})"),
                None => "failed".to_string(),
            },
            S::Stopped => "was stopped".to_string(),
        };
        let line = format!(
            "Background task {} {what}: {}",
            t.task_id,
            super::ctx::clean(&t.command)
        );
        self.info(line);
    }

    /// A hook's run, when it has something to say: a warning when it blocked, failed or
    /// stopped the turn.
    fn hook(&mut self, run: &interpreter_protocol::HookRun) {
        let line = match run.status {
            HookRunStatus::Running => interpreter_face::hooks::started_line(run),
            _ => interpreter_face::hooks::completed_line(run),
        };
        let Some(line) = line else { return };
        match run.status {
            HookRunStatus::Blocked | HookRunStatus::Failed | HookRunStatus::Stopped => {
                self.push(Cell::Warning(line));
            }
            _ => self.info(line),
        }
    }

    /// Takes in one event of the session.
    pub(crate) fn on_event(&mut self, e: Event) {
        if let Some(v) = self.view.as_mut() {
            v.observe(&e);
        }
        match e {
            Event::SessionConfigured(c) => self.configured(c),
            Event::SettingsChanged(s) => self.settings_changed(s),
            Event::TurnStarted { .. } => {
                self.turn = Some(Turn {
                    started: Instant::now(),
                    waiting: None,
                });
            }
            Event::AgentMessageDelta { message_id, delta } => {
                self.finish_thinking();
                self.delta(&message_id, &delta);
            }
            Event::AgentMessage {
                message_id, text, ..
            } => self.message_done(&message_id, &text),
            Event::ReasoningDelta { message_id, delta } => {
                self.clear_waiting();
                let t = self.thinking.get_or_insert_with(|| Thinking {
                    message_id: message_id.clone(),
                    text: String::new(),
                    started: Instant::now(),
                });
                t.text.push_str(&delta);
            }
            Event::Reasoning { message_id, text } => self.reasoning_done(&message_id, text),
            Event::ToolCallBegin(b) if b.subagent.is_some() => self.subagent_call(b),
            Event::ToolCallBegin(b) => {
                self.finish_output();
                self.running.push(ToolCell::new(b));
            }
            Event::SubagentStarted(s) => self.subagent_started(s),
            Event::SubagentEnded(s) => self.subagent_ended(s),
            Event::ToolCallRunning { call_id } => {
                self.running_since.push((call_id, Instant::now()));
            }
            Event::ToolCallOutputDelta { call_id, chunk } => self.output_delta(&call_id, &chunk),
            Event::ToolCallEnd(end) => self.tool_end(end),
            Event::ApprovalRequested(req) => {
                self.approvals.push_back(super::approval::Prompt::new(req))
            }
            Event::QuestionAsked(req) => self.questions.push_back(super::question::Form::new(req)),
            Event::PlanUpdated(plan) => {
                self.finish_output();
                self.push(Cell::Plan(plan));
            }
            Event::Warning { message } => self.push(Cell::Warning(message)),
            Event::HookStarted { run, .. } | Event::HookCompleted { run, .. } => self.hook(&run),
            Event::GoalUpdated { goal, .. } => self.goal_updated(&goal),
            Event::GoalCleared => self.push(Cell::Info(vec!["Goal cleared.".into()])),
            Event::BackgroundTask(t) => self.background_task(&t),
            Event::BackgroundTaskOutput { .. } => {}
            Event::ScheduledPrompt {
                job_id,
                cron,
                prompt,
            } => self.scheduled_prompt(&job_id, &cron, &prompt),
            Event::Undone(report) => self.push(Cell::Info(
                interpreter_face::slash::undo_text(&report)
                    .lines()
                    .map(str::to_string)
                    .collect(),
            )),
            Event::Error { message } => self.push(Cell::Error(message)),
            Event::ModelWaiting {
                provider,
                attempt,
                elapsed_ms,
            } => self.model_waiting(&provider, attempt, elapsed_ms),
            Event::ContextCompacted {
                tokens_before,
                tokens_after,
                ..
            } => self.info(format!(
                "context compacted (about {} → {} tokens)",
                super::status::tokens(tokens_before),
                super::status::tokens(tokens_after)
            )),
            Event::Transcript(items) => self.replay(items),
            Event::TurnEnded(ended) => self.turn_ended(&ended.reason),
            Event::TitleChanged { .. }
            | Event::TokenCount(_)
            | Event::ContextCompacting { .. }
            | Event::Diff { .. }
            | Event::RequestPreview { .. }
            | Event::UndoableTurns { .. }
            // Failures come as warnings too; `/mcp` shows the list (kept by the view).
            | Event::McpServers { .. }
            | Event::McpServerUpdated(_)
            | Event::DiagnosticsRequested(_) => {}
        }
    }

    fn model_waiting(&mut self, provider: &str, attempt: u32, elapsed_ms: u64) {
        if let Some(t) = self.turn.as_mut() {
            t.waiting = Some(interpreter_face::waiting_text(
                &clean(provider),
                attempt,
                elapsed_ms,
            ));
        }
    }

    fn reasoning_done(&mut self, message_id: &str, text: String) {
        let started = self.thinking.take().map(|t| t.started);
        // Streamed reasoning was shown when the answer began.
        let shown = self.reasoning_shown.as_deref() == Some(message_id);
        if !text.trim().is_empty() && !shown {
            let secs = started.map(|s| s.elapsed().as_secs());
            self.push(Cell::Reasoning { text, secs });
        }
    }

    fn configured(&mut self, c: interpreter_protocol::SessionConfigured) {
        let view = SessionView::new(c);
        if !self.bannered {
            self.bannered = true;
            let resumed = self
                .resumed
                .then(|| view.title.clone().unwrap_or_else(|| view.id.clone()));
            self.push(Cell::Banner {
                cwd: view.cwd.clone(),
                resumed,
            });
        }
        self.last_settings = Some(view.settings.clone());
        self.view = Some(view);
        // What was typed (or given on the command line) while the session started.
        if self.turn.is_none()
            && let Some(next) = self.queued.pop_front()
        {
            self.send_message(&next);
        }
    }

    fn settings_changed(&mut self, new: interpreter_protocol::SessionSettings) {
        let mut said = Vec::new();
        if let Some(old) = self.last_settings.replace(new.clone()) {
            if old.harness != new.harness {
                said.push(format!("harness: {}", new.harness));
            }
            if old.model != new.model {
                said.push(format!("model: {}", new.model));
            }
            if old.permissions.sandbox != new.permissions.sandbox
                && let Some(v) = self.view.as_ref()
            {
                said.push(format!("mode: {}", mode_of(v).as_str()));
            }
            if old.effort != new.effort {
                said.push(format!(
                    "reasoning effort: {}",
                    new.effort.map_or("default", |e| e.as_str())
                ));
            }
        }
        if !said.is_empty() {
            self.push(Cell::Info(said));
        }
    }
}

impl App {
    fn clear_waiting(&mut self) {
        if let Some(t) = self.turn.as_mut() {
            t.waiting = None;
        }
    }

    fn delta(&mut self, message_id: &str, delta: &str) {
        self.clear_waiting();
        if self
            .stream
            .as_ref()
            .is_some_and(|s| s.message_id != message_id)
        {
            self.finish_stream();
        }
        let stream = self
            .stream
            .get_or_insert_with(|| AgentStream::new(message_id));
        stream.push(delta);
        if let Some(done) = stream.take_complete() {
            let first = !stream.committed_any;
            stream.committed_any = true;
            self.push(Cell::Agent {
                markdown: done,
                first,
            });
        }
    }

    fn message_done(&mut self, message_id: &str, text: &str) {
        self.finish_thinking();
        match self.stream.as_ref() {
            Some(s) if s.message_id == message_id => self.finish_stream(),
            _ => {
                self.finish_stream();
                if !text.trim().is_empty() {
                    self.push(Cell::Agent {
                        markdown: clean(text),
                        first: true,
                    });
                }
            }
        }
    }

    /// Commits what is left of the streaming message.
    fn finish_stream(&mut self) {
        if let Some(mut s) = self.stream.take()
            && let Some(rest) = s.finish()
        {
            self.push(Cell::Agent {
                markdown: rest,
                first: !s.committed_any,
            });
        }
    }

    /// Reasoning that streamed without its closing `Reasoning` event.
    fn finish_thinking(&mut self) {
        if let Some(t) = self.thinking.take()
            && !t.text.trim().is_empty()
        {
            self.reasoning_shown = Some(t.message_id.clone());
            self.push(Cell::Reasoning {
                text: t.text,
                secs: Some(t.started.elapsed().as_secs()),
            });
        }
    }

    /// Text and reasoning end where a tool call or a plan starts.
    fn finish_output(&mut self) {
        self.finish_thinking();
        self.finish_stream();
    }

    fn output_delta(&mut self, call_id: &str, chunk: &str) {
        if let Some(c) = self.running.iter_mut().find(|c| c.begin.call_id == call_id) {
            c.live_output.push_str(chunk);
            if c.live_output.len() > LIVE_OUTPUT_BYTES {
                let mut cut = c.live_output.len() - LIVE_OUTPUT_BYTES / 2;
                while !c.live_output.is_char_boundary(cut) {
                    cut += 1;
                }
                c.live_output.drain(..cut);
            }
        }
    }

    /// The running cell of the call whose subagent is `session_id`.
    fn subagent_of(&mut self, session_id: &str) -> Option<&mut super::subagent::SubagentView> {
        self.running
            .iter_mut()
            .filter_map(|c| c.subagent.as_mut())
            .find(|s| s.session_id == session_id)
    }

    fn subagent_started(&mut self, s: interpreter_protocol::SubagentStarted) {
        if let Some(cell) = self
            .running
            .iter_mut()
            .find(|c| c.begin.call_id == s.call_id)
        {
            cell.subagent = Some(super::subagent::SubagentView {
                session_id: s.session_id,
                name: s.name,
                task: s.task,
                calls: Vec::new(),
                ended: None,
            });
        }
    }

    fn subagent_ended(&mut self, s: interpreter_protocol::SubagentEnded) {
        if let Some(v) = self.subagent_of(&s.session_id) {
            v.ended = Some((s.state, s.summary));
        }
    }

    /// A subagent's call joins the cell of its parent call instead of a cell of its own.
    fn subagent_call(&mut self, b: interpreter_protocol::ToolCallBegin) {
        let session = b.subagent.clone().unwrap_or_default();
        let known = self.subagent_of(&session).map(|v| {
            v.calls.push((b.call_id.clone(), b.title.clone(), None));
        });
        if known.is_none() {
            self.running.push(ToolCell::new(b));
        }
    }

    fn tool_end(&mut self, end: interpreter_protocol::ToolCallEnd) {
        self.approvals.retain(|a| a.req.call_id != end.call_id);
        self.questions.retain(|q| q.req.call_id != end.call_id);
        for v in self.running.iter_mut().filter_map(|c| c.subagent.as_mut()) {
            if let Some(call) = v.calls.iter_mut().find(|c| c.0 == end.call_id) {
                call.2 = Some(end.status);
                return;
            }
        }
        self.running_since.retain(|(id, _)| *id != end.call_id);
        let Some(i) = self
            .running
            .iter()
            .position(|c| c.begin.call_id == end.call_id)
        else {
            return;
        };
        let mut cell = self.running.remove(i);
        let plan_tool = cell.begin.kind == interpreter_protocol::ToolKind::Think
            && end.status == interpreter_protocol::ToolStatus::Completed
            && cell.subagent.is_none();
        cell.end = Some(end);
        // A plan shows itself as a plan cell.
        if !plan_tool {
            self.push(Cell::Tool(Box::new(cell)));
        }
    }

    /// How long each running call has run, for their live cells.
    pub(crate) fn tick(&mut self) {
        for c in &mut self.running {
            c.running_secs = self
                .running_since
                .iter()
                .find(|(id, _)| *id == c.begin.call_id)
                .map(|(_, t)| t.elapsed().as_secs());
        }
    }

    fn replay(&mut self, items: Vec<TranscriptItem>) {
        for item in items {
            let cell = match item {
                TranscriptItem::UserMessage { text, .. } => Cell::User(text),
                TranscriptItem::Reasoning { text } => Cell::Reasoning { text, secs: None },
                TranscriptItem::AgentMessage { text, .. } => Cell::Agent {
                    markdown: clean(&text),
                    first: true,
                },
                TranscriptItem::ToolCall { begin, end } => {
                    let plan_tool = begin.kind == interpreter_protocol::ToolKind::Think;
                    if plan_tool {
                        continue;
                    }
                    let mut c = ToolCell::new(*begin);
                    c.end = Some(*end);
                    Cell::Tool(Box::new(c))
                }
                TranscriptItem::Plan(p) => Cell::Plan(p),
            };
            self.push(cell);
        }
        self.info("— end of the earlier conversation —");
    }

    fn turn_ended(&mut self, reason: &TurnEndReason) {
        self.finish_output();
        // Calls still shown as running ended with the turn.
        self.running.clear();
        self.running_since.clear();
        self.approvals.clear();
        self.questions.clear();
        self.turn = None;
        match reason {
            TurnEndReason::Completed => {}
            TurnEndReason::Cancelled => self.push(Cell::Warning("interrupted".into())),
            TurnEndReason::Failed { message } => self.push(Cell::Error(message.clone())),
            TurnEndReason::MaxTurnRequests => self.push(Cell::Warning(
                "the turn reached max_turn_requests without a final answer".into(),
            )),
            TurnEndReason::MaxTokens => self.push(Cell::Warning(
                "the answer was cut at the output token limit".into(),
            )),
            TurnEndReason::Refusal => self.push(Cell::Warning(
                "the provider's content filter stopped the answer".into(),
            )),
        }
        if let Some(next) = self.queued.pop_front() {
            self.send_message(&next);
        }
    }
}
