//! Codex `exec --experimental-json` events: the exact names, fields and order the Codex SDK
//! parses. Only this writer touches stdout in JSON mode. Items get synthetic ids (`item_0`,
//! `item_1`, …) in the order they start.

use interpreter_protocol::{
    Event, FileChangeKind, HookRunStatus, PlanStatus, TokenUsage, ToolCallBegin, ToolKind,
    ToolStatus, TurnEndReason,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;

pub(super) struct JsonlWriter<W: Write> {
    out: W,
    next_id: u64,
    /// Tool calls shown as items: call id → (item id, command).
    open_commands: HashMap<String, (String, String)>,
    edits: HashMap<String, ()>,
    /// Web searches shown as items: call id → (item id, query, action).
    searches: HashMap<String, (String, String, Value)>,
    todo: Option<(String, Value)>,
    pub last_message: Option<String>,
}

/// Tools shown as Codex's `web_search` item: its hosted search, and the harnesses' own.
fn is_web_search(tool: &str) -> bool {
    matches!(
        tool,
        "web_search" | "WebSearch" | "$web_search" | "websearch"
    )
}

impl<W: Write> JsonlWriter<W> {
    pub(super) fn new(out: W) -> Self {
        JsonlWriter {
            out,
            next_id: 0,
            open_commands: HashMap::new(),
            edits: HashMap::new(),
            searches: HashMap::new(),
            todo: None,
            last_message: None,
        }
    }

    fn line(&mut self, v: Value) {
        // A closed stdout (the reader went away) must not crash the run.
        let _ = writeln!(self.out, "{v}");
        let _ = self.out.flush();
    }

    fn new_id(&mut self) -> String {
        let id = format!("item_{}", self.next_id);
        self.next_id += 1;
        id
    }

    pub(super) fn thread_started(&mut self, thread_id: &str) {
        self.line(json!({"type": "thread.started", "thread_id": thread_id}));
    }

    pub(super) fn error(&mut self, message: &str) {
        self.line(json!({"type": "error", "message": message}));
    }

    /// A tool call that Codex shows from its start: a command, an edit, a web search.
    fn tool_begun(&mut self, b: &ToolCallBegin) {
        match b.kind {
            ToolKind::Execute => {
                let id = self.new_id();
                let command = b.command.clone().unwrap_or_else(|| b.title.clone());
                self.line(json!({"type": "item.started", "item": {
                    "id": id, "type": "command_execution", "command": command,
                    "aggregated_output": "", "exit_code": null, "status": "in_progress"}}));
                self.open_commands.insert(b.call_id.clone(), (id, command));
            }
            ToolKind::Edit | ToolKind::Delete | ToolKind::Move => {
                self.edits.insert(b.call_id.clone(), ());
            }
            ToolKind::Fetch if is_web_search(&b.tool) => {
                let id = self.new_id();
                let query = b.input["query"].as_str().unwrap_or("").to_string();
                let action = match b.input.get("type") {
                    Some(_) => b.input.clone(),
                    None => json!({"type": "search", "query": query}),
                };
                self.line(json!({"type": "item.started", "item": {
                    "id": id, "type": "web_search", "query": query, "action": action}}));
                self.searches.insert(b.call_id.clone(), (id, query, action));
            }
            _ => {}
        }
    }

    pub(super) fn event(&mut self, e: &Event) {
        match e {
            Event::TurnStarted { .. } => self.line(json!({"type": "turn.started"})),
            Event::Reasoning { text, .. } if !text.trim().is_empty() => {
                let id = self.new_id();
                self.line(json!({"type": "item.completed",
                    "item": {"id": id, "type": "reasoning", "text": text}}));
            }
            Event::AgentMessage { text, .. } => {
                let id = self.new_id();
                self.last_message = Some(text.clone());
                self.line(json!({"type": "item.completed",
                    "item": {"id": id, "type": "agent_message", "text": text}}));
            }
            Event::ToolCallBegin(b) => self.tool_begun(b),
            Event::ToolCallEnd(end) => {
                if let Some((id, query, action)) = self.searches.remove(&end.call_id) {
                    self.line(json!({"type": "item.completed", "item": {
                        "id": id, "type": "web_search", "query": query, "action": action}}));
                } else if let Some((id, command)) = self.open_commands.remove(&end.call_id) {
                    let status = match (end.status, end.exit_code) {
                        (ToolStatus::Declined, _) => "declined",
                        (ToolStatus::Completed, _) => "completed",
                        (ToolStatus::Failed, _) => "failed",
                    };
                    self.line(json!({"type": "item.completed", "item": {
                        "id": id, "type": "command_execution", "command": command,
                        "aggregated_output": end.output, "exit_code": end.exit_code,
                        "status": status}}));
                } else if self.edits.remove(&end.call_id).is_some() {
                    let changes: Vec<Value> = end
                        .changes
                        .iter()
                        .map(|c| {
                            let kind = match c.kind {
                                FileChangeKind::Add => "add",
                                FileChangeKind::Delete => "delete",
                                FileChangeKind::Update => "update",
                            };
                            let path = c.move_path.as_ref().unwrap_or(&c.path);
                            json!({"path": path.display().to_string(), "kind": kind})
                        })
                        .collect();
                    let status = if end.status == ToolStatus::Completed {
                        "completed"
                    } else {
                        "failed"
                    };
                    let id = self.new_id();
                    self.line(json!({"type": "item.completed", "item": {
                        "id": id, "type": "file_change", "changes": changes, "status": status}}));
                }
            }
            Event::PlanUpdated(plan) => {
                let items: Vec<Value> = plan
                    .items
                    .iter()
                    .map(
                        |i| json!({"text": i.step, "completed": i.status == PlanStatus::Completed}),
                    )
                    .collect();
                match self.todo.take() {
                    None => {
                        let id = self.new_id();
                        self.line(json!({"type": "item.started", "item": {
                            "id": id, "type": "todo_list", "items": items}}));
                        self.todo = Some((id, Value::Array(items)));
                    }
                    Some((id, _)) => {
                        self.line(json!({"type": "item.updated", "item": {
                            "id": id, "type": "todo_list", "items": items}}));
                        self.todo = Some((id, Value::Array(items)));
                    }
                }
            }
            Event::Warning { message } => self.error(message),
            // A hook that blocked, failed or stopped the turn is a non-fatal error item, as
            // a warning is; one that ran quietly or added context is not shown.
            Event::HookCompleted { run, .. } if run.status != HookRunStatus::Completed => {
                if let Some(l) = interpreter_face::hooks::completed_line(run) {
                    self.error(&l);
                }
            }
            _ => {}
        }
    }

    /// Closes open items, then `turn.completed` or `turn.failed` (nothing when interrupted).
    pub(super) fn turn_ended(&mut self, reason: &TurnEndReason, usage: TokenUsage) {
        if let Some((id, items)) = self.todo.take() {
            self.line(json!({"type": "item.completed", "item": {
                "id": id, "type": "todo_list", "items": items}}));
        }
        let failed = |msg: String| json!({"type": "turn.failed", "error": {"message": msg}});
        match reason {
            TurnEndReason::Completed | TurnEndReason::MaxTokens | TurnEndReason::Refusal => {
                self.line(json!({"type": "turn.completed", "usage": {
                    "input_tokens": usage.input_tokens,
                    "cached_input_tokens": usage.cached_input_tokens,
                    "cache_write_input_tokens": 0,
                    "output_tokens": usage.output_tokens,
                    "reasoning_output_tokens": usage.reasoning_output_tokens}}));
            }
            TurnEndReason::Failed { message } => {
                let v = failed(message.clone());
                self.line(v)
            }
            TurnEndReason::MaxTurnRequests => {
                let v = failed("the turn reached max_turn_requests without a final answer".into());
                self.line(v)
            }
            TurnEndReason::Cancelled => {}
        }
    }
}
