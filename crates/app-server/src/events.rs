//! Core events → app-server notifications, inside the session's event sink: they leave in
//! the order the core produced them, and `turn/completed` is the last message of its turn.

use interpreter_protocol::{Event, TurnEndReason, TurnEnded};
use serde_json::{Value, json};

use super::items::{self, ToolItem};
use super::state::{ThreadShared, ThreadState, TurnState};
use super::wire::{Item, ItemStatus, TokenBreakdown, Turn, TurnError, TurnStatus, now_ms};
use interpreter_face::view::SessionView;

impl ThreadShared {
    /// Translates one event. Runs in the session's task; holds the thread's state briefly.
    pub(crate) fn event(&self, e: Event) {
        let mut st = self.state();
        match &e {
            Event::SessionConfigured(c) => st.view = Some(SessionView::new(c.clone())),
            other => {
                if let Some(v) = st.view.as_mut() {
                    v.observe(other);
                }
            }
        }
        match e {
            Event::TurnStarted { turn_id } => self.turn_started(&mut st, turn_id),
            Event::TurnEnded(ended) => self.turn_ended(&mut st, ended),
            Event::Transcript(items) => {
                if let Some(tx) = st.transcript.take() {
                    let _ = tx.send(items);
                }
            }
            Event::Undone(report) => st.last_undo = Some(report),
            Event::GoalUpdated { goal, turn_id } => {
                self.out.notify(
                    "thread/goal/updated",
                    json!({"threadId": self.id, "turnId": turn_id,
                           "goal": super::wire::goal_json(&self.id, &goal)}),
                );
                st.goal = Some(goal);
            }
            Event::GoalCleared => {
                st.goal = None;
                self.out
                    .notify("thread/goal/cleared", json!({"threadId": self.id}));
            }
            Event::TitleChanged { title } => self.out.notify(
                "thread/name/updated",
                json!({"threadId": self.id, "threadName": title}),
            ),
            // The protocol's HookEventName has no `notification`: those runs are not sent.
            Event::HookStarted { turn_id, run } | Event::HookCompleted { turn_id, run }
                if run.event_name != "Notification" =>
            {
                let method = match run.status {
                    interpreter_protocol::HookRunStatus::Running => "hook/started",
                    _ => "hook/completed",
                };
                self.out.notify(
                    method,
                    json!({"threadId": self.id, "turnId": turn_id,
                           "run": super::wire::hook_run_json(&run)}),
                );
            }
            Event::Warning { message } | Event::Error { message } => self
                .out
                .notify("warning", json!({"threadId": self.id, "message": message})),
            Event::ApprovalRequested(req) => {
                let Some(turn) = st.active.as_ref() else {
                    return;
                };
                let turn_id = turn.id.clone();
                let cwd = st.cwd();
                st.waiting_on_approval += 1;
                super::approvals::ask(self, &turn_id, &cwd, req);
            }
            Event::McpServers { servers } => {
                for s in &servers {
                    self.mcp_startup(s);
                }
            }
            Event::McpServerUpdated(s) => self.mcp_startup(&s),
            Event::BackgroundTask(t) => self.background_task(&mut st, t),
            Event::BackgroundTaskOutput { task_id, chunk } => {
                self.background_output(&mut st, &task_id, &chunk)
            }
            Event::QuestionAsked(req) => {
                if let Some(turn) = st.active.as_ref() {
                    super::questions::ask(self, &turn.id, &req);
                }
            }
            e => {
                let cwd = st.cwd();
                if let Some(turn) = st.active.as_mut() {
                    self.turn_event(turn, &cwd, e);
                }
            }
        }
    }

    /// `mcpServer/startupStatus/updated`, as each server starts, is ready or fails.
    fn mcp_startup(&self, s: &interpreter_protocol::McpServerInfo) {
        if let Some(params) = super::wire::mcp_startup_json(&self.id, s) {
            self.out.notify("mcpServer/startupStatus/updated", params);
        }
    }

    fn turn_started(&self, st: &mut ThreadState, turn_id: String) {
        let input = st.queued.remove(&turn_id).unwrap_or_default();
        let mut turn = TurnState::new(turn_id.clone());
        if st.preview.is_empty() {
            st.preview = items::preview(&input);
        }
        let started = Turn {
            id: turn_id.clone(),
            items: vec![],
            status: TurnStatus::InProgress,
            error: None,
            started_at: Some(turn.started_ms / 1000),
            completed_at: None,
            duration_ms: None,
        };
        self.out.notify(
            "turn/started",
            json!({"threadId": self.id, "turn": started}),
        );
        if !input.is_empty() {
            let item = Item::UserMessage {
                id: format!("{turn_id}-user"),
                content: input,
            };
            self.item_started(&turn, &item);
            self.item_completed(&mut turn, &item);
        }
        if let Some(review) = st.reviews.remove(&turn_id) {
            // A review shows what it reviews, not its prompt (Codex's review mode).
            let item = Item::EnteredReviewMode {
                id: format!("{turn_id}-review"),
                review,
            };
            self.item_started(&turn, &item);
            self.item_completed(&mut turn, &item);
            turn.review = true;
        }
        st.turns.push(started);
        st.active = Some(turn);
    }

    /// Input added to the running turn (`turn/steer`) shows as a user message of that turn.
    pub(crate) fn steered(&self, st: &mut ThreadState, input: Vec<Value>) {
        let Some(turn) = st.active.as_mut() else {
            return;
        };
        let item = Item::UserMessage {
            id: format!("{}-steer-{}", turn.id, turn.completed.len()),
            content: input,
        };
        self.item_started(turn, &item);
        self.item_completed(turn, &item);
    }

    fn item_started(&self, turn: &TurnState, item: &Item) {
        self.out.notify(
            "item/started",
            json!({"threadId": self.id, "turnId": turn.id, "item": item, "startedAtMs": now_ms()}),
        );
    }

    fn item_completed(&self, turn: &mut TurnState, item: &Item) {
        let value = item.to_value();
        self.out.notify(
            "item/completed",
            json!({"threadId": self.id, "turnId": turn.id, "item": value, "completedAtMs": now_ms()}),
        );
        turn.completed.push(value);
    }

    fn notify_turn(&self, turn: &TurnState, method: &str, mut params: Value) {
        if let Some(obj) = params.as_object_mut() {
            obj.insert("threadId".into(), json!(self.id));
            obj.insert("turnId".into(), json!(turn.id));
        }
        self.out.notify(method, params);
    }

    fn turn_event(&self, turn: &mut TurnState, cwd: &std::path::Path, e: Event) {
        match e {
            Event::AgentMessageDelta { message_id, delta } => {
                self.message_delta(turn, &message_id, &delta)
            }
            Event::AgentMessage {
                message_id,
                text,
                phase,
            } => {
                let id = items::message_id(&message_id);
                if turn.streaming.remove(&id).is_none() {
                    self.release_held(turn, Some("commentary"));
                    let item = Item::AgentMessage {
                        id: id.clone(),
                        text: String::new(),
                        phase: None,
                    };
                    self.item_started(turn, &item);
                }
                match phase {
                    // The provider said what it is.
                    Some(phase) => {
                        let phase = Some(phase.as_str());
                        self.item_completed(turn, &Item::AgentMessage { id, text, phase });
                    }
                    // Final or commentary: known once the next thing happens.
                    None => turn.held_message = Some((id, text)),
                }
            }
            Event::ReasoningDelta { message_id, delta } => {
                self.reasoning_delta(turn, &message_id, &delta)
            }
            Event::Reasoning { message_id, text } => self.reasoning(turn, &message_id, text),
            Event::ToolCallBegin(b) => {
                self.release_held(turn, Some("commentary"));
                let tool = ToolItem::begin(&b, cwd);
                self.item_started(turn, &tool.item(None));
                turn.tools.insert(b.call_id.clone(), tool);
            }
            Event::ToolCallOutputDelta { call_id, chunk }
                if turn.tools.get(&call_id).is_some_and(ToolItem::is_command) =>
            {
                self.notify_turn(
                    turn,
                    "item/commandExecution/outputDelta",
                    json!({"itemId": call_id, "delta": chunk}),
                );
            }
            Event::SubagentStarted(s) => {
                let item = self.subagent_item(&s.call_id, &s.session_id, Some(s.prompt), None);
                self.item_started(turn, &item);
            }
            Event::SubagentEnded(s) => {
                let item =
                    self.subagent_item(&s.call_id, &s.session_id, None, Some((s.state, s.summary)));
                self.item_completed(turn, &item);
            }
            Event::ToolCallEnd(end) => {
                if let Some(tool) = turn.tools.remove(&end.call_id) {
                    let item = tool.item(Some(&end));
                    self.item_completed(turn, &item);
                }
            }
            other => self.turn_state_event(turn, other),
        }
    }

    /// The collab item of a subagent: running, or how it ended with its last message.
    fn subagent_item(
        &self,
        call_id: &str,
        session_id: &str,
        prompt: Option<String>,
        ended: Option<(interpreter_protocol::SubagentState, String)>,
    ) -> Item {
        use interpreter_protocol::SubagentState;
        let (status, agent, message) = match ended {
            None => (ItemStatus::InProgress, "running", None),
            Some((SubagentState::Completed, m)) => (ItemStatus::Completed, "completed", Some(m)),
            Some((SubagentState::Failed, m)) => (ItemStatus::Failed, "errored", Some(m)),
            Some((SubagentState::Cancelled, m)) => (ItemStatus::Failed, "interrupted", Some(m)),
        };
        let mut agents_states = std::collections::BTreeMap::new();
        agents_states.insert(
            session_id.to_string(),
            json!({"status": agent, "message": message}),
        );
        Item::CollabAgentToolCall {
            id: format!("{call_id}-agent"),
            tool: "spawnAgent",
            status,
            sender_thread_id: self.id.clone(),
            receiver_thread_ids: vec![session_id.to_string()],
            prompt,
            model: None,
            reasoning_effort: None,
            agents_states,
        }
    }

    /// Plans, token counts, diffs and compaction: the turn's state, not its items' text.
    fn turn_state_event(&self, turn: &mut TurnState, e: Event) {
        match e {
            Event::PlanUpdated(plan) => self.notify_turn(
                turn,
                "turn/plan/updated",
                json!({"explanation": plan.explanation, "plan": items::plan_steps(&plan)}),
            ),
            Event::TokenCount(t) => self.notify_turn(
                turn,
                "thread/tokenUsage/updated",
                json!({"tokenUsage": {
                    "total": TokenBreakdown::from(t.total),
                    "last": TokenBreakdown::from(t.last),
                    "modelContextWindow": t.context_window,
                }}),
            ),
            Event::Diff { unified_diff } => {
                self.notify_turn(turn, "turn/diff/updated", json!({"diff": unified_diff}))
            }
            Event::ContextCompacting { compaction_id } => {
                self.item_started(turn, &Item::ContextCompaction { id: compaction_id });
            }
            Event::ContextCompacted { compaction_id, .. } => {
                self.item_completed(turn, &Item::ContextCompaction { id: compaction_id });
                self.notify_turn(turn, "thread/compacted", json!({}));
            }
            _ => {}
        }
    }

    fn message_delta(&self, turn: &mut TurnState, message_id: &str, delta: &str) {
        self.release_held(turn, Some("commentary"));
        let id = items::message_id(message_id);
        if !turn.streaming.contains_key(&id) {
            turn.streaming.insert(id.clone(), String::new());
            let item = Item::AgentMessage {
                id: id.clone(),
                text: String::new(),
                phase: None,
            };
            self.item_started(turn, &item);
        }
        if let Some(text) = turn.streaming.get_mut(&id) {
            text.push_str(delta);
        }
        self.notify_turn(
            turn,
            "item/agentMessage/delta",
            json!({"itemId": id, "delta": delta}),
        );
    }

    fn reasoning_delta(&self, turn: &mut TurnState, message_id: &str, delta: &str) {
        let id = items::reasoning_id(message_id);
        if !turn.streaming.contains_key(&id) {
            turn.streaming.insert(id.clone(), String::new());
            let item = Item::Reasoning {
                id: id.clone(),
                summary: vec![],
                content: vec![],
            };
            self.item_started(turn, &item);
        }
        if let Some(text) = turn.streaming.get_mut(&id) {
            text.push_str(delta);
        }
        self.notify_turn(
            turn,
            "item/reasoning/textDelta",
            json!({"itemId": id, "delta": delta, "contentIndex": 0}),
        );
    }

    fn reasoning(&self, turn: &mut TurnState, message_id: &str, text: String) {
        let id = items::reasoning_id(message_id);
        if turn.streaming.remove(&id).is_none() {
            let item = Item::Reasoning {
                id: id.clone(),
                summary: vec![],
                content: vec![],
            };
            self.item_started(turn, &item);
        }
        let item = Item::Reasoning {
            id,
            summary: vec![],
            content: vec![text],
        };
        self.item_completed(turn, &item);
    }

    /// Completes a held answer with the phase what followed it gave it.
    fn release_held(&self, turn: &mut TurnState, phase: Option<&'static str>) {
        if let Some((id, text)) = turn.held_message.take() {
            self.item_completed(turn, &Item::AgentMessage { id, text, phase });
        }
    }

    fn turn_ended(&self, st: &mut ThreadState, ended: TurnEnded) {
        // The core starts every turn it ends; anything else is not this thread's turn.
        if st.active.as_ref().is_none_or(|t| t.id != ended.turn_id) {
            tracing::debug!(
                "app-server: end of turn {} that is not running",
                ended.turn_id
            );
            return;
        }
        let Some(mut turn) = st.active.take() else {
            return;
        };
        let (status, error) = match &ended.reason {
            TurnEndReason::Completed | TurnEndReason::MaxTokens | TurnEndReason::Refusal => {
                (TurnStatus::Completed, None)
            }
            TurnEndReason::Cancelled => (TurnStatus::Interrupted, None),
            TurnEndReason::MaxTurnRequests => (
                TurnStatus::Failed,
                Some("the turn reached max_turn_requests without a final answer".to_string()),
            ),
            TurnEndReason::Failed { message } => (TurnStatus::Failed, Some(message.clone())),
        };
        let final_phase = (status == TurnStatus::Completed).then_some("final_answer");
        self.release_held(&mut turn, final_phase);
        self.close_open_items(&mut turn);
        if turn.review {
            self.exit_review(&mut turn, &st.cwd());
        }
        for (request_id, approval) in self.approvals.drop_turn(&self.id, &turn.id) {
            if approval {
                st.waiting_on_approval = st.waiting_on_approval.saturating_sub(1);
            }
            self.out.notify(
                "serverRequest/resolved",
                json!({"threadId": self.id, "requestId": request_id}),
            );
        }
        if let Some(message) = &error {
            self.out.notify(
                "error",
                json!({"threadId": self.id, "turnId": turn.id, "willRetry": false,
                       "error": {"message": message}}),
            );
        }
        let now = now_ms();
        let done = Turn {
            id: turn.id.clone(),
            items: vec![],
            status,
            error: error.map(|message| TurnError { message }),
            started_at: Some(turn.started_ms / 1000),
            completed_at: Some(now / 1000),
            duration_ms: Some(now - turn.started_ms),
        };
        self.out
            .notify("turn/completed", json!({"threadId": self.id, "turn": done}));
        if let Some(record) = st.turns.iter_mut().rev().find(|t| t.id == turn.id) {
            *record = Turn {
                items: std::mem::take(&mut turn.completed),
                ..done
            };
        }
    }

    /// A review turn's last item: its findings as text, from the model's last answer (as the
    /// model wrote it when that is not findings JSON).
    fn exit_review(&self, turn: &mut TurnState, cwd: &std::path::Path) {
        let answer = turn
            .completed
            .iter()
            .rev()
            .find(|i| i["type"] == "agentMessage")
            .and_then(|i| i["text"].as_str())
            .unwrap_or_default()
            .to_string();
        let review = match interpreter_face::review::parse_answer(&answer) {
            Ok(r) => interpreter_face::review::render_text(&r, &cwd.to_string_lossy()),
            Err(_) => answer,
        };
        let item = Item::ExitedReviewMode {
            id: format!("{}-review-done", turn.id),
            review,
        };
        self.item_started(turn, &item);
        self.item_completed(turn, &item);
    }

    /// Items a cancelled or failed turn left open end with it.
    fn close_open_items(&self, turn: &mut TurnState) {
        let mut streaming: Vec<(String, String)> = turn.streaming.drain().collect();
        streaming.sort();
        for (id, text) in streaming {
            let item = if items::is_reasoning_id(&id) {
                Item::Reasoning {
                    id,
                    summary: vec![],
                    content: vec![text],
                }
            } else {
                Item::AgentMessage {
                    id,
                    text,
                    phase: None,
                }
            };
            self.item_completed(turn, &item);
        }
        let tools: Vec<ToolItem> = turn.tools.drain().map(|(_, t)| t).collect();
        for tool in tools {
            let item = tool.cancelled();
            self.item_completed(turn, &item);
        }
    }

    /// A turn whose session ended without its `TurnEnded` (the session task is gone).
    pub(crate) fn turn_lost(&self, turn_id: &str, message: &str) {
        let mut st = self.state();
        if st.queued.contains_key(turn_id) && st.active.is_none() {
            self.turn_started(&mut st, turn_id.to_string());
        }
        if st.active.as_ref().is_some_and(|t| t.id == turn_id) {
            let ended = TurnEnded {
                turn_id: turn_id.to_string(),
                reason: TurnEndReason::Failed {
                    message: message.to_string(),
                },
            };
            self.turn_ended(&mut st, ended);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Pending;
    use crate::transport::Outbound;
    use interpreter_protocol::{ToolCallBegin, ToolKind};
    use std::sync::Arc;

    fn thread() -> (
        Arc<ThreadShared>,
        tokio::sync::mpsc::UnboundedReceiver<String>,
    ) {
        let (out, rx) = Outbound::new();
        let t = ThreadShared::new(
            "th".into(),
            out,
            Arc::new(Pending::default()),
            false,
            "appServer",
            0,
        );
        t.state()
            .queued
            .insert("u1".into(), vec![json!({"type": "text", "text": "hi"})]);
        (t, rx)
    }

    fn drain(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(line) = rx.try_recv() {
            out.push(serde_json::from_str(&line).unwrap());
        }
        out
    }

    fn methods(msgs: &[Value]) -> Vec<String> {
        msgs.iter()
            .map(|m| {
                let kind = m["params"]["item"]["type"]
                    .as_str()
                    .map(|t| format!(":{t}"))
                    .unwrap_or_default();
                format!("{}{kind}", m["method"].as_str().unwrap_or(""))
            })
            .collect()
    }

    #[test]
    fn a_turn_that_panics_mid_tool_still_ends_with_turn_completed() {
        let (t, mut rx) = thread();
        t.event(Event::TurnStarted {
            turn_id: "u1".into(),
        });
        t.event(Event::AgentMessage {
            message_id: "m1".into(),
            text: "Let me look.".into(),
            phase: None,
        });
        t.event(Event::ToolCallBegin(ToolCallBegin {
            call_id: "c1".into(),
            tool: "shell".into(),
            kind: ToolKind::Execute,
            title: "ls".into(),
            input: json!({"command": "ls"}),
            locations: vec![],
            command: Some("ls".into()),
            subagent: None,
        }));
        t.event(Event::TurnEnded(TurnEnded {
            turn_id: "u1".into(),
            reason: TurnEndReason::Failed {
                message: "internal error: the turn panicked; the session has stopped".into(),
            },
        }));
        let msgs = drain(&mut rx);
        assert_eq!(
            methods(&msgs),
            [
                "turn/started",
                "item/started:userMessage",
                "item/completed:userMessage",
                "item/started:agentMessage",
                "item/completed:agentMessage",
                "item/started:commandExecution",
                "item/completed:commandExecution",
                "error",
                "turn/completed",
            ]
        );
        assert_eq!(msgs[4]["params"]["item"]["phase"], "commentary");
        assert_eq!(msgs[6]["params"]["item"]["status"], "failed");
        let done = &msgs[8]["params"]["turn"];
        assert_eq!(done["status"], "failed");
        assert!(
            done["error"]["message"]
                .as_str()
                .unwrap()
                .contains("panicked")
        );
        // A second end for the same turn (the ticket watcher) adds nothing.
        t.turn_lost("u1", "the session has ended");
        assert!(drain(&mut rx).is_empty());
        let st = t.state();
        assert_eq!(
            st.turns[0].items.len(),
            3,
            "the turn's items are kept for thread/read"
        );
    }

    #[test]
    fn the_last_answer_is_final_and_a_lost_turn_is_completed() {
        let (t, mut rx) = thread();
        t.event(Event::TurnStarted {
            turn_id: "u1".into(),
        });
        t.event(Event::AgentMessageDelta {
            message_id: "m1".into(),
            delta: "Done".into(),
        });
        t.event(Event::AgentMessage {
            message_id: "m1".into(),
            text: "Done".into(),
            phase: None,
        });
        t.event(Event::TurnEnded(TurnEnded {
            turn_id: "u1".into(),
            reason: TurnEndReason::Completed,
        }));
        let msgs = drain(&mut rx);
        let answer = msgs
            .iter()
            .find(|m| {
                m["method"] == "item/completed" && m["params"]["item"]["type"] == "agentMessage"
            })
            .unwrap();
        assert_eq!(answer["params"]["item"]["phase"], "final_answer");
        assert_eq!(
            msgs.last().unwrap()["params"]["turn"]["status"],
            "completed"
        );
        // A queued turn whose session went away gets its start and its end.
        t.state().queued.insert("u2".into(), vec![]);
        t.turn_lost("u2", "the session has ended");
        let msgs = drain(&mut rx);
        assert_eq!(methods(&msgs), ["turn/started", "error", "turn/completed"]);
    }
}
