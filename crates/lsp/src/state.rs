//! What the handlers and the spawned jobs share: the client, the open documents, the
//! client's capabilities and settings, and the running jobs. Imports no handler.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::Id;
use tower_lsp_server::ls_types as lsp;

use super::settings::Settings;
use interpreter_core::config::Overrides;
use interpreter_text::documents::DocumentStore;
use interpreter_text::positions::PositionEncoding;

/// What the client said it can do (from `initialize`).
#[derive(Debug, Clone, Default)]
pub(super) struct ClientCaps {
    pub work_done_progress: bool,
    pub show_document: bool,
    pub document_changes: bool,
    pub create_files: bool,
    pub delete_files: bool,
}

impl ClientCaps {
    pub(super) fn from_lsp(c: &lsp::ClientCapabilities) -> ClientCaps {
        let edit = c.workspace.as_ref().and_then(|w| w.workspace_edit.as_ref());
        let ops = edit
            .and_then(|e| e.resource_operations.clone())
            .unwrap_or_default();
        ClientCaps {
            work_done_progress: c
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
            show_document: c
                .window
                .as_ref()
                .and_then(|w| w.show_document.as_ref())
                .is_some_and(|s| s.support),
            document_changes: edit.and_then(|e| e.document_changes).unwrap_or(false),
            create_files: ops.contains(&lsp::ResourceOperationKind::Create),
            delete_files: ops.contains(&lsp::ResourceOperationKind::Delete),
        }
    }
}

/// State shared by the handlers and the spawned jobs.
pub(super) struct Shared {
    pub client: Client,
    pub documents: Arc<DocumentStore>,
    /// Woken on every document change (jobs wait for the client to echo an applied edit).
    pub changed: Notify,
    pub jobs: Arc<Jobs>,
    pub common: Overrides,
    state: Mutex<State>,
}

pub(super) struct State {
    pub encoding: PositionEncoding,
    pub caps: ClientCaps,
    pub roots: Vec<PathBuf>,
    /// From `initializationOptions`; later settings are merged over them.
    pub init_settings: Settings,
    /// The settings in force (the last ones that produced a valid configuration).
    pub settings: Settings,
    /// Problems found during `initialize`, shown once the client is ready.
    pub startup_messages: Vec<(lsp::MessageType, String)>,
}

impl Shared {
    pub(super) fn new(client: Client, common: Overrides, jobs: Arc<Jobs>) -> Shared {
        Shared {
            client,
            documents: Arc::new(DocumentStore::new()),
            changed: Notify::new(),
            jobs,
            common,
            state: Mutex::new(State {
                encoding: PositionEncoding::Utf16,
                caps: ClientCaps::default(),
                roots: Vec::new(),
                init_settings: Settings::default(),
                settings: Settings::default(),
                startup_messages: Vec::new(),
            }),
        }
    }
    pub(super) fn encoding(&self) -> PositionEncoding {
        self.lock().encoding
    }

    pub(super) fn caps(&self) -> ClientCaps {
        self.lock().caps.clone()
    }

    pub(super) fn roots(&self) -> Vec<PathBuf> {
        self.lock().roots.clone()
    }

    pub(super) fn settings(&self) -> Settings {
        self.lock().settings.clone()
    }

    /// Shows a message without making the caller wait for the client.
    pub(super) fn show_later(self: &Arc<Self>, typ: lsp::MessageType, message: String) {
        let client = self.client.clone();
        tokio::spawn(async move { client.show_message(typ, message).await });
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Running jobs and the ids that can cancel them.
#[derive(Default)]
pub(super) struct Jobs {
    next: AtomicU64,
    running: Mutex<HashMap<u64, JobEntry>>,
}

struct JobEntry {
    cancel: CancellationToken,
    request: Option<Id>,
    progress: Option<lsp::ProgressToken>,
}

impl Jobs {
    /// Registers a job before it is spawned, so a cancel that arrives at once finds it.
    pub(super) fn start(
        &self,
        request: Option<Id>,
        progress: Option<lsp::ProgressToken>,
    ) -> (u64, CancellationToken) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let cancel = CancellationToken::new();
        self.lock().insert(
            id,
            JobEntry {
                cancel: cancel.clone(),
                request,
                progress,
            },
        );
        (id, cancel)
    }

    pub(super) fn set_progress(&self, job: u64, token: lsp::ProgressToken) {
        if let Some(e) = self.lock().get_mut(&job) {
            e.progress = Some(token);
        }
    }

    pub(super) fn finish(&self, job: u64) {
        self.lock().remove(&job);
    }

    /// `$/cancelRequest` for the executeCommand that started a job.
    pub(super) fn cancel_request(&self, id: &Id) -> bool {
        self.cancel_where(|e| e.request.as_ref() == Some(id))
    }

    /// `window/workDoneProgress/cancel` for a job's progress token.
    pub(super) fn cancel_progress(&self, token: &lsp::ProgressToken) -> bool {
        self.cancel_where(|e| e.progress.as_ref() == Some(token))
    }

    pub(super) fn cancel_all(&self) {
        self.cancel_where(|_| true);
    }

    fn cancel_where(&self, pred: impl Fn(&JobEntry) -> bool) -> bool {
        let mut any = false;
        for e in self.lock().values().filter(|e| pred(e)) {
            e.cancel.cancel();
            any = true;
        }
        any
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, JobEntry>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_cancel_by_request_or_progress_token() {
        let jobs = Jobs::default();
        let (a, ca) = jobs.start(Some(Id::Number(7)), None);
        let (_, cb) = jobs.start(None, Some(lsp::ProgressToken::String("t".into())));
        assert!(!jobs.cancel_request(&Id::Number(8)));
        assert!(jobs.cancel_request(&Id::Number(7)));
        assert!(ca.is_cancelled() && !cb.is_cancelled());
        assert!(jobs.cancel_progress(&lsp::ProgressToken::String("t".into())));
        assert!(cb.is_cancelled());
        jobs.finish(a);
        assert!(!jobs.cancel_request(&Id::Number(7)));
    }
}
