//! deepseek-tui's GitHub tools, through the GitHub CLI where it is installed: reading an issue
//! or a pull request, and the writes (a comment; closing with acceptance evidence). Every one
//! is a `gh` command asked about like any other. The writes post in the user's name, and the
//! command rules count such `gh` commands as dangerous: they ask in every mode, and are
//! refused where nobody can answer.

use interpreter_protocol::ToolKind;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use super::more::tool;
use crate::model::ToolSpec;
use crate::tools::table::{Tool, ToolError, ToolResult, closed_object, object, spec};
use crate::tools::{CallDescription, ToolContext, ToolOutcome};

const GH_TIMEOUT: Duration = Duration::from_secs(60);
const PAGE_CHARS: usize = 50_000;

/// The GitHub tools in the original's order, when `gh` is on the PATH.
pub(super) fn github_tools(env: &crate::harness::PromptEnv) -> Vec<Arc<dyn Tool>> {
    if !env.github_cli {
        return Vec::new();
    }
    vec![
        tool(
            close_spec(
                "github_close_issue",
                "Close a GitHub issue only when structured acceptance evidence is present and approved. For pull requests use github_close_pr; do not call PRs issues in user-facing output. Never close merely because the agent is stopping.",
            ),
            |a, _| describe_write(a, "issue", "close"),
            |a, c| Box::pin(close(c, a, Target::Issue)),
        ),
        tool(
            close_spec(
                "github_close_pr",
                "Close a GitHub pull request only when structured acceptance evidence is present and approved. Use this for PRs instead of github_close_issue so the UI, audit trail, and comments keep PR wording clear.",
            ),
            |a, _| describe_write(a, "pr", "close"),
            |a, c| Box::pin(close(c, a, Target::Pr)),
        ),
        tool(
            spec(
                "github_comment",
                "Post an evidence-backed GitHub issue/PR comment with gh. Requires approval. Use blocker comments for partial work; do not claim closure without evidence.",
                closed_object(
                    json!({
                        "target": {"type": "string", "enum": ["issue", "pr"]},
                        "number": {"type": "integer", "minimum": 1},
                        "body": {"type": "string"},
                        "evidence": {"type": "object", "properties": {}},
                        "dry_run": {"type": "boolean", "default": false}
                    }),
                    &["target", "number", "body", "evidence"],
                ),
            ),
            |a, _| describe_write(a, target_word(a), "comment"),
            |a, c| Box::pin(comment(c, a)),
        ),
        tool(
            spec(
                "github_issue_context",
                "Read a GitHub issue of this repository (title, state, body, labels, and comments when asked) with the GitHub CLI.",
                object(
                    json!({"number": {"type": "integer"}, "include_comments": {"type": "boolean"}}),
                    &["number"],
                ),
            ),
            |a, _| describe_view(a, "issue"),
            |a, c| Box::pin(view(c, a, Target::Issue)),
        ),
        tool(
            spec(
                "github_pr_context",
                "Read a GitHub pull request of this repository (title, state, body, files, and the diff when asked) with the GitHub CLI.",
                object(
                    json!({"number": {"type": "integer"}, "include_diff": {"type": "boolean"}}),
                    &["number"],
                ),
            ),
            |a, _| describe_view(a, "pr"),
            |a, c| Box::pin(view(c, a, Target::Pr)),
        ),
    ]
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Issue,
    Pr,
}

impl Target {
    fn word(self) -> &'static str {
        match self {
            Target::Issue => "issue",
            Target::Pr => "pr",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Target::Issue => "issue",
            Target::Pr => "pull request",
        }
    }
}

fn target_word(a: &Value) -> &'static str {
    match a.get("target").and_then(Value::as_str) {
        Some("issue") => "issue",
        _ => "pr",
    }
}

fn close_spec(name: &str, description: &str) -> ToolSpec {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    spec(
        name,
        description,
        closed_object(
            json!({
                "number": {"type": "integer", "minimum": 1},
                "acceptance_criteria": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "evidence": {
                    "type": "object",
                    "properties": {
                        "files_changed": strings,
                        "tests_run": strings,
                        "commits": strings,
                        "final_status": {"type": "string"}
                    },
                    "required": ["files_changed", "tests_run", "final_status"]
                },
                "comment": {"type": "string"},
                "allow_dirty": {"type": "boolean", "default": false},
                "dry_run": {"type": "boolean", "default": false}
            }),
            &["number", "acceptance_criteria", "evidence"],
        ),
    )
}

fn number(a: &Value) -> Result<u64, ToolError> {
    a.get("number")
        .and_then(Value::as_u64)
        .filter(|n| *n >= 1)
        .ok_or_else(|| {
            ToolError::message("`number` must be an issue or pull request number (1 or more)")
        })
}

fn describe_view(a: &Value, what: &str) -> CallDescription {
    let n = a.get("number").and_then(Value::as_u64).unwrap_or(0);
    let command = format!("gh {what} view {n}");
    CallDescription {
        kind: ToolKind::Fetch,
        title: command.clone(),
        locations: vec![],
        command: Some(command),
    }
}

fn describe_write(a: &Value, what: &str, action: &str) -> CallDescription {
    let n = a.get("number").and_then(Value::as_u64).unwrap_or(0);
    let command = format!("gh {what} {action} {n}");
    CallDescription {
        kind: ToolKind::Execute,
        title: command.clone(),
        locations: vec![],
        command: Some(command),
    }
}

async fn view(ctx: &ToolContext, args: Value, target: Target) -> ToolResult {
    let n = number(&args)?;
    let what = target.word();
    let (fields, extra) = match target {
        Target::Issue => (
            "number,title,state,author,labels,body,url",
            (args.get("include_comments").and_then(Value::as_bool) == Some(true))
                .then_some(",comments"),
        ),
        Target::Pr => (
            "number,title,state,author,labels,body,url,baseRefName,headRefName,files",
            None,
        ),
    };
    let mut command = format!("gh {what} view {n} --json {fields}{}", extra.unwrap_or(""));
    if target == Target::Pr && args.get("include_diff").and_then(Value::as_bool) == Some(true) {
        command.push_str(&format!(" && gh pr diff {n}"));
    }
    let tool = match target {
        Target::Issue => "github_issue_context",
        Target::Pr => "github_pr_context",
    };
    let r = ctx
        .authorize_and_run(
            tool,
            ToolKind::Fetch,
            &command,
            ctx.workspace.cwd(),
            GH_TIMEOUT,
            "gh failed",
        )
        .await?;
    let text = crate::tools::truncate::truncate_head(r.output.trim_end(), PAGE_CHARS, usize::MAX);
    Ok(ToolOutcome::from_exec(r, text))
}

/// The evidence a close carries, as the original's schema requires it.
#[derive(Deserialize)]
struct CloseEvidence {
    files_changed: Vec<String>,
    tests_run: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
    final_status: String,
}

/// The comment a close posts: the model's words, then the criteria and the evidence.
fn close_body(comment: &str, criteria: &[String], evidence: &CloseEvidence) -> String {
    let list = |v: &[String]| match v.is_empty() {
        true => "none".to_string(),
        false => v.join(", "),
    };
    let mut body = String::new();
    if !comment.trim().is_empty() {
        let _ = write!(body, "{}\n\n", comment.trim());
    }
    body.push_str("**Acceptance criteria**\n");
    for c in criteria {
        let _ = writeln!(body, "- {c}");
    }
    let _ = write!(
        body,
        "\n**Evidence**\n- Files changed: {}\n- Tests run: {}\n",
        list(&evidence.files_changed),
        list(&evidence.tests_run)
    );
    if !evidence.commits.is_empty() {
        let _ = writeln!(body, "- Commits: {}", evidence.commits.join(", "));
    }
    let _ = write!(body, "- Final status: {}", evidence.final_status.trim());
    body
}

/// A comment's body, with the evidence object (when it says anything) as a list under it.
fn comment_body(body: &str, evidence: &Value) -> String {
    let mut out = body.trim().to_string();
    let Some(map) = evidence.as_object().filter(|m| !m.is_empty()) else {
        return out;
    };
    out.push_str("\n\n**Evidence**");
    for (k, v) in map {
        let v = match v {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        };
        let _ = write!(out, "\n- {}: {v}", k.replace('_', " "));
    }
    out
}

fn quoted(argv: &[&str]) -> Result<String, ToolError> {
    shlex::try_join(argv.iter().copied())
        .map_err(|e| ToolError::message(format!("the text cannot be passed to gh: {e}")))
}

async fn close(ctx: &ToolContext, args: Value, target: Target) -> ToolResult {
    let n = number(&args)?;
    let criteria: Vec<String> = args
        .get("acceptance_criteria")
        .and_then(|v| serde_json::from_value::<Vec<String>>(v.clone()).ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !c.trim().is_empty())
        .collect();
    if criteria.is_empty() {
        return Err(ToolError::message(format!(
            "`acceptance_criteria` must list at least one criterion the {} meets",
            target.noun()
        )));
    }
    let evidence: CloseEvidence = args
        .get("evidence")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| {
            ToolError::message(
                "`evidence` must give files_changed and tests_run (lists of strings) and final_status",
            )
        })?;
    if evidence.final_status.trim().is_empty() {
        return Err(ToolError::message("`evidence.final_status` is empty"));
    }
    let allow_dirty = args.get("allow_dirty").and_then(Value::as_bool) == Some(true);
    if !allow_dirty && let Some(dirty) = uncommitted(ctx).await {
        return Err(ToolError::message(format!(
            "The workspace has uncommitted changes ({dirty}): the evidence would not match what is pushed. Commit them first, or pass allow_dirty: true."
        )));
    }
    let comment = args.get("comment").and_then(Value::as_str).unwrap_or("");
    let body = close_body(comment, &criteria, &evidence);
    let number = n.to_string();
    let command = quoted(&["gh", target.word(), "close", &number, "--comment", &body])?;
    let tool = match target {
        Target::Issue => "github_close_issue",
        Target::Pr => "github_close_pr",
    };
    write(
        ctx,
        &args,
        tool,
        &command,
        &format!("Closed {} #{n}.", target.noun()),
    )
    .await
}

async fn comment(ctx: &ToolContext, args: Value) -> ToolResult {
    let target = match args.get("target").and_then(Value::as_str) {
        Some("issue") => Target::Issue,
        Some("pr") => Target::Pr,
        _ => return Err(ToolError::message("`target` must be \"issue\" or \"pr\"")),
    };
    let n = number(&args)?;
    let body = args.get("body").and_then(Value::as_str).unwrap_or("");
    if body.trim().is_empty() {
        return Err(ToolError::message("`body` is empty"));
    }
    let body = comment_body(body, args.get("evidence").unwrap_or(&Value::Null));
    let number = n.to_string();
    let command = quoted(&["gh", target.word(), "comment", &number, "--body", &body])?;
    let done = format!("Commented on {} #{n}.", target.noun());
    write(ctx, &args, "github_comment", &command, &done).await
}

/// Runs a write, or with `dry_run` shows the command without asking or running it.
async fn write(
    ctx: &ToolContext,
    args: &Value,
    tool: &str,
    command: &str,
    done: &str,
) -> ToolResult {
    if args.get("dry_run").and_then(Value::as_bool) == Some(true) {
        return Ok(ToolOutcome::ok(format!(
            "Dry run: nothing was posted. This would run:\n{command}"
        )));
    }
    let r = ctx
        .authorize_and_run(
            tool,
            ToolKind::Execute,
            command,
            ctx.workspace.cwd(),
            GH_TIMEOUT,
            "gh failed",
        )
        .await?;
    let output = r.output.trim().to_string();
    let text = match r.succeeded() {
        true if output.is_empty() => done.to_string(),
        true => format!("{done}\n{output}"),
        false => format!("gh failed (exit code: {:?})\n{output}", r.exit_code),
    };
    Ok(ToolOutcome::from_exec(r, text))
}

/// The uncommitted files of the workspace's repository, if any (git run with the
/// repository's programs off); `None` when clean or not a repository.
async fn uncommitted(ctx: &ToolContext) -> Option<String> {
    let dir = ctx.workspace.cwd().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        crate::sandbox::git::run(&dir, &["status", "--porcelain=v1"], None)
    })
    .await
    .ok()?
    .ok()?;
    let text = String::from_utf8_lossy(&out);
    let files: Vec<&str> = text.lines().map(|l| l.get(3..).unwrap_or(l)).collect();
    match files.len() {
        0 => None,
        1..=3 => Some(files.join(", ")),
        n => Some(format!("{}, and {} more", files[..3].join(", "), n - 3)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_posts_the_criteria_and_the_evidence() {
        let evidence = CloseEvidence {
            files_changed: vec!["src/a.rs".into()],
            tests_run: vec!["cargo test".into()],
            commits: vec![],
            final_status: "fixed ".into(),
        };
        let body = close_body("Done.", &["parses `x`".into()], &evidence);
        assert_eq!(
            body,
            "Done.\n\n**Acceptance criteria**\n- parses `x`\n\n**Evidence**\n- Files changed: src/a.rs\n- Tests run: cargo test\n- Final status: fixed"
        );
    }

    #[test]
    fn a_comment_lists_its_evidence_under_it() {
        let body = comment_body(
            "Blocked on the API.",
            &json!({"tests_run": ["cargo test", "npm test"], "status": "partial"}),
        );
        assert_eq!(
            body,
            "Blocked on the API.\n\n**Evidence**\n- tests run: cargo test, npm test\n- status: partial"
        );
        assert_eq!(comment_body(" x ", &json!({})), "x");
    }

    #[test]
    fn the_command_keeps_the_text_one_argument() {
        let c = quoted(&["gh", "issue", "comment", "3", "--body", "it's $(done)\nok"]).unwrap();
        assert_eq!(
            shlex::split(&c).unwrap(),
            ["gh", "issue", "comment", "3", "--body", "it's $(done)\nok"]
        );
    }
}
