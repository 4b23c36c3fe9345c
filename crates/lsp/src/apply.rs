//! Delivering the agent's overlay changes to the editor as `workspace/applyEdit`.
//!
//! Open documents get a `TextDocumentEdit` versioned to the text the agent read, so the
//! client refuses it if the buffer moved on. If the user typed meanwhile, the change is
//! rebased onto the current buffer (three-way merge) and sent against the current version;
//! a conflict drops it with a reason. A sent edit is confirmed by the client's echo
//! (`didChange`), because some clients (Neovim) skip a stale edit yet answer `applied`.
//! The user's typing is never overwritten.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::ls_types as lsp;

use super::convert;
use super::state::Shared;
use crate::overlay::{BaseText, OverlayChange};
use interpreter_text::documents::{DocumentSnapshot, LineEnding};
use interpreter_text::edits::{TextEdit, minimal_edits, normalize_line_endings};
use interpreter_text::merge::{Rebase, rebase};
use ropey::Rope;

/// How long the user has to answer an applyEdit (VS Code may show a preview).
const APPLY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long to wait for the client to echo an applied edit as `didChange`.
const ECHO_TIMEOUT: Duration = Duration::from_secs(2);
/// Sends per document before giving up on a buffer that keeps changing.
const MAX_ATTEMPTS: usize = 4;

#[derive(Debug, Default)]
pub(super) struct ApplyResult {
    /// Display paths of the files changed.
    pub applied: Vec<String>,
    /// Why other changes were not applied, one sentence each.
    pub problems: Vec<String>,
}

pub(super) async fn apply_all(
    shared: &Arc<Shared>,
    changes: Vec<OverlayChange>,
    label: &str,
    cancel: &CancellationToken,
    display: impl Fn(&Path) -> String,
) -> ApplyResult {
    let mut result = ApplyResult::default();
    for change in changes {
        if cancel.is_cancelled() {
            result
                .problems
                .push("cancelled before every edit was applied".into());
            break;
        }
        let name = display(&change.path);
        let outcome = apply_one(shared, &change, label, &name).await;
        match outcome {
            Ok(true) => result.applied.push(name),
            Ok(false) => {}
            Err(problem) => result.problems.push(problem),
        }
    }
    result
}

/// Ok(true) when the editor now has the change, Ok(false) when there was nothing to do.
async fn apply_one(
    shared: &Arc<Shared>,
    change: &OverlayChange,
    label: &str,
    name: &str,
) -> Result<bool, String> {
    let caps = shared.caps();
    let enc = shared.encoding();
    // A file opened in the editor after the agent read it from disk is rebased like a
    // buffer the user typed in.
    let base_doc = match &change.base {
        BaseText::Document(s) => Some(s.clone()),
        BaseText::Disk(text) => {
            shared
                .documents
                .snapshot_path(&change.path)
                .map(|cur| DocumentSnapshot {
                    version: i32::MIN,
                    line_ending: LineEnding::detect(text),
                    rope: Rope::from_str(text),
                    ..cur
                })
        }
        BaseText::Missing => None,
    };
    match (&change.new_text, base_doc) {
        (Some(new), Some(base)) => apply_to_buffer(shared, &base, new, label, name).await,
        (Some(new), None) => {
            let uri = convert::path_to_uri(&change.path)
                .ok_or_else(|| format!("{name}: no file URI for this path"))?;
            match &change.base {
                BaseText::Disk(old) => {
                    // Not open: versionless edits against the file as the agent read it.
                    let rope = Rope::from_str(old);
                    let text = normalize_line_endings(new, LineEnding::detect(old));
                    let edits = minimal_edits(&rope, &text, enc);
                    let edit = text_edit(&caps, uri, None, edits);
                    send(shared, label, edit, name).await.map(|_| true)
                }
                _ => {
                    if !(caps.create_files && caps.document_changes) {
                        return Err(format!(
                            "{name} is a new file, and the editor cannot create files through LSP; not created"
                        ));
                    }
                    let edit = lsp::WorkspaceEdit {
                        document_changes: Some(lsp::DocumentChanges::Operations(vec![
                            lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Create(
                                lsp::CreateFile {
                                    uri: uri.clone(),
                                    options: Some(lsp::CreateFileOptions {
                                        overwrite: Some(false),
                                        ignore_if_exists: Some(true),
                                    }),
                                    annotation_id: None,
                                },
                            )),
                            lsp::DocumentChangeOperation::Edit(lsp::TextDocumentEdit {
                                text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                                    uri,
                                    version: None,
                                },
                                edits: vec![lsp::OneOf::Left(lsp::TextEdit {
                                    range: lsp::Range::default(),
                                    new_text: new.clone(),
                                })],
                            }),
                        ])),
                        ..Default::default()
                    };
                    send(shared, label, edit, name).await.map(|_| true)
                }
            }
        }
        (None, base) => {
            if matches!(change.base, BaseText::Missing) {
                return Ok(false);
            }
            if !(caps.delete_files && caps.document_changes) {
                return Err(format!(
                    "the agent deleted {name}, and the editor cannot delete files through LSP; kept"
                ));
            }
            let uri = match &base {
                Some(b) => convert::parse_uri(&b.uri),
                None => convert::path_to_uri(&change.path),
            }
            .ok_or_else(|| format!("{name}: no URI"))?;
            let edit = lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Operations(vec![
                    lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Delete(lsp::DeleteFile {
                        uri,
                        options: None,
                        annotation_id: None,
                    })),
                ])),
                ..Default::default()
            };
            send(shared, label, edit, name).await.map(|_| true)
        }
    }
}

/// Brings an open buffer to the agent's text, rebasing over whatever the user typed since
/// `base` (the text the agent read).
async fn apply_to_buffer(
    shared: &Arc<Shared>,
    base: &DocumentSnapshot,
    new: &str,
    label: &str,
    name: &str,
) -> Result<bool, String> {
    let caps = shared.caps();
    let enc = shared.encoding();
    let uri = convert::parse_uri(&base.uri).ok_or_else(|| format!("{name}: invalid URI"))?;
    let base_text = base.rope.to_string();
    let theirs = normalize_line_endings(new, base.line_ending).into_owned();
    let mut sent_any = false;
    for _ in 0..MAX_ATTEMPTS {
        let Some(cur) = shared.documents.snapshot(&base.uri) else {
            return Err(format!(
                "{name} was closed before the edit was ready; not applied"
            ));
        };
        let target = if cur.version == base.version {
            theirs.clone()
        } else {
            match rebase(&base_text, &cur.rope.to_string(), &theirs) {
                Rebase::UpToDate => return Ok(sent_any),
                Rebase::Merged(m) => m,
                Rebase::Conflict { lines } => {
                    tracing::info!(
                        "{name}: conflict between the agent's edit (from version {}) and the \
                         buffer (version {})",
                        base.version,
                        cur.version
                    );
                    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                    return Err(format!(
                        "dropped the edit to {name}: you changed line {} while interpreter was \
                         working on it; nothing was overwritten",
                        lines.join(", ")
                    ));
                }
            }
        };
        let edits = minimal_edits(&cur.rope, &target, enc);
        if edits.is_empty() {
            return Ok(sent_any);
        }
        let edit = text_edit(&caps, uri.clone(), Some(cur.version), edits);
        let applied = send(shared, label, edit, name).await?;
        if !caps.document_changes {
            // Unversioned edits cannot be checked against typing; trust the answer.
            return if applied {
                Ok(true)
            } else {
                Err(format!("the editor refused the edit to {name}"))
            };
        }
        sent_any |= applied;
        // Applied or refused, the buffer should move on (the edit's echo, or the typing that
        // made it stale); look again once it has.
        match wait_for_newer(shared, &base.uri, cur.version, ECHO_TIMEOUT).await {
            Some(now) if applied && now.rope == target.as_str() => return Ok(true),
            Some(_) => continue,
            None if applied => return Ok(true),
            None => return Err(format!("the editor refused the edit to {name}")),
        }
    }
    Err(format!(
        "dropped the edit to {name}: the buffer kept changing while it was being applied"
    ))
}

fn text_edit(
    caps: &super::state::ClientCaps,
    uri: lsp::Uri,
    version: Option<i32>,
    edits: Vec<TextEdit>,
) -> lsp::WorkspaceEdit {
    let edits: Vec<lsp::TextEdit> = edits.into_iter().map(convert::to_lsp_edit).collect();
    if caps.document_changes {
        lsp::WorkspaceEdit {
            document_changes: Some(lsp::DocumentChanges::Edits(vec![lsp::TextDocumentEdit {
                text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version },
                edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
            }])),
            ..Default::default()
        }
    } else {
        lsp::WorkspaceEdit {
            changes: Some(HashMap::from([(uri, edits)])),
            ..Default::default()
        }
    }
}

/// Sends `workspace/applyEdit` (from a spawned task, never a handler). Ok(applied).
async fn send(
    shared: &Arc<Shared>,
    label: &str,
    edit: lsp::WorkspaceEdit,
    name: &str,
) -> Result<bool, String> {
    let request = shared
        .client
        .send_request::<lsp::request::ApplyWorkspaceEdit>(lsp::ApplyWorkspaceEditParams {
            label: Some(label.to_string()),
            edit,
        });
    match tokio::time::timeout(APPLY_TIMEOUT, request).await {
        Ok(Ok(r)) => {
            if !r.applied {
                tracing::info!(
                    "applyEdit for {name} refused: {}",
                    r.failure_reason.as_deref().unwrap_or("no reason given")
                );
            }
            Ok(r.applied)
        }
        Ok(Err(e)) => Err(format!(
            "the editor failed to apply the edit to {name}: {e}"
        )),
        Err(_) => Err(format!(
            "the editor did not answer the edit to {name} within {}s",
            APPLY_TIMEOUT.as_secs()
        )),
    }
}

/// Waits until the document's version passes `version` (or it closes, or time runs out).
async fn wait_for_newer(
    shared: &Shared,
    uri: &str,
    version: i32,
    timeout: Duration,
) -> Option<DocumentSnapshot> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let notified = shared.changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        match shared.documents.snapshot(uri) {
            Some(s) if s.version > version => return Some(s),
            None => return None,
            Some(_) => {}
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return None;
        }
    }
}
