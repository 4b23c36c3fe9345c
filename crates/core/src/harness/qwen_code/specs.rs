//! Qwen Code's tool schemas: the original's names, parameters, types and required lists, with
//! descriptions in our own words. Parameters we cannot honour (background shells, PDF pages,
//! artifacts, fork and worktree options of `agent`, todo dependencies, ignore-file switches)
//! are left out rather than advertised and ignored.

use serde_json::{Value, json};

use crate::model::ToolSpec;
use crate::tools::table::{object, spec};

/// run_shell_command's timeouts, in milliseconds.
pub(crate) const SHELL_DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub(crate) const SHELL_MAX_TIMEOUT_MS: u64 = 600_000;

pub(crate) fn agent() -> ToolSpec {
    spec(
        "agent",
        "Start a subagent for a complex or multi-step task it can do on its own. It gets a fresh \
         context and returns one report, so the prompt must say everything it needs to know and \
         what to report.\n\nAgent types:\n- general-purpose (default): researches questions, \
         searches code and carries out multi-step tasks, edits included.\n- Explore: a fast, \
         read-only explorer for finding files and code by pattern or keyword.",
        object(
            json!({
                "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                "prompt": {"type": "string", "description": "The task for the agent to perform"},
                "subagent_type": {"type": "string", "description": "The named agent type to use"}
            }),
            &["description", "prompt"],
        ),
    )
}

pub(crate) fn skill() -> ToolSpec {
    spec(
        "skill",
        "Load a skill's instructions and follow them. Use it when the user names a skill or the \
         task matches one listed in the system prompt.",
        object(
            json!({
                "skill": {"type": "string", "description": "The skill name, as listed"},
                "args": {"type": "string", "description": "Optional arguments for the skill"}
            }),
            &["skill"],
        ),
    )
}

pub(crate) fn list_directory() -> ToolSpec {
    spec(
        "list_directory",
        "List the files and folders directly inside a directory, folders first, honouring \
         .gitignore. Entries matching an `ignore` glob are left out.",
        object(
            json!({
                "path": {"type": "string", "description": "The absolute path of the directory to list"},
                "ignore": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns of names to leave out"}
            }),
            &["path"],
        ),
    )
}

pub(crate) fn read_file() -> ToolSpec {
    spec(
        "read_file",
        "Read a file by absolute path (the project root joined with the relative path). Up to \
         1000 lines come back; for a longer file the result says which lines it shows and the \
         total, and offset (0-based line) with limit reads further.",
        object(
            json!({
                "file_path": {"type": "string", "description": "The absolute path to the file to read"},
                "offset": {"type": "integer", "description": "Optional: the 0-based line to start from. Requires limit."},
                "limit": {"type": "integer", "description": "Optional: how many lines to read."}
            }),
            &["file_path"],
        ),
    )
}

pub(crate) fn grep_search() -> ToolSpec {
    spec(
        "grep_search",
        "Search file contents with a regular expression, honouring .gitignore. Results are \
         grouped by file with line numbers. Use it instead of grep or rg in the shell.",
        object(
            json!({
                "pattern": {"type": "string", "description": "The regular expression pattern to search for in file contents"},
                "glob": {"type": "string", "description": "Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\")"},
                "path": {"type": "string", "description": "File or directory to search in. Defaults to the working directory."},
                "limit": {"type": "integer", "minimum": 1, "description": "Only the first N matching lines. All by default."}
            }),
            &["pattern"],
        ),
    )
}

pub(crate) fn glob() -> ToolSpec {
    spec(
        "glob",
        "Find files by glob pattern (`**/*.js`, `src/**/*.ts`), honouring .gitignore. Returns \
         absolute paths, recently changed files first; at most 100.",
        object(
            json!({
                "pattern": {"type": "string", "description": "The glob pattern to match files against"},
                "path": {"type": "string", "description": "The directory to search in. Omit it for the working directory."}
            }),
            &["pattern"],
        ),
    )
}

fn edit_properties() -> Value {
    json!({
        "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
        "old_string": {"type": "string", "description": "The exact text to replace, with enough context (about 3 lines before and after) to match once. Empty creates a new file."},
        "new_string": {"type": "string", "description": "The exact text to put in its place"},
        "replace_all": {"type": "boolean", "description": "Replace all occurrences of old_string (default false)."}
    })
}

pub(crate) fn edit() -> ToolSpec {
    spec(
        "edit",
        "Replace exact text in a file. old_string must match the file exactly (whitespace and \
         indentation included, no escaping) and only once unless replace_all is set. Read the \
         file with read_file first. The result shows the edited lines.",
        object(
            edit_properties(),
            &["file_path", "old_string", "new_string"],
        ),
    )
}

/// The name older Qwen Code releases gave `edit`.
pub(crate) fn legacy_replace() -> ToolSpec {
    spec(
        "replace",
        "Replace exact text in a file (older name of edit).",
        object(
            edit_properties(),
            &["file_path", "old_string", "new_string"],
        ),
    )
}

/// The name older Qwen Code releases gave `grep_search` (`include` was its file filter).
pub(crate) fn legacy_search() -> ToolSpec {
    spec(
        "search_file_content",
        "Search file contents with a regular expression (older name of grep_search).",
        object(
            json!({
                "pattern": {"type": "string"},
                "path": {"type": "string"},
                "include": {"type": "string"}
            }),
            &["pattern"],
        ),
    )
}

pub(crate) fn write_file() -> ToolSpec {
    spec(
        "write_file",
        "Write a whole file by absolute path, creating it or replacing its content. Read an \
         existing file before overwriting it; for changes to part of a file use edit.",
        object(
            json!({
                "file_path": {"type": "string", "description": "The absolute path to the file to write to"},
                "content": {"type": "string", "description": "The content to write to the file."}
            }),
            &["file_path", "content"],
        ),
    )
}

pub(crate) fn run_shell_command() -> ToolSpec {
    spec(
        "run_shell_command",
        "Run a command with `bash -c` in the project root (or `directory`). The result gives the \
         command, directory, output, error, exit code and signal. For terminal work (git, \
         builds, tests, package managers), not for reading, searching or editing files: the \
         file tools do that. The default timeout is 2 minutes, at most 10. Commands get no \
         input; use absolute paths rather than `cd`. Set `is_background` for servers and \
         watchers: they run on while you work.",
        object(
            json!({
                "command": {"type": "string", "description": "Exact bash command to execute as `bash -c <command>`"},
                "timeout": {"type": "integer", "minimum": 1, "maximum": SHELL_MAX_TIMEOUT_MS, "description": "Optional timeout in milliseconds (max 600000)"},
                "description": {"type": "string", "description": "A short description of the command for the user, one sentence."},
                "directory": {"type": "string", "description": "Optional: the absolute path of a directory inside the workspace to run the command in. The project root by default."},
                "is_background": {"type": "boolean", "description": "Run it in the background: true for servers, watchers and other commands that do not end by themselves; false for commands that finish. A background command's output goes to a file the result names, and you are told when it ends."}
            }),
            &["command", "is_background"],
        ),
    )
}

pub(crate) fn todo_write() -> ToolSpec {
    spec(
        "todo_write",
        "Create and update the task list the user sees, for complex or multi-step work: send the \
         whole list each time, keep one item in_progress, and mark items completed as soon as \
         they are done.",
        json!({"type": "object", "properties": {"todos": {
            "type": "array",
            "description": "The updated todo list",
            "items": {"type": "object", "properties": {
                "content": {"type": "string", "minLength": 1},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                "id": {"type": "string", "maxLength": 500}
            }, "required": ["content", "status", "id"], "additionalProperties": false}
        }}, "required": ["todos"]}),
    )
}

pub(crate) fn enter_plan_mode() -> ToolSpec {
    spec(
        "enter_plan_mode",
        "Switch to plan mode for a change that needs a design first: you may only read and \
         search until the user approves the plan you present with exit_plan_mode.",
        json!({"type": "object", "properties": {}}),
    )
}

pub(crate) fn exit_plan_mode() -> ToolSpec {
    spec(
        "exit_plan_mode",
        "In plan mode, present the implementation plan for the user's approval; once approved \
         you can edit and run commands.",
        object(
            json!({"plan": {"type": "string", "description": "The plan to present, in markdown"}}),
            &["plan"],
        ),
    )
}

/// Qwen Code's question tool, on the same question shape as Claude Code's.
pub(crate) fn ask_user_question() -> ToolSpec {
    spec(
        "ask_user_question",
        "Ask the user one to four questions with a few options each when a decision is theirs \
         to make (an ambiguous request, a choice between approaches). They can always answer in \
         their own words instead of picking.",
        crate::harness::claude_code::ask::question_schema("multiSelect"),
    )
}
