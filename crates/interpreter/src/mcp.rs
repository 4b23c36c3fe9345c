//! `interpreter mcp`: Codex's `codex mcp add/list/get/remove`, on the user's config.toml
//! (`$OPENINTERPRETER_HOME/config.toml`). The JSON is Codex's; the text is for people.

use interpreter_core::config::{
    NewMcpServer, add_mcp_server, home_dir, mcp_servers_json, remove_mcp_server,
};

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
}

fn parse_env_pair(raw: &str) -> Result<(String, String), String> {
    match raw.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err("environment entries must be in KEY=VALUE form".into()),
    }
}

pub(crate) fn run(what: McpCommand) -> i32 {
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
            let server = match url {
                Some(url) => NewMcpServer::Http {
                    url,
                    bearer_token_env_var,
                },
                None => NewMcpServer::Stdio { command, env },
            };
            add_mcp_server(&home, &name, &server, force)
                .map(|()| println!("Added MCP server `{name}`."))
        }
        McpCommand::Remove { name } => remove_mcp_server(&home, &name).map(|found| {
            if found {
                println!("Removed MCP server `{name}`.");
            } else {
                println!("No MCP server named `{name}` found.");
            }
        }),
        McpCommand::List { json } => mcp_servers_json(&home).map(|all| {
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
        McpCommand::Get { name, json } => mcp_servers_json(&home).map(|all| {
            match all.into_iter().find(|s| s["name"] == name.as_str()) {
                Some(s) if json => println!("{s}"),
                Some(s) => println!("{}", describe(&s)),
                None => {
                    eprintln!("Error: no MCP server named `{name}` is configured.");
                    missing = true;
                }
            }
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
