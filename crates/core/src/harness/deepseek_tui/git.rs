//! deepseek-tui's git tools (status, diff, log, show, blame: each one `git` command run like
//! any other, so the sandbox and approvals apply), its checklist (write, add, update, list:
//! our plan events) and update_plan, with the original's texts.

use futures::future::BoxFuture;
use interpreter_protocol::{Plan, PlanItem, PlanStatus, ToolKind};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::WORDING;
use crate::harness::session_tools::describe;
use crate::model::ToolSpec;
use crate::tools::table::{Tool, ToolError, ToolResult, closed_object, spec};
use crate::tools::truncate::truncate_middle;
use crate::tools::{CallDescription, ToolContext, ToolOutcome, plan};
use crate::workspace::Workspace;

const GIT_TIMEOUT: Duration = Duration::from_secs(30);

fn str_arg<'a>(a: &'a Value, k: &str) -> Option<&'a str> {
    a.get(k).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// Runs `git` with `words` (quoted for the shell) in the workspace.
/// What is asked is the git command; what runs has the repository's programs turned off
/// (fsmonitor, hooks, filters, diff drivers: `sandbox::git::neutral_words`).
async fn git(ctx: &ToolContext, tool: &str, words: Vec<String>) -> ToolResult {
    let join = |argv: &[String]| {
        shlex::try_join(argv.iter().map(String::as_str))
            .map_err(|e| ToolError::message(format!("{tool} failed: {e}")))
    };
    let asked = join(&[vec!["git".to_string()], words.clone()].concat())?;
    let dir = ctx.workspace.cwd().to_path_buf();
    let neutral = tokio::task::spawn_blocking(move || crate::sandbox::git::neutral_words(&dir))
        .await
        .unwrap_or_default();
    let run = join(&[vec!["git".to_string()], neutral, words].concat())?;
    ctx.authorize(
        ctx.command_intent(&asked),
        tool,
        ToolKind::Read,
        &asked,
        vec![],
    )
    .await?;
    let r = ctx
        .run_streamed(&run, ctx.workspace.cwd(), GIT_TIMEOUT)
        .await
        .map_err(|e| ToolError::message(format!("{tool} failed: {e}")))?;
    let output = truncate_middle(r.output.trim(), ctx.output_token_limit);
    if r.exit_code != Some(0) {
        return Err(ToolError::message(format!(
            "{tool} failed (exit code: {:?})\n{output}",
            r.exit_code
        )));
    }
    Ok(ToolOutcome::from_exec(r, output))
}

/// `-- <path>` when the call names one, resolved inside the workspace.
fn scoped(ctx: &ToolContext, args: &Value, words: &mut Vec<String>) -> Result<(), ToolError> {
    if let Some(p) = str_arg(args, "path") {
        let path = ctx.workspace.resolve(p)?;
        words.push("--".into());
        words.push(path.display().to_string());
    }
    Ok(())
}

fn int(args: &Value, k: &str, default: u64, max: u64) -> u64 {
    args.get(k)
        .and_then(Value::as_u64)
        .unwrap_or(default)
        .min(max)
}

pub(super) fn status_spec() -> ToolSpec {
    spec(
        "git_status",
        "Show `git status --porcelain=v1 -b` for the workspace, optionally for one path.",
        closed_object(
            json!({"path": {"type": "string", "description": "Optional subdirectory or file to scope the status to (must be within the workspace)."}}),
            &[],
        ),
    )
}

pub(super) async fn status(ctx: &ToolContext, args: Value) -> ToolResult {
    let mut w = vec!["status".into(), "--porcelain=v1".into(), "-b".into()];
    scoped(ctx, &args, &mut w)?;
    git(ctx, "git_status", w).await
}

pub(super) fn diff_spec() -> ToolSpec {
    spec(
        "git_diff",
        "Show `git diff` for the workspace (staged changes with `cached`), optionally for one path.",
        closed_object(
            json!({
                "path": {"type": "string", "description": "Optional subdirectory or file to scope the diff to (must be within the workspace)."},
                "cached": {"type": "boolean", "description": "When true, diff staged changes (`--cached`)."},
                "unified": {"type": "integer", "minimum": 0, "maximum": 50, "default": 3, "description": "Number of context lines to include around changes."}
            }),
            &[],
        ),
    )
}

pub(super) async fn diff(ctx: &ToolContext, args: Value) -> ToolResult {
    let mut w = vec!["diff".into(), format!("-U{}", int(&args, "unified", 3, 50))];
    if args.get("cached").and_then(Value::as_bool).unwrap_or(false) {
        w.push("--cached".into());
    }
    scoped(ctx, &args, &mut w)?;
    git(ctx, "git_diff", w).await
}

pub(super) fn log_spec() -> ToolSpec {
    spec(
        "git_log",
        "Show recent commits (`git log`), optionally for one path and filtered by author or date.",
        closed_object(
            json!({
                "path": {"type": "string", "description": "Optional subdirectory or file path to scope history to."},
                "max_count": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20, "description": "Maximum number of commits to return."},
                "author": {"type": "string", "description": "Optional git author filter (same semantics as `git log --author`)."},
                "since": {"type": "string", "description": "Optional lower date bound, e.g. '2 weeks ago' or ISO date."},
                "until": {"type": "string", "description": "Optional upper date bound, e.g. 'yesterday' or ISO date."}
            }),
            &[],
        ),
    )
}

pub(super) async fn log(ctx: &ToolContext, args: Value) -> ToolResult {
    let mut w = vec![
        "log".into(),
        format!("--max-count={}", int(&args, "max_count", 20, 200).max(1)),
    ];
    for (k, flag) in [
        ("author", "--author"),
        ("since", "--since"),
        ("until", "--until"),
    ] {
        if let Some(v) = str_arg(&args, k) {
            w.push(format!("{flag}={v}"));
        }
    }
    scoped(ctx, &args, &mut w)?;
    git(ctx, "git_log", w).await
}

pub(super) fn show_spec() -> ToolSpec {
    spec(
        "git_show",
        "Show one revision (`git show`) with its stat and patch, optionally for one path.",
        closed_object(
            json!({
                "rev": {"type": "string", "description": "Revision to show (commit SHA, tag, branch, or ref expression)."},
                "path": {"type": "string", "description": "Optional subdirectory or file path to scope output."},
                "patch": {"type": "boolean", "default": true, "description": "Include patch hunks (default true)."},
                "stat": {"type": "boolean", "default": true, "description": "Include --stat summary (default true)."},
                "unified": {"type": "integer", "minimum": 0, "maximum": 50, "default": 3, "description": "Context lines for patch output when patch=true."}
            }),
            &["rev"],
        ),
    )
}

pub(super) async fn show(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(rev) = str_arg(&args, "rev").filter(|r| !r.starts_with('-')) else {
        return Err(ToolError::message(
            "git_show failed: `rev` must name a revision",
        ));
    };
    let flag = |k: &str| args.get(k).and_then(Value::as_bool).unwrap_or(true);
    let mut w = vec!["show".to_string()];
    if flag("stat") {
        w.push("--stat".into());
    }
    w.push(if flag("patch") {
        format!("-U{}", int(&args, "unified", 3, 50))
    } else {
        "--no-patch".into()
    });
    w.push(rev.to_string());
    scoped(ctx, &args, &mut w)?;
    git(ctx, "git_show", w).await
}

pub(super) fn blame_spec() -> ToolSpec {
    spec(
        "git_blame",
        "Show `git blame` for lines of a tracked file, optionally at a revision.",
        closed_object(
            json!({
                "path": {"type": "string", "description": "Path to a tracked file within the workspace."},
                "rev": {"type": "string", "description": "Optional revision to blame against (default: HEAD)."},
                "start_line": {"type": "integer", "minimum": 1, "default": 1, "description": "First line to include in blame output."},
                "max_lines": {"type": "integer", "minimum": 1, "maximum": 2000, "default": 200, "description": "Maximum number of lines to include."},
                "porcelain": {"type": "boolean", "default": false, "description": "When true, emit `--line-porcelain` output."}
            }),
            &["path"],
        ),
    )
}

pub(super) async fn blame(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(p) = str_arg(&args, "path") else {
        return Err(ToolError::message("git_blame failed: `path` is required"));
    };
    let path = ctx.workspace.resolve(p)?;
    let start = int(&args, "start_line", 1, u64::MAX).max(1);
    let lines = int(&args, "max_lines", 200, 2000).max(1);
    let mut w = vec!["blame".to_string(), format!("-L{start},+{lines}")];
    if args
        .get("porcelain")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        w.push("--line-porcelain".into());
    }
    if let Some(rev) = str_arg(&args, "rev").filter(|r| !r.starts_with('-')) {
        w.push(rev.to_string());
    }
    w.extend(["--".to_string(), path.display().to_string()]);
    git(ctx, "git_blame", w).await
}

/// One checklist kept for the session, behind the four checklist tools.
type Checklist = Arc<Mutex<Vec<PlanItem>>>;

#[derive(Clone, Copy)]
enum Op {
    Write,
    Add,
    Update,
    List,
}

struct ChecklistTool {
    spec: ToolSpec,
    op: Op,
    list: Checklist,
}

/// The checklist tools under `prefix` (`checklist_*`, and the original's `todo_*` names for
/// the same list).
pub(super) fn checklist_tools(list: &Checklist, prefix: &str) -> Vec<Arc<dyn Tool>> {
    let status = json!({"type": "string", "enum": ["pending", "in_progress", "completed"]});
    let specs = [
        (
            Op::Add,
            spec(
                &format!("{prefix}_add"),
                "Add one item to the task's checklist.",
                closed_object(
                    json!({"content": {"type": "string", "description": "The task description"},
                          "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Task status (default: pending)"}}),
                    &["content"],
                ),
            ),
        ),
        (
            Op::List,
            spec(
                &format!("{prefix}_list"),
                "Show the task's checklist and its progress.",
                closed_object(json!({}), &[]),
            ),
        ),
        (
            Op::Update,
            spec(
                &format!("{prefix}_update"),
                "Set the status of one checklist item by its id.",
                closed_object(
                    json!({"id": {"type": "integer", "description": "Todo item id"}, "status": status.clone()}),
                    &["id", "status"],
                ),
            ),
        ),
        (
            Op::Write,
            spec(
                &format!("{prefix}_write"),
                "Replace the task's checklist with the complete list of items (the user sees it). Use it for the steps of the current work.",
                closed_object(
                    json!({"todos": {"type": "array", "description": "The complete list of todo items. This replaces the existing list.",
                "items": {"type": "object", "properties": {"content": {"type": "string", "description": "The task description"}, "status": status}, "required": ["content", "status"]}}}),
                    &["todos"],
                ),
            ),
        ),
    ];
    specs
        .into_iter()
        .map(|(op, spec)| {
            Arc::new(ChecklistTool {
                spec,
                op,
                list: list.clone(),
            }) as Arc<dyn Tool>
        })
        .collect()
}

impl Tool for ChecklistTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, _args: &Value, _ws: &Workspace) -> CallDescription {
        describe(ToolKind::Think, "Update checklist".into())
    }
    fn run<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { WORDING.outcome(self.call(&args)) })
    }
}

fn status_word(s: PlanStatus) -> &'static str {
    match s {
        PlanStatus::Pending => "pending",
        PlanStatus::InProgress => "in_progress",
        PlanStatus::Completed => "completed",
    }
}

fn parse_status(v: Option<&Value>) -> Result<PlanStatus, ToolError> {
    match v.and_then(Value::as_str).unwrap_or("pending") {
        "pending" => Ok(PlanStatus::Pending),
        "in_progress" => Ok(PlanStatus::InProgress),
        "completed" => Ok(PlanStatus::Completed),
        other => Err(ToolError::message(format!(
            "unknown status `{other}` (pending, in_progress or completed)"
        ))),
    }
}

fn percent(done: usize, all: usize) -> usize {
    (done * 100).checked_div(all).unwrap_or(0)
}

/// The checklist as the original reports it.
fn report(items: &[PlanItem]) -> String {
    let done = items
        .iter()
        .filter(|i| i.status == PlanStatus::Completed)
        .count();
    let in_progress = items
        .iter()
        .position(|i| i.status == PlanStatus::InProgress)
        .map(|i| i + 1);
    let listed: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, it)| json!({"id": i + 1, "content": it.step, "status": status_word(it.status)}))
        .collect();
    serde_json::to_string_pretty(&json!({"items": listed, "completion_pct": percent(done, items.len()), "in_progress_id": in_progress}))
        .unwrap_or_default()
}

impl ChecklistTool {
    fn call(&self, args: &Value) -> ToolResult {
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let text = match self.op {
            Op::Write => {
                let todos = args.get("todos").and_then(Value::as_array).ok_or_else(|| {
                    ToolError::message("checklist_write failed: `todos` must be a list")
                })?;
                let dialect = plan::Dialect {
                    text_field: "content",
                    completed: "completed",
                };
                *list = plan::parse_items(todos, &dialect)
                    .map_err(|e| ToolError::message(format!("checklist_write failed: {e:?}")))?;
                None
            }
            Op::Add => {
                let content = args
                    .get("content")
                    .and_then(Value::as_str)
                    .filter(|c| !c.trim().is_empty())
                    .ok_or_else(|| {
                        ToolError::message("checklist_add failed: `content` is required")
                    })?;
                list.push(PlanItem {
                    step: content.trim().to_string(),
                    status: parse_status(args.get("status"))?,
                });
                None
            }
            Op::Update => {
                let id = args.get("id").and_then(Value::as_u64).unwrap_or(0) as usize;
                let status = parse_status(args.get("status"))?;
                let item = id
                    .checked_sub(1)
                    .and_then(|i| list.get_mut(i))
                    .ok_or_else(|| {
                        ToolError::message(format!("checklist_update failed: no item #{id}"))
                    })?;
                item.status = status;
                Some(format!(
                    "Updated todo #{id} to {}\n{}",
                    status_word(status),
                    report(&list)
                ))
            }
            Op::List => return Ok(ToolOutcome::ok(report(&list))),
        };
        let done = list
            .iter()
            .filter(|i| i.status == PlanStatus::Completed)
            .count();
        let text = text.unwrap_or_else(|| {
            format!(
                "Todo list updated ({} items, {}% complete)\n{}",
                list.len(),
                percent(done, list.len()),
                report(&list)
            )
        });
        let mut o = ToolOutcome::ok(text);
        o.plan = Some(Plan {
            explanation: None,
            items: list.clone(),
        });
        Ok(o)
    }
}

pub(super) fn update_plan_spec() -> ToolSpec {
    spec(
        "update_plan",
        "Record the high-level strategy of a large task: phases with a status, and an optional \
         explanation. Track the concrete steps with the checklist tools instead.",
        json!({"type": "object", "properties": {
            "explanation": {"type": "string", "description": "Optional high-level explanation of the plan or approach"},
            "plan": {"type": "array", "description": "List of plan steps", "items": {"type": "object", "properties": {
                "step": {"type": "string", "description": "Description of the step"},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Step status"}
            }, "required": ["step", "status"]}}
        }, "required": ["plan"]}),
    )
}

pub(super) fn update_plan(args: &Value) -> ToolResult {
    let steps = args
        .get("plan")
        .and_then(Value::as_array)
        .ok_or_else(|| ToolError::message("update_plan failed: `plan` must be a list"))?;
    let dialect = plan::Dialect {
        text_field: "step",
        completed: "completed",
    };
    let items = plan::parse_items(steps, &dialect)
        .map_err(|e| ToolError::message(format!("update_plan failed: {e:?}")))?;
    let count = |s: PlanStatus| items.iter().filter(|i| i.status == s).count();
    let explanation = args
        .get("explanation")
        .and_then(Value::as_str)
        .map(String::from);
    let listed: Vec<Value> = items
        .iter()
        .map(|i| json!({"step": i.step, "status": status_word(i.status)}))
        .collect();
    let details =
        serde_json::to_string_pretty(&json!({"explanation": explanation, "items": listed}))
            .unwrap_or_default();
    let mut o = ToolOutcome::ok(format!(
        "Plan updated: {} pending, {} in progress, {} completed ({}% done)\n{details}",
        count(PlanStatus::Pending),
        count(PlanStatus::InProgress),
        count(PlanStatus::Completed),
        percent(count(PlanStatus::Completed), items.len())
    ));
    o.plan = Some(Plan { explanation, items });
    Ok(o)
}
