//! The approval policy: which tool calls run, which ask, which are refused.
//!
//! Decisions combine the sandbox mode with the approval policy, as in Codex, and with what the
//! process sandbox can really enforce on this machine ([`Support`]): a shell command that will
//! run confined by Landlock needs no approval in `workspace-write`, one that would run with the
//! user's full rights does. "Always allow" answers are remembered per session, keyed by command
//! prefix or path; they never cover a dangerous command.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::confinement::{Confinement, Support};
use crate::config::{ApprovalPolicy, SandboxMode};

/// What a tool call is about to do.
#[derive(Debug, Clone)]
pub enum Intent {
    Read,
    Write {
        paths: Vec<PathBuf>,
    },
    /// A process that runs outside the process sandbox, with the user's rights: an MCP tool,
    /// or a command in the editor's terminal.
    Exec {
        command: String,
    },
    /// A shell command started by the session's own runner, which confines it with the
    /// sandbox when [`Policy::confines_commands`] says it can (otherwise it is an `Exec`).
    Shell {
        command: String,
    },
}

impl Intent {
    /// The command line of `Exec` and `Shell` intents.
    pub fn command(&self) -> Option<&str> {
        match self {
            Intent::Exec { command } | Intent::Shell { command } => Some(command),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Ask { reason: String },
    Deny { reason: String },
}

#[derive(Debug)]
pub struct Policy {
    pub sandbox: SandboxMode,
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
    remembered: Mutex<HashSet<String>>,
}

impl Policy {
    /// A policy for this machine: the process sandbox is probed once per process.
    pub fn new(sandbox: SandboxMode, approval: ApprovalPolicy) -> Self {
        Policy {
            sandbox,
            approval,
            support: Support::detect(),
            network_access: false,
            writable_roots: Vec::new(),
            ask_commands: false,
            remembered: Mutex::new(HashSet::new()),
        }
    }

    /// The `[sandbox_workspace_write]` options.
    pub fn with_workspace_write(
        mut self,
        network_access: bool,
        writable_roots: Vec<PathBuf>,
    ) -> Self {
        self.network_access = network_access;
        self.writable_roots = writable_roots;
        self
    }

    /// Commands ask (unless known read-only or remembered) whatever the sandbox confines.
    pub fn with_ask_commands(mut self, ask: bool) -> Self {
        self.ask_commands = ask;
        self
    }

    /// Decides as if the machine offered `support` (tests, and machines where it is known).
    pub fn with_support(mut self, support: Support) -> Self {
        self.support = support;
        self
    }

    pub fn support(&self) -> Support {
        self.support
    }

    /// Shell commands from the session's runner run confined by the process sandbox.
    pub fn confines_commands(&self) -> bool {
        self.sandbox != SandboxMode::DangerFullAccess && self.support.confines_files()
    }

    /// What a confined command may do, given the workspace roots (cwd first). None when
    /// commands run unconfined (danger-full-access, or no Landlock).
    pub fn confinement(&self, roots: &[PathBuf]) -> Option<Confinement> {
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
    pub fn sandbox_warning(&self) -> Option<String> {
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

    pub fn decide(&self, intent: &Intent) -> Verdict {
        let command = match intent {
            Intent::Read => return Verdict::Allow,
            Intent::Write { .. } => {
                if self.is_remembered(intent) {
                    return Verdict::Allow;
                }
                return self.decide_write();
            }
            Intent::Exec { command } | Intent::Shell { command } => command,
        };
        // Dangerous commands ask (or are refused) whatever was remembered and whatever the
        // sandbox: a confined `rm -rf` still deletes the workspace.
        if let Some(reason) = dangerous_reason(command) {
            return match self.approval {
                ApprovalPolicy::Never => Verdict::Deny {
                    reason: format!("{reason} (approval policy `never` cannot ask)"),
                },
                _ => Verdict::Ask { reason },
            };
        }
        if self.is_remembered(intent) || is_known_safe(command) {
            return Verdict::Allow;
        }
        let confined = matches!(intent, Intent::Shell { .. }) && self.confines_commands();
        let ask = || Verdict::Ask {
            reason: "run this command?".into(),
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

    fn decide_write(&self) -> Verdict {
        match (self.sandbox, self.approval) {
            (SandboxMode::ReadOnly, ApprovalPolicy::Never) => Verdict::Deny {
                reason: "the sandbox is read-only: file changes are not allowed".into(),
            },
            (SandboxMode::ReadOnly, _) => Verdict::Ask {
                reason: "the session is read-only; allow this edit?".into(),
            },
            (_, ApprovalPolicy::Untrusted) => Verdict::Ask {
                reason: "edits need approval under the untrusted policy".into(),
            },
            _ => Verdict::Allow,
        }
    }

    /// The same remembered answers and options under other modes (a mode switch keeps
    /// "always allow").
    pub fn with_modes(&self, sandbox: SandboxMode, approval: ApprovalPolicy) -> Policy {
        Policy {
            sandbox,
            approval,
            support: self.support,
            network_access: self.network_access,
            writable_roots: self.writable_roots.clone(),
            ask_commands: self.ask_commands,
            remembered: Mutex::new(self.lock().clone()),
        }
    }

    /// Records an "always allow" answer.
    pub fn remember(&self, intent: &Intent) {
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

/// Characters that chain, redirect or substitute in a shell command line.
const SHELL_OPERATORS: &[char] = &['|', ';', '&', '>', '<', '`', '$', '(', ')', '\n'];

/// The key an "always allow" answer is stored under: a simple command's first two words
/// (`cargo test` covers `cargo test -p x`), the whole line of a compound one (so allowing
/// `make && ls` never allows `make && rm …`), or the paths of a write.
pub fn remember_key(intent: &Intent) -> Option<String> {
    match intent {
        Intent::Read => None,
        Intent::Write { paths } => Some(format!(
            "write:{}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(",")
        )),
        Intent::Exec { command } | Intent::Shell { command } => {
            let words: Vec<&str> = command.split_whitespace().collect();
            if command.contains(SHELL_OPERATORS) {
                Some(format!("exec=`{}`", words.join(" ")))
            } else {
                Some(format!("exec:{}", words[..words.len().min(2)].join(" ")))
            }
        }
    }
}

/// Commands that only read, so they may run without asking.
fn is_known_safe(command: &str) -> bool {
    const SAFE: &[&str] = &[
        "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "pwd", "echo", "which", "file",
        "stat", "tree", "du", "nl", "sort", "uniq", "true", "false", "diff",
    ];
    if command.contains(['>', '`', '\n']) || command.contains("$(") || command.contains("<(") {
        return false;
    }
    command
        .split(['|', ';', '&'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .all(|seg| {
            let mut words = seg.split_whitespace();
            let first = words.next().unwrap_or("");
            if first == "git" {
                return matches!(
                    words.next(),
                    Some("status" | "diff" | "log" | "show" | "branch" | "rev-parse" | "ls-files")
                ) && !seg.contains("--output");
            }
            if first == "find"
                && [
                    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls",
                ]
                .iter()
                .any(|f| seg.contains(f))
            {
                return false;
            }
            if first == "sort"
                && seg
                    .split_whitespace()
                    .any(|w| w == "-o" || w.starts_with("--output"))
            {
                return false;
            }
            SAFE.contains(&first)
        })
}

/// Commands that always ask, whatever the policy; refused under `never`.
fn dangerous_reason(command: &str) -> Option<String> {
    let c = command.replace(['\n', ';', '&', '|', '(', ')'], " ");
    let words: Vec<&str> = c.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let recursive_rm = words.iter().enumerate().any(|(i, w)| {
        *w == "rm"
            && words[i + 1..]
                .iter()
                .take_while(|a| a.starts_with('-'))
                .any(|a| *a == "--recursive" || (!a.starts_with("--") && a.contains(['r', 'R'])))
    });
    let outside = |w: &&str| {
        let w = w.trim_matches(['"', '\'']);
        w.starts_with('/')
            || w.starts_with('~')
            || w.starts_with("..")
            || w.starts_with("$HOME")
            || w.starts_with("${HOME}")
            || w == "*"
            || w == "."
    };
    if recursive_rm && words.iter().any(outside) {
        return Some("recursive delete outside the workspace".into());
    }
    if has("git") && has("push") {
        let after_push = words.iter().skip_while(|w| **w != "push").skip(1);
        let forced = after_push.clone().any(|w| {
            *w == "--force"
                || w.starts_with("--force-with-lease")
                || *w == "--mirror"
                || *w == "--delete"
                || (w.starts_with('-') && !w.starts_with("--") && w.contains('f'))
                || (w.starts_with('+') && w.len() > 1)
        });
        if forced {
            return Some("force push rewrites remote history".into());
        }
    }
    let fetches = command.contains("curl") || command.contains("wget");
    let pipes_to_shell = command.split('|').skip(1).any(|seg| {
        let mut w = seg.split_whitespace();
        let mut first = w.next();
        if first == Some("sudo") {
            first = w.next();
        }
        matches!(
            first,
            Some("sh" | "bash" | "zsh" | "dash" | "ksh" | "sudo" | "python" | "python3" | "perl")
        )
    });
    let shell_substitutes = ["sh", "bash", "zsh"].iter().any(|s| has(s))
        && (command.contains("<(curl")
            || command.contains("<(wget")
            || command.contains("$(curl")
            || command.contains("$(wget"));
    if fetches && (pipes_to_shell || shell_substitutes) {
        return Some("runs a script downloaded from the network".into());
    }
    None
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
