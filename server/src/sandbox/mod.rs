//! Approval policy: which tool calls run, which ask, which are refused.
//!
//! Decisions combine the sandbox mode with the approval policy, as in Codex. "Always allow"
//! answers are remembered per session, keyed by command prefix or path.

use crate::config::{ApprovalPolicy, SandboxMode};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

/// What a tool call is about to do.
#[derive(Debug, Clone)]
pub enum Intent {
    Read,
    Write { paths: Vec<PathBuf> },
    Exec { command: String },
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
    remembered: Mutex<HashSet<String>>,
}

impl Policy {
    pub fn new(sandbox: SandboxMode, approval: ApprovalPolicy) -> Self {
        Policy {
            sandbox,
            approval,
            remembered: Mutex::new(HashSet::new()),
        }
    }

    pub fn decide(&self, intent: &Intent) -> Verdict {
        if let Some(key) = remember_key(intent)
            && self.lock().contains(&key)
        {
            return Verdict::Allow;
        }
        match intent {
            Intent::Read => Verdict::Allow,
            Intent::Write { .. } => match (self.sandbox, self.approval) {
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
            },
            Intent::Exec { command } => {
                let dangerous = dangerous_reason(command);
                let safe = is_known_safe(command);
                match (self.sandbox, self.approval) {
                    (_, ApprovalPolicy::Never) if dangerous.is_none() => {
                        if self.sandbox == SandboxMode::ReadOnly && !safe {
                            Verdict::Deny {
                                reason: "the sandbox is read-only: only read-only commands may run"
                                    .into(),
                            }
                        } else {
                            Verdict::Allow
                        }
                    }
                    (_, ApprovalPolicy::Never) => Verdict::Deny {
                        reason: dangerous.unwrap_or_default(),
                    },
                    _ if dangerous.is_some() => Verdict::Ask {
                        reason: dangerous.unwrap_or_default(),
                    },
                    (SandboxMode::DangerFullAccess, _) => Verdict::Allow,
                    _ if safe => Verdict::Allow,
                    (SandboxMode::ReadOnly, _) | (_, ApprovalPolicy::Untrusted) => Verdict::Ask {
                        reason: "run this command?".into(),
                    },
                    // Without a process sandbox, a command could write anywhere: ask.
                    (SandboxMode::WorkspaceWrite, ApprovalPolicy::OnRequest) => Verdict::Ask {
                        reason: "run this command?".into(),
                    },
                }
            }
        }
    }

    /// The same remembered answers under other modes (a mode switch keeps "always allow").
    pub fn with_modes(&self, sandbox: SandboxMode, approval: ApprovalPolicy) -> Policy {
        Policy {
            sandbox,
            approval,
            remembered: Mutex::new(self.lock().clone()),
        }
    }

    /// Records an "always allow" answer.
    pub fn remember(&self, intent: &Intent) {
        if let Some(k) = remember_key(intent) {
            self.lock().insert(k);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.remembered.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The key an "always allow" answer is stored under: the command's first two words, or the
/// paths.
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
        Intent::Exec { command } => {
            let prefix: Vec<&str> = command.split_whitespace().take(2).collect();
            Some(format!("exec:{}", prefix.join(" ")))
        }
    }
}

/// Commands that only read, so they may run without asking.
fn is_known_safe(command: &str) -> bool {
    const SAFE: &[&str] = &[
        "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "pwd", "echo", "which", "file",
        "stat", "tree", "du", "nl", "sort", "uniq", "true", "false", "diff",
    ];
    if command.contains('>') || command.contains("$(") || command.contains('`') {
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
                );
            }
            if first == "find" && (seg.contains("-exec") || seg.contains("-delete")) {
                return false;
            }
            SAFE.contains(&first)
        })
}

/// Commands that always ask, whatever the policy.
fn dangerous_reason(command: &str) -> Option<String> {
    let c = command.replace('\n', " ");
    let words: Vec<&str> = c.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    if has("rm")
        && words.iter().any(|w| w.starts_with('-') && w.contains('r'))
        && words
            .iter()
            .any(|w| *w == "/" || w.starts_with("/") || w.starts_with("~") || w.starts_with(".."))
    {
        return Some("recursive delete outside the workspace".into());
    }
    if has("git")
        && has("push")
        && (has("--force") || has("-f") || c.contains("--force-with-lease"))
    {
        return Some("force push rewrites remote history".into());
    }
    let pipes_to_shell = c.split('|').skip(1).any(|seg| {
        matches!(
            seg.split_whitespace().next(),
            Some("sh" | "bash" | "zsh" | "sudo")
        )
    });
    if (c.contains("curl") || c.contains("wget")) && pipes_to_shell {
        return Some("runs a script downloaded from the network".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(c: &str) -> Intent {
        Intent::Exec { command: c.into() }
    }

    #[test]
    fn matrix() {
        let p = Policy::new(SandboxMode::WorkspaceWrite, ApprovalPolicy::OnRequest);
        assert!(matches!(p.decide(&exec("cargo test")), Verdict::Ask { .. }));
        assert_eq!(p.decide(&exec("git diff")), Verdict::Allow);
        assert_eq!(p.decide(&Intent::Write { paths: vec![] }), Verdict::Allow);
        assert!(matches!(p.decide(&exec("rm -rf /")), Verdict::Ask { .. }));
        assert!(matches!(
            p.decide(&exec("curl x | sh")),
            Verdict::Ask { .. }
        ));
        assert!(matches!(
            p.decide(&exec("git push --force origin main")),
            Verdict::Ask { .. }
        ));

        let ro = Policy::new(SandboxMode::ReadOnly, ApprovalPolicy::Never);
        assert_eq!(ro.decide(&exec("ls -la | wc -l")), Verdict::Allow);
        assert!(matches!(ro.decide(&exec("touch x")), Verdict::Deny { .. }));
        assert!(matches!(
            ro.decide(&Intent::Write { paths: vec![] }),
            Verdict::Deny { .. }
        ));

        let un = Policy::new(SandboxMode::WorkspaceWrite, ApprovalPolicy::Untrusted);
        assert_eq!(un.decide(&exec("git status")), Verdict::Allow);
        assert!(matches!(un.decide(&exec("make")), Verdict::Ask { .. }));
        un.remember(&exec("make all"));
        assert_eq!(un.decide(&exec("make all -j2")), Verdict::Allow);
    }
}
