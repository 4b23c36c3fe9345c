//! Session settings as typed values: what the agent may do (sandbox mode, approval policy,
//! the front ends' permission modes) and how hard the model thinks (reasoning effort).
//! Every face parses the user's words into these once, at its edge.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A word that names none of a setting's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownValue {
    /// The setting, as config.toml names it.
    pub setting: &'static str,
    /// What was given.
    pub value: String,
    /// The accepted spellings, for the message.
    pub expected: &'static str,
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}` (expected {})",
            self.setting, self.value, self.expected
        )
    }
}

impl std::error::Error for UnknownValue {}

/// What commands may touch: Codex's `sandbox_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Nothing may be written.
    ReadOnly,
    /// Writes inside the workspace roots; no network unless configured.
    #[default]
    WorkspaceWrite,
    /// No process sandbox at all.
    DangerFullAccess,
}

impl SandboxMode {
    /// The config.toml spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }
}

impl FromStr for SandboxMode {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        Ok(match s {
            "read-only" => Self::ReadOnly,
            "workspace-write" => Self::WorkspaceWrite,
            "danger-full-access" => Self::DangerFullAccess,
            other => {
                return Err(UnknownValue {
                    setting: "sandbox mode",
                    value: other.to_string(),
                    expected: "read-only, workspace-write or danger-full-access",
                });
            }
        })
    }
}

/// When the user is asked before a tool call runs: Codex's `approval_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Ask for everything that is not known to be read-only.
    Untrusted,
    /// Ask when the sandbox cannot contain the call.
    #[default]
    OnRequest,
    /// Never ask: what would ask is refused.
    Never,
}

impl ApprovalPolicy {
    /// The config.toml spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnRequest => "on-request",
            Self::Never => "never",
        }
    }
}

impl FromStr for ApprovalPolicy {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        Ok(match s {
            "untrusted" => Self::Untrusted,
            // Codex's deprecated `on-failure` behaves like on-request here.
            "on-request" | "on-failure" => Self::OnRequest,
            "never" => Self::Never,
            other => {
                return Err(UnknownValue {
                    setting: "approval_policy",
                    value: other.to_string(),
                    expected: "untrusted, on-request or never",
                });
            }
        })
    }
}

/// The three modes interactive faces offer (ACP's session modes, the terminal's Shift+Tab).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// No file changes; commands only in a read-only sandbox.
    ReadOnly,
    /// Edits inside the workspace run; commands and anything else ask.
    Auto,
    /// Everything runs without asking and without a sandbox (dangerous commands still ask).
    FullAccess,
}

impl PermissionMode {
    /// Every mode, in the order the faces cycle through them.
    pub const ALL: [PermissionMode; 3] = [Self::ReadOnly, Self::Auto, Self::FullAccess];

    /// The id ACP and the slash commands use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Auto => "auto",
            Self::FullAccess => "full-access",
        }
    }

    /// The next mode in [`PermissionMode::ALL`], wrapping around.
    pub fn next(self) -> PermissionMode {
        match self {
            Self::ReadOnly => Self::Auto,
            Self::Auto => Self::FullAccess,
            Self::FullAccess => Self::ReadOnly,
        }
    }

    /// The mode a session's permissions amount to, as the faces name it.
    pub fn of(p: Permissions) -> PermissionMode {
        Self::for_sandbox(p.sandbox)
    }

    /// The mode a configured sandbox mode starts in.
    pub fn for_sandbox(sandbox: SandboxMode) -> PermissionMode {
        match sandbox {
            SandboxMode::ReadOnly => Self::ReadOnly,
            SandboxMode::WorkspaceWrite => Self::Auto,
            SandboxMode::DangerFullAccess => Self::FullAccess,
        }
    }

    /// What the mode means for the policy. `configured` is the approval policy from config:
    /// `auto` keeps `untrusted` (which also asks for edits).
    pub fn permissions(self, configured: ApprovalPolicy) -> Permissions {
        match self {
            Self::ReadOnly => Permissions {
                sandbox: SandboxMode::ReadOnly,
                approval: ApprovalPolicy::Never,
                ask_commands: false,
            },
            Self::FullAccess => Permissions {
                sandbox: SandboxMode::DangerFullAccess,
                approval: ApprovalPolicy::OnRequest,
                ask_commands: false,
            },
            Self::Auto => Permissions {
                sandbox: SandboxMode::WorkspaceWrite,
                approval: match configured {
                    ApprovalPolicy::Untrusted => ApprovalPolicy::Untrusted,
                    _ => ApprovalPolicy::OnRequest,
                },
                ask_commands: true,
            },
        }
    }
}

impl FromStr for PermissionMode {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownValue {
                setting: "mode",
                value: s.to_string(),
                expected: "read-only, auto or full-access",
            })
    }
}

/// The policy a session applies to tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Permissions {
    /// What confined commands may touch.
    pub sandbox: SandboxMode,
    /// When to ask.
    pub approval: ApprovalPolicy,
    /// Commands ask even when the sandbox would confine them (the `auto` mode).
    pub ask_commands: bool,
}

/// How much the model reasons before answering. `None` in a setting means the provider's
/// default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// The least reasoning a model offers (Codex's `minimal`).
    Minimal,
    /// Light reasoning.
    Low,
    /// The usual amount.
    Medium,
    /// More.
    High,
    /// Codex's `xhigh`.
    XHigh,
    /// The most a model offers (Kimi's `max`).
    Max,
}

impl ReasoningEffort {
    /// Every effort, least first.
    pub const ALL: [ReasoningEffort; 6] = [
        Self::Minimal,
        Self::Low,
        Self::Medium,
        Self::High,
        Self::XHigh,
        Self::Max,
    ];

    /// The word providers and config.toml use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::XHigh => "xhigh",
            Self::Max => "max",
        }
    }
}

impl FromStr for ReasoningEffort {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        Self::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| UnknownValue {
                setting: "reasoning effort",
                value: s.to_string(),
                expected: "minimal, low, medium, high, xhigh or max",
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for m in [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::DangerFullAccess,
        ] {
            assert_eq!(m.as_str().parse::<SandboxMode>(), Ok(m));
            assert_eq!(
                serde_json::to_value(m).unwrap(),
                serde_json::json!(m.as_str())
            );
        }
        for e in ReasoningEffort::ALL {
            assert_eq!(e.as_str().parse::<ReasoningEffort>(), Ok(e));
        }
        for m in PermissionMode::ALL {
            assert_eq!(m.as_str().parse::<PermissionMode>(), Ok(m));
        }
        assert_eq!(
            "on-failure".parse::<ApprovalPolicy>(),
            Ok(ApprovalPolicy::OnRequest)
        );
        let e = "sometimes".parse::<ApprovalPolicy>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown approval_policy `sometimes` (expected untrusted, on-request or never)"
        );
    }

    #[test]
    fn modes_cycle_and_map_to_permissions() {
        assert_eq!(PermissionMode::FullAccess.next(), PermissionMode::ReadOnly);
        let auto = PermissionMode::Auto.permissions(ApprovalPolicy::Untrusted);
        assert_eq!(auto.approval, ApprovalPolicy::Untrusted);
        assert!(auto.ask_commands);
        let ro = PermissionMode::ReadOnly.permissions(ApprovalPolicy::OnRequest);
        assert_eq!(
            (ro.sandbox, ro.approval),
            (SandboxMode::ReadOnly, ApprovalPolicy::Never)
        );
    }
}
