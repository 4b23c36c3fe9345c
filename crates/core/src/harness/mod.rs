//! A harness is the model-facing surface of a session: the system prompt, the tool names and
//! schemas, how results are rendered back, and the output limits. Tools run on the shared
//! machinery in `tools/`, so front ends need no per-harness code.
//!
//! Facts that change (date, permission mode) go in reminder messages after the user's
//! message, never in the system prompt, so the prompt prefix stays cacheable.

mod claude_code;
mod cron_tools;
mod deepseek_tui;
mod kimi_cli;
mod kimi_code;
mod little_coder;
mod media_tools;
mod mini_swe_agent;
mod minimal;
mod native;
mod native_ask;
mod opencode;
mod pi;
mod qwen_code;
mod routing;
mod session_tools;
mod swe_agent;
pub(crate) mod task_tools;
mod terminus_2;
mod tree;
pub(crate) mod web_tools;
mod zcode;

use std::path::PathBuf;
use std::sync::Arc;

pub use routing::default_for;

use crate::config::{ApprovalPolicy, SandboxMode, WireApi};
use crate::model::{HistoryItem, ToolCall, ToolSpec};
use crate::skills::Skill;
use crate::tools::table::ToolTable;

/// Facts the prompt is built from. Fixed for a session so the prompt prefix stays cacheable.
#[derive(Debug, Clone)]
pub(crate) struct PromptEnv {
    pub cwd: PathBuf,
    pub roots: Vec<PathBuf>,
    pub os: String,
    pub shell: String,
    /// Merged AGENTS.md text, if any.
    pub agents_md: Option<String>,
    pub sandbox: SandboxMode,
    pub approval: ApprovalPolicy,
    /// Two levels of the working directory, directories first.
    pub tree: String,
    pub skills: Vec<Skill>,
    /// Custom agents from files, each a subagent type (`custom::agents`).
    pub agents: Vec<crate::custom::CustomAgent>,
    /// Custom commands from files, `/name args` (`custom::commands`).
    pub commands: Vec<crate::custom::CustomCommand>,
    /// Where read-only built-in subagents (Explore, Plan) run (`explore_model`): the model,
    /// and its provider when not the session's. None: the session's model.
    pub explore_model: Option<(String, Option<String>)>,
    /// Plan mode is on (read-only until the user approves the plan).
    pub plan_mode: bool,
    /// What the front end can do (tools that need it are listed only then).
    pub face: crate::tools::events::FaceAbilities,
    /// The web tools to offer: fetching (`[web] enabled`) and searching (a backend is set).
    pub web: WebTools,
    /// The model takes images (the catalog says so): tools that read images are offered.
    pub images: bool,
    /// The model and provider ids (opencode's prompt names them).
    pub model: String,
    pub provider: String,
    /// The GitHub CLI (`gh`) is on the PATH (deepseek-tui's GitHub tools need it).
    pub github_cli: bool,
    /// The web tools are on and a Chromium-family browser was found (little-coder's Browser
    /// tools need one).
    pub browser: bool,
}

/// Which web tools a session offers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WebTools {
    pub fetch: bool,
    pub search: bool,
    /// Moonshot's builtin `$web_search` is declared: its calls are answered (see
    /// [`Harness::tools`]'s callers).
    pub moonshot_search: bool,
}

impl PromptEnv {
    pub(crate) fn detect(
        cwd: PathBuf,
        roots: Vec<PathBuf>,
        agents_md: Option<String>,
        sandbox: SandboxMode,
        approval: ApprovalPolicy,
        skills: Vec<Skill>,
        reads: &mut crate::workspace::startup::StartupReads,
    ) -> Self {
        PromptEnv {
            tree: tree::two_level_listing(reads, &cwd),
            cwd,
            roots,
            os: std::env::consts::OS.to_string(),
            shell: crate::tools::exec::shell::Shell::detect().describe(),
            agents_md,
            sandbox,
            approval,
            skills,
            agents: Vec::new(),
            commands: Vec::new(),
            explore_model: None,
            plan_mode: false,
            face: Default::default(),
            web: WebTools::default(),
            images: false,
            model: String::new(),
            provider: String::new(),
            github_cli: on_path(if cfg!(windows) { "gh.exe" } else { "gh" }),
            browser: false,
        }
    }
}

/// Whether an executable named `exe` is in a folder on the PATH.
fn on_path(exe: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(exe).is_file()))
}

/// What the catalog says of a harness: declared once, as a `const INFO` in its module, and
/// listed in [`REGISTRY`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HarnessInfo {
    /// The name in config, on the command line and in every face's picker.
    pub name: &'static str,
    /// A short label for pickers.
    pub label: &'static str,
    /// One sentence on what it is (the app-server's harness list, the VS Code setting).
    pub about: &'static str,
    /// The wire APIs it speaks. A session on any other is a config error.
    pub wires: &'static [WireApi],
}

/// The model-facing surface of a session: its prompt and its table of tools.
pub(crate) trait Harness: Send + Sync {
    /// Its entry in the registry.
    fn info(&self) -> &'static HarnessInfo;
    fn name(&self) -> &'static str {
        self.info().name
    }
    fn system_prompt(&self, env: &PromptEnv) -> String;
    /// The tools, in the order the model sees them. Built once per session (and on a
    /// harness switch); a tool may keep per-session state (Kimi Code's TodoList).
    fn tools(&self, env: &PromptEnv) -> ToolTable;
    fn wires(&self) -> &'static [WireApi] {
        self.info().wires
    }
    /// The `prompt_cache_key` its requests carry for session `id` (Responses and Chat).
    fn prompt_cache_key(&self, id: &str) -> String {
        id.to_string()
    }
    /// The name an MCP tool (`<server>__<tool>`) gets in this harness's convention.
    fn external_tool_name(&self, name: &str) -> String {
        name.to_string()
    }
    /// Context sent once at the start of a session, as history (e.g. AGENTS.md).
    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem>;
    /// A reminder to add before the user's message, in an item of its own. The session sends
    /// it only when its text differs from the last one sent.
    fn reminder(&self, _env: &PromptEnv, _today: &str) -> Option<String> {
        None
    }
    /// How this harness's reminders begin, so the session finds the last one in history
    /// (for native, the environment context of the initial context counts).
    fn reminder_prefix(&self) -> &'static str {
        "<system-reminder>"
    }
    /// What the next request tells the model of a background task that ended (Claude Code's
    /// `<task-notification>` unless the harness has its own).
    fn task_notification(&self, task: &crate::tools::background::TaskRecord) -> String {
        task_tools::notification(task_tools::Flavor::Claude, task)
    }
    /// The fields its original adds to a Chat Completions request (sampling, thinking,
    /// storage, the output cap's key).
    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape::default()
    }
    /// The system prompt of a title request sent once, with the first user message
    /// (opencode's); `None`: no title request (the title is the first line).
    fn title_prompt(&self) -> Option<&'static str> {
        None
    }
    /// Guidance for the task at hand, added to the end of the system prompt, picked from
    /// everything the user has asked in the session (little-coder's tool guidance). None
    /// keeps the prompt as it is.
    fn task_guidance(&self, _asked: &str) -> Option<&'static str> {
        None
    }
    /// For a harness whose model writes its actions in the reply text instead of calling
    /// tools on the wire (swe-agent): how replies become calls and how the history is shown
    /// to the model. `None` (the default) is function calling on the wire.
    fn text_actions(&self) -> Option<&dyn TextActions> {
        None
    }
}

/// What a text-action harness makes of a reply that has no tool calls on the wire.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TextReply {
    /// Run these calls, parsed from the text (ids unique in the session, arguments JSON).
    Calls(Vec<ToolCall>),
    /// The reply holds no valid action: send this correction as a user message and ask again.
    Correction(String),
    /// The reply ends the task (swe-agent's confirmed `submit`): the turn is over.
    Finish,
}

/// The hook between the turn and a harness that speaks in text actions. The session keeps
/// one provider-neutral history (assistant tool calls, tool results) whatever the harness:
/// `parse_reply` turns a reply's text into calls that join it, and `render_history` shows
/// that history to the model the way this harness's original does (calls as the text that
/// made them, results as observation messages), for calls made by any harness. Requests of
/// such a harness carry no tool schemas; `tools` are the session's table, for the commands
/// the harness lists in its own words (MCP tools included).
pub(crate) trait TextActions: Send + Sync {
    /// What to do with a reply. `history` is the session's, before this reply.
    fn parse_reply(&self, text: &str, history: &[HistoryItem], tools: &[ToolSpec]) -> TextReply;
    /// The history as this harness's requests carry it.
    fn render_history(
        &self,
        env: &PromptEnv,
        history: &[HistoryItem],
        tools: &[ToolSpec],
    ) -> Vec<HistoryItem>;
    /// Corrections in a row after which the turn ends as failed.
    fn max_corrections(&self) -> usize {
        3
    }
    /// The tools still go on the wire as schemas (mini-swe-agent calls them there; only a
    /// reply without a call goes to `parse_reply`). Default: no schemas.
    fn tools_on_wire(&self) -> bool {
        false
    }
    /// The task is over after the calls that just ran (mini-swe-agent's submit command).
    fn finished(&self, _history: &[HistoryItem]) -> bool {
        false
    }
}

/// A user message of a text-action harness's rendered history (swe-agent, terminus-2).
pub(crate) fn rendered_user(text: String, images: Vec<String>) -> HistoryItem {
    HistoryItem::User {
        text,
        images,
        synthetic: false,
    }
}

/// An assistant message of a text-action harness's rendered history: its text, no calls.
pub(crate) fn rendered_assistant(text: String, reasoning: Option<String>) -> HistoryItem {
    HistoryItem::Assistant(crate::model::AssistantReply {
        reasoning,
        ..crate::model::AssistantReply::new(text, vec![])
    })
}

/// A session's facts for harness tests: `/repo` on Linux, workspace-write, nothing else on.
#[cfg(test)]
pub(crate) fn test_env() -> PromptEnv {
    PromptEnv {
        cwd: "/repo".into(),
        roots: vec!["/repo".into()],
        os: "linux".into(),
        shell: "bash (/bin/bash)".into(),
        agents_md: None,
        sandbox: SandboxMode::WorkspaceWrite,
        approval: ApprovalPolicy::OnRequest,
        tree: String::new(),
        skills: vec![],
        agents: vec![],
        commands: vec![],
        explore_model: None,
        plan_mode: false,
        face: Default::default(),
        web: Default::default(),
        images: false,
        model: String::new(),
        provider: String::new(),
        github_cli: false,
        browser: true,
    }
}

/// One harness: what the catalog says of it, and how to make one.
struct Entry {
    info: &'static HarnessInfo,
    make: fn() -> Arc<dyn Harness>,
}

/// Every harness, in the order pickers list them. Adding a harness is its module and a line
/// here; the names, pickers, routing and editor lists all derive from this table.
const REGISTRY: &[Entry] = &[
    Entry {
        info: &native::INFO,
        make: || Arc::new(native::Native),
    },
    Entry {
        info: &claude_code::INFO,
        make: || Arc::new(claude_code::ClaudeCode::full()),
    },
    Entry {
        info: &claude_code::BARE_INFO,
        make: || Arc::new(claude_code::ClaudeCode::bare()),
    },
    Entry {
        info: &zcode::INFO,
        make: || Arc::new(zcode::ZCode),
    },
    Entry {
        info: &kimi_code::INFO,
        make: || Arc::new(kimi_code::KimiCode),
    },
    Entry {
        info: &kimi_cli::INFO,
        make: || Arc::new(kimi_cli::KimiCli),
    },
    Entry {
        info: &qwen_code::INFO,
        make: || Arc::new(qwen_code::QwenCode),
    },
    Entry {
        info: &deepseek_tui::INFO,
        make: || Arc::new(deepseek_tui::DeepSeekTui),
    },
    Entry {
        info: &swe_agent::INFO,
        make: || Arc::new(swe_agent::SweAgent),
    },
    Entry {
        info: &minimal::INFO,
        make: || Arc::new(minimal::Minimal),
    },
    Entry {
        info: &pi::INFO,
        make: || Arc::new(pi::Pi),
    },
    Entry {
        info: &mini_swe_agent::INFO,
        make: || Arc::new(mini_swe_agent::MiniSweAgent),
    },
    Entry {
        info: &opencode::INFO,
        make: || Arc::new(opencode::OpenCode),
    },
    Entry {
        info: &little_coder::INFO,
        make: || Arc::new(little_coder::LittleCoder),
    },
    Entry {
        info: &terminus_2::INFO,
        make: || Arc::new(terminus_2::Terminus2::default()),
    },
];

/// Every harness, in picker order.
pub fn harnesses() -> impl Iterator<Item = &'static HarnessInfo> {
    REGISTRY.iter().map(|e| e.info)
}

/// Every harness's name, in picker order.
pub fn names() -> Vec<&'static str> {
    harnesses().map(|h| h.name).collect()
}

/// A fresh harness called `name`.
pub(crate) fn by_name(name: &str) -> Option<Arc<dyn Harness>> {
    REGISTRY
        .iter()
        .find(|e| e.info.name == name)
        .map(|e| (e.make)())
}

/// Whether `name` is a harness; the error names the known ones. Every face validates a
/// harness name here.
pub fn check(name: &str) -> Result<(), String> {
    resolve(name).map(|_| ())
}

/// The harness called `name`, or [`check`]'s error.
fn resolve(name: &str) -> Result<Arc<dyn Harness>, String> {
    by_name(name).ok_or_else(|| {
        format!(
            "unknown harness `{name}` (available: {})",
            names().join(", ")
        )
    })
}

/// The harness `name` for a session on `wire`: unknown names and unsupported wires are
/// errors that say what would work.
pub(crate) fn for_wire(name: &str, wire: WireApi) -> Result<Arc<dyn Harness>, String> {
    let h = resolve(name)?;
    if h.wires().contains(&wire) {
        return Ok(h);
    }
    let supported: Vec<&str> = h.wires().iter().map(|w| w.as_str()).collect();
    let fitting: Vec<&str> = harnesses()
        .filter(|h| h.wires.contains(&wire))
        .map(|h| h.name)
        .collect();
    Err(format!(
        "harness `{name}` does not support wire_api = \"{}\": it supports {}. Harnesses for {}: {}",
        wire.as_str(),
        supported.join(", "),
        wire.as_str(),
        fitting.join(", ")
    ))
}

/// One line on what the agent may do now, for the harnesses' reminders.
pub(crate) fn permission_line(env: &PromptEnv) -> &'static str {
    if env.plan_mode {
        return "Plan mode is active: the user wants a plan before any change. Read and search only (edits are refused, commands run read-only); when the plan is ready, call ExitPlanMode with it for approval.";
    }
    match (env.sandbox, env.approval) {
        (SandboxMode::ReadOnly, _) => {
            "Read-only mode is active: do not change files; only read-only commands will run."
        }
        (SandboxMode::DangerFullAccess, _) => {
            "Full-access mode is active: edits and commands run without asking."
        }
        (_, ApprovalPolicy::Never) => {
            "Auto permission mode is active: tool calls run without asking the user; refused ones come back as errors."
        }
        (_, ApprovalPolicy::Untrusted) => {
            "Ask mode is active: edits and commands may need the user's approval."
        }
        _ => {
            "Auto-edit mode is active: edits inside the workspace run without asking; other commands may need approval."
        }
    }
}

/// The skills list as Codex shows it, for harnesses that put it in a user message.
pub(crate) fn codex_skills_block(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut out = String::from(
        "<skills_instructions>\n## Skills\nSkills are instructions for specific tasks, stored as SKILL.md files. \
         When the user names a skill or the task matches its description, read the whole SKILL.md with \
         read_file first (builtin:// paths work too) and follow it.\n### Available skills\n",
    );
    for s in skills {
        out.push_str(&format!(
            "- {}: {} (file: {})\n",
            s.name, s.description, s.path
        ));
    }
    out.push_str("</skills_instructions>");
    Some(out)
}

#[cfg(test)]
#[path = "editor_lists_tests.rs"]
mod editor_lists_tests;

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod catalog_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_against_the_registry() {
        for name in names() {
            assert_eq!(check(name), Ok(()));
            assert_eq!(by_name(name).map(|h| h.name()), Some(name));
        }
        let e = check("nope").unwrap_err();
        assert_eq!(
            e,
            format!("unknown harness `nope` (available: {})", names().join(", "))
        );
        assert!(
            e.contains("native, claude-code, claude-code-bare, zcode"),
            "{e}"
        );
    }
}
