//! The swe-agent harness: SWE-agent's text actions on the Chat wire. The request carries no
//! tools; the model writes a DISCUSSION and one command per reply, which the harness parses
//! (`parse.rs`) into a call of bash, `str_replace_editor` (`editor.rs`) or `submit`; results
//! go back as `OBSERVATION:` messages (`render.rs`). A reply without an action gets the
//! original's format correction; `submit` shows the changes for review once and ends the
//! task when repeated.

mod editor;
mod parse;
mod prompt;
mod render;

pub(crate) use render::as_action;

use crate::harness::HarnessInfo;
use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

use super::{Harness, PromptEnv, TextActions, TextReply};
use crate::config::WireApi;
use crate::model::{HistoryItem, ToolCall, ToolSpec};
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, ToolTable, Wording, spec, str_or_empty,
};
use crate::tools::truncate::truncate_middle;
use crate::tools::{CallDescription, ToolContext, ToolOutcome};
use crate::workspace::Workspace;

/// SWE-agent's observations carry the tools' own words.
const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};

/// Ids of the calls this harness parsed, so its rendering knows the text already holds them.
pub(crate) const CALL_ID_PREFIX: &str = "swe-agent-";
/// What the model reads for a command without output.
pub(crate) const EMPTY_OUTPUT: &str =
    "Your command ran successfully and did not produce any output.";
/// The original's answer to a reply without a valid action.
pub(crate) const CORRECTION: &str = "Your output was not formatted correctly. You must always include one discussion and one command as part of your response. Make sure you do not have multiple discussion/command tags.\nPlease make sure your output precisely matches the following format:\nDISCUSSION\nDiscuss here with yourself about what your planning and what you're going to do in this step.\n\n```\ncommand(s) that you're going to run\n```";
/// The sentence of the review that a second `submit` confirms.
const CONFIRM: &str = "Run the submit command again to confirm.";
/// Commands run at most this long, as in the original.
const BASH_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct SweAgent;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "swe-agent",
    label: "SWE-agent",
    about: "Actions written in the reply text, answered with OBSERVATION blocks; no wire tool calls",
    wires: &[WireApi::Chat],
};

impl Harness for SweAgent {
    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            temperature: Some(1.0),
            top_p: Some(0.95),
            ..Default::default()
        }
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        prompt::system(env)
    }

    fn initial_context(&self, _env: &PromptEnv) -> Vec<HistoryItem> {
        Vec::new()
    }

    fn tools(&self, _env: &PromptEnv) -> ToolTable {
        ToolTable::new(vec![
            FnTool::plain(
                WORDING,
                spec(
                    "bash",
                    "Run a bash command.",
                    json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
                ),
                describe_bash,
                |a, c| Box::pin(bash(c, a)),
            ),
            Arc::new(editor::Editor::new()) as Arc<dyn Tool>,
            FnTool::plain(
                WORDING,
                spec(
                    "submit",
                    "Submit the changes.",
                    json!({"type": "object", "properties": {}}),
                ),
                |_, _| CallDescription {
                    kind: ToolKind::Think,
                    title: "Submit the changes for review".into(),
                    locations: vec![],
                    command: None,
                },
                |_, c| Box::pin(async move { submit(c) }),
            ),
        ])
    }

    fn text_actions(&self) -> Option<&dyn TextActions> {
        Some(self)
    }
}

impl TextActions for SweAgent {
    fn parse_reply(&self, text: &str, history: &[HistoryItem], tools: &[ToolSpec]) -> TextReply {
        let Some(line) = parse::extract_action(text) else {
            return TextReply::Correction(CORRECTION.to_string());
        };
        let external: Vec<&str> = tools
            .iter()
            .map(|t| t.name.as_str())
            .filter(|n| !OWN_TOOLS.contains(n))
            .collect();
        let (name, arguments) = match parse::command(&line, &external) {
            parse::Command::Submit if last_result(history).is_some_and(|r| r.contains(CONFIRM)) => {
                return TextReply::Finish;
            }
            parse::Command::Submit => ("submit".to_string(), json!({})),
            parse::Command::Tool { name, arguments } => (name, arguments),
            parse::Command::Bash(command) => ("bash".to_string(), json!({"command": command})),
        };
        TextReply::Calls(vec![ToolCall {
            id: format!("{CALL_ID_PREFIX}{}", uuid::Uuid::now_v7().simple()),
            name,
            arguments: arguments.to_string(),
        }])
    }

    fn render_history(
        &self,
        env: &PromptEnv,
        history: &[HistoryItem],
        tools: &[ToolSpec],
    ) -> Vec<HistoryItem> {
        let extra: Vec<(String, String)> = tools
            .iter()
            .filter(|t| !OWN_TOOLS.contains(&t.name.as_str()))
            .map(|t| (t.name.clone(), t.description.clone()))
            .collect();
        render::render(env, history, &extra)
    }
}

const OWN_TOOLS: [&str; 3] = ["bash", "str_replace_editor", "submit"];

fn last_result(history: &[HistoryItem]) -> Option<&str> {
    history.iter().rev().find_map(|h| match h {
        HistoryItem::ToolResult { output, .. } => Some(output.as_str()),
        _ => None,
    })
}

fn describe_bash(a: &Value, _ws: &Workspace) -> CallDescription {
    let command = str_or_empty(a, "command");
    CallDescription {
        kind: ToolKind::Execute,
        title: command.clone(),
        locations: vec![],
        command: Some(command),
    }
}

/// `bash: line 3: foo: command not found` reads `bash: foo: command not found`, as in the
/// original's environment.
fn tidy(output: &str) -> String {
    let lines: Vec<String> = output
        .lines()
        .map(|line| {
            line.strip_prefix("bash: line ")
                .and_then(|rest| rest.split_once(": "))
                .filter(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
                .map_or_else(|| line.to_string(), |(_, err)| format!("bash: {err}"))
        })
        .collect();
    let mut s = lines.join("\n");
    if output.ends_with('\n') {
        s.push('\n');
    }
    s
}

async fn bash(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(command) = args
        .get("command")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
    else {
        return Err(ToolError::message("bash needs a command."));
    };
    let r = ctx
        .authorize_and_run(
            "bash",
            ToolKind::Execute,
            command,
            ctx.workspace.cwd(),
            BASH_TIMEOUT,
            "bash: could not run the command",
        )
        .await?;
    let text = if r.timed_out {
        format!(
            "The command '{command}' was cancelled because it took more than {} seconds. Please try a different command that completes more quickly. Note: A common source of this error is if the command is interactive or requires user input (it is impossible to receive user input in the current environment, so the command will never complete).",
            BASH_TIMEOUT.as_secs()
        )
    } else if r.cancelled {
        "The command was interrupted by the user.".to_string()
    } else if r.output.is_empty() {
        EMPTY_OUTPUT.to_string()
    } else {
        truncate_middle(&tidy(&r.output), ctx.output_token_limit)
    };
    Ok(ToolOutcome::from_exec(r, text))
}

/// The first submit: the review, with what the file tools changed. A second one ends the
/// task (see `parse_reply`).
fn submit(ctx: &ToolContext) -> ToolResult {
    let diff = ctx.workspace.unified_diff();
    Ok(ToolOutcome::ok(format!(
        "Thank you for your work on this issue. Please review your changes carefully before you submit:\n\n\
         1. If you changed the code after running your reproduction script, run the script again. If it fails, revisit your changes. If you removed the script already, skip this step.\n\
         2. Remove the reproduction script if it is still there.\n\
         3. If you modified any test files, revert them to their original state (`git checkout -- /path/to/test/file.py`). The <diff> below shows which files changed.\n\
         4. {CONFIRM}\n\n\
         Here is a list of all of your changes made with str_replace_editor:\n\n<diff>\n{diff}\n</diff>"
    )))
}

#[cfg(test)]
mod tests;
