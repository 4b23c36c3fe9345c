//! What the ACP client does for the agent: file reads and writes through its buffers
//! (`fs/*`, so unsaved text is what the model sees and edits reach the review flow), and
//! permission prompts (`session/request_permission`).

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, KillTerminalRequest, ReadTextFileRequest, ReleaseTerminalRequest,
    SessionId, SessionUpdate, Terminal, TerminalOutputRequest, ToolCallContent, ToolCallUpdate,
    ToolCallUpdateFields, WaitForTerminalExitRequest, WriteTextFileRequest,
};
use futures::future::BoxFuture;
use std::io;
use std::path::Path;

use interpreter_core::tools::CommandRunner;
use interpreter_core::tools::exec::ExecResult;
use interpreter_core::workspace::{DiskBackend, FileBackend, MAX_READ_BYTES};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

pub(super) struct ClientFs {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
    pub read: bool,
    pub write: bool,
}

impl FileBackend for ClientFs {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<String>> {
        Box::pin(async move {
            // A file over the whole-read limit is not worth a round trip through the editor:
            // the disk refuses it.
            let too_big = std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_READ_BYTES);
            if !self.read || too_big {
                return DiskBackend.read(path).await;
            }
            let req = ReadTextFileRequest::new(
                SessionId::new(self.session_id.clone()),
                path.to_path_buf(),
            );
            // The editor is asked first: a file may exist only in its buffers. Clients cannot
            // say "not found" portably, so an error for a path the disk lacks is that.
            match self.cx.send_request(req).block_task().await {
                Ok(resp) => Ok(resp.content),
                Err(e) if !path.exists() => Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{}: no such file ({})", path.display(), e.message),
                )),
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

    fn reads_editor_buffers(&self) -> bool {
        self.read
    }

    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        // ACP has no delete; the disk is the only way.
        DiskBackend.remove(path)
    }
}

/// Shell commands in the client's terminals: `terminal/create`, then wait for exit, a timer
/// or cancellation (→ `terminal/kill`), then `terminal/output` and `terminal/release`.
pub(super) struct ClientTerminals {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
    pub translator: std::sync::Arc<super::updates::Translator>,
}

/// What a client terminal keeps of a command's output.
const TERMINAL_OUTPUT_LIMIT: u64 = 1024 * 1024;

impl CommandRunner for ClientTerminals {
    fn run<'a>(
        &'a self,
        command: &'a str,
        cwd: &'a Path,
        timeout: Duration,
        cancel: &'a CancellationToken,
        call_id: &'a str,
        _on_chunk: Box<dyn FnMut(&str) + Send + 'a>,
    ) -> BoxFuture<'a, io::Result<ExecResult>> {
        Box::pin(async move {
            let start = Instant::now();
            let sid = SessionId::new(self.session_id.clone());
            let fail = |what: &str, e: agent_client_protocol::Error| {
                io::Error::other(format!(
                    "the editor's terminal failed to {what}: {}",
                    e.message
                ))
            };
            let created = self
                .cx
                .send_request(
                    CreateTerminalRequest::new(sid.clone(), "/bin/bash")
                        .args(vec!["-c".to_string(), command.to_string()])
                        .cwd(cwd.to_path_buf())
                        .output_byte_limit(TERMINAL_OUTPUT_LIMIT),
                )
                .block_task()
                .await
                .map_err(|e| fail("start the command", e))?;
            let tid = created.terminal_id;
            self.translator
                .send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.to_string(),
                    ToolCallUpdateFields::new()
                        .content(vec![ToolCallContent::Terminal(Terminal::new(tid.clone()))]),
                )));
            let wait = self
                .cx
                .send_request(WaitForTerminalExitRequest::new(sid.clone(), tid.clone()))
                .block_task();
            let (mut timed_out, mut cancelled) = (false, false);
            tokio::select! {
                r = wait => { r.map_err(|e| fail("wait for the command", e))?; }
                _ = tokio::time::sleep(timeout) => timed_out = true,
                _ = cancel.cancelled() => cancelled = true,
            }
            if timed_out || cancelled {
                let _ = self
                    .cx
                    .send_request(KillTerminalRequest::new(sid.clone(), tid.clone()))
                    .block_task()
                    .await;
            }
            let out = self
                .cx
                .send_request(TerminalOutputRequest::new(sid.clone(), tid.clone()))
                .block_task()
                .await;
            // Always release: the client frees the terminal (and kills it if still running).
            let _ = self
                .cx
                .send_request(ReleaseTerminalRequest::new(sid, tid))
                .block_task()
                .await;
            let out = out.map_err(|e| fail("report the output", e))?;
            let exit_code = out.exit_status.as_ref().and_then(|s| {
                s.exit_code
                    .map(|c| c as i32)
                    .or_else(|| s.signal.as_ref().map(|_| 128 + 9))
            });
            let mut output = out.output;
            if out.truncated {
                output.insert_str(0, "…(earlier output truncated by the editor)…\n");
            }
            Ok(ExecResult {
                exit_code,
                output,
                timed_out,
                cancelled,
                duration: start.elapsed(),
            })
        })
    }
}
