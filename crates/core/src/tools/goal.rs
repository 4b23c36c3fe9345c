//! `update_goal`: the model's way to say the thread's goal is achieved, or blocked. Offered
//! while the session has a goal; the session applies the change after the call.

use futures::future::BoxFuture;
use interpreter_protocol::{GoalStatus, ToolKind};
use serde_json::{Value, json};

use crate::model::ToolSpec;
use crate::tools::table::Tool;
use crate::tools::{CallDescription, ModeChange, ToolContext, ToolOutcome};
use crate::workspace::Workspace;

pub(crate) const UPDATE_GOAL: &str = "update_goal";
/// The goal tool of a harness that has its own (Kimi Code's): the continuation names it, and
/// `update_goal` is not added beside it.
pub(crate) const OWN_UPDATE_GOAL: &str = "UpdateGoal";

/// A goal change a harness's goal tools ask for (Kimi Code's `CreateGoal`, `UpdateGoal`,
/// `SetGoalBudget`), checked by the tool against the goal it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GoalEdit {
    /// A new goal, active, replacing any other.
    Create {
        objective: String,
        completion_criterion: Option<String>,
    },
    /// Resume (active), complete or block the goal.
    Status(GoalStatus),
    /// A hard limit on the goal.
    Budget(GoalBudget),
}

/// A goal's budget, in one of the units it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GoalBudget {
    Tokens(u64),
    Turns(u64),
    Seconds(u64),
}

/// The `update_goal` tool.
pub(crate) struct UpdateGoal {
    spec: ToolSpec,
}

impl UpdateGoal {
    pub(crate) fn new() -> Self {
        UpdateGoal {
            spec: ToolSpec {
                name: UPDATE_GOAL.into(),
                description: "Marks the thread's goal achieved or blocked. Use `complete` only \
                    when the current state proves every part of the objective is done. Use \
                    `blocked` only when the same obstacle has stopped three goal turns in a row \
                    and only the user can clear it. Pausing, resuming and budgets are the \
                    user's."
                    .into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"status": {"type": "string", "enum": ["complete", "blocked"],
                        "description": "complete: achieved. blocked: cannot go on without the user."}},
                    "required": ["status"],
                    "additionalProperties": false
                }),
            },
        }
    }
}

impl Tool for UpdateGoal {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &Value, _ws: &Workspace) -> CallDescription {
        let status = args.get("status").and_then(Value::as_str).unwrap_or("");
        CallDescription::new(ToolKind::Think, format!("Goal {status}"), vec![])
    }
    fn run<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let status = match args.get("status").and_then(Value::as_str) {
                Some("complete") => GoalStatus::Complete,
                Some("blocked") => GoalStatus::Blocked,
                _ => {
                    return ToolOutcome::error(
                        "update_goal: `status` must be \"complete\" or \"blocked\".",
                    );
                }
            };
            let mut o = ToolOutcome::ok(match status {
                GoalStatus::Complete => "The goal is marked complete.",
                _ => "The goal is marked blocked; the user decides what comes next.",
            });
            o.mode_change = Some(ModeChange::Goal(status));
            o
        })
    }
    fn for_subagents(&self) -> bool {
        false
    }
}
