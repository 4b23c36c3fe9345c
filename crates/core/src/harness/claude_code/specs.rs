//! Claude Code's tool schemas: the names, parameters, types and required lists of the
//! original (Z Code shares most of them), with descriptions in our own words. Parameters we
//! cannot honour (sandbox escapes, model overrides) are left out rather than advertised and
//! ignored.

use serde_json::json;

use crate::model::ToolSpec;
use crate::tools::table::{closed_object, spec};

/// Bash's timeouts, in milliseconds, as Claude Code documents them.
pub(crate) const BASH_DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub(crate) const BASH_MAX_TIMEOUT_MS: u64 = 600_000;
/// Read's default and largest window, in lines.
pub(crate) const READ_MAX_LINES: usize = 1_000;
/// Lines longer than this are cut in Read's output.
pub(crate) const READ_MAX_LINE_CHARS: usize = 2_000;
/// Glob's and Grep's result caps.
pub(crate) const GLOB_LIMIT: usize = 250;
pub(crate) const GREP_HEAD_LIMIT: usize = 250;

pub(crate) fn agent(types: &str) -> ToolSpec {
    spec(
        "Agent",
        &format!(
            "Hand a self-contained task to a subagent with a fresh context. It gets the same \
             tools except Agent and the plan-mode tools, works on its own, and returns only its \
             final message, so put everything it needs in the prompt and ask for a concise \
             report. Use it for broad searches and research that would fill your context. \
             Types: {types}."
        ),
        closed_object(
            json!({
                "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                "prompt": {"type": "string", "description": "The task for the agent to perform"},
                "subagent_type": {"type": "string", "description": "The type of specialized agent to use for this task"}
            }),
            &["description", "prompt"],
        ),
    )
}

/// Bash; `background` adds `run_in_background` (the full profile, which has TaskOutput).
pub(crate) fn bash(description: &str, background: bool) -> ToolSpec {
    let mut properties = json!({
        "command": {"type": "string", "description": "The command to execute"},
        "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
        "description": {"type": "string", "description": "What the command does, in 5-10 words"}
    });
    if background {
        properties["run_in_background"] = json!({"type": "boolean", "description": "Run it in the background; use TaskOutput to read its output. You are notified when it finishes"});
    }
    spec("Bash", description, closed_object(properties, &["command"]))
}

pub(crate) const BASH_FULL: &str = "\
Run a bash command in the working directory and get its combined stdout and stderr back. \
The default timeout is 2 minutes (up to 10 minutes with `timeout`). Commands are \
non-interactive: stdin is closed. With `run_in_background` it runs on while you work (dev servers, watchers, long builds): you get a task ID at once, read its output with TaskOutput, stop it with TaskStop, and are notified when it finishes.
- Quote paths that contain spaces. Chain dependent steps with `&&`; send independent \
commands as separate calls in one response.
- Prefer Read, Edit, Write, Glob and Grep to cat, sed, echo, find and grep.
- Commit, push or rewrite git history only when the user asks; never skip hooks or force-push \
unless asked.";

pub(crate) fn read(description: &str) -> ToolSpec {
    spec(
        "Read",
        description,
        closed_object(
            json!({
                "file_path": {"type": "string", "description": "The absolute path to the file to read"},
                "offset": {"type": "integer", "minimum": 0, "description": "The line number to start reading from. Only provide if the file is too large to read at once"},
                "limit": {"type": "integer", "exclusiveMinimum": 0, "description": "The number of lines to read. Only provide if the file is too large to read at once."}
            }),
            &["file_path"],
        ),
    )
}

pub(crate) const READ_FULL: &str = "\
Read a file. Text comes back with numbered lines (`N<tab>text`), at most 1000 per call starting \
at line 1; use offset and limit for later parts of long files. Lines over 2000 characters are \
cut. Images (PNG, JPEG, GIF, WebP) come back as images, and PDFs as one image per page: a PDF \
of more than 10 pages needs `pages`, at most 20 pages per call. Read a file before editing it, \
and read several files in one response when you need them.";

/// Claude Code's `Read`, with `pages` for PDFs.
pub(crate) fn read_with_pages(description: &str) -> ToolSpec {
    let mut spec = read(description);
    spec.parameters["properties"]["pages"] = json!({"type": "string",
        "description": "Page range for PDF files (e.g. \"1-5\", \"3\", \"10-20\"). Only for PDFs; at most 20 pages per call."});
    spec
}

pub(crate) fn write(description: &str) -> ToolSpec {
    spec(
        "Write",
        description,
        closed_object(
            json!({
                "file_path": {"type": "string", "description": "The absolute path to the file to write (must be absolute, not relative)"},
                "content": {"type": "string", "description": "The content to write to the file"}
            }),
            &["file_path", "content"],
        ),
    )
}

pub(crate) const WRITE_FULL: &str = "\
Write a whole file, creating folders as needed; an existing file is replaced. Prefer Edit for \
changes to existing files, and do not create documentation files unless asked.";

pub(crate) fn edit(description: &str) -> ToolSpec {
    spec(
        "Edit",
        description,
        closed_object(
            json!({
                "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
                "old_string": {"type": "string", "description": "The text to replace"},
                "new_string": {"type": "string", "description": "The text to replace it with (must be different from old_string)"},
                "replace_all": {"type": "boolean", "default": false, "description": "Replace all occurrences of old_string (default false)"}
            }),
            &["file_path", "old_string", "new_string"],
        ),
    )
}

pub(crate) const EDIT_FULL: &str = "\
Replace exact text in a file. `old_string` must match the file exactly, indentation included \
(without Read's line-number prefix), and be unique unless `replace_all` is set; add \
surrounding lines to make it unique.";

pub(crate) fn glob() -> ToolSpec {
    spec(
        "Glob",
        "Find files by glob pattern (`**/*.rs`, `src/**/*.ts`), honouring .gitignore. Returns \
         matching paths relative to the working directory, sorted, at most 250.",
        closed_object(
            json!({
                "pattern": {"type": "string", "description": "The glob pattern to match files against"},
                "path": {"type": "string", "description": "The directory to search in. Omit it for the working directory."}
            }),
            &["pattern"],
        ),
    )
}

pub(crate) fn grep() -> ToolSpec {
    spec(
        "Grep",
        "Search file contents with a regular expression (ripgrep syntax), honouring \
         .gitignore. Use it instead of grep or rg in Bash. output_mode: files_with_matches \
         (default) lists files, content shows matching lines, count counts matches per file.",
        closed_object(
            json!({
                "pattern": {"type": "string", "description": "The regular expression pattern to search for in file contents"},
                "path": {"type": "string", "description": "File or directory to search in. Defaults to the working directory."},
                "glob": {"type": "string", "description": "Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\")"},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "Defaults to files_with_matches"},
                "-B": {"type": "number", "description": "Lines to show before each match (content mode)"},
                "-A": {"type": "number", "description": "Lines to show after each match (content mode)"},
                "-C": {"type": "number", "description": "Lines to show before and after each match (content mode)"},
                "-n": {"type": "boolean", "description": "Show line numbers (content mode). Defaults to true."},
                "-i": {"type": "boolean", "description": "Case insensitive search"},
                "type": {"type": "string", "description": "File type to search (rg --type): js, py, rust, go, java…"},
                "head_limit": {"type": "number", "description": "Only the first N lines or entries (default 250; 0 for all)"},
                "offset": {"type": "number", "description": "Skip the first N lines or entries (default 0)"},
                "multiline": {"type": "boolean", "description": "Let patterns span lines (. matches newlines). Default false."}
            }),
            &["pattern"],
        ),
    )
}

pub(crate) fn enter_plan_mode() -> ToolSpec {
    spec(
        "EnterPlanMode",
        "Switch to plan mode before a change that needs a design decision or touches many \
         files: you may only read and search until the user approves your plan. Then explore, \
         and call ExitPlanMode with the plan.",
        closed_object(json!({}), &[]),
    )
}

pub(crate) fn exit_plan_mode() -> ToolSpec {
    spec(
        "ExitPlanMode",
        "In plan mode, present your implementation plan to the user for approval. If they \
         approve, plan mode ends and you can edit files and run commands; if not, keep \
         planning. Only for plans of code changes, not for research answers.",
        closed_object(
            json!({
                "plan": {"type": "string", "minLength": 1, "description": "The implementation plan to present to the user for approval (markdown)"}
            }),
            &["plan"],
        ),
    )
}

/// Claude Code's ExitPlanMode: the plan, and the prompt-based permissions its 2.1 asks for
/// with it (`allowedPrompts`), shown to the user with the plan.
pub(crate) fn exit_plan_mode_with_prompts() -> ToolSpec {
    let mut spec = exit_plan_mode();
    spec.parameters["properties"]["allowedPrompts"] = json!({
        "type": "array",
        "description": "Permissions the plan needs, as categories of actions rather than commands (\"run tests\", \"install dependencies\"); shown to the user with the plan",
        "items": {"type": "object", "properties": {
            "tool": {"type": "string", "enum": ["Bash"], "description": "The tool this prompt applies to"},
            "prompt": {"type": "string", "description": "Semantic description of the action, e.g. \"run tests\""}
        }, "required": ["tool", "prompt"], "additionalProperties": false}
    });
    spec
}

pub(crate) fn skill() -> ToolSpec {
    spec(
        "Skill",
        "Run a skill from the available-skills list: you get its instructions back and follow \
         them. Use it when the user names a skill or the task matches one's description.",
        closed_object(
            json!({
                "skill": {"type": "string", "description": "The name of a skill from the available-skills list. Do not guess names."},
                "args": {"type": "string", "description": "Optional arguments for the skill"}
            }),
            &["skill"],
        ),
    )
}

pub(crate) fn todo_write() -> ToolSpec {
    spec(
        "TodoWrite",
        "Keep a todo list for the task: send the whole list each time. Use it for work of three \
         or more steps; mark one item in_progress when you start it and completed as soon as it \
         is done. The user sees the list.",
        closed_object(
            json!({
                "todos": {"type": "array", "description": "The updated todo list", "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        "activeForm": {"type": "string", "minLength": 1}
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": false
                }}
            }),
            &["todos"],
        ),
    )
}

pub(crate) fn task_create() -> ToolSpec {
    spec(
        "TaskCreate",
        "Add a task to this session's task list; the user sees the list. Use the list for work \
         of three or more steps, or when the user gives several things to do; skip it for a \
         single simple task. Give a short imperative subject (\"Fix the login bug\"), what has to \
         be done, and optionally activeForm, the present-continuous form shown while the task \
         is in progress (\"Fixing the login bug\"). New tasks are pending; set their status and \
         dependencies with TaskUpdate, and check TaskList first to avoid duplicates.",
        closed_object(
            json!({
                "subject": {"type": "string", "description": "A brief title for the task"},
                "description": {"type": "string", "description": "What needs to be done"},
                "activeForm": {"type": "string", "description": "Present continuous form shown in spinner when in_progress (e.g., \"Running tests\")"},
                "metadata": {"type": "object", "description": "Arbitrary metadata to attach to the task"}
            }),
            &["subject", "description"],
        ),
    )
}

pub(crate) fn task_get() -> ToolSpec {
    spec(
        "TaskGet",
        "Get one task of the task list by id: its subject, description, status, owner, the \
         tasks it waits for (blocked by) and the tasks waiting for it (blocks). Read a task \
         before you start or update it, and start only when nothing open blocks it.",
        closed_object(
            json!({
                "taskId": {"type": "string", "description": "The ID of the task to retrieve"}
            }),
            &["taskId"],
        ),
    )
}

pub(crate) fn task_list() -> ToolSpec {
    spec(
        "TaskList",
        "List the task list in summary: each task's id, subject, status, owner and the open \
         tasks that still block it. Use it to see progress and to pick the next task: one \
         that is pending, has no owner and is not blocked, lowest id first.",
        closed_object(json!({}), &[]),
    )
}

pub(crate) fn task_update() -> ToolSpec {
    spec(
        "TaskUpdate",
        "Change a task of the task list: its status (pending, in_progress, completed; \
         `deleted` removes it), subject, description, activeForm, owner or metadata, and add \
         dependencies (addBlocks: tasks that wait for this one; addBlockedBy: tasks this one \
         waits for). Set in_progress when you start a task and completed only when it is \
         fully done (tests pass, nothing left half-made); when blocked, keep it in_progress \
         and add a task for the blocker.",
        closed_object(
            json!({
                "taskId": {"type": "string", "description": "The ID of the task to update"},
                "subject": {"type": "string", "description": "New subject for the task"},
                "description": {"type": "string", "description": "New description for the task"},
                "activeForm": {"type": "string", "description": "Present continuous form shown in spinner when in_progress (e.g., \"Running tests\")"},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "deleted"], "description": "New status for the task; deleted removes it"},
                "addBlocks": {"type": "array", "items": {"type": "string"}, "description": "Task IDs that this task blocks"},
                "addBlockedBy": {"type": "array", "items": {"type": "string"}, "description": "Task IDs that block this task"},
                "owner": {"type": "string", "description": "New owner for the task"},
                "metadata": {"type": "object", "description": "Metadata keys to merge into the task. Set a key to null to delete it."}
            }),
            &["taskId"],
        ),
    )
}

pub(crate) fn notebook_edit() -> ToolSpec {
    spec(
        "NotebookEdit",
        "Edit one cell of a Jupyter notebook (.ipynb): replace its source (the default), \
         insert a new cell after the cell with `cell_id` (at the top when there is none), or \
         delete it. A replaced code cell loses its outputs and execution count. Cells are \
         named by their `id`, or as `cell-N` (0-based) in notebooks without ids. \
         notebook_path must be absolute.",
        closed_object(
            json!({
                "notebook_path": {"type": "string", "description": "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)"},
                "cell_id": {"type": "string", "description": "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified."},
                "new_source": {"type": "string", "description": "The new source for the cell"},
                "cell_type": {"type": "string", "enum": ["code", "markdown"], "description": "The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required."},
                "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "description": "The type of edit to make (replace, insert, delete). Defaults to replace."}
            }),
            &["notebook_path", "new_source"],
        ),
    )
}
