//! Hooks: programs the user's config (and a trusted project's) runs at points of a session,
//! in the shape Codex and Claude Code share: event → matcher groups → command handlers.
//!
//! - [`load`] reads every source (`hooks.json` and `[hooks]` in config.toml next to each
//!   config layer, Claude Code's `settings.json`); all of them run.
//! - A project's hook runs only once the user approved its exact definition: its hash is kept
//!   in the user's config.toml as Codex keeps it (`[hooks.state."<key>"] trusted_hash`), so a
//!   changed hook waits for review again ([`trust`]).
//! - A hook gets JSON on stdin in the field names of the peer whose file defined it
//!   ([`Dialect`]), and answers with its exit code (2 blocks) or JSON ([`output`]).
//! - It runs as a command of the session runs: confined, without keys, with a timeout, its
//!   output bounded ([`run`]).

mod load;
mod matcher;
mod output;
mod run;
#[cfg(test)]
mod tests;
pub mod trust;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use interpreter_protocol::HookSource;

pub use load::{Sources, load, load_for, to_review};
pub(crate) use matcher::{CallView, call_names, tool_inputs};
pub(crate) use output::{Permission, Verdict};
pub(crate) use run::{HookRunner, Payload, Place};

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// A session's first turn starts (matcher: `startup`, `resume`).
    SessionStart,
    /// The user sent a prompt; before the model sees it.
    UserPromptSubmit,
    /// A tool call is about to run (matcher: tool names).
    PreToolUse,
    /// A tool call ran.
    PostToolUse,
    /// A tool call is about to ask the user.
    PermissionRequest,
    /// The turn is about to end.
    Stop,
    /// A subagent starts (matcher: its type).
    SubagentStart,
    /// A subagent is about to end.
    SubagentStop,
    /// The history is about to be compacted (matcher: `manual`, `auto`).
    PreCompact,
    /// The history was compacted.
    PostCompact,
    /// The agent waits for the user (matcher: `permission_prompt`).
    Notification,
    /// The session ends (matcher: its reason, `other`).
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order hooks files list them.
    pub const ALL: [HookEvent; 12] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::Notification,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    /// As hooks files spell it.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::Notification => "Notification",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event a hooks file names, if it is one.
    pub fn parse(name: &str) -> Option<HookEvent> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Codex's label in a hook's state key (`pre_tool_use`).
    fn key_label(self) -> String {
        let mut out = String::new();
        for (i, c) in self.name().chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }

    /// Whether its matcher is read (Codex and Claude Code ignore it for the prompt and the
    /// turn's end).
    fn takes_matcher(self) -> bool {
        !matches!(self, HookEvent::UserPromptSubmit | HookEvent::Stop)
    }
}

/// Whose file a hook came from: its input carries that peer's tool names and fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Codex's `hooks.json` and `[hooks]` (ours too): `Bash`, `apply_patch`.
    Codex,
    /// Claude Code's `settings.json`: `Bash`, `Edit`, `Write`, `Read`, `Grep`….
    Claude,
}

/// One command handler of one matcher group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    /// When it runs.
    pub event: HookEvent,
    /// Which calls (or sources) it runs for; none or `*`: all.
    pub matcher: Option<String>,
    /// The command line, run by the shell.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// Shown while it runs.
    pub status_message: Option<String>,
    /// Claude Code's `async`: started in the background, never waited for, never blocks.
    pub run_async: bool,
    /// Whose file defined it.
    pub source: HookSource,
    /// That file.
    pub path: PathBuf,
    /// Its peer's shapes.
    pub dialect: Dialect,
    /// Where its trust is kept: `<file>:<event>:<group>:<handler>`.
    pub key: String,
    /// `sha256:<hex>` of its definition.
    pub hash: String,
}

/// The hooks of a session.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    /// Those that run.
    pub handlers: Vec<Arc<Handler>>,
    /// A trusted project's hooks whose definition the user has not approved (new or
    /// changed): they do not run until trusted.
    pub pending: Vec<Arc<Handler>>,
    /// The project's top, for `$CLAUDE_PROJECT_DIR`.
    pub project_dir: Option<PathBuf>,
}

impl Hooks {
    /// No hook runs.
    pub fn is_empty(&self) -> bool {
        self.handlers.is_empty()
    }

    /// The handlers of `event` whose matcher takes one of `inputs` (by the handler's dialect).
    pub(crate) fn matching(
        &self,
        event: HookEvent,
        inputs: impl Fn(Dialect) -> Vec<String>,
    ) -> Vec<Arc<Handler>> {
        self.handlers
            .iter()
            .filter(|h| h.event == event)
            .filter(|h| {
                !event.takes_matcher() || matcher::matches(h.matcher.as_deref(), &inputs(h.dialect))
            })
            .cloned()
            .collect()
    }

    /// What the user hears about hooks waiting for review.
    pub fn review_note(&self) -> Option<String> {
        if self.pending.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .pending
            .iter()
            .map(|h| format!("{} `{}` ({})", h.event.name(), h.command, h.path.display()))
            .collect();
        Some(format!(
            "{} project hook(s) are new or changed and do not run until you trust them: {}. Review and trust them with `interpreter hooks trust`.",
            list.len(),
            list.join("; ")
        ))
    }
}
