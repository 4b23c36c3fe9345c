//! Configuration: `config.toml` in the home folder, then the selected profile, then environment
//! variables, then `-c key=value` overrides, then explicit flags. Keys follow Codex's config.toml.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::catalog;
use crate::secrets::ConfiguredKeys;

mod edit;
pub mod mcp;
mod mcp_edit;
mod mcp_files;
mod otel;
pub mod rules;
mod trust;
pub mod web;
pub use edit::{
    remove_api_key, set_api_key, set_harness, set_hook_trust, set_project_trust, toml_literal,
};
pub use mcp_edit::{
    NewMcpServer, add_mcp_server, check_server_name, mcp_oauth_settings, mcp_servers_json,
    remove_mcp_server,
};
pub use otel::{OtelExporter, OtelSettings, OtlpProtocol, otel_settings};
pub use trust::{ProjectTrust, TrustLevel, project_root};

/// Environment variables that override config keys (after the file and profile, before `-c`).
const ENV_OVERRIDES: &[(&str, &str)] = &[
    ("OPENINTERPRETER_PROVIDER", "model_provider"),
    ("OPENINTERPRETER_MODEL", "model"),
    ("OPENINTERPRETER_HARNESS", "harness"),
    ("INTERPRETER_BROWSER", "web.browser"),
];

/// The home folder: `OPENINTERPRETER_HOME`, else `CODEX_HOME` (the Codex SDK isolates runs with
/// it), else `~/.openinterpreter`.
pub fn home_dir() -> PathBuf {
    for var in ["OPENINTERPRETER_HOME", "CODEX_HOME"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            return PathBuf::from(v);
        }
    }
    dirs::home_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join(".openinterpreter")
}

/// The file's shape. Unknown keys are accepted (Codex configs carry many we do not use).
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct ConfigToml {
    pub(crate) model: Option<String>,
    pub(crate) model_provider: Option<String>,
    #[serde(default)]
    pub(crate) model_providers: BTreeMap<String, ProviderToml>,
    pub(crate) harness: Option<String>,
    pub(crate) approval_policy: Option<String>,
    pub(crate) sandbox_mode: Option<String>,
    pub(crate) model_reasoning_effort: Option<String>,
    /// The model read-only built-in subagents (Explore, Plan) run on.
    pub(crate) explore_model: Option<String>,
    pub(crate) model_context_window: Option<u64>,
    pub(crate) model_max_output_tokens: Option<u64>,
    pub(crate) max_turn_requests: Option<u32>,
    pub(crate) undo_turns: Option<usize>,
    pub(crate) max_processes: Option<usize>,
    /// Seconds an approval or a question waits for the user before it gives up.
    pub(crate) approval_timeout_secs: Option<u64>,
    pub(crate) project_doc_max_bytes: Option<usize>,
    /// Codex's names to read in a folder without AGENTS.md (after CLAUDE.md).
    #[serde(default)]
    pub(crate) project_doc_fallback_filenames: Vec<String>,
    pub(crate) tool_output_token_limit: Option<usize>,
    /// Run the calls of one response that only read at the same time (default true).
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) openai_base_url: Option<String>,
    pub(crate) sandbox_workspace_write: Option<SandboxWorkspaceWrite>,
    /// ACP: run shell commands in the client's terminals (`terminal/*`) when it offers them.
    pub acp_client_terminals: Option<bool>,
    /// The web tools' bounds and search backend (`tools::web`).
    #[serde(default)]
    pub(crate) web: web::WebToml,
    /// Codex's `web_search` (`disabled`, `cached`, `live`): the Codex SDK's `webSearchMode`.
    pub(crate) web_search: Option<String>,
    /// MCP servers every session connects, as in Codex (see `config::mcp`).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, mcp::McpServerToml>,
    /// Codex's `mcp_oauth_credentials_store`: `auto`, `keyring` or `file`.
    pub(crate) mcp_oauth_credentials_store: Option<String>,
    /// Codex's `mcp_oauth_callback_port`: the sign-in callback's loopback port.
    pub(crate) mcp_oauth_callback_port: Option<u16>,
    /// Codex's `notify`: a program (and its arguments) run with each completed turn's JSON.
    #[serde(default)]
    pub(crate) notify: Vec<String>,
    /// Codex's `[tui]` table (`notifications`).
    #[serde(default)]
    pub(crate) tui: TuiToml,
    /// Codex's `[otel]` table (`config::otel`).
    #[serde(default)]
    pub(crate) otel: otel::OtelToml,
}

/// Codex's `[tui]` table.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct TuiToml {
    /// `true`, `false`, or the events to notify of (`agent-turn-complete`,
    /// `approval-requested`).
    pub(crate) notifications: Option<TuiNotifications>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum TuiNotifications {
    All(bool),
    Some(Vec<String>),
}

/// When the terminal tells an unfocused user that something happened (`[tui] notifications`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalNotifications {
    /// A turn completed.
    pub turn_complete: bool,
    /// An approval or a question waits.
    pub approval: bool,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct SandboxWorkspaceWrite {
    #[serde(default)]
    pub(crate) network_access: bool,
    #[serde(default)]
    pub(crate) writable_roots: Vec<PathBuf>,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct ProviderToml {
    pub(crate) name: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) env_key: Option<String>,
    /// A key written by `interpreter login`.
    pub api_key: Option<String>,
    pub(crate) experimental_bearer_token: Option<String>,
    pub(crate) wire_api: Option<String>,
    /// How the key is sent: `bearer` (Authorization) or `x-api-key` (Anthropic's header).
    pub auth: Option<String>,
    /// Codex's `requires_openai_auth`: the app-server's ChatGPT login token stands in for the
    /// key (default: only for the built-in `openai` provider).
    pub(crate) requires_openai_auth: Option<bool>,
    #[serde(default)]
    pub(crate) http_headers: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) env_http_headers: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) query_params: BTreeMap<String, String>,
    pub(crate) request_max_retries: Option<u32>,
    pub(crate) stream_max_retries: Option<u32>,
    pub(crate) stream_idle_timeout_ms: Option<u64>,
    pub(crate) connect_timeout_ms: Option<u64>,
    pub(crate) request_timeout_ms: Option<u64>,
    pub(crate) retry_base_delay_ms: Option<u64>,
}

/// Processes a command may have alive at once by default (`max_processes`).
pub(crate) const DEFAULT_MAX_PROCESSES: usize = 256;

pub use crate::model::provider::{AuthScheme, MissingKey, ProviderAuth, ProviderConfig, WireApi};
pub use interpreter_protocol::{ApprovalPolicy, ReasoningEffort, SandboxMode};

/// The effective configuration a session starts from.
#[derive(Debug, Clone)]
pub struct Config {
    /// The home folder ([`home_dir`]): config.toml, session logs and checkpoints live under it.
    pub home: PathBuf,
    /// The provider in use, resolved from the catalog and `[model_providers]`.
    pub provider: ProviderConfig,
    /// The other providers config.toml configures (`[model_providers.<id>]`): a custom agent
    /// may run on one of their models.
    pub(crate) other_providers: Vec<ProviderConfig>,
    /// The model every request names: config's `model`, else the provider's default.
    pub model: String,
    /// Explicit harness choice; None means "pick by model".
    pub harness: Option<String>,
    /// When a tool call asks the user first (`approval_policy`).
    pub approval_policy: ApprovalPolicy,
    /// What commands and edits may touch: nothing, the workspace, or everything
    /// (`sandbox_mode`).
    pub sandbox_mode: SandboxMode,
    /// Sandboxed commands may use the network in `workspace-write`
    /// (`[sandbox_workspace_write] network_access`).
    pub network_access: bool,
    pub(crate) writable_roots: Vec<PathBuf>,
    /// How hard a reasoning model thinks (`model_reasoning_effort`); None: the provider's
    /// default.
    pub reasoning_effort: Option<ReasoningEffort>,
    pub(crate) context_window: Option<u64>,
    pub(crate) max_output_tokens: u64,
    pub(crate) max_turn_requests: u32,
    /// Turns a session keeps undoable (a checkpoint of the folder before and after each);
    /// 0 takes no checkpoints.
    pub(crate) undo_turns: usize,
    /// Processes a session's running command may have alive at once; above it the command's
    /// process group is killed.
    pub max_processes: usize,
    /// How long an approval or a question waits for the user (then it is given up).
    pub(crate) approval_timeout: std::time::Duration,
    pub(crate) project_doc_max_bytes: usize,
    pub(crate) project_doc_fallback_filenames: Vec<String>,
    /// The model read-only built-in subagents (Explore, Plan) run on (`explore_model`): one
    /// of the session's provider or of another configured one; None: the session's.
    pub(crate) explore_model: Option<String>,
    pub(crate) tool_output_token_limit: usize,
    /// Calls of one response that only read run at the same time (`parallel_tool_calls`).
    pub(crate) parallel_tool_calls: bool,
    /// ACP: run shell commands in the client's terminals (`terminal/*`) when it offers them;
    /// off by default.
    pub acp_client_terminals: bool,
    /// What the web tools may do (`[web]`).
    pub web: std::sync::Arc<web::WebConfig>,
    /// The enabled `[mcp_servers]`; front ends merge their own in (`config::mcp::merge`).
    pub mcp_servers: Vec<mcp::McpServerConfig>,
    /// Where MCP OAuth tokens are kept, and the sign-in callback's port.
    pub mcp_oauth: mcp::OAuthSettings,
    /// `[otel] log_user_prompt`: a turn's span carries the prompt (redacted); off by default.
    pub(crate) otel_log_user_prompt: bool,
    /// The `[mcp_servers]` not started: disabled, or left out with why (shown by `/mcp`).
    pub mcp_skipped: Vec<mcp::McpServerSkipped>,
    /// What `load` was given, so a session can read config.toml's servers again
    /// (`Op::ReloadMcpServers`); None for a configuration built otherwise.
    pub(crate) loaded_with: Option<Overrides>,
    /// The session folder's project and whether its own config loaded (`Overrides::project`).
    pub project: Option<ProjectTrust>,
    /// Codex's `notify`: run with each completed turn's JSON as the last argument.
    pub notify: Vec<String>,
    /// What the terminal tells an unfocused user about (`[tui] notifications`; both by
    /// default).
    pub terminal_notifications: TerminalNotifications,
    /// What the user should hear about the configuration (a project file left out, and why).
    pub warnings: Vec<String>,
    /// Saved permission rules (`rules::load`), shared by every session opened with this
    /// configuration, so a rule saved in one applies at once.
    pub rules: std::sync::Arc<rules::SavedRules>,
    /// A face's `--dangerously-bypass-hook-trust`: a trusted project's hooks that wait for
    /// review run anyway, for this process only (never read from a file).
    pub bypass_hook_trust: bool,
}

/// `mcp_oauth_credentials_store` and `mcp_oauth_callback_port`.
fn oauth_settings(home: &Path, raw: &ConfigToml) -> Result<mcp::OAuthSettings> {
    Ok(mcp::OAuthSettings {
        store: raw
            .mcp_oauth_credentials_store
            .as_deref()
            .map(str::parse)
            .transpose()?
            .unwrap_or_default(),
        home: home.to_path_buf(),
        callback_port: raw.mcp_oauth_callback_port,
    })
}

/// What the command line contributes on top of the files.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Raw `-c key=value` strings, in order (later wins).
    pub config: Vec<String>,
    /// `--profile`: the `[profiles.<name>]` table to apply.
    pub profile: Option<String>,
    /// The model, over the config's `model`.
    pub model: Option<String>,
    /// The provider: a `[model_providers]` or catalog name.
    pub provider: Option<String>,
    /// The harness name, over the config's `harness`.
    pub harness: Option<String>,
    /// The sandbox mode, over every layer.
    pub sandbox_mode: Option<SandboxMode>,
    /// The approval policy, over every layer.
    pub approval_policy: Option<ApprovalPolicy>,
    /// The approval policy unless a `-c approval_policy` sets one: exec's `never`, as
    /// Codex's exec has it.
    pub default_approval_policy: Option<ApprovalPolicy>,
    /// The session's folder: its project's own config loads when the user trusted the project
    /// (`config::trust`). None: the user's config only.
    pub project: Option<PathBuf>,
}

impl Config {
    /// Loads `<home>/config.toml` (if present) and applies the layers above it.
    pub fn load(overrides: &Overrides) -> Result<Config> {
        let home = home_dir();
        let path = home.join("config.toml");
        let file_text = match std::fs::read_to_string(&path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let env: Vec<(String, String)> = ENV_OVERRIDES
            .iter()
            .filter_map(|(var, key)| {
                std::env::var(var)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .map(|v| (key.to_string(), v))
            })
            .collect();
        let mut config =
            Self::from_layers(home, file_text.as_deref(), Some(&path), &env, overrides)?;
        let claude_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let (rules, warnings) = rules::load(
            &config.home,
            dirs::home_dir().as_deref(),
            claude_dir.as_deref(),
            config.project.as_ref(),
        );
        config.rules = rules;
        config.loaded_with = Some(overrides.clone());
        config.warnings.extend(warnings);
        if let Some(p) = config.project.as_ref().filter(|p| p.trusted()) {
            let taken: Vec<String> = config.mcp_servers.iter().map(|s| s.name.clone()).collect();
            let (servers, skipped, warnings) =
                mcp_files::load(&p.root, &taken, &|v| std::env::var(v).ok());
            config.mcp_servers.extend(servers);
            // config.toml's entry of a name wins, even one left out.
            let shown: Vec<String> = config.mcp_skipped.iter().map(|k| k.name.clone()).collect();
            config
                .mcp_skipped
                .extend(skipped.into_iter().filter(|k| !shown.contains(&k.name)));
            config.warnings.extend(warnings);
            config.attach_oauth();
        }
        Ok(config)
    }

    /// Lets the HTTP servers the user configured without an `Authorization` header use the
    /// tokens `interpreter mcp login` saved for them.
    fn attach_oauth(&mut self) {
        for server in &mut self.mcp_servers {
            if let mcp::McpTransport::Http { headers, oauth, .. } = &mut server.transport
                && !mcp::McpTransport::has_authorization_header(headers)
            {
                *oauth = Some(self.mcp_oauth.clone());
            }
        }
    }

    /// Pure layering, for tests: file text, env pairs (key, value), then overrides.
    pub fn from_layers(
        home: PathBuf,
        file_text: Option<&str>,
        file_path: Option<&Path>,
        env: &[(String, String)],
        overrides: &Overrides,
    ) -> Result<Config> {
        let shown = file_path
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "config.toml".into());
        let mut table: toml::Table = match file_text {
            Some(text) => {
                // Parse typed first so a wrong type is reported with its line.
                toml::from_str::<ConfigToml>(text)
                    .map_err(|e| anyhow::anyhow!("invalid config {shown}: {e}"))?;
                toml::from_str(text).map_err(|e| anyhow::anyhow!("invalid config {shown}: {e}"))?
            }
            None => toml::Table::new(),
        };

        let mut cli_table = toml::Table::new();
        for raw in &overrides.config {
            let (key, value) = parse_override(raw)?;
            set_dotted(&mut cli_table, &key, value)
                .with_context(|| format!("applying --config {raw}"))?;
        }
        let (project, warnings) = project_layers(&mut table, &cli_table, overrides);

        // Profile: the CLI flag, then `-c profile=…`, then the file's `profile` key.
        let profile = overrides
            .profile
            .clone()
            .or_else(|| {
                cli_table
                    .get("profile")
                    .and_then(|v| v.as_str())
                    .map(String::from)
            })
            .or_else(|| {
                table
                    .get("profile")
                    .and_then(|v| v.as_str())
                    .map(String::from)
            });
        if let Some(name) = &profile {
            let profiles = table.get("profiles").and_then(|p| p.as_table());
            let Some(p) = profiles
                .and_then(|p| p.get(name))
                .and_then(|p| p.as_table())
            else {
                bail!("profile `{name}` not found in {shown} (expected a [profiles.{name}] table)");
            };
            let p = p.clone();
            merge(&mut table, p);
        }
        for (key, value) in env {
            set_dotted(&mut table, key, toml::Value::String(value.clone()))?;
        }
        // exec's `never` gives way only to a `-c approval_policy` (what a profile or
        // config.toml sets is for the sessions that can ask).
        let default_approval = overrides
            .default_approval_policy
            .filter(|_| !cli_table.contains_key("approval_policy"));
        merge(&mut table, cli_table);
        if let Some(p) = default_approval {
            table.insert("approval_policy".into(), p.as_str().into());
        }
        let flags = [
            ("model", overrides.model.as_deref()),
            ("model_provider", overrides.provider.as_deref()),
            ("harness", overrides.harness.as_deref()),
            (
                "sandbox_mode",
                overrides.sandbox_mode.map(SandboxMode::as_str),
            ),
            (
                "approval_policy",
                overrides.approval_policy.map(ApprovalPolicy::as_str),
            ),
        ];
        for (key, value) in flags {
            if let Some(v) = value {
                table.insert(key.into(), toml::Value::String(v.to_string()));
            }
        }

        let raw: ConfigToml = toml::Value::Table(table)
            .try_into()
            .map_err(|e| anyhow::anyhow!("invalid configuration after overrides: {e}"))?;
        let (mcp_servers, mcp_skipped, mcp_warnings) =
            mcp::from_toml(&raw.mcp_servers, |v| std::env::var(v).ok());
        let mut config = Self::resolve(home, raw)?;
        config.project = project;
        config.mcp_servers = mcp_servers;
        config.attach_oauth();
        config.mcp_skipped = mcp_skipped;
        config.warnings = warnings;
        config.warnings.extend(mcp_warnings);
        Ok(config)
    }

    fn resolve(home: PathBuf, raw: ConfigToml) -> Result<Config> {
        let provider_id = raw
            .model_provider
            .clone()
            .unwrap_or_else(|| catalog::DEFAULT_PROVIDER.to_string());
        let builtin = catalog::provider(&provider_id);
        let user = raw.model_providers.get(&provider_id);
        if builtin.is_none() && user.is_none() {
            let known: Vec<&str> = catalog::PROVIDERS.iter().map(|p| p.id).collect();
            bail!(
                "unknown model_provider `{provider_id}`: define [model_providers.{provider_id}] with a base_url, or use one of {}",
                known.join(", ")
            );
        }
        let user = user.cloned().unwrap_or_default();
        let provider = provider_config(&provider_id, builtin, &user, &raw)?;
        let model = match raw
            .model
            .clone()
            .or_else(|| builtin.map(|b| b.default_model.to_string()))
        {
            Some(m) => m,
            None => default_model_for(&provider_id),
        };
        let ws = raw.sandbox_workspace_write.clone().unwrap_or_default();
        // One that does not resolve is left out: it only matters to an agent that names it.
        let other_providers = raw
            .model_providers
            .iter()
            .filter(|(id, _)| **id != provider_id)
            .filter_map(|(id, t)| provider_config(id, catalog::provider(id), t, &raw).ok())
            .collect();
        let mcp_oauth = oauth_settings(&home, &raw)?;
        // A bad `[otel]` is a bad config in every face, not only where spans are exported.
        raw.otel.settings()?;
        Ok(Config {
            home,
            other_providers,
            model,
            harness: raw.harness.clone(),
            approval_policy: raw
                .approval_policy
                .as_deref()
                .map(str::parse::<ApprovalPolicy>)
                .transpose()?
                .unwrap_or_default(),
            sandbox_mode: raw
                .sandbox_mode
                .as_deref()
                .map(str::parse::<SandboxMode>)
                .transpose()?
                .unwrap_or_default(),
            network_access: ws.network_access,
            writable_roots: ws.writable_roots,
            reasoning_effort: raw
                .model_reasoning_effort
                .as_deref()
                .map(str::parse::<ReasoningEffort>)
                .transpose()
                .context("model_reasoning_effort")?,
            context_window: raw.model_context_window,
            max_output_tokens: raw.model_max_output_tokens.unwrap_or(32_768),
            max_turn_requests: raw.max_turn_requests.unwrap_or(100).max(1),
            undo_turns: raw.undo_turns.unwrap_or(50),
            max_processes: raw.max_processes.unwrap_or(DEFAULT_MAX_PROCESSES).max(1),
            approval_timeout: std::time::Duration::from_secs(
                raw.approval_timeout_secs.unwrap_or(600).max(1),
            ),
            project_doc_max_bytes: raw.project_doc_max_bytes.unwrap_or(32 * 1024),
            project_doc_fallback_filenames: raw.project_doc_fallback_filenames.clone(),
            explore_model: raw.explore_model.clone().filter(|m| !m.trim().is_empty()),
            tool_output_token_limit: raw.tool_output_token_limit.unwrap_or(10_000),
            parallel_tool_calls: raw.parallel_tool_calls.unwrap_or(true),
            acp_client_terminals: raw.acp_client_terminals.unwrap_or(false),
            // Set by `from_layers`, with the warnings for servers left out.
            mcp_servers: Vec::new(),
            mcp_oauth,
            otel_log_user_prompt: raw.otel.log_user_prompt.unwrap_or(false),
            mcp_skipped: Vec::new(),
            loaded_with: None,
            project: None,
            warnings: Vec::new(),
            bypass_hook_trust: false,
            rules: std::sync::Arc::default(),
            notify: raw.notify.clone(),
            terminal_notifications: terminal_notifications(raw.tui.notifications.as_ref()),
            web: std::sync::Arc::new(
                web::WebConfig::from_toml(
                    &raw.web,
                    &web::SearchContext {
                        provider: &provider,
                        codex_web_search: raw.web_search.as_deref(),
                    },
                )
                .context("[web]")?,
            ),
            provider,
        })
    }
}

/// `[tui] notifications`: both by default, `true`/`false` for both, or a list of events.
fn terminal_notifications(setting: Option<&TuiNotifications>) -> TerminalNotifications {
    match setting {
        None => TerminalNotifications {
            turn_complete: true,
            approval: true,
        },
        Some(TuiNotifications::All(on)) => TerminalNotifications {
            turn_complete: *on,
            approval: *on,
        },
        Some(TuiNotifications::Some(events)) => TerminalNotifications {
            turn_complete: events.iter().any(|e| e == "agent-turn-complete"),
            approval: events.iter().any(|e| e == "approval-requested"),
        },
    }
}

/// The provider a config names: the user's `[model_providers.<id>]` over the built-in entry.
fn provider_config(
    provider_id: &str,
    builtin: Option<&catalog::ProviderInfo>,
    user: &ProviderToml,
    raw: &ConfigToml,
) -> Result<ProviderConfig> {
    let mut base_url = user
        .base_url
        .clone()
        .or_else(|| builtin.map(|b| b.base_url.to_string()))
        .with_context(|| format!("model_providers.{provider_id}.base_url is required"))?;
    if provider_id == crate::model::catalog::OPENAI
        && user.base_url.is_none()
        && let Some(u) = &raw.openai_base_url
    {
        base_url = u.clone();
    }
    let wire_api = match &user.wire_api {
        Some(w) => {
            WireApi::parse(w).with_context(|| format!("model_providers.{provider_id}.wire_api"))?
        }
        None => builtin.map(|b| b.wire_api).unwrap_or(WireApi::Chat),
    };
    let scheme = match &user.auth {
        Some(a) => {
            AuthScheme::parse(a).with_context(|| format!("model_providers.{provider_id}.auth"))?
        }
        None => builtin.map(|b| b.auth).unwrap_or_default(),
    };
    let auth = ProviderAuth {
        scheme,
        requires_openai_auth: user
            .requires_openai_auth
            .unwrap_or(builtin.is_some_and(|b| b.id == crate::model::catalog::OPENAI)),
    };
    let mut http_headers = user.http_headers.clone();
    for (header, var) in &user.env_http_headers {
        if let Ok(v) = std::env::var(var) {
            http_headers.insert(header.clone(), v);
        }
    }
    Ok(ProviderConfig {
        id: provider_id.to_string(),
        name: user
            .name
            .clone()
            .or_else(|| builtin.map(|b| b.name.to_string()))
            .unwrap_or_else(|| provider_id.to_string()),
        base_url: base_url.trim_end_matches('/').to_string(),
        env_key: user
            .env_key
            .clone()
            .or_else(|| builtin.and_then(|b| b.env_key.map(String::from))),
        api_key: user
            .api_key
            .clone()
            .or(user.experimental_bearer_token.clone()),
        wire_api,
        auth,
        http_headers,
        query_params: user.query_params.clone(),
        external_token: None,
        request_max_retries: user.request_max_retries.unwrap_or(4).min(100),
        stream_max_retries: user.stream_max_retries.unwrap_or(2).min(100),
        stream_idle_timeout_ms: user.stream_idle_timeout_ms.unwrap_or(300_000),
        connect_timeout_ms: user.connect_timeout_ms.unwrap_or(15_000),
        request_timeout_ms: user.request_timeout_ms.unwrap_or(30 * 60_000),
        retry_base_delay_ms: user.retry_base_delay_ms.unwrap_or(500),
    })
}

/// Merges the trusted project's config files over the user's `table` (under the profile, the
/// environment and the command line, as Codex layers them). A broken file is left out with a
/// warning naming it; the others load. Trust is read from the user's file and `-c`.
fn project_layers(
    table: &mut toml::Table,
    cli: &toml::Table,
    overrides: &Overrides,
) -> (Option<ProjectTrust>, Vec<String>) {
    let Some(cwd) = &overrides.project else {
        return (None, Vec::new());
    };
    let mut trust = trust::project_trust(table, cwd);
    if trust.level.is_none() {
        trust.level = trust::recorded(cli, &trust.root);
    }
    let mut warnings = Vec::new();
    if trust.trusted() {
        // The rules files among them load in `rules::load`.
        let configs = trust.files.iter().filter(|f| f.ends_with("config.toml"));
        for file in configs {
            match trust::project_layer(file) {
                Ok(layer) => merge(table, layer),
                Err(e) => warnings.push(format!("{e}; that file is left out")),
            }
        }
    }
    (Some(trust), warnings)
}

/// A provider of the user's own without a `model`: the default model, as Codex does, said once
/// per process on stderr.
fn default_model_for(provider_id: &str) -> String {
    let model = catalog::provider(catalog::DEFAULT_PROVIDER)
        .map(|p| p.default_model)
        .unwrap_or("kimi-k3")
        .to_string();
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "note: no model is configured for provider `{provider_id}`; using the default model `{model}` (set `model = \"…\"` in config.toml or pass -m to choose one)"
        );
    });
    model
}

/// Every key of the configuration this process starts with: `<home>/config.toml` and the
/// command line's `-c` overrides. Read before any thread starts, for
/// `secrets::protect_process`.
pub fn process_keys(args: &[std::ffi::OsString]) -> ConfiguredKeys {
    let file = std::fs::read_to_string(home_dir().join("config.toml")).ok();
    configured_keys(file.as_deref(), &config_overrides(args))
}

/// The values of `-c KEY=VALUE` / `--config KEY=VALUE` / `--config=KEY=VALUE` arguments.
fn config_overrides(args: &[std::ffi::OsString]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter().filter_map(|a| a.to_str());
    while let Some(a) = it.next() {
        if a == "-c" || a == "--config" {
            out.extend(it.next().map(String::from));
        } else if let Some(v) = a.strip_prefix("--config=") {
            out.push(v.to_string());
        } else if let Some(v) = a.strip_prefix("-c").filter(|v| v.contains('=')) {
            out.push(v.to_string());
        }
    }
    out
}

/// A warning when `<home>/config.toml` holds a key (of any provider, in any profile) and other
/// users can read it.
pub(crate) fn config_permission_warning(home: &Path) -> Option<String> {
    let path = home.join("config.toml");
    let mode = crate::platform::mode(&std::fs::metadata(&path).ok()?)?;
    if mode & 0o044 == 0 {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let keys = configured_keys(Some(&text), &[]);
    if keys.values.is_empty() {
        return None;
    }
    let places: Vec<&str> = keys.values.iter().map(|(at, _)| at.as_str()).collect();
    Some(format!(
        "{} holds API keys ({}) and other users can read it (mode {mode:03o}): run `chmod 600 {}`",
        path.display(),
        places.join(", "),
        path.display()
    ))
}

/// The keys in `file_text` (config.toml) and in `-c` overrides, in every provider table,
/// including those inside profiles, plus the catalog's key variables.
pub fn configured_keys(file_text: Option<&str>, overrides: &[String]) -> ConfiguredKeys {
    let mut table: toml::Table = file_text.and_then(|t| t.parse().ok()).unwrap_or_default();
    for raw in overrides {
        if let Ok((key, value)) = parse_override(raw) {
            let _ = set_dotted(&mut table, &key, value);
        }
    }
    let mut keys = ConfiguredKeys::default();
    for p in catalog::PROVIDERS {
        keys.env_vars.extend(p.env_key.map(String::from));
    }
    keys.env_vars.push("CODEX_API_KEY".into());
    let mut scopes = vec![(String::new(), &table)];
    if let Some(profiles) = table.get("profiles").and_then(|p| p.as_table()) {
        for (name, p) in profiles {
            if let Some(p) = p.as_table() {
                scopes.push((format!("profiles.{name}."), p));
            }
        }
    }
    for (scope, t) in scopes {
        let Some(providers) = t.get("model_providers").and_then(|p| p.as_table()) else {
            continue;
        };
        for (id, p) in providers {
            let Some(p) = p.as_table() else { continue };
            let at = |k: &str| format!("{scope}model_providers.{id}.{k}");
            for k in ["api_key", "experimental_bearer_token"] {
                if let Some(v) = p.get(k).and_then(|v| v.as_str()) {
                    keys.values.push((at(k), v.to_string()));
                }
            }
            if let Some(v) = p.get("env_key").and_then(|v| v.as_str()) {
                keys.env_vars.push(v.to_string());
            }
            for section in ["http_headers", "query_params"] {
                let entries = p.get(section).and_then(|h| h.as_table());
                for (name, v) in entries.into_iter().flatten() {
                    if let Some(v) = v.as_str().filter(|_| crate::secrets::secret_name(name)) {
                        keys.values
                            .push((at(&format!("{section}.{name}")), v.to_string()));
                    }
                }
            }
            let env_headers = p.get("env_http_headers").and_then(|h| h.as_table());
            for v in env_headers
                .into_iter()
                .flatten()
                .filter_map(|(_, v)| v.as_str())
            {
                keys.env_vars.push(v.to_string());
            }
        }
    }
    keys.values.retain(|(_, v)| !v.trim().is_empty());
    keys.env_vars.sort();
    keys.env_vars.dedup();
    keys
}

/// `key=value`: split at the first `=`, the value parsed as TOML, falling back to a raw string.
pub fn parse_override(raw: &str) -> Result<(String, toml::Value)> {
    let Some((key, value)) = raw.split_once('=') else {
        bail!("invalid --config `{raw}`: expected key=value");
    };
    let key = key.trim();
    if key.is_empty() {
        bail!("invalid --config `{raw}`: empty key");
    }
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

fn set_dotted(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<()> {
    let parts: Vec<&str> = key.split('.').map(|p| p.trim().trim_matches('"')).collect();
    let (last, parents) = parts.split_last().context("empty key")?;
    let mut cur = table;
    for part in parents {
        let entry = cur
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            _ => bail!("`{part}` in `{key}` is not a table"),
        };
    }
    match (cur.get_mut(*last), value) {
        (Some(toml::Value::Table(existing)), toml::Value::Table(new)) => merge(existing, new),
        (_, value) => {
            cur.insert(last.to_string(), value);
        }
    }
    Ok(())
}

/// Deep-merges `top` into `base`; `top` wins.
fn merge(base: &mut toml::Table, top: toml::Table) {
    for (k, v) in top {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) => merge(b, t),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_found_in_every_spelling() {
        let args: Vec<std::ffi::OsString> = [
            "interpreter",
            "exec",
            "-c",
            "a=1",
            "--config",
            "b=2",
            "--config=c=3",
            "-cd=4",
            "-m",
            "x",
        ]
        .iter()
        .map(std::ffi::OsString::from)
        .collect();
        assert_eq!(config_overrides(&args), ["a=1", "b=2", "c=3", "d=4"]);
    }

    fn load(file: Option<&str>, env: &[(&str, &str)], ov: Overrides) -> Result<Config> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_layers(PathBuf::from("/h"), file, None, &env, &ov)
    }

    fn ov(config: &[&str]) -> Overrides {
        Overrides {
            config: config.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_trusted_projects_config_loads_under_the_command_line_and_a_broken_file_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let top = project_root(dir.path());
        std::fs::create_dir_all(top.join(".git")).unwrap();
        for (f, text) in [
            (
                ".codex/config.toml",
                "harness = \"pi\"\nmodel = \"codex-project\"\n",
            ),
            (".openinterpreter/config.toml", "model = \"ours-project\"\n"),
            ("sub/.codex/config.toml", "harness = 3\n"),
        ] {
            std::fs::create_dir_all(top.join(f).parent().unwrap()).unwrap();
            std::fs::write(top.join(f), text).unwrap();
        }
        let sub = top.join("sub");
        let at = |project: &Path, cli: &[&str]| Overrides {
            project: Some(project.to_path_buf()),
            ..ov(cli)
        };
        // A literal key: Windows paths hold backslashes.
        let trusted = format!(
            "[projects.'{}']\ntrust_level = \"trusted\"\n",
            top.display()
        );
        // Untrusted: the user's config only, and the files named.
        let c = load(Some("model = \"user\"\n"), &[], at(&sub, &[])).unwrap();
        assert_eq!(c.model, "user");
        assert_eq!(c.project.as_ref().unwrap().files.len(), 3);
        assert!(c.project.unwrap().ignored_note().is_some());
        // Trusted: ours over Codex's at one level; the broken file is left out and named.
        let c = load(
            Some(&format!("model = \"user\"\n{trusted}")),
            &[],
            at(&sub, &[]),
        )
        .unwrap();
        assert_eq!(
            (c.model.as_str(), c.harness.as_deref()),
            ("ours-project", Some("pi"))
        );
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].contains(
                &top.join("sub")
                    .join(".codex")
                    .join("config.toml")
                    .display()
                    .to_string()
            ),
            "{:?}",
            c.warnings
        );
        // The command line wins over the project.
        let c = load(Some(&trusted), &[], at(&top, &["model=\"cli\""])).unwrap();
        assert_eq!(c.model, "cli");
        // Marked untrusted: nothing loads, and nobody asks again.
        let untrusted = trusted.replace("\"trusted\"", "\"untrusted\"");
        let c = load(Some(&untrusted), &[], at(&top, &[])).unwrap();
        assert_eq!(c.model, "kimi-k3");
        assert!(!c.project.unwrap().needs_answer());
    }

    #[test]
    fn defaults_to_kimi_k3() {
        let c = load(None, &[], Overrides::default()).unwrap();
        assert_eq!(c.provider.id, "kimi");
        assert_eq!(c.model, "kimi-k3");
        assert_eq!(c.provider.base_url, "https://api.moonshot.ai/v1");
        assert_eq!(c.provider.env_key.as_deref(), Some("MOONSHOT_API_KEY"));
        assert_eq!(c.provider.wire_api, WireApi::Chat);
    }

    #[test]
    fn precedence_file_profile_env_override_flag() {
        let file = r#"
model = "from-file"
harness = "native"
approval_policy = "untrusted"
[profiles.fast]
model = "from-profile"
approval_policy = "never"
"#;
        let c = load(Some(file), &[], Overrides::default()).unwrap();
        assert_eq!(c.model, "from-file");
        assert_eq!(c.approval_policy, ApprovalPolicy::Untrusted);

        let mut o = Overrides {
            profile: Some("fast".into()),
            ..Default::default()
        };
        let c = load(Some(file), &[], o.clone()).unwrap();
        assert_eq!(c.model, "from-profile");
        assert_eq!(c.approval_policy, ApprovalPolicy::Never);

        let c = load(Some(file), &[("model", "from-env")], o.clone()).unwrap();
        assert_eq!(c.model, "from-env");

        o.config = vec!["model=\"from-c\"".into()];
        let c = load(Some(file), &[("model", "from-env")], o.clone()).unwrap();
        assert_eq!(c.model, "from-c");

        o.model = Some("from-flag".into());
        let c = load(Some(file), &[("model", "from-env")], o).unwrap();
        assert_eq!(c.model, "from-flag");
    }

    #[test]
    fn later_override_wins_and_profile_via_c() {
        let file = "[profiles.p]\nmodel = \"pm\"\n";
        let c = load(Some(file), &[], ov(&["model=a", "model=b"])).unwrap();
        assert_eq!(c.model, "b");
        let c = load(Some(file), &[], ov(&["profile=\"p\""])).unwrap();
        assert_eq!(c.model, "pm");
    }

    #[test]
    fn custom_provider_from_dotted_overrides() {
        let c = load(
            None,
            &[],
            ov(&[
                "model_provider=\"mock\"",
                "model_providers.mock={name=\"mock\", base_url=\"http://127.0.0.1:1/v1/\", wire_api=\"responses\"}",
                "model_providers.mock.request_max_retries=7",
                "model=\"m\"",
            ]),
        )
        .unwrap();
        assert_eq!(c.provider.id, "mock");
        assert_eq!(c.provider.base_url, "http://127.0.0.1:1/v1");
        assert_eq!(c.provider.wire_api, WireApi::Responses);
        assert_eq!(c.provider.request_max_retries, 7);
        assert_eq!(c.provider.resolve_api_key().unwrap(), None);
    }

    #[test]
    fn overriding_catalog_provider_keeps_its_defaults() {
        let c = load(
            None,
            &[],
            ov(&["model_providers.kimi.base_url=\"http://x/v1\""]),
        )
        .unwrap();
        assert_eq!(c.provider.base_url, "http://x/v1");
        assert_eq!(c.provider.env_key.as_deref(), Some("MOONSHOT_API_KEY"));
    }

    #[test]
    fn raw_string_fallback_and_bad_override() {
        let (k, v) = parse_override("model=kimi-k3").unwrap();
        assert_eq!(k, "model");
        assert_eq!(v.as_str(), Some("kimi-k3"));
        let (_, v) = parse_override("max_turn_requests=5").unwrap();
        assert_eq!(v.as_integer(), Some(5));
        assert!(parse_override("novalue").is_err());
    }

    #[test]
    fn malformed_file_names_file_and_line() {
        let err = Config::from_layers(
            PathBuf::from("/h"),
            Some("model = \"a\"\nmodel_provider = \n"),
            Some(Path::new("/h/config.toml")),
            &[],
            &Overrides::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("/h/config.toml"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        let err = load(
            Some("max_turn_requests = \"lots\"\n"),
            &[],
            Overrides::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn unknown_provider_and_profile_are_clear() {
        let err = load(None, &[], ov(&["model_provider=\"nope\""]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown model_provider `nope`"), "{err}");
        let o = Overrides {
            profile: Some("missing".into()),
            ..Default::default()
        };
        let err = load(None, &[], o).unwrap_err().to_string();
        assert!(err.contains("profile `missing` not found"), "{err}");
    }

    #[test]
    fn missing_key_names_variable_and_config_key() {
        let c = load(
            None,
            &[],
            ov(&["model_providers.kimi.env_key=\"INTERPRETER_TEST_SURELY_UNSET_KEY\""]),
        )
        .unwrap();
        let err = c.provider.resolve_api_key().unwrap_err().to_string();
        assert!(err.contains("INTERPRETER_TEST_SURELY_UNSET_KEY"), "{err}");
        assert!(err.contains("model_providers.kimi.env_key"), "{err}");
    }

    #[test]
    fn a_provider_without_a_model_uses_the_default_model() {
        let c = load(
            None,
            &[],
            ov(&[
                "model_provider=\"mine\"",
                "model_providers.mine={base_url=\"http://127.0.0.1:1/v1\"}",
            ]),
        )
        .unwrap();
        assert_eq!(c.model, "kimi-k3");
        // A catalog provider uses its own default.
        let c = load(None, &[], ov(&["model_provider=\"deepseek\""])).unwrap();
        assert_eq!(c.model, "deepseek-chat");
    }

    #[test]
    fn mcp_servers_are_read() {
        let c = load(
            Some("[mcp_servers.a]\ncommand = \"srv\"\n[mcp_servers.b]\nurl = \"http://h/mcp\"\nenabled = false\n"),
            &[],
            Overrides::default(),
        )
        .unwrap();
        assert_eq!(c.mcp_servers.len(), 1);
        assert_eq!(c.mcp_servers[0].name, "a");
        // A bad entry is left out with a warning; the config still loads.
        let c = load(
            Some("[mcp_servers.a]\nargs = []\n"),
            &[],
            Overrides::default(),
        )
        .unwrap();
        assert!(c.mcp_servers.is_empty());
        assert!(c.warnings[0].contains("mcp_servers.a"), "{:?}", c.warnings);
    }

    #[test]
    fn every_configured_key_is_enumerated() {
        let file = r#"
model_provider = "a"
[model_providers.a]
api_key = "key-of-the-active-one"
[model_providers.b]
api_key = "key-of-another-one"
env_key = "B_PROVIDER_KEY"
http_headers = { "X-Api-Key" = "header-secret-1", "X-Title" = "public" }
env_http_headers = { "Authorization" = "B_AUTH_VAR" }
[profiles.p.model_providers.c]
experimental_bearer_token = "token-in-a-profile"
"#;
        let keys = configured_keys(
            Some(file),
            &["model_providers.d.api_key=\"key-from-the-command-line\"".into()],
        );
        let values: Vec<&str> = keys.values.iter().map(|(_, v)| v.as_str()).collect();
        for v in [
            "key-of-the-active-one",
            "key-of-another-one",
            "header-secret-1",
            "token-in-a-profile",
            "key-from-the-command-line",
        ] {
            assert!(values.contains(&v), "{v} missing from {values:?}");
        }
        assert!(!values.contains(&"public"));
        for v in [
            "B_PROVIDER_KEY",
            "B_AUTH_VAR",
            "MOONSHOT_API_KEY",
            "CODEX_API_KEY",
        ] {
            assert!(keys.env_vars.iter().any(|e| e == v), "{v}");
        }
        assert!(
            keys.values
                .iter()
                .any(|(at, _)| at == "profiles.p.model_providers.c.experimental_bearer_token")
        );
    }

    #[test]
    fn login_key_in_config_wins() {
        let c = load(
            Some("[model_providers.kimi]\napi_key = \"sk-file\"\n"),
            &[],
            Overrides::default(),
        )
        .unwrap();
        assert_eq!(
            c.provider.resolve_api_key().unwrap().as_deref(),
            Some("sk-file")
        );
    }

    #[test]
    fn the_search_backend_follows_web_search_the_provider_and_codexs_setting() {
        use web::SearchBackend;
        let search = |file: &str, over: &[&str]| {
            load(Some(file), &[], ov(over)).map(|c| c.web.search.clone())
        };
        // The default provider (Moonshot's platform) gets no search unless one is named: its
        // builtin costs per call.
        assert_eq!(search("", &[]).unwrap(), None);
        assert_eq!(
            search("[web]\nsearch = \"moonshot-builtin\"\n", &[]).unwrap(),
            Some(SearchBackend::MoonshotBuiltin)
        );
        // Kimi Code's own service on a Kimi Code provider, with its key.
        let kimi = search(
            "model_provider = \"kimi-code\"\n[model_providers.kimi-code]\napi_key = \"sk-k\"\n",
            &[],
        )
        .unwrap();
        assert_eq!(
            kimi,
            Some(SearchBackend::KimiCode {
                url: "https://api.kimi.com/coding/v1/search".parse().unwrap(),
                key: Some("sk-k".into()),
            })
        );
        // A SearXNG endpoint.
        assert!(matches!(
            search(
                "[web]\nsearch_url = \"http://127.0.0.1:8888/search\"\n",
                &[]
            )
            .unwrap(),
            Some(SearchBackend::Searx(_))
        ));
        // Codex's `web_search` on a Responses provider is OpenAI's hosted search.
        let openai = "model_provider = \"openai\"\n";
        assert_eq!(
            search(openai, &["web_search=\"cached\""]).unwrap(),
            Some(SearchBackend::OpenAiHosted { live: false })
        );
        assert_eq!(
            search(openai, &["web_search=\"live\""]).unwrap(),
            Some(SearchBackend::OpenAiHosted { live: true })
        );
        assert_eq!(search(openai, &["web_search=\"disabled\""]).unwrap(), None);
        // `[web] enabled = false` and `search = "off"` turn it off; a backend the wire cannot
        // carry, or an unknown one, is an error.
        let off = "model_provider = \"kimi-code\"\n[web]\nenabled = false\n";
        assert_eq!(search(off, &[]).unwrap(), None);
        assert_eq!(search("[web]\nsearch = \"off\"\n", &[]).unwrap(), None);
        for (file, said) in [
            (
                "[web]\nsearch = \"openai-hosted\"\n",
                "needs a Responses provider",
            ),
            ("[web]\nsearch = \"searxng\"\n", "needs search_url"),
            ("[web]\nsearch = \"bing\"\n", "expected auto"),
        ] {
            let err = format!("{:#}", search(file, &[]).unwrap_err());
            assert!(err.contains(said), "{err}");
        }
        // The key stays out of Debug output.
        assert!(!format!("{kimi:?}").contains("sk-k"));
    }
}
