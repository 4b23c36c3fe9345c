//! `interpreter mcp add/list/get/remove`: the `[mcp_servers]` of the user's config.toml, read
//! and edited as Codex's `codex mcp` does (`codex-rs/cli/src/mcp_cmd.rs`), with the same JSON.
//! Edits go through `edit.rs`, so comments and order stay.

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

use super::mcp::{McpServerToml, OAuthSettings};

/// What `add` writes: a command to start, or a streamable HTTP URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewMcpServer {
    /// `add NAME [--env K=V]… -- COMMAND [ARGS]…`
    Stdio {
        /// The program and its arguments.
        command: Vec<String>,
        /// `--env` pairs, in order.
        env: Vec<(String, String)>,
    },
    /// `add NAME --url URL [--bearer-token-env-var VAR]`
    Http {
        /// An http(s) URL.
        url: String,
        /// The variable holding its bearer token.
        bearer_token_env_var: Option<String>,
    },
}

/// Refuses a name that TOML bare keys and tool names cannot both take (Codex's rule).
pub fn check_server_name(name: &str) -> Result<()> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Ok(());
    }
    bail!("invalid server name `{name}`: use letters, digits, `-` and `_` only (^[a-zA-Z0-9_-]+$)")
}

/// Adds `[mcp_servers.<name>]`. A name already there is refused unless `force`, and then
/// the whole entry is replaced.
pub fn add_mcp_server(home: &Path, name: &str, server: &NewMcpServer, force: bool) -> Result<()> {
    check_server_name(name)?;
    let mut table = toml_edit::Table::new();
    match server {
        NewMcpServer::Stdio { command, env } => {
            let Some((program, args)) = command.split_first() else {
                bail!("give the server's command after `--`, or `--url URL`");
            };
            table.insert("command", toml_edit::value(program.as_str()));
            if !args.is_empty() {
                table.insert(
                    "args",
                    toml_edit::value(args.iter().collect::<toml_edit::Array>()),
                );
            }
            if !env.is_empty() {
                let mut t = toml_edit::InlineTable::new();
                for (k, v) in env {
                    t.insert(k, v.as_str().into());
                }
                table.insert("env", toml_edit::value(t));
            }
        }
        NewMcpServer::Http {
            url,
            bearer_token_env_var,
        } => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bail!("`{url}` is not an http(s) URL");
            }
            table.insert("url", toml_edit::value(url.as_str()));
            if let Some(var) = bearer_token_env_var {
                table.insert("bearer_token_env_var", toml_edit::value(var.as_str()));
            }
        }
    }
    super::edit::edit_config(&home.join("config.toml"), |doc| {
        let exists = || {
            anyhow::anyhow!(
                "an MCP server named `{name}` already exists; nothing was changed (use --force to replace it)"
            )
        };
        let servers = doc
            .entry("mcp_servers")
            .or_insert_with(super::edit::implicit_table);
        // `mcp_servers = { … }` written inline takes the new entry inline too.
        if let Some(inline) = servers.as_inline_table_mut() {
            if inline.contains_key(name) && !force {
                return Err(exists());
            }
            inline.insert(name, table.into_inline_table().into());
            return Ok(());
        }
        let servers = servers
            .as_table_mut()
            .context("mcp_servers is not a table")?;
        if servers.contains_key(name) && !force {
            return Err(exists());
        }
        servers.insert(name, toml_edit::Item::Table(table));
        Ok(())
    })
}

/// Removes `[mcp_servers.<name>]`; false when there was none.
pub fn remove_mcp_server(home: &Path, name: &str) -> Result<bool> {
    check_server_name(name)?;
    let path = home.join("config.toml");
    let mut found = false;
    if !path.exists() {
        return Ok(false);
    }
    super::edit::edit_config(&path, |doc| {
        if let Some(servers) = doc
            .get_mut("mcp_servers")
            .and_then(|s| s.as_table_like_mut())
        {
            found = servers.remove(name).is_some();
        }
        Ok(())
    })?;
    Ok(found)
}

/// The parts of the user's config.toml the `mcp` commands read.
#[derive(serde::Deserialize, Default)]
struct File {
    #[serde(default)]
    mcp_servers: BTreeMap<String, McpServerToml>,
    mcp_oauth_credentials_store: Option<String>,
    mcp_oauth_callback_port: Option<u16>,
}

fn read_file(home: &Path) -> Result<File> {
    let path = home.join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("invalid config {}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Every `[mcp_servers]` entry of the user's config.toml, in name order, as Codex's
/// `mcp list --json` shows it. `signed_in(name, url)` tells whether OAuth tokens are saved for
/// an HTTP server (its `auth_status` is then `o_auth`).
pub fn mcp_servers_json(home: &Path, signed_in: &dyn Fn(&str, &str) -> bool) -> Result<Vec<Value>> {
    Ok(read_file(home)?
        .mcp_servers
        .iter()
        .map(|(name, s)| server_json(name, s, signed_in))
        .collect())
}

/// Where `interpreter mcp login` keeps tokens, by the user's config.toml.
pub fn mcp_oauth_settings(home: &Path) -> Result<OAuthSettings> {
    let file = read_file(home)?;
    Ok(OAuthSettings {
        store: file
            .mcp_oauth_credentials_store
            .as_deref()
            .map(str::parse)
            .transpose()?
            .unwrap_or_default(),
        home: home.to_path_buf(),
        callback_port: file.mcp_oauth_callback_port,
    })
}

fn server_json(name: &str, s: &McpServerToml, signed_in: &dyn Fn(&str, &str) -> bool) -> Value {
    let (transport, auth_status) = match &s.url {
        Some(url) => (
            json!({
                "type": "streamable_http",
                "url": url,
                "bearer_token_env_var": s.bearer_token_env_var,
                "http_headers": (!s.http_headers.is_empty()).then_some(&s.http_headers),
            }),
            if s.bearer_token_env_var.is_some() {
                "bearer_token"
            } else if signed_in(name, url) {
                "o_auth"
            } else {
                "not_logged_in"
            },
        ),
        None => (
            json!({
                "type": "stdio",
                "command": s.command.clone().unwrap_or_default(),
                "args": s.args,
                "env": (!s.env.is_empty()).then_some(&s.env),
                "cwd": s.cwd,
            }),
            "unsupported",
        ),
    };
    json!({
        "name": name,
        "enabled": s.enabled.unwrap_or(true),
        "transport": transport,
        // As Codex: null when unset (the defaults are 10 and 60 s).
        "startup_timeout_sec": s.startup_timeout_sec,
        "tool_timeout_sec": s.tool_timeout_sec,
        "enabled_tools": s.enabled_tools,
        "disabled_tools": (!s.disabled_tools.is_empty()).then_some(&s.disabled_tools),
        "auth_status": auth_status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inline_mcp_servers_table_takes_the_new_entry_inline() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "# top\nmcp_servers = { a = { command = \"x\" } }\n").unwrap();
        let web = NewMcpServer::Http {
            url: "https://h/mcp".into(),
            bearer_token_env_var: None,
        };
        add_mcp_server(dir.path(), "b", &web, false).unwrap();
        let err = add_mcp_server(dir.path(), "a", &web, false).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        let all = mcp_servers_json(dir.path(), &|_, _| false).unwrap();
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(all[1]["transport"]["url"], "https://h/mcp");
        assert!(std::fs::read_to_string(&p).unwrap().starts_with("# top\n"));
        assert!(remove_mcp_server(dir.path(), "a").unwrap());
    }

    #[test]
    fn add_list_remove_keep_the_file_and_refuse_what_codex_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "# mine\nmodel = \"m\"\n").unwrap();
        let stdio = NewMcpServer::Stdio {
            command: vec!["npx".into(), "-y".into(), "docs".into()],
            env: vec![("A".into(), "1".into())],
        };
        add_mcp_server(dir.path(), "docs", &stdio, false).unwrap();
        let web = NewMcpServer::Http {
            url: "https://h/mcp".into(),
            bearer_token_env_var: Some("TOK".into()),
        };
        add_mcp_server(dir.path(), "web", &web, false).unwrap();
        let err = add_mcp_server(dir.path(), "docs", &web, false).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        let bad = add_mcp_server(dir.path(), "a.b", &stdio, false).unwrap_err();
        assert!(bad.to_string().contains("^[a-zA-Z0-9_-]+$"), "{bad}");
        let ftp = NewMcpServer::Http {
            url: "ftp://h".into(),
            bearer_token_env_var: None,
        };
        assert!(add_mcp_server(dir.path(), "f", &ftp, false).is_err());
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("# mine\nmodel = \"m\"\n"), "{text}");
        let all = mcp_servers_json(dir.path(), &|_, _| false).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0]["transport"]["type"], "stdio");
        assert_eq!(all[0]["transport"]["args"], json!(["-y", "docs"]));
        assert_eq!(all[0]["auth_status"], "unsupported");
        assert_eq!(all[0]["startup_timeout_sec"], Value::Null);
        assert_eq!(all[1]["transport"]["type"], "streamable_http");
        assert_eq!(all[1]["auth_status"], "bearer_token");
        add_mcp_server(dir.path(), "docs", &web, true).unwrap();
        assert_eq!(
            mcp_servers_json(dir.path(), &|_, _| false).unwrap()[0]["transport"]["type"],
            "streamable_http"
        );
        assert!(remove_mcp_server(dir.path(), "docs").unwrap());
        assert!(!remove_mcp_server(dir.path(), "docs").unwrap());
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.contains("# mine") && text.contains("[mcp_servers.web]"),
            "{text}"
        );
    }
}
