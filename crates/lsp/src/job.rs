//! One code action run: a spawned task that reports `$/progress`, runs an agent turn whose
//! edits stay in an overlay, then hands them to [`super::apply`] and presents the answer.
//! Cancellation comes from `window/workDoneProgress/cancel`, `$/cancelRequest` (by the
//! executeCommand's id) or shutdown, through [`Jobs`].

use interpreter_protocol::{
    ApprovalDecision, ApprovalRequest, Event, InputItem, Op, ToolKind, TurnEndReason,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::ls_types as lsp;

use super::actions::{self, Action, CommandArgs, PromptDoc};
use super::apply;
use super::convert;
use super::state::Shared;
use crate::overlay::OverlayBackend;
use interpreter_core::agent::{
    EventSink, OpResult, SessionError, SessionHandle, SessionOptions, SessionStart,
};
use interpreter_core::config::{ApprovalPolicy, SandboxMode};
use interpreter_core::sessions::Sessions;
use interpreter_face::view::SessionView;
use tokio::sync::mpsc::UnboundedReceiver;

/// How long the client may take to answer `window/workDoneProgress/create` or
/// `window/showDocument`.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// `$/progress` for one job; every method is a no-op without a token.
struct Progress {
    shared: Arc<Shared>,
    token: Option<lsp::ProgressToken>,
}

impl Progress {
    /// Uses the client's token, or creates one when the client supports server-initiated
    /// progress, then sends `begin`.
    async fn begin(
        shared: &Arc<Shared>,
        job: u64,
        action: Action,
        client_token: Option<lsp::ProgressToken>,
    ) -> Progress {
        let token = match client_token {
            Some(t) => Some(t),
            None if shared.caps().work_done_progress => {
                let t = lsp::ProgressToken::String(format!(
                    "interpreter/{}",
                    uuid::Uuid::new_v4().simple()
                ));
                shared.jobs.set_progress(job, t.clone());
                match tokio::time::timeout(
                    CLIENT_TIMEOUT,
                    shared.client.create_work_done_progress(t.clone()),
                )
                .await
                {
                    Ok(Ok(())) => Some(t),
                    Ok(Err(e)) => {
                        tracing::warn!("window/workDoneProgress/create failed: {e}");
                        None
                    }
                    Err(_) => {
                        tracing::warn!("window/workDoneProgress/create timed out");
                        None
                    }
                }
            }
            None => None,
        };
        let p = Progress {
            shared: shared.clone(),
            token,
        };
        p.send(lsp::WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin {
            title: format!("interpreter: {}", action.label()),
            cancellable: Some(true),
            message: Some("starting".into()),
            percentage: None,
        }))
        .await;
        p
    }

    async fn report(&self, message: String) {
        self.send(lsp::WorkDoneProgress::Report(lsp::WorkDoneProgressReport {
            cancellable: Some(true),
            message: Some(message),
            percentage: None,
        }))
        .await;
    }

    async fn end(&self, message: String) {
        self.send(lsp::WorkDoneProgress::End(lsp::WorkDoneProgressEnd {
            message: Some(message),
        }))
        .await;
    }

    async fn send(&self, value: lsp::WorkDoneProgress) {
        if let Some(token) = &self.token {
            self.shared
                .client
                .send_notification::<lsp::notification::Progress>(lsp::ProgressParams {
                    token: token.clone(),
                    value: lsp::ProgressParamsValue::WorkDone(value),
                })
                .await;
        }
    }
}

/// What the LSP policy allows: buffer edits (they land in the overlay, never on disk) when
/// the action may edit. The sandbox runs read-only with approvals on request, so every write
/// asks here and every command that is not known to be read-only is refused.
fn approve(allow_edits: bool, req: &ApprovalRequest) -> ApprovalDecision {
    if allow_edits && req.command.is_none() && req.kind == ToolKind::Edit {
        ApprovalDecision::AllowOnce
    } else {
        ApprovalDecision::Reject
    }
}

/// Runs one action to its end; reports everything to the client and never panics on bad
/// input.
pub(super) async fn run(
    shared: Arc<Shared>,
    job: u64,
    cancel: CancellationToken,
    action: Action,
    args: CommandArgs,
    client_token: Option<lsp::ProgressToken>,
) {
    let progress = Progress::begin(&shared, job, action, client_token).await;
    let end = run_action(&shared, &cancel, action, &args, &progress).await;
    progress.end(end).await;
    shared.jobs.finish(job);
}

/// The folder the session runs in (the workspace root holding the file) and other roots.
fn session_roots(roots: &[PathBuf], file: Option<&Path>) -> (PathBuf, Vec<PathBuf>) {
    let holder = file.and_then(|f| {
        roots
            .iter()
            .filter(|r| f.starts_with(r))
            .max_by_key(|r| r.as_os_str().len())
    });
    let cwd = holder
        .cloned()
        .or_else(|| file.and_then(Path::parent).map(Path::to_path_buf))
        .or_else(|| roots.first().cloned())
        .unwrap_or_else(|| PathBuf::from("."));
    let extra = roots.iter().filter(|r| **r != cwd).cloned().collect();
    (cwd, extra)
}

/// The agent session of one action, and what it answered.
struct ActionRun {
    handle: SessionHandle,
    rx: UnboundedReceiver<Event>,
    overlay: Arc<OverlayBackend>,
    view: SessionView,
    answer: String,
}

/// Returns the message that ends the progress.
async fn run_action(
    shared: &Arc<Shared>,
    cancel: &CancellationToken,
    action: Action,
    args: &CommandArgs,
    progress: &Progress,
) -> String {
    let fail = |message: String| {
        tracing::warn!("{message}");
        shared.show_later(lsp::MessageType::ERROR, message.clone());
        message
    };
    let mut run = match open(shared, action, args).await {
        Ok(r) => r,
        Err(message) => return fail(message),
    };
    let file = convert::uri_to_path(&args.uri);
    let display_path = match &file {
        Some(f) => run.view.display_path(f),
        None => args.uri.as_str().to_string(),
    };
    let snapshot = shared.documents.snapshot(args.uri.as_str());
    let prompt = actions::prompt(
        action,
        args,
        &PromptDoc {
            display_path: &display_path,
            snapshot: snapshot.as_ref(),
            encoding: shared.encoding(),
        },
    );
    let reason = drive(&mut run, action, prompt, cancel, progress).await;
    let _ = run.handle.submit(Op::Shutdown);
    if cancel.is_cancelled() || reason == TurnEndReason::Cancelled {
        return "cancelled; no edits applied".into();
    }
    let stopped_early = match &reason {
        TurnEndReason::Failed { message } => {
            return fail(format!("interpreter: {} failed: {message}", action.label()));
        }
        TurnEndReason::Completed => None,
        other => Some(format!("{other:?}")),
    };
    finish(shared, cancel, action, &run, stopped_early, progress).await
}

/// Starts the action's session: read-only sandbox, approvals on request, edits in the
/// overlay. Err is the message for the user.
async fn open(
    shared: &Arc<Shared>,
    action: Action,
    args: &CommandArgs,
) -> Result<ActionRun, String> {
    let mut config = shared.settings().load_config(&shared.common).map_err(|e| {
        format!(
            "interpreter: cannot run {}: invalid configuration: {e}",
            action.label()
        )
    })?;
    config.sandbox_mode = SandboxMode::ReadOnly;
    config.approval_policy = ApprovalPolicy::OnRequest;
    let file = convert::uri_to_path(&args.uri);
    let (cwd, extra_roots) = session_roots(&shared.roots(), file.as_deref());
    let overlay = Arc::new(OverlayBackend::new(shared.documents.clone()));
    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions {
        extra_roots,
        backend: overlay.clone(),
        // Edits live in the editor's buffers until it saves them: it undoes them itself.
        checkpoints: false,
        ..SessionOptions::new(config, cwd.clone(), events)
    };
    let handle = Sessions::open(opts, SessionStart::New { id: None })
        .await
        .map_err(|e| match e {
            SessionError::MissingKey(k) => format!("interpreter: {k}"),
            other => format!("interpreter: could not start the agent: {other}"),
        })?;
    let mut early = Vec::new();
    let view = SessionView::configured(&mut rx, &mut early)
        .await
        .ok_or("interpreter: the agent session ended before it was ready")?;
    for e in early {
        if let Event::Warning { message } = e {
            tracing::warn!("{message}");
        }
    }
    Ok(ActionRun {
        handle,
        rx,
        overlay,
        view,
        answer: String::new(),
    })
}

/// Runs the turn: progress for each tool call, the answer kept, approvals decided here.
async fn drive(
    run: &mut ActionRun,
    action: Action,
    prompt: String,
    cancel: &CancellationToken,
    progress: &Progress,
) -> TurnEndReason {
    let done = run
        .handle
        .submit(Op::UserInput {
            items: vec![InputItem::Text { text: prompt }],
        })
        .done();
    tokio::pin!(done);
    let mut interrupted = false;
    let result = loop {
        tokio::select! {
            r = &mut done => break r,
            Some(ev) = run.rx.recv() => on_event(run, action, ev, progress).await,
            _ = cancel.cancelled(), if !interrupted => {
                interrupted = true;
                let _ = run.handle.submit(Op::Interrupt);
            }
        }
    };
    while let Ok(ev) = run.rx.try_recv() {
        on_event(run, action, ev, progress).await;
    }
    match result {
        OpResult::Turn(ended) => ended.reason,
        OpResult::Done | OpResult::Undone(_) | OpResult::Failed(_) => TurnEndReason::Failed {
            message: "the agent session ended before the turn did".into(),
        },
    }
}

async fn on_event(run: &mut ActionRun, action: Action, ev: Event, progress: &Progress) {
    match ev {
        Event::ToolCallBegin(b) => progress.report(b.title).await,
        Event::AgentMessage { text, .. } => run.answer = text,
        Event::Warning { message } => tracing::warn!("{message}"),
        Event::ModelWaiting {
            provider,
            attempt,
            elapsed_ms,
        } => {
            progress
                .report(interpreter_face::waiting_text(
                    &provider, attempt, elapsed_ms,
                ))
                .await
        }
        Event::ApprovalRequested(req) => {
            let decision = approve(action.may_edit(), &req);
            let _ = run.handle.submit(Op::Approval {
                call_id: req.call_id,
                decision,
            });
        }
        _ => {}
    }
}

/// Applies the overlay's edits and presents the answer; the message that ends the progress.
async fn finish(
    shared: &Arc<Shared>,
    cancel: &CancellationToken,
    action: Action,
    run: &ActionRun,
    stopped_early: Option<String>,
    progress: &Progress,
) -> String {
    let mut summary = Vec::new();
    let mut edited = 0;
    if action.may_edit() {
        let changes = run.overlay.changes();
        if !changes.is_empty() {
            progress.report("applying edits".into()).await;
            let label = format!("interpreter: {}", action.label());
            let result = apply::apply_all(shared, changes, &label, cancel, |p| {
                run.view.display_path(p)
            })
            .await;
            edited = result.applied.len();
            if !result.applied.is_empty() {
                summary.push(format!("edited {}", result.applied.join(", ")));
            }
            for problem in result.problems {
                tracing::warn!("{problem}");
                shared.show_later(lsp::MessageType::WARNING, format!("interpreter: {problem}"));
                summary.push(problem);
            }
        }
    }
    if let Some(why) = &stopped_early {
        shared.show_later(
            lsp::MessageType::WARNING,
            format!(
                "interpreter: {} stopped early ({why}); edits made so far were applied",
                action.label()
            ),
        );
    }
    let answer = run.answer.trim();
    match action {
        Action::Explain | Action::Ask if !answer.is_empty() => {
            present(shared, action, run.handle.id(), answer).await;
        }
        Action::Explain | Action::Ask => {}
        _ if edited == 0 && summary.is_empty() => {
            let text: String = answer.chars().take(500).collect();
            shared.show_later(
                lsp::MessageType::INFO,
                if text.is_empty() {
                    "interpreter made no changes".to_string()
                } else {
                    format!("interpreter made no changes: {text}")
                },
            );
            summary.push("no changes".into());
        }
        _ => {}
    }
    if summary.is_empty() {
        "done".into()
    } else {
        summary.join("; ")
    }
}

/// Shows an answer: as a Markdown document when the client can open one, else as a message.
async fn present(shared: &Arc<Shared>, action: Action, session_id: &str, text: &str) {
    if shared.caps().show_document {
        match show_markdown(shared, action, session_id, text).await {
            Ok(()) => return,
            Err(e) => tracing::warn!("window/showDocument failed, using a message: {e}"),
        }
    }
    shared
        .client
        .show_message(lsp::MessageType::INFO, text.to_string())
        .await;
}

/// Writes the answer to a Markdown file in the temp folder (I/O) and asks the client to
/// open it.
async fn show_markdown(
    shared: &Arc<Shared>,
    action: Action,
    session_id: &str,
    text: &str,
) -> Result<(), String> {
    // A folder of our own (mode 0700) in the shared temp folder, so other users cannot
    // read the answers or plant files there.
    let dir = std::env::temp_dir().join(format!(
        "interpreter-lsp-{}",
        interpreter_core::platform::user_tag()
    ));
    let made = {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || private_dir(&dir)).await
    };
    made.map_err(|e| e.to_string())?
        .map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let name = action.label().to_lowercase().replace(' ', "-");
    let path = dir.join(format!("{name}-{session_id}.md"));
    tokio::fs::write(
        &path,
        format!("# interpreter: {}\n\n{text}\n", action.label()),
    )
    .await
    .map_err(|e| format!("writing {}: {e}", path.display()))?;
    let uri =
        convert::path_to_uri(&path).ok_or_else(|| format!("no URI for {}", path.display()))?;
    let shown = tokio::time::timeout(
        CLIENT_TIMEOUT,
        shared.client.show_document(lsp::ShowDocumentParams {
            uri,
            external: Some(false),
            take_focus: Some(true),
            selection: None,
        }),
    )
    .await;
    match shown {
        Ok(Ok(true)) => Ok(()),
        Ok(Ok(false)) => Err("the client did not open the document".into()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("timed out".into()),
    }
}

/// Creates `dir` with mode 0700, or checks that an existing one is ours and private (I/O).
#[cfg(unix)]
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(std::io::Error::other(
            "exists but is not a private folder of this user",
        ));
    }
    Ok(())
}

/// Windows: the temp folder is in the user's profile, private to the user by its ACL; a
/// link planted in its place is refused.
#[cfg(windows)]
fn private_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other("exists but is not a folder"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_core::sandbox::{Intent, Policy, Verdict};

    #[test]
    fn lsp_policy_allows_buffer_edits_and_read_only_commands_only() {
        // The LSP session runs read-only with approvals on request: writes ask (and the
        // approver allows them: they land in the overlay), unknown commands ask (refused).
        let p = Policy::new(SandboxMode::ReadOnly, ApprovalPolicy::OnRequest);
        assert!(!matches!(
            p.decide(&Intent::Write { paths: vec![] }),
            Verdict::Deny { .. }
        ));
        for cmd in ["cargo build", "touch x", "echo x > y", "rm -rf /"] {
            let v = p.decide(&Intent::Exec {
                command: cmd.into(),
            });
            assert_ne!(v, Verdict::Allow, "{cmd}");
        }
        assert_eq!(
            p.decide(&Intent::Exec {
                command: "git diff".into()
            }),
            Verdict::Allow
        );

        let req = |kind, command: Option<&str>| ApprovalRequest {
            call_id: "c".into(),
            tool: "t".into(),
            kind,
            title: "t".into(),
            reason: "r".into(),
            command: command.map(String::from),
            changes: vec![],
            remember_key: String::new(),
            dangerous: false,
        };
        assert_eq!(
            approve(true, &req(ToolKind::Edit, None)),
            ApprovalDecision::AllowOnce
        );
        assert_eq!(
            approve(true, &req(ToolKind::Execute, Some("make"))),
            ApprovalDecision::Reject
        );
        assert_eq!(
            approve(false, &req(ToolKind::Edit, None)),
            ApprovalDecision::Reject
        );
    }

    #[cfg(unix)]
    #[test]
    fn answers_go_to_a_private_folder() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("answers");
        private_dir(&dir).unwrap();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        private_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(private_dir(&dir).is_err());
    }

    #[test]
    fn session_folder_is_the_root_holding_the_file() {
        let roots = vec![PathBuf::from("/w"), PathBuf::from("/w/sub")];
        let (cwd, extra) = session_roots(&roots, Some(Path::new("/w/sub/a.rs")));
        assert_eq!(cwd, PathBuf::from("/w/sub"));
        assert_eq!(extra, vec![PathBuf::from("/w")]);
        let (cwd, _) = session_roots(&roots, Some(Path::new("/elsewhere/b.rs")));
        assert_eq!(cwd, PathBuf::from("/elsewhere"));
        let (cwd, _) = session_roots(&roots, None);
        assert_eq!(cwd, PathBuf::from("/w"));
    }
}
