//! How `session/prompt` (and a slash command) is answered: the stop reason, and in `_meta`
//! the turn's id or what an undo did.

use agent_client_protocol::v1::schema::{Meta, StopReason};
use interpreter_core::agent::OpResult;
use interpreter_protocol::{TurnEndReason, ext};
use serde_json::json;

/// How a prompt is answered: its stop reason, and in `_meta` what the client may act on.
pub(super) struct Answer {
    pub stop: StopReason,
    pub meta: Option<Meta>,
}

impl Answer {
    pub(super) fn end_turn() -> Answer {
        Answer {
            stop: StopReason::EndTurn,
            meta: None,
        }
    }
}

/// `{key: value}`, for a `_meta`.
fn meta_of(key: &str, value: serde_json::Value) -> serde_json::Value {
    serde_json::Value::Object([(key.to_string(), value)].into_iter().collect())
}

/// The prompt's turn (`_meta["interpreter/turnId"]`: what `/rewind` takes), or what an undo
/// did (`_meta["interpreter/undone"]`: the turns, and the files restored, removed and kept,
/// relative to the session's folder), with the stop reason.
pub(super) fn answer(r: OpResult) -> Result<Answer, String> {
    let meta = match &r {
        OpResult::Turn(ended) => Some(meta_of(ext::ACP_TURN_ID, json!(ended.turn_id))),
        OpResult::Undone(report) => Some(meta_of(
            ext::ACP_UNDONE,
            json!({
                "turnIds": report.turn_ids,
                "conversation": report.conversation,
                "restored": report.restored,
                "removed": report.removed,
                "skipped": report.skipped,
            }),
        )),
        _ => None,
    };
    Ok(Answer {
        stop: stop_reason(r)?,
        meta: meta.and_then(|m| match m {
            serde_json::Value::Object(map) => Some(map),
            _ => None,
        }),
    })
}

/// How a turn's end answers `session/prompt`.
pub(super) fn stop_reason(r: OpResult) -> Result<StopReason, String> {
    let ended = match r {
        OpResult::Turn(ended) => ended,
        OpResult::Done | OpResult::Undone(_) => return Ok(StopReason::EndTurn),
        OpResult::Failed(m) => return Err(m),
    };
    match ended.reason {
        TurnEndReason::Completed => Ok(StopReason::EndTurn),
        TurnEndReason::Cancelled => Ok(StopReason::Cancelled),
        TurnEndReason::MaxTurnRequests => Ok(StopReason::MaxTurnRequests),
        TurnEndReason::MaxTokens => Ok(StopReason::MaxTokens),
        TurnEndReason::Refusal => Ok(StopReason::Refusal),
        TurnEndReason::Failed { message } => Err(message),
    }
}
