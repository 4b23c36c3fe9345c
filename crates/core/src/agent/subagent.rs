//! Subagents: a fresh context for a self-contained task. A subagent is a session of its own
//! (its own id, history, tool table and event sink) linked to its parent by the parent's id;
//! it shares the parent's workspace, model client and approver, and its policy is the
//! parent's narrowed by its type, never widened ([`child_policy`]). A custom agent
//! (`custom::agents`) brings its own prompt, tools, sandbox and model; a model of another
//! configured provider (or `explore_model`'s) gets a client of its own. Nothing of the
//! parent is swapped or borrowed, so a subagent that panics or is cancelled leaves the
//! parent exactly as it was. Only its final message comes back, as the tool's result.

use futures::FutureExt;
use futures::future::BoxFuture;
use interpreter_protocol::{Event, Permissions, SubagentState, TokenUsage, TurnEndReason};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

use super::EventSink;
use super::active_turn::ActiveTurn;
use super::services::SessionServices;
use super::session::Session;
use super::state::{FinishedSubagent, SessionState};
use crate::config::{Config, SandboxMode};
use crate::custom::CustomAgent;
use crate::harness::Harness;
use crate::model::{HistoryItem, Parts as _};
use crate::sandbox::Policy;
use crate::tools::table::ToolTable;
use crate::tools::{SubagentTask, Subagents, ToolOutcome};

/// What a subagent inherits, taken from the parent when a tool call starts.
pub(super) struct SubagentRunner {
    parent_id: String,
    /// The parent's call that starts subagents, and how it names them (kind, task).
    call_id: String,
    name: String,
    task: String,
    config: Config,
    /// The parent's services; a child narrows its policy and sink, and takes no checkpoints.
    services: SessionServices,
    harness: Arc<dyn Harness>,
    system_prompt: String,
    tools: ToolTable,
    permissions: Permissions,
    /// The custom agents a call may name by type.
    agents: Vec<CustomAgent>,
    /// Where read-only built-in subagents run (`explore_model`), when set.
    explore_model: Option<(String, Option<String>)>,
    /// Tokens the subagents of this call used, for the parent's totals.
    usage: Mutex<TokenUsage>,
}

impl SubagentRunner {
    /// For the call `call_id` with arguments `args` (`subagent_type` and `description`
    /// name the subagent in every harness that has one).
    pub(super) fn new(parent: &Session, call_id: &str, args: &serde_json::Value) -> SubagentRunner {
        let text = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| args.get(*k).and_then(|v| v.as_str()))
                .unwrap_or("")
                .to_string()
        };
        SubagentRunner {
            parent_id: parent.id.clone(),
            call_id: call_id.to_string(),
            name: text(&crate::custom::agents::TYPE_KEYS),
            task: text(&["description", "task"]),
            config: parent.config.clone(),
            services: parent.services.clone(),
            harness: parent.state.harness.clone(),
            system_prompt: parent.state.system_prompt.clone(),
            tools: parent.state.tools.for_subagent(),
            permissions: parent.state.permissions,
            agents: parent.services.env.agents.clone(),
            explore_model: parent.services.env.explore_model.clone(),
            usage: Mutex::new(TokenUsage::default()),
        }
    }

    pub(super) fn usage(&self) -> TokenUsage {
        *self.usage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A client for the configured provider `id`, and `config` set to it; the parent's
    /// client (and model) with a warning when its key is missing.
    fn client_of(&self, id: &str, config: &mut Config) -> crate::model::ModelClient {
        let provider = config.other_providers.iter().find(|p| p.id == id).cloned();
        let made = provider
            .ok_or_else(|| format!("provider `{id}` is not configured"))
            .and_then(|p| {
                let key = p.resolve_api_key().map_err(|e| e.to_string())?;
                let client =
                    crate::model::ModelClient::new(p.clone(), key).map_err(|e| e.to_string())?;
                Ok((p, client))
            });
        match made {
            Ok((provider, client)) => {
                config.provider = provider;
                client
            }
            Err(e) => {
                self.services.events.send(Event::Warning {
                    message: format!(
                        "the subagent runs on the session's model `{}`: {e}",
                        self.config.model
                    ),
                });
                config.model = self.config.model.clone();
                self.services.client.clone()
            }
        }
    }

    /// The custom agent named `kind`, if one is.
    fn agent(&self, kind: &str) -> Option<&CustomAgent> {
        self.agents.iter().find(|a| a.name == kind)
    }

    /// The child session: its own history and sink, and its parent's policy narrowed by its
    /// type ([`child_policy`]). A custom agent brings its prompt, tools, model and sandbox.
    fn child(
        &self,
        task: &SubagentTask,
        resumed: Option<FinishedSubagent>,
        agent: Option<&CustomAgent>,
    ) -> Session {
        let parent = self.services.events.clone();
        let read_only = resumed.as_ref().map_or(task.read_only, |r| r.read_only);
        let id = resumed
            .as_ref()
            .map_or_else(|| uuid::Uuid::now_v7().to_string(), |r| r.id.clone());
        let me = id.clone();
        let me_id = id.clone();
        // The user sees the subagent's tool calls, marked as its own, not its chatter.
        let events = EventSink::from_fn(move |e| match e {
            Event::ToolCallBegin(mut b) => {
                b.subagent = Some(me.clone());
                parent.send(Event::ToolCallBegin(b));
            }
            Event::AgentMessageDelta { .. }
            | Event::AgentMessage { .. }
            | Event::ReasoningDelta { .. }
            | Event::Reasoning { .. }
            | Event::TurnStarted { .. }
            | Event::TokenCount(_)
            | Event::TurnEnded(_) => {}
            other => parent.send(other),
        });
        let policy = child_policy(
            &self.services.policy,
            read_only,
            agent.and_then(|a| a.sandbox),
        );
        // What the child's prompt, plan mode and settings say is what its policy holds.
        let permissions = Permissions {
            sandbox: policy.sandbox,
            approval: policy.approval,
            ..self.permissions
        };
        let mut config = self.config.clone();
        config.sandbox_mode = policy.sandbox;
        config.approval_policy = policy.approval;
        // A custom agent's model, else for a built-in read-only type `explore_model`.
        let pinned = match agent {
            Some(a) => a.model.clone().map(|m| (m, a.provider.clone())),
            None if read_only => self.explore_model.clone(),
            None => None,
        };
        let client = match pinned {
            Some((model, provider)) => {
                config.model = model;
                match provider {
                    Some(id) => self.client_of(&id, &mut config),
                    None => self.services.client.clone(),
                }
            }
            None => self.services.client.clone(),
        };
        if let Some(effort) = agent.and_then(|a| a.effort) {
            config.reasoning_effort = Some(effort);
        }
        let mut env = self.services.env.clone();
        if env.sandbox != policy.sandbox || env.approval != policy.approval {
            let env = Arc::make_mut(&mut env);
            env.sandbox = policy.sandbox;
            env.approval = policy.approval;
        }
        let mut history = match resumed {
            Some(r) => r.history,
            None => self.harness.initial_context(&env),
        };
        history.push(HistoryItem::User {
            text: task.prompt.clone(),
            images: vec![],
            synthetic: false,
        });
        let (system_prompt, tools) = match agent {
            Some(a) => (
                a.prompt.clone(),
                crate::custom::agents::select_tools(a, &self.tools, &self.services.workspace),
            ),
            None => (self.system_prompt.clone(), self.tools.clone()),
        };
        let mut state = SessionState::new(self.harness.clone(), system_prompt, tools, permissions);
        state.history = history;
        state.cache_key = self.harness.prompt_cache_key(&id);
        Session {
            span: super::spans::session(&id, Some(&self.parent_id), &config),
            id,
            config,
            parent_id: Some(self.parent_id.clone()),
            services: SessionServices {
                hooks: Arc::new(self.services.hooks.for_session(me_id, events.clone())),
                client,
                policy,
                events,
                env,
                checkpoints: None,
                external: None,
                ..self.services.clone()
            },
            state,
            active: ActiveTurn::default(),
        }
    }
}

impl Subagents for SubagentRunner {
    fn custom_type(&self) -> bool {
        self.agent(&self.name).is_some()
    }

    fn run<'a>(
        &'a self,
        task: SubagentTask,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let resumed = match &task.resume {
                Some(id) => match self.services.finished_subagents.take(id) {
                    Some(r) => Some(r),
                    None => {
                        return ToolOutcome::error(format!(
                            "No finished subagent has the id {id}: start a new one."
                        ));
                    }
                },
                None => None,
            };
            let read_only = resumed.as_ref().map_or(task.read_only, |r| r.read_only);
            let kind = resumed
                .as_ref()
                .map_or_else(|| self.name.clone(), |r| r.kind.clone());
            let mut child = self.child(&task, resumed, self.agent(&kind));
            self.services.events.send(Event::SubagentStarted(
                interpreter_protocol::SubagentStarted {
                    call_id: self.call_id.clone(),
                    session_id: child.id.clone(),
                    name: self.name.clone(),
                    task: self.task.clone(),
                    prompt: task.prompt.clone(),
                },
            ));
            child.place_hooks(None);
            child.start_hooks(Some(&kind), cancel).await;
            let ran = AssertUnwindSafe(child.turn_loop(cancel))
                .catch_unwind()
                .await;
            let ended = |state, summary: &str| {
                self.services.events.send(Event::SubagentEnded(
                    interpreter_protocol::SubagentEnded {
                        call_id: self.call_id.clone(),
                        session_id: child.id.clone(),
                        state,
                        summary: summary.to_string(),
                    },
                ))
            };
            if let Ok(mut u) = self.usage.lock() {
                u.add(&child.state.total_usage);
            }
            let Ok(reason) = ran else {
                tracing::error!("subagent of {} panicked", self.parent_id);
                let outcome = ToolOutcome::error("The subagent failed with an internal error.");
                ended(SubagentState::Failed, &outcome.user_output);
                return outcome;
            };
            let answer = child.state.history.iter().rev().find_map(|h| match h {
                HistoryItem::Assistant(reply) => {
                    Some(reply.text()).filter(|text| !text.trim().is_empty())
                }
                _ => None,
            });
            let state = match &reason {
                TurnEndReason::Cancelled => SubagentState::Cancelled,
                _ if answer.is_none() => SubagentState::Failed,
                TurnEndReason::Failed { .. } => SubagentState::Failed,
                _ => SubagentState::Completed,
            };
            let mut outcome = outcome(reason, answer);
            outcome.subagent = Some(Box::new(crate::tools::SubagentRun {
                id: child.id.clone(),
                kind: kind.clone(),
            }));
            self.services.finished_subagents.keep(FinishedSubagent {
                id: child.id.clone(),
                kind,
                history: std::mem::take(&mut child.state.history),
                read_only,
            });
            ended(state, &outcome.user_output);
            outcome
        })
    }
}

/// A subagent never gets more than its parent: its sandbox and approval policy are the
/// parent's, narrowed by its type, never widened. A read-only subagent (by its type, or a
/// custom agent's `read-only` sandbox) gets [`Policy::narrowed_for_read_only`]; a custom
/// agent asking for `workspace-write` under full access gets that; any other gets the
/// parent's policy itself (the same modes, and the same "always allow" answers, which it
/// shares).
fn child_policy(parent: &Arc<Policy>, read_only: bool, asked: Option<SandboxMode>) -> Arc<Policy> {
    match asked {
        _ if read_only => Arc::new(parent.narrowed_for_read_only()),
        Some(SandboxMode::ReadOnly) => Arc::new(parent.narrowed_for_read_only()),
        Some(SandboxMode::WorkspaceWrite) if parent.sandbox == SandboxMode::DangerFullAccess => {
            Arc::new(parent.with_modes(SandboxMode::WorkspaceWrite, parent.approval))
        }
        _ => parent.clone(),
    }
}

fn outcome(reason: TurnEndReason, answer: Option<String>) -> ToolOutcome {
    match (reason, answer) {
        (TurnEndReason::Completed, Some(a)) => ToolOutcome::ok(a),
        (TurnEndReason::Cancelled, _) => ToolOutcome::error("The subagent was cancelled."),
        (TurnEndReason::Failed { message }, _) => {
            ToolOutcome::error(format!("The subagent failed: {message}"))
        }
        (other, Some(a)) => {
            ToolOutcome::ok(format!("{a}\n\n(The subagent stopped early: {other:?}.)"))
        }
        (other, None) => {
            ToolOutcome::error(format!("The subagent ended without an answer ({other:?})."))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApprovalPolicy;

    /// A subagent that is not read-only gets its parent's policy itself: the same modes and
    /// the same "always allow" answers; a read-only one gets a narrowed copy.
    #[test]
    fn only_a_read_only_subagent_gets_a_policy_of_its_own() {
        let parent = Arc::new(Policy::new(
            SandboxMode::WorkspaceWrite,
            ApprovalPolicy::Untrusted,
        ));
        assert!(Arc::ptr_eq(&child_policy(&parent, false, None), &parent));
        // A custom agent cannot widen it.
        let wider = Some(SandboxMode::DangerFullAccess);
        assert!(Arc::ptr_eq(&child_policy(&parent, false, wider), &parent));
        // A custom agent's sandbox narrows a parent's full access, never the other way.
        let full = Arc::new(Policy::new(
            SandboxMode::DangerFullAccess,
            ApprovalPolicy::Never,
        ));
        let asked = child_policy(&full, false, Some(SandboxMode::WorkspaceWrite));
        assert_eq!(asked.sandbox, SandboxMode::WorkspaceWrite);
        let asked = child_policy(&full, false, Some(SandboxMode::ReadOnly));
        assert_eq!(asked.sandbox, SandboxMode::ReadOnly);
        let child = child_policy(&parent, true, None);
        assert!(!Arc::ptr_eq(&child, &parent));
        assert_eq!(
            (child.sandbox, child.approval),
            (SandboxMode::ReadOnly, ApprovalPolicy::Untrusted)
        );
    }
}
