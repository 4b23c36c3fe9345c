//! Where hooks come from, and reading them. Every source's hooks run (a later source adds to
//! an earlier one, never replaces it):
//!
//! 1. the user's `$OPENINTERPRETER_HOME/hooks.json` and the `[hooks]` of its config.toml;
//! 2. Claude Code's `~/.claude/settings.json` (its `hooks`);
//! 3. once the project is trusted, its `.codex/` and `.openinterpreter/` (`hooks.json`,
//!    `[hooks]` in config.toml) and `.claude/settings.json` and `settings.local.json`.
//!
//! A file that cannot be read at all (bad JSON or TOML, or a Codex `hooks.json` root with
//! fields other than `description` and `hooks`) is left out whole, with a warning naming it and
//! the line. Inside a readable file one bad entry leaves out only itself: an event name that
//! does not exist, an event that is not a list, a group with a bad matcher, a handler without a
//! command or of a type other than `command`.
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use interpreter_protocol::HookSource;
use serde::Deserialize;

use super::{Dialect, Handler, HookEvent, Hooks};
use crate::config::ProjectTrust;

/// Codex's default: ten minutes.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// A hooks file larger than this is not read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Where to look.
pub struct Sources<'a> {
    /// `$OPENINTERPRETER_HOME`.
    pub home: &'a Path,
    /// The text of its config.toml.
    pub user_config: Option<&'a str>,
    /// Claude Code's folder (`~/.claude`).
    pub claude_home: Option<PathBuf>,
    /// The session's project, whose hooks load once it is trusted.
    pub project: Option<&'a ProjectTrust>,
}

#[derive(Deserialize)]
struct Group {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Option<Vec<serde_json::Value>>,
}

/// Where a group is, for its handlers' keys and messages.
struct Place<'a> {
    path: &'a Path,
    event: HookEvent,
    group: usize,
    source: HookSource,
    dialect: Dialect,
}

#[derive(Deserialize)]
struct RawHandler {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    command: Option<String>,
    /// Codex's override on Windows.
    #[serde(default, rename = "commandWindows", alias = "command_windows")]
    command_windows: Option<String>,
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default, rename = "statusMessage", alias = "status_message")]
    status_message: Option<String>,
    /// Claude Code's `async`: runs in the background; it cannot block.
    #[serde(default, rename = "async")]
    run_async: bool,
}

/// Each event's groups, read one by one: a bad entry is left out alone.
type Events = BTreeMap<String, serde_json::Value>;

/// Codex's `hooks.json`: its root takes only these two.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HooksJson {
    #[serde(default, rename = "description")]
    _description: Option<String>,
    #[serde(default)]
    hooks: Events,
}

/// Claude Code's `settings.json`: only its hooks are read here (whatever else it holds).
#[derive(Deserialize)]
struct ClaudeSettings {
    #[serde(default)]
    hooks: Option<serde_json::Value>,
    #[serde(default, rename = "disableAllHooks")]
    disable_all: serde_json::Value,
}

/// A config.toml: `[[hooks.<Event>]]` groups; `[hooks.state]` is trust, not an event.
#[derive(Deserialize)]
struct ConfigHooks {
    #[serde(default)]
    hooks: Option<TomlHooks>,
}

#[derive(Deserialize)]
struct TomlHooks {
    #[serde(default, rename = "state")]
    _state: Option<toml::Value>,
    #[serde(flatten)]
    events: BTreeMap<String, toml::Value>,
}

/// The user's own approvals and switches, from `[hooks.state]` of their config.toml.
#[derive(Default)]
struct State {
    trusted: HashMap<String, String>,
    disabled: Vec<String>,
}

/// The hooks of a session with `config`: the user's, Claude Code's and (trusted) the
/// project's; with the warnings to say (broken files, hooks waiting for review).
pub fn load_for(config: &crate::config::Config) -> (Hooks, Vec<String>) {
    let user = std::fs::read_to_string(config.home.join("config.toml")).ok();
    if !enabled(user.as_deref()) {
        return (Hooks::default(), Vec::new());
    }
    let (mut hooks, mut warnings) = load(&Sources {
        home: &config.home,
        user_config: user.as_deref(),
        claude_home: dirs::home_dir().map(|h| h.join(".claude")),
        project: config.project.as_ref(),
    });
    if config.bypass_hook_trust {
        warnings.push(
            "--dangerously-bypass-hook-trust is on: the project's enabled hooks run without review for this run".into(),
        );
        let pending = std::mem::take(&mut hooks.pending);
        hooks.handlers.extend(pending);
    }
    warnings.extend(hooks.review_note());
    (hooks, warnings)
}

/// The project's hooks that would wait for review once it is trusted (new or changed since
/// the user approved them): what a face asks about, with the project or after it.
pub fn to_review(config: &crate::config::Config) -> Vec<Arc<Handler>> {
    let Some(project) = &config.project else {
        return Vec::new();
    };
    let as_trusted = ProjectTrust {
        level: Some(crate::config::TrustLevel::Trusted),
        ..project.clone()
    };
    let user = std::fs::read_to_string(config.home.join("config.toml")).ok();
    load(&Sources {
        home: &config.home,
        user_config: user.as_deref(),
        claude_home: None,
        project: Some(&as_trusted),
    })
    .0
    .pending
}

/// Every hook of these sources, and what went wrong reading them.
pub fn load(sources: &Sources) -> (Hooks, Vec<String>) {
    let mut files: Vec<(PathBuf, Form, HookSource)> = vec![
        (
            sources.home.join("hooks.json"),
            Form::HooksJson,
            HookSource::User,
        ),
        (
            sources.home.join("config.toml"),
            Form::ConfigToml,
            HookSource::User,
        ),
    ];
    if let Some(claude) = &sources.claude_home {
        files.push((claude.join("settings.json"), Form::Claude, HookSource::User));
    }
    if let Some(project) = sources.project.filter(|p| p.trusted()) {
        for (rel, form) in PROJECT_FILES {
            files.push((project.root.join(rel), form, HookSource::Project));
        }
    }
    let mut found: Vec<Handler> = Vec::new();
    let mut warnings = Vec::new();
    for (i, (path, form, source)) in files.into_iter().enumerate() {
        // The user's config.toml was read already (and may come from a test).
        let text = match i {
            1 => sources.user_config.map(str::to_string),
            _ => read_file(&path, &mut warnings),
        };
        let Some(text) = text else { continue };
        match read(&path, form, source, &text) {
            Ok((handlers, notes)) => {
                found.extend(handlers);
                warnings.extend(notes);
            }
            Err(e) => warnings.push(format!("{e}; the hooks of that file are left out")),
        }
    }
    let state = state(sources.user_config);
    let mut hooks = Hooks {
        project_dir: sources.project.map(|p| p.root.clone()),
        ..Hooks::default()
    };
    for h in found {
        if state.disabled.contains(&h.key) {
            continue;
        }
        let approved = state.trusted.get(&h.key) == Some(&h.hash);
        match h.source {
            HookSource::Project if !approved => hooks.pending.push(Arc::new(h)),
            _ => hooks.handlers.push(Arc::new(h)),
        }
    }
    (hooks, warnings)
}

/// A trusted project's hooks files, under its top.
const PROJECT_FILES: [(&str, Form); 6] = [
    (".codex/hooks.json", Form::HooksJson),
    (".codex/config.toml", Form::ConfigToml),
    (".openinterpreter/hooks.json", Form::HooksJson),
    (".openinterpreter/config.toml", Form::ConfigToml),
    (".claude/settings.json", Form::Claude),
    (".claude/settings.local.json", Form::Claude),
];

#[derive(Clone, Copy)]
enum Form {
    HooksJson,
    ConfigToml,
    Claude,
}

/// A file's text: None when it is not there; too large or unreadable is a warning.
fn read_file(path: &Path, warnings: &mut Vec<String>) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.len() > MAX_FILE_BYTES {
        warnings.push(format!(
            "{} is larger than {MAX_FILE_BYTES} bytes; its hooks are left out",
            path.display()
        ));
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The handlers of one file, and notes on what of it was skipped.
fn read(
    path: &Path,
    form: Form,
    source: HookSource,
    text: &str,
) -> Result<(Vec<Handler>, Vec<String>), String> {
    let shown = path.display();
    let (events, dialect) = match form {
        Form::HooksJson => (
            serde_json::from_str::<HooksJson>(text)
                .map_err(|e| format!("{shown}: {e}"))?
                .hooks,
            Dialect::Codex,
        ),
        Form::ConfigToml => (
            toml::from_str::<ConfigHooks>(text)
                .map_err(|e| format!("{shown}: {}", e.to_string().trim_end()))?
                .hooks
                .map(|h| {
                    h.events
                        .into_iter()
                        .map(|(k, v)| (k, serde_json::to_value(v).unwrap_or_default()))
                        .collect()
                })
                .unwrap_or_default(),
            Dialect::Codex,
        ),
        Form::Claude => {
            let s: ClaudeSettings =
                serde_json::from_str(text).map_err(|e| format!("{shown}: {e}"))?;
            let hooks = match (s.disable_all, s.hooks) {
                (serde_json::Value::Bool(true), _) | (_, None) => Events::new(),
                (_, Some(serde_json::Value::Object(m))) => m.into_iter().collect(),
                (_, Some(_)) => {
                    return Err(format!(
                        "{shown} (line {}): `hooks` is not an object of events",
                        line_of(text, "\"hooks\"")
                    ));
                }
            };
            (hooks, Dialect::Claude)
        }
    };
    let mut handlers = Vec::new();
    let mut notes = Vec::new();
    for (name, groups) in events {
        let at = line_of(text, &name);
        let Some(event) = HookEvent::parse(&name) else {
            notes.push(format!(
                "{shown} (line {at}): `{name}` is not a hook event; its hooks are skipped (events: {})",
                HookEvent::ALL.map(HookEvent::name).join(", ")
            ));
            continue;
        };
        let serde_json::Value::Array(groups) = groups else {
            notes.push(format!(
                "{shown} (line {at}): {name} is not a list of matcher groups; its hooks are skipped"
            ));
            continue;
        };
        for (g, group) in groups.into_iter().enumerate() {
            let group: Group = match serde_json::from_value(group) {
                Ok(group) => group,
                Err(e) => {
                    notes.push(format!(
                        "{shown} (line {at}): group {} of {name} is skipped: {e}",
                        g + 1
                    ));
                    continue;
                }
            };
            let place = Place {
                path,
                event,
                group: g,
                source,
                dialect,
            };
            read_group(&place, group, text, &mut handlers, &mut notes);
        }
    }
    Ok((handlers, notes))
}

/// One group's handlers; a bad matcher leaves the group out, a bad handler itself.
fn read_group(
    at: &Place,
    group: Group,
    text: &str,
    handlers: &mut Vec<Handler>,
    notes: &mut Vec<String>,
) {
    let (shown, name) = (at.path.display(), at.event.name());
    let matcher = group.matcher.filter(|m| !m.is_empty());
    if let Some(m) = &matcher
        && let Err(e) = super::matcher::validate(m)
    {
        notes.push(format!(
            "{shown} (line {}): the matcher `{m}` of {name} is not a valid regex ({e}); its group is skipped",
            line_of(text, m)
        ));
        return;
    }
    // Real files put a handler where its group goes: said, not guessed at.
    let Some(group_hooks) = group.hooks else {
        notes.push(format!(
            "{shown}: group {} of {name} has no `hooks` list (a handler needs a group: {{\"matcher\": …, \"hooks\": [{{\"type\": \"command\", …}}]}}); it is skipped",
            at.group + 1
        ));
        return;
    };
    for (i, raw) in group_hooks.into_iter().enumerate() {
        let raw: RawHandler = match serde_json::from_value(raw) {
            Ok(raw) => raw,
            Err(e) => {
                notes.push(format!("{shown}: a hook of {name} is skipped: {e}"));
                continue;
            }
        };
        if raw.kind != "command" {
            notes.push(format!(
                "{shown}: a `{}` hook of {name} is skipped: only `command` hooks run here",
                raw.kind
            ));
            continue;
        }
        let command = match raw.command_windows {
            Some(w) if cfg!(windows) => Some(w),
            _ => raw.command,
        };
        let Some(command) = command.filter(|c| !c.trim().is_empty()) else {
            notes.push(format!(
                "{shown}: a command hook of {name} has no `command`; it is skipped"
            ));
            continue;
        };
        let timeout = raw
            .timeout
            .filter(|t| t.is_finite() && *t > 0.0)
            .map_or(DEFAULT_TIMEOUT, |t| {
                Duration::from_secs_f64(t.min(86_400.0))
            });
        let key = format!(
            "{}:{}:{}:{i}",
            at.path.display(),
            at.event.key_label(),
            at.group
        );
        let hash = super::trust::hash(at.event, matcher.as_deref(), &command, timeout);
        handlers.push(Handler {
            event: at.event,
            matcher: matcher.clone(),
            command,
            timeout,
            status_message: raw.status_message,
            run_async: raw.run_async,
            source: at.source,
            path: at.path.to_path_buf(),
            dialect: at.dialect,
            key,
            hash,
        });
    }
}

/// The 1-based line where `needle` first appears, for a message.
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle)
        .map_or(1, |at| text[..at].matches('\n').count() + 1)
}

/// Codex's switch: `[features] hooks = false` (or its old name `codex_hooks`) turns every
/// hook off.
fn enabled(user_config: Option<&str>) -> bool {
    let Some(table) = user_config.and_then(|t| t.parse::<toml::Table>().ok()) else {
        return true;
    };
    let features = table.get("features");
    ["hooks", "codex_hooks"].iter().all(|k| {
        features
            .and_then(|f| f.get(k))
            .and_then(toml::Value::as_bool)
            != Some(false)
    })
}

/// `[hooks.state."<key>"]` of the user's config.toml: `trusted_hash` and `enabled`.
fn state(user_config: Option<&str>) -> State {
    let mut state = State::default();
    let Some(table) = user_config.and_then(|t| t.parse::<toml::Table>().ok()) else {
        return state;
    };
    let Some(entries) = table
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table)
    else {
        return state;
    };
    for (key, entry) in entries {
        if let Some(hash) = entry.get("trusted_hash").and_then(toml::Value::as_str) {
            state.trusted.insert(key.clone(), hash.to_string());
        }
        if entry.get("enabled").and_then(toml::Value::as_bool) == Some(false) {
            state.disabled.push(key.clone());
        }
    }
    state
}
