//! Approvals: the session asks the front end with [`Event::ApprovalRequested`] and waits;
//! the answer comes back as an `Op::Approval`, routed to the waiting call.

use futures::future::BoxFuture;
use interpreter_protocol::{ApprovalDecision, ApprovalRequest, Event};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use super::EventSink;
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
