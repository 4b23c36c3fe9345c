//! Saved permission rules (docs/rules.md): Codex's `.rules` files in `<home>/rules/` and a
//! trusted project's `.codex/rules/` and `.openinterpreter/rules/`, and Claude Code's
//! `permissions` lists in `~/.claude/settings.json` and a trusted project's
//! `.claude/settings.json` and `.claude/settings.local.json`. The strictest matching rule
//! wins: forbidden, then prompt, then allow. The sandbox's policy applies them; "always, and
//! save" appends to `<home>/rules/default.rules`.

mod claude;
mod codex;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::ProjectTrust;

/// What a rule says about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Decision {
    /// Run it without asking.
    Allow,
    /// Ask, even where the mode would run it.
    Prompt,
    /// Refuse it in every mode.
    Forbidden,
}

impl Decision {
    fn parse(s: &str) -> Option<Decision> {
        match s {
            "allow" => Some(Decision::Allow),
            "prompt" => Some(Decision::Prompt),
            "forbidden" => Some(Decision::Forbidden),
            _ => None,
        }
    }
}

/// One rule: what it matches, what it decides, and where it was written.
#[derive(Debug, Clone)]
pub(crate) struct Rule<M> {
    matcher: M,
    decision: Decision,
    justification: Option<String>,
    /// `file:line`, or the file and entry.
    source: String,
}

/// What a shell command rule matches, on one simple command's words.
#[derive(Debug, Clone)]
pub(crate) enum CommandRule {
    /// Codex: the leading words, each one of its alternatives.
    Prefix(Vec<Vec<String>>),
    /// Claude Code's bare `Bash`.
    Any,
    /// `Bash(npm run build)`: the whole command.
    Exact(String),
    /// `Bash(cargo test:*)`: the text, then a word boundary.
    TextPrefix(String),
    /// `Bash(git * main)`.
    Wildcard(Box<regex::Regex>),
}

/// Stands for a word only known when the command runs: no literal text equals it.
const UNKNOWN_WORD: &str = "\u{0}";

impl CommandRule {
    /// `words` are the command's words; None for one only known when it runs.
    fn matches(&self, words: &[Option<String>]) -> bool {
        let text = || {
            words
                .iter()
                .map(|w| w.as_deref().unwrap_or(UNKNOWN_WORD))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        match self {
            CommandRule::Prefix(pattern) => {
                pattern.len() <= words.len()
                    && pattern
                        .iter()
                        .zip(words)
                        .all(|(alts, w)| w.as_ref().is_some_and(|w| alts.contains(w)))
            }
            CommandRule::Any => true,
            CommandRule::Exact(s) => text() == norm(s),
            CommandRule::TextPrefix(p) => {
                let (t, p) = (text(), norm(p));
                t == p || t.starts_with(&format!("{p} "))
            }
            CommandRule::Wildcard(re) => re.is_match(&text()),
        }
    }
}

/// What a file rule matches.
#[derive(Debug, Clone)]
pub(crate) enum PathRule {
    /// A bare `Edit` or `Write`.
    Any,
    /// A gitignore-style pattern under its root.
    Glob(Box<ignore::gitignore::Gitignore>),
}

impl PathRule {
    fn matches(&self, path: &Path) -> bool {
        match self {
            PathRule::Any => true,
            // The matcher requires a path under its root.
            PathRule::Glob(g) => {
                path.is_absolute()
                    && path.starts_with(g.path())
                    && g.matched_path_or_any_parents(path, false).is_ignore()
            }
        }
    }
}

/// What a web rule matches.
#[derive(Debug, Clone)]
pub(crate) enum HostRule {
    Any,
    /// `domain:example.com` (`*.example.com`: its subdomains).
    Domain(String),
}

impl HostRule {
    fn matches(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        match self {
            HostRule::Any => true,
            HostRule::Domain(d) => match d.strip_prefix("*.") {
                Some(parent) => host.ends_with(&format!(".{parent}")),
                None => host == *d,
            },
        }
    }
}

/// `mcp__server` (all its tools) or `mcp__server__tool`.
#[derive(Debug, Clone)]
pub(crate) struct McpRule {
    server: String,
    tool: Option<String>,
}

/// The rule that decided, and why, for the user and the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// What it decided.
    pub decision: Decision,
    /// The rule's justification and where it is written.
    pub reason: String,
}

fn hit<M>(rule: &Rule<M>) -> Hit {
    let what = match rule.decision {
        Decision::Allow => "allowed",
        Decision::Prompt => "asked for",
        Decision::Forbidden => "forbidden",
    };
    let reason = match &rule.justification {
        Some(j) => format!("{j} (a saved rule, {})", rule.source),
        None => format!("{what} by a saved rule ({})", rule.source),
    };
    Hit {
        decision: rule.decision,
        reason,
    }
}

/// The strictest rule of those matching one thing.
fn strictest<'a, M: 'a>(matching: impl Iterator<Item = &'a Rule<M>>) -> Option<Hit> {
    matching
        .fold(None::<&Rule<M>>, |best, r| match best {
            Some(b) if b.decision >= r.decision => Some(b),
            _ => Some(r),
        })
        .map(hit)
}

/// Several things at once (the simple commands of a line, the files of a patch): any
/// forbidden or prompt wins; allowed only when every one is allowed by a rule or, with no rule
/// of its own, `harmless` (a known read-only command, as Codex's fallback judges the parts no
/// rule matches).
fn all_of(hits: Vec<(Option<Hit>, bool)>) -> Option<Hit> {
    if let Some(h) = hits
        .iter()
        .filter_map(|(h, _)| h.as_ref())
        .max_by_key(|h| h.decision)
        && h.decision > Decision::Allow
    {
        return Some(h.clone());
    }
    if hits.iter().any(|(h, harmless)| h.is_none() && !harmless) {
        return None;
    }
    hits.into_iter().find_map(|(h, _)| h)
}

/// One simple command of a line, as saved rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPart {
    /// Its words; None for one only known when it runs (`$VAR`, `$(…)`).
    pub words: Vec<Option<String>>,
    /// It writes a file by redirection (`>`, `>>`; not `/dev/null`) or sets variables
    /// (`NAME=value cmd`): no allow rule covers it.
    pub redirects: bool,
}

/// Every loaded rule.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    commands: Vec<Rule<CommandRule>>,
    paths: Vec<Rule<PathRule>>,
    hosts: Vec<Rule<HostRule>>,
    mcp: Vec<Rule<McpRule>>,
}

impl Rules {
    fn extend(&mut self, other: Rules) {
        self.commands.extend(other.commands);
        self.paths.extend(other.paths);
        self.hosts.extend(other.hosts);
        self.mcp.extend(other.mcp);
    }

    /// No rule at all.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
            && self.paths.is_empty()
            && self.hosts.is_empty()
            && self.mcp.is_empty()
    }

    /// A command line, as its simple commands; `harmless` says which commands no rule names
    /// may go along with allowed ones.
    pub fn command(
        &self,
        commands: &[CommandPart],
        harmless: impl Fn(&CommandPart) -> bool,
    ) -> Option<Hit> {
        all_of(
            commands
                .iter()
                .map(|part| {
                    let matching = self
                        .commands
                        .iter()
                        .filter(|r| r.matcher.matches(&part.words));
                    // A prefix names a program and its arguments, not where its output goes
                    // or its environment: those parts are never allowed by a rule.
                    let hit = strictest(matching)
                        .filter(|h| !(part.redirects && h.decision == Decision::Allow));
                    let ok = hit.is_none() && harmless(part);
                    (hit, ok)
                })
                .collect(),
        )
    }

    /// Changing these files (absolute paths).
    pub fn write(&self, paths: &[PathBuf]) -> Option<Hit> {
        all_of(
            paths
                .iter()
                .map(|p| {
                    (
                        strictest(self.paths.iter().filter(|r| r.matcher.matches(p))),
                        false,
                    )
                })
                .collect(),
        )
    }

    /// Reaching `host` on the web.
    pub fn fetch(&self, host: &str) -> Option<Hit> {
        strictest(self.hosts.iter().filter(|r| r.matcher.matches(host)))
    }

    /// Calling `tool` of the MCP server `server`.
    pub fn mcp(&self, server: &str, tool: &str) -> Option<Hit> {
        strictest(self.mcp.iter().filter(|r| {
            r.matcher.server == server && r.matcher.tool.as_deref().is_none_or(|t| t == tool)
        }))
    }
}

/// The rules in force, shared by a session, its subagents and every session the process
/// opens with the same configuration: a saved rule applies at once.
#[derive(Debug, Default)]
pub struct SavedRules {
    rules: RwLock<Rules>,
    /// `<home>/rules/default.rules`, where "always, and save" writes.
    user_file: PathBuf,
}

impl SavedRules {
    /// Rules already loaded, saving to `user_file`.
    pub fn new(rules: Rules, user_file: PathBuf) -> Self {
        SavedRules {
            rules: RwLock::new(rules),
            user_file,
        }
    }

    /// Reads the rules now in force.
    pub fn read(&self) -> std::sync::RwLockReadGuard<'_, Rules> {
        self.rules.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `prefix_rule(pattern=[…], decision="allow")` to the user's default.rules, and
    /// applies it from now on.
    pub fn save_allow(&self, pattern: &[String]) -> Result<(), String> {
        if pattern.is_empty() || self.user_file.as_os_str().is_empty() {
            return Err("nothing to save, or nowhere to save it".into());
        }
        let quoted: Vec<String> = pattern.iter().map(|w| starlark_string(w)).collect();
        let line = format!(
            "prefix_rule(pattern=[{}], decision=\"allow\")\n",
            quoted.join(", ")
        );
        let file = &self.user_file;
        let shown = file.display().to_string();
        let fail = |e: std::io::Error| format!("saving the rule in {shown}: {e}");
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let before = std::fs::read(file).unwrap_or_default();
        let mut text = String::new();
        if !before.is_empty() && !before.ends_with(b"\n") {
            text.push('\n');
        }
        text.push_str(&line);
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(fail)?;
        let lines = before.iter().filter(|b| **b == b'\n').count()
            + 1
            + usize::from(text.starts_with('\n'));
        let rule = Rule {
            matcher: CommandRule::Prefix(pattern.iter().map(|w| vec![w.clone()]).collect()),
            decision: Decision::Allow,
            justification: None,
            source: format!("{shown}:{lines}"),
        };
        self.rules
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .commands
            .push(rule);
        Ok(())
    }
}

/// A string as Starlark writes it, double-quoted.
fn starlark_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `*.rules` files of `dir`, in name order.
fn rules_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rules") && p.is_file())
        .collect();
    files.sort();
    files
}

/// A project's own rules files that exist (loaded only once it is trusted).
pub(crate) fn project_files(root: &Path) -> Vec<PathBuf> {
    let claude = root.join(".claude");
    let mut files = rules_files(&root.join(".codex").join("rules"));
    files.extend(rules_files(&root.join(".openinterpreter").join("rules")));
    files.extend(
        [
            claude.join("settings.json"),
            claude.join("settings.local.json"),
        ]
        .into_iter()
        .filter(|f| f.is_file()),
    );
    files
}

/// Loads every rule file that applies: the user's, and the project's when it is trusted. A
/// broken file loads nothing and gives a warning naming it and the line; the rest load.
/// `user_home` is the user's home folder (`~/` in paths), `claude_dir` Claude Code's
/// `CLAUDE_CONFIG_DIR` (else `~/.claude`).
pub fn load(
    home: &Path,
    user_home: Option<&Path>,
    claude_dir: Option<&Path>,
    project: Option<&ProjectTrust>,
) -> (Arc<SavedRules>, Vec<String>) {
    let mut rules = Rules::default();
    let mut warnings = Vec::new();
    let trusted_root = project.filter(|p| p.trusted()).map(|p| p.root.as_path());
    let claude_user = claude_dir
        .map(Path::to_path_buf)
        .or_else(|| user_home.map(|h| h.join(".claude")));
    let mut claude_files: Vec<PathBuf> = claude_user
        .map(|d| d.join("settings.json"))
        .into_iter()
        .collect();
    let mut codex_files = rules_files(&home.join("rules"));
    if let Some(root) = trusted_root {
        let (claude, codex): (Vec<PathBuf>, Vec<PathBuf>) = project_files(root)
            .into_iter()
            .partition(|f| f.extension().is_some_and(|e| e == "json"));
        codex_files.extend(codex);
        claude_files.extend(claude);
    }
    for file in codex_files {
        let name = file.display().to_string();
        let parsed = read(&file).and_then(|text| codex::parse(&name, &text));
        match parsed {
            Ok(r) => rules.commands.extend(r),
            Err(e) => warnings.push(format!("{e}; nothing from that file is loaded")),
        }
    }
    let fallback = user_home.unwrap_or(home);
    let bases = claude::Bases {
        project: trusted_root
            .or(project.map(|p| p.root.as_path()))
            .unwrap_or(fallback),
        home: user_home,
    };
    for file in claude_files.iter().filter(|f| f.is_file()) {
        let name = file.display().to_string();
        match read(file).and_then(|text| claude::parse(&name, &text, &bases, &mut rules)) {
            Ok(w) => warnings.extend(w),
            Err(e) => warnings.push(format!("{e}; nothing from that file is loaded")),
        }
    }
    let saved = SavedRules::new(rules, home.join("rules").join("default.rules"));
    (Arc::new(saved), warnings)
}

fn read(file: &Path) -> Result<String, String> {
    let len = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    if len > codex::MAX_FILE_BYTES as u64 {
        return Err(format!(
            "{}: larger than {} KiB, so it is not read",
            file.display(),
            codex::MAX_FILE_BYTES / 1024
        ));
    }
    std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))
}

#[cfg(test)]
mod tests;
