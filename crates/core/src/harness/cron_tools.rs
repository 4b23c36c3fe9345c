//! `CronCreate`, `CronList` and `CronDelete`, as Claude Code and Kimi Code name them, and
//! Claude Code's `ScheduleWakeup`; the schedule is `tools::schedule`'s, and the session runs
//! due jobs when idle.

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;

use crate::tools::schedule::Job;
use crate::tools::table::{FnTool, Tool, ToolError, Wording, spec, str_arg, str_or_empty};
use crate::tools::{CallDescription, ToolOutcome};

/// ScheduleWakeup's delay is held to this range, in seconds, as the original's runtime does.
const WAKEUP_RANGE: std::ops::RangeInclusive<u64> = 60..=3600;

/// How a job runs: its cron expression, or `wakeup` for a one-shot ScheduleWakeup.
fn when(j: &Job) -> String {
    match &j.wakeup {
        Some(_) => "wakeup".into(),
        None => format!("`{}`", j.cron),
    }
}

/// ScheduleWakeup: `prompt` runs once, `delaySeconds` from now, as a new turn.
pub(crate) fn schedule_wakeup(wording: Wording) -> Arc<dyn Tool> {
    FnTool::plain(
        wording,
        spec(
            "ScheduleWakeup",
            "Come back to a task later: `prompt` runs once as a new turn of this session, \
             `delaySeconds` from now (kept between 60 and 3600), when the session is idle. Use it \
             to pace a loop of checks yourself (a build, a deploy, a queue): pass the same prompt \
             each time to continue, and leave the call out to stop. Pick the delay from what you \
             are waiting for, not a round number; for idle checks 20-30 minutes is enough. \
             `reason` is one specific sentence the user sees (\"checking the long build\").",
            json!({"type": "object", "properties": {
                "delaySeconds": {"type": "number", "description": "Seconds from now to wake up. Clamped to [60, 3600]."},
                "reason": {"type": "string", "description": "One short sentence explaining the chosen delay, shown to the user. Be specific."},
                "prompt": {"type": "string", "maxLength": crate::tools::schedule::MAX_PROMPT_BYTES, "description": "The prompt to run on wake-up; pass the same one each time to continue a loop."}
            }, "required": ["delaySeconds", "reason", "prompt"], "additionalProperties": false}),
        ),
        |a, _| {
            CallDescription::new(
                ToolKind::Think,
                format!("Wake up later: {}", str_or_empty(a, "reason")),
                vec![],
            )
        },
        |a, c| {
            Box::pin(async move {
                let Some(asked) = a.get("delaySeconds").and_then(Value::as_f64) else {
                    return Err(ToolError::message(
                        "InputValidationError: ScheduleWakeup failed due to the following issue:\nThe required parameter `delaySeconds` is missing or is not a number",
                    ));
                };
                let secs = (asked.max(0.0).round() as u64)
                    .clamp(*WAKEUP_RANGE.start(), *WAKEUP_RANGE.end());
                let reason = str_arg(&a, "reason").unwrap_or_default().trim();
                let prompt = str_arg(&a, "prompt").unwrap_or_default();
                let job = c
                    .schedule
                    .wakeup(
                        chrono::Duration::seconds(secs as i64),
                        reason,
                        prompt,
                        chrono::Local::now(),
                    )
                    .map_err(ToolError::message)?;
                Ok(ToolOutcome::ok(format!(
                    "Scheduled wakeup in {secs} s: {reason} (job {}, at {}). It runs while this session stays open.",
                    job.id,
                    job.next.format("%H:%M:%S")
                )))
            })
        },
    )
}

/// The three tools, in name order.
pub(crate) fn cron_tools(wording: Wording) -> [Arc<dyn Tool>; 3] {
    [
        FnTool::plain(
            wording,
            spec(
                "CronCreate",
                "Schedule a prompt to run in this session on a cron schedule (five fields: minute hour day-of-month month day-of-week, local time), for checks and reminders such as `*/30 * * * *` (every 30 minutes) or `0 9 * * 1-5` (9:00 on weekdays). The prompt runs as a new turn when the session is idle. Recurring jobs end after 7 days; set recurring to false to run once.",
                json!({"type": "object", "properties": {
                    "cron": {"type": "string", "description": "Five-field cron expression, local time"},
                    "prompt": {"type": "string", "maxLength": crate::tools::schedule::MAX_PROMPT_BYTES, "description": "The prompt to run"},
                    "recurring": {"type": "boolean", "default": true, "description": "Run on every match (true) or once (false)"}
                }, "required": ["cron", "prompt"], "additionalProperties": false}),
            ),
            |a, _| {
                CallDescription::new(
                    ToolKind::Think,
                    format!("Schedule `{}`", str_or_empty(a, "cron")),
                    vec![],
                )
            },
            |a, c| {
                Box::pin(async move {
                    let cron = str_arg(&a, "cron").unwrap_or_default();
                    let prompt = str_arg(&a, "prompt").unwrap_or_default();
                    let recurring = a.get("recurring").and_then(Value::as_bool).unwrap_or(true);
                    let job = c
                        .schedule
                        .create(cron, prompt, recurring, chrono::Local::now())
                        .map_err(ToolError::message)?;
                    let how = if job.recurring { "recurring" } else { "once" };
                    Ok(ToolOutcome::ok(format!(
                        "Scheduled job {}: `{}` ({how}), next run {}. It runs while this session stays open.",
                        job.id,
                        job.cron,
                        job.next.format("%Y-%m-%d %H:%M %Z")
                    )))
                })
            },
        ),
        FnTool::plain(
            wording,
            spec(
                "CronDelete",
                "Delete a scheduled job by its id.",
                json!({"type": "object", "properties": {
                    "id": {"type": "string", "description": "The job id CronCreate returned"}
                }, "required": ["id"], "additionalProperties": false}),
            ),
            |a, _| {
                CallDescription::new(
                    ToolKind::Think,
                    format!("Delete job {}", str_or_empty(a, "id")),
                    vec![],
                )
            },
            |a, c| {
                Box::pin(async move {
                    let id = str_arg(&a, "id").unwrap_or_default();
                    let job = c.schedule.delete(id).map_err(ToolError::message)?;
                    Ok(ToolOutcome::ok(format!(
                        "Deleted job {} ({}).",
                        job.id,
                        when(&job)
                    )))
                })
            },
        ),
        FnTool::plain(
            wording,
            spec(
                "CronList",
                "List this session's scheduled jobs: id, schedule, next run and prompt.",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ),
            |_, _| CallDescription::new(ToolKind::Think, "List scheduled jobs".into(), vec![]),
            |_, c| {
                Box::pin(async move {
                    let jobs = c.schedule.list();
                    if jobs.is_empty() {
                        return Ok(ToolOutcome::ok("No jobs are scheduled."));
                    }
                    let mut text = String::new();
                    for j in jobs {
                        let first = j.prompt.lines().next().unwrap_or_default();
                        let _ = writeln!(
                            text,
                            "{}\t{}\t{}\tnext {}\t{first}",
                            j.id,
                            when(&j),
                            if j.recurring { "recurring" } else { "once" },
                            j.next.format("%Y-%m-%d %H:%M")
                        );
                    }
                    Ok(ToolOutcome::ok(text.trim_end()))
                })
            },
        ),
    ]
}
