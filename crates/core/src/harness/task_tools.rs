//! The background-task tools of Claude Code and Kimi Code (`TaskOutput`, `TaskStop`,
//! `TaskList`) and their texts: what `Bash` with `run_in_background` answers, and the
//! `<task-notification>` the next request carries when a task ends.

use interpreter_protocol::{BackgroundStatus, ToolKind};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use crate::tools::background::TaskRecord;
use crate::tools::table::{FnTool, Tool, ToolError, ToolResult, Wording, spec, str_arg};
use crate::tools::{CallDescription, ToolContext, ToolOutcome};

/// Whose conventions a tool follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Claude Code: `timeout` in milliseconds, `block` true by default.
    Claude,
    /// Kimi Code: `timeout` in seconds, `block` false by default.
    Kimi,
}

/// Output shown by `TaskOutput` (Kimi Code previews 32 KiB).
const OUTPUT_PREVIEW_BYTES: usize = 32 * 1024;
/// What a notification carries of the output (Kimi Code: the last 20 lines, 3,000 chars).
const NOTIFICATION_TAIL_LINES: usize = 20;
const NOTIFICATION_TAIL_CHARS: usize = 3_000;
/// How long `TaskStop` waits for a stopped task's end to be recorded.
const STOP_WAIT: Duration = Duration::from_secs(10);
/// The longest `TaskOutput` may block.
const MAX_BLOCK: Duration = Duration::from_secs(600);

/// What `Bash` answers when it started a task in the background.
pub(crate) fn started(flavor: Flavor, t: &TaskRecord) -> String {
    match flavor {
        Flavor::Claude => format!(
            "Command running in background with ID: {}. Output is being written to: {}. You will be notified when it completes. To check interim output, use TaskOutput with this ID.",
            t.id,
            t.output_path.display()
        ),
        Flavor::Kimi => format!(
            "Command started in the background as task {}. Its output goes to {}. You will be notified when it finishes; use TaskOutput to see its output before then, and TaskStop to stop it.",
            t.id,
            t.output_path.display()
        ),
    }
}

/// The message the model gets in its next request when a task ended (Claude Code's format;
/// Kimi Code's adds the end of the output).
pub(crate) fn notification(flavor: Flavor, t: &TaskRecord) -> String {
    let what = match t.description.trim() {
        "" => t.command.as_str(),
        d => d,
    };
    let mut text = format!(
        "<task-notification>\n<task-id>{}</task-id>\n<tool-use-id>{}</tool-use-id>\n<output-file>{}</output-file>\n<status>{}</status>\n<summary>Background command \"{what}\" {}</summary>\n",
        t.id,
        t.call_id,
        t.output_path.display(),
        status_word(t.status),
        t.outcome(),
    );
    if flavor == Flavor::Kimi {
        let _ = writeln!(
            text,
            "<output-tail>\n{}\n</output-tail>",
            notification_tail(t)
        );
    }
    text.push_str("</task-notification>");
    text
}

fn notification_tail(t: &TaskRecord) -> String {
    let tail = t.tail(NOTIFICATION_TAIL_CHARS * 4);
    let lines: Vec<&str> = tail.lines().collect();
    let last = lines[lines.len().saturating_sub(NOTIFICATION_TAIL_LINES)..].join("\n");
    last[last.ceil_char_boundary(last.len().saturating_sub(NOTIFICATION_TAIL_CHARS))..].to_string()
}

fn status_word(s: BackgroundStatus) -> &'static str {
    match s {
        BackgroundStatus::Running => "running",
        BackgroundStatus::Completed => "completed",
        BackgroundStatus::Failed => "failed",
        BackgroundStatus::Stopped => "killed",
    }
}

fn task_id(args: &Value) -> Result<&str, ToolError> {
    str_arg(args, "task_id")
        .or_else(|| str_arg(args, "shell_id"))
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| ToolError::message("`task_id` is required."))
}

/// `TaskOutput`: a task's status and output, waiting for its end when asked to block.
pub(crate) fn task_output(flavor: Flavor, wording: Wording) -> Arc<dyn Tool> {
    let (timeout, block_default) = match flavor {
        Flavor::Claude => (
            json!({"type": "number", "default": 30000, "minimum": 0, "maximum": 600000, "description": "Max wait time in ms"}),
            true,
        ),
        Flavor::Kimi => (
            json!({"type": "integer", "default": 30, "minimum": 0, "maximum": 600, "description": "Seconds to wait when blocking"}),
            false,
        ),
    };
    let spec = spec(
        "TaskOutput",
        "Get the output and status of a background task (a command started with run_in_background). With block, wait until it finishes or the timeout passes. You are told when a task finishes, so there is no need to poll.",
        json!({"type": "object", "properties": {
            "task_id": {"type": "string", "description": "The task ID"},
            "block": {"type": "boolean", "default": block_default, "description": "Wait for the task to finish"},
            "timeout": timeout
        }, "required": ["task_id"], "additionalProperties": false}),
    );
    let run: crate::tools::table::RunFn = match flavor {
        Flavor::Claude => |a, c| Box::pin(run_task_output(c, a, Flavor::Claude)),
        Flavor::Kimi => |a, c| Box::pin(run_task_output(c, a, Flavor::Kimi)),
    };
    FnTool::plain(
        wording,
        spec,
        |a, _| {
            CallDescription::new(
                ToolKind::Read,
                format!(
                    "Task output {}",
                    crate::tools::table::str_or_empty(a, "task_id")
                ),
                vec![],
            )
        },
        run,
    )
}

async fn run_task_output(ctx: &ToolContext, args: Value, flavor: Flavor) -> ToolResult {
    let id = task_id(&args)?;
    let block = args
        .get("block")
        .and_then(Value::as_bool)
        .unwrap_or(flavor == Flavor::Claude);
    let wait = match (flavor, args.get("timeout").and_then(Value::as_f64)) {
        (Flavor::Claude, t) => Duration::from_millis(t.unwrap_or(30_000.0).max(0.0) as u64),
        (Flavor::Kimi, t) => Duration::from_secs_f64(t.unwrap_or(30.0).max(0.0)),
    }
    .min(MAX_BLOCK);
    let task = match block {
        true => {
            tokio::select! {
                t = ctx.tasks.wait(id, wait) => t,
                _ = ctx.cancel.cancelled() => ctx.tasks.get(id),
            }
        }
        false => ctx.tasks.get(id),
    };
    let Some(task) = task else {
        return Err(ToolError::message(ctx.tasks.unknown(id)));
    };
    if !task.running() {
        ctx.tasks.mark_notified(id);
    }
    let retrieval = match task.running() {
        true => "not_ready",
        false => "complete",
    };
    let mut text = format!(
        "<retrieval_status>{retrieval}</retrieval_status>\n\n<task_id>{}</task_id>\n\n<task_type>local_bash</task_type>\n\n<status>{}</status>\n\n",
        task.id,
        status_word(task.status)
    );
    if let Some(code) = task.exit_code {
        let _ = write!(text, "<exit_code>{code}</exit_code>\n\n");
    }
    let output = task.tail(OUTPUT_PREVIEW_BYTES);
    let shown = if task.output_bytes as usize > output.len() {
        format!(
            "[{} earlier bytes are in {}]\n{output}",
            task.output_bytes as usize - output.len(),
            task.output_path.display()
        )
    } else {
        output
    };
    let _ = write!(text, "<output>\n{}\n</output>", shown.trim_end());
    Ok(ToolOutcome::ok(text))
}

/// `TaskStop`: stops a running task.
pub(crate) fn task_stop(flavor: Flavor, wording: Wording) -> Arc<dyn Tool> {
    let mut properties = json!({"task_id": {"type": "string", "description": "The ID of the background task to stop"}});
    match flavor {
        Flavor::Claude => {
            properties["shell_id"] =
                json!({"type": "string", "description": "Deprecated: use task_id"});
        }
        Flavor::Kimi => {
            properties["reason"] =
                json!({"type": "string", "description": "Why the task is stopped"});
        }
    }
    let required: &[&str] = match flavor {
        Flavor::Claude => &[],
        Flavor::Kimi => &["task_id"],
    };
    let spec = spec(
        "TaskStop",
        "Stop a running background task by its ID. Everything the command started is stopped with it.",
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false}),
    );
    let run: crate::tools::table::RunFn = match flavor {
        Flavor::Claude => |a, c| Box::pin(run_task_stop(c, a, Flavor::Claude)),
        Flavor::Kimi => |a, c| Box::pin(run_task_stop(c, a, Flavor::Kimi)),
    };
    FnTool::plain(
        wording,
        spec,
        |a, _| {
            let id = str_arg(a, "task_id").or_else(|| str_arg(a, "shell_id"));
            CallDescription::new(
                ToolKind::Execute,
                format!("Stop task {}", id.unwrap_or_default()),
                vec![],
            )
        },
        run,
    )
}

async fn run_task_stop(ctx: &ToolContext, args: Value, flavor: Flavor) -> ToolResult {
    let id = task_id(&args)?;
    let task = ctx.tasks.stop(id).map_err(ToolError::message)?;
    // Its tree is killed at once; waiting for the end makes the answer (and a second stop)
    // true.
    let task = ctx.tasks.wait(id, STOP_WAIT).await.unwrap_or(task);
    let text = match flavor {
        Flavor::Claude => json!({
            "message": format!("Successfully stopped task: {} ({})", task.id, task.command),
            "task_id": task.id,
            "task_type": "local_bash",
            "command": task.command,
        })
        .to_string(),
        Flavor::Kimi => format!("Task {} ({}) was stopped.", task.id, task.command),
    };
    Ok(ToolOutcome::ok(text))
}

/// `TaskList` (Kimi Code): the session's tasks, the running ones by default.
pub(crate) fn task_list(wording: Wording) -> Arc<dyn Tool> {
    let spec = spec(
        "TaskList",
        "List the background tasks of this session: ID, status, command and output file.",
        json!({"type": "object", "properties": {
            "active_only": {"type": "boolean", "default": true, "description": "Only tasks still running"},
            "limit": {"type": "integer", "default": 20, "minimum": 1, "maximum": 100}
        }, "additionalProperties": false}),
    );
    FnTool::plain(
        wording,
        spec,
        |_, _| CallDescription::new(ToolKind::Read, "List tasks".into(), vec![]),
        |a, c| Box::pin(async move { run_task_list(c, &a) }),
    )
}

fn run_task_list(ctx: &ToolContext, args: &Value) -> ToolResult {
    let active_only = args
        .get("active_only")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(20)
        .clamp(1, 100) as usize;
    let tasks: Vec<TaskRecord> = ctx
        .tasks
        .list()
        .into_iter()
        .filter(|t| !active_only || t.running())
        .collect();
    if tasks.is_empty() {
        return Ok(ToolOutcome::ok(match active_only {
            true => "No background tasks are running.",
            false => "No background tasks were started in this session.",
        }));
    }
    let skipped = tasks.len().saturating_sub(limit);
    let mut text = String::new();
    for t in tasks.iter().skip(skipped) {
        let _ = writeln!(
            text,
            "{}\t{}\t{}\t{}",
            t.id,
            status_word(t.status),
            t.command,
            t.output_path.display()
        );
    }
    if skipped > 0 {
        let _ = writeln!(text, "({skipped} older tasks not shown)");
    }
    Ok(ToolOutcome::ok(text.trim_end()))
}
