//! MCP servers as a session reports them: what `/mcp` shows and the app-server's
//! `mcpServerStatus/list` answers.

use serde::{Deserialize, Serialize};

/// One configured MCP server: where it stands, how it authenticates, and its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerInfo {
    /// The user's name for it (the prefix of its tools' names).
    pub name: String,
    /// Where it stands.
    pub status: McpServerStatus,
    /// How it authenticates, with Codex's values.
    pub auth: McpAuthStatus,
    /// The tools it offers the model, after `enabled_tools` and `disabled_tools`; empty
    /// until it is ready.
    #[serde(default)]
    pub tools: Vec<McpToolInfo>,
}

/// Where an MCP server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpServerStatus {
    /// Starting: its handshake and tool list are not done yet.
    Starting,
    /// Connected, its tools listed.
    Ready,
    /// It could not be used: its entry, its start, or its handshake failed.
    Failed {
        /// Why, for a person.
        error: String,
    },
    /// `enabled = false` in its entry: kept, not started.
    Disabled,
    /// The server asks for a login first (`interpreter mcp login NAME`).
    NeedsLogin {
        /// What the server answered, for a person.
        error: String,
    },
}

/// How an MCP server authenticates, as Codex's `auth_status` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpAuthStatus {
    /// Not known (an entry that names no transport).
    Unknown,
    /// A stdio server: no login.
    Unsupported,
    /// An HTTP server without credentials.
    NotLoggedIn,
    /// An HTTP server with a bearer token (`bearer_token_env_var` or an `Authorization`
    /// header).
    BearerToken,
    /// An HTTP server signed in with OAuth.
    #[serde(rename = "o_auth")]
    OAuth,
}

impl McpAuthStatus {
    /// Codex's name for it (`not_logged_in`, `o_auth`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            McpAuthStatus::Unknown => "unknown",
            McpAuthStatus::Unsupported => "unsupported",
            McpAuthStatus::NotLoggedIn => "not_logged_in",
            McpAuthStatus::BearerToken => "bearer_token",
            McpAuthStatus::OAuth => "o_auth",
        }
    }
}

/// One tool of an MCP server, by the server's own name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolInfo {
    /// The server's name for it.
    pub name: String,
    /// Its display title, when the server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its input schema, as the server gave it.
    #[serde(default)]
    pub input_schema: serde_json::Value,
}
