//! Codex's interactive sessions: `exec_command` runs a command and waits up to a yield time;
//! one still running becomes a session the model types into with `write_stdin` (REPLs,
//! servers, prompts). Sessions are background tasks (`tools::background`): confined and
//! approved like any command, nothing they start outlives them or the session. Also
//! `view_image`. `tty` runs the command on a pseudo-terminal (Unix; pipes on Windows).

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{WORDING, describe_shell};
use crate::tools::background::{Start, TaskRecord};
use crate::tools::table::{FnTool, Tool, ToolError, ToolResult, spec, str_arg, str_or_empty};
use crate::tools::truncate::{approx_tokens, truncate_middle};
use crate::tools::{CallDescription, ToolContext, ToolOutcome, apply_patch};

const DEFAULT_YIELD_MS: u64 = 10_000;
const MIN_YIELD_MS: u64 = 250;
const MAX_YIELD_MS: u64 = 30_000;
/// An empty `write_stdin` (a poll) waits at least this long, at most the longer bound.
const MIN_POLL_MS: u64 = 5_000;
const MAX_POLL_MS: u64 = 300_000;
const DEFAULT_MAX_OUTPUT_TOKENS: usize = 10_000;
/// A session lives at most this long.
const SESSION_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

pub(super) fn exec_command() -> Arc<dyn Tool> {
    FnTool::plain(
        WORDING,
        spec(
            "exec_command",
            "Runs a command in a shell and returns its output. If it is still running after yield_time_ms it keeps running as a session: send it input or poll it with write_stdin.",
            json!({"type": "object", "properties": {
                "cmd": {"type": "string", "description": "Shell command to execute."},
                "workdir": {"type": "string", "description": "Optional working directory to run the command in; defaults to the turn cwd."},
                "tty": {"type": "boolean", "description": "Whether to allocate a TTY for the command. Defaults to false (plain pipes)."},
                "yield_time_ms": {"type": "number", "description": "How long to wait (in milliseconds) for output before yielding."},
                "max_output_tokens": {"type": "number", "description": "Maximum number of tokens to return. Excess output will be truncated."}
            }, "required": ["cmd"], "additionalProperties": false}),
        ),
        |a, ws| {
            let mut d = describe_shell(&json!({"command": str_or_empty(a, "cmd")}), ws);
            d.kind = ToolKind::Execute;
            d
        },
        |a, c| Box::pin(run_exec_command(c, a)),
    )
}

pub(super) fn write_stdin() -> Arc<dyn Tool> {
    FnTool::plain(
        WORDING,
        spec(
            "write_stdin",
            "Writes characters to an existing exec_command session and returns recent output. Send empty chars to poll.",
            json!({"type": "object", "properties": {
                "session_id": {"type": "number", "description": "Identifier of the running exec_command session."},
                "chars": {"type": "string", "description": "Bytes to write to stdin (may be empty to poll)."},
                "yield_time_ms": {"type": "number", "description": "How long to wait (in milliseconds) for output before yielding."},
                "max_output_tokens": {"type": "number", "description": "Maximum number of tokens to return. Excess output will be truncated."}
            }, "required": ["session_id"], "additionalProperties": false}),
        ),
        |a, _| {
            let id = a
                .get("session_id")
                .map(Value::to_string)
                .unwrap_or_default();
            CallDescription::new(ToolKind::Execute, format!("Write to session {id}"), vec![])
        },
        |a, c| Box::pin(run_write_stdin(c, a)),
    )
}

pub(super) fn view_image() -> Arc<dyn Tool> {
    FnTool::plain(
        WORDING,
        spec(
            "view_image",
            "View a local image from the filesystem (only use if given a full filepath by the user, and the image isn't already attached to the thread context within <image ...> tags).",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Local filesystem path to an image file"}
            }, "required": ["path"], "additionalProperties": false}),
        ),
        |a, ws| {
            CallDescription::new(
                ToolKind::Read,
                format!("View {}", str_or_empty(a, "path")),
                crate::tools::table::location(ws, a, "path"),
            )
        },
        |a, c| {
            Box::pin(async move {
                let path = str_arg(&a, "path").unwrap_or_default().to_string();
                crate::harness::media_tools::image_outcome(
                    c,
                    &path,
                    crate::tools::media::WIDE_FIT,
                    None,
                )
                .await
            })
        },
    )
}

fn millis(args: &Value, key: &str) -> Option<u64> {
    args.get(key)
        .and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64)))
}

fn max_tokens(args: &Value) -> usize {
    millis(args, "max_output_tokens").map_or(DEFAULT_MAX_OUTPUT_TOKENS, |n| n.max(1) as usize)
}

async fn run_exec_command(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(cmd) = str_arg(&args, "cmd").filter(|c| !c.trim().is_empty()) else {
        return Err(ToolError::message(
            "exec_command needs a non-empty `cmd` string",
        ));
    };
    // A patch sent through the shell goes to the patch machinery, as `shell` does it.
    if apply_patch::parse_shell_invocation(cmd).is_some() {
        let mut shell_args = json!({"command": cmd});
        if let Some(w) = args.get("workdir") {
            shell_args["workdir"] = w.clone();
        }
        return super::run_shell(ctx, shell_args).await;
    }
    let cwd = ctx.workspace.resolve_dir(str_arg(&args, "workdir"))?;
    let wait = millis(&args, "yield_time_ms")
        .unwrap_or(DEFAULT_YIELD_MS)
        .clamp(MIN_YIELD_MS, MAX_YIELD_MS);
    let started = Instant::now();
    let task = ctx
        .start_task(Start {
            tool: "exec_command",
            command: cmd,
            description: "",
            cwd: &cwd,
            timeout: SESSION_LIFETIME,
            interactive: true,
            tty: args.get("tty").and_then(Value::as_bool).unwrap_or(false),
            quiet: true,
        })
        .await?;
    Ok(answer(
        ctx,
        &task.id,
        Duration::from_millis(wait),
        started,
        max_tokens(&args),
    )
    .await)
}

async fn run_write_stdin(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(n) = millis(&args, "session_id") else {
        return Err(ToolError::message(
            "write_stdin needs a numeric `session_id`",
        ));
    };
    let id = format!("b{n}");
    let chars = str_arg(&args, "chars").unwrap_or_default();
    let started = Instant::now();
    let wait = match chars.is_empty() {
        true => millis(&args, "yield_time_ms")
            .unwrap_or(MIN_POLL_MS)
            .clamp(MIN_POLL_MS, MAX_POLL_MS),
        false => {
            ctx.tasks.send_input(&id, chars.as_bytes()).map_err(|e| {
                ToolError::message(e.replace(&format!("Process {id}"), &format!("Session {n}")))
            })?;
            millis(&args, "yield_time_ms")
                .unwrap_or(MIN_YIELD_MS)
                .clamp(MIN_YIELD_MS, MAX_YIELD_MS)
        }
    };
    if ctx.tasks.get(&id).is_none() {
        return Err(ToolError::message(format!("Unknown session id {n}")));
    }
    Ok(answer(
        ctx,
        &id,
        Duration::from_millis(wait),
        started,
        max_tokens(&args),
    )
    .await)
}

/// Waits up to `wait` for session `id` to end, then says what it printed since last asked.
async fn answer(
    ctx: &ToolContext,
    id: &str,
    wait: Duration,
    started: Instant,
    max_tokens: usize,
) -> ToolOutcome {
    tokio::select! {
        _ = ctx.tasks.wait(id, wait) => {}
        _ = ctx.cancel.cancelled() => {}
    }
    // Output that came with the exit may still be on its way in: give it a moment.
    let Some((task, output)) = ctx.tasks.read_new(id) else {
        return ToolOutcome::error(format!("Unknown session id {}", id.trim_start_matches('b')));
    };
    let mut text = format!(
        "Chunk ID: {}\nWall time: {:.4} seconds\n",
        chunk_id(),
        started.elapsed().as_secs_f64()
    );
    let status = status_line(&task);
    text.push_str(&status);
    text.push('\n');
    let tokens = approx_tokens(&output);
    if tokens > max_tokens {
        let _ = writeln!(text, "Original token count: {tokens}");
    }
    let _ = write!(text, "Output:\n{}", truncate_middle(&output, max_tokens));
    let mut outcome = ToolOutcome::ok(text);
    outcome.user_output = output;
    outcome.exit_code = task.exit_code;
    outcome
}

fn status_line(task: &TaskRecord) -> String {
    match (task.running(), task.exit_code) {
        (true, _) => format!(
            "Process running with session ID {}",
            task.id.trim_start_matches('b')
        ),
        (false, Some(code)) => format!("Process exited with code {code}"),
        (false, None) => format!("Process {}", task.outcome()),
    }
}

fn chunk_id() -> String {
    let id = uuid::Uuid::new_v4();
    id.simple().to_string()[..6].to_string()
}
