//! The `LanguageServer` handlers. Every handler finishes without awaiting the client or the
//! model: document notifications mutate the store synchronously (so they apply in arrival
//! order), and slow work is spawned.

use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::{Client, LanguageServer};

use super::actions::{Action, CommandArgs, code_actions};
use super::convert;
use super::job;
use super::settings::Settings;
use super::state::{ClientCaps, Jobs, Shared};
use interpreter_core::config::Overrides;
use interpreter_text::documents::Document;

pub(super) struct Backend {
    shared: Arc<Shared>,
}

impl Backend {
    pub(super) fn new(client: Client, common: Overrides, jobs: Arc<Jobs>) -> Backend {
        Backend {
            shared: Arc::new(Shared::new(client, common, jobs)),
        }
    }
}

fn workspace_roots(params: &lsp::InitializeParams) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = params
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|f| convert::uri_to_path(&f.uri))
        .collect();
    #[allow(deprecated)]
    if roots.is_empty()
        && let Some(p) = params.root_uri.as_ref().and_then(convert::uri_to_path)
    {
        roots.push(p);
    }
    if roots.is_empty()
        && let Ok(cwd) = std::env::current_dir()
    {
        roots.push(convert::canonical(&cwd));
    }
    roots
}

/// Exits when the editor process is gone (LSP `processId`), so an orphaned server does not
/// linger after a crash.
fn watch_parent(pid: u32) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(3)).await;
            if !interpreter_core::platform::process_alive(pid) {
                tracing::warn!("the editor (process {pid}) is gone; exiting");
                std::process::exit(1);
            }
        }
    });
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: lsp::InitializeParams) -> Result<lsp::InitializeResult> {
        let mut messages = Vec::new();
        let settings = match Settings::parse(
            params
                .initialization_options
                .as_ref()
                .unwrap_or(&Value::Null),
        ) {
            Ok(parsed) => {
                for w in parsed.warnings {
                    messages.push((lsp::MessageType::WARNING, format!("interpreter: {w}")));
                }
                if let Err(e) = parsed.settings.load_config(&self.shared.common) {
                    messages.push((
                        lsp::MessageType::ERROR,
                        format!("interpreter: invalid configuration: {e}"),
                    ));
                }
                parsed.settings
            }
            Err(e) => {
                messages.push((
                    lsp::MessageType::ERROR,
                    format!("interpreter: invalid initializationOptions ignored: {e}"),
                ));
                Settings::default()
            }
        };
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref());
        let encoding = convert::negotiate_encoding(offered, settings.position_encoding);
        {
            let mut st = self.shared.lock();
            st.encoding = encoding;
            st.caps = ClientCaps::from_lsp(&params.capabilities);
            st.roots = workspace_roots(&params);
            st.init_settings = settings.clone();
            st.settings = settings;
            st.startup_messages = messages;
        }
        if let Some(pid) = params.process_id {
            watch_parent(pid);
        }
        let kinds = Action::ALL
            .iter()
            .map(|a| lsp::CodeActionKind::from(a.kind().to_string()))
            .collect();
        Ok(lsp::InitializeResult {
            capabilities: lsp::ServerCapabilities {
                position_encoding: Some(convert::to_lsp_encoding(encoding)),
                text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
                    lsp::TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                        ..Default::default()
                    },
                )),
                code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
                    lsp::CodeActionOptions {
                        code_action_kinds: Some(kinds),
                        resolve_provider: Some(false),
                        ..Default::default()
                    },
                )),
                execute_command_provider: Some(lsp::ExecuteCommandOptions {
                    commands: Action::ALL
                        .iter()
                        .map(|a| a.command().to_string())
                        .collect(),
                    work_done_progress_options: lsp::WorkDoneProgressOptions {
                        work_done_progress: Some(true),
                    },
                }),
                ..Default::default()
            },
            server_info: Some(lsp::ServerInfo {
                name: "interpreter".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: lsp::InitializedParams) {
        let messages = std::mem::take(&mut self.shared.lock().startup_messages);
        for (typ, m) in messages {
            tracing::warn!("{m}");
            self.shared.show_later(typ, m);
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.shared.jobs.cancel_all();
        Ok(())
    }

    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        let d = params.text_document;
        let path = convert::uri_to_path(&d.uri);
        self.shared.documents.open(Document::new(
            d.uri.as_str().to_string(),
            path,
            d.language_id,
            d.version,
            &d.text,
        ));
        self.shared.changed.notify_waiters();
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        let changes: Vec<_> = params
            .content_changes
            .into_iter()
            .map(convert::text_change)
            .collect();
        let uri = params.text_document.uri;
        if let Err(e) = self.shared.documents.change(
            uri.as_str(),
            params.text_document.version,
            &changes,
            self.shared.encoding(),
        ) {
            tracing::warn!("didChange ignored: {e}");
        }
        self.shared.changed.notify_waiters();
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        self.shared
            .documents
            .close(params.text_document.uri.as_str());
        self.shared.changed.notify_waiters();
    }

    async fn did_change_configuration(&self, params: lsp::DidChangeConfigurationParams) {
        let shared = &self.shared;
        let parsed = match Settings::parse(&params.settings) {
            Ok(p) => p,
            Err(e) => {
                shared.show_later(
                    lsp::MessageType::ERROR,
                    format!("interpreter: settings ignored: {e}"),
                );
                return;
            }
        };
        for w in parsed.warnings {
            shared.show_later(lsp::MessageType::WARNING, format!("interpreter: {w}"));
        }
        let merged = shared.lock().init_settings.merged(&parsed.settings);
        match merged.load_config(&shared.common) {
            Ok(config) => {
                tracing::info!(
                    "configuration: provider {}, model {}",
                    config.provider.id,
                    config.model
                );
                shared.lock().settings = merged;
            }
            Err(e) => shared.show_later(
                lsp::MessageType::ERROR,
                format!("interpreter: settings ignored, keeping the previous ones: {e}"),
            ),
        }
    }

    async fn code_action(
        &self,
        params: lsp::CodeActionParams,
    ) -> Result<Option<lsp::CodeActionResponse>> {
        Ok(Some(code_actions(&params)))
    }

    async fn execute_command(&self, params: lsp::ExecuteCommandParams) -> Result<Option<Value>> {
        let Some(action) = Action::from_command(&params.command) else {
            return Err(Error::invalid_params(format!(
                "unknown command `{}` (known: {})",
                params.command,
                Action::ALL.map(Action::command).join(", ")
            )));
        };
        let args = CommandArgs::parse(&params.command, &params.arguments)
            .map_err(Error::invalid_params)?;
        if action == Action::Ask && args.prompt.as_deref().is_none_or(|p| p.trim().is_empty()) {
            return Err(Error::invalid_params(
                "interpreter.ask needs a `prompt` in its argument: the question or task for the agent",
            ));
        }
        let token = params.work_done_progress_params.work_done_token;
        let (id, cancel) = self
            .shared
            .jobs
            .start(super::current_request_id(), token.clone());
        tokio::spawn(job::run(
            self.shared.clone(),
            id,
            cancel,
            action,
            args,
            token,
        ));
        Ok(None)
    }
}
