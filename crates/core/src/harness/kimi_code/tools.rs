//! Kimi Code's tools on our machinery: names, parameters, limits and result texts as the
//! model was trained to expect them.

use futures::future::BoxFuture;
use interpreter_protocol::{Plan, PlanItem, PlanStatus, ToolKind};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::harness::task_tools;
use crate::model::ToolSpec;
use crate::tools::edit::{self, EditMiss};
use crate::tools::files;
use crate::tools::search_tools::{self, paged};
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, location, spec, str_arg, str_or_empty,
};
use crate::tools::truncate::truncate_head;
use crate::tools::{CallDescription, SubagentTask, ToolContext, ToolOutcome, patch_runner, plan};
use crate::workspace::{Workspace, window};

fn tool(
    spec: ToolSpec,
    describe: fn(&Value, &Workspace) -> CallDescription,
    run: for<'a> fn(Value, &'a ToolContext) -> BoxFuture<'a, ToolResult>,
) -> Arc<dyn Tool> {
    FnTool::plain(WORDING, spec, describe, run)
}

/// Kimi Code's tools, sorted by name as it sends them.
pub(super) fn table(env: &crate::harness::PromptEnv) -> ToolTable {
    let [
        agent,
        bash,
        edit,
        glob_spec,
        grep_spec,
        read_spec,
        todo,
        write_spec,
    ] = specs();
    let mut tools = vec![
        FnTool::subagent(
            WORDING,
            agent,
            |a, _| {
                CallDescription::new(
                    ToolKind::Think,
                    format!("Subagent: {}", str_or_empty(a, "description")),
                    vec![],
                )
            },
            |a, c| Box::pin(run_agent(c, a)),
        ),
        super::ask::ask_user_question(),
        tool(
            bash,
            |a, _| {
                let command = str_or_empty(a, "command");
                CallDescription {
                    kind: ToolKind::Execute,
                    title: command.clone(),
                    locations: vec![],
                    command: Some(command),
                }
            },
            |a, c| Box::pin(self::bash(c, a)),
        ),
        tool(
            edit,
            |a, ws| {
                CallDescription::new(
                    ToolKind::Edit,
                    format!("Edit {}", str_or_empty(a, "path")),
                    location(ws, a, "path"),
                )
            },
            |a, c| Box::pin(self::edit(c, a)),
        ),
        tool(
            glob_spec,
            |a, _| {
                CallDescription::new(
                    ToolKind::Search,
                    format!("Glob `{}`", str_or_empty(a, "pattern")),
                    vec![],
                )
            },
            |a, c| Box::pin(glob(c, a)),
        ),
        tool(
            grep_spec,
            |a, _| {
                CallDescription::new(
                    ToolKind::Search,
                    format!("Grep `{}`", str_or_empty(a, "pattern")),
                    vec![],
                )
            },
            |a, c| Box::pin(grep(c, a)),
        ),
        tool(
            read_spec,
            |a, ws| {
                CallDescription::new(
                    ToolKind::Read,
                    format!("Read {}", str_or_empty(a, "path")),
                    location(ws, a, "path"),
                )
            },
            |a, c| Box::pin(read(c, a)),
        ),
        Arc::new(TodoList {
            spec: todo,
            todos: Mutex::new(Vec::new()),
        }),
        tool(
            write_spec,
            |a, ws| {
                CallDescription::new(
                    ToolKind::Edit,
                    format!("Write {}", str_or_empty(a, "path")),
                    location(ws, a, "path"),
                )
            },
            |a, c| Box::pin(write(c, a)),
        ),
    ];
    tools.extend(capability_tools(env));
    tools.sort_by(|a, b| a.spec().name.cmp(&b.spec().name));
    ToolTable::new(tools)
}

/// The tools on the core's shared capabilities: background tasks, and the web where the
/// session allows it.
fn capability_tools(env: &crate::harness::PromptEnv) -> Vec<Arc<dyn Tool>> {
    use crate::harness::web_tools;
    let mut tools = vec![
        super::swarm::agent_swarm(),
        task_tools::task_list(WORDING),
        task_tools::task_output(task_tools::Flavor::Kimi, WORDING),
        task_tools::task_stop(task_tools::Flavor::Kimi, WORDING),
    ];
    tools.extend(crate::harness::cron_tools::cron_tools(WORDING));
    tools.extend(super::goals::tools());
    tools.extend(plan_tools());
    if !env.skills.is_empty() {
        tools.push(Arc::new(crate::harness::session_tools::SkillTool {
            spec: spec(
                "Skill",
                "Run a skill from the skill listing. When a listed skill matches the request, you MUST call this tool rather than answer in free text. Do not call it again for a skill whose `<kimi-skill-loaded>` block with the same `args` is already in the conversation: follow that block. Call it again when you need the skill with other arguments.",
                json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
                    "skill": {"type": "string", "description": "The skill's exact name as the listing spells it (e.g. \"review\")."},
                    "args": {"type": "string", "description": "Arguments for the skill, written like a command line (e.g. `123`, a path). They fill its $ARGUMENTS, or follow as an `ARGUMENTS:` line when it has none. Leave it out when there is nothing to pass."}
                }, "required": ["skill"], "additionalProperties": false}),
            ),
            skills: env.skills.clone(),
            wording: WORDING,
            param: "skill",
            render: skill_loaded,
        }));
    }
    if env.web.fetch {
        tools.push(web_tools::fetch_url(WORDING));
    }
    if env.images {
        tools.push(crate::harness::media_tools::read_media_file(WORDING));
    }
    if env.web.search {
        tools.push(web_tools::web_search(web_tools::Flavor::Kimi, WORDING));
    }
    tools
}

/// Kimi Code's Agent schema.
pub(in crate::harness) fn agent_spec() -> ToolSpec {
    specs()[0].clone()
}

fn specs() -> [ToolSpec; 8] {
    [
        spec(
            "Agent",
            "Start a subagent with a fresh context for a self-contained task (research, a search across the codebase, a focused change). It has the same tools except Agent and returns only its final message, so give it everything it needs in the prompt.",
            json!({"type": "object", "properties": {
                "description": {"type": "string", "description": "A short (3-5 words) description of the task"},
                "prompt": {"type": "string", "description": "The full task for the subagent"},
                "subagent_type": {"type": "string", "enum": ["coder", "explore", "plan"], "description": "coder (default) may edit; explore and plan only read"},
                "resume": {"type": "string", "description": "The agent_id of an earlier agent to continue with this prompt, instead of a new one; it keeps its own type, so leave out subagent_type"}
            }, "required": ["description", "prompt"], "additionalProperties": false}),
        ),
        spec(
            "Bash",
            "Run a bash command in the working directory and return its combined stdout and stderr. Non-interactive: stdin is closed. With run_in_background the command runs on while you work: use TaskOutput to read its output, TaskStop to stop it; you are notified when it ends.",
            json!({"type": "object", "properties": {
                "command": {"type": "string", "minLength": 1, "description": "The command to run"},
                "cwd": {"type": "string", "description": "Working directory (default: the session's)"},
                "timeout": {"type": "integer", "minimum": 1, "maximum": BACKGROUND_MAX_TIMEOUT_S, "default": BASH_DEFAULT_TIMEOUT_S, "description": "Timeout in seconds: at most 300 in the foreground; in the background 600 by default, at most 86400"},
                "description": {"type": "string", "description": "What the command does, in a few words (required in the background)"},
                "run_in_background": {"type": "boolean", "default": false, "description": "Run it in the background (servers, watchers, long builds): you get a task ID at once and are notified when it finishes"}
            }, "required": ["command"], "additionalProperties": false}),
        ),
        spec(
            "Edit",
            "Replace exact text in a file. `old_string` must match the file exactly (without Read's line-number prefixes) and be unique unless `replace_all` is set.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string", "minLength": 1},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean", "default": false}
            }, "required": ["path", "old_string", "new_string"], "additionalProperties": false}),
        ),
        spec(
            "Glob",
            "Find files (and folders) whose path matches a glob pattern (e.g. `src/**/*.ts`), honouring .gitignore; the most recently changed come first.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "Directory to search (default: the working directory)"},
                "head_limit": {"type": "integer", "minimum": 0, "default": GLOB_HEAD_LIMIT, "description": "Maximum results; 0 for all"},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "include_dirs": {"type": "boolean", "default": true, "description": "Also list folders that match"},
                "include_ignored": {"type": "boolean", "default": false}
            }, "required": ["pattern"], "additionalProperties": false}),
        ),
        spec(
            "Grep",
            "Search file contents with a regular expression (ripgrep syntax), honouring .gitignore.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "File or directory (default: the working directory)"},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.rs"},
                "type": {"type": "string", "description": "Only files of this type, e.g. rust, py, js"},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count_matches"], "default": "files_with_matches"},
                "-i": {"type": "boolean", "description": "Case insensitive"},
                "-n": {"type": "boolean", "default": true, "description": "Line numbers (content mode)"},
                "-A": {"type": "integer", "minimum": 0, "description": "Lines after each match"},
                "-B": {"type": "integer", "minimum": 0, "description": "Lines before each match"},
                "-C": {"type": "integer", "minimum": 0, "description": "Lines around each match"},
                "head_limit": {"type": "integer", "minimum": 0, "default": GREP_HEAD_LIMIT, "description": "Maximum output lines; 0 for all"},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "multiline": {"type": "boolean", "default": false},
                "include_ignored": {"type": "boolean", "default": false}
            }, "required": ["pattern"], "additionalProperties": false}),
        ),
        spec(
            "Read",
            "Read a text file with line numbers: at most 1000 lines or 100 KiB per call. Use line_offset (negative counts from the end) and n_lines to page.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "line_offset": {"type": "integer", "default": 1, "description": "First line (1-based); negative reads the last lines"},
                "n_lines": {"type": "integer", "minimum": 1, "maximum": READ_MAX_LINES, "default": READ_MAX_LINES}
            }, "required": ["path"], "additionalProperties": false}),
        ),
        spec(
            "TodoList",
            "Set the task's todo list (the whole list each time). Omit `todos` to read it; an empty list clears it.",
            json!({"type": "object", "properties": {
                "todos": {"type": "array", "items": {"type": "object", "properties": {
                    "title": {"type": "string", "minLength": 1},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
                }, "required": ["title", "status"], "additionalProperties": false}}
            }, "additionalProperties": false}),
        ),
        spec(
            "Write",
            "Write a whole file (creating folders as needed), or append to it.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "mode": {"type": "string", "enum": ["overwrite", "append"], "default": "overwrite"}
            }, "required": ["path", "content"], "additionalProperties": false}),
        ),
    ]
}

/// The todo list, as the model last set it: per session, since the table is.
struct TodoList {
    spec: ToolSpec,
    todos: Mutex<Vec<PlanItem>>,
}

impl Tool for TodoList {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, _args: &Value, _ws: &Workspace) -> CallDescription {
        CallDescription::new(ToolKind::Think, "Update todo list".into(), vec![])
    }
    fn run<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { WORDING.outcome(todo_list(&self.todos, &args)) })
    }
}

/// Kimi Code's Agent (kimi-cli's newer prompt has the same): a subagent, or an earlier one
/// continued by `resume`, answered in its `agent_id` / `actual_subagent_type` shape.
pub(in crate::harness) async fn run_agent(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(prompt) = args
        .get("prompt")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
    else {
        return Err(ToolError::message(
            "`prompt` is required: the whole task for the subagent.",
        ));
    };
    let kind = str_arg(&args, "subagent_type")
        .map(str::trim)
        .filter(|k| !k.is_empty());
    let resume = str_arg(&args, "resume")
        .map(str::trim)
        .filter(|r| !r.is_empty());
    if resume.is_some() && kind.is_some() {
        return Err(ToolError::message(
            "Pass either `resume` or `subagent_type`, not both: a resumed agent keeps its own type.",
        ));
    }
    let o = ctx
        .run_subagent(SubagentTask {
            prompt: prompt.to_string(),
            read_only: matches!(kind, Some("explore" | "plan")),
            resume: resume.map(String::from),
        })
        .await;
    if o.is_error() {
        return Ok(o);
    }
    let kind = o
        .subagent
        .as_ref()
        .map(|s| s.kind.clone())
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "coder".into());
    let mut shaped = ToolOutcome::ok(format!(
        "agent_id: {}\nactual_subagent_type: {kind}\nstatus: completed\n\n[summary]\n{}",
        o.subagent_id(),
        o.model_output
    ));
    shaped.user_output = o.user_output;
    Ok(shaped)
}

fn capped(text: &str) -> String {
    truncate_head(text, MAX_OUTPUT_CHARS, MAX_LINE_CHARS)
}

fn uint_arg(args: &Value, k: &str) -> Option<u64> {
    args.get(k).and_then(Value::as_u64)
}

async fn bash(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(command) = str_arg(&args, "command").filter(|c| !c.trim().is_empty()) else {
        return Err(ToolError::message("`command` must be a non-empty string."));
    };
    let background = args
        .get("run_in_background")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (default, max) = match background {
        true => (BACKGROUND_DEFAULT_TIMEOUT_S, BACKGROUND_MAX_TIMEOUT_S),
        false => (BASH_DEFAULT_TIMEOUT_S, BASH_MAX_TIMEOUT_S),
    };
    let timeout = uint_arg(&args, "timeout").unwrap_or(default);
    if timeout == 0 || timeout > max {
        let hint = match background {
            true => "",
            false => " in the foreground; use run_in_background for longer commands",
        };
        return Err(ToolError::message(format!(
            "`timeout` must be between 1 and {max} seconds{hint}."
        )));
    }
    if background {
        let description = str_arg(&args, "description").unwrap_or_default();
        if description.trim().is_empty() {
            return Err(ToolError::message(
                "`description` is required with `run_in_background`.",
            ));
        }
        let cwd = ctx.workspace.resolve_dir(str_arg(&args, "cwd"))?;
        let task = ctx
            .start_background(
                "Bash",
                command,
                description,
                &cwd,
                Duration::from_secs(timeout),
            )
            .await?;
        return Ok(ToolOutcome::ok(task_tools::started(
            task_tools::Flavor::Kimi,
            &task,
        )));
    }
    let cwd = ctx.workspace.resolve_dir(str_arg(&args, "cwd"))?;
    let r = ctx
        .authorize_and_run(
            "Bash",
            ToolKind::Execute,
            command,
            &cwd,
            Duration::from_secs(timeout),
            "could not run the command",
        )
        .await?;
    let mut text = capped(&r.output);
    let ok = r.succeeded();
    if r.timed_out {
        let _ = write!(text, "\nCommand killed by timeout ({timeout}s).");
    } else if r.cancelled {
        text.push_str("\nCommand was cancelled by the user.");
    } else if !ok {
        let _ = write!(
            text,
            "\nCommand failed with exit code: {}",
            r.exit_code.unwrap_or(-1)
        );
    } else if text.trim().is_empty() {
        text = "Command executed successfully.".into();
    }
    Ok(ToolOutcome::from_exec(r, text))
}

async fn read(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path") else {
        return Err(ToolError::message("`path` is required."));
    };
    let offset = args.get("line_offset").and_then(Value::as_i64).unwrap_or(1);
    if offset == 0 {
        return Err(ToolError::message(
            "`line_offset` is 1-based (or negative to read from the end).",
        ));
    }
    let n = uint_arg(&args, "n_lines")
        .unwrap_or(READ_MAX_LINES as u64)
        .clamp(1, READ_MAX_LINES as u64) as usize;
    let w = match crate::skills::read_builtin(raw) {
        Some(t) => window::from_text(t, offset, n),
        None => {
            let path = ctx.workspace.resolve(raw)?;
            ctx.workspace
                .read_lines(&path, offset, n, (MAX_LINE_CHARS + 1) * 4)
                .await
                .map_err(|source| ToolError::Read {
                    path: raw.to_string(),
                    source,
                })?
        }
    };
    let mut out = String::new();
    let mut shown = 0usize;
    let mut cut_by_size = false;
    for (num, line) in &w.lines {
        let line = files::clip_line(line, MAX_LINE_CHARS);
        if out.len() + line.len() + 8 > READ_MAX_BYTES {
            cut_by_size = true;
            break;
        }
        let _ = writeln!(out, "{num}\t{line}");
        shown += 1;
    }
    let first = w.lines.first().map(|(n, _)| *n).unwrap_or(0);
    let end = if w.reached_end && !cut_by_size && shown == w.lines.len() {
        " End of file reached."
    } else {
        ""
    };
    let status = format!(
        "<system>{shown} lines read from file starting from line {first}. Total lines in file: {}.{end}</system>",
        w.total_lines
    );
    // The seed's order: the lines, then the status line.
    Ok(ToolOutcome::ok(format!("{out}{status}")))
}

async fn write(ctx: &ToolContext, args: Value) -> ToolResult {
    let (Some(raw), Some(content)) = (str_arg(&args, "path"), str_arg(&args, "content")) else {
        return Err(ToolError::message("`path` and `content` are required."));
    };
    let path = ctx.workspace.resolve(raw)?;
    let old = ctx
        .workspace
        .read_optional(&path)
        .await
        .map_err(|source| ToolError::Read {
            path: raw.to_string(),
            source,
        })?;
    let new = match str_arg(&args, "mode").unwrap_or("overwrite") {
        "append" => format!("{}{content}", old.as_deref().unwrap_or("")),
        "overwrite" => content.to_string(),
        other => {
            return Err(ToolError::message(format!(
                "unknown mode `{other}` (overwrite or append)."
            )));
        }
    };
    let change = patch_runner::write_one(ctx, "Write", &path, old, new).await?;
    let mut o = ToolOutcome::ok(format!("Wrote {} bytes to {raw}", content.len()));
    o.changes = vec![change];
    Ok(o)
}

async fn edit(ctx: &ToolContext, args: Value) -> ToolResult {
    let (Some(raw), Some(old_s), Some(new_s)) = (
        str_arg(&args, "path"),
        str_arg(&args, "old_string"),
        str_arg(&args, "new_string"),
    ) else {
        return Err(ToolError::message(
            "`path`, `old_string` and `new_string` are required.",
        ));
    };
    // Edit's own failures are worded "Edit failed: …", not "ERROR: …".
    let failed = |why: String| ToolError::from(ToolOutcome::error(format!("Edit failed: {why}")));
    if old_s.is_empty() {
        return Err(failed("old_string must not be empty.".into()));
    }
    if old_s == new_s {
        return Err(failed("old_string and new_string are the same.".into()));
    }
    let replace_all = args
        .get("replace_all")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let path = ctx.workspace.resolve(raw)?;
    let text = ctx
        .workspace
        .read_text(&path)
        .await
        .map_err(|e| failed(format!("could not read {raw}: {e}")))?;
    let (new_text, count) = match edit::replace_exact(&text, old_s, new_s, replace_all) {
        Ok(r) => r,
        Err(EditMiss::NotFound) => return Err(failed(format!("old_string not found in {raw}."))),
        Err(EditMiss::Ambiguous(count)) => {
            return Err(failed(format!(
                "old_string found {count} times in {raw}; add surrounding text to make it unique, or set replace_all to true."
            )));
        }
    };
    let change = patch_runner::write_one(ctx, "Edit", &path, Some(text), new_text).await?;
    let mut o = ToolOutcome::ok(format!("Replaced {count} occurrence(s) in {raw}"));
    o.changes = vec![change];
    Ok(o)
}

async fn glob(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(pattern) = str_arg(&args, "pattern").map(String::from) else {
        return Err(ToolError::message("`pattern` is required."));
    };
    if pattern.starts_with("**") && pattern.len() <= 3 {
        return Err(ToolError::message(
            "the pattern matches everything; narrow it (e.g. `src/**/*.rs`).",
        ));
    }
    let root = ctx
        .workspace
        .resolve(str_arg(&args, "path").unwrap_or("."))?;
    let include_ignored = args
        .get("include_ignored")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let offset = uint_arg(&args, "offset").unwrap_or(0) as usize;
    let limit = uint_arg(&args, "head_limit").unwrap_or(GLOB_HEAD_LIMIT as u64) as usize;
    let include_dirs = args
        .get("include_dirs")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let (mut paths, _) =
        search_tools::glob(ctx, root.clone(), &pattern, include_ignored, 100_000).await?;
    if include_dirs {
        let pattern = pattern.clone();
        let dirs = tokio::task::spawn_blocking(move || {
            files::glob_dirs(&root, &pattern, include_ignored, 100_000)
        })
        .await
        .map_err(|e| ToolError::message(format!("glob failed: {e}")))?
        .map_err(ToolError::Message)?;
        paths.extend(dirs);
    }
    if paths.is_empty() {
        return Ok(ToolOutcome::ok("No files found."));
    }
    // Newest first, as Kimi Code lists them: what was just changed is what matters.
    paths.sort_by_cached_key(|p| {
        std::cmp::Reverse(
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::SystemTime::UNIX_EPOCH),
        )
    });
    let (page, total) = paged(paths, offset, limit);
    let mut out: String = page
        .iter()
        .map(|p| format!("{}\n", ctx.workspace.display_path(p)))
        .collect();
    if offset + page.len() < total {
        let _ = write!(
            out,
            "Results truncated to {} files (total: {total}). Use offset={} to see more.",
            page.len(),
            offset + page.len()
        );
    }
    Ok(ToolOutcome::ok(out))
}

async fn grep(ctx: &ToolContext, args: Value) -> ToolResult {
    let call = search_tools::grep_call(ctx, &args, GREP_HEAD_LIMIT)?;
    let mode = str_arg(&args, "output_mode").unwrap_or("files_with_matches");
    let hits = search_tools::search(&call).await?;
    if hits.is_empty() {
        return Ok(ToolOutcome::ok("No matches found."));
    }
    let show = |p: &std::path::Path| ctx.workspace.display_path(p);
    let lines: Vec<String> = match mode {
        "content" => search_tools::content_lines(&hits, call.numbers, show),
        "count_matches" => hits
            .iter()
            .map(|f| format!("{}:{}", show(&f.path), f.matches))
            .collect(),
        "files_with_matches" => hits.iter().map(|f| show(&f.path)).collect(),
        other => {
            return Err(ToolError::message(format!(
                "unknown output_mode `{other}` (content, files_with_matches or count_matches)."
            )));
        }
    };
    let (page, total) = paged(lines, call.offset, call.head_limit);
    let mut out = page.join("\n");
    if call.offset + page.len() < total {
        let _ = write!(
            out,
            "\nResults truncated to {} lines (total: {total}). Use offset={} to see more.",
            page.len(),
            call.offset + page.len()
        );
    }
    if mode == "count_matches" {
        let occurrences: u64 = hits.iter().map(|f| f.matches).sum();
        let _ = write!(
            out,
            "\n\nFound {occurrences} total occurrences across {} files.",
            hits.len()
        );
    }
    Ok(ToolOutcome::ok(capped(&out)))
}

/// What ends an update of the list (Kimi Code's reminder, in our words).
const TODO_REMINDER: &str = "Keep using the todo list to track progress: mark each task done as soon as it is finished, and keep exactly one task in_progress while work is underway.";

fn todo_list(state: &Mutex<Vec<PlanItem>>, args: &Value) -> ToolResult {
    let mut todos = state.lock().unwrap_or_else(|e| e.into_inner());
    let render = |items: &[PlanItem]| -> String {
        if items.is_empty() {
            return "Todo list is empty.".into();
        }
        let mut s = String::from("Current todo list:");
        for i in items {
            let st = match i.status {
                PlanStatus::Pending => "pending",
                PlanStatus::InProgress => "in_progress",
                PlanStatus::Completed => "done",
            };
            let _ = write!(s, "\n  [{st}] {}", i.step);
        }
        s
    };
    let Some(list) = args.get("todos").filter(|v| !v.is_null()) else {
        return Ok(ToolOutcome::ok(render(&todos)));
    };
    let Some(list) = list.as_array() else {
        return Err(ToolError::message(
            "`todos` must be an array of {title, status}.",
        ));
    };
    let dialect = plan::Dialect {
        text_field: "title",
        completed: "done",
    };
    let items = plan::parse_items(list, &dialect).map_err(|e| match e {
        plan::PlanError::EmptyText => ToolError::message("every todo needs a non-empty `title`."),
        plan::PlanError::UnknownStatus(other) => ToolError::message(format!(
            "unknown status `{other}` (pending, in_progress or done)."
        )),
    })?;
    *todos = items.clone();
    let text = match items.is_empty() {
        true => "Todo list cleared.".to_string(),
        false => format!("Todo list updated.\n{}\n\n{TODO_REMINDER}", render(&items)),
    };
    let mut o = ToolOutcome::ok(text);
    o.plan = Some(Plan {
        explanation: None,
        items,
    });
    Ok(o)
}

/// Kimi Code's loaded skill: the notice, then the body in `<kimi-skill-loaded>` (the original
/// sends the block as a user message after the result; ours is the result itself).
fn skill_loaded(skill: &crate::skills::Skill, args: &str) -> String {
    let attr = |v: &str| v.replace('&', "&amp;").replace('"', "&quot;");
    let escaped = args.replace('<', "&lt;").replace('>', "&gt;");
    let body = skill.body.trim();
    let body = match body.contains("$ARGUMENTS") {
        true => body.replace("$ARGUMENTS", &escaped),
        false if !args.trim().is_empty() => format!("{body}\n\nARGUMENTS: {escaped}"),
        false => body.to_string(),
    };
    let source = match skill.scope {
        crate::skills::Scope::Repo => "project",
        crate::skills::Scope::User => "user",
        crate::skills::Scope::Bundled => "builtin",
    };
    let dir = std::path::Path::new(&skill.path)
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    format!(
        "Skill \"{name}\" loaded inline. Follow its instructions.\n\n<kimi-skill-loaded name=\"{name}\" trigger=\"model-tool\" source=\"{source}\" dir=\"{dir}\" args=\"{args}\">\n{body}\n</kimi-skill-loaded>",
        name = attr(&skill.name),
        dir = attr(&dir),
        args = attr(args),
    )
}

/// Kimi Code's EnterPlanMode and ExitPlanMode on our plan mode. The original's ExitPlanMode
/// reads the plan from a plan file the model writes in plan mode; ours writes nothing in
/// plan mode, so the plan comes as `plan`, beside the original's `options`.
fn plan_tools() -> Vec<Arc<dyn Tool>> {
    use crate::harness::session_tools::{PlanModeTool, PlanTool};
    let enter = Arc::new(PlanModeTool {
        spec: spec(
            "EnterPlanMode",
            "Switch to plan mode before a non-trivial change: a new feature, several valid approaches, changes across more than a few files, unclear requirements, or a choice the user should make. In plan mode you only read and search; explore, design, then present the plan with ExitPlanMode for the user's approval. Not for small fixes, precise instructions or pure research.",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {}, "additionalProperties": false}),
        ),
        which: PlanTool::Enter,
        wording: WORDING,
    }) as Arc<dyn Tool>;
    let exit = FnTool::plain(
        WORDING,
        spec(
            "ExitPlanMode",
            "In plan mode, when the plan is ready: present it to the user for approval. Give the whole plan as `plan` (markdown: concrete, checkable steps naming the real files, functions and commands). When it offers alternative approaches, list them in `options` (up to 3) so the user sees them. Do not ask \"is this plan OK?\" with AskUserQuestion: this tool does that. If the user rejects it, revise and call it again.",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
                "plan": {"type": "string", "minLength": 1, "description": "The plan to approve (markdown)"},
                "options": {"type": "array", "minItems": 1, "maxItems": 3, "description": "Alternative approaches the plan offers, for the user to see; not labelled Reject, Revise or Approve", "items": {
                    "type": "object", "properties": {
                        "label": {"type": "string", "description": "The approach, in a few words"},
                        "description": {"type": "string", "description": "What it means"}
                    }, "required": ["label"], "additionalProperties": false}}
            }, "required": ["plan"], "additionalProperties": false}),
        ),
        |_, _| CallDescription::new(ToolKind::Think, "Present the plan".into(), vec![]),
        |a, c| Box::pin(exit_plan(c, a)),
    );
    vec![enter, exit]
}

/// The plan with its options under it, then the shared approval (`session_tools::exit`).
async fn exit_plan(ctx: &ToolContext, args: Value) -> ToolResult {
    let plan = str_arg(&args, "plan")
        .unwrap_or_default()
        .trim()
        .to_string();
    let options: Vec<String> = args
        .get("options")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, o)| {
            let label = o.get("label")?.as_str()?.trim();
            let about = o
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim();
            Some(match about.is_empty() {
                true => format!("{}. {label}", i + 1),
                false => format!("{}. {label}: {about}", i + 1),
            })
        })
        .collect();
    let shown = match (plan.is_empty(), options.is_empty()) {
        (true, _) => String::new(),
        (false, true) => plan,
        (false, false) => format!("{plan}\n\nApproaches:\n{}", options.join("\n")),
    };
    crate::harness::session_tools::exit(ctx, &json!({"plan": shown})).await
}
