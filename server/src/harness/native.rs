//! The native harness: Codex's tool set (shell, apply_patch, update_plan) plus read_file,
//! list_dir, grep_files and glob.

use futures::future::BoxFuture;
use interpreter_protocol::{Plan, ToolKind};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use super::{Harness, PromptEnv};
use crate::model::{HistoryItem, ToolSpec};
use crate::tools::files::{self, GrepOptions};
use crate::tools::truncate::truncate_middle;
use crate::tools::{CallDescription, ToolContext, ToolOutcome, apply_patch, patch_runner, plan};
use crate::workspace::window;

pub struct Native;

const DEFAULT_TIMEOUT_MS: u64 = 60_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
const READ_DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// What a streamed read keeps of a line: enough for MAX_LINE_CHARS characters and the cut mark.
const MAX_LINE_BYTES: usize = (MAX_LINE_CHARS + 1) * 4;

const SYSTEM_PROMPT: &str = "\
You are interpreter, a coding agent working in the user's repository. You read code, run \
commands and edit files with the tools provided, then report briefly.

# How you work
- Understand before changing: read the relevant files and search the codebase first.
- Make the smallest change that fully solves the task, in the style of the surrounding code.
- Edit files with apply_patch. Never paste whole files into a shell command to write them.
- Verify with the project's own tests or build when that is cheap, and fix what you broke.
- For multi-step work, keep a short plan with update_plan and mark steps as you finish them.
- Do not commit, push or delete work unless the user asks.

# apply_patch format
*** Begin Patch
*** Update File: path/to/file.py
@@ def function_name
 context line
-removed line
+added line
*** End Patch
Other hunk headers: `*** Add File: path` (every line starts with +), `*** Delete File: path`, \
and `*** Move to: new/path` right after an Update header. Paths are relative to the working \
directory. Include about three lines of context around each change; use `@@ <line>` to \
name the function or class when the context alone is ambiguous.

# Final answer
Be concise: what you changed and why, with file paths, and anything the user must still do.";

impl Harness for Native {
    fn name(&self) -> &'static str {
        "native"
    }

    fn system_prompt(&self, _env: &PromptEnv) -> String {
        SYSTEM_PROMPT.to_string()
    }

    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem> {
        let mut items = Vec::new();
        if let Some(md) = &env.agents_md {
            items.push(HistoryItem::User {
                text: format!(
                    "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n{md}\n</INSTRUCTIONS>",
                    env.cwd.display()
                ),
                images: vec![],
                synthetic: true,
            });
        }
        let mut ctx = format!(
            "<environment_context>\n  <cwd>{}</cwd>\n  <shell>{}</shell>\n  <os>{}</os>\n  <sandbox_mode>{}</sandbox_mode>\n  <approval_policy>{}</approval_policy>\n",
            env.cwd.display(),
            env.shell,
            env.os,
            env.sandbox,
            env.approval
        );
        for r in env.roots.iter().skip(1) {
            let _ = writeln!(ctx, "  <writable_root>{}</writable_root>", r.display());
        }
        ctx.push_str("</environment_context>");
        items.push(HistoryItem::User {
            text: ctx,
            images: vec![],
            synthetic: true,
        });
        if let Some(block) = super::codex_skills_block(&env.skills) {
            items.push(HistoryItem::User {
                text: block,
                images: vec![],
                synthetic: true,
            });
        }
        items
    }

    fn tools(&self) -> Vec<ToolSpec> {
        let t = |name: &str, description: &str, parameters: Value| ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        };
        vec![
            t(
                "shell",
                "Runs a shell command (bash -c) and returns its exit code and combined output.",
                json!({"type": "object", "properties": {
                    "command": {"type": "string", "description": "The command line to run."},
                    "workdir": {"type": "string", "description": "Working directory; defaults to the session's."},
                    "timeout_ms": {"type": "integer", "description": "Timeout in milliseconds (default 60000)."}
                }, "required": ["command"], "additionalProperties": false}),
            ),
            t(
                "apply_patch",
                "Edits files with a patch in the apply_patch format described in the instructions.",
                json!({"type": "object", "properties": {
                    "input": {"type": "string", "description": "The whole patch, from *** Begin Patch to *** End Patch."}
                }, "required": ["input"], "additionalProperties": false}),
            ),
            t(
                "update_plan",
                "Records the task plan. At most one step may be in_progress.",
                json!({"type": "object", "properties": {
                    "explanation": {"type": "string"},
                    "plan": {"type": "array", "items": {"type": "object", "properties": {
                        "step": {"type": "string"},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                    }, "required": ["step", "status"], "additionalProperties": false}}
                }, "required": ["plan"], "additionalProperties": false}),
            ),
            t(
                "read_file",
                "Reads a text file with line numbers. Use offset/limit to page through big files.",
                json!({"type": "object", "properties": {
                    "path": {"type": "string"},
                    "offset": {"type": "integer", "description": "First line, 1-based (default 1)."},
                    "limit": {"type": "integer", "description": "Number of lines (default 2000)."}
                }, "required": ["path"], "additionalProperties": false}),
            ),
            t(
                "list_dir",
                "Lists a directory as an indented tree, honouring .gitignore.",
                json!({"type": "object", "properties": {
                    "path": {"type": "string"},
                    "depth": {"type": "integer", "description": "Levels to descend (default 2)."}
                }, "required": ["path"], "additionalProperties": false}),
            ),
            t(
                "grep_files",
                "Searches file contents with a regular expression, honouring .gitignore. Returns path:line: text.",
                json!({"type": "object", "properties": {
                    "pattern": {"type": "string"},
                    "path": {"type": "string", "description": "File or folder to search (default: the working directory)."},
                    "include": {"type": "string", "description": "Glob of files to search, e.g. *.rs"},
                    "limit": {"type": "integer", "description": "Maximum matches (default 100)."}
                }, "required": ["pattern"], "additionalProperties": false}),
            ),
            t(
                "glob",
                "Finds files by glob pattern (e.g. src/**/*.ts), honouring .gitignore.",
                json!({"type": "object", "properties": {
                    "pattern": {"type": "string"},
                    "path": {"type": "string", "description": "Folder to search (default: the working directory)."}
                }, "required": ["pattern"], "additionalProperties": false}),
            ),
        ]
    }

    fn describe(&self, tool: &str, args: &Value, ctx: &ToolContext) -> Option<CallDescription> {
        let s = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let ws = &ctx.workspace;
        let loc = |p: &str| ws.resolve(p).ok().into_iter().collect::<Vec<PathBuf>>();
        Some(match tool {
            "shell" => {
                let command = shell_command(args);
                if let Some((cd, _)) = apply_patch::parse_shell_invocation(&command) {
                    let _ = cd;
                    return Some(CallDescription {
                        kind: ToolKind::Edit,
                        title: "apply_patch".into(),
                        locations: vec![],
                        command: None,
                    });
                }
                CallDescription {
                    kind: ToolKind::Execute,
                    title: command.clone(),
                    locations: vec![],
                    command: Some(command),
                }
            }
            "apply_patch" => {
                let paths = patch_runner::patch_paths(ws.cwd(), &s("input"));
                CallDescription {
                    kind: ToolKind::Edit,
                    title: format!(
                        "Edit {}",
                        paths
                            .iter()
                            .map(|p| ws.display_path(p))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    locations: paths,
                    command: None,
                }
            }
            "update_plan" => CallDescription {
                kind: ToolKind::Think,
                title: "Update plan".into(),
                locations: vec![],
                command: None,
            },
            "read_file" => CallDescription {
                kind: ToolKind::Read,
                title: format!("Read {}", s("path")),
                locations: loc(&s("path")),
                command: None,
            },
            "list_dir" => CallDescription {
                kind: ToolKind::Read,
                title: format!("List {}", s("path")),
                locations: loc(&s("path")),
                command: None,
            },
            "grep_files" => CallDescription {
                kind: ToolKind::Search,
                title: format!("Search `{}`", s("pattern")),
                locations: vec![],
                command: None,
            },
            "glob" => CallDescription {
                kind: ToolKind::Search,
                title: format!("Find `{}`", s("pattern")),
                locations: vec![],
                command: None,
            },
            _ => return None,
        })
    }

    fn run<'a>(
        &'a self,
        tool: &'a str,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            match tool {
                "shell" => run_shell(ctx, &args).await,
                "apply_patch" => match args.get("input").and_then(Value::as_str) {
                    Some(p) => patch_runner::apply(ctx, tool, p, ctx.workspace.cwd()).await,
                    None => {
                        ToolOutcome::error("apply_patch needs an `input` string holding the patch")
                    }
                },
                "update_plan" => update_plan(&args),
                "read_file" => read_file(ctx, &args).await,
                "list_dir" => list_dir(ctx, &args),
                "grep_files" => grep_files(ctx, &args).await,
                "glob" => glob(ctx, &args).await,
                other => ToolOutcome::error(format!("unknown tool `{other}`")),
            }
        })
    }
}

/// `command` as a string, or Codex's legacy argv array joined for the shell.
fn shell_command(args: &Value) -> String {
    match args.get("command").or_else(|| args.get("cmd")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let words: Vec<String> = parts
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect();
            // ["bash", "-lc", "script"] is the common legacy shape.
            if words.len() == 3 && words[1].starts_with('-') && words[1].ends_with('c') {
                words[2].clone()
            } else {
                words
                    .iter()
                    .map(|w| shell_quote(w))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        }
        _ => String::new(),
    }
}

fn shell_quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

pub(super) async fn run_shell(ctx: &ToolContext, args: &Value) -> ToolOutcome {
    let command = shell_command(args);
    if command.trim().is_empty() {
        return ToolOutcome::error("shell needs a non-empty `command` string");
    }
    let ws = &ctx.workspace;
    let cwd = match args
        .get("workdir")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        Some(w) => match ws.resolve(w) {
            Ok(p) => p,
            Err(e) => return ToolOutcome::error(format!("workdir refused: {e}")),
        },
        None => ws.cwd().to_path_buf(),
    };
    // A patch sent through the shell goes to the patch machinery, not a subprocess.
    if let Some((cd, patch)) = apply_patch::parse_shell_invocation(&command) {
        let base = match cd {
            Some(d) => match ws.resolve_from(&cwd, &d) {
                Ok(p) => p,
                Err(e) => return ToolOutcome::error(format!("apply_patch refused: {e}")),
            },
            None => cwd,
        };
        return patch_runner::apply(ctx, "apply_patch", &patch, &base).await;
    }
    if let Err(refused) = ctx
        .authorize(
            ctx.command_intent(&command),
            "shell",
            ToolKind::Execute,
            &command,
            vec![],
        )
        .await
    {
        return refused;
    }
    let timeout_ms = args
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_TIMEOUT_MS)
        .clamp(100, MAX_TIMEOUT_MS);
    let events = ctx.events.clone();
    let call_id = ctx.call_id.clone();
    let on_chunk = Box::new(move |chunk: &str| {
        events.send(interpreter_protocol::Event::ToolCallOutputDelta {
            call_id: call_id.clone(),
            chunk: chunk.to_string(),
        })
    });
    let result = ctx
        .run_command(&command, &cwd, Duration::from_millis(timeout_ms), on_chunk)
        .await;
    let r = match result {
        Ok(r) => r,
        Err(e) => return ToolOutcome::error(format!("could not run the command: {e}")),
    };
    let mut head = String::new();
    if r.timed_out {
        let _ = writeln!(head, "command timed out after {timeout_ms} milliseconds");
    }
    if r.cancelled {
        let _ = writeln!(head, "command was cancelled by the user");
    }
    let code = r.exit_code.unwrap_or(-1);
    let model_output = format!(
        "{head}Exit code: {code}\nWall time: {:.1} seconds\nOutput:\n{}",
        r.duration.as_secs_f64(),
        truncate_middle(&r.output, ctx.output_token_limit)
    );
    ToolOutcome {
        model_output,
        user_output: r.output,
        status: if code == 0 && !r.timed_out && !r.cancelled {
            interpreter_protocol::ToolStatus::Completed
        } else {
            interpreter_protocol::ToolStatus::Failed
        },
        exit_code: r.exit_code,
        changes: vec![],
        plan: None,
    }
}

fn update_plan(args: &Value) -> ToolOutcome {
    let Some(steps) = args.get("plan").and_then(Value::as_array) else {
        return ToolOutcome::error("update_plan needs `plan`: an array of {step, status}");
    };
    let dialect = plan::Dialect {
        text_field: "step",
        completed: "completed",
    };
    let items = match plan::parse_items(steps, &dialect) {
        Ok(items) => items,
        Err(plan::PlanError::EmptyText) => {
            return ToolOutcome::error("every plan item needs a non-empty `step`");
        }
        Err(plan::PlanError::UnknownStatus(other)) => {
            return ToolOutcome::error(format!(
                "unknown plan status `{other}` (pending, in_progress or completed)"
            ));
        }
    };
    let mut o = ToolOutcome::ok("Plan updated");
    o.plan = Some(Plan {
        explanation: args
            .get("explanation")
            .and_then(Value::as_str)
            .map(String::from),
        items,
    });
    o
}

async fn read_file(ctx: &ToolContext, args: &Value) -> ToolOutcome {
    let Some(raw) = args.get("path").and_then(Value::as_str) else {
        return ToolOutcome::error("read_file needs a `path`");
    };
    let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(1);
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .map(|l| l as usize)
        .unwrap_or(READ_DEFAULT_LIMIT)
        .max(1);
    let w = match crate::skills::read_builtin(raw) {
        Some(t) => window::from_text(t, offset, limit),
        None => {
            let path = match ctx.workspace.resolve(raw) {
                Ok(p) => p,
                Err(e) => return ToolOutcome::error(e.to_string()),
            };
            match ctx
                .workspace
                .read_lines(&path, offset, limit, MAX_LINE_BYTES)
                .await
            {
                Ok(w) => w,
                Err(e) => return ToolOutcome::error(format!("could not read {raw}: {e}")),
            }
        }
    };
    let mut out = String::new();
    for (n, line) in &w.lines {
        let _ = writeln!(out, "L{n}: {}", files::clip_line(line, MAX_LINE_CHARS));
    }
    if !w.reached_end {
        let next = w.lines.last().map(|(n, _)| n + 1).unwrap_or(1);
        let _ = writeln!(
            out,
            "… {} lines in total; continue with offset={next}",
            w.total_lines
        );
    } else if w.total_lines == 0 {
        out.push_str("(empty file)\n");
    }
    ToolOutcome::ok(truncate_middle(&out, ctx.output_token_limit))
}

fn list_dir(ctx: &ToolContext, args: &Value) -> ToolOutcome {
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let path = match ctx.workspace.resolve(raw) {
        Ok(p) => p,
        Err(e) => return ToolOutcome::error(e.to_string()),
    };
    if !path.is_dir() {
        return ToolOutcome::error(format!("{raw} is not a directory"));
    }
    let depth = args
        .get("depth")
        .and_then(Value::as_u64)
        .unwrap_or(2)
        .clamp(1, 10) as usize;
    let (entries, truncated) = files::list_dir(&path, depth, 500);
    let mut out = format!("Absolute path: {}\n", path.display());
    for e in entries {
        out.push_str(&e);
        out.push('\n');
    }
    if truncated {
        out.push_str("… more entries not shown (limit 500); list a subfolder\n");
    }
    ToolOutcome::ok(out)
}

async fn grep_files(ctx: &ToolContext, args: &Value) -> ToolOutcome {
    let Some(pattern) = args.get("pattern").and_then(Value::as_str) else {
        return ToolOutcome::error("grep_files needs a `pattern`");
    };
    let root = match ctx
        .workspace
        .resolve(args.get("path").and_then(Value::as_str).unwrap_or("."))
    {
        Ok(p) => p,
        Err(e) => return ToolOutcome::error(e.to_string()),
    };
    let opts = GrepOptions {
        glob: args
            .get("include")
            .and_then(Value::as_str)
            .map(String::from),
        limit: args
            .get("limit")
            .and_then(Value::as_u64)
            .unwrap_or(100)
            .clamp(1, 2000) as usize,
        buffers: ctx.workspace.buffers(),
        ..Default::default()
    };
    let pattern = pattern.to_string();
    let root2 = root.clone();
    let found = tokio::task::spawn_blocking(move || files::grep(&root2, &pattern, &opts)).await;
    match found {
        Ok(Ok((matches, truncated))) => {
            if matches.is_empty() {
                return ToolOutcome::ok("No matches found.");
            }
            let mut out = String::new();
            for m in &matches {
                let _ = writeln!(
                    out,
                    "{}:{}: {}",
                    ctx.workspace.display_path(&m.path),
                    m.line_number,
                    files::clip_line(&m.line, 500)
                );
            }
            if truncated {
                out.push_str("… more matches not shown; narrow the pattern or path\n");
            }
            ToolOutcome::ok(truncate_middle(&out, ctx.output_token_limit))
        }
        Ok(Err(e)) => ToolOutcome::error(e),
        Err(e) => ToolOutcome::error(format!("search failed: {e}")),
    }
}

async fn glob(ctx: &ToolContext, args: &Value) -> ToolOutcome {
    let Some(pattern) = args.get("pattern").and_then(Value::as_str) else {
        return ToolOutcome::error("glob needs a `pattern`");
    };
    let root = match ctx
        .workspace
        .resolve(args.get("path").and_then(Value::as_str).unwrap_or("."))
    {
        Ok(p) => p,
        Err(e) => return ToolOutcome::error(e.to_string()),
    };
    let pattern = pattern.to_string();
    let root2 = root.clone();
    let buffers = ctx.workspace.buffers();
    let found =
        tokio::task::spawn_blocking(move || files::glob(&root2, &pattern, false, 1000, &buffers))
            .await;
    match found {
        Ok(Ok((paths, truncated))) => {
            if paths.is_empty() {
                return ToolOutcome::ok("No files found.");
            }
            let mut out: String = paths
                .iter()
                .map(|p| format!("{}\n", ctx.workspace.display_path(p)))
                .collect();
            if truncated {
                out.push_str("… more files not shown (limit 1000)\n");
            }
            ToolOutcome::ok(out)
        }
        Ok(Err(e)) => ToolOutcome::error(e),
        Err(e) => ToolOutcome::error(format!("glob failed: {e}")),
    }
}
