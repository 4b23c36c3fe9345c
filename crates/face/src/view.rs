//! What a face knows about its session, kept from the events alone: front ends never ask the
//! core for state, they watch it.

use interpreter_protocol::{
    Event, SessionConfigured, SessionSettings, SkillInfo, TokenCount, TokenUsage,
};
use std::path::PathBuf;

/// The session as its events describe it.
#[derive(Debug, Clone)]
pub struct SessionView {
    pub id: String,
    pub cwd: PathBuf,
    pub settings: SessionSettings,
    pub skills: Vec<SkillInfo>,
    pub title: Option<String>,
    /// The latest token count, if a request has finished.
    pub tokens: Option<TokenCount>,
    /// The session's latest diff of the file tools' edits.
    pub diff: Option<String>,
    /// The thread's goal, while it has one.
    pub goal: Option<interpreter_protocol::Goal>,
    /// The turns that can be taken back, oldest first.
    pub undoable: Vec<interpreter_protocol::UndoableTurn>,
    /// The session's background tasks, by id, as last reported.
    pub tasks: std::collections::BTreeMap<String, interpreter_protocol::BackgroundTask>,
    /// The configured MCP servers, each as last reported.
    pub mcp_servers: Vec<interpreter_protocol::McpServerInfo>,
}

impl SessionView {
    pub fn new(c: SessionConfigured) -> SessionView {
        SessionView {
            id: c.session_id,
            cwd: c.cwd,
            settings: c.settings,
            skills: c.skills,
            title: c.title,
            tokens: None,
            diff: None,
            goal: None,
            undoable: Vec::new(),
            tasks: Default::default(),
            mcp_servers: Vec::new(),
        }
    }

    /// Takes in what an event changes.
    pub fn observe(&mut self, e: &Event) {
        match e {
            Event::SessionConfigured(c) => *self = SessionView::new(c.clone()),
            Event::SettingsChanged(s) => self.settings = s.clone(),
            Event::TitleChanged { title } => self.title = Some(title.clone()),
            Event::TokenCount(t) => self.tokens = Some(t.clone()),
            Event::Diff { unified_diff } => self.diff = Some(unified_diff.clone()),
            Event::GoalUpdated { goal, .. } => self.goal = Some(goal.clone()),
            Event::GoalCleared => self.goal = None,
            Event::UndoableTurns { turns } => self.undoable = turns.clone(),
            Event::McpServers { servers } => self.mcp_servers = servers.clone(),
            Event::McpServerUpdated(one) => {
                match self.mcp_servers.iter_mut().find(|s| s.name == one.name) {
                    Some(s) => *s = one.clone(),
                    None => self.mcp_servers.push(one.clone()),
                }
            }
            Event::BackgroundTask(t) => {
                self.tasks.insert(t.task_id.clone(), t.clone());
            }
            _ => {}
        }
    }

    /// The background tasks still running.
    pub fn running_tasks(&self) -> usize {
        self.tasks
            .values()
            .filter(|t| t.status == interpreter_protocol::BackgroundStatus::Running)
            .count()
    }

    /// A path for display: relative to the session's (canonical) cwd when inside it.
    pub fn display_path(&self, p: &std::path::Path) -> String {
        match p.strip_prefix(&self.cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            Ok(_) => ".".into(),
            Err(_) => p.display().to_string(),
        }
    }

    /// Waits for the session's `SessionConfigured`; what came before it (warnings) is
    /// pushed to `backlog`, the configured event last.
    pub async fn configured(
        rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
        backlog: &mut Vec<Event>,
    ) -> Option<SessionView> {
        while let Some(e) = rx.recv().await {
            backlog.push(e.clone());
            if let Event::SessionConfigured(c) = e {
                return Some(SessionView::new(c));
            }
        }
        None
    }

    /// Tokens used over the session so far.
    pub fn total_usage(&self) -> TokenUsage {
        self.tokens.as_ref().map(|t| t.total).unwrap_or_default()
    }
}
