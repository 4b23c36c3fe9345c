//! Background tasks as tool calls of their own (`background-<task id>`): `in_progress` while
//! the task runs, with its live output (Zed's display terminal when the client has one, else
//! the end of the output as the call's content), then completed or failed when it ends. They
//! may come between prompts: a task outlives the turn that started it.

use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallUpdate, ToolCallUpdateFields};
use interpreter_protocol::{BackgroundStatus, BackgroundTask, ToolCallBegin, ToolCallEnd};
use interpreter_protocol::{ToolKind, ToolStatus};
use serde_json::json;

use super::content::text_content;
use super::updates::Translator;

/// The end of a task's output shown in its card.
const SHOWN_TAIL: usize = 16 * 1024;

/// The tool call id of task `task_id`.
fn call_id(task_id: &str) -> String {
    format!("background-{task_id}")
}

impl Translator {
    pub(super) fn background_task(&self, t: BackgroundTask) {
        let id = call_id(&t.task_id);
        if t.status == BackgroundStatus::Running {
            let what = match t.description.trim() {
                "" => t.command.clone(),
                d => d.to_string(),
            };
            self.begin(ToolCallBegin {
                call_id: id.clone(),
                tool: "Bash".into(),
                kind: ToolKind::Execute,
                title: format!("{what} (background)"),
                input: json!({
                    "command": t.command,
                    "task_id": t.task_id,
                    "output_file": t.output_path,
                }),
                locations: vec![],
                command: Some(t.command),
                subagent: None,
            });
            self.mark_running(&id);
            return;
        }
        let output = self.take_background_tail(&id);
        self.end(ToolCallEnd {
            call_id: id,
            status: match t.status {
                BackgroundStatus::Completed => ToolStatus::Completed,
                _ => ToolStatus::Failed,
            },
            output,
            exit_code: t.exit_code,
            changes: vec![],
        });
    }

    pub(super) fn background_output(&self, task_id: &str, chunk: &str) {
        let id = call_id(task_id);
        if self.shows_terminal_output() {
            self.terminal_output_chunk(&id, chunk);
            return;
        }
        let tail = self.push_background_tail(&id, chunk, SHOWN_TAIL);
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id,
            ToolCallUpdateFields::new().content(vec![text_content(&format!(
                "```console\n{}\n```",
                tail.trim_end()
            ))]),
        )));
    }
}
