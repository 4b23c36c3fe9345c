//! Applying a patch through the workspace: parse, confine every path, plan every change in
//! memory, ask if the policy says so, then write. A patch that fails anywhere changes nothing.

use interpreter_protocol::{FileChange, FileChangeKind, ToolKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::apply_patch::{self, Hunk, PlannedChange};
use super::{ToolContext, ToolOutcome};
use crate::sandbox::Intent;

/// Paths a patch touches, for the begin event, without applying anything.
pub(crate) fn patch_paths(ctx_base: &Path, patch_text: &str) -> Vec<PathBuf> {
    let Ok(patch) = apply_patch::parse_patch(patch_text) else {
        return Vec::new();
    };
    patch
        .hunks
        .iter()
        .flat_map(|h| match h {
            Hunk::AddFile { path, .. } | Hunk::DeleteFile { path } => vec![path.clone()],
            Hunk::UpdateFile {
                path, move_path, ..
            } => std::iter::once(path.clone())
                .chain(move_path.clone())
                .collect(),
        })
        .map(|p| crate::workspace::lexical_normalize(&ctx_base.join(p)))
        .collect()
}

pub(crate) async fn apply(
    ctx: &ToolContext,
    tool: &str,
    patch_text: &str,
    base: &Path,
) -> ToolOutcome {
    let patch = match apply_patch::parse_patch(patch_text) {
        Ok(p) => p,
        Err(e) => return ToolOutcome::error(format!("apply_patch verification failed: {e}")),
    };
    let ws = &ctx.workspace;
    // Resolve and read everything first.
    let mut resolved: HashMap<String, PathBuf> = HashMap::new();
    let mut texts: HashMap<String, Option<String>> = HashMap::new();
    for hunk in &patch.hunks {
        let names: Vec<&String> = match hunk {
            Hunk::AddFile { path, .. } | Hunk::DeleteFile { path } => vec![path],
            Hunk::UpdateFile {
                path, move_path, ..
            } => std::iter::once(path).chain(move_path.as_ref()).collect(),
        };
        for name in names {
            if resolved.contains_key(name) {
                continue;
            }
            let real = match ws.resolve_from(base, name) {
                Ok(p) => p,
                Err(e) => return ToolOutcome::error(format!("apply_patch refused: {e}")),
            };
            let text = match ws.read_optional(&real).await {
                Ok(t) => t,
                Err(e) => {
                    return ToolOutcome::error(format!("apply_patch: reading {name}: {e}"));
                }
            };
            resolved.insert(name.clone(), real);
            texts.insert(name.clone(), text);
        }
    }
    let planned = match apply_patch::plan_patch(&patch, |p| match texts.get(p) {
        Some(Some(t)) => Ok(t.clone()),
        _ => Err("No such file or directory".to_string()),
    }) {
        Ok(p) => p,
        Err(e) => return ToolOutcome::error(format!("apply_patch verification failed: {e}")),
    };

    let changes: Vec<FileChange> = planned.iter().map(|c| to_change(c, &resolved)).collect();
    let paths: Vec<PathBuf> = changes
        .iter()
        .flat_map(|c| std::iter::once(c.path.clone()).chain(c.move_path.clone()))
        .collect();
    let title = format!(
        "Edit {}",
        paths
            .iter()
            .map(|p| ws.display_path(p))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Err(refused) = ctx
        .authorize(
            Intent::Write {
                paths: paths.clone(),
            },
            tool,
            ToolKind::Edit,
            &title,
            changes.clone(),
        )
        .await
    {
        return ToolOutcome { changes, ..refused };
    }

    let mut done: Vec<(PathBuf, Option<String>)> = Vec::new();
    for c in &changes {
        let result = write_change(ctx, c, &mut done).await;
        if let Err(e) = result {
            // Put back what was already written so the patch is all or nothing.
            for (path, old) in done.into_iter().rev() {
                let _ = match old {
                    Some(t) => ws.write_text(&path, &t).await,
                    None => ws.remove(&path).await,
                };
            }
            return ToolOutcome::error(format!(
                "apply_patch failed writing {}: {e}; no file was changed",
                ws.display_path(&c.path)
            ));
        }
    }
    let mut outcome = ToolOutcome::ok(apply_patch::summary(&planned));
    outcome.changes = changes;
    outcome
}

async fn write_change(
    ctx: &ToolContext,
    c: &FileChange,
    done: &mut Vec<(PathBuf, Option<String>)>,
) -> std::io::Result<()> {
    let ws = &ctx.workspace;
    match c.kind {
        FileChangeKind::Add => {
            let before = ws.read_optional(&c.path).await?;
            ws.write_text(&c.path, c.new_text.as_deref().unwrap_or(""))
                .await?;
            done.push((c.path.clone(), before));
        }
        FileChangeKind::Delete => {
            ws.remove(&c.path).await?;
            done.push((c.path.clone(), c.old_text.clone()));
        }
        FileChangeKind::Update => {
            let target = c.move_path.as_ref().unwrap_or(&c.path);
            let before_target = if c.move_path.is_some() {
                ws.read_optional(target).await?
            } else {
                c.old_text.clone()
            };
            ws.write_text(target, c.new_text.as_deref().unwrap_or(""))
                .await?;
            done.push((target.clone(), before_target));
            if c.move_path.is_some() && target != &c.path {
                ws.remove(&c.path).await?;
                done.push((c.path.clone(), c.old_text.clone()));
            }
        }
    }
    Ok(())
}

fn to_change(c: &PlannedChange, resolved: &HashMap<String, PathBuf>) -> FileChange {
    let real = |p: &String| resolved.get(p).cloned().unwrap_or_else(|| PathBuf::from(p));
    match c {
        PlannedChange::Add { path, contents } => FileChange {
            path: real(path),
            kind: FileChangeKind::Add,
            move_path: None,
            old_text: None,
            new_text: Some(contents.clone()),
        },
        PlannedChange::Delete { path, old_contents } => FileChange {
            path: real(path),
            kind: FileChangeKind::Delete,
            move_path: None,
            old_text: Some(old_contents.clone()),
            new_text: None,
        },
        PlannedChange::Update {
            path,
            move_path,
            old_contents,
            new_contents,
        } => FileChange {
            path: real(path),
            kind: FileChangeKind::Update,
            move_path: move_path.as_ref().map(real),
            old_text: Some(old_contents.clone()),
            new_text: Some(new_contents.clone()),
        },
    }
}

/// Writes one file's new text after the policy allows it; the change, for the tool's report.
/// Used by whole-file tools (Write, Edit).
pub(crate) async fn write_one(
    ctx: &ToolContext,
    tool: &str,
    path: &Path,
    old: Option<String>,
    new: String,
) -> Result<FileChange, ToolOutcome> {
    let change = FileChange {
        path: path.to_path_buf(),
        kind: if old.is_some() {
            FileChangeKind::Update
        } else {
            FileChangeKind::Add
        },
        move_path: None,
        old_text: old,
        new_text: Some(new.clone()),
    };
    let title = format!("Edit {}", ctx.workspace.display_path(path));
    ctx.authorize(
        Intent::Write {
            paths: vec![path.to_path_buf()],
        },
        tool,
        ToolKind::Edit,
        &title,
        vec![change.clone()],
    )
    .await
    .map_err(|refused| ToolOutcome {
        changes: vec![change.clone()],
        ..refused
    })?;
    if let Err(e) = ctx.workspace.write_text(path, &new).await {
        return Err(ToolOutcome::error(format!(
            "could not write {}: {e}",
            ctx.workspace.display_path(path)
        )));
    }
    Ok(change)
}
