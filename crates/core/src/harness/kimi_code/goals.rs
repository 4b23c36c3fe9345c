//! Kimi Code's goal tools on our goals (`agent/goal.rs`): `CreateGoal`, `GetGoal`,
//! `UpdateGoal` and `SetGoalBudget`, with the original's parameters and result texts. A goal
//! they make is the session's goal: every face shows it, goal turns follow it, and its budget
//! (tokens, turns or time) holds as the user's does.

use interpreter_protocol::{Goal, GoalStatus, ToolKind};
use serde_json::{Value, json};
use std::sync::Arc;

use super::WORDING;
use crate::harness::session_tools::describe;
use crate::tools::goal::{GoalBudget, GoalEdit};
use crate::tools::table::{FnTool, Tool, ToolError, ToolResult, spec, str_arg};
use crate::tools::{ModeChange, ToolContext, ToolOutcome};

/// A completion criterion is kept to this many characters, as the original keeps it.
const MAX_CRITERION_CHARS: usize = 4_000;
/// A time budget must lie within a second and a day.
const MIN_TIME_MS: f64 = 1_000.0;
const MAX_TIME_MS: f64 = 86_400_000.0;

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![create_goal(), get_goal(), update_goal(), set_goal_budget()]
}

fn tool(
    name: &str,
    description: &str,
    parameters: Value,
    run: crate::tools::table::RunFn,
) -> Arc<dyn Tool> {
    FnTool::plain(
        WORDING,
        spec(name, description, parameters),
        |_, _| describe(ToolKind::Think, "Goal".into()),
        run,
    )
}

fn create_goal() -> Arc<dyn Tool> {
    tool(
        "CreateGoal",
        "Create a durable goal that the session pursues across turns until it is complete.\n\nCreate one only when the user asks you to start a goal or to work on your own toward an outcome. Not for greetings, questions or vague requests: a goal needs an end state that can be checked. When the request is vague, ask for the completion criterion first; if the user insists after your warning, create it.\n\nGive `completionCriterion` when the user states one or it follows without new requirements. Keep `objective` short; point to long task descriptions by file path.\n\nCreating fails while a goal exists; pass `replace: true` only when the user wants to drop the current goal for a new one.",
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
            "objective": {"type": "string", "minLength": 1, "description": "What to achieve; it must have an end state that can be checked."},
            "completionCriterion": {"type": "string", "description": "How to check that the goal is complete, when the user gave one."},
            "replace": {"type": "boolean", "description": "Replace the current active, paused or blocked goal instead of failing."}
        }, "required": ["objective"], "additionalProperties": false}),
        |a, c| Box::pin(async move { create(c, &a) }),
    )
}

fn create(ctx: &ToolContext, args: &Value) -> ToolResult {
    let objective = str_arg(args, "objective").unwrap_or_default().trim();
    if objective.is_empty() {
        return Err(ToolError::message(
            "Goal not created: objective must not be empty.",
        ));
    }
    let replace = args.get("replace").and_then(Value::as_bool) == Some(true);
    if current(ctx).is_some() && !replace {
        return Err(ToolError::message(
            "Goal not created: a current goal already exists. Pass replace=true to replace it.",
        ));
    }
    let completion_criterion = str_arg(args, "completionCriterion")
        .map(|c| {
            c.trim()
                .chars()
                .take(MAX_CRITERION_CHARS)
                .collect::<String>()
        })
        .filter(|c| !c.is_empty());
    let now = chrono::Utc::now().timestamp();
    let goal = Goal {
        objective: objective.to_string(),
        status: GoalStatus::Active,
        token_budget: None,
        tokens_used: 0,
        time_used_seconds: 0,
        completion_criterion: completion_criterion.clone(),
        turn_budget: None,
        turns_used: 0,
        time_budget_seconds: None,
        created_at: now,
        updated_at: now,
    };
    let mut o = ToolOutcome::ok(goal_json(Some(&goal)));
    o.mode_change = Some(ModeChange::GoalEdit(Box::new(GoalEdit::Create {
        objective: goal.objective,
        completion_criterion,
    })));
    Ok(o)
}

/// The goal the tools act on: one that has not ended (a completed goal is gone for them, as
/// the original drops it).
fn current(ctx: &ToolContext) -> Option<&Goal> {
    ctx.goal
        .as_ref()
        .filter(|g| g.status != GoalStatus::Complete)
}

fn get_goal() -> Arc<dyn Tool> {
    tool(
        "GetGoal",
        "Read the current goal: its objective, completion criterion, status and budgets (turns, tokens and time, and what is left of each); a goal that stopped says so. Use it before deciding to go on, report completion, report a blocker or respect a pause. Returns `{ \"goal\": null }` when there is no goal.",
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {}, "additionalProperties": false}),
        |_, c| Box::pin(async move { Ok(ToolOutcome::ok(goal_json(current(c)))) }),
    )
}

/// The original's goal snapshot, pretty JSON.
fn goal_json(goal: Option<&Goal>) -> String {
    let snapshot = goal.map(|g| {
        let wall_clock_ms = g.time_used_seconds * 1000;
        let tokens_reached = g.token_budget.is_some_and(|b| g.tokens_used >= b);
        let turns_reached = g.turn_budget.is_some_and(|b| g.turns_used >= b);
        let time_reached = g.time_budget_seconds.is_some_and(|b| g.time_used_seconds >= b);
        let status = match g.status {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::Blocked => "blocked",
            GoalStatus::UsageLimited => "usage_limited",
            GoalStatus::BudgetLimited => "budget_limited",
            GoalStatus::Complete => "complete",
        };
        let mut s = json!({
            "objective": g.objective,
            "status": status,
            "turnsUsed": g.turns_used,
            "tokensUsed": g.tokens_used,
            "wallClockMs": wall_clock_ms,
            "budget": {
                "tokenBudget": g.token_budget,
                "turnBudget": g.turn_budget,
                "wallClockBudgetMs": g.time_budget_seconds.map(|s| s * 1000),
                "remainingTokens": g.token_budget.map(|b| b.saturating_sub(g.tokens_used)),
                "remainingTurns": g.turn_budget.map(|b| b.saturating_sub(g.turns_used)),
                "remainingWallClockMs": g.time_budget_seconds.map(|b| b.saturating_sub(g.time_used_seconds) * 1000),
                "tokenBudgetReached": tokens_reached,
                "turnBudgetReached": turns_reached,
                "wallClockBudgetReached": time_reached,
                "overBudget": tokens_reached || turns_reached || time_reached,
            }
        });
        if let Some(c) = &g.completion_criterion {
            s["completionCriterion"] = json!(c);
        }
        s
    });
    serde_json::to_string_pretty(&json!({ "goal": snapshot })).unwrap_or_default()
}

fn update_goal() -> Arc<dyn Tool> {
    tool(
        crate::tools::goal::OWN_UPDATE_GOAL,
        "Set the current goal's status: how you resume, complete or block it.\n\n- `active`: resume a paused or blocked goal when the user asks you to work on it.\n- `complete`: the objective is met and every stated check has passed. Check the current state against the objective and each requirement first; weak or indirect evidence is not complete, and a budget running low is no reason.\n- `blocked`: a real impasse (an outside condition, input only the user can give, missing credentials or permissions, a failure that persists, or an impossible, unsafe or contradictory objective). For a blocker that may pass, call it only after the same condition stopped 3 goal turns in a row; for an impossible objective, at once.\n\nMost goal turns should not call this: when one slice of work is done and more remains, end the turn and the next goal turn continues. After `complete` or `blocked`, write the summary or the blocker in your next message.",
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
            "status": {"type": "string", "enum": ["active", "complete", "blocked"], "description": "The status to set: blocked for impossible, unsafe or contradictory objectives, or after the same blocker held 3 goal turns in a row."}
        }, "required": ["status"], "additionalProperties": false}),
        |a, c| Box::pin(async move { update(c, &a) }),
    )
}

fn update(ctx: &ToolContext, args: &Value) -> ToolResult {
    let status = match str_arg(args, "status") {
        Some("active") => GoalStatus::Active,
        Some("complete") => GoalStatus::Complete,
        Some("blocked") => GoalStatus::Blocked,
        _ => {
            return Err(ToolError::message(
                "`status` must be \"active\", \"complete\" or \"blocked\".",
            ));
        }
    };
    let Some(goal) = current(ctx) else {
        return Ok(ToolOutcome::ok(match status {
            GoalStatus::Active => "Goal not resumed: no current goal.",
            GoalStatus::Complete => "Goal not completed: no active goal.",
            _ => "Goal not blocked: no active goal.",
        }));
    };
    let stats = format!(
        "Worked {} turns over {}, using {} tokens.",
        goal.turns_used,
        elapsed(goal.time_used_seconds),
        tokens(goal.tokens_used)
    );
    let text = match status {
        GoalStatus::Active => "Goal resumed.".to_string(),
        GoalStatus::Complete => format!(
            "Goal completed successfully.\n{stats}\n\nNow write a short final message for the user: say the goal is complete, sum up the main work, and name the checks you ran. Call no more goal tools."
        ),
        _ => format!(
            "Goal blocked.\n{stats}\n\nNow write a short final message for the user: say the goal is blocked, name the concrete blocker, and say what input or change would let the work go on. Call no more goal tools."
        ),
    };
    let mut o = ToolOutcome::ok(text);
    o.mode_change = Some(ModeChange::GoalEdit(Box::new(GoalEdit::Status(status))));
    Ok(o)
}

fn set_goal_budget() -> Arc<dyn Tool> {
    tool(
        "SetGoalBudget",
        "Set a hard limit on the current goal, only when the user gives one (\"stop after 20 turns\", \"use no more than 500k tokens\", \"finish within 30 minutes\"). Never invent a limit, and do not call this for vague wording such as \"be quick\".\n\nTurn a compound time into one unit first: \"2 hours and 3 minutes\" is `value: 123, unit: \"minutes\"`. A time budget must lie between 1 second and 24 hours. Turn and token budgets are rounded to whole numbers (at least 1).",
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
            "value": {"type": "number", "exclusiveMinimum": 0, "description": "The budget, a positive number."},
            "unit": {"type": "string", "enum": ["turns", "tokens", "milliseconds", "seconds", "minutes", "hours"]}
        }, "required": ["value", "unit"], "additionalProperties": false}),
        |a, c| Box::pin(async move { set_budget(c, &a) }),
    )
}

fn set_budget(ctx: &ToolContext, args: &Value) -> ToolResult {
    let value = args.get("value").and_then(Value::as_f64).unwrap_or(0.0);
    if !value.is_finite() || value <= 0.0 {
        return Err(ToolError::message(
            "Goal budget not set: value must be positive.",
        ));
    }
    let unit = str_arg(args, "unit").unwrap_or_default();
    let ms_per = match unit {
        "milliseconds" => 1.0,
        "seconds" => 1_000.0,
        "minutes" => 60_000.0,
        "hours" => 3_600_000.0,
        "turns" | "tokens" => 0.0,
        other => {
            return Err(ToolError::message(format!(
                "unknown unit `{other}` (turns, tokens, milliseconds, seconds, minutes or hours)."
            )));
        }
    };
    let value = match ms_per == 0.0 {
        true => value.round().max(1.0),
        false => value,
    };
    let shown = budget_text(value, unit);
    if current(ctx).is_none() {
        return Ok(ToolOutcome::ok("Goal budget not set: no current goal."));
    }
    let budget = match unit {
        "turns" => GoalBudget::Turns(value as u64),
        "tokens" => GoalBudget::Tokens(value as u64),
        _ => {
            let ms = (value * ms_per).round();
            if !(MIN_TIME_MS..=MAX_TIME_MS).contains(&ms) {
                return Ok(ToolOutcome::ok(format!(
                    "Goal budget not set: {shown} is not a reasonable goal budget."
                )));
            }
            // The goal counts whole seconds.
            GoalBudget::Seconds((ms / 1000.0).ceil() as u64)
        }
    };
    let mut o = ToolOutcome::ok(format!("Goal budget set: {shown}."));
    o.mode_change = Some(ModeChange::GoalEdit(Box::new(GoalEdit::Budget(budget))));
    Ok(o)
}

/// `20 turns`, `1 hour`, `1.5 minutes`.
fn budget_text(value: f64, unit: &str) -> String {
    let number = match value.fract() == 0.0 {
        true => format!("{value:.0}"),
        false => value.to_string(),
    };
    let unit = match number.as_str() {
        "1" => unit.strip_suffix('s').unwrap_or(unit),
        _ => unit,
    };
    format!("{number} {unit}")
}

/// `42s`, `3m05s`, `2h07m`.
fn elapsed(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s / 60) % 60),
    }
}

/// `950`, `1.2k`, `3.4M`.
fn tokens(n: u64) -> String {
    match n {
        n if n < 1_000 => n.to_string(),
        n if n < 1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        n => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_elapsed_and_tokens_read_as_the_originals() {
        assert_eq!(budget_text(20.0, "turns"), "20 turns");
        assert_eq!(budget_text(1.0, "hours"), "1 hour");
        assert_eq!(budget_text(1.5, "minutes"), "1.5 minutes");
        assert_eq!(elapsed(42), "42s");
        assert_eq!(elapsed(185), "3m05s");
        assert_eq!(elapsed(7620), "2h07m");
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(1_234), "1.2k");
        assert_eq!(tokens(3_400_000), "3.4M");
    }

    #[test]
    fn no_goal_reads_as_null() {
        assert_eq!(goal_json(None), "{\n  \"goal\": null\n}");
    }
}
