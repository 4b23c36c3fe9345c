//! `/mcp`: the session's MCP servers in words, the same text in every face.

use interpreter_protocol::{McpServerInfo, McpServerStatus};

/// Longest tool description shown, in characters.
const DESCRIPTION_CHARS: usize = 100;

/// Each server with its status (and why it failed), its auth and its tools, as Markdown that
/// reads as plain text too.
pub fn servers_text(servers: &[McpServerInfo]) -> String {
    if servers.is_empty() {
        return "No MCP servers are configured. Add one with `interpreter mcp add` (see docs/mcp.md)."
            .to_string();
    }
    let mut s = String::from("MCP servers:\n");
    for server in servers {
        s.push_str(&format!(
            "\n- `{}`: {} (auth: {})",
            server.name,
            status_text(&server.name, &server.status),
            server.auth.as_str()
        ));
        for t in &server.tools {
            s.push_str(&format!("\n  - `{}`", t.name));
            if let Some(d) = t.description.as_deref().and_then(first_line) {
                s.push_str(&format!(": {d}"));
            }
        }
    }
    s
}

/// A server's status in words; a reason over several lines is indented under its server.
pub fn status_text(name: &str, status: &McpServerStatus) -> String {
    let text = match status {
        McpServerStatus::Starting => "starting".to_string(),
        McpServerStatus::Ready => "ready".to_string(),
        McpServerStatus::Disabled => "disabled (enabled = false)".to_string(),
        McpServerStatus::Failed { error } => format!("failed: {error}"),
        McpServerStatus::NeedsLogin { error } => {
            format!("needs login: run `interpreter mcp login {name}` ({error})")
        }
    };
    text.replace('\n', "\n  ")
}

fn first_line(d: &str) -> Option<String> {
    let line = d.trim().lines().next()?.trim();
    if line.is_empty() {
        return None;
    }
    let mut short: String = line.chars().take(DESCRIPTION_CHARS).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    Some(short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_protocol::{McpAuthStatus, McpToolInfo};

    fn server(name: &str, status: McpServerStatus, auth: McpAuthStatus) -> McpServerInfo {
        McpServerInfo {
            name: name.into(),
            status,
            auth,
            tools: vec![],
        }
    }

    #[test]
    fn every_status_auth_and_tool_is_said() {
        let mut echo = server("echo", McpServerStatus::Ready, McpAuthStatus::Unsupported);
        echo.tools = vec![
            McpToolInfo {
                name: "say".into(),
                title: None,
                description: Some("Says it back.\nMore.".into()),
                input_schema: Default::default(),
            },
            McpToolInfo {
                name: "add".into(),
                title: None,
                description: None,
                input_schema: Default::default(),
            },
        ];
        let text = servers_text(&[
            echo,
            server(
                "gone",
                McpServerStatus::Failed {
                    error: "could not run\nboom".into(),
                },
                McpAuthStatus::Unsupported,
            ),
            server(
                "tracker",
                McpServerStatus::NeedsLogin {
                    error: "401".into(),
                },
                McpAuthStatus::NotLoggedIn,
            ),
            server("off", McpServerStatus::Disabled, McpAuthStatus::BearerToken),
        ]);
        assert_eq!(
            text,
            "MCP servers:\n\
             \n- `echo`: ready (auth: unsupported)\
             \n  - `say`: Says it back.\
             \n  - `add`\
             \n- `gone`: failed: could not run\n  boom (auth: unsupported)\
             \n- `tracker`: needs login: run `interpreter mcp login tracker` (401) (auth: not_logged_in)\
             \n- `off`: disabled (enabled = false) (auth: bearer_token)"
        );
        assert!(servers_text(&[]).starts_with("No MCP servers"));
    }
}

#[cfg(test)]
mod view_tests {
    use crate::view::SessionView;
    use interpreter_protocol::{
        Event, McpAuthStatus, McpServerInfo, McpServerStatus, Permissions, SessionConfigured,
        SessionSettings,
    };

    fn server(name: &str, status: McpServerStatus) -> McpServerInfo {
        McpServerInfo {
            name: name.into(),
            status,
            auth: McpAuthStatus::Unsupported,
            tools: vec![],
        }
    }

    #[test]
    fn the_view_keeps_the_list_and_each_update_replaces_its_server() {
        let mut v = SessionView::new(SessionConfigured {
            session_id: "s".into(),
            cwd: "/w".into(),
            roots: vec![],
            settings: SessionSettings {
                provider: "p".into(),
                model: "m".into(),
                harness: "h".into(),
                permissions: Permissions::default(),
                effort: None,
                context_window: None,
            },
            skills: vec![],
            title: None,
        });
        v.observe(&Event::McpServers {
            servers: vec![
                server("a", McpServerStatus::Starting),
                server("b", McpServerStatus::Starting),
            ],
        });
        let failed = McpServerStatus::Failed {
            error: "boom".into(),
        };
        v.observe(&Event::McpServerUpdated(server("b", failed.clone())));
        let states: Vec<_> = v.mcp_servers.iter().map(|s| s.status.clone()).collect();
        assert_eq!(states, [McpServerStatus::Starting, failed]);
        // A reload's list replaces the old one whole.
        v.observe(&Event::McpServers {
            servers: vec![server("c", McpServerStatus::Starting)],
        });
        assert_eq!(v.mcp_servers.len(), 1);
        assert_eq!(v.mcp_servers[0].name, "c");
    }
}
