//! The claude-code harness, for the models trained against Claude Code's tool surface
//! (Claude, GLM, DeepSeek, MiniMax, and every Anthropic-compatible endpoint): Claude Code's
//! tool names, parameters, result texts and limits, on every wire. `claude-code-bare` is its
//! minimal profile: Bash, Read and Edit on a prompt that is little more than the working
//! directory. Z Code (`../zcode`) reuses the tools here with its own result texts.

pub(crate) mod ask;
mod ide;
mod notebook;
mod prompt;

pub(crate) use prompt::context_reminder;
mod run;
pub(crate) mod specs;
mod tasks;
mod worktree;

use crate::harness::HarnessInfo;
use futures::future::BoxFuture;
use interpreter_protocol::ToolKind;
use serde_json::Value;
use std::sync::Arc;

use super::task_tools;
use super::web_tools;
use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::model::{HistoryItem, ToolSpec};
use crate::tools::table::{FnTool, Tool, ToolResult, ToolTable, Wording, location, str_or_empty};
use crate::tools::{CallDescription, ToolContext};
use crate::workspace::Workspace;

use super::session_tools::{PlanModeTool, PlanTool, describe, skill_tool};

/// Which Claude-style surface a tool answers as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Full,
    Bare,
    ZCode,
}

/// Claude Code wraps the text of every failed call in `<tool_use_error>`.
pub(crate) const WORDING: Wording = Wording {
    prefix: "",
    wrap: Some(("<tool_use_error>", "</tool_use_error>")),
};

pub(crate) struct ClaudeCode {
    bare: bool,
}

impl ClaudeCode {
    pub(crate) fn full() -> ClaudeCode {
        ClaudeCode { bare: false }
    }

    pub(crate) fn bare() -> ClaudeCode {
        ClaudeCode { bare: true }
    }
}

/// Claude Code's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "claude-code",
    label: "Claude Code",
    about: "Claude Code's tools (Bash, Read, Write, Edit, Glob, Grep, NotebookEdit, the Task* list, Agent, Skill, plan mode, worktrees, cron and wakeups); GLM, DeepSeek and MiniMax models were trained on it",
    wires: WIRES,
};

/// Claude Code on a minimal prompt: its entry in the registry.
pub(super) const BARE_INFO: HarnessInfo = HarnessInfo {
    name: "claude-code-bare",
    label: "Claude Code (bare)",
    about: "Bash, Read and Edit on a minimal prompt; the default for DeepSeek",
    wires: WIRES,
};

const WIRES: &[WireApi] = &[WireApi::Messages, WireApi::Chat, WireApi::Responses];

impl Harness for ClaudeCode {
    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            max_tokens: Some(("max_tokens", 32_000)),
            ..Default::default()
        }
    }

    fn info(&self) -> &'static HarnessInfo {
        if self.bare { &BARE_INFO } else { &INFO }
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        if self.bare {
            prompt::bare(env)
        } else {
            prompt::full(env)
        }
    }

    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem> {
        prompt::context_reminder(env, !self.bare)
            .map(|text| HistoryItem::User {
                text,
                images: vec![],
                synthetic: true,
            })
            .into_iter()
            .collect()
    }

    fn reminder(&self, env: &PromptEnv, today: &str) -> Option<String> {
        Some(prompt::reminder(env, today, self.bare))
    }

    fn tools(&self, env: &PromptEnv) -> ToolTable {
        let table = if self.bare {
            bare_table()
        } else {
            full_table(env)
        };
        // The IDE's tools are MCP tools: they come after the built-in ones.
        match env.face.diagnostics {
            true => table.extended([ide::get_diagnostics()]),
            false => table,
        }
    }

    fn external_tool_name(&self, name: &str) -> String {
        mcp_name(name)
    }
}

/// Claude Code's MCP names: `mcp__<server>__<tool>` (cut to the 64 characters tool names
/// may have, and kept unique, by `tools::external_entries`).
pub(crate) fn mcp_name(name: &str) -> String {
    format!("mcp__{name}")
}

type Run = for<'a> fn(Value, &'a ToolContext) -> BoxFuture<'a, ToolResult>;
type Describe = fn(&Value, &Workspace) -> CallDescription;

pub(crate) fn tool(
    wording: Wording,
    spec: ToolSpec,
    describe: Describe,
    run: Run,
) -> Arc<dyn Tool> {
    FnTool::plain(wording, spec, describe, run)
}

pub(crate) fn describe_bash(a: &Value, _ws: &Workspace) -> CallDescription {
    let command = str_or_empty(a, "command");
    CallDescription {
        kind: ToolKind::Execute,
        title: command.clone(),
        locations: vec![],
        command: Some(command),
    }
}

fn describe_file(kind: ToolKind, verb: &str, a: &Value, ws: &Workspace) -> CallDescription {
    CallDescription {
        kind,
        title: format!("{verb} {}", str_or_empty(a, "file_path")),
        locations: location(ws, a, "file_path"),
        command: None,
    }
}

pub(crate) fn describe_read(a: &Value, ws: &Workspace) -> CallDescription {
    describe_file(ToolKind::Read, "Read", a, ws)
}

pub(crate) fn describe_write(a: &Value, ws: &Workspace) -> CallDescription {
    describe_file(ToolKind::Edit, "Write", a, ws)
}

pub(crate) fn describe_edit(a: &Value, ws: &Workspace) -> CallDescription {
    describe_file(ToolKind::Edit, "Edit", a, ws)
}

pub(crate) fn describe_glob(a: &Value, _ws: &Workspace) -> CallDescription {
    describe(
        ToolKind::Search,
        format!("Glob `{}`", str_or_empty(a, "pattern")),
    )
}

pub(crate) fn describe_grep(a: &Value, _ws: &Workspace) -> CallDescription {
    describe(
        ToolKind::Search,
        format!("Grep `{}`", str_or_empty(a, "pattern")),
    )
}

pub(crate) fn describe_agent(a: &Value, _ws: &Workspace) -> CallDescription {
    describe(
        ToolKind::Think,
        format!("Subagent: {}", str_or_empty(a, "description")),
    )
}

// The run functions of the shared tools, per flavor.
pub(crate) fn run_bash<'a>(a: Value, c: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
    Box::pin(run::bash(c, a))
}
pub(crate) fn run_grep<'a>(a: Value, c: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
    Box::pin(run::grep(c, a))
}
pub(crate) fn run_read_zcode<'a>(a: Value, c: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
    Box::pin(run::read(c, a, Flavor::ZCode))
}
pub(crate) fn run_write_zcode<'a>(a: Value, c: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
    Box::pin(run::write(c, a, Flavor::ZCode))
}
pub(crate) fn run_edit_zcode<'a>(a: Value, c: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
    Box::pin(run::edit(c, a, Flavor::ZCode))
}
pub(crate) fn run_glob_zcode<'a>(a: Value, c: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
    Box::pin(run::glob(c, a, Flavor::ZCode))
}

const AGENT_TYPES: &str = "general-purpose (default; may change files), Explore (read-only \
    search of the codebase), Plan (read-only design of an approach)";

/// Claude Code's tools, in its order (alphabetical, as it sends them).
fn full_table(env: &PromptEnv) -> ToolTable {
    let mut tools = vec![
        FnTool::subagent(
            WORDING,
            specs::agent(AGENT_TYPES),
            describe_agent,
            |a, c| Box::pin(super::session_tools::agent(c, a, false)),
        ),
        ask::ask_user_question(),
        tool(
            WORDING,
            specs::bash(specs::BASH_FULL, true),
            describe_bash,
            run_bash,
        ),
        tool(
            WORDING,
            specs::edit(specs::EDIT_FULL),
            describe_edit,
            |a, c| Box::pin(run::edit(c, a, Flavor::Full)),
        ),
        plan_tool(specs::enter_plan_mode(), PlanTool::Enter),
        plan_tool(specs::exit_plan_mode_with_prompts(), PlanTool::Exit),
        tool(WORDING, specs::glob(), describe_glob, |a, c| {
            Box::pin(run::glob(c, a, Flavor::Full))
        }),
        tool(WORDING, specs::grep(), describe_grep, run_grep),
        tool(
            WORDING,
            specs::notebook_edit(),
            notebook::describe,
            |a, c| Box::pin(notebook::run(c, a)),
        ),
        tool(
            WORDING,
            specs::read_with_pages(specs::READ_FULL),
            describe_read,
            |a, c| Box::pin(run::read(c, a, Flavor::Full)),
        ),
    ];
    tools.extend(skill_tool(specs::skill(), &env.skills, WORDING));
    tools.extend([
        task_tools::task_output(task_tools::Flavor::Claude, WORDING),
        task_tools::task_stop(task_tools::Flavor::Claude, WORDING),
    ]);
    tools.extend(tasks::tools());
    if env.web.fetch {
        tools.push(web_tools::web_fetch(WORDING));
    }
    if env.web.search {
        tools.push(web_tools::web_search(web_tools::Flavor::Claude, WORDING));
    }
    tools.extend([tool(
        WORDING,
        specs::write(specs::WRITE_FULL),
        describe_write,
        |a, c| Box::pin(run::write(c, a, Flavor::Full)),
    )]);
    tools.extend(super::cron_tools::cron_tools(WORDING));
    tools.push(super::cron_tools::schedule_wakeup(WORDING));
    tools.extend(worktree::tools());
    // Claude Code sends its tools in name order.
    tools.sort_by(|a, b| a.spec().name.cmp(&b.spec().name));
    // The list is kept with the Task* tools; TodoWrite is not offered, but a model used to
    // it still gets an answer.
    ToolTable::new(tools).with_hidden(vec![tool(
        WORDING,
        specs::todo_write(),
        |_, _| describe(ToolKind::Think, "Update todos".into()),
        |a, _| Box::pin(async move { super::session_tools::todo_write(&a) }),
    )])
}

pub(crate) fn plan_tool(spec: ToolSpec, which: PlanTool) -> Arc<dyn Tool> {
    Arc::new(PlanModeTool {
        spec,
        which,
        wording: WORDING,
    })
}

/// The bare profile: Bash, Edit and Read with three-to-five-word descriptions.
fn bare_table() -> ToolTable {
    ToolTable::new(vec![
        tool(
            WORDING,
            specs::bash("execute shell commands", false),
            describe_bash,
            run_bash,
        ),
        tool(
            WORDING,
            specs::edit("modify file contents in place"),
            describe_edit,
            |a, c| Box::pin(run::edit(c, a, Flavor::Bare)),
        ),
        tool(
            WORDING,
            specs::read("read files, images, PDFs, notebooks"),
            describe_read,
            |a, c| Box::pin(run::read(c, a, Flavor::Bare)),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{ExternalTools, ToolOutcome, external_entries};
    use std::sync::Mutex;

    /// External tools that record the names they are called by.
    struct Recorder(Mutex<Vec<String>>);

    impl ExternalTools for Recorder {
        fn specs(&self) -> Vec<ToolSpec> {
            vec![crate::tools::table::spec(
                "echo__say",
                "Says it.",
                serde_json::json!({"type": "object"}),
            )]
        }
        fn describe(&self, tool: &str, _args: &Value) -> Option<CallDescription> {
            self.0.lock().unwrap().push(format!("describe {tool}"));
            None
        }
        fn call<'a>(
            &'a self,
            tool: &'a str,
            _args: Value,
            _ctx: &'a ToolContext,
        ) -> BoxFuture<'a, ToolOutcome> {
            self.0.lock().unwrap().push(format!("call {tool}"));
            Box::pin(async { ToolOutcome::ok("said") })
        }
    }

    #[test]
    fn mcp_tools_take_claude_code_names_and_keep_their_own_for_calls() {
        assert_eq!(mcp_name("echo__say"), "mcp__echo__say");
        let set = Arc::new(Recorder(Mutex::new(Vec::new())));
        let h = ClaudeCode::full();
        let rename = |n: &str| h.external_tool_name(n);
        let entries = external_entries(set.clone(), &rename, []);
        assert_eq!(entries[0].spec().name, "mcp__echo__say");
        let ws = Workspace::new(
            &std::env::temp_dir(),
            &[],
            Arc::new(crate::workspace::DiskBackend),
        )
        .unwrap();
        let d = entries[0].describe(&serde_json::json!({}), &ws);
        assert_eq!(d.title, "mcp__echo__say");
        assert_eq!(set.0.lock().unwrap().as_slice(), ["describe echo__say"]);
    }
}
