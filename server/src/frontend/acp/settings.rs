//! Session modes and config options (mode, model, reasoning effort, harness), kept in sync
//! between the legacy `modes` field and `configOptions`.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState,
};

use crate::config::{ApprovalPolicy, SandboxMode};
use crate::harness;
use crate::model::catalog;

pub const MODES: &[(&str, &str, &str)] = &[
    (
        "read-only",
        "Read-only",
        "No file changes: edits are refused; commands run in a read-only sandbox (without one, only read-only commands like ls or git status run).",
    ),
    (
        "auto",
        "Auto",
        "Edits inside the workspace are allowed; commands and anything else ask first (read-only ones like ls or git status run).",
    ),
    (
        "full-access",
        "Full access",
        "Edits and commands run without asking and without a sandbox (dangerous commands still ask).",
    ),
];

pub const EFFORTS: &[(&str, &str)] = &[
    ("default", "Default"),
    ("low", "Low"),
    ("medium", "Medium"),
    ("high", "High"),
    ("max", "Max"),
];

/// What the user picked for a session; applied to the agent session at the next turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub mode: String,
    pub model: String,
    pub provider: String,
    pub effort: String,
    pub harness: String,
    /// The configured approval policy; `auto` mode uses it (`untrusted` asks for edits too).
    pub base_approval: ApprovalPolicy,
}

impl Settings {
    pub fn modes(&self) -> (SandboxMode, ApprovalPolicy) {
        mode_policy(&self.mode, self.base_approval)
    }

    pub fn mode_state(&self) -> SessionModeState {
        SessionModeState::new(
            self.mode.clone(),
            MODES
                .iter()
                .map(|(id, name, desc)| SessionMode::new(*id, *name).description(*desc))
                .collect::<Vec<_>>(),
        )
    }

    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        let select = |values: Vec<(String, String)>| -> Vec<SessionConfigSelectOption> {
            values
                .into_iter()
                .map(|(v, n)| SessionConfigSelectOption::new(v, n))
                .collect()
        };
        let mut models: Vec<String> = catalog::provider(&self.provider)
            .map(|p| p.models.iter().map(|m| m.to_string()).collect())
            .unwrap_or_default();
        if !models.contains(&self.model) {
            models.insert(0, self.model.clone());
        }
        vec![
            SessionConfigOption::select(
                "mode",
                "Mode",
                self.mode.clone(),
                select(
                    MODES
                        .iter()
                        .map(|(i, n, _)| (i.to_string(), n.to_string()))
                        .collect(),
                ),
            )
            .category(SessionConfigOptionCategory::Mode)
            .description("What the agent may do without asking"),
            SessionConfigOption::select(
                "model",
                "Model",
                self.model.clone(),
                select(models.into_iter().map(|m| (m.clone(), m)).collect()),
            )
            .category(SessionConfigOptionCategory::Model),
            SessionConfigOption::select(
                "reasoning_effort",
                "Reasoning effort",
                self.effort.clone(),
                select(
                    EFFORTS
                        .iter()
                        .map(|(i, n)| (i.to_string(), n.to_string()))
                        .collect(),
                ),
            )
            .category(SessionConfigOptionCategory::ThoughtLevel),
            SessionConfigOption::select(
                "harness",
                "Harness",
                self.harness.clone(),
                select(
                    harness::HARNESSES
                        .iter()
                        .map(|h| (h.to_string(), h.to_string()))
                        .collect(),
                ),
            )
            .category(SessionConfigOptionCategory::Other("_harness".into()))
            .description("Prompt and tool set the model works in"),
        ]
    }

    /// Applies one option; Err names what is wrong.
    pub fn set(&mut self, id: &str, value: &str) -> Result<(), String> {
        match id {
            "mode" => {
                if !MODES.iter().any(|(m, _, _)| *m == value) {
                    return Err(format!("unknown mode `{value}`"));
                }
                self.mode = value.into();
            }
            "model" => {
                if value.trim().is_empty() {
                    return Err("model must not be empty".into());
                }
                self.model = value.into();
            }
            "reasoning_effort" => {
                if !EFFORTS.iter().any(|(e, _)| *e == value) {
                    return Err(format!("unknown reasoning effort `{value}`"));
                }
                self.effort = value.into();
            }
            "harness" => {
                if !harness::HARNESSES.contains(&value) {
                    return Err(format!(
                        "unknown harness `{value}` (available: {})",
                        harness::HARNESSES.join(", ")
                    ));
                }
                self.harness = value.into();
            }
            other => return Err(format!("unknown config option `{other}`")),
        }
        Ok(())
    }

    pub fn effort_value(&self) -> Option<String> {
        (self.effort != "default").then(|| self.effort.clone())
    }
}

pub fn mode_policy(mode: &str, configured: ApprovalPolicy) -> (SandboxMode, ApprovalPolicy) {
    match mode {
        "read-only" => (SandboxMode::ReadOnly, ApprovalPolicy::Never),
        "full-access" => (SandboxMode::DangerFullAccess, ApprovalPolicy::OnRequest),
        _ => (
            SandboxMode::WorkspaceWrite,
            match configured {
                ApprovalPolicy::Untrusted => ApprovalPolicy::Untrusted,
                _ => ApprovalPolicy::OnRequest,
            },
        ),
    }
}

/// The ACP mode matching a configured sandbox mode.
pub fn mode_for(sandbox: SandboxMode) -> &'static str {
    match sandbox {
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::WorkspaceWrite => "auto",
        SandboxMode::DangerFullAccess => "full-access",
    }
}
