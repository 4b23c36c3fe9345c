//! Matchers, and how a tool call looks to a hook of each peer. A matcher of only names and
//! `|` takes exact names (`Edit|Write`, as Claude Code reads it); anything else is a regex
//! (`mcp__.*`); none, empty or `*` takes everything. A call is offered to matchers under its
//! own name and under the names its peer gives that kind of tool, so `Bash` matches every
//! harness's shell tool and `Edit|Write` (or Codex's `apply_patch`) every edit.

use std::path::PathBuf;

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};

use super::Dialect;

/// Whether `m` can be used as a matcher.
pub(super) fn validate(m: &str) -> Result<(), String> {
    if is_all(m) || is_names(m) {
        return Ok(());
    }
    regex::Regex::new(m).map(|_| ()).map_err(|e| e.to_string())
}

/// Whether the matcher takes one of `inputs`.
pub(super) fn matches(matcher: Option<&str>, inputs: &[String]) -> bool {
    let Some(m) = matcher.filter(|m| !is_all(m)) else {
        return true;
    };
    if is_names(m) {
        return m.split('|').any(|name| inputs.iter().any(|i| i == name));
    }
    regex::Regex::new(m).is_ok_and(|re| inputs.iter().any(|i| re.is_match(i)))
}

fn is_all(m: &str) -> bool {
    m.is_empty() || m == "*"
}

fn is_names(m: &str) -> bool {
    m.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
}

/// A tool call, as hooks see it.
#[derive(Debug, Clone)]
pub(crate) struct CallView {
    /// The harness's tool name.
    pub(crate) name: String,
    /// What it does.
    pub(crate) kind: ToolKind,
    /// Its command line, for commands.
    pub(crate) command: Option<String>,
    /// Its arguments, as the model sent them.
    pub(crate) args: Value,
    /// The files it touches.
    pub(crate) paths: Vec<PathBuf>,
    /// It starts a subagent.
    pub(crate) subagent: bool,
}

impl CallView {
    /// The peer's name for this kind of tool, if it has one.
    fn peer_name(&self, dialect: Dialect) -> Option<&'static str> {
        if self.name.starts_with("mcp__") {
            return None;
        }
        if self.subagent {
            return Some(match dialect {
                Dialect::Claude => "Task",
                Dialect::Codex => "spawn_agent",
            });
        }
        if self.command.is_some() || self.kind == ToolKind::Execute {
            return Some("Bash");
        }
        match (dialect, self.kind) {
            (Dialect::Codex, ToolKind::Edit | ToolKind::Delete | ToolKind::Move) => {
                Some("apply_patch")
            }
            (Dialect::Claude, ToolKind::Edit | ToolKind::Delete | ToolKind::Move) => {
                Some(match self.writes_whole_file() {
                    true => "Write",
                    false => "Edit",
                })
            }
            (Dialect::Claude, ToolKind::Read) => Some("Read"),
            (Dialect::Claude, ToolKind::Search) => Some("Grep"),
            (Dialect::Claude, ToolKind::Fetch) => Some("WebFetch"),
            _ => None,
        }
    }

    fn writes_whole_file(&self) -> bool {
        let has = |k: &str| self.args.get(k).is_some();
        (has("content") || has("file_text")) && !has("old_string") && !has("old_str")
    }
}

/// The names a matcher may take for `call` in `dialect`: the peer's name first (what
/// `tool_name` says), then the harness's own, then the kind's other peer names.
pub(crate) fn call_names(call: &CallView, dialect: Dialect) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(n) = call.peer_name(dialect) {
        names.push(n.to_string());
    }
    names.push(call.name.clone());
    let kind_aliases: &[&str] = match call.kind {
        ToolKind::Edit | ToolKind::Delete | ToolKind::Move if call.command.is_none() => {
            &["Edit", "Write", "MultiEdit", "apply_patch"]
        }
        ToolKind::Execute => &["Bash", "shell", "exec_command", "local_shell"],
        ToolKind::Search => &["Grep", "Glob"],
        ToolKind::Fetch => &["WebFetch", "WebSearch"],
        _ => &[],
    };
    for a in kind_aliases {
        if !names.iter().any(|n| n == a) {
            names.push((*a).to_string());
        }
    }
    names
}

/// `tool_name` and `tool_input` for a hook of `dialect`, once per file for an edit in
/// Claude's shape (its hooks read one `file_path`).
pub(crate) fn tool_inputs(call: &CallView, dialect: Dialect) -> Vec<(String, Value)> {
    let name = call_names(call, dialect).remove(0);
    let mut input = match &call.args {
        Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    };
    if let Some(command) = &call.command {
        input.insert("command".into(), json!(command));
    }
    let edits = matches!(
        call.kind,
        ToolKind::Edit | ToolKind::Delete | ToolKind::Move
    ) && call.command.is_none();
    if dialect == Dialect::Claude
        && (edits || call.kind == ToolKind::Read)
        && (call.paths.len() > 1 || !input.contains_key("file_path"))
        && !call.paths.is_empty()
    {
        return call
            .paths
            .iter()
            .map(|p| {
                let mut one = input.clone();
                one.insert("file_path".into(), json!(p));
                (name.clone(), Value::Object(one))
            })
            .collect();
    }
    vec![(name, Value::Object(input))]
}
