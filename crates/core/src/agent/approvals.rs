//! Approvals: the session asks the front end with [`Event::ApprovalRequested`] and waits
//! (after the `PermissionRequest` and `Notification` hooks, [`HookedApprover`]);
//! the answer comes back as an `Op::Approval`, routed to the waiting call.

use futures::future::BoxFuture;
use interpreter_protocol::{ApprovalDecision, ApprovalRequest, Event};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::EventSink;
use crate::hooks::{CallView, Dialect, HookEvent, HookRunner, Payload, Permission};
use crate::tools::Approver;

/// Approvals asked and not yet answered, by call id.
#[derive(Default)]
pub(super) struct Approvals {
    pending: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
}

impl Approvals {
    pub(super) fn answer(&self, call_id: &str, decision: ApprovalDecision) {
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(call_id);
        match waiting {
            Some(tx) => {
                let _ = tx.send(decision);
            }
            None => tracing::debug!("approval for `{call_id}` came when none was asked"),
        }
    }
}

/// Asks the front end with an [`Event::ApprovalRequested`]; the answer comes back as an
/// [`Op::Approval`] routed to [`Approvals`].
pub(super) struct EventApprover {
    pub(super) approvals: Arc<Approvals>,
    pub(super) events: EventSink,
}

impl Approver for EventApprover {
    fn request(&self, req: ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> {
        let (tx, rx) = oneshot::channel();
        self.approvals
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(req.call_id.clone(), tx);
        self.events.send(Event::ApprovalRequested(req));
        Box::pin(async move { rx.await.unwrap_or(ApprovalDecision::Cancelled) })
    }
}

pub(super) fn fields(pairs: Value) -> Map<String, Value> {
    match pairs {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Runs `event`'s hooks for a tool call, with the event's own fields `extra`.
pub(super) async fn run_for_call(
    hooks: &HookRunner,
    event: HookEvent,
    call: &CallView,
    call_id: &str,
    extra: &Map<String, Value>,
    cancel: &CancellationToken,
) -> crate::hooks::Verdict {
    hooks
        .run(
            event,
            |d| crate::hooks::call_names(call, d),
            |d| call_payloads(call, call_id, d, extra),
            cancel,
        )
        .await
}

/// A call's payloads for a dialect: `tool_name`, `tool_input` and `tool_use_id`, plus `extra`.
pub(super) fn call_payloads(
    call: &CallView,
    call_id: &str,
    d: Dialect,
    extra: &Map<String, Value>,
) -> Vec<Payload> {
    let many = crate::hooks::tool_inputs(call, d);
    let n = many.len();
    many.into_iter()
        .enumerate()
        .map(|(i, (name, input))| {
            let mut f = fields(json!({
                "tool_name": name,
                "tool_input": input,
                "tool_use_id": call_id,
            }));
            f.extend(extra.clone());
            let suffix = match n {
                1 => call_id.to_string(),
                _ => format!("{call_id}:{i}"),
            };
            (suffix, f)
        })
        .collect()
}

/// Asks through `inner`, after the `PermissionRequest` hooks had their say (an allow or a
/// deny answers without asking); `Notification` hooks hear that the user is asked.
pub(super) struct HookedApprover {
    pub(super) inner: Arc<dyn Approver>,
    pub(super) hooks: Arc<HookRunner>,
}

impl HookedApprover {
    fn call_view(req: &ApprovalRequest) -> CallView {
        CallView {
            name: req.tool.clone(),
            kind: req.kind,
            command: req.command.clone(),
            args: json!({}),
            paths: req.changes.iter().map(|c| c.path.clone()).collect(),
            subagent: false,
        }
    }
}

impl Approver for HookedApprover {
    fn request(&self, req: ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> {
        let inner = self.inner.clone();
        let hooks = self.hooks.clone();
        Box::pin(async move {
            let cancel = CancellationToken::new();
            if hooks.has(HookEvent::PermissionRequest) {
                let call = Self::call_view(&req);
                let v = run_for_call(
                    &hooks,
                    HookEvent::PermissionRequest,
                    &call,
                    &req.call_id,
                    &Map::new(),
                    &cancel,
                )
                .await;
                match v.permission {
                    Some(Permission::Deny) => return ApprovalDecision::Reject,
                    // A dangerous call is the user's to allow.
                    Some(Permission::Allow) if !req.dangerous => {
                        return ApprovalDecision::AllowOnce;
                    }
                    _ => {}
                }
            }
            if hooks.has(HookEvent::Notification) {
                let message = format!("The agent needs your permission: {}", req.title);
                let extra = fields(json!({
                    "message": message,
                    "notification_type": "permission_prompt",
                }));
                let hooks = hooks.clone();
                // The user is asked now, whatever the hook does and however long it takes.
                tokio::spawn(async move {
                    hooks
                        .run_plain(
                            HookEvent::Notification,
                            Some("permission_prompt"),
                            extra,
                            &CancellationToken::new(),
                        )
                        .await;
                });
            }
            inner.request(req).await
        })
    }
}

/// The session's approver: it asks the front end, behind the hooks of approvals.
pub(super) fn approver(
    approvals: &Arc<Approvals>,
    events: &EventSink,
    hooks: &Arc<HookRunner>,
) -> Arc<dyn Approver> {
    Arc::new(HookedApprover {
        inner: Arc::new(EventApprover {
            approvals: approvals.clone(),
            events: events.clone(),
        }),
        hooks: hooks.clone(),
    })
}
