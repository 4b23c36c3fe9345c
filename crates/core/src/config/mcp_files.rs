//! The MCP files users already keep in a project, read once it is trusted (docs/mcp.md):
//! Claude Code's `.mcp.json` and Cursor's `.cursor/mcp.json` (`mcpServers`), and VS Code's
//! `.vscode/mcp.json` (`servers`). A bad file or entry leaves only itself out, with a warning.

use serde_json::Value;
use std::path::Path;

use super::mcp::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpServerConfig, McpServerSkipped, McpTransport,
};
use interpreter_protocol::McpAuthStatus;

/// The files, in order of precedence after config.toml: a name already taken is skipped.
pub(crate) const PROJECT_MCP_FILES: [(&str, &str); 3] = [
    (".mcp.json", "mcpServers"),
    (".cursor/mcp.json", "mcpServers"),
    (".vscode/mcp.json", "servers"),
];

/// The servers of a trusted project's MCP files at `root`, skipping names in `taken` (and
/// each name after its first), the entries left out (for `/mcp`), and a warning for each file
/// or entry left out.
pub(crate) fn load(
    root: &Path,
    taken: &[String],
    env: &impl Fn(&str) -> Option<String>,
) -> (Vec<McpServerConfig>, Vec<McpServerSkipped>, Vec<String>) {
    let mut out: Vec<McpServerConfig> = Vec::new();
    let mut skipped: Vec<McpServerSkipped> = Vec::new();
    let mut warnings = Vec::new();
    for (rel, key) in PROJECT_MCP_FILES {
        let path = root.join(rel);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let shown = path.display();
        let doc: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!(
                    "{shown}: invalid JSON at line {}, column {}: {e}; that file is left out",
                    e.line(),
                    e.column()
                ));
                continue;
            }
        };
        let Some(servers) = doc.get(key).and_then(Value::as_object) else {
            continue;
        };
        for (name, entry) in servers {
            if taken.contains(name) || out.iter().any(|s| &s.name == name) {
                continue;
            }
            match server(name, entry, root, env) {
                Ok(s) => out.push(s),
                Err(e) => {
                    warnings.push(format!("MCP server `{name}` of {shown} was left out: {e}"));
                    skipped.push(McpServerSkipped {
                        name: name.clone(),
                        why: Some(format!("{shown}: {e}")),
                        auth: entry_auth(entry),
                    });
                }
            }
        }
    }
    // A name a later file provides is not shown as left out; nor is one twice.
    skipped.retain(|k| !out.iter().any(|s| s.name == k.name));
    let mut seen = Vec::new();
    skipped.retain(|k| {
        let first = !seen.contains(&k.name);
        seen.push(k.name.clone());
        first
    });
    (out, skipped, warnings)
}

/// Codex's `auth_status` of a file's entry.
fn entry_auth(entry: &Value) -> McpAuthStatus {
    let bearer = entry
        .get("headers")
        .and_then(Value::as_object)
        .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("authorization")));
    match (entry.get("command"), entry.get("url")) {
        (Some(_), None) => McpAuthStatus::Unsupported,
        (None, Some(_)) if bearer => McpAuthStatus::BearerToken,
        (None, Some(_)) => McpAuthStatus::NotLoggedIn,
        _ => McpAuthStatus::Unknown,
    }
}

fn server(
    name: &str,
    entry: &Value,
    root: &Path,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<McpServerConfig, String> {
    let x = |s: &str| expand(s, root, env, false);
    // A header's variables are tokens (`Bearer ${API_KEY}`): kept out of logs and output.
    let strings = |k: &str| -> Result<Vec<(String, String)>, String> {
        match entry.get(k) {
            None => Ok(Vec::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(name, v)| match v.as_str() {
                    Some(v) => Ok((name.clone(), expand(v, root, env, k == "headers")?)),
                    None => Err(format!("`{k}.{name}` must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{k}` must be an object of strings")),
        }
    };
    let kind = entry.get("type").and_then(Value::as_str);
    if kind == Some("sse") {
        return Err("the SSE transport is not supported; use its streamable HTTP URL".into());
    }
    let transport = match (entry.get("command"), entry.get("url")) {
        (Some(Value::String(command)), None) => {
            let args = match entry.get("args") {
                None => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .ok_or("`args` must be strings".to_string())
                            .and_then(x)
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("`args` must be an array of strings".into()),
            };
            McpTransport::Stdio {
                command: x(command)?.into(),
                args,
                env: strings("env")?,
                cwd: None,
            }
        }
        (None, Some(Value::String(url))) => {
            let url = x(url)?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("`{url}` is not an http(s) URL"));
            }
            McpTransport::Http {
                url,
                headers: strings("headers")?,
                oauth: None,
            }
        }
        _ => return Err("give a string `command` (stdio) or `url` (HTTP), not both".into()),
    };
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        startup_timeout: Some(DEFAULT_STARTUP_TIMEOUT),
        tool_timeout: Some(DEFAULT_TOOL_TIMEOUT),
        enabled_tools: None,
        disabled_tools: Vec::new(),
    })
}

/// Expands Claude Code's `${VAR}` and `${VAR:-default}`, VS Code's and Cursor's `${env:VAR}`
/// and `${workspaceFolder}`. An unset variable without a default, or VS Code's
/// `${input:…}` (a prompt we cannot show), is an error naming it. `secret`: the values of
/// the variables are registered as secrets.
fn expand(
    s: &str,
    root: &Path,
    env: &impl Fn(&str) -> Option<String>,
    secret: bool,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed `${{` in `{s}`"));
        };
        let inner = &after[..end];
        rest = &after[end + 1..];
        if inner.starts_with("input:") {
            return Err(format!(
                "`${{{inner}}}` asks for an input, which is not supported"
            ));
        }
        if inner == "workspaceFolder" {
            out.push_str(&root.to_string_lossy());
            continue;
        }
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        match (env(var), default) {
            (Some(v), _) => {
                if secret {
                    crate::secrets::register(&v);
                }
                out.push_str(&v);
            }
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(format!("the variable {var} is not set")),
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(v: &str) -> Option<String> {
        (v == "SET").then(|| "yes".to_string())
    }

    #[test]
    fn expansion_follows_claude_code_and_vs_code() {
        let root = Path::new("/p");
        assert_eq!(expand("a${SET}b", root, &env, false).unwrap(), "ayesb");
        assert_eq!(
            expand("${UNSET:-d}/${SET:-x}", root, &env, false).unwrap(),
            "d/yes"
        );
        assert_eq!(expand("${env:SET}", root, &env, false).unwrap(), "yes");
        assert!(
            expand("${UNSET}", root, &env, false)
                .unwrap_err()
                .contains("UNSET")
        );
        assert!(
            expand("${input:tok}", root, &env, false)
                .unwrap_err()
                .contains("input:tok")
        );
    }

    #[test]
    fn files_take_names_in_order_and_bad_parts_only_warn() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"a": {"command": "${UNSET:-srv}", "args": ["${SET}"]},
                "cfg": {"command": "x"}, "ftp": {"url": "ftp://h"}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(root.join(".cursor")).unwrap();
        std::fs::write(root.join(".cursor/mcp.json"), "{\n  \"mcpServers\": {,}\n}").unwrap();
        std::fs::create_dir_all(root.join(".vscode")).unwrap();
        std::fs::write(
            root.join(".vscode/mcp.json"),
            r#"{"servers": {"a": {"command": "other"}, "v": {"type": "http", "url": "https://h/mcp",
                "headers": {"Authorization": "Bearer ${input:tok}"}}, "w": {"type": "http", "url": "https://w"}}}"#,
        )
        .unwrap();
        let (got, skipped, warnings) = load(root, &["cfg".to_string()], &env);
        let names: Vec<&str> = got.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "w"]);
        assert_eq!(
            got[0].transport,
            McpTransport::Stdio {
                command: "srv".into(),
                args: vec!["yes".into()],
                env: vec![],
                cwd: None
            }
        );
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        let left_out: Vec<(&str, McpAuthStatus)> =
            skipped.iter().map(|k| (k.name.as_str(), k.auth)).collect();
        assert_eq!(
            left_out,
            [
                ("ftp", McpAuthStatus::NotLoggedIn),
                ("v", McpAuthStatus::BearerToken)
            ]
        );
        assert!(skipped[1].why.as_deref().unwrap().contains("input:tok"));
        assert!(warnings[0].contains("`ftp`") && warnings[0].contains("http(s)"));
        assert!(warnings[1].contains(".cursor") && warnings[1].contains("line 2"));
        assert!(warnings[2].contains("`v`") && warnings[2].contains("input:tok"));
    }
}
