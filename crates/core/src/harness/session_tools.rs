//! Tools that act on the session rather than on files, in Claude Code's shapes, shared by
//! its family of harnesses (Claude Code, Z Code, Qwen Code, DeepSeek TUI, Kimi CLI): a todo
//! list (our plan events), a subagent, the session's skills and plan mode (read-only until
//! the user approves the plan).

use futures::future::BoxFuture;
use interpreter_protocol::{ApprovalDecision, Plan, ToolKind};
use serde_json::Value;
use std::sync::Arc;

use crate::model::ToolSpec;
use crate::skills::Skill;
use crate::tools::table::{Tool, ToolError, ToolResult, Wording};
use crate::tools::{CallDescription, ModeChange, SubagentTask, ToolContext, ToolOutcome, plan};
use crate::workspace::Workspace;

pub(crate) const TODO_WRITE_OK: &str = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable";

pub(crate) fn describe(kind: ToolKind, title: String) -> CallDescription {
    CallDescription::new(kind, title, vec![])
}

/// The plan items of a `todos` list whose items name their text `text_field`.
pub(crate) fn todo_items(
    args: &Value,
    text_field: &'static str,
) -> Result<Vec<interpreter_protocol::PlanItem>, ToolError> {
    let Some(list) = args.get("todos").and_then(Value::as_array) else {
        return Err(ToolError::message(
            "InputValidationError: TodoWrite failed due to the following issue:\nThe required parameter `todos` is missing or is not an array",
        ));
    };
    let dialect = plan::Dialect {
        text_field,
        completed: "completed",
    };
    plan::parse_items(list, &dialect).map_err(|e| match e {
        plan::PlanError::EmptyText => ToolError::message(format!(
            "InputValidationError: every todo needs a non-empty `{text_field}`"
        )),
        plan::PlanError::UnknownStatus(s) => ToolError::message(format!(
            "InputValidationError: unknown status `{s}` (pending, in_progress or completed)"
        )),
    })
}

/// Claude Code's TodoWrite: the list becomes the session's plan.
pub(crate) fn todo_write(args: &Value) -> ToolResult {
    let items = todo_items(args, "content")?;
    let mut o = ToolOutcome::ok(TODO_WRITE_OK);
    o.plan = Some(Plan {
        explanation: None,
        items,
    });
    Ok(o)
}

/// Agent: a subagent with a fresh context; `read_only_by_default` is Z Code's (its default
/// type is Explore). Explore and Plan subagents only read.
pub(crate) async fn agent(
    ctx: &ToolContext,
    args: Value,
    read_only_by_default: bool,
) -> ToolResult {
    let Some(prompt) = args
        .get("prompt")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
    else {
        return Err(ToolError::message(
            "InputValidationError: Agent failed due to the following issue:\nThe required parameter `prompt` is missing",
        ));
    };
    let read_only = match args.get("subagent_type").and_then(Value::as_str) {
        Some(t) => matches!(t.to_ascii_lowercase().as_str(), "explore" | "plan"),
        None => read_only_by_default,
    };
    Ok(ctx
        .run_subagent(SubagentTask {
            prompt: prompt.to_string(),
            read_only,
            resume: None,
        })
        .await)
}

/// Skill: the instructions of one of the session's skills, for the model to follow.
pub(crate) struct SkillTool {
    pub spec: ToolSpec,
    pub skills: Vec<Skill>,
    pub wording: Wording,
    /// The argument that names the skill (`skill`; DeepSeek TUI's load_skill says `name`).
    pub param: &'static str,
    /// The result for a skill and its arguments (most harnesses: `skills::invocation`).
    pub render: fn(&Skill, &str) -> String,
}

impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &Value, _ws: &Workspace) -> CallDescription {
        let name = args.get(self.param).and_then(Value::as_str).unwrap_or("");
        describe(ToolKind::Read, format!("Skill {name}"))
    }
    fn run<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { self.wording.outcome(self.skill(&args)) })
    }
}

impl SkillTool {
    fn skill(&self, args: &Value) -> ToolResult {
        let name = args
            .get(self.param)
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim_start_matches('/');
        let Some(skill) = self.skills.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::message(format!(
                "Unknown skill: {name} (available: {})",
                known.join(", ")
            )));
        };
        let args = args.get("args").and_then(Value::as_str).unwrap_or("");
        Ok(ToolOutcome::ok((self.render)(skill, args)))
    }
}

/// Which plan-mode tool.
#[derive(Clone, Copy)]
pub(crate) enum PlanTool {
    Enter,
    Exit,
}

/// EnterPlanMode and ExitPlanMode. Subagents do not get them: plan mode is the session's.
pub(crate) struct PlanModeTool {
    pub spec: ToolSpec,
    pub which: PlanTool,
    pub wording: Wording,
}

const ENTERED: &str = "\
Entered plan mode. Until the user approves a plan you can read and search but not change \
anything: edits are refused and commands run read-only.

In plan mode:
1. Explore the code with Read, Glob, Grep and read-only commands.
2. Find the files the change touches and the patterns they already follow.
3. Weigh the ways to do it and pick one, with its trade-offs.
4. Ask the user only about decisions that are really theirs.
5. Write a concrete plan: the steps, the files, how you will check the result.
6. Call ExitPlanMode with the plan. Do not edit anything before it is approved.";

impl Tool for PlanModeTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, _args: &Value, _ws: &Workspace) -> CallDescription {
        let title = match self.which {
            PlanTool::Enter => "Enter plan mode",
            PlanTool::Exit => "Present the plan",
        };
        describe(ToolKind::Think, title.into())
    }
    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let r = match self.which {
                PlanTool::Enter => Ok(enter(ctx)),
                PlanTool::Exit => exit(ctx, &args).await,
            };
            self.wording.outcome(r)
        })
    }
    fn for_subagents(&self) -> bool {
        false
    }
}

fn enter(ctx: &ToolContext) -> ToolOutcome {
    if ctx.plan_mode {
        return ToolOutcome::ok("You are already in plan mode.");
    }
    let mut o = ToolOutcome::ok(ENTERED);
    o.mode_change = Some(ModeChange::EnterPlan);
    o
}

pub(crate) async fn exit(ctx: &ToolContext, args: &Value) -> ToolResult {
    let Some(plan) = args
        .get("plan")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
    else {
        return Err(ToolError::message(
            "InputValidationError: ExitPlanMode failed due to the following issue:\nThe required parameter `plan` is missing: pass the plan itself as `plan` (this agent keeps no plan file)",
        ));
    };
    if !ctx.plan_mode {
        return Err(ToolError::message(
            "You are not in plan mode: ExitPlanMode presents a plan after EnterPlanMode. Go ahead with the task.",
        ));
    }
    let asked = allowed_prompts(args);
    let shown = match asked.is_empty() {
        true => plan.to_string(),
        false => format!(
            "{plan}\n\nTo carry it out, the agent asks to:\n{}",
            asked.join("\n")
        ),
    };
    match ctx
        .ask_user("ExitPlanMode", "Approve the plan and leave plan mode", &shown)
        .await
    {
        ApprovalDecision::AllowOnce
        | ApprovalDecision::AllowAlways
        | ApprovalDecision::AllowAlwaysSave => {
            // The prompts are shown, not granted: commands still ask as the mode says.
            let note = match asked.is_empty() {
                true => "",
                false => " The allowedPrompts were shown to the user with the plan; commands still need the approval the permission mode asks for.",
            };
            let mut o = ToolOutcome::ok(format!(
                "User has approved your plan. Plan mode is off: you can now edit files and run commands.{note}\n\nApproved plan:\n{plan}"
            ));
            o.mode_change = Some(ModeChange::ExitPlan);
            Ok(o)
        }
        ApprovalDecision::Reject => Err(ToolOutcome::declined(
            "The user did not approve the plan, so plan mode stays on. Ask what to change, or revise the plan and call ExitPlanMode again.",
        )
        .into()),
        ApprovalDecision::Cancelled => {
            Err(ToolOutcome::declined("The tool call was cancelled.").into())
        }
    }
}

/// ExitPlanMode's `allowedPrompts` (Claude Code's prompt-based permissions), one line each:
/// `- <prompt> (<tool>)`.
fn allowed_prompts(args: &Value) -> Vec<String> {
    args.get("allowedPrompts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let prompt = p.get("prompt")?.as_str()?.trim();
            let tool = p.get("tool").and_then(Value::as_str).unwrap_or("Bash");
            (!prompt.is_empty()).then(|| format!("- {prompt} ({tool})"))
        })
        .collect()
}

/// The Skill tool, when the session has skills (a tool with nothing to run is not offered).
pub(crate) fn skill_tool(
    spec: ToolSpec,
    skills: &[Skill],
    wording: Wording,
) -> Option<Arc<dyn Tool>> {
    (!skills.is_empty()).then(|| {
        Arc::new(SkillTool {
            spec,
            skills: skills.to_vec(),
            wording,
            param: "skill",
            render: crate::skills::invocation,
        }) as Arc<dyn Tool>
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_prompts_are_listed_and_empty_ones_dropped() {
        let args = serde_json::json!({"allowedPrompts": [
            {"tool": "Bash", "prompt": "run tests"},
            {"tool": "Bash", "prompt": " "},
            {"prompt": "install dependencies"}
        ]});
        assert_eq!(
            allowed_prompts(&args),
            ["- run tests (Bash)", "- install dependencies (Bash)"]
        );
        assert!(allowed_prompts(&serde_json::json!({"plan": "x"})).is_empty());
    }
}
