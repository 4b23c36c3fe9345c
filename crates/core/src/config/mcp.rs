//! `[mcp_servers.<name>]` in config.toml, as Codex spells it, and how those servers merge with
//! the ones a front end names (ACP `mcpServers`). Pure: no I/O.
//!
//! ```toml
//! [mcp_servers.docs]
//! command = "npx"
//! args = ["-y", "docs-mcp"]
//! env = { DOCS_TOKEN = "…" }
//! cwd = "/srv/docs"             # default: the session's working directory
//! startup_timeout_sec = 20      # default 10
//! tool_timeout_sec = 120        # default 60
//!
//! [mcp_servers.tracker]
//! url = "https://tracker.example/mcp"   # streamable HTTP
//! bearer_token_env_var = "TRACKER_TOKEN"
//! http_headers = { "X-Team" = "core" }
//! enabled = false               # keep the entry, do not start it
//! ```

use interpreter_protocol::McpAuthStatus;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Codex's default for `startup_timeout_sec`.
pub(crate) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// Codex's default for `tool_timeout_sec`.
pub(crate) const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// One `[mcp_servers.<name>]` table. Unknown keys are accepted (Codex has more).
#[derive(Debug, Default, Clone, Deserialize)]
pub struct McpServerToml {
    /// A stdio server's program.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Where it starts.
    pub cwd: Option<PathBuf>,
    /// A streamable HTTP server's endpoint.
    pub url: Option<String>,
    /// Headers sent to `url`.
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// The variable holding a bearer token for `url`.
    pub bearer_token_env_var: Option<String>,
    /// False: kept but not started.
    pub enabled: Option<bool>,
    /// Start, handshake and tool list within this many seconds.
    pub startup_timeout_sec: Option<f64>,
    /// One tool call within this many seconds.
    pub tool_timeout_sec: Option<f64>,
    /// Only these of its tools, when given.
    pub enabled_tools: Option<Vec<String>>,
    /// None of these of its tools.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
}

/// The enabled servers of config.toml, in name order, the entries not started (disabled, or
/// unusable, with why) and a warning for each unusable one. `env` reads variables
/// (`bearer_token_env_var`). As in Codex, one bad entry (neither a command nor a URL, an unset
/// token variable, a bad timeout) leaves only that server out.
pub(crate) fn from_toml(
    servers: &BTreeMap<String, McpServerToml>,
    env: impl Fn(&str) -> Option<String>,
) -> (Vec<McpServerConfig>, Vec<McpServerSkipped>, Vec<String>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut warnings = Vec::new();
    for (name, s) in servers {
        if s.enabled == Some(false) {
            skipped.push(McpServerSkipped {
                name: name.clone(),
                why: None,
                auth: toml_auth(s),
            });
            continue;
        }
        match server(name, s, &env) {
            Ok(c) => out.push(c),
            Err(e) => {
                warnings.push(format!("MCP server `{name}` was left out: {e}"));
                skipped.push(McpServerSkipped {
                    name: name.clone(),
                    why: Some(format!("{e}")),
                    auth: toml_auth(s),
                });
            }
        }
    }
    (out, skipped, warnings)
}

/// A configured server that is not started: disabled, or its entry cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSkipped {
    /// The entry's name.
    pub name: String,
    /// Why it cannot be used; None: `enabled = false`.
    pub why: Option<String>,
    /// How it would authenticate.
    pub auth: McpAuthStatus,
}

/// Codex's `auth_status` of an entry, as `codex mcp list` shows it.
pub(crate) fn toml_auth(s: &McpServerToml) -> McpAuthStatus {
    match (&s.command, &s.url) {
        (Some(_), None) => McpAuthStatus::Unsupported,
        (None, Some(_)) if s.bearer_token_env_var.is_some() => McpAuthStatus::BearerToken,
        (None, Some(_)) => McpAuthStatus::NotLoggedIn,
        _ => McpAuthStatus::Unknown,
    }
}

fn server(
    name: &str,
    s: &McpServerToml,
    env: &impl Fn(&str) -> Option<String>,
) -> anyhow::Result<McpServerConfig> {
    let key = format!("mcp_servers.{name}");
    let transport = match (&s.command, &s.url) {
        (Some(command), None) => McpTransport::Stdio {
            command: PathBuf::from(command),
            args: s.args.clone(),
            env: s.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            cwd: s.cwd.clone(),
        },
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                anyhow::bail!("{key}.url `{url}` is not an http(s) URL");
            }
            let mut headers: Vec<(String, String)> = s
                .http_headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if let Some(var) = &s.bearer_token_env_var {
                let token = env(var).filter(|t| !t.trim().is_empty()).ok_or_else(|| {
                    anyhow::anyhow!("{key}.bearer_token_env_var: the variable {var} is not set")
                })?;
                crate::secrets::register(token.trim());
                headers.push(("Authorization".into(), format!("Bearer {}", token.trim())));
            }
            McpTransport::Http {
                url: url.clone(),
                headers,
                oauth: None,
            }
        }
        (Some(_), Some(_)) => {
            anyhow::bail!(
                "{key}: give either `command` (stdio) or `url` (streamable HTTP), not both"
            )
        }
        (None, None) => anyhow::bail!("{key}: give `command` (stdio) or `url` (streamable HTTP)"),
    };
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        startup_timeout: Some(
            seconds(&key, "startup_timeout_sec", s.startup_timeout_sec)?
                .unwrap_or(DEFAULT_STARTUP_TIMEOUT),
        ),
        tool_timeout: Some(
            seconds(&key, "tool_timeout_sec", s.tool_timeout_sec)?.unwrap_or(DEFAULT_TOOL_TIMEOUT),
        ),
        enabled_tools: s.enabled_tools.clone(),
        disabled_tools: s.disabled_tools.clone(),
    })
}

fn seconds(key: &str, field: &str, v: Option<f64>) -> anyhow::Result<Option<Duration>> {
    match v {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => anyhow::bail!("{key}.{field} = {s}: expected a positive number of seconds"),
    }
}

/// The servers a session connects: config.toml's, then the front end's. A front-end server
/// replaces a configured one of the same name (the client knows the session at hand), and a
/// stdio server from config.toml without a `cwd` starts in the session's working directory.
pub(crate) fn merge(
    configured: &[McpServerConfig],
    from_client: Vec<McpServerConfig>,
    session_cwd: &std::path::Path,
) -> Vec<McpServerConfig> {
    let mut out: Vec<McpServerConfig> = configured
        .iter()
        .filter(|c| !from_client.iter().any(|f| f.name == c.name))
        .cloned()
        .map(|mut c| {
            if let McpTransport::Stdio {
                cwd: cwd @ None, ..
            } = &mut c.transport
            {
                *cwd = Some(session_cwd.to_path_buf());
            }
            c
        })
        .collect();
    out.extend(from_client);
    out
}

/// One MCP server to connect, as the front end names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerConfig {
    /// The user's name for it; the prefix of its tools' names.
    pub name: String,
    /// How to start or reach it.
    pub transport: McpTransport,
    /// Start, handshake and tool list within this (default `mcp::CONNECT_TIMEOUT`).
    pub startup_timeout: Option<Duration>,
    /// One tool call within this; None: no limit but cancellation.
    pub tool_timeout: Option<Duration>,
    /// Codex's `enabled_tools`: only these tools, when given (applied before `disabled_tools`).
    pub enabled_tools: Option<Vec<String>>,
    /// Codex's `disabled_tools`: these tools are left out.
    pub disabled_tools: Vec<String>,
}

impl McpServerConfig {
    /// How it authenticates: stdio servers need no login; an HTTP server sending an
    /// `Authorization` header has a bearer token.
    pub(crate) fn auth(&self) -> McpAuthStatus {
        match &self.transport {
            McpTransport::Stdio { .. } => McpAuthStatus::Unsupported,
            McpTransport::Http { headers, .. }
                if headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("authorization")) =>
            {
                McpAuthStatus::BearerToken
            }
            McpTransport::Http { .. } => McpAuthStatus::NotLoggedIn,
        }
    }

    /// Whether the server's tool `tool` is offered, by `enabled_tools` and `disabled_tools`.
    pub(crate) fn offers(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|on| on.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }
}

/// How an MCP server is reached: a child process or an HTTP endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking MCP on stdin/stdout. `env` is added to the agent's own
    /// environment; `cwd` defaults to the agent's.
    Stdio {
        /// The program, looked up on `PATH` when it is a bare name.
        command: PathBuf,
        /// Its arguments, in order.
        args: Vec<String>,
        /// Variables set on top of the agent's environment, from which key variables are
        /// removed.
        env: Vec<(String, String)>,
        /// Where it starts; None: the agent's working directory.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint, with extra request headers (e.g. `Authorization`).
    Http {
        /// The endpoint; only `http://` and `https://` are accepted.
        url: String,
        /// Sent with every request: `http_headers`, plus `Authorization` from
        /// `bearer_token_env_var`.
        headers: Vec<(String, String)>,
        /// Where `interpreter mcp login` keeps its tokens, for a server the user configured
        /// without an `Authorization` header (`Config::attach_oauth`); None: no OAuth.
        oauth: Option<OAuthSettings>,
    },
}

/// Where OAuth tokens of MCP servers are kept (Codex's `mcp_oauth_credentials_store`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CredentialsStore {
    /// The OS keyring when one answers, else the file.
    #[default]
    Auto,
    /// The OS keyring only.
    Keyring,
    /// `$OPENINTERPRETER_HOME/.credentials.json` (mode 0600).
    File,
}

impl std::str::FromStr for CredentialsStore {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "keyring" => Ok(Self::Keyring),
            "file" => Ok(Self::File),
            other => anyhow::bail!(
                "mcp_oauth_credentials_store = \"{other}\": expected \"auto\", \"keyring\" or \"file\""
            ),
        }
    }
}

/// How MCP OAuth sign-in is set up: the token store, the home folder its file lives in, and
/// the loopback port of the sign-in callback (`mcp_oauth_callback_port`; None: any free one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthSettings {
    /// Keyring, file, or the keyring with the file behind it.
    pub store: CredentialsStore,
    /// `$OPENINTERPRETER_HOME`.
    pub home: PathBuf,
    /// The callback's port.
    pub callback_port: Option<u16>,
}

impl McpTransport {
    /// True when `headers` authenticate already (a bearer token variable, an explicit header).
    pub fn has_authorization_header(headers: &[(String, String)]) -> bool {
        headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(text: &str) -> anyhow::Result<Vec<McpServerConfig>> {
        let (servers, _, warnings) = parse_all(text);
        match warnings.first() {
            Some(w) => anyhow::bail!("{w}"),
            None => Ok(servers),
        }
    }

    fn parse_all(text: &str) -> (Vec<McpServerConfig>, Vec<McpServerSkipped>, Vec<String>) {
        #[derive(Deserialize)]
        struct T {
            mcp_servers: BTreeMap<String, McpServerToml>,
        }
        let t: T = toml::from_str(text).unwrap();
        from_toml(&t.mcp_servers, |v| {
            (v == "TOKEN_VAR").then(|| "tok-123".to_string())
        })
    }

    #[test]
    fn codex_keys_parse() {
        let got = parse(
            r#"
[mcp_servers.docs]
command = "npx"
args = ["-y", "docs"]
env = { A = "1" }
cwd = "/srv"
startup_timeout_sec = 2.5
tool_timeout_sec = 90

[mcp_servers.web]
url = "http://127.0.0.1:9/mcp"
bearer_token_env_var = "TOKEN_VAR"
http_headers = { X-Team = "core" }

[mcp_servers.off]
command = "nope"
enabled = false
"#,
        )
        .unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].name, "docs");
        assert_eq!(
            got[0].transport,
            McpTransport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "docs".into()],
                env: vec![("A".into(), "1".into())],
                cwd: Some("/srv".into()),
            }
        );
        assert_eq!(got[0].startup_timeout, Some(Duration::from_millis(2500)));
        assert_eq!(got[0].tool_timeout, Some(Duration::from_secs(90)));
        assert_eq!(
            got[1].transport,
            McpTransport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: vec![
                    ("X-Team".into(), "core".into()),
                    ("Authorization".into(), "Bearer tok-123".into())
                ],
                oauth: None,
            }
        );
        assert_eq!(got[1].startup_timeout, Some(DEFAULT_STARTUP_TIMEOUT));
        assert_eq!(got[1].tool_timeout, Some(DEFAULT_TOOL_TIMEOUT));
        assert_eq!(got[1].auth(), McpAuthStatus::BearerToken);
        assert_eq!(got[0].auth(), McpAuthStatus::Unsupported);
    }

    #[test]
    fn a_disabled_server_stays_visible_without_a_warning() {
        let (got, skipped, warnings) =
            parse_all("[mcp_servers.off]\nurl = \"http://h/mcp\"\nenabled = false\n");
        assert!(got.is_empty() && warnings.is_empty());
        assert_eq!(
            skipped,
            [McpServerSkipped {
                name: "off".into(),
                why: None,
                auth: McpAuthStatus::NotLoggedIn
            }]
        );
    }

    #[test]
    fn bad_entries_name_the_server() {
        for (text, want) in [
            (
                "[mcp_servers.x]\nargs = []\n",
                "mcp_servers.x: give `command`",
            ),
            (
                "[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://h\"\n",
                "not both",
            ),
            (
                "[mcp_servers.x]\ncommand = \"a\"\ntool_timeout_sec = -1\n",
                "tool_timeout_sec",
            ),
            (
                "[mcp_servers.x]\nurl = \"http://h\"\nbearer_token_env_var = \"UNSET\"\n",
                "UNSET is not set",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn a_bad_server_leaves_only_itself_out() {
        let (got, skipped, warnings) = parse_all(
            "[mcp_servers.gh]\nurl = \"https://api.example/mcp\"\nbearer_token_env_var = \"UNSET\"\n\
             [mcp_servers.ftp]\nurl = \"ftp://h/mcp\"\n\
             [mcp_servers.ok]\ncommand = \"srv\"\nenabled_tools = [\"a\", \"b\"]\ndisabled_tools = [\"b\"]\n",
        );
        assert_eq!(got.len(), 1);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("`ftp` was left out") && warnings[0].contains("http(s)"));
        assert!(warnings[1].contains("`gh` was left out") && warnings[1].contains("UNSET"));
        let names: Vec<(&str, McpAuthStatus)> =
            skipped.iter().map(|s| (s.name.as_str(), s.auth)).collect();
        assert_eq!(
            names,
            [
                ("ftp", McpAuthStatus::NotLoggedIn),
                ("gh", McpAuthStatus::BearerToken)
            ]
        );
        assert!(skipped[1].why.as_deref().unwrap().contains("UNSET"));
        assert!(got[0].offers("a"));
        assert!(!got[0].offers("b"));
        assert!(!got[0].offers("c"));
    }

    #[test]
    fn client_servers_win_on_a_name_clash() {
        let configured =
            parse("[mcp_servers.a]\ncommand = \"from-config\"\n[mcp_servers.b]\ncommand = \"b\"\n")
                .unwrap();
        let client = vec![McpServerConfig {
            name: "a".into(),
            transport: McpTransport::Http {
                url: "http://client".into(),
                headers: vec![],
                oauth: None,
            },
            startup_timeout: None,
            tool_timeout: None,
            enabled_tools: None,
            disabled_tools: vec![],
        }];
        let merged = merge(&configured, client.clone(), Path::new("/work"));
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].name, "b");
        assert!(
            matches!(&merged[0].transport, McpTransport::Stdio { cwd: Some(c), .. } if c == Path::new("/work"))
        );
        assert_eq!(merged[1], client[0]);
    }
}
