//! The session's state and how it changes between turns: opening (new or resumed), the
//! settings ops, and what it tells front ends about itself. Only the session's own task
//! touches a `Session`; nothing here is visible outside `agent`.

use anyhow::{Context, anyhow};
use interpreter_protocol::{
    Event, Permissions, ReasoningEffort, SessionConfigured, SessionSettings, SkillInfo,
};
use std::sync::Arc;

use super::active_turn::ActiveTurn;
use super::approvals::Approvals;
use super::handle::OpResult;
use super::services::SessionServices;
use super::state::SessionState;
use super::{EventSink, SessionError, SessionOptions, SessionStart};
use crate::config::Config;
use crate::harness::{self, Harness, PromptEnv};
use crate::model::{HistoryItem, ModelClient};
use crate::sandbox::Policy;
use crate::store::{LogLine, SessionLog, SessionMeta, SessionStore};
use crate::tools::table::ToolTable;
use crate::tools::{ExternalTools, LocalRunner};
use crate::workspace::Workspace;
use crate::workspace::agents_md;

/// Where `Session::build` gets the session's log.
enum LogStart {
    /// A new session: created (when it persists) with a header naming its harness.
    Create,
    /// A stored session's, opened before.
    Opened(Option<SessionLog>),
}

/// One session: who it is, its settings, what it uses ([`SessionServices`]), what it is
/// ([`SessionState`]) and its running turn ([`ActiveTurn`]).
pub(super) struct Session {
    pub(super) id: String,
    pub(super) config: Config,
    /// Set for a subagent: its parent's id. Subagents keep no log and do not compact.
    pub(super) parent_id: Option<String>,
    pub(super) services: SessionServices,
    pub(super) state: SessionState,
    pub(super) active: ActiveTurn,
    /// The session's span (`spans.rs`), the parent of its turns'.
    pub(super) span: tracing::Span,
}

impl Session {
    /// Opens the session `start` names. Reads the disk: call it on a blocking thread.
    pub(super) fn open(opts: SessionOptions, start: SessionStart) -> Result<Session, SessionError> {
        match start {
            SessionStart::New { id } => {
                let id = id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
                let mut s = Self::build(opts, id, None, LogStart::Create)?;
                let initial = s.state.harness.initial_context(&s.services.env);
                if let Some(log) = &mut s.state.log {
                    for item in &initial {
                        log.append(&LogLine::Item { item: item.clone() })?;
                    }
                    log.sync()?;
                }
                s.state.history = initial;
                // The thread's policy, so a resume can restore it (`SessionStore::summary`).
                s.log_line(&LogLine::Permissions {
                    permissions: s.state.permissions,
                });
                s.announce();
                Ok(s)
            }
            SessionStart::Resume { id } => Self::resume(opts, &id, true),
            SessionStart::Load { id } => Self::resume(opts, &id, false),
        }
    }

    /// Opens a stored session. A `writer` takes the log before reading it, so nothing can
    /// be appended between the read and its own first record; otherwise the log is taken at
    /// the first turn, and refused if it changed since this read.
    fn resume(opts: SessionOptions, id: &str, writer: bool) -> Result<Session, SessionError> {
        let store = SessionStore::new(&opts.config.home);
        let claimed = match (opts.persist, writer) {
            // A missing session is reported by the load below.
            (true, true) if store.exists(id) => Some(store.reopen(id).map_err(store_error)?),
            _ => None,
        };
        let loaded = store.load(id).map_err(SessionError::NotFound)?;
        for w in &loaded.warnings {
            tracing::warn!("{w}");
            opts.events.send(Event::Warning { message: w.clone() });
        }
        let log = match claimed {
            Some(log) => Some(log),
            None if opts.persist => Some(store.reopen_later(id, loaded.log_len)?),
            None => None,
        };
        let mut s = Self::build(
            opts,
            id.to_string(),
            Some(loaded.harness.clone()),
            LogStart::Opened(log),
        )?;
        // A `/model` switch is part of the session; it applies while the provider is the same.
        if loaded.provider == s.config.provider.id {
            s.config.model = loaded.model.clone();
        } else if loaded.model != s.config.model {
            s.services.events.send(Event::Warning {
                message: format!(
                    "this session used model `{}` of provider `{}`; it continues with `{}` of `{}`",
                    loaded.model, loaded.provider, s.config.model, s.config.provider.id
                ),
            });
        }
        s.state.history = loaded.history;
        s.state.turns = loaded.turns;
        s.state.title = loaded.title;
        s.state.goal = loaded.goal;
        s.refresh_tools();
        s.state.details = loaded.details;
        // The logged harness did not fit this provider's wire: the replacement is a switch.
        if s.state.harness.name() != loaded.harness {
            s.log_line(&LogLine::Harness {
                harness: s.state.harness.name().to_string(),
            });
            for item in s.state.harness.initial_context(&s.services.env) {
                s.push_history(item);
            }
        }
        s.announce();
        // The goal goes on: faces learn of it once they know the session.
        if let Some(goal) = s.state.goal.clone() {
            s.services.events.send(Event::GoalUpdated {
                goal,
                turn_id: None,
            });
        }
        if !s.state.turns.is_empty() {
            s.send_undoable();
        }
        Ok(s)
    }

    fn build(
        opts: SessionOptions,
        id: String,
        harness_name: Option<String>,
        log: LogStart,
    ) -> Result<Session, SessionError> {
        let SessionOptions {
            mut config,
            cwd,
            extra_roots,
            backend,
            runner,
            events,
            persist,
            output_schema,
            mcp_servers: _,
            face,
            checkpoints,
            events_with_handle: _,
            permissions,
        } = opts;
        let permissions = permissions.unwrap_or(Permissions {
            sandbox: config.sandbox_mode,
            approval: config.approval_policy,
            ask_commands: false,
        });
        config.sandbox_mode = permissions.sandbox;
        config.approval_policy = permissions.approval;
        let api_key = config.provider.resolve_api_key()?;
        let client = ModelClient::new(config.provider.clone(), api_key)?;
        let workspace = Arc::new(
            Workspace::new(&cwd, &extra_roots, backend)
                .with_context(|| format!("opening workspace {}", cwd.display()))?,
        );
        let harness = pick_harness(&config, harness_name, &events)?;
        let mut env = prompt_env(&config, &workspace, &events);
        env.face = face;
        let env = Arc::new(env);
        let log = open_log(
            log,
            &config,
            &id,
            &workspace,
            &extra_roots,
            harness.name(),
            persist,
        )?;
        let policy = session_policy(&config, &events, permissions.ask_commands);
        let approvals = Arc::new(Approvals::default());
        let checkpoint_store = (checkpoints && config.undo_turns > 0).then(|| {
            Arc::new(crate::checkpoint::Lazy::new(
                &config.home,
                &cwd,
                workspace.roots(),
                &id,
            ))
        });
        let mut state = SessionState::new(
            harness.clone(),
            harness.system_prompt(&env),
            harness_tools(&harness, &env),
            permissions,
        );
        state.log = log;
        state.output_schema = output_schema;
        state.cache_key = harness.prompt_cache_key(&id);
        let (tasks, schedule) = session_jobs(&config, &id, persist, face, &events);
        let hooks = session_hooks(&config, &id, &state, &events);
        let services = SessionServices {
            client,
            workspace,
            policy,
            approver: super::approvals::approver(&approvals, &events, &hooks),
            hooks,
            approvals,
            asks: Arc::new(super::Asks::new(
                events.clone(),
                face,
                config.approval_timeout,
            )),
            runner: runner.unwrap_or_else(|| {
                Arc::new(LocalRunner {
                    max_processes: config.max_processes,
                })
            }),
            schedule,
            evidence: Arc::new(crate::tools::evidence::Evidence::new(tasks.dir())),
            task_list: Arc::new(crate::tools::task_list::TaskList::new(tasks.dir())),
            shell: Arc::default(),
            browser: Arc::default(),
            finished_subagents: Arc::default(),
            tasks,
            events,
            env,
            checkpoints: checkpoint_store,
            external: None,
        };
        Ok(Session {
            span: super::spans::session(&id, None, &config),
            id,
            config,
            parent_id: None,
            services,
            state,
            active: ActiveTurn::default(),
        })
    }

    /// An op that could not be carried out: said as `Event::Error`.
    pub(super) fn fail(&self, message: String) -> OpResult {
        self.services.events.send(Event::Error {
            message: message.clone(),
        });
        OpResult::Failed(message)
    }

    pub(super) fn settings(&self) -> SessionSettings {
        SessionSettings {
            provider: self.config.provider.id.clone(),
            model: self.config.model.clone(),
            harness: self.state.harness.name().to_string(),
            permissions: self.state.permissions,
            effort: self.config.reasoning_effort,
            context_window: self.context_window(),
        }
    }

    pub(super) fn context_window(&self) -> Option<u64> {
        self.config
            .context_window
            .or(crate::model::catalog::model_info(&self.config.model).context_window)
    }

    fn announce(&self) {
        self.services
            .events
            .send(Event::SessionConfigured(SessionConfigured {
                session_id: self.id.clone(),
                cwd: self.services.workspace.cwd().to_path_buf(),
                roots: self.services.workspace.roots().to_vec(),
                settings: self.settings(),
                skills: self
                    .services
                    .env
                    .skills
                    .iter()
                    .map(|s| SkillInfo {
                        name: s.name.clone(),
                        description: s.description.clone(),
                        argument_hint: None,
                        command: false,
                    })
                    .chain(self.commands().map(|c| SkillInfo {
                        name: c.name.clone(),
                        description: c.description.clone(),
                        argument_hint: c.argument_hint.clone(),
                        command: true,
                    }))
                    .collect(),
                title: self.state.title.clone(),
            }));
    }

    /// The custom commands `/` reaches: a skill of the same name wins, as in Claude Code.
    pub(super) fn commands(&self) -> impl Iterator<Item = &crate::custom::CustomCommand> {
        let env = &self.services.env;
        env.commands
            .iter()
            .filter(|c| !env.skills.iter().any(|s| s.name == c.name))
    }

    pub(super) fn settings_changed(&self) {
        self.services
            .events
            .send(Event::SettingsChanged(self.settings()));
    }

    /// Switches the harness; it takes effect on the next model request and is logged.
    /// A new harness also sends its start-of-session context (project instructions, the
    /// skills for its Skill tool), so the model knows what the new tools serve.
    pub(super) fn set_harness(&mut self, name: &str) -> Result<(), String> {
        let h = harness::for_wire(name, self.config.provider.wire_api)?;
        let changed = h.name() != self.state.harness.name();
        self.state.system_prompt = h.system_prompt(&self.services.env);
        self.state.cache_key = h.prompt_cache_key(&self.id);
        self.state.harness = h;
        self.refresh_tools();
        self.log_line(&LogLine::Harness {
            harness: name.to_string(),
        });
        if changed {
            for item in self.state.harness.initial_context(&self.services.env) {
                self.push_history(item);
            }
        }
        self.settings_changed();
        Ok(())
    }

    /// Works in a worktree from the next call on, or back in the folder from before: the
    /// workspace (its boundary and what commands may write), the prompt's folder and project
    /// files, and the tools move there. The prompt changes once per move.
    pub(super) fn move_worktree(
        &mut self,
        m: crate::tools::worktree::WorktreeMove,
    ) -> Result<(), String> {
        use crate::tools::worktree::WorktreeMove;
        let (cwd, next) = match m {
            WorktreeMove::Enter(w) => (w.path.clone(), Some(Arc::new(*w))),
            WorktreeMove::Exit => match &self.state.worktree {
                Some(w) => (w.original.clone(), None),
                None => return Err("No worktree session is active.".into()),
            },
        };
        let workspace = self
            .services
            .workspace
            .relocated(&cwd)
            .map_err(|e| format!("Could not work in {}: {e}", cwd.display()))?;
        let old = self.services.env.clone();
        let mut env = prompt_env(&self.config, &workspace, &self.services.events);
        env.face = old.face;
        env.plan_mode = old.plan_mode;
        self.services.workspace = Arc::new(workspace);
        self.services.env = Arc::new(env);
        self.state.system_prompt = self.state.harness.system_prompt(&self.services.env);
        self.state.worktree = next;
        self.refresh_tools();
        Ok(())
    }

    /// Sets the tools from outside the harness (MCP), replacing any; they follow the
    /// harness's own tools.
    pub(super) fn set_external_tools(&mut self, tools: Option<Arc<dyn ExternalTools>>) {
        self.services.external = tools;
        self.refresh_tools();
    }

    /// The harness's tools, the external ones, and `update_goal` while there is a goal.
    pub(super) fn refresh_tools(&mut self) {
        let tools = tool_table(
            &self.state.harness,
            &self.services.env,
            self.services.external.as_ref(),
        );
        // A harness with goal tools of its own (Kimi Code's UpdateGoal) needs no second one.
        let own = tools.get(crate::tools::goal::OWN_UPDATE_GOAL).is_some();
        self.state.tools = match &self.state.goal {
            Some(_) if !own => tools
                .extended([std::sync::Arc::new(crate::tools::goal::UpdateGoal::new())
                    as std::sync::Arc<dyn crate::tools::table::Tool>]),
            _ => tools,
        };
    }

    /// Changes what runs without asking (the user's choice: it also ends plan mode);
    /// remembered "always allow" answers stay. The harness tells the model with its next
    /// reminder.
    pub(super) fn set_permissions(&mut self, p: Permissions) {
        self.state.plan_saved = None;
        Arc::make_mut(&mut self.services.env).plan_mode = false;
        self.apply_permissions(p);
    }

    /// Plan mode (a tool asked): read-only until the user approves leaving it, then the
    /// permissions from before come back.
    pub(super) fn change_mode(&mut self, change: crate::tools::ModeChange) {
        use crate::tools::ModeChange;
        match change {
            ModeChange::EnterPlan if self.state.plan_saved.is_none() => {
                self.state.plan_saved = Some(self.state.permissions);
                Arc::make_mut(&mut self.services.env).plan_mode = true;
                let read_only = interpreter_protocol::PermissionMode::ReadOnly
                    .permissions(self.state.permissions.approval);
                self.apply_permissions(read_only);
            }
            ModeChange::ExitPlan => {
                if let Some(p) = self.state.plan_saved.take() {
                    Arc::make_mut(&mut self.services.env).plan_mode = false;
                    self.apply_permissions(p);
                }
            }
            ModeChange::Goal(status) => {
                let turn = self
                    .active
                    .running
                    .as_ref()
                    .map(|t| t.id.clone())
                    .unwrap_or_default();
                self.goal_status_from_model(status, &turn);
            }
            ModeChange::GoalEdit(edit) => self.goal_edit_from_model(*edit),
            ModeChange::EnterPlan
            | ModeChange::StopTurn
            | ModeChange::RevertTurns(_)
            | ModeChange::Worktree(_) => {}
        }
    }

    fn apply_permissions(&mut self, p: Permissions) {
        self.state.permissions = p;
        self.config.sandbox_mode = p.sandbox;
        self.config.approval_policy = p.approval;
        let env = Arc::make_mut(&mut self.services.env);
        env.sandbox = p.sandbox;
        env.approval = p.approval;
        self.services.policy = Arc::new(
            self.services
                .policy
                .with_modes(p.sandbox, p.approval)
                .with_ask_commands(p.ask_commands),
        );
        if self.parent_id.is_none() {
            self.log_line(&LogLine::Permissions { permissions: p });
        }
        self.settings_changed();
    }

    /// Names the session: logged, kept for replay and announced.
    pub(super) fn set_title(&mut self, title: &str) -> Result<(), String> {
        let title = title.trim();
        if title.is_empty() {
            return Err("the title must not be empty".into());
        }
        self.log_line(&LogLine::Title {
            title: title.to_string(),
        });
        self.state.title = Some(title.to_string());
        self.services.events.send(Event::TitleChanged {
            title: title.to_string(),
        });
        Ok(())
    }

    pub(super) fn set_effort(&mut self, effort: Option<ReasoningEffort>) {
        self.config.reasoning_effort = effort;
        self.settings_changed();
    }

    pub(super) fn set_model(&mut self, model: &str) {
        self.config.model = model.to_string();
        self.log_line(&LogLine::Model {
            provider: self.config.provider.id.clone(),
            model: model.to_string(),
        });
        self.settings_changed();
    }

    /// Emits the exact first request body this session would send for `prompt`.
    pub(super) fn preview_request(&self, prompt: &str) {
        use crate::tools::truncate::approx_tokens;
        let mut history = self.state.history.clone();
        history.extend(self.pending_reminder());
        history.push(HistoryItem::User {
            text: prompt.to_string(),
            images: vec![],
            synthetic: false,
        });
        let history = self.wire_history(&history);
        let body = self
            .services
            .client
            .request_body(&self.model_request(&history));
        let tools = serde_json::to_string(self.tool_specs()).unwrap_or_default();
        let initial: usize = self
            .state
            .harness
            .initial_context(&self.services.env)
            .iter()
            .map(|h| match h {
                HistoryItem::User { text, .. } => approx_tokens(text),
                _ => 0,
            })
            .sum();
        self.services.events.send(Event::RequestPreview {
            body,
            prompt_tokens: (approx_tokens(&self.state.system_prompt) + initial) as u64,
            tool_tokens: approx_tokens(&tools) as u64,
        });
    }

    pub(super) fn model_request<'a>(
        &'a self,
        history: &'a [HistoryItem],
    ) -> crate::model::ModelRequest<'a> {
        crate::model::ModelRequest {
            model: &self.config.model,
            system: &self.state.system_prompt,
            history,
            tools: self.tool_specs(),
            prompt_cache_key: &self.state.cache_key,
            max_output_tokens: self.config.max_output_tokens,
            reasoning_effort: self.config.reasoning_effort.map(ReasoningEffort::as_str),
            output_schema: self.state.output_schema.as_ref(),
            hosted_search: match self.config.web.search {
                Some(crate::config::web::SearchBackend::MoonshotBuiltin) => {
                    Some(crate::model::HostedSearch::Moonshot)
                }
                Some(crate::config::web::SearchBackend::OpenAiHosted { live }) => {
                    Some(crate::model::HostedSearch::OpenAi { live })
                }
                _ => None,
            },
            shape: self.state.harness.request_shape(),
        }
    }

    /// The tool schemas the request carries: none for a harness that speaks in text actions.
    fn tool_specs(&self) -> &[crate::model::ToolSpec] {
        if self
            .state
            .harness
            .text_actions()
            .is_some_and(|t| !t.tools_on_wire())
        {
            return &[];
        }
        self.state.tools.spec_slice()
    }

    /// `history` as the harness's requests show it: as stored, or rendered by a text-action
    /// harness (calls as text, results as observations).
    pub(super) fn wire_history<'a>(
        &self,
        history: &'a [HistoryItem],
    ) -> std::borrow::Cow<'a, [HistoryItem]> {
        match self.state.harness.text_actions() {
            Some(t) => t
                .render_history(&self.services.env, history, self.state.tools.spec_slice())
                .into(),
            None => history.into(),
        }
    }

    /// Appends to the session log. In a turn, a failed write is reported once, by the
    /// turn's end, which fails; between turns it is a warning.
    pub(super) fn log_line(&mut self, line: &LogLine) {
        let Some(log) = &mut self.state.log else {
            return;
        };
        match log.append(line) {
            Err(e) if log.in_turn() => tracing::debug!("{e:#}"),
            Err(e) => {
                tracing::error!("{e:#}");
                self.services.events.send(Event::Warning {
                    message: format!("could not write the session log: {e:#}"),
                });
            }
            Ok(()) => {}
        }
    }

    pub(super) fn push_history(&mut self, mut item: HistoryItem) {
        crate::model::redact_history_item(&mut item);
        if self.parent_id.is_none() {
            self.log_line(&LogLine::Item { item: item.clone() });
        }
        self.state.history.push(item);
    }

    /// The reminder to send now, if it differs from the last one in history.
    pub(super) fn pending_reminder(&self) -> Option<HistoryItem> {
        let today = chrono::Local::now().format("%Y-%m-%d").to_string();
        let reminder = self.state.harness.reminder(&self.services.env, &today)?;
        let prefix = self.state.harness.reminder_prefix();
        let last = self.state.history.iter().rev().find_map(|h| match h {
            HistoryItem::User {
                text,
                synthetic: true,
                ..
            } if text.starts_with(prefix) => Some(text.as_str()),
            _ => None,
        });
        (last != Some(reminder.as_str())).then(|| HistoryItem::User {
            text: reminder,
            images: vec![],
            synthetic: true,
        })
    }
}

/// The harness's tools, and the hidden answer to a hosted search's calls.
fn harness_tools(harness: &Arc<dyn Harness>, env: &PromptEnv) -> ToolTable {
    let tools = crate::custom::agents::list_in(harness.tools(env), &env.agents);
    match env.web.moonshot_search {
        true => tools.also_hidden([crate::harness::web_tools::moonshot_search()]),
        false => tools,
    }
}

/// The harness's tools followed by the external ones, named the harness's way and kept
/// unique and valid after every naming rule.
pub(super) fn tool_table(
    harness: &Arc<dyn Harness>,
    env: &PromptEnv,
    external: Option<&Arc<dyn ExternalTools>>,
) -> ToolTable {
    let tools = harness_tools(harness, env);
    let Some(ext) = external else {
        return tools;
    };
    let rename = |n: &str| harness.external_tool_name(n);
    let entries = crate::tools::external_entries(ext.clone(), &rename, tools.all_names());
    tools.extended(entries)
}

/// The session's harness: the one its log names (resume), else the configured one, else
/// the default for the model and provider. A logged harness that does not fit the wire is
/// replaced by the default, with a warning; a configured one is an error.
fn pick_harness(
    config: &Config,
    logged: Option<String>,
    events: &EventSink,
) -> anyhow::Result<Arc<dyn Harness>> {
    let wire = config.provider.wire_api;
    if let Some(name) = logged {
        match harness::for_wire(&name, wire) {
            Ok(h) => return Ok(h),
            Err(e) => events.send(Event::Warning {
                message: format!("{e}; the session continues with the default harness"),
            }),
        }
    }
    let name = match &config.harness {
        Some(h) => h.clone(),
        None => harness::default_for(&config.provider, &config.model).to_string(),
    };
    harness::for_wire(&name, wire).map_err(|e| anyhow!("{e} (provider `{}`)", config.provider.id))
}

/// The facts the prompt is built from: AGENTS.md, skills, the environment.
/// What the session reads unasked is confined like the file tools' paths.
/// What runs for a session besides its turns: background tasks, and scheduled prompts (kept
/// only where the face stays open between turns).
fn session_jobs(
    config: &Config,
    id: &str,
    persist: bool,
    face: crate::tools::events::FaceAbilities,
    events: &EventSink,
) -> (
    Arc<crate::tools::background::BackgroundTasks>,
    Arc<crate::tools::schedule::Schedule>,
) {
    (
        Arc::new(crate::tools::background::BackgroundTasks::new(
            &config.home,
            id,
            persist,
            events.clone(),
        )),
        Arc::new(crate::tools::schedule::Schedule::new(
            &config.home,
            id,
            persist,
            face.schedules,
        )),
    )
}

fn prompt_env(config: &Config, workspace: &Workspace, events: &EventSink) -> PromptEnv {
    let mut reads = crate::workspace::startup::StartupReads::new(workspace.roots());
    let agents = agents_md::load(
        &mut reads,
        &config.home,
        workspace.cwd(),
        config.project_doc_max_bytes,
        &config.project_doc_fallback_filenames,
    );
    let skills = crate::skills::discover(&mut reads, workspace.cwd(), dirs::home_dir().as_deref());
    for w in &skills.warnings {
        events.send(Event::Warning { message: w.clone() });
    }
    let custom = custom_files(config, workspace, &mut reads);
    for w in &custom.warnings {
        events.send(Event::Warning { message: w.clone() });
    }
    let env = PromptEnv::detect(
        workspace.cwd().to_path_buf(),
        workspace.roots().to_vec(),
        agents,
        config.sandbox_mode,
        config.approval_policy,
        skills.skills,
        &mut reads,
    );
    for message in reads.take_warnings() {
        events.send(Event::Warning { message });
    }
    PromptEnv {
        web: crate::harness::WebTools {
            fetch: config.web.enabled,
            search: config.web.can_search(),
            moonshot_search: config.web.search
                == Some(crate::config::web::SearchBackend::MoonshotBuiltin),
        },
        images: crate::model::catalog::model_info(&config.model).images,
        browser: config.web.enabled
            && crate::tools::browser::find_executable(config.web.browser.as_deref()).is_ok(),
        model: config.model.clone(),
        provider: config.provider.id.clone(),
        agents: custom.agents,
        commands: custom.commands,
        explore_model: custom.explore_model,
        ..env
    }
}

/// The custom agents and commands: the user's, and a trusted project's. Each agent's model
/// is resolved against the session's provider here (a fallback is warned about once).
fn custom_files(
    config: &Config,
    workspace: &Workspace,
    reads: &mut crate::workspace::startup::StartupReads,
) -> crate::custom::Custom {
    let user_home = dirs::home_dir();
    let project = config.project.as_ref().filter(|p| p.trusted());
    let places = crate::custom::Places {
        home: &config.home,
        user_home: user_home.as_deref(),
        project: project.map(|p| (p.root.as_path(), workspace.cwd())),
    };
    let mut custom = crate::custom::discover(reads, &places);
    let resolve = |wanted: Option<&str>, who: &str| {
        crate::custom::agents::resolve_model(
            wanted,
            who,
            &config.provider,
            &config.model,
            &config.other_providers,
        )
    };
    let (explore, warning) = resolve(
        config.explore_model.as_deref(),
        "`explore_model` in config.toml",
    );
    custom.explore_model = explore;
    custom.warnings.extend(warning);
    for agent in &mut custom.agents {
        let who = format!("agent `{}` ({})", agent.name, agent.path.display());
        let (resolved, warning) = resolve(agent.model.as_deref(), &who);
        (agent.model, agent.provider) = match resolved {
            Some((model, provider)) => (Some(model), provider),
            None => (None, None),
        };
        custom.warnings.extend(warning);
    }
    custom
}

/// A store error as the session's: a busy log is [`SessionError::Busy`].
fn store_error(e: anyhow::Error) -> SessionError {
    match e.downcast() {
        Ok(busy) => SessionError::Busy(busy),
        Err(e) => SessionError::Other(e),
    }
}

fn open_log(
    start: LogStart,
    config: &Config,
    id: &str,
    workspace: &Workspace,
    extra_roots: &[std::path::PathBuf],
    harness: &str,
    persist: bool,
) -> Result<Option<SessionLog>, SessionError> {
    if let LogStart::Opened(log) = start {
        return Ok(log);
    }
    if !persist {
        return Ok(None);
    }
    let store = SessionStore::new(&config.home);
    if store.exists(id) {
        return Ok(Some(store.reopen(id).map_err(store_error)?));
    }
    Ok(Some(store.create(&SessionMeta {
        id: id.to_string(),
        cwd: workspace.cwd().to_path_buf(),
        created_at: chrono::Utc::now().to_rfc3339(),
        provider: config.provider.id.clone(),
        model: config.model.clone(),
        harness: harness.to_string(),
        additional_directories: extra_roots.to_vec(),
    })?))
}

/// The session's sandbox and approval policy, its warnings said.
/// What the configuration left out (a broken or untrusted project file), in every face.
fn say_config_warnings(config: &Config, events: &EventSink) {
    let note = config.project.as_ref().and_then(|p| p.ignored_note());
    for message in config.warnings.iter().chain(&note) {
        events.send(Event::Warning {
            message: message.clone(),
        });
    }
}

/// The session's policy; what the user must hear about it and the configuration is said.
fn session_policy(config: &Config, events: &EventSink, ask_commands: bool) -> Arc<Policy> {
    say_config_warnings(config, events);
    let policy = Arc::new(
        Policy::new(config.sandbox_mode, config.approval_policy)
            .with_workspace_write(config.network_access, config.writable_roots.clone())
            .with_ask_commands(ask_commands)
            .with_rules(config.rules.clone()),
    );
    for message in crate::sandbox::session_warnings(&policy, &config.home) {
        events.send(Event::Warning { message });
    }
    policy
}

/// The session's hooks, with what running them needs.
fn session_hooks(
    config: &Config,
    id: &str,
    state: &SessionState,
    events: &EventSink,
) -> Arc<crate::hooks::HookRunner> {
    let (hooks, warnings) = crate::hooks::load_for(config);
    for message in warnings {
        events.send(Event::Warning { message });
    }
    Arc::new(crate::hooks::HookRunner::new(
        Arc::new(hooks),
        id.to_string(),
        state.log.as_ref().map(|l| l.path().to_path_buf()),
        config.model.clone(),
        config.max_processes,
        events.clone(),
    ))
}
