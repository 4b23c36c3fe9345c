//! The history as swe-agent's requests show it: no tool calls on the wire, each action as
//! the assistant text that named it, each result as an `OBSERVATION:` user message. Calls
//! another harness made earlier in the session are written as the text action that does the
//! same (`str_replace_editor view|create|str_replace`, a shell command), so the model reads
//! one consistent transcript after a switch.

use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

use super::{CALL_ID_PREFIX, CORRECTION, EMPTY_OUTPUT, prompt};
use crate::harness::PromptEnv;
use crate::harness::{rendered_assistant as assistant, rendered_user as user};
use crate::model::{AssistantReply, HistoryItem, Parts as _, ToolCall};

/// The text a request carries for a tool result.
pub(crate) fn observation(output: &str) -> String {
    if output.is_empty() || output == EMPTY_OUTPUT {
        EMPTY_OUTPUT.to_string()
    } else {
        format!("OBSERVATION:\n{output}")
    }
}

fn is_correction(item: Option<&HistoryItem>) -> bool {
    matches!(item, Some(HistoryItem::User { text, synthetic: true, .. }) if text == CORRECTION)
}

/// Renders `history`; `extra` are the session's other tools, listed in the task message.
pub(crate) fn render(
    env: &PromptEnv,
    history: &[HistoryItem],
    extra: &[(String, String)],
) -> Vec<HistoryItem> {
    let results: HashMap<&str, &str> = history
        .iter()
        .filter_map(|h| match h {
            HistoryItem::ToolResult {
                call_id, output, ..
            } => Some((call_id.as_str(), output.as_str())),
            _ => None,
        })
        .collect();
    let last_assistant = history
        .iter()
        .rposition(|h| matches!(h, HistoryItem::Assistant(_)));
    let mut out = Vec::with_capacity(history.len());
    let mut task_sent = false;
    for (i, item) in history.iter().enumerate() {
        match item {
            HistoryItem::User {
                synthetic: true,
                text,
                ..
            } => {
                // Only the last correction stays, and only while no reply follows it.
                if text == CORRECTION && last_assistant.is_none_or(|a| a < i) {
                    out.push(user(text.clone(), vec![]));
                }
            }
            HistoryItem::User { text, images, .. } if !task_sent => {
                task_sent = true;
                out.push(user(prompt::task(env, text, extra), images.clone()));
            }
            HistoryItem::User { text, images, .. } => out.push(user(text.clone(), images.clone())),
            HistoryItem::Assistant(_)
                if is_correction(history.get(i + 1))
                    && last_assistant.is_some_and(|a| a > i + 1) => {}
            HistoryItem::Assistant(reply) => push_assistant(&mut out, env, reply, &results),
            HistoryItem::ToolResult {
                call_id, output, ..
            } if call_id.starts_with(CALL_ID_PREFIX) => {
                out.push(user(observation(output), vec![]));
            }
            // Another harness's result: written right after its call.
            HistoryItem::ToolResult { .. } => {}
        }
    }
    out
}

fn push_assistant(
    out: &mut Vec<HistoryItem>,
    env: &PromptEnv,
    reply: &AssistantReply,
    results: &HashMap<&str, &str>,
) {
    let (text, reasoning) = (reply.text(), &reply.reasoning);
    let foreign: Vec<&ToolCall> = reply
        .calls()
        .filter(|c| !c.id.starts_with(CALL_ID_PREFIX))
        .collect();
    if foreign.is_empty() {
        if !text.trim().is_empty() {
            out.push(assistant(text.to_string(), reasoning.clone()));
        }
        return;
    }
    for (k, call) in foreign.iter().enumerate() {
        let action = format!("```\n{}\n```", as_action(env, call));
        let text = if k == 0 && !text.trim().is_empty() {
            format!("{}\n\n{action}", text.trim_end())
        } else {
            action
        };
        out.push(assistant(
            text,
            if k == 0 { reasoning.clone() } else { None },
        ));
        let output = results.get(call.id.as_str()).copied().unwrap_or("");
        out.push(user(observation(output), vec![]));
    }
}

fn str_field<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
}

fn quote(s: &str) -> String {
    shlex::try_quote(s)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| format!("'{}'", s.replace('\'', "'\\''")))
}

fn absolute(env: &PromptEnv, p: &str) -> String {
    let path = Path::new(p);
    if path.is_absolute() || p.contains("://") {
        p.to_string()
    } else {
        env.cwd.join(path).display().to_string()
    }
}

/// A call of any harness as the swe-agent command that does the same thing.
pub(crate) fn as_action(env: &PromptEnv, call: &ToolCall) -> String {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    if let Some(command) = str_field(&args, &["command", "cmd"])
        && args.get("old_string").is_none()
    {
        return command.to_string();
    }
    if let Some(Value::Array(argv)) = args.get("command") {
        let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
        return shlex::try_join(words).unwrap_or_default();
    }
    let path = str_field(&args, &["file_path", "path", "filePath"]).map(|p| absolute(env, p));
    let old = str_field(&args, &["old_string", "old_str", "search", "oldString"]);
    let new = str_field(&args, &["new_string", "new_str", "replace", "newString"]);
    let content = str_field(&args, &["content", "file_text"]);
    match (path, old, new, content) {
        (Some(p), Some(o), Some(n), _) => format!(
            "str_replace_editor str_replace {} --old_str {} --new_str {}",
            quote(&p),
            quote(o),
            quote(n)
        ),
        (Some(p), _, _, Some(c)) => format!(
            "str_replace_editor create {} --file_text {}",
            quote(&p),
            quote(c)
        ),
        (Some(p), None, None, None) if call.name.to_ascii_lowercase().contains("read") => {
            format!("str_replace_editor view {}", quote(&p))
        }
        _ => format!("{} {}", call.name, args),
    }
}
