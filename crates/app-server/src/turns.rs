//! `turn/start`, `turn/interrupt`, `turn/steer` and `thread/compact/start`. A turn's
//! response is queued while the thread's state is locked, so the session's first event of
//! that turn (which needs the same lock) can only follow it.

use interpreter_face::review;
use interpreter_protocol::{InputItem, Op, ReasoningEffort, Restore, SandboxMode};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

use super::Server;
use super::items;
use super::methods::{approval_policy, thread_config};
use super::state::LoadedThread;
use super::threads::{self, Open};
use super::transport::RpcError;
use super::wire::{
    ReviewStartParams, ThreadIdParams, ThreadParams, ThreadRollbackParams, Turn,
    TurnInterruptParams, TurnStartParams, TurnStatus, TurnSteerParams,
};
use interpreter_core::agent::{OpResult, SessionStart};

pub(crate) fn loaded(server: &Server, id: &str) -> Result<Arc<LoadedThread>, RpcError> {
    server.thread(id).ok_or_else(|| {
        RpcError::invalid_request(format!(
            "thread `{id}` is not loaded: start it or call thread/resume first"
        ))
    })
}

/// `turn/start`; answers `id` itself (see the module comment).
pub(crate) async fn start(server: &Arc<Server>, id: &Value, params: Value) {
    if let Err(e) = start_turn(server, id, params).await {
        server.out.respond(id, Err(e));
    }
}

async fn start_turn(server: &Arc<Server>, id: &Value, params: Value) -> Result<(), RpcError> {
    let p: TurnStartParams = super::parse(params)?;
    let input = items::input_items(&p.input)?;
    let mut thread = loaded(server, &p.thread_id)?;
    if let Some(cwd) = &p.cwd {
        thread = move_to(server, thread, PathBuf::from(cwd)).await?;
    }
    let mut ops = settings_ops(&thread, &p)?;
    let schema = p.output_schema.clone().filter(|s| !s.is_null());
    if let Some(s) = &schema {
        ops.push(Op::SetOutputSchema {
            schema: Some(s.clone()),
        });
    }
    let ticket = {
        let mut st = thread.state();
        for op in ops {
            let _ = thread.handle.submit(op);
        }
        let ticket = thread.handle.submit(Op::UserInput { items: input });
        if schema.is_some() {
            // For this turn only: lifted as soon as the turn ends.
            let _ = thread.handle.submit(Op::SetOutputSchema { schema: None });
        }
        st.queued.insert(ticket.id.clone(), p.input.clone());
        server
            .out
            .respond(id, Ok(json!({"turn": pending_turn(&ticket.id)})));
        ticket
    };
    watch(&thread, ticket.id.clone(), ticket.done());
    Ok(())
}

/// `review/start`: the target's diff by the agent's own confined git (a bad target is an
/// error, and no model request), then a turn that answers in findings JSON under a read-only
/// sandbox; its items open with `enteredReviewMode` and close with `exitedReviewMode`. Answers
/// `id` itself, as `turn/start` does.
pub(crate) async fn review(server: &Arc<Server>, id: &Value, params: Value) {
    if let Err(e) = start_review(server, id, params).await {
        server.out.respond(id, Err(e));
    }
}

async fn start_review(server: &Arc<Server>, id: &Value, params: Value) -> Result<(), RpcError> {
    let p: ReviewStartParams = super::parse(params)?;
    if p.delivery.as_deref() == Some("detached") {
        return Err(RpcError::invalid_params(
            "delivery `detached` is not supported: start a thread, then review it inline",
        ));
    }
    let target = review_target(&p.target)?;
    let thread = loaded(server, &p.thread_id)?;
    let (cwd, permissions) = {
        let st = thread.state();
        let perms = st.view.as_ref().map(|v| v.settings.permissions);
        (st.cwd(), perms)
    };
    let permissions =
        permissions.ok_or_else(|| RpcError::internal("the thread's session is not ready"))?;
    let t = target.clone();
    let gathered = tokio::task::spawn_blocking(move || {
        review::gather(&t, |a| interpreter_core::sandbox::git::run(&cwd, a, None))
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
    .map_err(RpcError::invalid_request)?;
    let prompt = review::prompt(&target, &gathered, "", review::Answer::Json);
    let read_only = interpreter_protocol::Permissions {
        sandbox: SandboxMode::ReadOnly,
        ..permissions
    };
    let ticket = {
        let mut st = thread.state();
        // For this turn only: the ops after the input wait for the turn to end.
        let _ = thread.handle.submit(Op::SetPermissions(read_only));
        let _ = thread.handle.submit(Op::SetOutputSchema {
            schema: Some(review::output_schema()),
        });
        let ticket = thread.handle.submit(Op::UserInput {
            items: vec![InputItem::Text { text: prompt }],
        });
        let _ = thread.handle.submit(Op::SetOutputSchema { schema: None });
        let _ = thread.handle.submit(Op::SetPermissions(permissions));
        st.queued.insert(ticket.id.clone(), Vec::new());
        st.reviews.insert(ticket.id.clone(), gathered.description);
        server.out.respond(
            id,
            Ok(json!({"turn": pending_turn(&ticket.id), "reviewThreadId": p.thread_id})),
        );
        ticket
    };
    watch(&thread, ticket.id.clone(), ticket.done());
    Ok(())
}

/// A `ReviewTarget` as the client sent it.
fn review_target(v: &Value) -> Result<review::Target, RpcError> {
    let text = |key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
            .ok_or_else(|| RpcError::invalid_params(format!("target: `{key}` is required")))
    };
    Ok(match v.get("type").and_then(Value::as_str) {
        Some("uncommittedChanges") => review::Target::Uncommitted,
        Some("baseBranch") => review::Target::Base(text("branch")?),
        Some("commit") => review::Target::Commit {
            sha: text("sha")?,
            title: v.get("title").and_then(Value::as_str).map(str::to_string),
        },
        Some("custom") => review::Target::Custom(text("instructions")?),
        _ => {
            return Err(RpcError::invalid_params(format!(
                "target: unknown review target {v}"
            )));
        }
    })
}

fn pending_turn(id: &str) -> Turn {
    Turn {
        id: id.to_string(),
        items: vec![],
        status: TurnStatus::InProgress,
        error: None,
        started_at: None,
        completed_at: None,
        duration_ms: None,
    }
}

/// Every turn gets its `turn/completed`, even when the session is gone before it ends.
fn watch(
    thread: &LoadedThread,
    turn_id: String,
    done: impl std::future::Future<Output = OpResult> + Send + 'static,
) {
    let shared = thread.shared.clone();
    tokio::spawn(async move {
        if let OpResult::Failed(message) = done.await {
            shared.turn_lost(&turn_id, &message);
        }
    });
}

/// The per-turn overrides that last beyond the turn (model, effort, policy), as ops.
fn settings_ops(thread: &LoadedThread, p: &TurnStartParams) -> Result<Vec<Op>, RpcError> {
    let mut ops = Vec::new();
    let current = thread
        .state()
        .view
        .as_ref()
        .map(|v| v.settings.clone())
        .ok_or_else(|| RpcError::internal("the thread's session is not ready"))?;
    if let Some(model) = p.model.as_ref().filter(|m| **m != current.model) {
        ops.push(Op::SetModel {
            model: model.clone(),
        });
    }
    if let Some(effort) = &p.effort {
        ops.push(Op::SetEffort {
            effort: Some(effort_of(effort)?),
        });
    }
    let mut perms = current.permissions;
    if let Some(a) = &p.approval_policy {
        perms.approval = approval_policy(a)?;
    }
    if let Some(s) = &p.sandbox_policy {
        perms.sandbox = sandbox_of(s)?;
    }
    if perms != current.permissions {
        ops.push(Op::SetPermissions(perms));
    }
    Ok(ops)
}

/// `ReasoningEffort` words; Codex's `none` is our least and `ultra` our most.
fn effort_of(word: &str) -> Result<ReasoningEffort, RpcError> {
    match word {
        "none" => Ok(ReasoningEffort::Minimal),
        "ultra" => Ok(ReasoningEffort::Max),
        w => w
            .parse()
            .map_err(|e| RpcError::invalid_params(format!("effort: {e}"))),
    }
}

/// `SandboxPolicy` → the sandbox mode it asks for. An external sandbox contains us already.
fn sandbox_of(v: &Value) -> Result<SandboxMode, RpcError> {
    match v.get("type").and_then(Value::as_str) {
        Some("readOnly") => Ok(SandboxMode::ReadOnly),
        Some("workspaceWrite") => Ok(SandboxMode::WorkspaceWrite),
        Some("dangerFullAccess" | "externalSandbox") => Ok(SandboxMode::DangerFullAccess),
        _ => Err(RpcError::invalid_params(format!(
            "sandboxPolicy: unknown policy {v}"
        ))),
    }
}

/// A `cwd` override: the idle thread's session is reopened in that folder (same id, same
/// history, same settings); the workspace is fixed for a session's life.
async fn move_to(
    server: &Arc<Server>,
    thread: Arc<LoadedThread>,
    cwd: PathBuf,
) -> Result<Arc<LoadedThread>, RpcError> {
    let canonical = std::fs::canonicalize(&cwd)
        .map_err(|e| RpcError::invalid_params(format!("cwd {}: {e}", cwd.display())))?;
    let (current, settings, busy) = {
        let st = thread.state();
        let view = st
            .view
            .as_ref()
            .ok_or_else(|| RpcError::internal("the thread's session is not ready"))?;
        (
            view.cwd.clone(),
            view.settings.clone(),
            st.active.is_some() || !st.queued.is_empty(),
        )
    };
    if canonical == current {
        return Ok(thread);
    }
    if busy {
        return Err(RpcError::invalid_request(
            "cwd can change only between turns: this thread has a turn running",
        ));
    }
    if thread.shared.ephemeral {
        return Err(RpcError::invalid_request(
            "cwd cannot change on an ephemeral thread (it has no stored history to reopen)",
        ));
    }
    let mut config = thread_config(server, &ThreadParams::default())?;
    config.model = settings.model.clone();
    config.reasoning_effort = settings.effort;
    thread.shutdown().await;
    let open = Open {
        start: SessionStart::Resume {
            id: thread.id().to_string(),
        },
        cwd: canonical,
        config,
        persist: true,
        permissions: Some(settings.permissions),
    };
    let moved = Arc::new(threads::open(&thread.shared, open, false).await?);
    server.insert(moved.clone());
    Ok(moved)
}

pub(crate) fn interrupt(server: &Server, p: TurnInterruptParams) -> Result<Value, RpcError> {
    let thread = loaded(server, &p.thread_id)?;
    let st = thread.state();
    let running = st.current_turn();
    if running.as_deref() != Some(p.turn_id.as_str()) && !st.queued.contains_key(&p.turn_id) {
        return Err(RpcError::invalid_request(format!(
            "expected active turn id `{}` but found `{}`",
            p.turn_id,
            running.unwrap_or_else(|| "none".into())
        )));
    }
    // Stops the running turn and those queued behind it; each completes `interrupted`.
    let _ = thread.handle.submit(Op::Interrupt);
    Ok(json!({}))
}

pub(crate) fn steer(server: &Server, p: TurnSteerParams) -> Result<Value, RpcError> {
    let input = items::input_items(&p.input)?;
    let thread = loaded(server, &p.thread_id)?;
    let mut st = thread.state();
    let running = st.current_turn();
    if running.as_deref() != Some(p.expected_turn_id.as_str()) {
        return Err(RpcError::invalid_request(format!(
            "expected active turn id `{}` but found `{}`",
            p.expected_turn_id,
            running.unwrap_or_else(|| "none".into())
        )));
    }
    let _ = thread.handle.submit(Op::Steer { items: input });
    thread.shared.steered(&mut st, p.input);
    Ok(json!({"turnId": p.expected_turn_id}))
}

/// `thread/rollback` (history only, as the seed documents it: files stay as they are) and
/// `interpreter/thread/undo` (files too). Answers the thread with its turns; the undo also
/// says what it put back.
pub(crate) async fn rollback(
    server: &Arc<Server>,
    p: ThreadRollbackParams,
    restore: Restore,
) -> Result<Value, RpcError> {
    let turns = match (p.num_turns, restore) {
        (Some(0), _) | (None, Restore::Conversation) => {
            return Err(RpcError::invalid_params("numTurns must be >= 1"));
        }
        (Some(n), _) => n,
        (None, _) => 1,
    };
    let thread = loaded(server, &p.thread_id)?;
    if let Some(running) = thread.state().current_turn() {
        return Err(RpcError::invalid_request(format!(
            "turn `{running}` is running: interrupt it or wait for it before rolling back"
        )));
    }
    let result = thread
        .handle
        .submit(Op::Undo { turns, restore })
        .done()
        .await;
    if let OpResult::Failed(message) = result {
        return Err(RpcError::invalid_request(message));
    }
    {
        let mut st = thread.state();
        for _ in 0..turns {
            if st.turns.pop().is_none() {
                st.history.pop();
            }
        }
    }
    let config = thread_config(server, &Default::default())?;
    let store = interpreter_core::sessions::Sessions::new(&config.home);
    let thread_json = threads::loaded_thread(&thread, &store, true);
    let undone = thread.state().last_undo.take();
    let mut response = json!({"thread": thread_json});
    if restore != Restore::Conversation
        && let Some(r) = undone
    {
        response["restored"] = json!(r.restored);
        response["removed"] = json!(r.removed);
        response["skipped"] = json!(r.skipped);
    }
    Ok(response)
}

/// `thread/compact/start`: the compaction runs as a turn of its own; answers `id` itself.
pub(crate) fn compact(server: &Server, id: &Value, params: Value) {
    let result = super::parse::<ThreadIdParams>(params).and_then(|p| loaded(server, &p.thread_id));
    let thread = match result {
        Ok(t) => t,
        Err(e) => return server.out.respond(id, Err(e)),
    };
    let ticket = {
        let mut st = thread.state();
        let ticket = thread.handle.submit(Op::Compact);
        st.queued.insert(ticket.id.clone(), vec![]);
        server.out.respond(id, Ok(json!({})));
        ticket
    };
    watch(&thread, ticket.id.clone(), ticket.done());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_and_efforts_parse() {
        assert_eq!(
            sandbox_of(&json!({"type": "readOnly"})).unwrap(),
            SandboxMode::ReadOnly
        );
        assert_eq!(
            sandbox_of(&json!({"type": "workspaceWrite", "networkAccess": true})).unwrap(),
            SandboxMode::WorkspaceWrite
        );
        assert!(sandbox_of(&json!({"type": "nope"})).is_err());
        assert_eq!(effort_of("ultra").unwrap(), ReasoningEffort::Max);
        assert_eq!(effort_of("high").unwrap(), ReasoningEffort::High);
        assert!(effort_of("lots").is_err());
    }
}
