//! Session modes and config options (mode, model, reasoning effort, harness), kept in sync
//! between the legacy `modes` field and `configOptions`.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState,
};

use interpreter_protocol::{ApprovalPolicy, Op, PermissionMode, ReasoningEffort};

use interpreter_core::harness;
use interpreter_core::model::catalog;

/// The modes, with the names and descriptions ACP clients show.
pub(super) const MODES: &[(PermissionMode, &str, &str)] = &[
    (
        PermissionMode::ReadOnly,
        "Read-only",
        "No file changes: edits are refused; commands run in a read-only sandbox (without one, only read-only commands like ls or git status run).",
    ),
    (
        PermissionMode::Auto,
        "Auto",
        "Edits inside the workspace are allowed; commands and anything else ask first (read-only ones like ls or git status run).",
    ),
    (
        PermissionMode::FullAccess,
        "Full access",
        "Edits and commands run without asking and without a sandbox (dangerous commands still ask).",
    ),
];

/// The efforts offered; `None` is the provider's default.
pub(super) const EFFORTS: &[(Option<ReasoningEffort>, &str)] = &[
    (None, "Default"),
    (Some(ReasoningEffort::Low), "Low"),
    (Some(ReasoningEffort::Medium), "Medium"),
    (Some(ReasoningEffort::High), "High"),
    (Some(ReasoningEffort::Max), "Max"),
];

fn effort_id(e: Option<ReasoningEffort>) -> &'static str {
    e.map_or("default", ReasoningEffort::as_str)
}

/// What the user picked for a session, as the client's options show it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Settings {
    pub mode: PermissionMode,
    pub model: String,
    pub provider: String,
    pub effort: Option<ReasoningEffort>,
    pub harness: String,
    /// The configured approval policy; `auto` mode uses it (`untrusted` asks for edits too).
    pub base_approval: ApprovalPolicy,
}

impl Settings {
    /// Placeholder settings of a session still opening (its open replaces them).
    pub(super) fn opening() -> Settings {
        Settings {
            mode: PermissionMode::ReadOnly,
            model: String::new(),
            provider: String::new(),
            effort: None,
            harness: String::new(),
            base_approval: ApprovalPolicy::OnRequest,
        }
    }

    /// These settings made to match what the session says it has now.
    pub(super) fn follow(&mut self, s: &interpreter_protocol::SessionSettings) {
        self.mode = PermissionMode::of(s.permissions);
        self.model = s.model.clone();
        self.provider = s.provider.clone();
        self.effort = s.effort;
        self.harness = s.harness.clone();
    }

    /// The op that makes the session match option `id` of these settings.
    pub(super) fn op_for(&self, id: &str) -> Option<Op> {
        Some(match id {
            "mode" => Op::SetPermissions(self.mode.permissions(self.base_approval)),
            "model" => Op::SetModel {
                model: self.model.clone(),
            },
            "reasoning_effort" => Op::SetEffort {
                effort: self.effort,
            },
            "harness" => Op::SetHarness {
                harness: self.harness.clone(),
            },
            _ => return None,
        })
    }

    pub(super) fn mode_state(&self) -> SessionModeState {
        SessionModeState::new(
            self.mode.as_str(),
            MODES
                .iter()
                .map(|(id, name, desc)| SessionMode::new(id.as_str(), *name).description(*desc))
                .collect::<Vec<_>>(),
        )
    }

    pub(super) fn config_options(&self) -> Vec<SessionConfigOption> {
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
                self.mode.as_str(),
                select(
                    MODES
                        .iter()
                        .map(|(i, n, _)| (i.as_str().to_string(), n.to_string()))
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
                effort_id(self.effort),
                select(
                    EFFORTS
                        .iter()
                        .map(|(i, n)| (effort_id(*i).to_string(), n.to_string()))
                        .collect(),
                ),
            )
            .category(SessionConfigOptionCategory::ThoughtLevel),
            SessionConfigOption::select(
                "harness",
                "Harness",
                self.harness.clone(),
                select(
                    harness::harnesses()
                        .map(|h| (h.name.to_string(), h.name.to_string()))
                        .collect(),
                ),
            )
            .category(SessionConfigOptionCategory::Other("_harness".into()))
            .description("Prompt and tool set the model works in"),
        ]
    }

    /// The effort's option id.
    pub(super) fn effort_id(&self) -> &'static str {
        effort_id(self.effort)
    }

    /// Applies one option; Err names what is wrong.
    pub(super) fn set(&mut self, id: &str, value: &str) -> Result<(), String> {
        match id {
            "mode" => {
                self.mode = value
                    .parse()
                    .map_err(|_| format!("unknown mode `{value}`"))?;
            }
            "model" => {
                if value.trim().is_empty() {
                    return Err("model must not be empty".into());
                }
                self.model = value.into();
            }
            "reasoning_effort" => {
                self.effort = EFFORTS
                    .iter()
                    .map(|(e, _)| *e)
                    .find(|e| effort_id(*e) == value)
                    .ok_or_else(|| format!("unknown reasoning effort `{value}`"))?;
            }
            "harness" => {
                harness::check(value)?;
                self.harness = value.into();
            }
            other => return Err(format!("unknown config option `{other}`")),
        }
        Ok(())
    }
}
