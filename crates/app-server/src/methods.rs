//! The `thread/*` methods: start, resume, fork, read, list, archive, unarchive, name.

use interpreter_protocol::{ApprovalPolicy, Event, Op, Permissions};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

use super::Server;
use super::state::{LoadedThread, ThreadShared};
use super::threads::{self, Open};
use super::transport::RpcError;
use super::wire::{
    ThreadIdParams, ThreadListParams, ThreadParams, ThreadReadParams, ThreadSetNameParams,
};
use interpreter_core::agent::{EventSink, SessionOptions, SessionStart};
use interpreter_core::config::{Config, Overrides};
use interpreter_core::sessions::Sessions;

/// The configuration a thread opens with: the server's `-c`/`--profile`, then the request's
/// `config` map, model, provider, sandbox and approval policy.
pub(crate) fn thread_config(server: &Server, p: &ThreadParams) -> Result<Config, RpcError> {
    let mut o: Overrides = server.overrides.clone();
    for (key, value) in p.config.iter().flatten() {
        o.config.push(format!(
            "{key}={}",
            interpreter_core::config::toml_literal(value)
        ));
    }
    o.model = p.model.clone().or(o.model);
    o.provider = p.model_provider.clone().or(o.provider);
    if let Some(s) = &p.sandbox {
        o.sandbox_mode = Some(
            s.parse()
                .map_err(|e| RpcError::invalid_params(format!("sandbox: {e}")))?,
        );
    }
    if let Some(a) = &p.approval_policy {
        o.approval_policy = Some(approval_policy(a)?);
    }
    // The thread's folder: its project's own config loads when trusted.
    o.project = cwd_param(p).ok();
    let mut config = Config::load(&o)
        .map_err(|e| RpcError::invalid_params(format!("invalid configuration: {e:#}")))?;
    config.provider.external_token = Some(server.token.clone());
    Ok(config)
}

/// `AskForApproval`: a policy name, or a granular object (which asks like `on-request`).
pub(crate) fn approval_policy(v: &Value) -> Result<ApprovalPolicy, RpcError> {
    match v {
        Value::String(s) => s
            .parse()
            .map_err(|e| RpcError::invalid_params(format!("approvalPolicy: {e}"))),
        Value::Object(o) if o.contains_key("granular") => Ok(ApprovalPolicy::OnRequest),
        other => Err(RpcError::invalid_params(format!(
            "approvalPolicy: unexpected {other}"
        ))),
    }
}

fn cwd_param(p: &ThreadParams) -> Result<PathBuf, RpcError> {
    match &p.cwd {
        Some(c) => Ok(PathBuf::from(c)),
        None => std::env::current_dir()
            .map_err(|e| RpcError::internal(format!("reading the current directory: {e}"))),
    }
}

fn store(config: &Config) -> Sessions {
    Sessions::new(&config.home)
}

fn store_of(server: &Server) -> Result<Sessions, RpcError> {
    let config = Config::load(&server.overrides)
        .map_err(|e| RpcError::internal(format!("invalid configuration: {e:#}")))?;
    Ok(store(&config))
}

/// What thread/start, resume and fork answer.
fn opened_response(t: &LoadedThread, config: &Config, turns: bool) -> Value {
    let thread = threads::loaded_thread(t, &store(config), turns);
    let st = t.state();
    let Some(view) = st.view.as_ref() else {
        return json!({"thread": thread});
    };
    json!({
        "thread": thread,
        "model": view.settings.model,
        "modelProvider": view.settings.provider,
        "cwd": view.cwd,
        "approvalPolicy": view.settings.permissions.approval.as_str(),
        "approvalsReviewer": "user",
        "sandbox": threads::sandbox_of(view, config),
        "reasoningEffort": view.settings.effort.map(|e| e.as_str()),
    })
}

fn warn_unsupported(server: &Server, id: &str, p: &ThreadParams) {
    for (field, given) in [
        ("baseInstructions", p.base_instructions.is_some()),
        ("developerInstructions", p.developer_instructions.is_some()),
    ] {
        if given {
            server.out.notify(
                "warning",
                json!({"threadId": id, "message": format!("{field} is not supported; the harness's instructions are used")}),
            );
        }
    }
}

pub(crate) async fn thread_start(server: &Arc<Server>, p: ThreadParams) -> Result<Value, RpcError> {
    let config = thread_config(server, &p)?;
    let id = threads::new_id();
    let ephemeral = p.ephemeral.unwrap_or(false);
    let shared = ThreadShared::new(
        id.clone(),
        server.out.clone(),
        server.approvals.clone(),
        ephemeral,
        "appServer",
        chrono::Utc::now().timestamp(),
    );
    let open = Open {
        start: SessionStart::New {
            id: Some(id.clone()),
        },
        cwd: cwd_param(&p)?,
        config: config.clone(),
        persist: !ephemeral,
        permissions: None,
    };
    let t = Arc::new(threads::open(&shared, open, false).await?);
    server.insert(t.clone());
    warn_unsupported(server, &id, &p);
    let response = opened_response(&t, &config, false);
    notify_started(server, &response);
    Ok(response)
}

/// `thread/started` goes out right after the response that created the thread.
fn notify_started(server: &Server, response: &Value) {
    server.after_response("thread/started", json!({"thread": response["thread"]}));
}

/// The policy a resumed or forked thread runs with: the request's, else the stored one.
fn policy_for(
    p: &ThreadParams,
    stored: Option<Permissions>,
    config: &mut Config,
) -> Option<Permissions> {
    let mut perms = stored.unwrap_or(Permissions {
        sandbox: config.sandbox_mode,
        approval: config.approval_policy,
        ask_commands: false,
    });
    if p.sandbox.is_some() {
        perms.sandbox = config.sandbox_mode;
    }
    if p.approval_policy.is_some() {
        perms.approval = config.approval_policy;
    }
    config.sandbox_mode = perms.sandbox;
    config.approval_policy = perms.approval;
    Some(perms)
}

/// A stored session continues with the model it last used; a requested one replaces it.
async fn apply_model(t: &LoadedThread, p: &ThreadParams) {
    if let Some(model) = p.model.clone() {
        // Nothing runs yet on a thread just opened: this returns at once.
        let _ = t.handle.submit(Op::SetModel { model }).done().await;
    }
}

pub(crate) async fn thread_resume(
    server: &Arc<Server>,
    p: ThreadParams,
) -> Result<Value, RpcError> {
    let id = p
        .thread_id
        .clone()
        .ok_or_else(|| RpcError::invalid_params("threadId is required"))?;
    let mut config = thread_config(server, &p)?;
    let turns = !p.exclude_turns.unwrap_or(false);
    if let Some(t) = server.thread(&id) {
        return Ok(opened_response(&t, &config, turns));
    }
    let store = store(&config);
    if store.is_archived(&id) {
        return Err(RpcError::invalid_request(format!(
            "thread `{id}` is archived: unarchive it first"
        )));
    }
    let summary = store
        .summary(&id)
        .ok_or_else(|| RpcError::invalid_request(format!("no thread `{id}`")))?;
    let permissions = policy_for(&p, summary.permissions, &mut config);
    let shared = ThreadShared::new(
        id.clone(),
        server.out.clone(),
        server.approvals.clone(),
        false,
        "unknown",
        threads::unix_seconds(&summary.meta.created_at),
    );
    shared.state().preview = summary.preview.clone();
    let cwd = match &p.cwd {
        Some(c) => PathBuf::from(c),
        None => summary.meta.cwd.clone(),
    };
    let open = Open {
        start: SessionStart::Resume { id: id.clone() },
        cwd,
        config: config.clone(),
        persist: true,
        permissions,
    };
    let t = Arc::new(threads::open(&shared, open, true).await?);
    apply_model(&t, &p).await;
    server.insert(t.clone());
    warn_unsupported(server, &id, &p);
    Ok(opened_response(&t, &config, turns))
}

pub(crate) async fn thread_fork(server: &Arc<Server>, p: ThreadParams) -> Result<Value, RpcError> {
    let from = p
        .thread_id
        .clone()
        .ok_or_else(|| RpcError::invalid_params("threadId is required"))?;
    let mut config = thread_config(server, &p)?;
    let store = store(&config);
    let summary = store
        .summary(&from)
        .ok_or_else(|| RpcError::invalid_request(format!("no thread `{from}`")))?;
    let id = threads::new_id();
    store
        .fork(&from, &id)
        .map_err(|e| RpcError::internal(format!("forking thread `{from}`: {e:#}")))?;
    let ephemeral = p.ephemeral.unwrap_or(false);
    let permissions = policy_for(&p, summary.permissions, &mut config);
    let shared = ThreadShared::new(
        id.clone(),
        server.out.clone(),
        server.approvals.clone(),
        ephemeral,
        "appServer",
        chrono::Utc::now().timestamp(),
    );
    shared.state().preview = summary.preview.clone();
    let open = Open {
        start: SessionStart::Resume { id: id.clone() },
        cwd: p
            .cwd
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or(summary.meta.cwd.clone()),
        config: config.clone(),
        persist: !ephemeral,
        permissions,
    };
    let opened = threads::open(&shared, open, true).await;
    // An ephemeral fork lives in memory only; its copy was needed to load the history.
    if ephemeral || opened.is_err() {
        let _ = store.delete(&id);
    }
    let t = Arc::new(opened?);
    apply_model(&t, &p).await;
    server.insert(t.clone());
    let response = opened_response(&t, &config, !p.exclude_turns.unwrap_or(false));
    notify_started(server, &response);
    Ok(response)
}

pub(crate) async fn thread_read(
    server: &Arc<Server>,
    p: ThreadReadParams,
) -> Result<Value, RpcError> {
    let store = store_of(server)?;
    if let Some(t) = server.thread(&p.thread_id) {
        return Ok(json!({"thread": threads::loaded_thread(&t, &store, p.include_turns)}));
    }
    let summary = store
        .summary(&p.thread_id)
        .ok_or_else(|| RpcError::invalid_request(format!("no thread `{}`", p.thread_id)))?;
    let mut thread = threads::stored_thread(&summary, store.log_path(&p.thread_id).as_deref());
    if p.include_turns {
        thread.turns = stored_turns(server, &p.thread_id, &summary).await?;
    }
    Ok(json!({"thread": thread}))
}

/// The turns of a thread that is not loaded: a session is opened without a log writer just
/// long enough to replay it.
async fn stored_turns(
    server: &Server,
    id: &str,
    summary: &interpreter_core::sessions::SessionSummary,
) -> Result<Vec<super::wire::Turn>, RpcError> {
    let mut config = Config::load(&server.overrides)
        .map_err(|e| RpcError::internal(format!("invalid configuration: {e:#}")))?;
    config.provider.external_token = Some(server.token.clone());
    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions {
        persist: false,
        ..SessionOptions::new(config, summary.meta.cwd.clone(), events)
    };
    let handle = Sessions::open(opts, SessionStart::Resume { id: id.to_string() })
        .await
        .map_err(|e| RpcError::invalid_request(format!("reading thread `{id}`: {e}")))?;
    let _ = handle.submit(Op::Replay).done().await;
    let _ = handle.submit(Op::Shutdown);
    while let Some(e) = rx.recv().await {
        if let Event::Transcript(items) = e {
            return Ok(super::history::turns_from_transcript(
                id,
                &items,
                &summary.meta.cwd,
            ));
        }
    }
    Err(RpcError::internal(format!(
        "thread `{id}` gave no transcript"
    )))
}

pub(crate) async fn thread_list(
    server: &Arc<Server>,
    p: ThreadListParams,
) -> Result<Value, RpcError> {
    let store = store_of(server)?;
    let archived = p.archived.unwrap_or(false);
    let all = tokio::task::spawn_blocking(move || store.summaries(archived))
        .await
        .map_err(|e| RpcError::internal(format!("listing threads failed: {e}")))?;
    let (page, next) = super::history::page(&all, &p);
    let store = store_of(server)?;
    let data: Vec<Value> = page
        .into_iter()
        .map(|s| match server.thread(&s.meta.id) {
            Some(t) => json!(threads::loaded_thread(&t, &store, false)),
            None => json!(threads::stored_thread(
                s,
                store.log_path(&s.meta.id).as_deref()
            )),
        })
        .collect();
    Ok(json!({"data": data, "nextCursor": next}))
}

pub(crate) async fn thread_archive(
    server: &Arc<Server>,
    p: ThreadIdParams,
) -> Result<Value, RpcError> {
    let store = store_of(server)?;
    if let Some(t) = server.remove(&p.thread_id) {
        t.shutdown().await;
    }
    store
        .archive(&p.thread_id)
        .map_err(|e| RpcError::invalid_request(format!("{e:#}")))?;
    server
        .out
        .notify("thread/archived", json!({"threadId": p.thread_id}));
    Ok(json!({}))
}

pub(crate) async fn thread_unarchive(
    server: &Arc<Server>,
    p: ThreadIdParams,
) -> Result<Value, RpcError> {
    let store = store_of(server)?;
    store
        .unarchive(&p.thread_id)
        .map_err(|e| RpcError::invalid_request(format!("{e:#}")))?;
    let summary = store
        .summary(&p.thread_id)
        .ok_or_else(|| RpcError::internal(format!("thread `{}` vanished", p.thread_id)))?;
    server
        .out
        .notify("thread/unarchived", json!({"threadId": p.thread_id}));
    let thread = threads::stored_thread(&summary, store.log_path(&p.thread_id).as_deref());
    Ok(json!({"thread": thread}))
}

pub(crate) async fn thread_set_name(
    server: &Arc<Server>,
    p: ThreadSetNameParams,
) -> Result<Value, RpcError> {
    let name = p.name.trim().to_string();
    if name.is_empty() {
        return Err(RpcError::invalid_params("name must not be empty"));
    }
    if let Some(t) = server.thread(&p.thread_id) {
        // Applied between turns; `thread/name/updated` follows when it is. Not awaited: a
        // running turn holds the op until it ends.
        let _ = t.handle.submit(Op::SetTitle { title: name });
        return Ok(json!({}));
    }
    store_of(server)?
        .rename(&p.thread_id, &name)
        .map_err(|e| RpcError::invalid_request(format!("{e:#}")))?;
    server.out.notify(
        "thread/name/updated",
        json!({"threadId": p.thread_id, "threadName": name}),
    );
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_config_values_become_toml() {
        assert_eq!(
            interpreter_core::config::toml_literal(&json!("k3")),
            "\"k3\""
        );
        assert_eq!(interpreter_core::config::toml_literal(&json!(3)), "3");
        assert_eq!(interpreter_core::config::toml_literal(&json!(true)), "true");
        assert_eq!(
            interpreter_core::config::toml_literal(
                &json!({"name": "mock", "base_url": "http://x"})
            ),
            "{ name = \"mock\", base_url = \"http://x\" }"
        );
        assert_eq!(
            interpreter_core::config::toml_literal(&json!([1, "a"])),
            "[1, \"a\"]"
        );
    }

    #[test]
    fn approval_policies_parse() {
        assert_eq!(
            approval_policy(&json!("never")).unwrap(),
            ApprovalPolicy::Never
        );
        assert_eq!(
            approval_policy(&json!({"granular": {}})).unwrap(),
            ApprovalPolicy::OnRequest
        );
        assert!(approval_policy(&json!("sometimes")).is_err());
    }
}
