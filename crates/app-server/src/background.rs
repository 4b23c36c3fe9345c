//! Background tasks (`Bash` with `run_in_background`, `exec_command` sessions) as Codex shows
//! a background terminal: a `commandExecution` item with the task as its `processId`, started
//! when the task starts, its output as `item/commandExecution/outputDelta`, and completed when
//! the task ends, under the turn that started it, even when that turn is over.

use interpreter_protocol::{BackgroundStatus, BackgroundTask};
use serde_json::json;

use super::state::{TaskItem, ThreadShared, ThreadState};
use super::wire::{Item, ItemStatus, now_ms};

/// Output an item keeps, at most (the task's file has all of it).
const MAX_TAIL: usize = 64 * 1024;

fn item_id(task_id: &str) -> String {
    format!("background-{task_id}")
}

impl ThreadShared {
    pub(crate) fn background_task(&self, st: &mut ThreadState, t: BackgroundTask) {
        let id = item_id(&t.task_id);
        if t.status == BackgroundStatus::Running {
            if st.tasks.contains_key(&t.task_id) {
                return;
            }
            let Some(turn_id) = st
                .current_turn()
                .or_else(|| st.turns.last().map(|t| t.id.clone()))
            else {
                return;
            };
            let task = TaskItem {
                turn_id,
                command: t.command.clone(),
                cwd: st.cwd().display().to_string(),
                started_ms: now_ms(),
                tail: String::new(),
            };
            let item = task.item(&id, &t.task_id, ItemStatus::InProgress, None);
            self.out.notify(
                "item/started",
                json!({"threadId": self.id, "turnId": task.turn_id, "item": item, "startedAtMs": now_ms()}),
            );
            st.tasks.insert(t.task_id, task);
            return;
        }
        let Some(task) = st.tasks.remove(&t.task_id) else {
            return;
        };
        let status = match t.status {
            BackgroundStatus::Completed => ItemStatus::Completed,
            _ => ItemStatus::Failed,
        };
        let item = task.item(&id, &t.task_id, status, t.exit_code);
        let value = item.to_value();
        self.out.notify(
            "item/completed",
            json!({"threadId": self.id, "turnId": task.turn_id, "item": value, "completedAtMs": now_ms()}),
        );
        if let Some(turn) = st.active.as_mut().filter(|a| a.id == task.turn_id) {
            turn.completed.push(value);
        }
    }

    pub(crate) fn background_output(&self, st: &mut ThreadState, task_id: &str, chunk: &str) {
        let Some(task) = st.tasks.get_mut(task_id) else {
            return;
        };
        task.tail.push_str(chunk);
        if task.tail.len() > MAX_TAIL {
            let mut cut = task.tail.len() - MAX_TAIL;
            while !task.tail.is_char_boundary(cut) {
                cut += 1;
            }
            task.tail.drain(..cut);
        }
        self.out.notify(
            "item/commandExecution/outputDelta",
            json!({"threadId": self.id, "turnId": task.turn_id,
                   "itemId": item_id(task_id), "delta": chunk}),
        );
    }
}

impl TaskItem {
    fn item(&self, id: &str, task_id: &str, status: ItemStatus, exit_code: Option<i32>) -> Item {
        let done = status != ItemStatus::InProgress;
        Item::CommandExecution {
            id: id.to_string(),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            process_id: Some(task_id.to_string()),
            status,
            command_actions: vec![json!({"type": "unknown", "command": self.command})],
            aggregated_output: done.then(|| self.tail.clone()),
            exit_code,
            duration_ms: done.then(|| now_ms() - self.started_ms),
        }
    }
}
