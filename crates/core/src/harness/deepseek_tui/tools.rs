//! deepseek-tui's tool table: the original's schemas (names, parameters, types, required
//! lists) for the tools that run, descriptions in our own words. Parameters no handler here
//! honours (PDF pages, fuzzy edits) are left out. `more.rs` has the tools on shared
//! capabilities (background commands, the web, subagents, GitHub).

use futures::future::BoxFuture;
use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

use super::{WORDING, git, github, more, run};
use crate::harness::session_tools::{SkillTool, describe};
use crate::model::ToolSpec;
use crate::tools::table::{
    FnTool, Tool, ToolResult, ToolTable, location, object, spec, str_or_empty,
};
use crate::tools::{CallDescription, ToolContext};
use crate::workspace::Workspace;

type Run = for<'a> fn(Value, &'a ToolContext) -> BoxFuture<'a, ToolResult>;

fn tool(
    spec: ToolSpec,
    describe: fn(&Value, &Workspace) -> CallDescription,
    run: Run,
) -> Arc<dyn Tool> {
    FnTool::plain(WORDING, spec, describe, run)
}

fn on_path(kind: ToolKind, verb: &'static str) -> impl Fn(&Value, &Workspace) -> CallDescription {
    move |a, ws| CallDescription {
        kind,
        title: format!("{verb} {}", str_or_empty(a, "path")),
        locations: location(ws, a, "path"),
        command: None,
    }
}

fn describe_read(a: &Value, ws: &Workspace) -> CallDescription {
    on_path(ToolKind::Read, "Read")(a, ws)
}
fn describe_write(a: &Value, ws: &Workspace) -> CallDescription {
    on_path(ToolKind::Edit, "Write")(a, ws)
}
fn describe_edit(a: &Value, ws: &Workspace) -> CallDescription {
    on_path(ToolKind::Edit, "Edit")(a, ws)
}
fn describe_list(a: &Value, ws: &Workspace) -> CallDescription {
    on_path(ToolKind::Read, "List")(a, ws)
}
fn describe_search(a: &Value, _ws: &Workspace) -> CallDescription {
    let what = str_or_empty(a, "pattern") + &str_or_empty(a, "query");
    describe(ToolKind::Search, format!("Search `{what}`"))
}
fn describe_git(_a: &Value, _ws: &Workspace) -> CallDescription {
    describe(ToolKind::Read, "git".into())
}
fn describe_plan(_a: &Value, _ws: &Workspace) -> CallDescription {
    describe(ToolKind::Think, "Update checklist".into())
}
fn describe_shell(a: &Value, _ws: &Workspace) -> CallDescription {
    let command = str_or_empty(a, "command");
    CallDescription {
        kind: ToolKind::Execute,
        title: command.clone(),
        locations: vec![],
        command: Some(command),
    }
}

/// The tools in the original's (alphabetical) order.
pub(super) fn table(env: &crate::harness::PromptEnv) -> ToolTable {
    let checklist = Arc::new(Mutex::new(Vec::new()));
    let mut tools: Vec<Arc<dyn Tool>> = more::agent_tools();
    tools.extend(git::checklist_tools(&checklist, "checklist"));
    if env.face.diagnostics {
        tools.push(more::diagnostics());
    }
    tools.extend([
        tool(edit_file(), describe_edit, |a, c| {
            Box::pin(run::edit_file(c, a))
        }),
        tool(exec_shell(), describe_shell, |a, c| {
            Box::pin(run::exec_shell(c, a))
        }),
    ]);
    tools.extend(more::background_tools());
    tools.extend(more::web(env));
    tools.extend([
        tool(file_search(), describe_search, |a, c| {
            Box::pin(run::file_search(c, a))
        }),
        tool(git::blame_spec(), describe_git, |a, c| {
            Box::pin(git::blame(c, a))
        }),
        tool(git::diff_spec(), describe_git, |a, c| {
            Box::pin(git::diff(c, a))
        }),
        tool(git::log_spec(), describe_git, |a, c| {
            Box::pin(git::log(c, a))
        }),
        tool(git::show_spec(), describe_git, |a, c| {
            Box::pin(git::show(c, a))
        }),
        tool(git::status_spec(), describe_git, |a, c| {
            Box::pin(git::status(c, a))
        }),
        tool(grep_files(), describe_search, |a, c| {
            Box::pin(run::grep_files(c, a))
        }),
        tool(list_dir(), describe_list, |a, c| {
            Box::pin(run::list_dir(c, a))
        }),
        more::project_map(),
        more::revert_turn(),
    ]);
    tools.extend(github::github_tools(env));
    if !env.skills.is_empty() {
        tools.push(Arc::new(SkillTool {
            spec: load_skill(),
            skills: env.skills.clone(),
            wording: WORDING,
            param: "name",
            render: crate::skills::invocation,
        }));
    }
    tools.extend([
        tool(read_file(), describe_read, |a, c| {
            Box::pin(run::read_file(c, a))
        }),
        tool(git::update_plan_spec(), describe_plan, |a, _| {
            Box::pin(async move { git::update_plan(&a) })
        }),
        tool(write_file(), describe_write, |a, c| {
            Box::pin(run::write_file(c, a))
        }),
    ]);
    if env.face.questions {
        tools.push(crate::harness::native_ask::request_user_input(WORDING));
    }
    tools.extend(git::checklist_tools(&checklist, "todo"));
    // The original's order is alphabetical.
    tools.sort_by(|a, b| a.spec().name.cmp(&b.spec().name));
    ToolTable::new(tools)
}

fn edit_file() -> ToolSpec {
    spec(
        "edit_file",
        "Replace one exact piece of text in a file (the first occurrence of `search`, whitespace \
         and indentation included). Use it instead of `sed -i`. Returns a unified diff of the \
         change. For larger rewrites use write_file.",
        object(
            json!({
                "path": {"type": "string", "description": "Path to the file"},
                "search": {"type": "string", "description": "Exact text to search for, including whitespace, indentation, and newlines"},
                "replace": {"type": "string", "description": "Text to replace with"}
            }),
            &["path", "search", "replace"],
        ),
    )
}

fn exec_shell() -> ToolSpec {
    spec(
        "exec_shell",
        "Run a shell command in the workspace and wait for it (no input). Long output comes \
         back compacted to its head and tail. With `background` it starts at once and gives a \
         task_id for exec_shell_wait, exec_shell_interact (with `interactive`) and \
         exec_shell_cancel.",
        object(
            json!({
                "command": {"type": "string", "description": "The shell command to execute"},
                "timeout_ms": {"type": "integer", "description": "Timeout in milliseconds (default: 120000, max: 600000)"},
                "background": {"type": "boolean", "description": "Start it in the background and return its task_id at once"},
                "interactive": {"type": "boolean", "description": "With background: keep its input open for exec_shell_interact"},
                "stdin": {"type": "string", "description": "With background: text to send it first"},
                "tty": {"type": "boolean", "description": "With interactive: a pseudo-terminal"},
                "cwd": {"type": "string", "description": "Optional working directory for the command"}
            }),
            &["command"],
        ),
    )
}

fn file_search() -> ToolSpec {
    spec(
        "file_search",
        "Find files by name with fuzzy matching, best matches first. Use it instead of `find \
         -name` in exec_shell; `extensions` filters by suffix.",
        object(
            json!({
                "query": {"type": "string", "description": "Search query (file name or path fragment)."},
                "path": {"type": "string", "description": "Optional base path to search (relative to workspace)."},
                "limit": {"type": "integer", "description": "Maximum number of results to return (default: 20)."},
                "extensions": {"type": "array", "items": {"type": "string"}, "description": "Optional list of file extensions to include (e.g. [\"rs\", \"md\"])."},
                "exclude": {"type": "array", "items": {"type": "string"}, "description": "Optional glob patterns to exclude (e.g. [\"target/**\", \"*.lock\"])."}
            }),
            &["query"],
        ),
    )
}

fn grep_files() -> ToolSpec {
    spec(
        "grep_files",
        "Search workspace files for a regular expression, honouring .gitignore. Use it instead \
         of grep or rg in exec_shell. Returns matching lines with context (2 lines before and \
         after by default) as JSON.",
        object(
            json!({
                "pattern": {"type": "string", "description": "Regular expression pattern to search for"},
                "path": {"type": "string", "description": "Directory or file to search (relative to workspace, default: .)"},
                "include": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns for files to include (e.g., ['*.rs', '*.ts'])"},
                "exclude": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns for files to exclude (e.g., ['*.min.js', 'node_modules/*'])"},
                "context_lines": {"type": "integer", "description": "Number of context lines before and after each match (default: 2)"},
                "case_insensitive": {"type": "boolean", "description": "Whether to perform case-insensitive matching (default: false)"},
                "max_results": {"type": "integer", "description": "Maximum number of results to return (default: 100)"}
            }),
            &["pattern"],
        ),
    )
}

fn list_dir() -> ToolSpec {
    spec(
        "list_dir",
        "List the entries of a directory in the workspace as JSON (name, is_dir). Use it instead \
         of `ls` in exec_shell.",
        json!({"type": "object", "properties": {"path": {"type": "string", "description": "Relative path (default: .)"}}}),
    )
}

fn load_skill() -> ToolSpec {
    spec(
        "load_skill",
        "Load a skill's instructions (its SKILL.md) when the user names it or the task matches \
         one listed under ## Skills.",
        object(
            json!({"name": {"type": "string", "description": "Skill id, as listed under ## Skills."}}),
            &["name"],
        ),
    )
}

fn read_file() -> ToolSpec {
    spec(
        "read_file",
        "Read a UTF-8 file from the workspace: 200 lines by default, at most 500 per call. When \
         more remain, the result ends with `truncated=\"true\"` and the next_start_line to \
         continue from. Use it instead of cat, head, tail or sed -n.",
        object(
            json!({
                "path": {"type": "string", "description": "Path to the file (relative to workspace or absolute)"},
                "start_line": {"type": "integer", "description": "Starting line (1-based, default 1)"},
                "max_lines": {"type": "integer", "description": "Maximum lines to return (default 200, max 500)"}
            }),
            &["path"],
        ),
    )
}

fn write_file() -> ToolSpec {
    spec(
        "write_file",
        "Write a UTF-8 file in the workspace, creating it (and its folders) or replacing it. Use \
         it instead of heredocs or `echo >` in exec_shell. Returns a diff of the change.",
        object(
            json!({
                "path": {"type": "string", "description": "Path to the file"},
                "content": {"type": "string", "description": "Content to write"}
            }),
            &["path", "content"],
        ),
    )
}
