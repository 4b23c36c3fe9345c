//! One turn: user input in, model requests and tool calls until the model answers.

use futures::FutureExt;
use interpreter_protocol::{
    Event, InputItem, TokenCount, ToolCallBegin, ToolCallEnd, ToolKind, ToolStatus, TurnEndReason,
    TurnEnded,
};
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::active_turn::RunningTurn;
use super::hooks::prompt_text;
use super::session::Session;
use super::spans;
use super::subagent::SubagentRunner;
use crate::harness::{TextActions, TextReply};
use crate::model::{
    AssistantReply, FinishReason, HistoryItem, MessagePhase, ModelError, ModelResponse, Part,
    Parts as _, RawToolCall, StreamDelta, ToolCall, catalog,
};
use crate::store::LogLine;
use crate::tools::{CallDescription, ToolContext, ToolOutcome};

/// A tool call whose arguments were checked: `Err` holds the model's error text.
type CheckedCall = (ToolCall, Result<(), String>);

/// The result of a call made in the response to the wrap-up request, which ends the turn.
const NOT_RUN_AFTER_WRAP_UP: &str = "Not run: the thread's goal has used its token budget and \
     this turn ended with its wrap-up. No further tool calls run in it.";

/// What a turn is for.
pub(super) enum TurnKind {
    User(Vec<InputItem>),
    /// Work toward the thread's goal: the session starts it while idle.
    Goal(String),
    Compact,
}

/// A call announced to the user: done already, or its run, which owns its tool and context.
enum Started {
    Done(ToolOutcome),
    Run {
        run: futures::future::BoxFuture<'static, ToolOutcome>,
        subagents: Option<Arc<SubagentRunner>>,
    },
}

/// Where a call of a group stands once the group has started.
enum Slot {
    /// Cancelled before it started: never announced.
    Cancelled,
    Done(ToolOutcome),
    /// Its run is among the group's; a subagent runner counts its tokens.
    Ran(Option<Arc<SubagentRunner>>),
}

/// What the turn does after a response.
enum Next {
    /// Run these calls, then ask the model again.
    Run(Vec<CheckedCall>),
    /// The turn is over.
    End(TurnEndReason),
    /// A correction was sent (the reply had no valid action): ask again, unless `limit`
    /// corrections in a row were sent already.
    Again { limit: usize },
}

impl Session {
    /// Runs a turn to its end and reports it, in a span of its own. Always returns how it
    /// ended; never panics on bad model output.
    pub(super) async fn run_turn(
        &mut self,
        turn_id: String,
        kind: TurnKind,
        cancel: CancellationToken,
    ) -> TurnEnded {
        let prompt = match &kind {
            TurnKind::User(items) if self.config.otel_log_user_prompt => Some(prompt_text(items)),
            _ => None,
        };
        let span = spans::turn(
            &self.span,
            &turn_id,
            self.state.harness.name(),
            prompt.as_deref(),
        );
        let before = self.state.total_usage;
        let ended = self
            .run_turn_inner(turn_id, kind, cancel)
            .instrument(span.clone())
            .await;
        let failed = matches!(ended.reason, TurnEndReason::Failed { .. });
        let outcome = format!("{:?}", ended.reason);
        let outcome = outcome.split([' ', '{', '(']).next().unwrap_or_default();
        spans::end_turn(
            &span,
            outcome,
            failed,
            &usage_since(self.state.total_usage, before),
        );
        ended
    }

    async fn run_turn_inner(
        &mut self,
        turn_id: String,
        kind: TurnKind,
        cancel: CancellationToken,
    ) -> TurnEnded {
        self.services.events.send(Event::TurnStarted {
            turn_id: turn_id.clone(),
        });
        // A log this session may not write (another process has it) refuses the turn before
        // anything of it is recorded.
        if let Some(Err(e)) = self.state.log.as_mut().map(|log| log.begin_turn()) {
            let ended = TurnEnded {
                turn_id,
                reason: TurnEndReason::Failed {
                    message: format!("{e:#}"),
                },
            };
            self.services.events.send(Event::TurnEnded(ended.clone()));
            return ended;
        }
        let usage_before = self.state.total_usage;
        self.active.running = Some(RunningTurn::new(
            turn_id.clone(),
            self.state.total_usage.total_tokens(),
            self.state.goal.as_ref(),
        ));
        // Hooks of this turn (a compaction's too) run from where the session is now.
        self.place_hooks(Some(turn_id.clone()));
        let reason = match kind {
            TurnKind::User(_) | TurnKind::Goal(_) => {
                self.start_hooks(None, &cancel).await;
                let blocked = match &kind {
                    TurnKind::User(items) => {
                        self.prompt_hooks(&prompt_text(items), &cancel).await.err()
                    }
                    _ => None,
                };
                if let Some(why) = blocked {
                    self.services.events.send(Event::Warning {
                        message: format!("A UserPromptSubmit hook blocked the prompt: {why}"),
                    });
                    self.active.running = None;
                    return self.finish_turn(turn_id, TurnEndReason::Completed, usage_before);
                }
                let history_start = self.state.history.len();
                self.begin_checkpoint();
                match kind {
                    TurnKind::User(items) => self.begin_user_turn(items),
                    TurnKind::Goal(text) => self.push_history(HistoryItem::User {
                        text,
                        images: vec![],
                        synthetic: true,
                    }),
                    TurnKind::Compact => {}
                }
                let reason = self.turn_loop(&cancel).await;
                if reason == TurnEndReason::Completed {
                    self.diagnostics_at_turn_end(&cancel).await;
                }
                let ended = self.end_checkpoint().await;
                self.mark_turn(&turn_id, history_start, ended);
                if reason == TurnEndReason::Completed {
                    self.notify_turn_complete(&turn_id, history_start);
                }
                reason
            }
            TurnKind::Compact => match self.compact("manual", &cancel).await {
                Ok(_) => TurnEndReason::Completed,
                Err(_) if cancel.is_cancelled() => TurnEndReason::Cancelled,
                Err(message) => TurnEndReason::Failed { message },
            },
        };
        self.collect_title();
        // Goal ops that came after the last request are answered now, before the turn counts.
        self.apply_goal_ops();
        self.count_goal_progress(true);
        if reason != TurnEndReason::Completed {
            self.stop_goal_after_failed_turn();
        }
        self.active.running = None;
        self.finish_turn(turn_id, reason, usage_before)
    }

    /// Logs the turn's end, makes the log durable and tells the front end. A log that
    /// could not be made durable (a record of the turn not written, or the fsync failed)
    /// turns the turn into a failure, reported once.
    fn finish_turn(
        &mut self,
        turn_id: String,
        reason: TurnEndReason,
        usage_before: interpreter_protocol::TokenUsage,
    ) -> TurnEnded {
        // What this turn spent, for exports (the session's total restarts on a resume).
        let usage = usage_since(self.state.total_usage, usage_before);
        self.log_line(&LogLine::TurnEnd {
            turn_id: turn_id.clone(),
            reason: format!("{reason:?}"),
            usage: Some(usage),
        });
        let reason = match self.state.log.as_mut().map(|log| log.end_turn()) {
            Some(Err(e)) => TurnEndReason::Failed {
                message: format!("the session log could not be saved: {e:#}"),
            },
            _ => reason,
        };
        self.send_diff();
        let ended = TurnEnded { turn_id, reason };
        self.services.events.send(Event::TurnEnded(ended.clone()));
        ended
    }

    /// Sends the session's diff when it changed in this turn.
    fn send_diff(&mut self) {
        if self.services.workspace.changes().is_empty() {
            return;
        }
        let diff = self.services.workspace.unified_diff();
        if self.state.diff_sent.as_deref() != Some(diff.as_str()) {
            self.services.events.send(Event::Diff {
                unified_diff: diff.clone(),
            });
            self.state.diff_sent = Some(diff);
        }
    }

    /// The harness's reminder and the user's message (skills expanded) go into history.
    fn begin_user_turn(&mut self, items: Vec<InputItem>) {
        let (text, images, context) = self.user_message(items);
        self.collect_title();
        self.start_title_request(&text);
        if self.state.title.is_none() && !text.trim().is_empty() {
            let title: String = text
                .trim()
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(80)
                .collect();
            self.log_line(&LogLine::Title {
                title: title.clone(),
            });
            self.services.events.send(Event::TitleChanged {
                title: title.clone(),
            });
            self.state.title = Some(title);
        }
        // The reminder rides in its own item before the user's message, as Codex sends its
        // environment context: the user's message is what the user typed, and the last user
        // item of the request is the prompt.
        if let Some(item) = self.pending_reminder() {
            self.push_history(item);
        }
        self.push_user_message(text, images, context);
    }

    /// Skills the input loaded, each in its own item, then the user's message.
    fn push_user_message(&mut self, text: String, images: Vec<String>, context: Vec<String>) {
        for text in context {
            self.push_history(HistoryItem::User {
                text,
                images: vec![],
                synthetic: true,
            });
        }
        self.push_history(HistoryItem::User {
            text,
            images,
            synthetic: false,
        });
        self.refresh_task_guidance();
    }

    /// A harness that picks guidance from what the user asked (little-coder) gets it at the
    /// end of its system prompt; it changes only when the asks do, so the prefix holds.
    fn refresh_task_guidance(&mut self) {
        let asked: Vec<&str> = self
            .state
            .history
            .iter()
            .filter_map(|h| match h {
                HistoryItem::User {
                    text,
                    synthetic: false,
                    ..
                } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if let Some(guidance) = self.state.harness.task_guidance(&asked.join("\n")) {
            let base = self.state.harness.system_prompt(&self.services.env);
            self.state.system_prompt = format!("{base}\n\n{guidance}");
        }
    }

    /// Input items as one message's text and images, and the skills it loaded. A skill beside
    /// the user's own words rides in an item of its own before them (as the seed's app-server
    /// sends a `skill` input); a skill alone (`/review`) is the message.
    fn user_message(&self, items: Vec<InputItem>) -> (String, Vec<String>, Vec<String>) {
        let mut text = String::new();
        let mut images = Vec::new();
        let mut skills = Vec::new();
        for item in items {
            let piece = match item {
                InputItem::Text { text } => text,
                InputItem::Image { url } => {
                    images.push(url);
                    continue;
                }
                InputItem::LocalImage { path } => {
                    let path = self.services.workspace.cwd().join(path);
                    match crate::model::image_data_url(&path) {
                        Ok(url) => images.push(url),
                        Err(e) => self.services.events.send(Event::Warning {
                            message: format!("image {e}; not attached"),
                        }),
                    }
                    continue;
                }
                InputItem::Skill { name, args } => {
                    match self.services.env.skills.iter().find(|s| s.name == name) {
                        Some(skill) => {
                            skills.push(crate::skills::invocation(skill, &args));
                            continue;
                        }
                        None => match self.commands().find(|c| c.name == name) {
                            Some(c) => c.expand(&args),
                            None => {
                                self.services.events.send(Event::Warning {
                                    message: format!(
                                        "no skill or command named `{name}`; sent as text"
                                    ),
                                });
                                format!("/{name} {args}").trim_end().to_string()
                            }
                        },
                    }
                }
            };
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&piece);
        }
        if text.is_empty() {
            return (skills.join("\n\n"), images, Vec::new());
        }
        (text, images, skills)
    }

    /// Input the user added while the turn ran joins the history before the next request.
    fn take_steer(&mut self) {
        let items =
            std::mem::take(&mut *self.active.steer.lock().unwrap_or_else(|e| e.into_inner()));
        if items.is_empty() {
            return;
        }
        let (text, images, context) = self.user_message(items);
        self.push_user_message(text, images, context);
    }

    fn steer_pending(&self) -> bool {
        !self
            .active
            .steer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    pub(super) async fn turn_loop(&mut self, cancel: &CancellationToken) -> TurnEndReason {
        let mut corrections = 0;
        let mut stop_continues = 0;
        for n in 0..self.config.max_turn_requests {
            if cancel.is_cancelled() {
                return TurnEndReason::Cancelled;
            }
            // Between two requests, whatever came between them (tool calls, a correction,
            // steered input): the goal counts the turn so far and may ask it to wrap up.
            if n > 0 {
                self.count_goal_progress_mid_turn();
            }
            self.take_steer();
            self.take_task_notifications();
            self.apply_goal_ops();
            self.compact_if_needed(cancel).await;
            let wrap_up = self.goal_wrap_up_asked();
            let resp = match self.request(cancel).await {
                Ok(r) => r,
                Err(reason) => return reason,
            };
            let next = self.record_response(resp);
            if wrap_up {
                return self.end_after_wrap_up(next);
            }
            let calls = match next {
                Next::Run(calls) => calls,
                // Input steered in while the model answered gets its own request in this turn.
                Next::End(TurnEndReason::Completed) if self.steer_pending() => continue,
                Next::End(TurnEndReason::Completed) => {
                    // A Stop hook that blocks the end sends the model back with its reason.
                    let Some(why) = self.stop_hooks(stop_continues, cancel).await else {
                        return TurnEndReason::Completed;
                    };
                    stop_continues += 1;
                    self.push_history(HistoryItem::User {
                        text: format!("Stop hook feedback: {why}"),
                        images: vec![],
                        synthetic: true,
                    });
                    continue;
                }
                Next::End(reason) => return reason,
                Next::Again { limit } => {
                    corrections += 1;
                    if corrections >= limit {
                        return TurnEndReason::Failed {
                            message: format!(
                                "the model replied {corrections} times in a row without a valid action"
                            ),
                        };
                    }
                    continue;
                }
            };
            corrections = 0;
            self.run_calls(calls, cancel).await;
            if cancel.is_cancelled() {
                return TurnEndReason::Cancelled;
            }
            self.checkpoint_after_tools();
            let harness = self.state.harness.clone();
            if harness
                .text_actions()
                .is_some_and(|t| t.finished(&self.state.history))
            {
                return TurnEndReason::Completed;
            }
        }
        TurnEndReason::MaxTurnRequests
    }

    /// Background tasks that ended since the last request: the model is told of each in
    /// this one (only the session the user drives; its subagents share its tasks).
    fn take_task_notifications(&mut self) {
        if self.parent_id.is_some() {
            return;
        }
        for task in self.services.tasks.take_notifications() {
            let text = self.state.harness.task_notification(&task);
            self.push_history(HistoryItem::User {
                text,
                images: vec![],
                synthetic: true,
            });
        }
    }

    /// The wrap-up request (the goal's budget is used) was answered: the turn ends here,
    /// whatever the response asks for. Calls it makes are not run; each gets a result saying
    /// so, as a cancelled turn answers the calls it did not reach, so that every call in
    /// history has its result on every wire. Steered input waits for a turn of its own.
    fn end_after_wrap_up(&mut self, next: Next) -> TurnEndReason {
        match next {
            Next::Run(calls) => {
                for (call, _) in calls {
                    self.push_history(HistoryItem::ToolResult {
                        call_id: call.id,
                        output: NOT_RUN_AFTER_WRAP_UP.into(),
                        is_error: true,
                    });
                }
                TurnEndReason::Completed
            }
            Next::End(reason) => reason,
            Next::Again { .. } => TurnEndReason::Completed,
        }
    }

    /// One model request, streamed to the front end as deltas: each message of the response
    /// is its own message (own id, own deltas, own whole text), in the order they came.
    async fn request(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, TurnEndReason> {
        let mut shown = ShownMessages::new(self.services.events.clone());
        let events = self.services.events.clone();
        let retries = std::sync::atomic::AtomicU64::new(0);
        let counted = &retries;
        let mut on_delta = |d: StreamDelta| shown.delta(d);
        let mut on_retry = move |m: String| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            events.send(Event::Warning { message: m });
        };
        let mut on_wait = super::compact::wait_notice(&self.services.events, &self.config);
        let span = spans::model_request(&self.config.model, &self.config.provider.id);
        let result = {
            let history = self.wire_history(&self.state.history);
            let req = self.model_request(&history);
            self.services
                .client
                .stream(&req, &mut on_delta, &mut on_retry, &mut on_wait, cancel)
                .instrument(span.clone())
                .await
        };
        let retries = retries.load(std::sync::atomic::Ordering::Relaxed);
        match &result {
            Ok(r) => spans::end_request(&span, retries, r.usage.as_ref(), None),
            Err(e) => spans::end_request(&span, retries, None, Some(spans::error_kind(e))),
        }
        let resp = match result {
            Ok(r) => r,
            Err(ModelError::Cancelled) => return Err(TurnEndReason::Cancelled),
            Err(e) => {
                if let (ModelError::QuotaExhausted { .. }, Some(turn)) =
                    (&e, self.active.running.as_mut())
                {
                    turn.quota_exhausted = true;
                }
                tracing::debug!("model request failed: {e}");
                return Err(TurnEndReason::Failed {
                    message: e.to_string(),
                });
            }
        };
        if let Some(u) = &resp.usage {
            self.account(u);
        }
        shown.finish(&resp);
        Ok(resp)
    }

    /// Puts the response in history and says what comes next. Arguments are checked first:
    /// broken JSON never reaches history (it is stored as `{}` and answered with an error).
    fn record_response(&mut self, resp: ModelResponse) -> Next {
        let harness = self.state.harness.clone();
        if !resp.has_calls()
            && let Some(text_actions) = harness.text_actions()
        {
            return self.record_text_reply(text_actions, resp);
        }
        let finish = resp.finish_reason;
        let mut calls: Vec<CheckedCall> = Vec::new();
        let parts = resp
            .parts
            .into_iter()
            .map(|part| match part {
                Part::Message(m) => Part::Message(m),
                Part::Call(raw) => {
                    let checked = check_call(raw);
                    let call = checked.0.clone();
                    calls.push(checked);
                    Part::Call(call)
                }
            })
            .collect();
        self.push_history(HistoryItem::Assistant(AssistantReply {
            parts,
            reasoning: resp.reasoning,
            signed_reasoning: resp.signed_reasoning,
        }));
        if calls.is_empty() {
            return Next::End(match finish {
                FinishReason::Length => TurnEndReason::MaxTokens,
                FinishReason::ContentFilter => TurnEndReason::Refusal,
                _ => TurnEndReason::Completed,
            });
        }
        Next::Run(calls)
    }

    /// A reply to a text-action harness: the calls its text names, a correction to send
    /// back, or the end of the task.
    fn record_text_reply(&mut self, t: &dyn TextActions, resp: ModelResponse) -> Next {
        let reply = t.parse_reply(
            &resp.text(),
            &self.state.history,
            self.state.tools.spec_slice(),
        );
        // The response has no calls of its own; those its text names follow its messages.
        let mut parts: Vec<Part<ToolCall>> = resp
            .parts
            .into_iter()
            .filter_map(|p| match p {
                Part::Message(m) => Some(Part::Message(m)),
                Part::Call(_) => None,
            })
            .collect();
        if let TextReply::Calls(calls) = &reply {
            parts.extend(calls.iter().cloned().map(Part::Call));
        }
        self.push_history(HistoryItem::Assistant(AssistantReply {
            parts,
            reasoning: resp.reasoning,
            signed_reasoning: resp.signed_reasoning,
        }));
        match reply {
            TextReply::Calls(calls) => Next::Run(calls.into_iter().map(|c| (c, Ok(()))).collect()),
            TextReply::Correction(text) => {
                self.push_history(HistoryItem::User {
                    text,
                    images: vec![],
                    synthetic: true,
                });
                Next::Again {
                    limit: t.max_corrections(),
                }
            }
            TextReply::Finish => Next::End(match resp.finish_reason {
                FinishReason::ContentFilter => TurnEndReason::Refusal,
                _ => TurnEndReason::Completed,
            }),
        }
    }

    /// Runs a response's calls. Consecutive calls that only read (reads, searches, fetches,
    /// subagents) run together; the others run alone, in order. Results go back in the order
    /// of the calls either way.
    async fn run_calls(&mut self, calls: Vec<CheckedCall>, cancel: &CancellationToken) {
        self.settle_before().await;
        let mut calls = calls.into_iter().peekable();
        let mut images = Vec::new();
        while let Some(first) = calls.next() {
            let mut group = vec![first];
            if self.config.parallel_tool_calls && self.runs_alongside(&group[0]) {
                while let Some(next) = calls.next_if(|c| self.runs_alongside(c)) {
                    group.push(next);
                }
            }
            images.extend(self.run_group(group, cancel).await);
        }
        // Images a call read go in a message after all the results: no wire takes a message
        // between two results, and not every wire takes an image in a result.
        for (call_id, urls) in images {
            self.push_history(HistoryItem::User {
                text: format!("The image read by tool call {call_id}:"),
                images: urls,
                synthetic: true,
            });
        }
    }

    /// Whether a call may run at the same time as its neighbours: it only reads, by what the
    /// tool says of it, or it starts a subagent (which has its own session).
    fn runs_alongside(&self, (call, checked): &CheckedCall) -> bool {
        let Some(tool) = self.state.tools.get(&call.name) else {
            return false;
        };
        if checked.is_err() {
            return false;
        }
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        tool.starts_subagent()
            || matches!(
                tool.describe(&args, &self.services.workspace).kind,
                ToolKind::Read | ToolKind::Search | ToolKind::Fetch
            )
    }

    /// Runs a group of calls (see [`Self::run_calls`]); returns the images they read, by call.
    async fn run_group(
        &mut self,
        group: Vec<CheckedCall>,
        cancel: &CancellationToken,
    ) -> Vec<(String, Vec<String>)> {
        let mut images = Vec::new();
        let mut slots = Vec::with_capacity(group.len());
        let mut runs = Vec::new();
        for (call, checked) in group {
            let slot = match cancel.is_cancelled() {
                true => Slot::Cancelled,
                false => match self.start_call(&call, checked, cancel).await {
                    Started::Done(outcome) => Slot::Done(outcome),
                    Started::Run { run, subagents } => {
                        runs.push(run);
                        Slot::Ran(subagents)
                    }
                },
            };
            slots.push((call, slot));
        }
        let mut ran = futures::future::join_all(runs).await.into_iter();
        for (call, slot) in slots {
            let outcome = match slot {
                Slot::Cancelled => {
                    ToolOutcome::error("The user cancelled the turn before this tool call ran.")
                }
                Slot::Done(outcome) => self.end_call(&call, outcome, None, false, cancel).await,
                Slot::Ran(subagents) => {
                    let outcome = ran.next().expect("one outcome per run");
                    self.end_call(&call, outcome, subagents, true, cancel).await
                }
            };
            self.push_history(HistoryItem::ToolResult {
                call_id: call.id.clone(),
                output: outcome.model_output.clone(),
                is_error: outcome.is_error(),
            });
            if !outcome.images.is_empty() {
                images.push((call.id.clone(), outcome.images));
            }
        }
        images
    }

    /// How a call shows up: the tool's own description, or a plain one for unknown tools.
    pub(super) fn describe_call(&self, name: &str, args: &Value) -> CallDescription {
        match self.state.tools.get(name) {
            Some(t) => t.describe(args, &self.services.workspace),
            None => CallDescription {
                kind: ToolKind::Other,
                title: name.to_string(),
                locations: vec![],
                command: None,
            },
        }
    }

    /// Announces a call and makes its run, which owns all it needs; a call that cannot run
    /// (bad arguments, an unknown tool) is done at once.
    async fn start_call(
        &mut self,
        call: &ToolCall,
        checked: Result<(), String>,
        cancel: &CancellationToken,
    ) -> Started {
        let mut args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let d = self.describe_call(&call.name, &args);
        let starts_subagent = self
            .state
            .tools
            .get(&call.name)
            .is_some_and(|t| t.starts_subagent());
        let view = super::hooks::call_view(&call.name, &args, &d, starts_subagent);
        let (kind, locations) = (d.kind, d.locations.clone());
        self.services
            .events
            .send(Event::ToolCallBegin(ToolCallBegin {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                kind: d.kind,
                title: d.title,
                input: args.clone(),
                locations: d.locations,
                command: d.command,
                subagent: None,
            }));
        let tool = self.state.tools.get(&call.name).cloned();
        // Only a tool that starts subagents gets a runner (it copies the session's parts).
        let subagents = (self.parent_id.is_none()
            && tool.as_ref().is_some_and(|t| t.starts_subagent()))
        .then(|| Arc::new(SubagentRunner::new(self, &call.id, &args)));
        self.note_tool_for_checkpoint(kind, subagents.is_some());
        let tool = match (checked, tool) {
            (Err(e), _) => return Started::Done(ToolOutcome::error(e)),
            (Ok(()), None) => {
                return Started::Done(ToolOutcome::error(format!(
                    "Tool `{}` does not exist. Available tools: {}.",
                    call.name,
                    self.state.tools.names().join(", ")
                )));
            }
            (Ok(()), Some(tool)) => tool,
        };
        let context = match self.pre_tool_hooks(&view, &call.id, cancel).await {
            Err(why) => return Started::Done(ToolOutcome::declined(why)),
            Ok((updated, context)) => {
                if let Some(updated) = updated {
                    args = updated;
                }
                context
            }
        };
        self.diagnostics_before(kind, &locations, cancel).await;
        let ctx = self.tool_context(cancel.child_token(), call.id.clone(), subagents.clone());
        let name = call.name.clone();
        let span = spans::tool_call(&call.name, &call.id);
        let call_span = span.clone();
        let run = async move {
            // A tool that panics fails its call; the session goes on.
            let mut outcome = AssertUnwindSafe(tool.run(args, &ctx))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    tracing::error!(tool = %name, "tool panicked");
                    ToolOutcome::error(format!("The tool `{name}` failed with an internal error."))
                });
            for c in context {
                outcome
                    .model_output
                    .push_str(&format!("\n\nPreToolUse hook additional context: {c}"));
            }
            spans::end_tool_call(&call_span, outcome.is_error());
            outcome
        };
        Started::Run {
            run: Box::pin(run.instrument(span)),
            subagents,
        }
    }

    /// What follows a call's run: its effects on the session, its end event, and the
    /// editor's diagnostics of what it changed.
    async fn end_call(
        &mut self,
        call: &ToolCall,
        mut outcome: ToolOutcome,
        subagents: Option<Arc<SubagentRunner>>,
        ran: bool,
        cancel: &CancellationToken,
    ) -> ToolOutcome {
        if let Some(runner) = subagents {
            self.add_subagent_usage(runner.usage());
        }
        if let Some(plan) = &outcome.plan {
            self.services.events.send(Event::PlanUpdated(plan.clone()));
        }
        if outcome.mode_change == Some(crate::tools::ModeChange::StopTurn) {
            cancel.cancel();
        }
        if let Some(crate::tools::ModeChange::RevertTurns(n)) = outcome.mode_change {
            outcome = self.revert_turns(n).await;
        }
        // Each session's folder is its own: a subagent's move is its own too.
        if let Some(crate::tools::ModeChange::Worktree(m)) = outcome.mode_change.clone()
            && let Err(e) = self.move_worktree(m)
        {
            outcome = ToolOutcome::error(e);
        }
        // A subagent's mode is its own; only the session the user drives changes.
        if let Some(change) = outcome.mode_change.clone()
            && self.parent_id.is_none()
        {
            self.change_mode(change);
        }
        self.remember_detail(&call.id, &outcome);
        self.services.events.send(Event::ToolCallEnd(ToolCallEnd {
            call_id: call.id.clone(),
            status: outcome.status,
            output: outcome.user_output.clone(),
            exit_code: outcome.exit_code,
            changes: outcome.changes.clone(),
        }));
        if outcome.status == ToolStatus::Failed {
            tracing::debug!(tool = %call.name, "tool call failed");
        }
        // After the card is done: the editor may take a moment to settle.
        let found = self.diagnostics_after(&outcome.changes, cancel).await;
        outcome.model_output.push_str(&found);
        // A call the policy or the user declined did not run: no PostToolUse.
        if ran && outcome.status != ToolStatus::Declined {
            let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
            let d = self.describe_call(&call.name, &args);
            let view = super::hooks::call_view(&call.name, &args, &d, false);
            for note in self
                .post_tool_hooks(&view, &call.id, &outcome.model_output, cancel)
                .await
            {
                outcome.model_output.push_str("\n\n");
                outcome.model_output.push_str(&note);
            }
        }
        outcome
    }

    pub(super) fn tool_context(
        &self,
        cancel: CancellationToken,
        call_id: String,
        subagents: Option<Arc<SubagentRunner>>,
    ) -> ToolContext {
        ToolContext {
            workspace: self.services.workspace.clone(),
            policy: self.services.policy.clone(),
            approver: self.services.approver.clone(),
            runner: self.services.runner.clone(),
            events: self.services.events.clone(),
            cancel,
            call_id,
            output_token_limit: self.config.tool_output_token_limit,
            subagents: subagents.map(|s| s as Arc<dyn crate::tools::Subagents>),
            plan_mode: self.state.plan_saved.is_some(),
            asks: self.services.asks.clone(),
            tasks: self.services.tasks.clone(),
            web: self.config.web.clone(),
            model_images: catalog::model_info(&self.config.model).images,
            schedule: self.services.schedule.clone(),
            goal: self.state.goal.clone(),
            evidence: self.services.evidence.clone(),
            task_list: self.services.task_list.clone(),
            shell: self.services.shell.clone(),
            worktree: self.state.worktree.clone(),
            browser: self.services.browser.clone(),
        }
    }

    /// Logs what a call changed so a later load can show its diff and plan.
    fn remember_detail(&mut self, call_id: &str, outcome: &ToolOutcome) {
        if self.parent_id.is_some() || (outcome.changes.is_empty() && outcome.plan.is_none()) {
            return;
        }
        // Whole-file texts make exact diffs but must not bloat the log.
        const MAX_TEXT: usize = 256 * 1024;
        let size: usize = outcome
            .changes
            .iter()
            .map(|c| {
                c.old_text.as_ref().map_or(0, String::len)
                    + c.new_text.as_ref().map_or(0, String::len)
            })
            .sum();
        let changes: Vec<_> = if size > MAX_TEXT {
            outcome
                .changes
                .iter()
                .map(|c| interpreter_protocol::FileChange {
                    old_text: None,
                    new_text: None,
                    ..c.clone()
                })
                .collect()
        } else {
            outcome.changes.clone()
        };
        self.log_line(&LogLine::ToolDetail {
            call_id: call_id.to_string(),
            changes: changes.clone(),
            plan: outcome.plan.clone(),
        });
        self.state.details.insert(
            call_id.to_string(),
            crate::store::ToolDetail {
                changes,
                plan: outcome.plan.clone(),
            },
        );
    }

    pub(super) fn account(&mut self, u: &interpreter_protocol::TokenUsage) {
        self.state.context_used = u.input_tokens + u.output_tokens;
        self.state.total_usage.add(u);
        self.send_token_count(*u);
    }

    /// A subagent's tokens count for the session (its context does not).
    pub(super) fn add_subagent_usage(&mut self, u: interpreter_protocol::TokenUsage) {
        if u == Default::default() {
            return;
        }
        self.state.total_usage.add(&u);
        self.send_token_count(u);
    }

    fn send_token_count(&self, last: interpreter_protocol::TokenUsage) {
        let info = catalog::model_info(&self.config.model);
        let cost = info.price.map(|(input, cached, output)| {
            let t = &self.state.total_usage;
            let uncached = t.input_tokens.saturating_sub(t.cached_input_tokens) as f64;
            (uncached * input
                + t.cached_input_tokens as f64 * cached
                + t.output_tokens as f64 * output)
                / 1_000_000.0
        });
        self.services.events.send(Event::TokenCount(TokenCount {
            last,
            total: self.state.total_usage,
            context_used: self.state.context_used,
            context_window: self.context_window(),
            cost_usd: cost,
        }));
    }
}

/// Parses tool arguments leniently: empty means `{}`, raw control characters inside strings
/// are tolerated. Anything that is still not a JSON object is an error for the model.
/// A call off the wire as history keeps it: broken arguments become `{}` and an error for the
/// model.
fn check_call(raw: RawToolCall) -> CheckedCall {
    match parse_arguments(&raw.arguments) {
        Ok(v) => (
            ToolCall {
                id: raw.id,
                name: raw.name,
                arguments: v.to_string(),
            },
            Ok(()),
        ),
        Err(e) => {
            let error = format!(
                "Error parsing JSON arguments for `{}`: {e}. Send the arguments again as one valid JSON object.",
                raw.name
            );
            (
                ToolCall {
                    id: raw.id,
                    name: raw.name,
                    arguments: "{}".into(),
                },
                Err(error),
            )
        }
    }
}

/// What a face has been shown of one response: each message gets its own id (the first the
/// response's, the next ones numbered after it) and its deltas as they came. Its whole text
/// goes out once the next message begins, or when the response ends; the stream's own word
/// that a message is done is held until then, since an attempt that breaks is retried and the
/// retry streams that message again. Reasoning that streamed ends when the first message begins.
struct ShownMessages {
    events: super::EventSink,
    response_id: String,
    /// Reasoning streamed so far, while it is not shown whole.
    reasoning: Option<String>,
    reasoning_done: bool,
    /// Messages whose whole text went out.
    done: Vec<usize>,
    /// A message the stream finished, shown whole when the next one begins.
    held: Option<(usize, String, Option<MessagePhase>)>,
    /// The message the stream is in.
    current: usize,
}

impl ShownMessages {
    fn new(events: super::EventSink) -> Self {
        ShownMessages {
            events,
            response_id: uuid::Uuid::now_v7().to_string(),
            reasoning: None,
            reasoning_done: false,
            done: Vec::new(),
            held: None,
            current: 0,
        }
    }

    fn message_id(&self, message: usize) -> String {
        match message {
            0 => self.response_id.clone(),
            n => format!("{}-{n}", self.response_id),
        }
    }

    fn delta(&mut self, d: StreamDelta) {
        match d {
            StreamDelta::Text { message, text } => {
                self.enter(message);
                self.events.send(Event::AgentMessageDelta {
                    message_id: self.message_id(message),
                    delta: text,
                })
            }
            StreamDelta::Reasoning(delta) => {
                self.reasoning
                    .get_or_insert_with(String::new)
                    .push_str(&delta);
                self.events.send(Event::ReasoningDelta {
                    message_id: self.response_id.clone(),
                    delta,
                })
            }
            StreamDelta::MessageDone {
                message,
                text,
                phase,
            } => {
                self.enter(message);
                self.held = Some((message, text, phase));
            }
            StreamDelta::HostedSearch { id, action } => self.hosted_search(id, action),
        }
    }

    /// A search the provider ran: a finished `web_search` call for the faces.
    fn hosted_search(&self, id: String, action: serde_json::Value) {
        let s = |k: &str| action.get(k).and_then(serde_json::Value::as_str);
        let title = match s("type") {
            Some("open_page") => format!("Open {}", s("url").unwrap_or("a page")),
            Some("find_in_page") => format!("Find `{}` in a page", s("pattern").unwrap_or("")),
            _ => format!("Search the web: {}", s("query").unwrap_or("")),
        };
        self.events
            .send(Event::ToolCallBegin(interpreter_protocol::ToolCallBegin {
                call_id: id.clone(),
                tool: "web_search".into(),
                kind: ToolKind::Fetch,
                title,
                input: action,
                locations: Vec::new(),
                command: None,
                subagent: None,
            }));
        self.events
            .send(Event::ToolCallEnd(interpreter_protocol::ToolCallEnd {
                call_id: id,
                status: interpreter_protocol::ToolStatus::Completed,
                output: String::new(),
                exit_code: None,
                changes: Vec::new(),
            }));
    }

    /// The stream is in `message` now: what came before it is whole. A message that went back
    /// (a retried attempt) starts over under fresh ids.
    fn enter(&mut self, message: usize) {
        self.end_reasoning();
        if message < self.current || self.done.contains(&message) {
            self.response_id = uuid::Uuid::now_v7().to_string();
            self.done.clear();
            self.held = None;
        }
        self.current = message;
        if self.held.as_ref().is_some_and(|(m, _, _)| *m != message)
            && let Some((m, text, phase)) = self.held.take()
        {
            self.message(m, text, phase);
        }
    }

    /// The streamed reasoning, whole, once a message follows it.
    fn end_reasoning(&mut self) {
        if let Some(text) = self.reasoning.take() {
            self.reasoning_done = true;
            self.show_reasoning(text);
        }
    }

    fn show_reasoning(&self, text: String) {
        if !text.trim().is_empty() {
            self.events.send(Event::Reasoning {
                message_id: self.response_id.clone(),
                text,
            });
        }
    }

    fn message(&mut self, message: usize, text: String, phase: Option<MessagePhase>) {
        if self.done.contains(&message) {
            return;
        }
        self.done.push(message);
        self.events.send(Event::AgentMessage {
            message_id: self.message_id(message),
            text,
            phase,
        });
    }

    /// The reasoning, and every message not shown whole yet, as the response has them.
    fn finish(&mut self, resp: &ModelResponse) {
        if !self.reasoning_done {
            self.reasoning = None;
            self.show_reasoning(resp.reasoning.clone().unwrap_or_default());
        }
        self.held = None;
        for (k, m) in resp.messages().enumerate() {
            self.message(k, m.text.clone(), m.phase);
        }
    }
}

fn parse_arguments(raw: &str) -> Result<Value, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let parsed = serde_json::from_str::<Value>(trimmed).or_else(|first| {
        let escaped = escape_control_chars(trimmed);
        serde_json::from_str::<Value>(&escaped).map_err(|_| first)
    });
    match parsed {
        Ok(v @ Value::Object(_)) => Ok(v),
        // Some models double-encode: a JSON string holding the object.
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err("the arguments are a string, not a JSON object".into()),
        },
        Ok(other) => Err(format!("expected a JSON object, got {other}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Escapes raw newlines, tabs and other control characters that appear inside JSON strings.
fn escape_control_chars(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in s.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if (c as u32) < 0x20 {
                out.push_str(&format!("\\u{:04x}", c as u32));
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

/// What was spent between two readings of the session's total.
fn usage_since(
    now: interpreter_protocol::TokenUsage,
    before: interpreter_protocol::TokenUsage,
) -> interpreter_protocol::TokenUsage {
    interpreter_protocol::TokenUsage {
        input_tokens: now.input_tokens.saturating_sub(before.input_tokens),
        cached_input_tokens: now
            .cached_input_tokens
            .saturating_sub(before.cached_input_tokens),
        output_tokens: now.output_tokens.saturating_sub(before.output_tokens),
        reasoning_output_tokens: now
            .reasoning_output_tokens
            .saturating_sub(before.reasoning_output_tokens),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_arguments() {
        assert_eq!(parse_arguments("").unwrap(), serde_json::json!({}));
        assert_eq!(parse_arguments("{\"a\":\"x\ny\"}").unwrap()["a"], "x\ny");
        assert_eq!(parse_arguments("\"{\\\"a\\\":1}\"").unwrap()["a"], 1);
        assert!(parse_arguments("{\"a\":").is_err());
        assert!(parse_arguments("[1]").is_err());
    }
}
