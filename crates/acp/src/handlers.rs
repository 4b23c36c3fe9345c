//! One function per ACP method. None of them awaits the client or a turn on the dispatch loop.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AgentCapabilities, AuthMethod, AuthMethodAgent, AuthMethodTerminal,
    AuthenticateRequest, AuthenticateResponse, AvailableCommandsUpdate, CancelNotification,
    CloseSessionRequest, CloseSessionResponse, ConfigOptionUpdate, ContentBlock, CurrentModeUpdate,
    DeleteSessionRequest, DeleteSessionResponse, EmbeddedResourceResource, ForkSessionRequest,
    ForkSessionResponse, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    LogoutRequest, LogoutResponse, McpCapabilities, McpServer, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, ResumeSessionRequest,
    ResumeSessionResponse, SessionAdditionalDirectoriesCapabilities, SessionCapabilities,
    SessionCloseCapabilities, SessionDeleteCapabilities, SessionForkCapabilities, SessionId,
    SessionInfo, SessionInfoUpdate, SessionListCapabilities, SessionResumeCapabilities,
    SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use interpreter_protocol::{InputItem, Op, PermissionMode};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::answer::{Answer, answer};
use super::client::{ClientFs, ClientTerminals};
use super::settings::Settings;
use super::updates::Translator;
use super::{AcpSession, AcpState, MAX_PROMPT_BYTES, RunningTurn, commands};
use interpreter_core::agent::{
    EventSink, FaceAbilities, OpResult, SessionError, SessionOptions, SessionStart,
};
use interpreter_core::config::{Config, MissingKey};
use interpreter_core::mcp::{McpServerConfig, McpTransport};
use interpreter_core::sessions::Sessions;

type R = Result<(), Error>;

const LIST_PAGE: usize = 50;

fn err(code: i32, message: impl Into<String>) -> Error {
    Error::new(
        code,
        interpreter_core::secrets::redact(&message.into()).into_owned(),
    )
}

fn load_config(state: &AcpState) -> Result<Config, Error> {
    Config::load(&state.overrides).map_err(|e| err(-32603, format!("invalid configuration: {e:#}")))
}

/// The configuration of a session in `cwd`: the user's, and its project's when trusted.
fn session_config(state: &AcpState, cwd: &std::path::Path) -> Result<Config, Error> {
    let mut o = state.overrides.clone();
    o.project = Some(cwd.to_path_buf());
    Config::load(&o).map_err(|e| err(-32603, format!("invalid configuration: {e:#}")))
}

pub(super) fn initialize(
    state: &AcpState,
    req: InitializeRequest,
    responder: Responder<InitializeResponse>,
) -> R {
    if let Ok(mut caps) = state.client_caps.lock() {
        *caps = req.client_capabilities.clone();
    }
    let default = interpreter_core::model::catalog::default_provider();
    let mut auth_methods = vec![AuthMethod::Agent(
        AuthMethodAgent::new("api-key", "API key").description(format!(
            "Use the provider's API key from its environment variable ({} for {}) or from config.toml",
            default.env_key.unwrap_or("see config.toml"),
            default.default_model,
        )),
    )];
    // The stable capability, or the older `_meta["terminal-auth"]` flag some clients send.
    let legacy_terminal_auth = req
        .client_capabilities
        .meta
        .as_ref()
        .and_then(|m| m.get("terminal-auth"))
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if req.client_capabilities.auth.terminal || legacy_terminal_auth {
        auth_methods.push(AuthMethod::Terminal(
            AuthMethodTerminal::new("login", "Log in with an API key")
                .description("Runs `interpreter login` in a terminal and stores the key in config.toml (mode 0600)")
                .args(vec!["login".to_string()]),
        ));
    }
    let caps = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true))
        .session_capabilities(
            SessionCapabilities::new()
                .list(SessionListCapabilities::new())
                .resume(SessionResumeCapabilities::new())
                .close(SessionCloseCapabilities::new())
                .delete(SessionDeleteCapabilities::new())
                .fork(SessionForkCapabilities::new())
                .additional_directories(SessionAdditionalDirectoriesCapabilities::new()),
        )
        .auth(AgentAuthCapabilities::new());
    responder.respond(
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(caps)
            .auth_methods(auth_methods)
            .agent_info(
                Implementation::new("interpreter", env!("CARGO_PKG_VERSION")).title("interpreter"),
            ),
    )
}

pub(super) fn authenticate(
    state: &AcpState,
    req: AuthenticateRequest,
    responder: Responder<AuthenticateResponse>,
) -> R {
    let config = match load_config(state) {
        Ok(c) => c,
        Err(e) => return responder.respond_with_error(e),
    };
    match (&*req.method_id.0, config.provider.resolve_api_key()) {
        ("api-key" | "login", Ok(_)) => responder.respond(AuthenticateResponse::new()),
        ("api-key" | "login", Err(missing)) => responder.respond_with_error(auth_error(&missing)),
        (other, _) => {
            responder.respond_with_error(err(-32602, format!("unknown auth method `{other}`")))
        }
    }
}

pub(super) fn logout(
    _state: &AcpState,
    _req: LogoutRequest,
    responder: Responder<LogoutResponse>,
) -> R {
    responder.respond_with_error(err(
        -32601,
        "logout is not supported: remove the key from config.toml",
    ))
}

/// `auth_required`, with the provider and its key variable as data so a client can offer
/// to set that key without parsing the message.
fn auth_error(missing: &MissingKey) -> Error {
    err(-32000, format!("Authentication required: {missing}")).data(serde_json::json!({
        "provider": missing.provider,
        "envKey": missing.env_key,
    }))
}

/// What `session/new`, `load` and `resume` have in common.
#[derive(Clone)]
pub(super) struct OpenRequest {
    pub(super) id: String,
    pub(super) cwd: PathBuf,
    pub(super) extra_roots: Vec<PathBuf>,
    pub(super) mcp_servers: Vec<McpServer>,
    pub(super) resume: bool,
}

/// Opens an agent session wired to this client and registers it. Runs in a spawned task:
/// session set-up reads the disk.
pub(super) async fn open_session(
    state: &AcpState,
    cx: &ConnectionTo<Client>,
    req: OpenRequest,
) -> Result<Arc<AcpSession>, Error> {
    let again = req.clone();
    let OpenRequest {
        id,
        cwd,
        extra_roots,
        mcp_servers,
        resume,
    } = req;
    if !cwd.is_absolute() || !cwd.is_dir() {
        return Err(err(
            -32602,
            format!(
                "cwd must be an existing absolute directory: {}",
                cwd.display()
            ),
        ));
    }
    let config = session_config(state, &cwd)?;
    let pending_trust = pending_trust(&config, again);
    let caps = state.caps();
    // Client terminals (opt-in) replace the display terminal: the client shows its own.
    let client_terminals = config.acp_client_terminals && caps.terminal;
    let translator = Arc::new(translator_for(&caps, cx, &id, &cwd, client_terminals));
    let mode = PermissionMode::for_sandbox(config.sandbox_mode);
    let base_approval = config.approval_policy;
    let permissions = mode.permissions(base_approval);
    let (mcp_servers, mcp_warnings) = mcp_configs(mcp_servers, &cwd);
    let t = translator.clone();
    let opts = SessionOptions {
        extra_roots,
        backend: Arc::new(ClientFs {
            cx: cx.clone(),
            session_id: id.clone(),
            read: caps.fs.read_text_file,
            write: caps.fs.write_text_file,
        }),
        runner: client_terminals.then(|| {
            Arc::new(ClientTerminals {
                cx: cx.clone(),
                session_id: id.clone(),
                translator: translator.clone(),
            }) as Arc<dyn interpreter_core::tools::CommandRunner>
        }),
        mcp_servers,
        face: face_abilities(&caps),
        // `auto` also asks before sandboxed commands: not in config, so given here.
        permissions: Some(permissions),
        events_with_handle: Some(Box::new(move |session| {
            EventSink::from_fn(move |e| t.event(&session, e))
        })),
        ..SessionOptions::new(config, cwd.clone(), EventSink::discard())
    };
    let start = if resume {
        close_earlier_copy(state, &id).await;
        // Nothing is written (and the log is not taken) until the first prompt.
        SessionStart::Load { id: id.clone() }
    } else {
        SessionStart::New {
            id: Some(id.clone()),
        }
    };
    let handle = Sessions::open(opts, start).await.map_err(|e| match e {
        SessionError::MissingKey(m) => auth_error(&m),
        SessionError::NotFound(e) => err(-32002, format!("{e:#}")),
        other if resume => err(-32002, other.to_string()),
        other => err(-32603, other.to_string()),
    })?;
    for w in mcp_warnings {
        translator.warning(&w);
    }
    let view = translator.view.lock().map(|v| v.clone()).ok().flatten();
    let (model, provider, harness, effort, skills) = match view {
        Some(v) => (
            v.settings.model,
            v.settings.provider,
            v.settings.harness,
            v.settings.effort,
            v.skills,
        ),
        None => return Err(err(-32603, "the session ended while opening")),
    };
    let settings = Settings {
        mode,
        model,
        provider,
        effort,
        harness,
        base_approval,
    };
    translator.set_settings(settings);
    let s = Arc::new(AcpSession {
        id,
        cwd,
        handle,
        translator,
        commands: commands::available(&skills),
        running: Mutex::new(None),
        pending_trust: Mutex::new(pending_trust),
    });
    state.insert(s.clone());
    Ok(s)
}

/// The same session loaded again here: the earlier copy goes first, so the new one can
/// become the log's writer.
pub(super) async fn close_earlier_copy(state: &AcpState, id: &str) {
    if let Some(old) = state.remove(id) {
        old.cancel_turn();
        let _ = old.handle.submit(Op::Shutdown).done().await;
    }
}

/// The session's event translator, for what this client supports.
fn translator_for(
    caps: &agent_client_protocol::v1::schema::ClientCapabilities,
    cx: &ConnectionTo<Client>,
    id: &str,
    cwd: &Path,
    client_terminals: bool,
) -> Translator {
    let terminal_output = caps
        .meta
        .as_ref()
        .and_then(|m| m.get("terminal_output"))
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let session = caps.session.as_ref();
    Translator::new(
        cx.clone(),
        id,
        terminal_output && !client_terminals,
        session.is_some_and(|s| s.compaction.is_some()),
        session.is_some_and(|s| s.notices.is_some()),
        caps.subagents.is_some(),
        cwd.to_path_buf(),
    )
}

/// What this client can do for a session: questions when it takes form elicitations,
/// diagnostics when it sets `clientCapabilities._meta["interpreter/diagnostics"]`.
fn face_abilities(caps: &agent_client_protocol::v1::schema::ClientCapabilities) -> FaceAbilities {
    let meta_flag = |key: &str| {
        caps.meta
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    };
    FaceAbilities {
        questions: caps.elicitation.as_ref().is_some_and(|e| e.form.is_some()),
        diagnostics: meta_flag(super::diagnostics::CAPABILITY),
        schedules: true,
        client: "interpreter-acp",
    }
}

/// ACP's MCP servers as the core's; the ones we cannot start become warnings.
fn mcp_configs(servers: Vec<McpServer>, cwd: &Path) -> (Vec<McpServerConfig>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut configs = Vec::new();
    for server in servers {
        match server {
            McpServer::Stdio(m) => configs.push(McpServerConfig {
                name: m.name,
                transport: McpTransport::Stdio {
                    command: m.command,
                    args: m.args,
                    env: m.env.into_iter().map(|e| (e.name, e.value)).collect(),
                    cwd: Some(cwd.to_path_buf()),
                },
                startup_timeout: None,
                tool_timeout: None,
                enabled_tools: None,
                disabled_tools: Vec::new(),
            }),
            McpServer::Http(m) => configs.push(McpServerConfig {
                name: m.name,
                transport: McpTransport::Http {
                    url: m.url,
                    headers: m.headers.into_iter().map(|h| (h.name, h.value)).collect(),
                },
                startup_timeout: None,
                tool_timeout: None,
                enabled_tools: None,
                disabled_tools: Vec::new(),
            }),
            McpServer::Sse(m) => warnings.push(format!(
                "MCP server `{}` was not started: the SSE transport is not supported; use its streamable HTTP URL",
                m.name
            )),
            _ => warnings.push("An MCP server with an unsupported transport was not started".into()),
        }
    }
    (configs, warnings)
}

// The trust question (trust.rs asks it): what a new session must ask, and the session a
// prompt runs in once answered.
/// What a session opened by `open` must ask at its first prompt: a new session's unanswered
/// project, and the project's hooks that wait for review (a load keeps its history, and does
/// not ask).
fn pending_trust(
    config: &interpreter_core::config::Config,
    open: OpenRequest,
) -> Option<crate::trust::PendingTrust<OpenRequest>> {
    let project = config.project.clone().filter(|_| !open.resume)?;
    let ask_project = project.needs_answer();
    if !ask_project && !project.trusted() {
        return None;
    }
    let hooks = interpreter_core::hooks::to_review(config);
    (ask_project || !hooks.is_empty()).then(|| crate::trust::PendingTrust {
        project,
        ask_project,
        hooks,
        reopen: open,
    })
}

/// Asks about the session's project and its hooks if it must, and gives the session the
/// prompt runs in (opened again when an answer changed what loads).
async fn settle_trust(
    state: &AcpState,
    cx: &ConnectionTo<Client>,
    s: Arc<AcpSession>,
) -> Result<Arc<AcpSession>, Error> {
    use agent_client_protocol::v1::schema::ToolCallStatus;
    let pending = s.pending_trust.lock().ok().and_then(|mut p| p.take());
    let Some(pending) = pending else {
        return Ok(s);
    };
    let home = interpreter_core::config::home_dir();
    if pending.ask_project {
        let Some(level) = crate::trust::ask(cx, &s.id, &pending.project).await else {
            crate::trust::settled(
                &s,
                ToolCallStatus::Failed,
                "Not answered: asked again next session",
            );
            return Ok(s);
        };
        if let Err(e) =
            interpreter_core::config::set_project_trust(&home, &pending.project.root, level)
        {
            s.translator
                .warning(&format!("The answer could not be saved: {e:#}"));
            return Ok(s);
        }
        if level == interpreter_core::config::TrustLevel::Untrusted {
            crate::trust::settled(
                &s,
                ToolCallStatus::Completed,
                "Not trusted: its own config stays off",
            );
            return Ok(s);
        }
    }
    let hooks_trusted =
        !pending.hooks.is_empty() && crate::trust::ask_hooks(cx, &s.id, &pending.hooks).await;
    if hooks_trusted {
        let chosen: Vec<&interpreter_core::hooks::Handler> =
            pending.hooks.iter().map(|h| h.as_ref()).collect();
        if let Err(e) = interpreter_core::hooks::trust::trust(&home, &chosen) {
            s.translator
                .warning(&format!("The hooks' approval could not be saved: {e:#}"));
        }
    } else if !pending.hooks.is_empty() {
        crate::trust::settled_hooks(
            &s,
            ToolCallStatus::Completed,
            "The project's hooks stay off",
        );
    }
    if !pending.ask_project && !hooks_trusted {
        return Ok(s);
    }
    close_earlier_copy(state, &s.id).await;
    let again = open_session(state, cx, pending.reopen).await?;
    // Answered for this session: hooks kept off are asked about again in the next one.
    if let Ok(mut p) = again.pending_trust.lock() {
        p.take();
    }
    again
        .translator
        .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            again.settings().config_options(),
        )));
    announce_commands(&again);
    if pending.ask_project {
        crate::trust::settled(
            &again,
            ToolCallStatus::Completed,
            "Trusted: its own config loaded",
        );
    }
    if hooks_trusted {
        crate::trust::settled_hooks(&again, ToolCallStatus::Completed, "The project's hooks run");
    }
    Ok(again)
}

/// After the session/new, load or resume response: the commands, then any warnings held back.
pub(super) fn announce_commands(s: &AcpSession) {
    s.translator.send(SessionUpdate::AvailableCommandsUpdate(
        AvailableCommandsUpdate::new(s.commands.clone()),
    ));
    s.translator.release_warnings();
}

pub(super) fn new_session(
    state: &Arc<AcpState>,
    req: NewSessionRequest,
    responder: Responder<NewSessionResponse>,
    cx: ConnectionTo<Client>,
) -> R {
    let state = state.clone();
    cx.clone().spawn(async move {
        let id = uuid::Uuid::now_v7().to_string();
        let open = OpenRequest {
            id: id.clone(),
            cwd: req.cwd,
            extra_roots: req.additional_directories,
            mcp_servers: req.mcp_servers,
            resume: false,
        };
        open_then_answer(&state, &cx, open, responder, |st| {
            NewSessionResponse::new(SessionId::new(id))
                .modes(st.mode_state())
                .config_options(st.config_options())
        })
        .await
    })
}

/// Opens the session `open` asks for and answers with what `answer` makes of its settings;
/// its commands are announced after the response (Zed drops updates for sessions it does not
/// know yet).
async fn open_then_answer<T: agent_client_protocol::JsonRpcResponse>(
    state: &AcpState,
    cx: &ConnectionTo<Client>,
    open: OpenRequest,
    responder: Responder<T>,
    answer: impl FnOnce(&Settings) -> T,
) -> R {
    let s = match open_session(state, cx, open).await {
        Ok(s) => s,
        Err(e) => return ok(responder.respond_with_error(e)),
    };
    let r = responder.respond(answer(&s.settings()));
    announce_commands(&s);
    ok(r)
}

pub(super) fn load_session(
    state: &Arc<AcpState>,
    req: LoadSessionRequest,
    responder: Responder<LoadSessionResponse>,
    cx: ConnectionTo<Client>,
) -> R {
    let state = state.clone();
    cx.clone().spawn(async move {
        let id = req.session_id.0.to_string();
        if let Some(old) = state.remove(&id) {
            old.cancel_turn();
        }
        let open = OpenRequest {
            id,
            cwd: req.cwd,
            extra_roots: req.additional_directories,
            mcp_servers: req.mcp_servers,
            resume: true,
        };
        let s = match open_session(&state, &cx, open).await {
            Ok(s) => s,
            Err(e) => return ok(responder.respond_with_error(e)),
        };
        // The history goes out as updates before the response.
        let _ = s.handle.submit(Op::Replay).done().await;
        let title = s
            .translator
            .view
            .lock()
            .ok()
            .and_then(|v| v.as_ref().and_then(|v| v.title.clone()));
        if let Some(t) = title {
            s.translator.send(SessionUpdate::SessionInfoUpdate(
                SessionInfoUpdate::new().title(t),
            ));
        }
        let st = s.settings();
        let r = responder.respond(
            LoadSessionResponse::new()
                .modes(st.mode_state())
                .config_options(st.config_options()),
        );
        announce_commands(&s);
        ok(r)
    })
}

pub(super) fn resume_session(
    state: &Arc<AcpState>,
    req: ResumeSessionRequest,
    responder: Responder<ResumeSessionResponse>,
    cx: ConnectionTo<Client>,
) -> R {
    let id = req.session_id.0.to_string();
    if let Some(existing) = state.session(&req.session_id) {
        let st = existing.settings();
        responder.respond(
            ResumeSessionResponse::new()
                .modes(st.mode_state())
                .config_options(st.config_options()),
        )?;
        announce_commands(&existing);
        return Ok(());
    }
    let state = state.clone();
    cx.clone().spawn(async move {
        let open = OpenRequest {
            id,
            cwd: req.cwd,
            extra_roots: req.additional_directories,
            mcp_servers: req.mcp_servers,
            resume: true,
        };
        open_then_answer(&state, &cx, open, responder, |st| {
            ResumeSessionResponse::new()
                .modes(st.mode_state())
                .config_options(st.config_options())
        })
        .await
    })
}

/// `session/fork` (unstable in ACP): a new session holding a copy of the source's history,
/// its turns, its goal, under a new id; the source goes on untouched. The client has the
/// history already, so none is replayed.
pub(super) fn fork_session(
    state: &Arc<AcpState>,
    req: ForkSessionRequest,
    responder: Responder<ForkSessionResponse>,
    cx: ConnectionTo<Client>,
) -> R {
    let state = state.clone();
    cx.clone().spawn(async move {
        let from = req.session_id.0.to_string();
        let config = match load_config(&state) {
            Ok(c) => c,
            Err(e) => return ok(responder.respond_with_error(e)),
        };
        let id = uuid::Uuid::now_v7().to_string();
        let store = Sessions::new(&config.home);
        if !store.exists(&from) {
            return ok(
                responder.respond_with_error(err(-32002, format!("no session `{from}` to fork")))
            );
        }
        if let Err(e) = store.fork(&from, &id) {
            return ok(responder
                .respond_with_error(err(-32603, format!("forking session `{from}`: {e:#}"))));
        }
        let open = OpenRequest {
            id: id.clone(),
            cwd: req.cwd,
            extra_roots: req.additional_directories,
            mcp_servers: req.mcp_servers,
            resume: true,
        };
        open_then_answer(&state, &cx, open, responder, |st| {
            ForkSessionResponse::new(SessionId::new(id))
                .modes(st.mode_state())
                .config_options(st.config_options())
        })
        .await
    })
}

pub(super) fn list_sessions(
    state: &AcpState,
    req: ListSessionsRequest,
    responder: Responder<ListSessionsResponse>,
    cx: ConnectionTo<Client>,
) -> R {
    let config = match load_config(state) {
        Ok(c) => c,
        Err(e) => return responder.respond_with_error(e),
    };
    // Reading every session's header and title is disk work: off the dispatch loop.
    cx.spawn(async move {
        let page = tokio::task::spawn_blocking(move || list_page(&config, &req)).await;
        match page {
            Ok(page) => ok(responder.respond(page)),
            Err(e) => {
                ok(responder
                    .respond_with_error(err(-32603, format!("listing sessions failed: {e}"))))
            }
        }
    })
}

fn list_page(config: &Config, req: &ListSessionsRequest) -> ListSessionsResponse {
    let cwd = req
        .cwd
        .as_ref()
        .map(|c| std::fs::canonicalize(c).unwrap_or_else(|_| c.clone()));
    let store = Sessions::new(&config.home);
    let all = store.list(cwd.as_deref());
    let start: usize = req
        .cursor
        .as_deref()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let page: Vec<SessionInfo> = all
        .iter()
        .skip(start)
        .take(LIST_PAGE)
        .map(|(meta, modified)| {
            let updated: chrono::DateTime<chrono::Utc> = (*modified).into();
            SessionInfo::new(SessionId::new(meta.id.clone()), meta.cwd.clone())
                .additional_directories(meta.additional_directories.clone())
                .title(store.title(&meta.id))
                .updated_at(updated.to_rfc3339())
        })
        .collect();
    let next = (start + LIST_PAGE < all.len()).then(|| (start + LIST_PAGE).to_string());
    ListSessionsResponse::new(page).next_cursor(next)
}

pub(super) fn close_session(
    state: &AcpState,
    req: CloseSessionRequest,
    responder: Responder<CloseSessionResponse>,
) -> R {
    if let Some(s) = state.remove(&req.session_id.0) {
        s.cancel_turn();
    }
    responder.respond(CloseSessionResponse::new())
}

pub(super) fn delete_session(
    state: &AcpState,
    req: DeleteSessionRequest,
    responder: Responder<DeleteSessionResponse>,
) -> R {
    if let Some(s) = state.remove(&req.session_id.0) {
        s.cancel_turn();
    }
    if let Ok(config) = load_config(state) {
        let store = Sessions::new(&config.home);
        if store.exists(&req.session_id.0)
            && let Err(e) = store.delete(&req.session_id.0)
        {
            return responder.respond_with_error(err(-32603, format!("{e:#}")));
        }
    }
    responder.respond(DeleteSessionResponse::new())
}

pub(super) fn cancel(state: &AcpState, n: CancelNotification) -> R {
    if let Some(s) = state.session(&n.session_id) {
        s.cancel_turn();
    }
    Ok(())
}

pub(super) fn set_mode(
    state: &AcpState,
    req: SetSessionModeRequest,
    responder: Responder<SetSessionModeResponse>,
) -> R {
    let Some(s) = state.session(&req.session_id) else {
        return responder.respond_with_error(unknown_session(&req.session_id));
    };
    if let Err(e) = s.set_option("mode", &req.mode_id.0) {
        return responder.respond_with_error(err(-32602, e));
    }
    responder.respond(SetSessionModeResponse::new())?;
    s.translator
        .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            s.settings().config_options(),
        )));
    Ok(())
}

pub(super) fn set_config_option(
    state: &AcpState,
    req: SetSessionConfigOptionRequest,
    responder: Responder<SetSessionConfigOptionResponse>,
) -> R {
    let Some(s) = state.session(&req.session_id) else {
        return responder.respond_with_error(unknown_session(&req.session_id));
    };
    let value = match serde_json::to_value(&req.value).ok().and_then(|v| match v {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Object(o) => o.get("value").and_then(|v| v.as_str()).map(String::from),
        _ => None,
    }) {
        Some(v) => v,
        None => return responder.respond_with_error(err(-32602, "expected a select value")),
    };
    let before = s.settings();
    if let Err(e) = s.set_option(&req.config_id.0, &value) {
        return responder.respond_with_error(err(-32602, e));
    }
    let after = s.settings();
    responder.respond(SetSessionConfigOptionResponse::new(after.config_options()))?;
    if before.mode != after.mode {
        s.translator
            .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                after.mode.as_str(),
            )));
    }
    Ok(())
}

fn unknown_session(id: &SessionId) -> Error {
    err(
        -32002,
        format!("unknown session `{}`: create or load it first", id.0),
    )
}

fn ok(r: R) -> R {
    if let Err(e) = r {
        tracing::debug!("responding failed: {}", e.message);
    }
    // A spawned task's error would shut the whole connection down.
    Ok(())
}

pub(super) fn prompt(
    state: &Arc<AcpState>,
    req: PromptRequest,
    responder: Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
) -> R {
    let Some(s) = state.session(&req.session_id) else {
        return responder.respond_with_error(unknown_session(&req.session_id));
    };
    let input = match prompt_input(&req.prompt) {
        Ok(i) => i,
        Err(e) => return responder.respond_with_error(err(-32602, e)),
    };
    let state = state.clone();
    cx.clone().spawn(async move {
        let s = match settle_trust(&state, &cx, s).await {
            Ok(s) => s,
            Err(e) => return ok(responder.respond_with_error(e)),
        };
        ok(run_prompt(s, input, responder).await)
    })
}

/// ACP content blocks → the agent's input. Resources become `<context>` blocks.
fn prompt_input(blocks: &[ContentBlock]) -> Result<Vec<InputItem>, String> {
    let mut text = String::new();
    let mut images = Vec::new();
    for b in blocks {
        match b {
            ContentBlock::Text(t) => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t.text);
            }
            ContentBlock::Image(i) => {
                // The bytes say what the image is, not the block's `mimeType`.
                let mime = interpreter_core::model::sniff_image_base64(&i.data)
                    .map_err(|e| format!("image {} of the prompt: {e}", images.len() + 1))?;
                images.push(format!("data:{mime};base64,{}", i.data))
            }
            ContentBlock::ResourceLink(l) => {
                text.push_str(&format!("\n[{}]({})", l.name, l.uri));
            }
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    text.push_str(&format!(
                        "\n<context ref=\"{}\">\n{}\n</context>",
                        t.uri, t.text
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    text.push_str(&format!("\n[binary resource {}]", b.uri));
                }
                _ => {}
            },
            _ => {}
        }
        if text.len() > MAX_PROMPT_BYTES {
            return Err(format!(
                "the prompt is larger than {} MiB; attach files as resource links instead",
                MAX_PROMPT_BYTES / (1024 * 1024)
            ));
        }
    }
    if text.trim().is_empty() && images.is_empty() {
        return Err(
            if blocks.iter().any(|b| matches!(b, ContentBlock::Audio(_))) {
                "audio prompts are not supported; send text".into()
            } else {
                "the prompt is empty".into()
            },
        );
    }
    let mut input = Vec::new();
    if !text.is_empty() {
        input.push(InputItem::Text { text });
    }
    input.extend(images.into_iter().map(|url| InputItem::Image { url }));
    Ok(input)
}

async fn run_prompt(
    s: Arc<AcpSession>,
    input: Vec<InputItem>,
    responder: Responder<PromptResponse>,
) -> R {
    match run_command_or_turn(&s, input).await {
        Ok(answer) => responder.respond(PromptResponse::new(answer.stop).meta(answer.meta)),
        Err(message) => {
            s.translator
                .agent_text(&format!("\n\n**Error:** {message}\n"), None);
            responder.respond_with_error(err(-32603, message))
        }
    }
}

async fn run_command_or_turn(s: &AcpSession, input: Vec<InputItem>) -> Result<Answer, String> {
    let input = match commands::handle(s, input).await? {
        commands::Outcome::Done(answer) => return Ok(answer),
        commands::Outcome::Run(input) => input,
    };
    // A prompt while a turn runs steers it: the answer in flight finishes and stays, this
    // input joins the turn's next request, and both prompts answer when the turn ends.
    // (`session/cancel` is how a client stops a turn.)
    let running = s.running.lock().ok().and_then(|r| r.clone());
    if let Some(turn) = running {
        return match s.handle.submit(Op::Steer { items: input }).done().await {
            OpResult::Done => answer(turn.await),
            // The turn had ended: the input ran as a turn of its own.
            other => answer(other),
        };
    }
    use futures::FutureExt as _;
    let turn: RunningTurn = s
        .handle
        .submit(Op::UserInput { items: input })
        .done()
        .boxed()
        .shared();
    if let Ok(mut r) = s.running.lock() {
        *r = Some(turn.clone());
    }
    let result = turn.clone().await;
    if let Ok(mut r) = s.running.lock()
        && r.as_ref().is_some_and(|t| t.ptr_eq(&turn))
    {
        *r = None;
    }
    answer(result)
}

impl AcpSession {
    /// Changes one option of the session's settings and tells the session.
    pub(super) fn set_option(&self, id: &str, value: &str) -> Result<(), String> {
        let op = self.translator.with_settings(|st| {
            st.set(id, value)?;
            Ok::<_, String>(st.op_for(id))
        })?;
        if let Some(op) = op {
            let _ = self.handle.submit(op);
        }
        Ok(())
    }
}
