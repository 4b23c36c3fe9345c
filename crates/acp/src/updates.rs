//! Agent events → `session/update` notifications. Runs inside the event sink, so updates go
//! out in the order the core produced them, before the prompt's response. A `SettingsChanged`
//! becomes `current_mode_update` (when the mode changed) and `config_option_update`.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CompactionStatus, CompactionUpdate, ContentBlock, Cost, Meta, Notice, NoticeSeverity, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionId, SessionNotification, SessionUpdate,
    Terminal, TextContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};
use interpreter_protocol::{Event, PlanStatus, ToolCallBegin, ToolCallEnd, ToolKind, ToolStatus};
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::content::{acp_kind, chunk, diff_contents, text_content};
use interpreter_core::agent::WeakSessionHandle;
use interpreter_face::view::SessionView;

/// Output shown in a tool card at most; the model's copy is separate.
const MAX_SHOWN_OUTPUT: usize = 64 * 1024;

pub(super) struct Translator {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
    /// Zed's display terminal (`_meta.terminal_output`).
    terminal_output: bool,
    /// The client opted in to `compaction_update`s.
    compaction: bool,
    /// The client opted in to `notice`s (`session.notices`).
    notices: bool,
    /// The client shows subagents as child sessions (`clientCapabilities.subagents`).
    subagents: Option<super::subagents::Children>,
    /// Warnings raised before the client knows the session (it drops updates for unknown
    /// sessions); `None` once [`Translator::release_warnings`] ran.
    held_warnings: Mutex<Option<Vec<String>>>,
    cwd: PathBuf,
    calls: Mutex<HashMap<String, ToolKind>>,
    running: Mutex<std::collections::HashSet<String>>,
    /// The end of each running background task's output, by call id.
    background_tails: Mutex<HashMap<String, String>>,
    /// The message whose deltas went out last: its whole text needs no chunk of its own.
    streaming: Mutex<Option<String>>,
    /// What the events said about the session (for `/status`).
    pub(super) view: Mutex<Option<SessionView>>,
    /// The session's modes and options as the client shows them: set when the session opens,
    /// changed by the client's choices and by the session's `SettingsChanged` (plan mode, a
    /// refused harness), which the client is told of.
    settings: Mutex<Option<super::settings::Settings>>,
}

impl Translator {
    /// `terminal_output`: show commands the agent runs itself in Zed's display terminal.
    pub(super) fn new(
        cx: ConnectionTo<Client>,
        session_id: &str,
        terminal_output: bool,
        compaction: bool,
        notices: bool,
        subagents: bool,
        cwd: PathBuf,
    ) -> Self {
        Translator {
            cx,
            session_id: SessionId::new(session_id.to_string()),
            terminal_output,
            compaction,
            notices,
            subagents: subagents.then(Default::default),
            held_warnings: Mutex::new(Some(Vec::new())),
            cwd,
            calls: Mutex::new(HashMap::new()),
            running: Mutex::new(Default::default()),
            background_tails: Mutex::new(HashMap::new()),
            streaming: Mutex::new(None),
            view: Mutex::new(None),
            settings: Mutex::new(None),
        }
    }

    pub(super) fn set_settings(&self, settings: super::settings::Settings) {
        *self.settings.lock().unwrap_or_else(|e| e.into_inner()) = Some(settings);
    }

    /// The session's settings; the defaults of a session still opening.
    pub(super) fn settings(&self) -> super::settings::Settings {
        self.settings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(super::settings::Settings::opening)
    }

    pub(super) fn with_settings<T>(
        &self,
        f: impl FnOnce(&mut super::settings::Settings) -> T,
    ) -> T {
        let mut guard = self.settings.lock().unwrap_or_else(|e| e.into_inner());
        f(guard.get_or_insert_with(super::settings::Settings::opening))
    }

    /// The session's settings changed: what the client shows follows (only what differs from
    /// what it was told, so a change the client asked for is not announced twice).
    fn settings_changed(&self, new: &interpreter_protocol::SessionSettings) {
        use agent_client_protocol::v1::schema::{ConfigOptionUpdate, CurrentModeUpdate};
        let (before, after) = {
            let mut guard = self.settings.lock().unwrap_or_else(|e| e.into_inner());
            let Some(st) = guard.as_mut() else {
                // Still opening: the open reads the view.
                return;
            };
            let before = st.clone();
            st.follow(new);
            (before, st.clone())
        };
        if before == after {
            return;
        }
        if before.mode != after.mode {
            self.send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                after.mode.as_str(),
            )));
        }
        self.send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            after.config_options(),
        )));
    }

    /// Keeps the session's view up to date.
    fn observe(&self, e: &Event) {
        let mut view = self.view.lock().unwrap_or_else(|e| e.into_inner());
        match (e, view.as_mut()) {
            (Event::SessionConfigured(c), _) => *view = Some(SessionView::new(c.clone())),
            (e, Some(v)) => v.observe(e),
            _ => {}
        }
    }

    /// Asks the client about a tool call and hands the answer to the session.
    fn ask(&self, session: &WeakSessionHandle, req: interpreter_protocol::ApprovalRequest) {
        let Some(session) = session.upgrade() else {
            return;
        };
        let cx = self.cx.clone();
        let sid = self.session_id.clone();
        let terminal = self.terminal_output && req.kind == ToolKind::Execute;
        tokio::spawn(async move {
            let call_id = req.call_id.clone();
            let decision = super::permission::ask_permission(&cx, sid, req, terminal).await;
            let _ = session.submit(interpreter_protocol::Op::Approval { call_id, decision });
        });
    }

    /// Puts the questions to the client as a form and hands the answer to the session.
    fn question(&self, session: &WeakSessionHandle, req: interpreter_protocol::QuestionRequest) {
        let Some(session) = session.upgrade() else {
            return;
        };
        let cx = self.cx.clone();
        let sid = self.session_id.0.to_string();
        tokio::spawn(async move {
            let answer = super::questions::ask(&cx, &sid, &req).await;
            let _ = session.submit(interpreter_protocol::Op::Answer {
                call_id: req.call_id,
                answer,
            });
        });
    }

    /// Asks the client for the editor's diagnostics and hands them to the session.
    fn diagnose(&self, session: &WeakSessionHandle, req: interpreter_protocol::DiagnosticsRequest) {
        let Some(session) = session.upgrade() else {
            return;
        };
        let cx = self.cx.clone();
        let sid = self.session_id.0.to_string();
        tokio::spawn(async move {
            let diagnostics = super::diagnostics::fetch(&cx, &sid, &req).await;
            let _ = session.submit(interpreter_protocol::Op::Diagnostics {
                request_id: req.request_id,
                diagnostics,
            });
        });
    }

    pub(super) fn send(&self, mut update: SessionUpdate) {
        let session = match &self.subagents {
            Some(children) => children.route(&mut update).map(SessionId::new),
            None => None,
        };
        // A closed connection means the client is gone; nothing left to tell.
        let _ = self.cx.send_notification(SessionNotification::new(
            session.unwrap_or_else(|| self.session_id.clone()),
            update,
        ));
    }

    /// An update the schema has no type for (the draft subagent updates).
    fn send_raw(&self, update: serde_json::Value) {
        let params = json!({"sessionId": self.session_id.0, "update": update});
        if let Ok(m) = agent_client_protocol::UntypedMessage::new("session/update", params) {
            let _ = self.cx.send_notification(m);
        }
    }

    /// A whole agent message of our own (status, errors); it gets its own message id.
    pub(super) fn agent_text(&self, text: &str, message_id: Option<&str>) {
        let fresh = uuid::Uuid::now_v7().to_string();
        let id = message_id.unwrap_or(&fresh);
        self.send(SessionUpdate::AgentMessageChunk(chunk(text, Some(id))));
    }

    fn message_delta(&self, message_id: String, delta: &str) {
        self.send(SessionUpdate::AgentMessageChunk(chunk(
            delta,
            Some(&message_id),
        )));
        *self.streaming.lock().unwrap_or_else(|e| e.into_inner()) = Some(message_id);
    }

    /// A message the provider sent whole, without deltas, is one chunk.
    fn message_done(&self, message_id: &str, text: &str) {
        let streamed = self
            .streaming
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if streamed.as_deref() != Some(message_id) && !text.is_empty() {
            self.send(SessionUpdate::AgentMessageChunk(chunk(
                text,
                Some(message_id),
            )));
        }
    }

    /// Something the user should know that is not the model's answer (a retry, a server that
    /// did not start): a `notice` where the client shows them, else a message of its own.
    pub(super) fn warning(&self, message: &str) {
        tracing::warn!("{message}");
        if let Ok(mut held) = self.held_warnings.lock()
            && let Some(held) = held.as_mut()
        {
            held.push(message.to_string());
            return;
        }
        self.show_warning(message);
    }

    /// A hook's run that has something to say: its start as a thought, its end as a warning.
    fn hook(&self, run: &interpreter_protocol::HookRun) {
        match run.status {
            interpreter_protocol::HookRunStatus::Running => {
                if let Some(l) = interpreter_face::hooks::started_line(run) {
                    self.waiting(&l);
                }
            }
            interpreter_protocol::HookRunStatus::Completed => {
                if let Some(l) = interpreter_face::hooks::completed_line(run) {
                    self.waiting(&l);
                }
            }
            _ => {
                if let Some(l) = interpreter_face::hooks::completed_line(run) {
                    self.warning(&l);
                }
            }
        }
    }

    fn show_warning(&self, message: &str) {
        if self.notices {
            self.send(SessionUpdate::Notice(Notice::new(
                NoticeSeverity::Warning,
                message,
            )));
        } else {
            self.agent_text(&format!("**Warning:** {message}\n\n"), None);
        }
    }

    /// The model is slow to answer: an `info` notice where the client shows them, else a line
    /// of the agent's thoughts (not its answer).
    fn waiting(&self, text: &str) {
        if self.notices {
            self.send(SessionUpdate::Notice(Notice::new(
                NoticeSeverity::Info,
                format!("{text}…"),
            )));
        } else {
            self.send(SessionUpdate::AgentThoughtChunk(chunk(
                &format!("_{text}…_\n\n"),
                None,
            )));
        }
    }

    /// Called once the client has the session's id: sends the warnings held until then.
    pub(super) fn release_warnings(&self) {
        let held = self.held_warnings.lock().ok().and_then(|mut h| h.take());
        for message in held.unwrap_or_default() {
            self.show_warning(&message);
        }
    }

    /// Subagents; the event back when it is none of those.
    fn editor_event(&self, e: Event) -> Option<Event> {
        match e {
            Event::SubagentStarted(s) => {
                if let Some(c) = &self.subagents {
                    self.send_raw(c.started(&s));
                }
            }
            Event::SubagentEnded(s) => {
                if let Some(c) = &self.subagents {
                    self.send_raw(c.ended(&s));
                }
            }
            Event::ToolCallBegin(b) => {
                if let (Some(c), Some(session)) = (&self.subagents, &b.subagent) {
                    c.call_began(&b.call_id, session);
                }
                return Some(Event::ToolCallBegin(b));
            }
            e => return Some(e),
        }
        None
    }

    /// The session's sink: what the session asks the client is asked and answered through
    /// `session`; every other event becomes updates.
    pub(super) fn event(&self, session: &WeakSessionHandle, e: Event) {
        self.observe(&e);
        match e {
            Event::ApprovalRequested(req) => self.ask(session, req),
            Event::QuestionAsked(req) => self.question(session, req),
            Event::DiagnosticsRequested(req) => self.diagnose(session, req),
            e => self.update(e),
        }
    }

    /// An event as `session/update`s.
    pub(super) fn update(&self, e: Event) {
        let Some(e) = self.editor_event(e) else {
            return;
        };
        match e {
            Event::SettingsChanged(new) => self.settings_changed(&new),
            Event::TitleChanged { title } => self.send(SessionUpdate::SessionInfoUpdate(
                agent_client_protocol::v1::schema::SessionInfoUpdate::new().title(title),
            )),
            Event::Transcript(items) => self.replay(items),
            Event::Error { message } => self.warning(&message),
            Event::AgentMessageDelta { message_id, delta } => {
                self.message_delta(message_id, &delta)
            }
            Event::AgentMessage {
                message_id, text, ..
            } => self.message_done(&message_id, &text),
            Event::ReasoningDelta { message_id, delta } => self.send(
                SessionUpdate::AgentThoughtChunk(chunk(&delta, Some(&message_id))),
            ),
            Event::ToolCallBegin(b) => self.begin(b),
            Event::ToolCallOutputDelta { call_id, chunk } => {
                self.mark_running(&call_id);
                if !(self.terminal_output && self.kind_of(&call_id) == Some(ToolKind::Execute)) {
                    return;
                }
                self.terminal_output_chunk(&call_id, &chunk);
            }
            Event::BackgroundTask(t) => self.background_task(t),
            // The turn that follows runs it: the client shows it as the user's message.
            Event::ScheduledPrompt { prompt, .. } => {
                self.send(SessionUpdate::UserMessageChunk(chunk(&prompt, None)))
            }
            Event::BackgroundTaskOutput { task_id, chunk } => {
                self.background_output(&task_id, &chunk)
            }
            Event::ToolCallRunning { call_id } => self.mark_running(&call_id),
            Event::ToolCallEnd(end) => self.end(end),
            Event::PlanUpdated(plan) => self.send(SessionUpdate::Plan(Plan::new(
                plan.items
                    .iter()
                    .map(|i| {
                        PlanEntry::new(
                            i.step.clone(),
                            PlanEntryPriority::Medium,
                            match i.status {
                                PlanStatus::Pending => PlanEntryStatus::Pending,
                                PlanStatus::InProgress => PlanEntryStatus::InProgress,
                                PlanStatus::Completed => PlanEntryStatus::Completed,
                            },
                        )
                    })
                    .collect::<Vec<_>>(),
            ))),
            Event::TokenCount(t) => self.usage(&t),
            Event::ContextCompacting { compaction_id } if self.compaction => {
                self.send(SessionUpdate::CompactionUpdate(CompactionUpdate::new(
                    compaction_id,
                    CompactionStatus::InProgress,
                )))
            }
            Event::ContextCompacted {
                compaction_id,
                summary,
                tokens_before,
                tokens_after,
            } => {
                if self.compaction {
                    self.send(SessionUpdate::CompactionUpdate(
                        CompactionUpdate::new(compaction_id, CompactionStatus::Completed)
                            .summary(vec![ContentBlock::Text(TextContent::new(summary))]),
                    ));
                } else {
                    self.agent_text(
                        &format!(
                            "\n\n_Context compacted: about {tokens_before} → {tokens_after} tokens; the conversation so far was summarized._\n\n"
                        ),
                        None,
                    );
                }
            }
            Event::Warning { message } => self.warning(&message),
            Event::HookStarted { run, .. } | Event::HookCompleted { run, .. } => self.hook(&run),
            Event::Undone(report) => {
                self.agent_text(&interpreter_face::slash::undo_text(&report), None)
            }
            Event::ModelWaiting {
                provider,
                attempt,
                elapsed_ms,
            } => self.waiting(&interpreter_face::waiting_text(
                &provider, attempt, elapsed_ms,
            )),
            _ => {}
        }
    }

    fn usage(&self, t: &interpreter_protocol::TokenCount) {
        let size = t
            .context_window
            .unwrap_or(interpreter_core::model::catalog::FALLBACK_CONTEXT_WINDOW);
        let mut u = UsageUpdate::new(t.context_used.min(size.max(t.context_used)), size);
        if let Some(c) = t.cost_usd {
            u = u.cost(Cost::new(c, "USD"));
        }
        self.send(SessionUpdate::UsageUpdate(u));
    }

    fn kind_of(&self, call_id: &str) -> Option<ToolKind> {
        self.calls.lock().ok()?.get(call_id).copied()
    }

    /// Whether commands show in Zed's display terminal (`_meta.terminal_output`).
    pub(super) fn shows_terminal_output(&self) -> bool {
        self.terminal_output
    }

    /// Output of call `call_id` for its display terminal.
    pub(super) fn terminal_output_chunk(&self, call_id: &str, chunk: &str) {
        let mut meta = Meta::new();
        meta.insert(
            "terminal_output".into(),
            json!({"terminal_id": call_id, "data": chunk}),
        );
        self.send(SessionUpdate::ToolCallUpdate(
            ToolCallUpdate::new(call_id.to_string(), ToolCallUpdateFields::new()).meta(meta),
        ));
    }

    /// Adds `chunk` to the kept end of call `call_id`'s output (at most `max` bytes) and
    /// returns it.
    pub(super) fn push_background_tail(&self, call_id: &str, chunk: &str, max: usize) -> String {
        let mut tails = self
            .background_tails
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let tail = tails.entry(call_id.to_string()).or_default();
        tail.push_str(chunk);
        if tail.len() > max {
            let cut = tail.ceil_char_boundary(tail.len() - max);
            tail.drain(..cut);
        }
        tail.clone()
    }

    /// The kept end of call `call_id`'s output, forgotten.
    pub(super) fn take_background_tail(&self, call_id: &str) -> String {
        self.background_tails
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(call_id)
            .unwrap_or_default()
    }

    pub(super) fn begin(&self, b: ToolCallBegin) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(b.call_id.clone(), b.kind);
        }
        let title = interpreter_face::terminal_text::escape_one_line(&b.title);
        let mut call = ToolCall::new(b.call_id.clone(), title)
            .kind(acp_kind(b.kind))
            .status(ToolCallStatus::Pending)
            .raw_input(b.input.clone())
            .locations(
                b.locations
                    .iter()
                    .map(|p| ToolCallLocation::new(p.clone()))
                    .collect::<Vec<_>>(),
            );
        if b.kind == ToolKind::Execute && self.terminal_output {
            let mut meta = Meta::new();
            meta.insert(
                "terminal_info".into(),
                json!({"terminal_id": b.call_id, "cwd": self.cwd}),
            );
            call = call
                .content(vec![ToolCallContent::Terminal(Terminal::new(
                    b.call_id.clone(),
                ))])
                .meta(meta);
        }
        self.send(SessionUpdate::ToolCall(call));
        // Calls that never ask start at once; others stay `pending` until approved or running.
        if matches!(b.kind, ToolKind::Read | ToolKind::Search | ToolKind::Think) {
            self.mark_running(&b.call_id);
        }
    }

    /// Sends `in_progress` once per call: after approval, at first output, or at the end.
    pub(super) fn mark_running(&self, call_id: &str) {
        let first = self
            .running
            .lock()
            .map(|mut r| r.insert(call_id.to_string()))
            .unwrap_or(false);
        if first {
            self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.to_string(),
                ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
            )));
        }
    }

    pub(super) fn end(&self, end: ToolCallEnd) {
        self.mark_running(&end.call_id);
        if let Ok(mut r) = self.running.lock() {
            r.remove(&end.call_id);
        }
        let kind = self
            .calls
            .lock()
            .ok()
            .and_then(|mut c| c.remove(&end.call_id))
            .unwrap_or(ToolKind::Other);
        let status = match end.status {
            ToolStatus::Completed => ToolCallStatus::Completed,
            ToolStatus::Failed | ToolStatus::Declined => ToolCallStatus::Failed,
        };
        let mut fields = ToolCallUpdateFields::new()
            .status(status)
            .raw_output(json!({"output": shown(&end.output), "exit_code": end.exit_code}));
        let mut meta = None;
        if kind == ToolKind::Execute && self.terminal_output {
            let mut m = Meta::new();
            m.insert(
                "terminal_exit".into(),
                json!({"terminal_id": end.call_id, "exit_code": end.exit_code, "signal": null}),
            );
            meta = Some(m);
        } else if !end.changes.is_empty() {
            fields = fields.content(diff_contents(&end.changes));
        } else if !end.output.trim().is_empty() {
            let text = if kind == ToolKind::Execute {
                format!("```console\n{}\n```", shown(&end.output).trim_end())
            } else {
                shown(&end.output).to_string()
            };
            fields = fields.content(vec![text_content(&text)]);
        }
        let mut update = ToolCallUpdate::new(end.call_id, fields);
        if let Some(m) = meta {
            update = update.meta(m);
        }
        self.send(SessionUpdate::ToolCallUpdate(update));
    }
}

fn shown(s: &str) -> &str {
    if s.len() <= MAX_SHOWN_OUTPUT {
        return s;
    }
    let mut start = s.len() - MAX_SHOWN_OUTPUT;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}
