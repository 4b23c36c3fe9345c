//! The approval policy: which tool calls run, which ask, which are refused.
//!
//! Decisions combine the sandbox mode with the approval policy, as in Codex, and with what the
//! process sandbox can really enforce on this machine ([`Support`]): a shell command that will
//! run confined by Landlock needs no approval in `workspace-write`, one that would run with the
//! user's full rights does. "Always allow" answers are remembered per session, keyed by command
//! prefix or path; they never cover a dangerous command. Saved rules (`config::rules`,
//! docs/rules.md) come first: forbidden refuses in every mode, prompt asks, allow runs, except
//! that dangerous commands and protected files still ask.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::command::Analysis;
use super::confinement::{Confinement, Support};
use crate::config::rules::{Decision, Hit, SavedRules};
use crate::config::{ApprovalPolicy, SandboxMode};

/// What a tool call is about to do.
#[derive(Debug, Clone)]
pub enum Intent {
    /// Changing files: an edit or a patch.
    Write {
        /// The files the change creates, edits or deletes.
        paths: Vec<PathBuf>,
    },
    /// A process that runs outside the process sandbox, with the user's rights: an MCP tool,
    /// or a command in the editor's terminal.
    Exec {
        /// The command line, as the user sees it and the danger rules read it.
        command: String,
    },
    /// A shell command started by the session's own runner, which confines it with the
    /// sandbox when [`Policy::confines_commands`] says it can (otherwise it is an `Exec`).
    Shell {
        /// The command line, as the user sees it and the danger rules read it.
        command: String,
    },
    /// A tool of an MCP server: a process outside the sandbox, decided like an `Exec` of
    /// `command` unless a saved rule names the server or the tool.
    Mcp {
        /// The server's configured name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// How it is shown, and judged when no rule names it (`mcp <server>.<tool>`).
        command: String,
    },
    /// Reading a page or searching the web: a read, but one that reaches the network.
    Fetch {
        /// The URL, or the search query.
        target: String,
        /// The host it goes to ("always allow" is remembered per host).
        host: String,
    },
}

impl Intent {
    /// The command line of `Exec` and `Shell` intents.
    pub(crate) fn command(&self) -> Option<&str> {
        match self {
            Intent::Exec { command } | Intent::Shell { command } | Intent::Mcp { command, .. } => {
                Some(command)
            }
            _ => None,
        }
    }
}

/// What [`Policy::decide`] rules for an [`Intent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it without asking.
    Allow,
    /// `dangerous`: the rules found danger, so the policy asks every time ("always allow"
    /// would not be remembered).
    Ask {
        /// Why it asks, shown to the user.
        reason: String,
        /// The rules found danger: ask every time, never remember the answer.
        dangerous: bool,
    },
    /// Refuse it without asking; the tool call is declined.
    Deny {
        /// Why, for the model (the declined call says it).
        reason: String,
    },
}

/// A session's sandbox and approval rules, with the "always allow" answers given so far.
#[derive(Debug)]
pub struct Policy {
    /// What commands and edits may touch (`sandbox_mode`).
    pub sandbox: SandboxMode,
    /// When a tool call asks the user first (`approval_policy`).
    pub approval: ApprovalPolicy,
    /// What the kernel can enforce for child processes.
    support: Support,
    /// `[sandbox_workspace_write] network_access`.
    network_access: bool,
    /// `[sandbox_workspace_write] writable_roots` (relative ones are under the cwd).
    writable_roots: Vec<PathBuf>,
    /// Commands ask even when the sandbox confines them (ACP `auto` mode: only edits inside
    /// the workspace run without asking).
    ask_commands: bool,
    /// A read-only subagent's policy ([`Policy::narrowed_for_read_only`]): edits are refused,
    /// and the sandbox stays read-only through any later change of modes.
    read_only_subagent: bool,
    remembered: Mutex<HashSet<String>>,
    /// Saved rules (docs/rules.md), shared with the sessions and subagents of one config.
    rules: Arc<SavedRules>,
}

impl Policy {
    /// A policy for this machine: the process sandbox is probed once per process.
    pub fn new(sandbox: SandboxMode, approval: ApprovalPolicy) -> Self {
        Policy {
            sandbox,
            approval,
            support: super::prepared::detect(),
            network_access: false,
            writable_roots: Vec::new(),
            ask_commands: false,
            read_only_subagent: false,
            remembered: Mutex::new(HashSet::new()),
            rules: Arc::default(),
        }
    }

    /// Applies these saved rules (and saves "always, and save" answers through them).
    pub(crate) fn with_rules(mut self, rules: Arc<SavedRules>) -> Self {
        self.rules = rules;
        self
    }

    /// The `[sandbox_workspace_write]` options.
    pub(crate) fn with_workspace_write(
        mut self,
        network_access: bool,
        writable_roots: Vec<PathBuf>,
    ) -> Self {
        self.network_access = network_access;
        self.writable_roots = writable_roots;
        self
    }

    /// Commands ask (unless known read-only or remembered) whatever the sandbox confines.
    pub(crate) fn with_ask_commands(mut self, ask: bool) -> Self {
        self.ask_commands = ask;
        self
    }

    /// Decides as if the machine offered `support`.
    #[cfg(test)]
    pub(crate) fn with_support(mut self, support: Support) -> Self {
        self.support = support;
        self
    }

    #[cfg(test)]
    pub(crate) fn support(&self) -> Support {
        self.support
    }

    /// Shell commands from the session's runner run confined by the process sandbox.
    pub(crate) fn confines_commands(&self) -> bool {
        self.sandbox != SandboxMode::DangerFullAccess && self.support.confines_files()
    }

    /// What a confined command may do, given the workspace roots (cwd first). None when
    /// commands run unconfined (danger-full-access, or no Landlock).
    pub(crate) fn confinement(&self, roots: &[PathBuf]) -> Option<Confinement> {
        if !self.confines_commands() {
            return None;
        }
        Some(match self.sandbox {
            SandboxMode::ReadOnly => Confinement::read_only(),
            _ => {
                let cwd = roots
                    .first()
                    .map(PathBuf::as_path)
                    .unwrap_or(Path::new("/"));
                let extra: Vec<PathBuf> = self
                    .writable_roots
                    .iter()
                    .map(|r| {
                        if r.is_absolute() {
                            r.clone()
                        } else {
                            cwd.join(r)
                        }
                    })
                    .collect();
                Confinement::workspace_write(roots, &extra, self.network_access)
            }
        })
    }

    /// What the user must know about the protection this session really has, or None when
    /// the mode is fully enforced. Said once at session start.
    pub(crate) fn sandbox_warning(&self) -> Option<String> {
        let mode = self.sandbox.as_str();
        if self.sandbox == SandboxMode::DangerFullAccess {
            return None;
        }
        if !self.support.confines_files() {
            let fallback = match (self.sandbox, self.approval) {
                (_, ApprovalPolicy::Untrusted) | (_, ApprovalPolicy::OnRequest) => {
                    "every command that is not known to be read-only asks for approval first"
                }
                (SandboxMode::ReadOnly, ApprovalPolicy::Never) => {
                    "only commands known to be read-only run; the others are refused"
                }
                (_, ApprovalPolicy::Never) => {
                    "with approval policy `never`, commands run unconfined: they can write anywhere you can and use the network"
                }
            };
            return Some(format!(
                "No process sandbox: {}. Shell commands run with your full user rights, so in {mode} mode {fallback}.",
                self.support.describe()
            ));
        }
        let mut missing = Vec::new();
        if !self.support.confines_truncate() {
            missing.push("truncating existing files outside the writable folders");
        }
        let wants_network_off = self.sandbox == SandboxMode::ReadOnly || !self.network_access;
        if wants_network_off && !self.support.confines_network() {
            missing.push("network access (TCP connect and bind)");
        }
        if missing.is_empty() {
            return None;
        }
        Some(format!(
            "The process sandbox is partial: {} cannot restrict {} for shell commands in {mode} mode.",
            self.support.describe(),
            missing.join(" or ")
        ))
    }

    /// Whether `intent` runs, asks the user first, or is refused, under this policy on this
    /// machine.
    pub fn decide(&self, intent: &Intent) -> Verdict {
        let command = match intent {
            Intent::Write { paths } => return self.decide_write_intent(paths, intent),
            Intent::Exec { command } | Intent::Shell { command } => command,
            Intent::Mcp {
                server,
                tool,
                command,
            } => {
                let hit = self.rules.read().mcp(server, tool);
                if let Some(v) = hit
                    .as_ref()
                    .and_then(|h| self.rule_verdict(h, Decision::Allow))
                {
                    return v;
                }
                command
            }
            Intent::Fetch { host, .. } => {
                let hit = self.rules.read().fetch(host);
                if let Some(v) = hit
                    .as_ref()
                    .and_then(|h| self.rule_verdict(h, Decision::Allow))
                {
                    return v;
                }
                return self.decide_fetch(host, intent);
            }
        };
        let analysis = super::command::analyze(command);
        let hit = super::command::simple_commands(command).and_then(|commands| {
            self.rules
                .read()
                .command(&commands, super::command::part_read_only)
        });
        if let Some(v) = hit
            .as_ref()
            .and_then(|h| self.rule_verdict(h, Decision::Forbidden))
        {
            return v;
        }
        // Dangerous commands ask (or are refused) whatever was remembered and whatever the
        // sandbox: a confined `rm -rf` still deletes the workspace.
        if let Some(reason) = analysis.danger {
            return match self.approval {
                ApprovalPolicy::Never => Verdict::Deny {
                    reason: format!("{reason} (approval policy `never` cannot ask)"),
                },
                _ => Verdict::Ask {
                    reason,
                    dangerous: true,
                },
            };
        }
        if let Some(v) = hit
            .as_ref()
            .and_then(|h| self.rule_verdict(h, Decision::Allow))
        {
            return v;
        }
        let remembered = self.lock().contains(&command_key(command, &analysis));
        if remembered || analysis.read_only {
            return Verdict::Allow;
        }
        let confined = matches!(intent, Intent::Shell { .. }) && self.confines_commands();
        let ask = || Verdict::Ask {
            reason: "run this command?".into(),
            dangerous: false,
        };
        if self.ask_commands && self.approval != ApprovalPolicy::Never {
            return ask();
        }
        match (self.sandbox, self.approval) {
            (_, ApprovalPolicy::Untrusted) => ask(),
            (SandboxMode::DangerFullAccess, _) => Verdict::Allow,
            // The kernel holds the command to the mode: nothing to ask.
            _ if confined => Verdict::Allow,
            (SandboxMode::ReadOnly, ApprovalPolicy::Never) => Verdict::Deny {
                reason: "the sandbox is read-only and commands cannot be confined here: only read-only commands may run"
                    .into(),
            },
            // Unconfined, a command could write anywhere: ask.
            (_, ApprovalPolicy::OnRequest) => ask(),
            // workspace-write + never without confinement: runs with the user's rights, as
            // said in the session's warning.
            (SandboxMode::WorkspaceWrite, ApprovalPolicy::Never) => Verdict::Allow,
        }
    }

    /// What a saved rule's `hit` rules, if it is at least as strict as `from`: forbidden
    /// refuses in every mode, prompt asks (refused where nobody can ask), allow runs.
    fn rule_verdict(&self, hit: &Hit, from: Decision) -> Option<Verdict> {
        if hit.decision < from {
            return None;
        }
        let reason = hit.reason.clone();
        Some(match hit.decision {
            Decision::Forbidden => Verdict::Deny { reason },
            Decision::Prompt => match self.approval {
                ApprovalPolicy::Never => Verdict::Deny {
                    reason: format!("{reason}; approval policy `never` cannot ask"),
                },
                _ => Verdict::Ask {
                    reason,
                    dangerous: false,
                },
            },
            Decision::Allow => Verdict::Allow,
        })
    }

    /// Saves an "always, and save" answer as a rule in the user's rules file: a command's
    /// "always allow" prefix. Err when it cannot be written as a rule (compound commands,
    /// edits, fetches, MCP tools) or the file cannot be written.
    pub(crate) fn save(&self, intent: &Intent) -> Result<(), String> {
        let (Intent::Exec { command } | Intent::Shell { command }) = intent else {
            return Err("only a command's prefix can be saved as a rule".into());
        };
        let analysis = super::command::analyze(command);
        if analysis.danger.is_some() {
            return Err("a dangerous command is never saved".into());
        }
        match analysis.key_words {
            Some(words) => self.rules.save_allow(&words),
            None => Err("a compound command has no prefix to save".into()),
        }
    }

    /// A write: a forbidding rule, then protected files (they ask whatever a rule allows), a
    /// read-only subagent, the other rules, remembered answers, then the mode.
    fn decide_write_intent(&self, paths: &[PathBuf], intent: &Intent) -> Verdict {
        let hit = self.rules.read().write(paths);
        if let Some(v) = hit
            .as_ref()
            .and_then(|h| self.rule_verdict(h, Decision::Forbidden))
        {
            return v;
        }
        // Git's own files and the agent's config run programs later: always asked,
        // as a command writing them would be refused.
        if let Some(p) = paths.iter().find(|p| super::protect::is_protected(p))
            && self.sandbox != SandboxMode::DangerFullAccess
            && !self.read_only_subagent
        {
            let reason = format!(
                "{} is git's or the agent's own (hooks and config there run programs)",
                p.display()
            );
            return match self.approval {
                ApprovalPolicy::Never => Verdict::Deny {
                    reason: format!("{reason}; approval policy `never` cannot ask"),
                },
                _ => Verdict::Ask {
                    reason,
                    dangerous: true,
                },
            };
        }
        if self.read_only_subagent {
            return self.decide_write();
        }
        if let Some(v) = hit
            .as_ref()
            .and_then(|h| self.rule_verdict(h, Decision::Allow))
        {
            return v;
        }
        if self.is_remembered(intent) {
            return Verdict::Allow;
        }
        self.decide_write()
    }

    /// A fetch or search runs in the modes that let commands reach the network or edit the
    /// workspace (it only reads); read-only sessions and the untrusted policy ask.
    fn decide_fetch(&self, host: &str, intent: &Intent) -> Verdict {
        if self.is_remembered(intent) {
            return Verdict::Allow;
        }
        let ask = |reason: String| match self.approval {
            ApprovalPolicy::Never => Verdict::Deny {
                reason: format!("{reason} (approval policy `never` cannot ask)"),
            },
            _ => Verdict::Ask {
                reason,
                dangerous: false,
            },
        };
        match (self.sandbox, self.approval) {
            (_, ApprovalPolicy::Untrusted) => ask(format!("reach {host} on the web?")),
            (SandboxMode::ReadOnly, _) => ask(format!(
                "the session is read-only; reach {host} on the web?"
            )),
            _ => Verdict::Allow,
        }
    }

    fn decide_write(&self) -> Verdict {
        if self.read_only_subagent {
            return Verdict::Deny {
                reason: "this subagent is read-only: file changes are not allowed".into(),
            };
        }
        match (self.sandbox, self.approval) {
            (SandboxMode::ReadOnly, ApprovalPolicy::Never) => Verdict::Deny {
                reason: "the sandbox is read-only: file changes are not allowed".into(),
            },
            (SandboxMode::ReadOnly, _) => Verdict::Ask {
                reason: "the session is read-only; allow this edit?".into(),
                dangerous: false,
            },
            (_, ApprovalPolicy::Untrusted) => Verdict::Ask {
                reason: "edits need approval under the untrusted policy".into(),
                dangerous: false,
            },
            _ => Verdict::Allow,
        }
    }

    /// The same remembered answers and options under other modes (a mode switch keeps
    /// "always allow"); a read-only subagent's policy stays read-only.
    pub(crate) fn with_modes(&self, sandbox: SandboxMode, approval: ApprovalPolicy) -> Policy {
        let sandbox = match self.read_only_subagent {
            true => stricter(sandbox, SandboxMode::ReadOnly),
            false => sandbox,
        };
        Policy {
            sandbox,
            approval,
            support: self.support,
            network_access: self.network_access,
            writable_roots: self.writable_roots.clone(),
            ask_commands: self.ask_commands,
            read_only_subagent: self.read_only_subagent,
            remembered: Mutex::new(self.lock().clone()),
            rules: self.rules.clone(),
        }
    }

    /// The policy of a read-only subagent (Explore, Plan) of a session under this one. A
    /// subagent never gets more than its parent: for every intent its verdict is this one's
    /// or stricter (allow, then ask, then deny).
    ///
    /// - sandbox: the stricter of this one's and `read-only` (so always `read-only`: its
    ///   commands run under the read-only Landlock ruleset, or ask or are refused where
    ///   nothing confines them, as a read-only session's would);
    /// - approval: this one's, unchanged. What asks here asks there, through the approver the
    ///   child shares with its parent (under `untrusted`, a command that is not known to be
    ///   read-only asks, as Landlock does not stop `chmod` or `touch`); `never` stays `never`;
    /// - edits: refused, whatever was "always allowed" (the subagent's type only reads);
    /// - commands "always allowed" so far here run there too (the parent runs them unasked as
    ///   well); the subagent's own "always allow" answers last for the subagent;
    /// - `ask_commands`, `network_access` and `writable_roots` as here (the read-only
    ///   confinement uses neither the network nor the roots).
    pub(crate) fn narrowed_for_read_only(&self) -> Policy {
        let mut child =
            self.with_modes(stricter(self.sandbox, SandboxMode::ReadOnly), self.approval);
        child.read_only_subagent = true;
        child
    }

    /// Records an "always allow" answer.
    pub(crate) fn remember(&self, intent: &Intent) {
        if let Some(k) = remember_key(intent) {
            self.lock().insert(k);
        }
    }

    fn is_remembered(&self, intent: &Intent) -> bool {
        remember_key(intent).is_some_and(|k| self.lock().contains(&k))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.remembered.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The sandbox mode that lets commands do less: read-only, then workspace-write, then
/// danger-full-access.
fn stricter(a: SandboxMode, b: SandboxMode) -> SandboxMode {
    let rank = |m: SandboxMode| match m {
        SandboxMode::ReadOnly => 0,
        SandboxMode::WorkspaceWrite => 1,
        SandboxMode::DangerFullAccess => 2,
    };
    if rank(a) <= rank(b) { a } else { b }
}

/// The key an "always allow" answer is stored under: for one plain command, its wrappers,
/// program and first argument as parsed (`cargo test` covers `cargo test -p x`; `timeout 60
/// make all` covers `timeout 60 make all -j2` but not `timeout 60 rm x`); for anything else
/// the whole line (so allowing `make && ls` never allows `make && rm …`); the paths of a write.
pub fn remember_key(intent: &Intent) -> Option<String> {
    match intent {
        Intent::Write { paths } => Some(format!(
            "write:{}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(",")
        )),
        Intent::Exec { command } | Intent::Shell { command } => {
            Some(command_key(command, &super::command::analyze(command)))
        }
        // Not `exec:`: an MCP tool cannot be saved as a command rule.
        Intent::Mcp { server, tool, .. } => Some(format!("mcp:{server}.{tool}")),
        Intent::Fetch { host, .. } => Some(format!("fetch:{host}")),
    }
}

fn command_key(command: &str, analysis: &Analysis) -> String {
    match &analysis.key_words {
        Some(words) => format!("exec:{}", words.join(" ")),
        None => format!(
            "exec=`{}`",
            command.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
