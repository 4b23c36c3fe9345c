//! `EnterWorktree` and `ExitWorktree`: the session works in a git worktree of its own under
//! the repository's `.claude/worktrees/`, then comes back (keeping or removing it). The git
//! side is `tools::worktree`; the session's move is `agent::Session::move_worktree`.

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::WORDING;
use crate::harness::session_tools::describe;
use crate::model::ToolSpec;
use crate::sandbox::Intent;
use crate::tools::table::{Tool, ToolError, ToolResult, closed_object, spec, str_arg};
use crate::tools::worktree::{self as wt, WorktreeMove, WorktreeSession};
use crate::tools::{ModeChange, ToolContext, ToolOutcome};

pub(super) fn tools() -> [Arc<dyn Tool>; 2] {
    [
        super::tool(
            WORDING,
            enter_spec(),
            |a, _| {
                let what = str_arg(a, "path")
                    .map(|p| format!("Enter worktree {p}"))
                    .or_else(|| str_arg(a, "name").map(|n| format!("Create worktree {n}")))
                    .unwrap_or_else(|| "Create a worktree".into());
                describe(ToolKind::Other, what)
            },
            |a, c| Box::pin(enter(c, a)),
        ),
        super::tool(
            WORDING,
            exit_spec(),
            |a, _| {
                let action = str_arg(a, "action").unwrap_or("keep");
                describe(ToolKind::Other, format!("Exit worktree ({action})"))
            },
            |a, c| Box::pin(exit(c, a)),
        ),
    ]
}

fn enter_spec() -> ToolSpec {
    spec(
        "EnterWorktree",
        "Work in an isolated git worktree, only when the user or the project's instructions \
         (CLAUDE.md, memory) explicitly ask for a worktree; for branches and ordinary \
         features use git as usual.\n\nWith `name` (or neither parameter, for a generated \
         name): creates `.claude/worktrees/<name>` at the repository's top on a new branch \
         `worktree-<name>` from HEAD, and switches the session into it (its folder, its \
         files and its commands). Not while already in a worktree made this way.\nWith \
         `path`: switches into an existing worktree of this repository under \
         `.claude/worktrees/` (it must appear in `git worktree list`); ExitWorktree will not \
         remove one entered this way.\n\nUse ExitWorktree to leave it mid-session. When the \
         session ends, the worktree stays on disk.",
        closed_object(
            json!({
                "name": {"type": "string", "description": "Optional name for a new worktree. Each \"/\"-separated segment may contain only letters, digits, dots, underscores, and dashes; max 64 chars total. A random name is generated if not provided. Mutually exclusive with `path`."},
                "path": {"type": "string", "description": "Path to an existing worktree of the current repository to switch into instead of creating a new one. Must appear in `git worktree list` for the current repo. Mutually exclusive with `name`."}
            }),
            &[],
        ),
    )
}

fn exit_spec() -> ToolSpec {
    spec(
        "ExitWorktree",
        "Leave the worktree EnterWorktree entered in this session and return to the folder \
         from before. It touches no other worktree; outside such a session it does nothing \
         and says so. Call it only when the user asks to leave the worktree.\n\n`action`: \
         \"keep\" leaves the worktree and its branch on disk (to come back later, or to keep \
         changes); \"remove\" deletes both, for a clean exit when the work is done or \
         abandoned. A worktree with uncommitted files or commits not on the original branch \
         is only removed with `discard_changes: true`: when the tool lists such changes, \
         confirm with the user first.",
        closed_object(
            json!({
                "action": {"type": "string", "enum": ["keep", "remove"], "description": "\"keep\" leaves the worktree and branch on disk; \"remove\" deletes both."},
                "discard_changes": {"type": "boolean", "description": "Required true when action is \"remove\" and the worktree has uncommitted files or unmerged commits. The tool will refuse and list them otherwise."}
            }),
            &["action"],
        ),
    )
}

fn git_error(e: &std::io::Error) -> ToolError {
    ToolError::message(format!("git failed: {e}"))
}

/// Runs blocking git work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::message(format!("git failed: {e}")))?
        .map_err(|e| git_error(&e))
}

async fn enter(ctx: &ToolContext, a: Value) -> ToolResult {
    let given = |k| str_arg(&a, k).filter(|s| !s.trim().is_empty());
    let (name, path) = (given("name"), given("path"));
    if name.is_some() && path.is_some() {
        return Err(ToolError::message(
            "`name` and `path` are mutually exclusive: pass one of them.",
        ));
    }
    let current = ctx.worktree.clone();
    let original = current
        .as_ref()
        .map_or_else(|| ctx.workspace.cwd().to_path_buf(), |w| w.original.clone());
    let from = original.clone();
    let top = tokio::task::spawn_blocking(move || wt::repo_top(&from))
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| {
            ToolError::message(format!(
                "EnterWorktree needs a git repository, and {} is not in one.",
                original.display()
            ))
        })?;
    // The worktree goes under the repository's top, which must be inside the workspace.
    if top != original {
        return Err(ToolError::message(format!(
            "Worktrees go under the repository's top ({}), outside this session's folder ({}). Start the session at the repository's top to use worktrees.",
            top.display(),
            original.display()
        )));
    }
    let moved = match path {
        Some(p) => enter_existing(&top, p).await?,
        None => {
            if let Some(w) = &current {
                return Err(ToolError::message(format!(
                    "Already in a worktree session at {}. Call ExitWorktree first, or pass `path` to switch into another existing worktree.",
                    w.path.display()
                )));
            }
            create(ctx, &top, name).await?
        }
    };
    let text = match (&moved.created, &moved.branch) {
        (true, Some(branch)) => format!(
            "Created worktree at {} on branch {branch}. The session is now working in the worktree. Use ExitWorktree to leave mid-session; when the session ends, the worktree stays on disk.",
            moved.path.display()
        ),
        (_, branch) => format!(
            "Switched to worktree at {}{}. The session is now working in the worktree. ExitWorktree with action \"keep\" returns to {}.",
            moved.path.display(),
            branch
                .as_ref()
                .map(|b| format!(" on branch {b}"))
                .unwrap_or_default(),
            top.display()
        ),
    };
    let mut o = ToolOutcome::ok(text);
    o.mode_change = Some(ModeChange::Worktree(WorktreeMove::Enter(Box::new(moved))));
    Ok(o)
}

async fn enter_existing(top: &Path, raw: &str) -> Result<WorktreeSession, ToolError> {
    let wanted = match Path::new(raw).is_absolute() {
        true => PathBuf::from(raw),
        false => top.join(raw),
    };
    let not_ours = || {
        ToolError::message(format!(
            "{raw} is not a worktree of this repository under {}: pass a path that `git worktree list` shows there.",
            top.join(wt::WORKTREES).display()
        ))
    };
    let wanted = std::fs::canonicalize(&wanted).map_err(|_| not_ours())?;
    if !wanted.starts_with(top.join(wt::WORKTREES)) {
        return Err(not_ours());
    }
    let dir = top.to_path_buf();
    let list = blocking(move || wt::registered(&dir)).await?;
    let (path, branch) = list
        .into_iter()
        .find(|(p, _)| *p == wanted)
        .ok_or_else(not_ours)?;
    Ok(WorktreeSession {
        path,
        branch,
        base: None,
        original: top.to_path_buf(),
        created: false,
    })
}

async fn create(
    ctx: &ToolContext,
    top: &Path,
    name: Option<&str>,
) -> Result<WorktreeSession, ToolError> {
    let name = name.map_or_else(wt::random_name, str::to_string);
    wt::check_name(&name).map_err(ToolError::message)?;
    let dir = top.join(wt::WORKTREES).join(&name);
    if dir.exists() {
        return Err(ToolError::message(format!(
            "{} already exists: pass it as `path` to switch into it, or choose another name.",
            dir.display()
        )));
    }
    ctx.authorize(
        Intent::Write {
            paths: vec![dir.clone()],
        },
        "EnterWorktree",
        ToolKind::Other,
        &format!(
            "Create worktree {} on branch worktree-{name}",
            dir.display()
        ),
        vec![],
    )
    .await?;
    let (top, original) = (top.to_path_buf(), top.to_path_buf());
    blocking(move || wt::create(&top, &name, &original)).await
}

async fn exit(ctx: &ToolContext, a: Value) -> ToolResult {
    let Some(current) = ctx.worktree.clone() else {
        return Ok(ToolOutcome::ok(
            "No active EnterWorktree session to exit. This tool only acts on a worktree EnterWorktree entered in this session; nothing was changed.",
        ));
    };
    let remove = match str_arg(&a, "action") {
        Some("keep") => false,
        Some("remove") => true,
        _ => {
            return Err(ToolError::message(
                "`action` must be \"keep\" or \"remove\".",
            ));
        }
    };
    let back = current.original.display().to_string();
    let text = if !remove {
        format!(
            "Exited worktree. Your work is preserved at {}{}. Session is now back in {back}.",
            current.path.display(),
            current
                .branch
                .as_ref()
                .map(|b| format!(" on branch {b}"))
                .unwrap_or_default()
        )
    } else {
        if !current.created {
            return Err(ToolError::message(format!(
                "{} was entered by path, not made by EnterWorktree: it is not removed. Use action \"keep\" to return to {back}.",
                current.path.display()
            )));
        }
        let discard = a.get("discard_changes").and_then(Value::as_bool) == Some(true);
        let w = (*current).clone();
        let lost = blocking(move || wt::unsaved_work(&w)).await?;
        if !lost.is_empty() && !discard {
            return Err(ToolError::message(format!(
                "The worktree at {} has work that removing it would lose:\n- {}\nConfirm with the user, then call ExitWorktree again with discard_changes: true, or use action \"keep\".",
                current.path.display(),
                lost.join("\n- ")
            )));
        }
        ctx.authorize(
            Intent::Write {
                paths: vec![current.path.clone()],
            },
            "ExitWorktree",
            ToolKind::Delete,
            &format!("Remove worktree {}", current.path.display()),
            vec![],
        )
        .await?;
        let w = (*current).clone();
        blocking(move || wt::remove(&w)).await?;
        format!(
            "Exited and removed worktree at {}{}. Session is now back in {back}.",
            current.path.display(),
            current
                .branch
                .as_ref()
                .map(|b| format!(" and its branch {b}"))
                .unwrap_or_default()
        )
    };
    let mut o = ToolOutcome::ok(text);
    o.mode_change = Some(ModeChange::Worktree(WorktreeMove::Exit));
    Ok(o)
}
