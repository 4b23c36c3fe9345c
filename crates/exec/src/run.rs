//! One `interpreter exec` from argv to exit code: the request, the session, its header, the
//! turn or the goal, then `--diff` and the answer.

use anyhow::Result;
use interpreter_protocol::Op;
use std::io::IsTerminal;

use interpreter_core::agent::OpResult;
use interpreter_face::slash;
use interpreter_face::view::SessionView;

use crate::ExecOptions;
use crate::diff::Snapshot;
use crate::goal::drive_goal;
use crate::human::HumanWriter;
use crate::jsonl::JsonlWriter;
use crate::output::{Output, fail};
use crate::session::{Request, drain_queued, open, prepare};
use crate::turn::{drive_turn, finish_turn};
use crate::undo::undo;

/// Runs `interpreter exec` and returns the process exit code.
pub async fn run(args: ExecOptions) -> i32 {
    match run_inner(args).await {
        Ok(code) => code,
        Err(e) => fail(1, &format!("{e:#}")),
    }
}

async fn run_inner(args: ExecOptions) -> Result<i32> {
    if let Some(target) = args.undo.clone() {
        return Ok(undo(&args, &target).await);
    }
    let json = args.json;
    let req = match prepare(&args) {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    let mut run = match open(&args, &req).await {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    // Session commands (/harness, /model) before the prompt.
    for (cmd, arg) in &req.commands {
        let op = match cmd.as_str() {
            "harness" => Op::SetHarness {
                harness: arg.clone(),
            },
            _ => Op::SetModel { model: arg.clone() },
        };
        if let OpResult::Failed(e) = run.handle.submit(op).done().await {
            return Ok(fail(1, &format!("/{cmd} {arg}: {e}")));
        }
    }
    // The header shows what the commands set, so their events wait for it in the backlog.
    drain_queued(&mut run.rx, |e| {
        run.view.observe(&e);
        run.backlog.push(e);
    });
    let mut input = req.images.clone();
    if !req.prompt.trim().is_empty() {
        // `/<skill> args` runs a skill.
        input.insert(0, slash::input_for(&req.prompt, &run.view.skills));
    }
    let color = match args.color.as_str() {
        "always" => true,
        "never" => false,
        _ => std::io::stderr().is_terminal(),
    };
    let mut out = if json {
        Output::Json(JsonlWriter::new(std::io::stdout()))
    } else {
        Output::Human(HumanWriter::new(std::io::stderr(), color))
    };
    write_header(&mut out, &run.view, &req);
    for e in std::mem::take(&mut run.backlog) {
        out.event(&e);
    }
    if input.is_empty() {
        // Only session commands: nothing to ask the model.
        return Ok(0);
    }
    // With --diff in a git work tree, changes are read off the tree afterwards, so what
    // shell commands changed is in the patch too.
    let snapshot = if args.diff {
        let cwd = run.view.cwd.clone();
        tokio::task::spawn_blocking(move || Snapshot::take(&cwd))
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    let code = if args.goal {
        drive_goal(&args, &mut run, &mut out, &req.prompt).await
    } else {
        let ended = drive_turn(&mut run, &mut out, input).await;
        finish_turn(&args, &mut out, &ended, run.view.total_usage())
    };
    let diff = match (args.diff, snapshot) {
        (false, _) => None,
        (true, Some(snapshot)) => Some(tree_diff(&run.view, snapshot).await),
        (true, None) => Some(run.view.diff.clone().unwrap_or_default()),
    };
    let code = match &req.review_root {
        Some(root) if code == 0 => {
            crate::review::finish(&args, out.last_message().as_deref(), root)
        }
        Some(_) => code,
        None => {
            print_result(json, diff, out.last_message(), code == 0);
            code
        }
    };
    let _ = run.handle.submit(Op::Shutdown).done().await;
    Ok(code)
}

fn write_header(out: &mut Output, view: &SessionView, req: &Request) {
    match out {
        Output::Json(w) => w.thread_started(&view.id),
        Output::Human(w) => {
            let s = &view.settings;
            w.header(
                &[
                    ("workdir", view.cwd.display().to_string()),
                    ("model", s.model.clone()),
                    ("provider", s.provider.clone()),
                    ("harness", s.harness.clone()),
                    ("approval", s.permissions.approval.as_str().to_string()),
                    ("sandbox", s.permissions.sandbox.as_str().to_string()),
                    ("session id", view.id.clone()),
                ],
                req.shown.as_deref().unwrap_or(&req.prompt),
            );
        }
    }
}

/// The final answer on stdout (human mode), or the patch with `--diff`.
fn print_result(json: bool, diff: Option<String>, last: Option<String>, completed: bool) {
    if json {
        if let Some(d) = &diff {
            eprint!("{d}");
        }
        return;
    }
    match &diff {
        // With --diff, stdout carries only the patch so it can be piped to `git apply`.
        Some(d) => {
            print!("{d}");
            if let Some(m) = &last {
                eprintln!("{}", interpreter_face::terminal_text::sanitize(m));
            }
        }
        None => {
            let both_tty = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
            if let Some(m) = last.as_ref().filter(|_| completed && !both_tty) {
                // Stdout may be a terminal too (stderr redirected): text only.
                println!("{}", interpreter_face::terminal_text::sanitize(m));
            }
        }
    }
}

/// The patch of everything that changed in the work tree since `snapshot` under the cwd.
/// Changes that cannot be a text patch, or lie outside the cwd, are named on stderr.
async fn tree_diff(view: &SessionView, snapshot: Snapshot) -> String {
    let found = tokio::task::spawn_blocking(move || snapshot.changes())
        .await
        .map_err(std::io::Error::other)
        .and_then(|r| r);
    let found = match found {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "warning: could not read the work tree's changes ({e}); the patch holds the file tools' edits only"
            );
            return view.diff.clone().unwrap_or_default();
        }
    };
    for (path, why) in &found.opaque {
        eprintln!(
            "note: {} changed but is not in the patch ({why})",
            path.display()
        );
    }
    let cwd = std::fs::canonicalize(&view.cwd).unwrap_or_else(|_| view.cwd.clone());
    let mut out = String::new();
    for c in &found.changes {
        match c.path.strip_prefix(&cwd) {
            Ok(rel) => out.push_str(&interpreter_core::workspace::diff::git_unified_diff(
                &rel.to_string_lossy(),
                c.old_text.as_deref(),
                c.new_text.as_deref(),
            )),
            Err(_) => eprintln!(
                "note: {} changed outside {} and is not in the patch",
                c.path.display(),
                cwd.display()
            ),
        }
    }
    out
}
