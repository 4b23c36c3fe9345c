//! `TaskCreate`, `TaskGet`, `TaskList` and `TaskUpdate` on the session's task list
//! (`tools::task_list`), with Claude Code's result texts. Every change also becomes the
//! session's plan, so each face shows the list as it shows a TodoWrite list.

use interpreter_protocol::ToolKind;
use serde_json::Value;
use std::fmt::Write as _;
use std::sync::Arc;

use super::{WORDING, specs, tool};
use crate::harness::session_tools::describe;
use crate::tools::table::{Tool, ToolError, ToolResult, str_arg, str_or_empty};
use crate::tools::task_list::{Item, Update, refs, status_name};
use crate::tools::{ToolContext, ToolOutcome};

/// The four tools, in name order.
pub(super) fn tools() -> [Arc<dyn Tool>; 4] {
    [
        tool(
            WORDING,
            specs::task_create(),
            |a, _| {
                describe(
                    ToolKind::Think,
                    format!("Task: {}", str_or_empty(a, "subject")),
                )
            },
            |a, c| Box::pin(async move { create(c, &a) }),
        ),
        tool(
            WORDING,
            specs::task_get(),
            |a, _| {
                describe(
                    ToolKind::Think,
                    format!("Get task #{}", str_or_empty(a, "taskId")),
                )
            },
            |a, c| Box::pin(async move { get(c, &a) }),
        ),
        tool(
            WORDING,
            specs::task_list(),
            |_, _| describe(ToolKind::Think, "List tasks".into()),
            |_, c| Box::pin(async move { Ok(ToolOutcome::ok(list(c))) }),
        ),
        tool(
            WORDING,
            specs::task_update(),
            |a, _| {
                describe(
                    ToolKind::Think,
                    format!("Update task #{}", str_or_empty(a, "taskId")),
                )
            },
            |a, c| Box::pin(async move { update(c, &a) }),
        ),
    ]
}

fn missing(tool: &str, param: &str) -> ToolError {
    ToolError::message(format!(
        "InputValidationError: {tool} failed due to the following issue:\nThe required parameter `{param}` is missing"
    ))
}

fn metadata(a: &Value) -> serde_json::Map<String, Value> {
    a.get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// A list of ids, given as strings or numbers.
fn ids(a: &Value, key: &str) -> Vec<String> {
    a.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect()
}

/// The id argument; numbers are taken too.
fn task_id(a: &Value) -> Option<String> {
    match a.get("taskId")? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// An outcome that also shows the list as the session's plan.
fn with_plan(ctx: &ToolContext, text: String) -> ToolOutcome {
    let mut o = ToolOutcome::ok(text);
    o.plan = Some(ctx.task_list.plan());
    o
}

fn create(ctx: &ToolContext, a: &Value) -> ToolResult {
    let Some(subject) = str_arg(a, "subject") else {
        return Err(missing("TaskCreate", "subject"));
    };
    let description = str_arg(a, "description").unwrap_or_default();
    let item = ctx
        .task_list
        .create(subject, description, str_arg(a, "activeForm"), metadata(a))
        .map_err(ToolError::message)?;
    Ok(with_plan(
        ctx,
        format!("Task #{} created successfully: {}", item.id, item.subject),
    ))
}

fn get(ctx: &ToolContext, a: &Value) -> ToolResult {
    let Some(id) = task_id(a) else {
        return Err(missing("TaskGet", "taskId"));
    };
    let Some(item) = ctx.task_list.get(&id) else {
        return Ok(ToolOutcome::ok("Task not found"));
    };
    Ok(ToolOutcome::ok(details(&item)))
}

/// TaskGet's text: everything about one item.
fn details(item: &Item) -> String {
    let mut t = format!(
        "Task #{}: {}\nStatus: {}\nDescription: {}",
        item.id,
        item.subject,
        status_name(item.status),
        item.description
    );
    if let Some(owner) = &item.owner {
        let _ = write!(t, "\nOwner: {owner}");
    }
    if !item.blocked_by.is_empty() {
        let _ = write!(t, "\nBlocked by: {}", refs(&item.blocked_by));
    }
    if !item.blocks.is_empty() {
        let _ = write!(t, "\nBlocks: {}", refs(&item.blocks));
    }
    t
}

/// TaskList's text: one line per item, with its owner and the blockers still open.
fn list(ctx: &ToolContext) -> String {
    let items = ctx.task_list.list();
    if items.is_empty() {
        return "No tasks found".into();
    }
    let mut t = String::new();
    for i in &items {
        let _ = write!(t, "#{} [{}] {}", i.id, status_name(i.status), i.subject);
        if let Some(owner) = &i.owner {
            let _ = write!(t, " ({owner})");
        }
        let open = ctx.task_list.open_blockers(i);
        if !open.is_empty() {
            let _ = write!(t, " [blocked by {}]", refs(&open));
        }
        t.push('\n');
    }
    t.truncate(t.trim_end().len());
    t
}

fn update(ctx: &ToolContext, a: &Value) -> ToolResult {
    let Some(id) = task_id(a) else {
        return Err(missing("TaskUpdate", "taskId"));
    };
    let text = |k: &str| str_arg(a, k).map(String::from);
    let u = Update {
        subject: text("subject"),
        description: text("description"),
        active_form: text("activeForm"),
        status: text("status"),
        owner: text("owner"),
        add_blocks: ids(a, "addBlocks"),
        add_blocked_by: ids(a, "addBlockedBy"),
        metadata: metadata(a),
    };
    let completed = u.status.as_deref() == Some("completed");
    let id = id.trim().trim_start_matches('#').to_string();
    let changed = ctx.task_list.update(&id, u).map_err(ToolError::message)?;
    if changed.is_empty() {
        return Ok(ToolOutcome::ok(format!("No changes to task #{id}")));
    }
    let mut out = format!("Updated task #{id} {}", changed.join(", "));
    if completed && changed.contains(&"status") {
        out.push_str(
            "\n\nTask completed. Call TaskList to find your next task or to see what this one unblocked.",
        );
    }
    Ok(with_plan(ctx, out))
}
