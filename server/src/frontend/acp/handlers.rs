//! One function per ACP method. None of them awaits the client or a turn on the dispatch loop.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AgentCapabilities, AuthMethod, AuthMethodAgent, AuthMethodTerminal,
    AuthenticateRequest, AuthenticateResponse, AvailableCommandsUpdate, CancelNotification,
    CloseSessionRequest, CloseSessionResponse, ConfigOptionUpdate, ContentBlock, CurrentModeUpdate,
    DeleteSessionRequest, DeleteSessionResponse, EmbeddedResourceResource, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, LoadSessionResponse, LogoutRequest, LogoutResponse, McpCapabilities,
    McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities, SessionCapabilities, SessionCloseCapabilities,
    SessionDeleteCapabilities, SessionId, SessionInfo, SessionInfoUpdate, SessionListCapabilities,
    SessionResumeCapabilities, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use interpreter_protocol::{InputItem, TurnEndReason};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

use super::client::{ClientApprover, ClientFs, ClientTerminals};
use super::settings::{self, Settings};
use super::updates::Translator;
use super::{AcpSession, AcpState, MAX_PROMPT_BYTES, commands, replay};
use crate::agent::{EventSink, Session, SessionOptions};
use crate::config::{Config, MissingKey};
use crate::mcp::{McpServerConfig, McpTransport};
use crate::store::SessionStore;

type R = Result<(), Error>;

const LIST_PAGE: usize = 50;

fn err(code: i32, message: impl Into<String>) -> Error {
    Error::new(code, crate::secrets::redact(&message.into()).into_owned())
}

fn load_config(state: &AcpState) -> Result<Config, Error> {
    Config::load(&state.overrides).map_err(|e| err(-32603, format!("invalid configuration: {e:#}")))
}

pub fn initialize(
    state: &AcpState,
    req: InitializeRequest,
    responder: Responder<InitializeResponse>,
) -> R {
    if let Ok(mut caps) = state.client_caps.lock() {
        *caps = req.client_capabilities.clone();
    }
    let mut auth_methods = vec![AuthMethod::Agent(
        AuthMethodAgent::new("api-key", "API key").description(
            "Use the provider's API key from its environment variable (MOONSHOT_API_KEY for Kimi K3) or from config.toml",
        ),
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

pub fn authenticate(
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

pub fn logout(_state: &AcpState, _req: LogoutRequest, responder: Responder<LogoutResponse>) -> R {
    responder.respond_with_error(err(
        -32601,
        "logout is not supported: remove the key from config.toml",
    ))
}

fn auth_error(missing: &MissingKey) -> Error {
    err(-32000, format!("Authentication required: {missing}"))
}

/// Builds an agent session wired to this client.
fn open_session(
    state: &AcpState,
    cx: &ConnectionTo<Client>,
    id: String,
    cwd: &Path,
    extra_roots: Vec<PathBuf>,
    resume: bool,
) -> Result<Arc<AcpSession>, Error> {
    if !cwd.is_absolute() || !cwd.is_dir() {
        return Err(err(
            -32602,
            format!(
                "cwd must be an existing absolute directory: {}",
                cwd.display()
            ),
        ));
    }
    let config = load_config(state)?;
    let caps = state.caps();
    let terminal_output = caps
        .meta
        .as_ref()
        .and_then(|m| m.get("terminal_output"))
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    // Client terminals (opt-in) replace the display terminal: the client shows its own.
    let client_terminals = config.acp_client_terminals && caps.terminal;
    let translator = Arc::new(Translator::new(
        cx.clone(),
        &id,
        terminal_output && !client_terminals,
        caps.session
            .as_ref()
            .is_some_and(|s| s.compaction.is_some()),
        caps.session.as_ref().is_some_and(|s| s.notices.is_some()),
        cwd.to_path_buf(),
    ));
    let t = translator.clone();
    let mode = settings::mode_for(config.sandbox_mode).to_string();
    let base_approval = config.approval_policy;
    let (sandbox, approval) = settings::mode_policy(&mode, base_approval);
    let mut config = config;
    config.sandbox_mode = sandbox;
    config.approval_policy = approval;
    let opts = SessionOptions {
        config,
        cwd: cwd.to_path_buf(),
        extra_roots,
        backend: Arc::new(ClientFs {
            cx: cx.clone(),
            session_id: id.clone(),
            read: caps.fs.read_text_file,
            write: caps.fs.write_text_file,
        }),
        approver: Arc::new(ClientApprover {
            cx: cx.clone(),
            session_id: id.clone(),
        }),
        events: EventSink::from_fn(move |e| t.event(e)),
        persist: true,
        output_schema: None,
    };
    let session = if resume {
        Session::resume(opts, &id)
    } else {
        Session::create_with_id(opts, id.clone())
    };
    let mut session = session.map_err(|e| match e.downcast_ref::<MissingKey>() {
        Some(m) => auth_error(m),
        None if resume => err(-32002, format!("{e:#}")),
        None => err(-32603, format!("{e:#}")),
    })?;
    if client_terminals {
        session.set_command_runner(Arc::new(ClientTerminals {
            cx: cx.clone(),
            session_id: id.clone(),
            translator: translator.clone(),
        }));
    }
    let settings = Settings {
        mode,
        model: session.config.model.clone(),
        provider: session.config.provider.id.clone(),
        effort: session
            .config
            .reasoning_effort
            .clone()
            .unwrap_or_else(|| "default".into()),
        harness: session.harness_name().to_string(),
        base_approval,
    };
    let commands_list = commands::available(session.skills());
    let s = Arc::new(AcpSession {
        id,
        cwd: cwd.to_path_buf(),
        agent: tokio::sync::Mutex::new(session),
        turn: Mutex::new(None),
        settings: Mutex::new(settings),
        translator,
        commands: commands_list,
    });
    state.insert(s.clone());
    Ok(s)
}

/// After the session/new, load or resume response: the commands, then any warnings held back.
fn announce_commands(s: &AcpSession) {
    s.translator.send(SessionUpdate::AvailableCommandsUpdate(
        AvailableCommandsUpdate::new(s.commands.clone()),
    ));
    s.translator.release_warnings();
}

pub fn new_session(
    state: &Arc<AcpState>,
    req: NewSessionRequest,
    responder: Responder<NewSessionResponse>,
    cx: ConnectionTo<Client>,
) -> R {
    let id = uuid::Uuid::now_v7().to_string();
    let s = match open_session(
        state,
        &cx,
        id.clone(),
        &req.cwd,
        req.additional_directories.clone(),
        false,
    ) {
        Ok(s) => s,
        Err(e) => return responder.respond_with_error(e),
    };
    let st = s.settings();
    let response = NewSessionResponse::new(SessionId::new(id))
        .modes(st.mode_state())
        .config_options(st.config_options());
    // Also without client servers: config.toml may name some.
    cx.spawn(async move {
        attach_mcp(&s, req.mcp_servers, || {
            let _ = responder.respond(response);
            // After the response: Zed drops updates for sessions it does not know yet.
            announce_commands(&s);
        })
        .await;
        Ok(())
    })
}

/// Connects the session's MCP servers with the agent lock held: `respond` runs once the lock
/// is held, so a prompt sent after the response waits for the tools instead of running without
/// them. Servers that failed are told to the user as agent text (after the response: Zed
/// drops updates for sessions it does not know yet).
async fn attach_mcp(s: &AcpSession, servers: Vec<McpServer>, respond: impl FnOnce()) {
    let mut agent = s.agent.lock().await;
    respond();
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
                    cwd: Some(s.cwd.clone()),
                },
                startup_timeout: None,
                tool_timeout: None,
            }),
            McpServer::Http(m) => configs.push(McpServerConfig {
                name: m.name,
                transport: McpTransport::Http {
                    url: m.url,
                    headers: m.headers.into_iter().map(|h| (h.name, h.value)).collect(),
                },
                startup_timeout: None,
                tool_timeout: None,
            }),
            McpServer::Sse(m) => warnings.push(format!(
                "MCP server `{}` was not started: the SSE transport is not supported; use its streamable HTTP URL",
                m.name
            )),
            _ => warnings.push("An MCP server with an unsupported transport was not started".into()),
        }
    }
    // With config.toml's [mcp_servers]; the client's win on a name clash.
    let (tools, failed) = crate::mcp::connect_session_servers(&agent.config, configs, &s.cwd).await;
    warnings.extend(failed);
    if tools.is_some() {
        agent.set_external_tools(tools);
    }
    // Still under the lock: the warnings come before the first prompt's output.
    for w in warnings {
        s.translator.warning(&w);
    }
    drop(agent);
}

pub fn load_session(
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
        let s = match open_session(
            &state,
            &cx,
            id,
            &req.cwd,
            req.additional_directories.clone(),
            true,
        ) {
            Ok(s) => s,
            Err(e) => return ok(responder.respond_with_error(e)),
        };
        {
            let agent = s.agent.lock().await;
            replay::replay(&agent, &s.translator);
            if let Some(t) = &agent.title {
                s.translator.send(SessionUpdate::SessionInfoUpdate(
                    SessionInfoUpdate::new().title(t.clone()),
                ));
            }
        }
        let st = s.settings();
        let response = LoadSessionResponse::new()
            .modes(st.mode_state())
            .config_options(st.config_options());
        attach_mcp(&s, req.mcp_servers, || {
            let _ = responder.respond(response);
            announce_commands(&s);
        })
        .await;
        Ok(())
    })
}

pub fn resume_session(
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
    let s = match open_session(
        state,
        &cx,
        id,
        &req.cwd,
        req.additional_directories.clone(),
        true,
    ) {
        Ok(s) => s,
        Err(e) => return responder.respond_with_error(e),
    };
    let st = s.settings();
    let response = ResumeSessionResponse::new()
        .modes(st.mode_state())
        .config_options(st.config_options());
    cx.spawn(async move {
        attach_mcp(&s, req.mcp_servers, || {
            let _ = responder.respond(response);
            announce_commands(&s);
        })
        .await;
        Ok(())
    })
}

pub fn list_sessions(
    state: &AcpState,
    req: ListSessionsRequest,
    responder: Responder<ListSessionsResponse>,
) -> R {
    let config = match load_config(state) {
        Ok(c) => c,
        Err(e) => return responder.respond_with_error(e),
    };
    let cwd = req
        .cwd
        .as_ref()
        .map(|c| std::fs::canonicalize(c).unwrap_or_else(|_| c.clone()));
    let all = SessionStore::new(&config.home).list(cwd.as_deref());
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
            let title = SessionStore::new(&config.home)
                .load(&meta.id)
                .ok()
                .and_then(|l| l.title);
            SessionInfo::new(SessionId::new(meta.id.clone()), meta.cwd.clone())
                .additional_directories(meta.additional_directories.clone())
                .title(title)
                .updated_at(updated.to_rfc3339())
        })
        .collect();
    let next = (start + LIST_PAGE < all.len()).then(|| (start + LIST_PAGE).to_string());
    responder.respond(ListSessionsResponse::new(page).next_cursor(next))
}

pub fn close_session(
    state: &AcpState,
    req: CloseSessionRequest,
    responder: Responder<CloseSessionResponse>,
) -> R {
    if let Some(s) = state.remove(&req.session_id.0) {
        s.cancel_turn();
    }
    responder.respond(CloseSessionResponse::new())
}

pub fn delete_session(
    state: &AcpState,
    req: DeleteSessionRequest,
    responder: Responder<DeleteSessionResponse>,
) -> R {
    if let Some(s) = state.remove(&req.session_id.0) {
        s.cancel_turn();
    }
    if let Ok(config) = load_config(state) {
        let store = SessionStore::new(&config.home);
        if store.exists(&req.session_id.0)
            && let Err(e) = store.delete(&req.session_id.0)
        {
            return responder.respond_with_error(err(-32603, format!("{e:#}")));
        }
    }
    responder.respond(DeleteSessionResponse::new())
}

pub fn cancel(state: &AcpState, n: CancelNotification) -> R {
    if let Some(s) = state.session(&n.session_id) {
        s.cancel_turn();
    }
    Ok(())
}

pub fn set_mode(
    state: &AcpState,
    req: SetSessionModeRequest,
    responder: Responder<SetSessionModeResponse>,
) -> R {
    let Some(s) = state.session(&req.session_id) else {
        return responder.respond_with_error(unknown_session(&req.session_id));
    };
    let result = s
        .settings
        .lock()
        .map(|mut st| st.set("mode", &req.mode_id.0))
        .unwrap_or(Ok(()));
    if let Err(e) = result {
        return responder.respond_with_error(err(-32602, e));
    }
    responder.respond(SetSessionModeResponse::new())?;
    s.translator
        .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            s.settings().config_options(),
        )));
    Ok(())
}

pub fn set_config_option(
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
    let result = s
        .settings
        .lock()
        .map(|mut st| st.set(&req.config_id.0, &value))
        .unwrap_or(Ok(()));
    if let Err(e) = result {
        return responder.respond_with_error(err(-32602, e));
    }
    let after = s.settings();
    responder.respond(SetSessionConfigOptionResponse::new(after.config_options()))?;
    if before.mode != after.mode {
        s.translator
            .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                after.mode.clone(),
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

pub fn prompt(
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
    cx.spawn(async move { ok(run_prompt(s, input, responder).await) })
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
                images.push(format!("data:{};base64,{}", i.mime_type, i.data))
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
    // A new prompt while a turn runs cancels that turn cleanly; it answers `cancelled`.
    s.cancel_turn();
    let mut agent = s.agent.lock().await;
    let token = CancellationToken::new();
    if let Ok(mut t) = s.turn.lock() {
        *t = Some(token.clone());
    }
    let result = run_locked(&s, &mut agent, input, &token).await;
    if let Ok(mut t) = s.turn.lock() {
        *t = None;
    }
    match result {
        Ok(stop) => responder.respond(PromptResponse::new(stop)),
        Err(message) => {
            s.translator
                .agent_text(&format!("\n\n**Error:** {message}\n"), None);
            responder.respond_with_error(err(-32603, message))
        }
    }
}

async fn run_locked(
    s: &AcpSession,
    agent: &mut Session,
    input: Vec<InputItem>,
    token: &CancellationToken,
) -> Result<StopReason, String> {
    apply_settings(s, agent)?;
    let input = match commands::handle(s, agent, input, token).await? {
        commands::Outcome::Done(stop) => return Ok(stop),
        commands::Outcome::Run(input) => input,
    };
    let had_title = agent.title.is_some();
    let ended = agent.run_turn(input, token.clone()).await;
    if !had_title && let Some(t) = &agent.title {
        s.translator.send(SessionUpdate::SessionInfoUpdate(
            SessionInfoUpdate::new().title(t.clone()),
        ));
    }
    match ended.reason {
        TurnEndReason::Completed => Ok(StopReason::EndTurn),
        TurnEndReason::Cancelled => Ok(StopReason::Cancelled),
        TurnEndReason::MaxTurnRequests => Ok(StopReason::MaxTurnRequests),
        TurnEndReason::MaxTokens => Ok(StopReason::MaxTokens),
        TurnEndReason::Refusal => Ok(StopReason::Refusal),
        TurnEndReason::Failed { message } => Err(message),
    }
}

/// Brings the agent session in line with what the user picked since the last turn.
pub(super) fn apply_settings(s: &AcpSession, agent: &mut Session) -> Result<(), String> {
    let st = s.settings();
    let (sandbox, approval) = st.modes();
    if agent.config.sandbox_mode != sandbox || agent.config.approval_policy != approval {
        agent.set_modes(sandbox, approval);
    }
    // `auto`: edits inside the workspace run, anything else asks (even sandboxed commands).
    agent.set_ask_commands(st.mode == "auto");
    if agent.config.model != st.model {
        agent.set_model(&st.model);
    }
    if agent.config.reasoning_effort != st.effort_value() {
        agent.set_reasoning_effort(st.effort_value());
    }
    if agent.harness_name() != st.harness {
        agent
            .set_harness(&st.harness)
            .map_err(|e| format!("{e:#}"))?;
    }
    Ok(())
}
