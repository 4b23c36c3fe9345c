//! `--goal`: the turns the session runs for a goal, until it stops being active.

use interpreter_protocol::{Event, Goal, GoalStatus, Op, TokenUsage};

use interpreter_core::agent::OpResult;

use crate::ExecOptions;
use crate::output::{Output, fail};
use crate::session::Run;
use crate::turn::{finish_turn, on_event, spawn_signal_handler};

/// `--goal`: sets the prompt as the goal and writes every turn the session runs for it, until
/// the goal stops being active and its last turn has ended. 0 when the model marked it
/// complete.
pub(crate) async fn drive_goal(
    args: &ExecOptions,
    run: &mut Run,
    out: &mut Output,
    objective: &str,
) -> i32 {
    let ticket = run.handle.submit(Op::SetGoal {
        objective: Some(objective.to_string()),
        status: Some(GoalStatus::Active),
        token_budget: args.goal_budget,
    });
    spawn_signal_handler(run.handle.clone());
    if let OpResult::Failed(e) = ticket.done().await {
        return fail(1, &format!("--goal: {e}"));
    }
    let mut goal: Option<Goal> = None;
    let (mut running, mut code) = (false, 1);
    let mut usage_before = run.view.total_usage();
    while let Some(e) = run.rx.recv().await {
        match &e {
            Event::TurnStarted { .. } => running = true,
            Event::GoalUpdated { goal: g, .. } => goal = Some(g.clone()),
            Event::GoalCleared => goal = None,
            _ => {}
        }
        if let Event::TurnEnded(ended) = &e {
            running = false;
            run.view.observe(&e);
            let total = run.view.total_usage();
            code = finish_turn(args, out, ended, since(total, usage_before));
            usage_before = total;
        } else {
            on_event(&run.handle, &mut run.view, out, &e);
        }
        if !running && goal.as_ref().is_none_or(|g| g.status != GoalStatus::Active) {
            break;
        }
    }
    match goal {
        Some(g) if g.status == GoalStatus::Complete => code,
        Some(g) => fail(
            1,
            &format!(
                "the goal stopped before it was complete: {} ({} tokens used{})",
                serde_json::to_value(g.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                g.tokens_used,
                g.token_budget
                    .map(|b| format!(" of {b}"))
                    .unwrap_or_default()
            ),
        ),
        None => fail(1, "the goal was cleared before it was complete"),
    }
}

/// What was used between two totals: one turn's usage.
fn since(total: TokenUsage, before: TokenUsage) -> TokenUsage {
    TokenUsage {
        input_tokens: total.input_tokens.saturating_sub(before.input_tokens),
        cached_input_tokens: total
            .cached_input_tokens
            .saturating_sub(before.cached_input_tokens),
        output_tokens: total.output_tokens.saturating_sub(before.output_tokens),
        reasoning_output_tokens: total
            .reasoning_output_tokens
            .saturating_sub(before.reasoning_output_tokens),
    }
}
