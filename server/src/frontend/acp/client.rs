//! What the ACP client does for the agent: file reads and writes through its buffers
//! (`fs/*`, so unsaved text is what the model sees and edits reach the review flow), and
//! permission prompts (`session/request_permission`).

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, ReadTextFileRequest, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, ToolCallUpdate, ToolCallUpdateFields,
    WriteTextFileRequest,
};
use futures::future::BoxFuture;
use interpreter_protocol::{ApprovalDecision, ApprovalRequest};
use serde_json::json;
use std::io;
use std::path::Path;

use super::updates::{acp_kind, diff_contents};
use crate::tools::Approver;
use crate::workspace::{DiskBackend, FileBackend};

pub struct ClientFs {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
    pub read: bool,
    pub write: bool,
}

impl FileBackend for ClientFs {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<String>> {
        Box::pin(async move {
            // The client cannot say "not found" portably; ask the disk first.
            if !self.read || !path.exists() {
                return DiskBackend.read(path).await;
            }
            let req = ReadTextFileRequest::new(SessionId::new(self.session_id.clone()), path.to_path_buf());
            match self.cx.send_request(req).block_task().await {
                Ok(resp) => Ok(resp.content),
                Err(e) => Err(io::Error::other(format!(
                    "the editor could not read {}: {}",
                    path.display(),
                    e.message
                ))),
            }
        })
    }

    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            if !self.write {
                return DiskBackend.write(path, text).await;
            }
            let req = WriteTextFileRequest::new(
                SessionId::new(self.session_id.clone()),
                path.to_path_buf(),
                text.to_string(),
            );
            match self.cx.send_request(req).block_task().await {
                Ok(_) => Ok(()),
                Err(e) => Err(io::Error::other(format!(
                    "the editor could not write {}: {}",
                    path.display(),
                    e.message
                ))),
            }
        })
    }

    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        // ACP has no delete; the disk is the only way.
        DiskBackend.remove(path)
    }
}

pub struct ClientApprover {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
}

impl Approver for ClientApprover {
    fn request(&self, req: ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> {
        let cx = self.cx.clone();
        let sid = SessionId::new(self.session_id.clone());
        Box::pin(async move {
            let mut fields = ToolCallUpdateFields::new()
                .title(req.title.clone())
                .kind(acp_kind(req.kind));
            if !req.changes.is_empty() {
                fields = fields.content(diff_contents(&req.changes));
            }
            if let Some(c) = &req.command {
                fields = fields.raw_input(json!({"command": c, "reason": req.reason}));
            }
            let always = match req.command.as_deref() {
                Some(_) => format!(
                    "Always allow `{}` in this session",
                    req.remember_key.trim_start_matches("exec:")
                ),
                None => "Always allow edits to these files in this session".to_string(),
            };
            let options = vec![
                PermissionOption::new("allow_once", "Allow once", PermissionOptionKind::AllowOnce),
                PermissionOption::new("allow_always", always, PermissionOptionKind::AllowAlways),
                PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce),
            ];
            let request = RequestPermissionRequest::new(sid, ToolCallUpdate::new(req.call_id.clone(), fields), options);
            match cx.send_request(request).block_task().await {
                Ok(resp) => match resp.outcome {
                    RequestPermissionOutcome::Selected(s) => match &*s.option_id.0 {
                        "allow_once" => ApprovalDecision::AllowOnce,
                        "allow_always" => ApprovalDecision::AllowAlways,
                        _ => ApprovalDecision::Reject,
                    },
                    RequestPermissionOutcome::Cancelled => ApprovalDecision::Cancelled,
                    _ => ApprovalDecision::Reject,
                },
                Err(e) => {
                    tracing::warn!("permission request failed: {}", e.message);
                    ApprovalDecision::Reject
                }
            }
        })
    }
}
