//! `thread/goal/set`, `get` and `clear`: the seed's thread goals over the core's
//! `Op::SetGoal` / `Op::ClearGoal`. `thread/goal/updated` and `thread/goal/cleared` follow the
//! session's events (`events.rs`). A change sent while a turn runs applies when it ends.

use interpreter_core::agent::OpResult;
use interpreter_protocol::{GoalStatus, Op};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

use super::Server;
use super::transport::RpcError;
use super::turns::loaded;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GoalSetParams {
    thread_id: String,
    objective: Option<String>,
    status: Option<GoalStatus>,
    token_budget: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GoalThreadParams {
    thread_id: String,
}

pub(crate) async fn set(server: &Arc<Server>, p: GoalSetParams) -> Result<Value, RpcError> {
    let thread = loaded(server, &p.thread_id)?;
    let op = Op::SetGoal {
        objective: p.objective,
        status: p.status,
        token_budget: p.token_budget,
    };
    if let OpResult::Failed(message) = thread.handle.submit(op).done().await {
        return Err(RpcError::invalid_request(message));
    }
    let goal = thread.state().goal.clone();
    let goal = goal.ok_or_else(|| RpcError::internal("the goal was not set"))?;
    Ok(json!({"goal": super::wire::goal_json(&p.thread_id, &goal)}))
}

pub(crate) fn get(server: &Arc<Server>, p: GoalThreadParams) -> Result<Value, RpcError> {
    let thread = loaded(server, &p.thread_id)?;
    let goal = thread.state().goal.clone();
    Ok(json!({"goal": goal.map(|g| super::wire::goal_json(&p.thread_id, &g))}))
}

pub(crate) async fn clear(server: &Arc<Server>, p: GoalThreadParams) -> Result<Value, RpcError> {
    let thread = loaded(server, &p.thread_id)?;
    let had = thread.state().goal.is_some();
    if let OpResult::Failed(message) = thread.handle.submit(Op::ClearGoal).done().await {
        return Err(RpcError::invalid_request(message));
    }
    Ok(json!({"cleared": had}))
}
