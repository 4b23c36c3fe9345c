//! The agent core: a Session holds the conversation; a turn loops model → tool calls →
//! results until the model answers, and reports everything as protocol Events. It knows no
//! front end.

pub mod agents_md;
mod compact;
mod subagent;
mod turn;

use anyhow::{Context, Result, bail};
use interpreter_protocol::{Event, SessionConfigured, TokenUsage};
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{ApprovalPolicy, Config, SandboxMode};
use crate::harness::{self, Harness, PromptEnv};
use crate::model::{HistoryItem, ModelClient, ToolSpec};
use crate::sandbox::Policy;
use crate::store::{LogLine, SessionLog, SessionMeta, SessionStore};
use crate::tools::Approver;
use crate::tools::{CallDescription, CommandRunner, ExternalTools, LocalRunner, ToolContext};
use crate::workspace::{FileBackend, Workspace};
use tokio_util::sync::CancellationToken;

/// Where a session's events go. Sending never blocks and never fails the session: a front
/// end that went away just stops listening. Secrets are redacted on the way out
/// (`secrets::EventRedactor`), so no front end ever sees a key.
#[derive(Clone)]
pub struct EventSink(SinkKind, Arc<crate::secrets::EventRedactor>);

#[derive(Clone)]
enum SinkKind {
    Channel(tokio::sync::mpsc::UnboundedSender<Event>),
    /// Translated at once, in the sender's task, so order with other output is kept.
    Callback(Arc<dyn Fn(Event) + Send + Sync>),
}

impl EventSink {
    pub fn new() -> (EventSink, tokio::sync::mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (EventSink(SinkKind::Channel(tx), Default::default()), rx)
    }

    pub fn from_fn(f: impl Fn(Event) + Send + Sync + 'static) -> EventSink {
        EventSink(SinkKind::Callback(Arc::new(f)), Default::default())
    }

    pub fn send(&self, e: Event) {
        for e in self.1.redact(e) {
            match &self.0 {
                SinkKind::Channel(tx) => {
                    let _ = tx.send(e);
                }
                SinkKind::Callback(f) => f(e),
            }
        }
    }
}

pub struct SessionOptions {
    pub config: Config,
    pub cwd: PathBuf,
    pub extra_roots: Vec<PathBuf>,
    pub backend: Arc<dyn FileBackend>,
    pub approver: Arc<dyn Approver>,
    pub events: EventSink,
    /// Write the session log (off for `--ephemeral`).
    pub persist: bool,
    pub output_schema: Option<serde_json::Value>,
}

pub struct Session {
    pub id: String,
    pub config: Config,
    client: ModelClient,
    harness: Box<dyn Harness>,
    system_prompt: String,
    tools: Vec<ToolSpec>,
    history: Vec<HistoryItem>,
    workspace: Arc<Workspace>,
    policy: Arc<Policy>,
    approver: Arc<dyn Approver>,
    runner: Arc<dyn CommandRunner>,
    events: EventSink,
    log: Option<SessionLog>,
    env: PromptEnv,
    output_schema: Option<serde_json::Value>,
    external: Option<Arc<dyn ExternalTools>>,
    total_usage: TokenUsage,
    pub title: Option<String>,
    /// > 0 while a subagent runs (its items are not logged).
    subagent_depth: u32,
    /// Changes and plans of past tool calls, by call id (for replay).
    details: std::collections::HashMap<String, crate::store::ToolDetail>,
}

impl Session {
    /// Starts a new session. Fails with [`crate::config::MissingKey`] inside the error when the
    /// provider needs a key that is not set.
    pub fn create(opts: SessionOptions) -> Result<Session> {
        Self::create_with_id(opts, uuid::Uuid::now_v7().to_string())
    }

    /// Like [`Session::create`] with an id chosen by the caller (front ends that must know
    /// the id before the session exists).
    pub fn create_with_id(opts: SessionOptions, id: String) -> Result<Session> {
        let mut s = Self::build(opts, id, None)?;
        let initial = s.harness.initial_context(&s.env);
        if let Some(log) = &mut s.log {
            for item in &initial {
                log.append(&LogLine::Item { item: item.clone() })?;
            }
            log.sync()?;
        }
        s.history = initial;
        s.announce();
        Ok(s)
    }

    /// Reopens a stored session with its whole history.
    pub fn resume(opts: SessionOptions, id: &str) -> Result<Session> {
        let store = SessionStore::new(&opts.config.home);
        let loaded = store.load(id)?;
        for w in &loaded.warnings {
            tracing::warn!("{w}");
            opts.events.send(Event::Warning { message: w.clone() });
        }
        let mut s = Self::build(opts, id.to_string(), Some(loaded.harness.clone()))?;
        s.history = loaded.history;
        s.title = loaded.title;
        s.details = loaded.details;
        s.announce();
        Ok(s)
    }

    fn build(opts: SessionOptions, id: String, harness_name: Option<String>) -> Result<Session> {
        let SessionOptions {
            config,
            cwd,
            extra_roots,
            backend,
            approver,
            events,
            persist,
            output_schema,
        } = opts;
        let api_key = config.provider.resolve_api_key()?;
        let client = ModelClient::new(config.provider.clone(), api_key)?;
        let workspace = Arc::new(
            Workspace::new(&cwd, &extra_roots, backend)
                .with_context(|| format!("opening workspace {}", cwd.display()))?,
        );
        let harness_name = harness_name
            .or_else(|| config.harness.clone())
            .unwrap_or_else(|| harness::default_for_model(&config.model).to_string());
        let Some(harness) = harness::by_name(&harness_name) else {
            bail!(
                "unknown harness `{harness_name}` (available: {})",
                harness::HARNESSES.join(", ")
            );
        };
        // What the session reads unasked is confined like the file tools' paths.
        let mut reads = crate::workspace::startup::StartupReads::new(workspace.roots());
        let agents = agents_md::load(
            &mut reads,
            &config.home,
            workspace.cwd(),
            config.project_doc_max_bytes,
        );
        let skills =
            crate::skills::discover(&mut reads, workspace.cwd(), dirs::home_dir().as_deref());
        for w in &skills.warnings {
            events.send(Event::Warning { message: w.clone() });
        }
        let env = PromptEnv::detect(
            workspace.cwd().to_path_buf(),
            workspace.roots().to_vec(),
            agents,
            config.sandbox_mode.as_str(),
            config.approval_policy.as_str(),
            skills.skills,
            &mut reads,
        );
        for message in reads.take_warnings() {
            events.send(Event::Warning { message });
        }
        let store = SessionStore::new(&config.home);
        let log = if !persist {
            None
        } else if store.exists(&id) {
            Some(store.reopen(&id)?)
        } else {
            Some(store.create(&SessionMeta {
                id: id.clone(),
                cwd: workspace.cwd().to_path_buf(),
                created_at: chrono::Utc::now().to_rfc3339(),
                provider: config.provider.id.clone(),
                model: config.model.clone(),
                harness: harness.name().to_string(),
                additional_directories: extra_roots.clone(),
            })?)
        };
        let policy = Arc::new(
            Policy::new(config.sandbox_mode, config.approval_policy)
                .with_workspace_write(config.network_access, config.writable_roots.clone()),
        );
        for message in crate::sandbox::session_warnings(&policy, &config.home) {
            events.send(Event::Warning { message });
        }
        Ok(Session {
            system_prompt: harness.system_prompt(&env),
            tools: harness.tools(),
            id,
            client,
            harness,
            history: Vec::new(),
            workspace,
            policy,
            approver,
            runner: Arc::new(LocalRunner {
                max_processes: config.max_processes,
            }),
            events,
            log,
            env,
            output_schema,
            external: None,
            total_usage: TokenUsage::default(),
            title: None,
            subagent_depth: 0,
            details: Default::default(),
            config,
        })
    }

    fn announce(&self) {
        self.events
            .send(Event::SessionConfigured(SessionConfigured {
                session_id: self.id.clone(),
                provider: self.config.provider.id.clone(),
                model: self.config.model.clone(),
                harness: self.harness.name().to_string(),
                cwd: self.workspace.cwd().to_path_buf(),
            }));
    }

    pub fn skills(&self) -> &[crate::skills::Skill] {
        &self.env.skills
    }

    /// `/<skill> args` as the prompt that invokes the skill, when `text` names one.
    pub fn expand_skill(&self, text: &str) -> Option<String> {
        let rest = text.trim_start().strip_prefix('/')?;
        let (name, args) = match rest.split_once(char::is_whitespace) {
            Some((n, a)) => (n, a.trim()),
            None => (rest.trim(), ""),
        };
        let skill = self.env.skills.iter().find(|s| s.name == name)?;
        Some(crate::skills::invocation(skill, args))
    }

    /// The size of what this session sends before any conversation: system prompt, tool
    /// schemas and initial context, in approximate tokens.
    pub fn prompt_budget(&self) -> (usize, usize) {
        use crate::tools::truncate::approx_tokens;
        let tools = serde_json::to_string(&self.tools).unwrap_or_default();
        let initial: usize = self
            .harness
            .initial_context(&self.env)
            .iter()
            .map(|h| match h {
                HistoryItem::User { text, .. } => approx_tokens(text),
                _ => 0,
            })
            .sum();
        (
            approx_tokens(&self.system_prompt) + initial,
            approx_tokens(&tools),
        )
    }

    /// What a past tool call changed, for replaying it to a front end.
    pub fn tool_detail(&self, call_id: &str) -> Option<&crate::store::ToolDetail> {
        self.details.get(call_id)
    }

    pub fn history(&self) -> &[HistoryItem] {
        &self.history
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    pub fn harness_name(&self) -> &'static str {
        self.harness.name()
    }

    pub fn total_usage(&self) -> TokenUsage {
        self.total_usage
    }

    /// Switches the harness; it takes effect on the next model request and is logged.
    pub fn set_harness(&mut self, name: &str) -> Result<()> {
        let Some(h) = harness::by_name(name) else {
            bail!(
                "unknown harness `{name}` (available: {})",
                harness::HARNESSES.join(", ")
            );
        };
        self.system_prompt = h.system_prompt(&self.env);
        self.harness = h;
        self.refresh_tools();
        self.log_line(&LogLine::Harness {
            harness: name.to_string(),
        });
        self.events.send(Event::HarnessChanged {
            harness: name.to_string(),
        });
        Ok(())
    }

    /// Where shell commands run (the client's terminals in ACP, when enabled).
    pub fn set_command_runner(&mut self, runner: Arc<dyn CommandRunner>) {
        self.runner = runner;
    }

    /// Adds tools from outside the harness (MCP); they follow the harness's own tools.
    pub fn set_external_tools(&mut self, tools: Option<Arc<dyn ExternalTools>>) {
        self.external = tools;
        self.refresh_tools();
    }

    fn refresh_tools(&mut self) {
        let mut tools = self.harness.tools();
        if let Some(ext) = &self.external {
            tools.extend(ext.specs());
        }
        self.tools = tools;
    }

    /// Changes sandbox mode and approval policy; remembered "always allow" answers stay.
    pub fn set_modes(&mut self, sandbox: SandboxMode, approval: ApprovalPolicy) {
        self.config.sandbox_mode = sandbox;
        self.config.approval_policy = approval;
        self.env.sandbox = sandbox.as_str().to_string();
        self.env.approval = approval.as_str().to_string();
        self.policy = Arc::new(self.policy.with_modes(sandbox, approval));
    }

    /// Whether commands always ask (ACP `auto` mode), keeping remembered answers.
    pub fn set_ask_commands(&mut self, ask: bool) {
        let p = self
            .policy
            .with_modes(self.config.sandbox_mode, self.config.approval_policy)
            .with_ask_commands(ask);
        self.policy = Arc::new(p);
    }

    pub fn set_reasoning_effort(&mut self, effort: Option<String>) {
        self.config.reasoning_effort = effort;
    }

    /// How the current harness shows a call (for replaying history to a front end).
    pub fn describe_call(&self, tool: &str, args: &serde_json::Value) -> Option<CallDescription> {
        let ctx = self.tool_context(CancellationToken::new(), String::new());
        self.harness
            .describe(tool, args, &ctx)
            .or_else(|| self.external.as_ref()?.describe(tool, args))
    }

    fn tool_context(&self, cancel: CancellationToken, call_id: String) -> ToolContext {
        ToolContext {
            workspace: self.workspace.clone(),
            policy: self.policy.clone(),
            approver: self.approver.clone(),
            runner: self.runner.clone(),
            events: self.events.clone(),
            cancel,
            call_id,
            output_token_limit: self.config.tool_output_token_limit,
        }
    }

    pub fn set_model(&mut self, model: &str) {
        self.config.model = model.to_string();
        self.log_line(&LogLine::Model {
            provider: self.config.provider.id.clone(),
            model: model.to_string(),
        });
        self.events.send(Event::ModelChanged {
            provider: self.config.provider.id.clone(),
            model: model.to_string(),
        });
    }

    /// The exact first request body this session would send for `prompt`.
    pub fn preview_request(&self, prompt: &str) -> serde_json::Value {
        let mut history = self.history.clone();
        history.push(HistoryItem::User {
            text: prompt.to_string(),
            images: vec![],
            synthetic: false,
        });
        history.extend(self.pending_reminder());
        let req = self.model_request(&history);
        self.client.request_body(&req)
    }

    fn model_request<'a>(&'a self, history: &'a [HistoryItem]) -> crate::model::ModelRequest<'a> {
        crate::model::ModelRequest {
            model: &self.config.model,
            system: &self.system_prompt,
            history,
            tools: &self.tools,
            prompt_cache_key: &self.id,
            max_output_tokens: self.config.max_output_tokens,
            reasoning_effort: self.config.reasoning_effort.as_deref(),
            output_schema: self.output_schema.as_ref(),
        }
    }

    fn log_line(&mut self, line: &LogLine) {
        if let Some(log) = &mut self.log
            && let Err(e) = log.append(line)
        {
            tracing::error!("{e:#}");
            self.events.send(Event::Warning {
                message: format!("could not write the session log: {e:#}"),
            });
        }
    }

    fn push_history(&mut self, mut item: HistoryItem) {
        crate::secrets::redact_history_item(&mut item);
        if self.subagent_depth == 0 {
            self.log_line(&LogLine::Item { item: item.clone() });
        }
        self.history.push(item);
    }
}
