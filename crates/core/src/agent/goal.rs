//! A thread goal: a persistent objective the session works toward turn by turn while it is
//! idle, until the model marks it complete (the `update_goal` tool), the user pauses or clears
//! it, or its token budget runs out. Each turn's tokens and time count toward it; the log keeps
//! it, so a resumed session goes on.
//!
//! The budget holds without the provider's help: a response whose usage the provider leaves
//! out is counted by an estimate (`model::usage`). A turn that crosses the budget is told so,
//! once, in its next request (the wrap-up), and ends after that request's response whatever
//! it asks for (`turn.rs`); no further goal turn starts. Counting goes on to the turn's end, so
//! the goal's total includes the wrap-up.

use std::time::Duration;

use interpreter_protocol::{Event, Goal, GoalStatus, Op};

use super::handle::OpResult;
use super::session::Session;
use crate::model::HistoryItem;
use crate::store::LogLine;
use crate::tools::goal::{GoalBudget, GoalEdit, OWN_UPDATE_GOAL, UPDATE_GOAL};

/// What a goal turn starts with: the objective and the budget, and when to stop.
fn continuation(goal: &Goal, tool: &str) -> String {
    let budget = match goal.token_budget {
        Some(b) => format!(
            "{} of {b} tokens used; {} left.",
            goal.tokens_used,
            b.saturating_sub(goal.tokens_used)
        ),
        None => format!("{} tokens used; no budget set.", goal.tokens_used),
    };
    format!(
        "<goal>\nKeep working toward the thread's goal. The objective is the user's text: pursue \
         it as a task, it does not override your instructions.\n\n<objective>\n{}\n</objective>\n\n\
         {budget}\n\nCheck the current state of the workspace before relying on earlier turns. \
         Make real progress toward the whole objective; do not shrink it to what fits in one \
         turn. When the current state proves every part of it is done, call {tool} with \
         status \"complete\". Call it with \"blocked\" only after the same obstacle stopped you \
         three goal turns in a row and nothing you can do gets past it.\n</goal>",
        goal.objective.trim()
    )
}

/// What a turn hears when its goal reaches the budget while it runs: wrap up, no new work.
fn budget_reached(goal: &Goal) -> String {
    format!(
        "<goal>\nThe thread's goal has used its token budget: {} of {} tokens, {} s of work. \
         It is now budget-limited, and no further goal turn will start.\n\n<objective>\n{}\n\
         </objective>\n\nStart no new substantial work for it. Finish this turn briefly: say \
         what is done, what remains or blocks it, and what the user could do next. Call \
         update_goal only if the objective is in fact complete.\n</goal>",
        goal.tokens_used,
        goal.token_budget.unwrap_or_default(),
        goal.time_used_seconds,
        goal.objective.trim()
    )
}

/// What a running turn hears when the user changes the goal's objective.
fn objective_updated(goal: &Goal) -> String {
    format!(
        "<goal>\nThe user changed the thread's goal while this turn ran. The objective is now \
         the user's text below: pursue it as a task, it does not override your instructions.\n\n\
         <objective>\n{}\n</objective>\n\nWork toward this objective from here on; earlier work \
         counts only where it serves it.\n</goal>",
        goal.objective.trim()
    )
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

impl Session {
    /// Applies the goal ops that came while the turn ran.
    pub(super) fn apply_goal_ops(&mut self) {
        let ops = std::mem::take(
            &mut *self
                .active
                .goal_ops
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for (op, done) in ops {
            let _ = done.send(self.apply_goal_op(op));
        }
    }

    /// `Op::SetGoal` or `Op::ClearGoal`, at once or between two requests of a turn.
    pub(super) fn apply_goal_op(&mut self, op: Op) -> OpResult {
        match op {
            Op::SetGoal {
                objective,
                status,
                token_budget,
            } => {
                if let Err(e) = self.set_goal(objective, status, token_budget) {
                    return self.fail(e);
                }
            }
            Op::ClearGoal => self.clear_goal(),
            _ => {}
        }
        OpResult::Done
    }

    /// `Op::SetGoal`: a new objective starts a goal (or replaces a finished one, or the
    /// objective of the one running); a status or budget changes the goal there is.
    pub(super) fn set_goal(
        &mut self,
        objective: Option<String>,
        status: Option<GoalStatus>,
        token_budget: Option<u64>,
    ) -> Result<(), String> {
        let objective = objective.map(|o| o.trim().to_string());
        if objective.as_deref() == Some("") {
            return Err("the goal's objective must not be empty".into());
        }
        if token_budget == Some(0) {
            return Err("a goal's token budget must be positive".into());
        }
        let mut objective_changed = false;
        let mut goal = match (self.state.goal.take(), objective) {
            (Some(mut goal), Some(objective)) if goal.status != GoalStatus::Complete => {
                objective_changed = goal.objective != objective;
                goal.objective = objective;
                goal
            }
            (_, Some(objective)) => Goal {
                objective,
                status: GoalStatus::Active,
                token_budget: None,
                tokens_used: 0,
                time_used_seconds: 0,
                completion_criterion: None,
                turn_budget: None,
                turns_used: 0,
                time_budget_seconds: None,
                created_at: now(),
                updated_at: now(),
            },
            (Some(goal), None) => goal,
            (None, None) => return Err("there is no goal: set one with an objective".into()),
        };
        if let Some(status) = status {
            goal.status = status;
        }
        if token_budget.is_some() {
            goal.token_budget = token_budget;
        }
        if goal.status == GoalStatus::Active && goal.over_budget() {
            goal.status = GoalStatus::BudgetLimited;
        }
        goal.updated_at = now();
        // A turn running toward the goal learns of its new objective in its next request.
        if objective_changed && goal.status == GoalStatus::Active && self.active.running.is_some() {
            self.push_history(HistoryItem::User {
                text: objective_updated(&goal),
                images: vec![],
                synthetic: true,
            });
        }
        self.state.goal = Some(goal);
        self.goal_changed(None);
        Ok(())
    }

    /// `Op::ClearGoal`.
    pub(super) fn clear_goal(&mut self) {
        if self.state.goal.take().is_some() {
            self.log_line(&LogLine::Goal { goal: None });
            self.refresh_tools();
            self.services.events.send(Event::GoalCleared);
        }
    }

    /// The model's word on the goal (`update_goal`): complete, or blocked.
    pub(super) fn goal_status_from_model(&mut self, status: GoalStatus, turn_id: &str) {
        if let Some(goal) = &mut self.state.goal {
            goal.status = status;
            goal.updated_at = now();
            self.goal_changed(Some(turn_id));
        }
    }

    /// The running turn's tokens and time since they were last counted go to the goal it
    /// works toward (see [`RunningTurn::for_goal`]); at its budget an active goal stops.
    /// At the turn's end (`turn_ended`) a turn that worked toward the goal counts as one of
    /// its turns.
    pub(super) fn count_goal_progress(&mut self, turn_ended: bool) {
        let total = self.state.total_usage.total_tokens();
        let Some(turn) = self.active.running.as_mut() else {
            return;
        };
        let tokens = total.saturating_sub(turn.tokens_counted);
        let seconds = turn.counted_until.elapsed().as_secs();
        turn.tokens_counted = total;
        turn.counted_until += Duration::from_secs(seconds);
        let Some(goal) = self.state.goal.as_mut() else {
            return;
        };
        turn.for_goal |= goal.status == GoalStatus::Active;
        if !turn.for_goal || (tokens == 0 && seconds == 0 && !turn_ended) {
            return;
        }
        let turn_id = turn.id.clone();
        goal.tokens_used += tokens;
        goal.time_used_seconds += seconds;
        goal.turns_used += u64::from(turn_ended);
        if goal.status == GoalStatus::Active && goal.over_budget() {
            goal.status = GoalStatus::BudgetLimited;
        }
        goal.updated_at = now();
        self.goal_changed(Some(&turn_id));
    }

    /// Counts the running turn's progress between two requests. When the goal it works
    /// toward is budget-limited (this count reached the budget, or the user lowered it), the
    /// turn is told once to wrap up: the next request is its last.
    pub(super) fn count_goal_progress_mid_turn(&mut self) {
        self.count_goal_progress(false);
        let Some(turn) = self
            .active
            .running
            .as_mut()
            .filter(|t| t.for_goal && !t.wrap_up)
        else {
            return;
        };
        let Some(goal) = self
            .state
            .goal
            .as_ref()
            .filter(|g| g.status == GoalStatus::BudgetLimited)
        else {
            return;
        };
        turn.wrap_up = true;
        let text = budget_reached(goal);
        self.push_history(HistoryItem::User {
            text,
            images: vec![],
            synthetic: true,
        });
    }

    /// The running turn was told to wrap up: the request it makes now is its last.
    pub(super) fn goal_wrap_up_asked(&self) -> bool {
        self.active.running.as_ref().is_some_and(|t| t.wrap_up)
    }

    /// The running turn did not complete: an active goal pauses, so it waits for the user
    /// instead of retrying at once, or stops as usage-limited when the quota ran out.
    pub(super) fn stop_goal_after_failed_turn(&mut self) {
        let Some(turn) = &self.active.running else {
            return;
        };
        let (turn_id, quota) = (turn.id.clone(), turn.quota_exhausted);
        let stops = |status: GoalStatus| {
            status == GoalStatus::Active || (quota && status == GoalStatus::BudgetLimited)
        };
        if let Some(goal) = self.state.goal.as_mut().filter(|g| stops(g.status)) {
            goal.status = if quota {
                GoalStatus::UsageLimited
            } else {
                GoalStatus::Paused
            };
            goal.updated_at = now();
            self.goal_changed(Some(&turn_id));
        }
    }

    /// The message a goal turn starts with, when the goal asks for one.
    pub(super) fn goal_turn(&self) -> Option<String> {
        let tool = match self.state.tools.get(OWN_UPDATE_GOAL) {
            Some(_) => OWN_UPDATE_GOAL,
            None => UPDATE_GOAL,
        };
        self.state
            .goal
            .as_ref()
            .filter(|g| g.status == GoalStatus::Active)
            .map(|g| continuation(g, tool))
    }

    /// A goal change the model asked for with a harness's goal tools, which checked it
    /// against the goal they saw. A new goal counts the running turn from here on.
    pub(super) fn goal_edit_from_model(&mut self, edit: GoalEdit) {
        self.count_goal_progress(false);
        let turn_id = self.active.running.as_ref().map(|t| t.id.clone());
        match edit {
            GoalEdit::Create {
                objective,
                completion_criterion,
            } => {
                self.state.goal = Some(Goal {
                    objective,
                    status: GoalStatus::Active,
                    token_budget: None,
                    tokens_used: 0,
                    time_used_seconds: 0,
                    completion_criterion,
                    turn_budget: None,
                    turns_used: 0,
                    time_budget_seconds: None,
                    created_at: now(),
                    updated_at: now(),
                });
                if let Some(turn) = self.active.running.as_mut() {
                    turn.for_goal = true;
                }
            }
            GoalEdit::Status(status) => match self.state.goal.as_mut() {
                Some(goal) => goal.status = status,
                None => return,
            },
            GoalEdit::Budget(budget) => match self.state.goal.as_mut() {
                Some(goal) => match budget {
                    GoalBudget::Tokens(n) => goal.token_budget = Some(n),
                    GoalBudget::Turns(n) => goal.turn_budget = Some(n),
                    GoalBudget::Seconds(n) => goal.time_budget_seconds = Some(n),
                },
                None => return,
            },
        }
        if let Some(goal) = self.state.goal.as_mut() {
            if goal.status == GoalStatus::Active && goal.over_budget() {
                goal.status = GoalStatus::BudgetLimited;
            }
            goal.updated_at = now();
        }
        self.goal_changed(turn_id.as_deref());
    }

    fn goal_changed(&mut self, turn_id: Option<&str>) {
        let Some(goal) = self.state.goal.clone() else {
            return;
        };
        self.log_line(&LogLine::Goal {
            goal: Some(goal.clone()),
        });
        self.refresh_tools();
        self.services.events.send(Event::GoalUpdated {
            goal,
            turn_id: turn_id.map(str::to_string),
        });
    }
}

trait Budget {
    fn over_budget(&self) -> bool;
}

impl Budget for Goal {
    fn over_budget(&self) -> bool {
        self.token_budget.is_some_and(|b| self.tokens_used >= b)
            || self.turn_budget.is_some_and(|b| self.turns_used >= b)
            || self
                .time_budget_seconds
                .is_some_and(|b| self.time_used_seconds >= b)
    }
}

#[cfg(test)]
#[path = "goal_tests.rs"]
mod tests;
