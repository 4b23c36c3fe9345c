//! opencode's ten tools, alphabetical as it sends them, with its schemas and result texts.

use interpreter_protocol::{Plan, ToolKind, ToolStatus};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::harness::PromptEnv;
use crate::harness::session_tools::{describe, todo_items};
use crate::skills::Skill;
use crate::tools::files::SearchOptions;
use crate::tools::search_tools::{self, GrepCall};
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, ToolTable, Wording, location, spec, str_arg, str_or_empty,
};
use crate::tools::{
    CallDescription, SubagentTask, ToolContext, ToolOutcome, media, patch_runner, web,
};

const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};
const READ_LIMIT: usize = 2000;
const READ_MAX_BYTES: usize = 50 * 1024;
const LINE_CHARS: usize = 2000;
const LIST_LIMIT: usize = 100;
const BASH_TIMEOUT_MS: u64 = 120_000;
const BASH_MAX_LINES: usize = 2000;
const BASH_MAX_BYTES: usize = 51_200;

/// zod's JSON Schema: `$schema`, closed objects.
fn schema(properties: Value, required: &[&str]) -> Value {
    json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
           "properties": properties, "required": required, "additionalProperties": false})
}

fn file_describe(kind: ToolKind) -> fn(&Value, &crate::workspace::Workspace) -> CallDescription {
    match kind {
        ToolKind::Read => |a, ws| {
            CallDescription::new(
                ToolKind::Read,
                format!("Read {}", str_or_empty(a, "filePath")),
                location(ws, a, "filePath"),
            )
        },
        _ => |a, ws| {
            CallDescription::new(
                ToolKind::Edit,
                format!("Edit {}", str_or_empty(a, "filePath")),
                location(ws, a, "filePath"),
            )
        },
    }
}

pub(super) fn table(env: &PromptEnv) -> ToolTable {
    let mut tools = file_tools();
    if !env.skills.is_empty() {
        tools.push(Arc::new(SkillTool {
            spec: spec(
                "skill",
                "Loads a skill's instructions by name, from the available skills.",
                schema(
                    json!({"name": {"type": "string", "description": "The name of the skill from available_skills"}}),
                    &["name"],
                ),
            ),
            skills: env.skills.clone(),
        }));
    }
    tools.extend(session_tools());
    ToolTable::new(tools)
}

fn plain(
    name: &str,
    description: &str,
    parameters: Value,
    d: fn(&Value, &crate::workspace::Workspace) -> CallDescription,
    run: crate::tools::table::RunFn,
) -> Arc<dyn Tool> {
    FnTool::plain(WORDING, spec(name, description, parameters), d, run)
}

/// bash, edit, glob, grep and read.
fn file_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        plain(
            "bash",
            "Runs a bash command in a shell session, with an optional timeout (milliseconds, 2 minutes by default). Use workdir instead of cd. Output over 2000 lines or 51200 bytes is cut to its end. Prefer the glob, grep, read, edit and write tools for files; chain dependent commands with &&.",
            schema(
                json!({
                    "command": {"type": "string", "description": "The command to execute"},
                    "timeout": {"type": "number", "description": "Optional timeout in milliseconds"},
                    "workdir": {"type": "string", "description": "The working directory to run the command in. Defaults to the current directory. Use this instead of 'cd' commands."},
                    "description": {"type": "string", "description": "Clear, concise description of what this command does in 5-10 words"}
                }),
                &["command", "description"],
            ),
            |a, _| {
                let mut d = describe(ToolKind::Execute, str_or_empty(a, "command"));
                d.command = Some(str_or_empty(a, "command"));
                d
            },
            |a, c| Box::pin(bash(c, a)),
        ),
        plain(
            "edit",
            "Replaces exact text in a file. Read the file first; oldString must match the file exactly (without the line-number prefix read shows) and be unique unless replaceAll is set.",
            schema(
                json!({
                    "filePath": {"type": "string", "description": "The absolute path to the file to modify"},
                    "oldString": {"type": "string", "description": "The text to replace"},
                    "newString": {"type": "string", "description": "The text to replace it with (must be different from oldString)"},
                    "replaceAll": {"type": "boolean", "description": "Replace all occurrences of oldString (default false)"}
                }),
                &["filePath", "oldString", "newString"],
            ),
            file_describe(ToolKind::Edit),
            |a, c| Box::pin(edit(c, a)),
        ),
        plain(
            "glob",
            "Finds files by glob pattern (\"**/*.js\", \"src/**/*.ts\"), newest first.",
            schema(
                json!({
                    "pattern": {"type": "string", "description": "The glob pattern to match files against"},
                    "path": {"type": "string", "description": "The directory to search in. If not specified, the current working directory will be used. Omit this field for the default; never send \"undefined\" or \"null\"."}
                }),
                &["pattern"],
            ),
            |a, _| {
                describe(
                    ToolKind::Search,
                    format!("Glob {}", str_or_empty(a, "pattern")),
                )
            },
            |a, c| Box::pin(glob(c, a)),
        ),
        plain(
            "grep",
            "Searches file contents with a regular expression; matching files newest first, with their line numbers.",
            schema(
                json!({
                    "pattern": {"type": "string", "description": "The regex pattern to search for in file contents"},
                    "path": {"type": "string", "description": "The directory to search in. Defaults to the current working directory."},
                    "include": {"type": "string", "description": "File pattern to include in the search (e.g. \"*.js\", \"*.{ts,tsx}\")"}
                }),
                &["pattern"],
            ),
            |a, _| {
                describe(
                    ToolKind::Search,
                    format!("Grep {}", str_or_empty(a, "pattern")),
                )
            },
            |a, c| Box::pin(grep(c, a)),
        ),
        plain(
            "read",
            "Reads a file or a directory. Up to 2000 lines from offset by default, lines longer than 2000 characters cut; each line comes as `N: text`. Images come back as images.",
            schema(
                json!({
                    "filePath": {"type": "string", "description": "The absolute path to the file or directory to read"},
                    "offset": {"type": "number", "description": "The line number to start reading from (1-indexed)"},
                    "limit": {"type": "number", "description": "The maximum number of lines to read (defaults to 2000)"}
                }),
                &["filePath"],
            ),
            file_describe(ToolKind::Read),
            |a, c| Box::pin(read(c, a)),
        ),
    ]
}

/// task, todowrite, webfetch and write.
fn session_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        FnTool::subagent(
            WORDING,
            spec(
                "task",
                "Starts a subagent on a task of its own, in a fresh context: give it a complete prompt. Its final answer comes back as the result.",
                schema(
                    json!({
                        "description": {"type": "string", "description": "A short (3-5 words) description of the task"},
                        "prompt": {"type": "string", "description": "The task for the agent to perform"},
                        "subagent_type": {"type": "string", "description": "The type of specialized agent to use for this task"},
                        "task_id": {"type": "string", "description": "Only set to resume a previous task (the task_id a task result gave)"},
                        "command": {"type": "string", "description": "The command that triggered this task"}
                    }),
                    &["description", "prompt", "subagent_type"],
                ),
            ),
            |a, _| {
                describe(
                    ToolKind::Think,
                    format!("Task: {}", str_or_empty(a, "description")),
                )
            },
            |a, c| Box::pin(task(c, a)),
        ),
        plain(
            "todowrite",
            "Writes the session's todo list: the whole list each time, each item with its status and priority.",
            schema(
                json!({"todos": {"type": "array", "description": "The updated todo list", "items": {
                    "type": "object", "properties": {
                        "content": {"type": "string", "description": "Brief description of the task"},
                        "status": {"type": "string", "description": "Current status of the task: pending, in_progress, completed, cancelled"},
                        "priority": {"type": "string", "description": "Priority level of the task: high, medium, low"}
                    }, "required": ["content", "status", "priority"], "additionalProperties": false}}}),
                &["todos"],
            ),
            |_, _| describe(ToolKind::Think, "Update todos".into()),
            |a, _| Box::pin(async move { todowrite(&a) }),
        ),
        plain(
            "webfetch",
            "Fetches a URL (http or https) and returns its content as markdown (default), text or html.",
            schema(
                json!({
                    "url": {"type": "string", "description": "The URL to fetch content from"},
                    "format": {"type": "string", "enum": ["text", "markdown", "html"], "default": "markdown", "description": "The format to return the content in (text, markdown, or html). Defaults to markdown."},
                    "timeout": {"type": "number", "description": "Optional timeout in seconds (max 120)"}
                }),
                &["url"],
            ),
            |a, _| {
                CallDescription::new(
                    ToolKind::Fetch,
                    format!("Fetch {}", str_or_empty(a, "url")),
                    vec![],
                )
            },
            |a, c| Box::pin(webfetch(c, a)),
        ),
        plain(
            "write",
            "Writes a file, replacing it if it exists. Read an existing file first; prefer edit for changes.",
            schema(
                json!({
                    "content": {"type": "string", "description": "The content to write to the file"},
                    "filePath": {"type": "string", "description": "The absolute path to the file to write (must be absolute, not relative)"}
                }),
                &["content", "filePath"],
            ),
            file_describe(ToolKind::Edit),
            |a, c| Box::pin(write(c, a)),
        ),
    ]
}

fn required<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    str_arg(args, key).ok_or_else(|| {
        ToolError::message(format!(
            "The tool was called with invalid arguments: `{key}` is required."
        ))
    })
}

async fn bash(ctx: &ToolContext, args: Value) -> ToolResult {
    let command = required(&args, "command")?;
    let timeout_ms = match args.get("timeout").and_then(Value::as_f64) {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(ToolError::message(format!(
                "Invalid timeout value: {t}. Timeout must be a positive number."
            )));
        }
        Some(t) => t as u64,
        None => BASH_TIMEOUT_MS,
    };
    let cwd = ctx.workspace.resolve_dir(str_arg(&args, "workdir"))?;
    let r = ctx
        .authorize_and_run(
            "bash",
            ToolKind::Execute,
            command,
            &cwd,
            Duration::from_millis(timeout_ms),
            "Failed to run the command",
        )
        .await?;
    let mut text = tail(&r.output);
    if text.is_empty() {
        text = "(no output)".into();
    }
    let mut notes = Vec::new();
    if r.timed_out {
        notes.push(format!("bash tool terminated command after exceeding timeout {timeout_ms} ms. If this command is expected to take longer and is not waiting for interactive input, retry with a larger timeout value in milliseconds."));
    }
    if r.cancelled {
        notes.push("User aborted the command".to_string());
    }
    if !notes.is_empty() {
        let _ = write!(
            text,
            "\n\n<bash_metadata>\n{}\n</bash_metadata>",
            notes.join("\n")
        );
    }
    let mut o = ToolOutcome::ok(text);
    o.user_output = r.output;
    o.exit_code = r.exit_code;
    if r.exit_code != Some(0) {
        o.status = ToolStatus::Failed;
    }
    Ok(o)
}

/// The end of a command's output within 2000 lines and 51200 bytes.
fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.trim_end_matches('\n').split('\n').collect();
    let mut start = lines.len();
    let mut bytes = 0;
    while start > 0 && lines.len() - start < BASH_MAX_LINES {
        let add = lines[start - 1].len() + 1;
        if bytes + add > BASH_MAX_BYTES {
            break;
        }
        bytes += add;
        start -= 1;
    }
    match start {
        0 => output.trim_end_matches('\n').to_string(),
        _ => format!("...output truncated...\n\n{}", lines[start..].join("\n")),
    }
}

async fn read(ctx: &ToolContext, args: Value) -> ToolResult {
    let raw = required(&args, "filePath")?;
    let path = ctx.workspace.resolve(raw)?;
    let Ok(meta) = tokio::fs::metadata(&path).await else {
        return Err(ToolError::message(format!(
            "File not found: {}",
            path.display()
        )));
    };
    if meta.is_dir() {
        return read_dir(&path, &args);
    }
    if media::is_image_path(&path) {
        if !ctx.model_images {
            return Err(ToolError::message(format!(
                "Cannot read binary file: {}",
                path.display()
            )));
        }
        let img = media::read_image(&path, media::WIDE_FIT, None)
            .await
            .map_err(ToolError::message)?;
        let mut o = ToolOutcome::ok("Image read successfully");
        o.images = vec![img.data_url];
        return Ok(o);
    }
    let number = |k: &str| {
        args.get(k)
            .and_then(Value::as_f64)
            .filter(|n| *n >= 1.0)
            .map(|n| n as usize)
    };
    let offset = number("offset").unwrap_or(1);
    let limit = number("limit").unwrap_or(READ_LIMIT);
    let w = ctx
        .workspace
        .read_lines(&path, offset as i64, limit, (LINE_CHARS + 1) * 4)
        .await
        .map_err(|_| ToolError::message(format!("Cannot read binary file: {}", path.display())))?;
    if offset > 1 && offset > w.total_lines {
        return Err(ToolError::message(format!(
            "Offset {offset} is out of range for this file ({} lines)",
            w.total_lines
        )));
    }
    let mut body = String::new();
    let mut shown: usize = 0;
    let mut capped = false;
    for (n, line) in &w.lines {
        let line = match line.chars().count() > LINE_CHARS {
            true => format!(
                "{}... (line truncated to {LINE_CHARS} chars)",
                line.chars().take(LINE_CHARS).collect::<String>()
            ),
            false => line.clone(),
        };
        let entry = format!("{n}: {line}");
        if body.len() + entry.len() + 1 > READ_MAX_BYTES {
            capped = true;
            break;
        }
        if shown > 0 {
            body.push('\n');
        }
        body.push_str(&entry);
        shown += 1;
    }
    let last = offset + shown.saturating_sub(1);
    let footer = if capped {
        format!(
            "(Output capped at 50 KB. Showing lines {offset}-{last}. Use offset={} to continue.)",
            last + 1
        )
    } else if last < w.total_lines {
        format!(
            "(Showing lines {offset}-{last} of {}. Use offset={} to continue.)",
            w.total_lines,
            last + 1
        )
    } else {
        format!("(End of file - total {} lines)", w.total_lines)
    };
    Ok(ToolOutcome::ok(format!(
        "<path>{}</path>\n<type>file</type>\n<content>\n{body}\n\n{footer}\n</content>",
        path.display()
    )))
}

fn read_dir(path: &std::path::Path, args: &Value) -> ToolResult {
    let mut entries: Vec<String> = std::fs::read_dir(path)
        .map_err(|e| ToolError::message(e.to_string()))?
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            match e.file_type().is_ok_and(|t| t.is_dir()) {
                true => format!("{name}/"),
                false => name,
            }
        })
        .collect();
    entries.sort();
    let total = entries.len();
    let offset = args
        .get("offset")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1) as usize;
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(READ_LIMIT as u64)
        .max(1) as usize;
    let shown: Vec<String> = entries.into_iter().skip(offset - 1).take(limit).collect();
    let last = offset - 1 + shown.len();
    let footer = match last < total {
        true => format!(
            "(Showing {} of {total} entries. Use 'offset' parameter to read beyond entry {last})",
            shown.len()
        ),
        false => format!("({total} entries)"),
    };
    Ok(ToolOutcome::ok(format!(
        "<path>{}</path>\n<type>directory</type>\n<entries>\n{}\n\n{footer}\n</entries>",
        path.display(),
        shown.join("\n")
    )))
}

async fn edit(ctx: &ToolContext, args: Value) -> ToolResult {
    let raw = required(&args, "filePath")?;
    let (old, new) = (required(&args, "oldString")?, required(&args, "newString")?);
    if old == new {
        return Err(ToolError::message(
            "No changes to apply: oldString and newString are identical.",
        ));
    }
    let path = ctx.workspace.resolve(raw)?;
    let all = args
        .get("replaceAll")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let original = match tokio::fs::metadata(&path).await {
        Ok(m) if m.is_dir() => {
            return Err(ToolError::message(format!(
                "Path is a directory, not a file: {}",
                path.display()
            )));
        }
        Ok(_) => Some(
            ctx.workspace
                .read_text(&path)
                .await
                .map_err(|e| ToolError::message(e.to_string()))?,
        ),
        // An empty oldString on a new path creates the file.
        Err(_) if old.is_empty() => None,
        Err(_) => {
            return Err(ToolError::message(format!(
                "File {} not found",
                path.display()
            )));
        }
    };
    let updated = match (&original, old.is_empty()) {
        (None, _) | (Some(_), true) => new.to_string(),
        (Some(text), false) => match crate::tools::edit::replace_exact(text, old, new, all) {
            Ok((t, _)) => t,
            Err(crate::tools::edit::EditMiss::NotFound) => {
                return Err(ToolError::message(
                    "Could not find oldString in the file. It must match exactly, including whitespace, indentation, and line endings.",
                ));
            }
            Err(crate::tools::edit::EditMiss::Ambiguous(_)) => {
                return Err(ToolError::message(
                    "Found multiple matches for oldString. Provide more surrounding context to make the match unique.",
                ));
            }
        },
    };
    let change = patch_runner::write_one(ctx, "edit", &path, original, updated).await?;
    let mut o = ToolOutcome::ok("Edit applied successfully.");
    o.changes = vec![change];
    Ok(o)
}

async fn write(ctx: &ToolContext, args: Value) -> ToolResult {
    let content = required(&args, "content")?;
    let path = ctx.workspace.resolve(required(&args, "filePath")?)?;
    let old = ctx
        .workspace
        .read_optional(&path)
        .await
        .map_err(|e| ToolError::message(e.to_string()))?;
    let change = patch_runner::write_one(ctx, "write", &path, old, content.to_string()).await?;
    let mut o = ToolOutcome::ok("Wrote file successfully.");
    o.changes = vec![change];
    Ok(o)
}

fn modified(p: &std::path::Path) -> SystemTime {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

async fn glob(ctx: &ToolContext, args: Value) -> ToolResult {
    let pattern = required(&args, "pattern")?;
    let root = ctx.workspace.resolve_dir(str_arg(&args, "path"))?;
    let (mut found, more) = search_tools::glob(ctx, root, pattern, false, 10_000).await?;
    if found.is_empty() {
        return Ok(ToolOutcome::ok("No files found"));
    }
    found.sort_by_cached_key(|p| std::cmp::Reverse(modified(p)));
    let cut = more || found.len() > LIST_LIMIT;
    let mut text: String = found
        .iter()
        .take(LIST_LIMIT)
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    if cut {
        text.push_str("\n\n(Results are truncated: showing first 100 results. Consider using a more specific path or pattern.)");
    }
    Ok(ToolOutcome::ok(text))
}

async fn grep(ctx: &ToolContext, args: Value) -> ToolResult {
    let pattern = required(&args, "pattern")?;
    let root = ctx.workspace.resolve_dir(str_arg(&args, "path"))?;
    let call = GrepCall {
        pattern: pattern.to_string(),
        root,
        opts: SearchOptions {
            glob: str_arg(&args, "include").map(String::from),
            max_lines: 200_000,
            buffers: ctx.workspace.buffers(),
            ..Default::default()
        },
        numbers: true,
        offset: 0,
        head_limit: 0,
    };
    let mut hits = search_tools::search(&call).await?;
    let total: u64 = hits.iter().map(|h| h.matches).sum();
    if total == 0 {
        return Ok(ToolOutcome::ok("No files found"));
    }
    hits.sort_by_cached_key(|h| std::cmp::Reverse(modified(&h.path)));
    let mut text = format!("Found {total} matches");
    let mut shown = 0;
    for h in &hits {
        if shown >= LIST_LIMIT {
            break;
        }
        let _ = write!(text, "\n{}:", h.path.display());
        for l in h.lines.iter().filter(|l| l.is_match) {
            if shown >= LIST_LIMIT {
                break;
            }
            let line = crate::tools::files::clip_line(&l.text, LINE_CHARS);
            let _ = write!(text, "\n  Line {}: {line}", l.number);
            shown += 1;
        }
        text.push('\n');
    }
    let mut text = text.trim_end().to_string();
    if total as usize > LIST_LIMIT {
        let _ = write!(
            text,
            "\n\n(Results truncated: showing {LIST_LIMIT} of {total} matches ({} hidden). Consider using a more specific path or pattern.)",
            total as usize - LIST_LIMIT
        );
    }
    Ok(ToolOutcome::ok(text))
}

async fn task(ctx: &ToolContext, args: Value) -> ToolResult {
    let prompt = required(&args, "prompt")?;
    let read_only = matches!(
        str_arg(&args, "subagent_type")
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("explore" | "plan")
    );
    let resume = str_arg(&args, "task_id")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.trim_start_matches("ses_").to_string());
    let o = ctx
        .run_subagent(SubagentTask {
            prompt: prompt.to_string(),
            read_only,
            resume,
        })
        .await;
    if o.is_error() {
        return Ok(o);
    }
    let id = o.subagent_id();
    let mut shaped = ToolOutcome::ok(format!(
        "task_id: ses_{id} (for resuming to continue this task if needed)\n\n<task_result>\n{}\n</task_result>",
        o.model_output
    ));
    shaped.user_output = o.user_output;
    Ok(shaped)
}

fn todowrite(args: &Value) -> ToolResult {
    let items = todo_items(args, "content")?;
    let todos = args.get("todos").cloned().unwrap_or(Value::Array(vec![]));
    let mut o = ToolOutcome::ok(serde_json::to_string_pretty(&todos).unwrap_or_default());
    o.plan = Some(Plan {
        explanation: None,
        items,
    });
    Ok(o)
}

async fn webfetch(ctx: &ToolContext, args: Value) -> ToolResult {
    let url = required(&args, "url")?;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ToolError::message(
            "URL must start with http:// or https://",
        ));
    }
    let mut cfg = (*ctx.web).clone();
    if let Some(t) = args
        .get("timeout")
        .and_then(Value::as_f64)
        .filter(|t| *t > 0.0)
    {
        cfg.timeout = Duration::from_secs_f64(t.min(120.0));
    }
    let page = crate::harness::web_tools::fetch_page(ctx, "webfetch", url, &cfg)
        .await?
        .map_err(|e| match e {
            web::FetchError::Status { status, .. } => {
                ToolError::message(format!("Request failed with status code: {status}"))
            }
            other => ToolError::message(other.to_string()),
        })?;
    // opencode's formats: Markdown (the default), the page's text, or its HTML as it came.
    let text = match (str_arg(&args, "format"), page.html) {
        (Some("html"), Some(html)) => html,
        (Some("text"), Some(html)) => web::html_to_text(&html),
        _ => page.text,
    };
    Ok(ToolOutcome::ok(text))
}

/// opencode's `skill`: the skill's body in `<skill_content>`, with its folder.
struct SkillTool {
    spec: crate::model::ToolSpec,
    skills: Vec<Skill>,
}

impl Tool for SkillTool {
    fn spec(&self) -> &crate::model::ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &Value, _ws: &crate::workspace::Workspace) -> CallDescription {
        describe(
            ToolKind::Read,
            format!("Skill {}", str_or_empty(args, "name")),
        )
    }
    fn run<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> futures::future::BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { WORDING.outcome(self.load(&args)) })
    }
}

impl SkillTool {
    fn load(&self, args: &Value) -> ToolResult {
        let name = str_arg(args, "name").unwrap_or_default();
        let Some(skill) = self.skills.iter().find(|s| s.name == name) else {
            let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::message(format!(
                "Skill \"{name}\" not found. Available skills: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        };
        let dir = std::path::Path::new(&skill.path)
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let base = match dir.starts_with("builtin://") {
            true => dir.clone(),
            false => format!("file://{dir}"),
        };
        Ok(ToolOutcome::ok(format!(
            "<skill_content name=\"{name}\">\n# Skill: {name}\n\n{}\n\nBase directory for this skill: {base}\nRelative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.\n</skill_content>",
            skill.body.trim()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_output_keeps_its_end() {
        assert_eq!(tail("a\nb\n"), "a\nb");
        let long: String = (1..=2500).map(|n| format!("{n}\n")).collect();
        let t = tail(&long);
        assert!(
            t.starts_with("...output truncated...\n\n501\n"),
            "{}",
            &t[..40]
        );
        assert!(t.ends_with("\n2500"));
    }
}
