//! `interpreter mcp`: Codex's `codex mcp add/list/get/remove/login/logout`, on the user's
//! config.toml (`$OPENINTERPRETER_HOME/config.toml`). The JSON is Codex's; the text is for
//! people.

use interpreter_core::config::{
    NewMcpServer, add_mcp_server, home_dir, mcp_oauth_settings, mcp_servers_json, remove_mcp_server,
};
use interpreter_core::mcp::oauth;
use std::io::IsTerminal;
use std::path::Path;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum McpCommand {
    /// Add a server: `add NAME [--env K=V]… -- COMMAND [ARGS]…` or `add NAME --url URL`.
    Add {
        /// Its name: letters, digits, `-` and `_`.
        name: String,
        /// A streamable HTTP server's URL (instead of a command).
        #[arg(long, conflicts_with_all = ["env", "command"])]
        url: Option<String>,
        /// The variable that holds the URL's bearer token.
        #[arg(long, requires = "url")]
        bearer_token_env_var: Option<String>,
        /// A variable for the command, as KEY=VALUE.
        #[arg(long, value_parser = parse_env_pair, value_name = "KEY=VALUE")]
        env: Vec<(String, String)>,
        /// Replace a server of the same name.
        #[arg(long)]
        force: bool,
        /// The command and its arguments, after `--`.
        #[arg(last = true, num_args = 1..)]
        command: Vec<String>,
    },
    /// List the configured servers.
    List {
        /// As JSON (Codex's shape).
        #[arg(long)]
        json: bool,
    },
    /// Show one server.
    Get {
        /// The server's name.
        name: String,
        /// As JSON (Codex's shape).
        #[arg(long)]
        json: bool,
    },
    /// Remove a server.
    Remove {
        /// The server's name.
        name: String,
    },
    /// Sign in to a streamable HTTP server with OAuth (always a fresh sign-in).
    Login {
        /// The server's name.
        name: String,
        /// Scopes to ask for, comma-separated (default: what the server advertises).
        #[arg(long, value_delimiter = ',', num_args = 1..)]
        scopes: Vec<String>,
    },
    /// Forget a server's OAuth tokens.
    Logout {
        /// The server's name.
        name: String,
    },
}

fn parse_env_pair(raw: &str) -> Result<(String, String), String> {
    match raw.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err("environment entries must be in KEY=VALUE form".into()),
    }
}

pub(crate) async fn run(what: McpCommand) -> i32 {
    let home = home_dir();
    let mut missing = false;
    let result = match what {
        McpCommand::Add {
            name,
            url,
            bearer_token_env_var,
            env,
            force,
            command,
        } => {
            let offer_login = url.clone().filter(|_| bearer_token_env_var.is_none());
            let server = match url {
                Some(url) => NewMcpServer::Http {
                    url,
                    bearer_token_env_var,
                },
                None => NewMcpServer::Stdio { command, env },
            };
            match add_mcp_server(&home, &name, &server, force) {
                Ok(()) => {
                    println!("Added MCP server `{name}`.");
                    match offer_login {
                        // As Codex: a server that offers OAuth is signed in to at once, when
                        // someone is there to use the browser.
                        Some(url)
                            if std::io::stdout().is_terminal()
                                && oauth::supports_oauth(&url).await =>
                        {
                            println!("Detected OAuth support. Starting OAuth flow…");
                            login(&home, &name, &url, &[]).await
                        }
                        _ => Ok(()),
                    }
                }
                Err(e) => Err(e),
            }
        }
        McpCommand::Remove { name } => remove_mcp_server(&home, &name).map(|found| {
            if found {
                println!("Removed MCP server `{name}`.");
            } else {
                println!("No MCP server named `{name}` found.");
            }
        }),
        McpCommand::List { json } => servers(&home).map(|all| {
            if json {
                println!("{}", serde_json::Value::Array(all));
            } else if all.is_empty() {
                println!("No MCP servers configured yet. Try `interpreter mcp add my-tool -- my-command`.");
            } else {
                for s in &all {
                    println!("{}", describe(s));
                }
            }
        }),
        McpCommand::Get { name, json } => servers(&home).map(|all| {
            match all.into_iter().find(|s| s["name"] == name.as_str()) {
                Some(s) if json => println!("{s}"),
                Some(s) => println!("{}", describe(&s)),
                None => {
                    eprintln!("Error: no MCP server named `{name}` is configured.");
                    missing = true;
                }
            }
        }),
        McpCommand::Login { name, scopes } => match http_url(&home, &name) {
            Ok(url) => login(&home, &name, &url, &scopes).await,
            Err(e) => Err(e),
        },
        McpCommand::Logout { name } => http_url(&home, &name).and_then(|url| {
            let settings = mcp_oauth_settings(&home)?;
            match oauth::logout(&settings, &name, &url) {
                Ok(true) => println!("Removed OAuth credentials for `{name}`."),
                Ok(false) => println!("No OAuth credentials stored for `{name}`."),
                Err(e) => anyhow::bail!("{e}"),
            }
            Ok(())
        }),
    };
    match result {
        Ok(()) => i32::from(missing),
        Err(e) => {
            eprintln!("Error: {e:#}");
            1
        }
    }
}

/// Every configured server as Codex's JSON, with `o_auth` for those signed in.
fn servers(home: &Path) -> anyhow::Result<Vec<serde_json::Value>> {
    let settings = mcp_oauth_settings(home)?;
    mcp_servers_json(home, &|name, url| {
        oauth::has_credentials(&settings, name, url)
    })
}

/// The URL of the streamable HTTP server `name`; an error for a stdio or unknown one.
fn http_url(home: &Path, name: &str) -> anyhow::Result<String> {
    let all = mcp_servers_json(home, &|_, _| false)?;
    let Some(s) = all.iter().find(|s| s["name"] == name) else {
        anyhow::bail!("no MCP server named `{name}` is configured");
    };
    match s["transport"]["url"].as_str() {
        Some(url) if s["transport"]["type"] == "streamable_http" => Ok(url.to_string()),
        _ => anyhow::bail!(
            "`{name}` is a stdio server: OAuth login is only for streamable HTTP servers"
        ),
    }
}

async fn login(home: &Path, name: &str, url: &str, scopes: &[String]) -> anyhow::Result<()> {
    let settings = mcp_oauth_settings(home)?;
    oauth::login(&settings, name, url, scopes, |auth_url| {
        println!("Authorize `{name}` by opening this URL in your browser:\n{auth_url}\n");
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("Successfully logged in to MCP server `{name}`.");
    Ok(())
}

/// One server in a line or two: name, how it is reached, its auth, and whether it is off.
fn describe(s: &serde_json::Value) -> String {
    let t = &s["transport"];
    let target = match t["type"].as_str() {
        Some("streamable_http") => t["url"].as_str().unwrap_or_default().to_string(),
        _ => std::iter::once(&t["command"])
            .chain(t["args"].as_array().into_iter().flatten())
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    };
    let off = if s["enabled"] == false {
        "  (disabled)"
    } else {
        ""
    };
    format!(
        "{}  {}  {}  auth: {}{off}",
        s["name"].as_str().unwrap_or_default(),
        t["type"].as_str().unwrap_or_default(),
        target,
        s["auth_status"].as_str().unwrap_or_default(),
    )
}
