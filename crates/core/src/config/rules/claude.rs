//! Claude Code's `permissions.allow/ask/deny` lists in its settings.json files:
//! `Bash(cargo test:*)`, `Bash(npm run build)`, `Bash(git * main)`, `Bash`, `Edit(src/**)`,
//! `Write(…)`, `Read(…)`, `WebFetch(domain:example.com)`, `mcp__server` and
//! `mcp__server__tool`.

use std::path::{Path, PathBuf};

use super::{CommandRule, Decision, HostRule, McpRule, PathRule, Rule, Rules};

/// Where a settings file's relative paths start: `/p` and `p` are under `project` (Claude
/// Code reads them from the settings file's project), `~/p` under `home`.
pub(crate) struct Bases<'a> {
    pub project: &'a Path,
    pub home: Option<&'a Path>,
}

/// Adds the rules of one settings.json (`name` for messages) to `rules`; the warnings name
/// entries that are not understood (the others load). A file that is not JSON is an error
/// and nothing of it loads.
pub(crate) fn parse(
    name: &str,
    text: &str,
    bases: &Bases,
    rules: &mut Rules,
) -> Result<Vec<String>, String> {
    let json: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("{name}:{}: not valid JSON: {e}", e.line()))?;
    let mut warnings = Vec::new();
    let Some(perms) = json.get("permissions") else {
        return Ok(warnings);
    };
    let mut loaded = Rules::default();
    for (list, decision) in [
        ("allow", Decision::Allow),
        ("ask", Decision::Prompt),
        ("deny", Decision::Forbidden),
    ] {
        let Some(entries) = perms.get(list) else {
            continue;
        };
        let Some(entries) = entries.as_array() else {
            return Err(format!(
                "{name}: permissions.{list} must be a list of strings"
            ));
        };
        for entry in entries {
            let Some(text) = entry.as_str() else {
                return Err(format!(
                    "{name}: permissions.{list} must be a list of strings"
                ));
            };
            let source = format!("{name}: permissions.{list} \"{text}\"");
            if let Err(why) = add(text.trim(), decision, source, bases, &mut loaded) {
                warnings.push(format!(
                    "{name}: `{text}` in permissions.{list} is ignored: {why}"
                ));
            }
        }
    }
    rules.extend(loaded);
    Ok(warnings)
}

fn add(
    entry: &str,
    decision: Decision,
    source: String,
    bases: &Bases,
    rules: &mut Rules,
) -> Result<(), String> {
    let (tool, spec) = match entry.split_once('(') {
        Some((tool, rest)) => match rest.strip_suffix(')') {
            Some(spec) => (tool.trim(), Some(spec.trim())),
            None => return Err("the `(` is never closed".into()),
        },
        None => (entry, None),
    };
    fn made<M>(matcher: M, decision: Decision, source: &str) -> Rule<M> {
        Rule {
            matcher,
            decision,
            justification: None,
            source: source.to_string(),
        }
    }
    let rule = |m| made(m, decision, &source);
    let path_rule = |m| made(m, decision, &source);
    let host_rule = |m| made(m, decision, &source);
    let mcp_rule = |m| made(m, decision, &source);
    match tool {
        "Bash" => rules.commands.push(rule(match spec {
            None | Some("*" | "") => CommandRule::Any,
            Some(s) => bash(s)?,
        })),
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
            rules.paths.push(path_rule(match spec {
                None | Some("*" | "**" | "") => PathRule::Any,
                Some(s) => path(s, bases)?,
            }));
        }
        // Reads are not gated here (docs/rules.md): nothing to decide with them.
        "Read" | "Glob" | "Grep" | "LS" | "WebSearch" => {}
        "WebFetch" => rules.hosts.push(host_rule(match spec {
            None | Some("") => HostRule::Any,
            Some(s) => match s.strip_prefix("domain:") {
                Some(d) if !d.trim().is_empty() => HostRule::Domain(d.trim().to_ascii_lowercase()),
                _ => return Err("expected `domain:<host>`".into()),
            },
        })),
        t if t.starts_with("mcp__") && spec.is_none() => {
            let rest = &t["mcp__".len()..];
            let (server, tool) = match rest.split_once("__") {
                Some((s, "*")) => (s, None),
                Some((s, tool)) => (s, Some(tool.to_string())),
                None => (rest, None),
            };
            if server.is_empty() {
                return Err("no server name".into());
            }
            rules.mcp.push(mcp_rule(McpRule {
                server: server.to_string(),
                tool,
            }));
        }
        _ => return Err(format!("`{tool}` is not a tool this agent has rules for")),
    }
    Ok(())
}

/// `cargo test:*` is a prefix at a word boundary; a `*` elsewhere matches any text (a
/// trailing ` *` also matches nothing, so `npm *` covers `npm`); anything else is exact.
fn bash(spec: &str) -> Result<CommandRule, String> {
    if let Some(prefix) = spec.strip_suffix(":*") {
        return Ok(CommandRule::TextPrefix(prefix.trim().to_string()));
    }
    if !spec.contains('*') {
        return Ok(CommandRule::Exact(spec.to_string()));
    }
    let (body, optional_tail) = match spec.strip_suffix(" *") {
        Some(b) if !b.contains('*') => (b, true),
        _ => (spec, false),
    };
    let mut re = String::from("^");
    for (i, part) in body.split('*').enumerate() {
        if i > 0 {
            re.push_str(".*");
        }
        re.push_str(&regex::escape(part));
    }
    if optional_tail {
        re.push_str("(?: .*)?");
    }
    re.push('$');
    regex::Regex::new(&re)
        .map(|r| CommandRule::Wildcard(Box::new(r)))
        .map_err(|e| e.to_string())
}

/// A gitignore-style pattern: `//abs` from the filesystem's root, `~/p` from the home folder,
/// `/p`, `./p` and `p` from the project's top.
fn path(spec: &str, bases: &Bases) -> Result<PathRule, String> {
    let (root, line): (PathBuf, String) = if let Some(abs) = spec.strip_prefix("//") {
        (root_of(bases.project), format!("/{abs}"))
    } else if let Some(rest) = spec.strip_prefix("~/") {
        let home = bases.home.ok_or("no home folder is known")?;
        (home.to_path_buf(), format!("/{rest}"))
    } else if let Some(rest) = spec.strip_prefix("./") {
        (bases.project.to_path_buf(), format!("/{rest}"))
    } else {
        (bases.project.to_path_buf(), spec.to_string())
    };
    let mut b = ignore::gitignore::GitignoreBuilder::new(&root);
    b.add_line(None, &line).map_err(|e| e.to_string())?;
    let matcher = b.build().map_err(|e| e.to_string())?;
    Ok(PathRule::Glob(Box::new(matcher)))
}

/// The filesystem root `path` is under (`/`, or its drive on Windows).
fn root_of(path: &Path) -> PathBuf {
    path.ancestors().last().unwrap_or(path).to_path_buf()
}
