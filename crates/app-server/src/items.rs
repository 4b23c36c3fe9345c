//! Core tool calls, messages and plans as `ThreadItem`s, and the client's input items as the
//! core's. Pure translation: no I/O.

use interpreter_protocol::{
    FileChange, FileChangeKind, InputItem, Plan, PlanStatus, ToolCallBegin, ToolCallEnd, ToolKind,
    ToolStatus,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use super::transport::RpcError;
use super::wire::{FileUpdateChange, Item, ItemStatus, TurnError, now_ms};

/// Output kept in an item, at most (the model's copy is separate).
const MAX_ITEM_OUTPUT: usize = 64 * 1024;

/// The item id of the answer of one model response.
pub(crate) fn message_id(message_id: &str) -> String {
    format!("msg-{message_id}")
}

/// The item id of the reasoning of one model response (the same response id as its answer).
pub(crate) fn reasoning_id(message_id: &str) -> String {
    format!("rs-{message_id}")
}

pub(crate) fn is_reasoning_id(id: &str) -> bool {
    id.starts_with("rs-")
}

/// A search's `action` as the v2 protocol spells it (`search`, `openPage`, `findInPage`).
fn web_search_action(input: &Value) -> Value {
    let mut action = match input.get("type") {
        Some(_) => input.clone(),
        None => json!({"type": "search", "query": input["query"]}),
    };
    let kind = match action["type"].as_str() {
        Some("open_page") => "openPage",
        Some("find_in_page") => "findInPage",
        Some("search") => "search",
        _ => "other",
    };
    action["type"] = json!(kind);
    action
}

/// What kind of item a tool call is shown as.
enum Shape {
    Command { command: String, cwd: String },
    FileChange,
    Mcp { server: String, tool: String },
    Dynamic { tool: String },
    WebSearch,
}

/// A tool call shown as an item, from its begin to its end.
pub(crate) struct ToolItem {
    id: String,
    shape: Shape,
    arguments: Value,
    started_ms: i64,
    root: PathBuf,
}

impl ToolItem {
    pub(crate) fn begin(b: &ToolCallBegin, cwd: &Path) -> ToolItem {
        let shape = match b.kind {
            ToolKind::Execute => Shape::Command {
                command: b.command.clone().unwrap_or_else(|| b.title.clone()),
                cwd: cwd.display().to_string(),
            },
            ToolKind::Edit | ToolKind::Delete | ToolKind::Move => Shape::FileChange,
            ToolKind::Fetch
                if matches!(
                    b.tool.as_str(),
                    "web_search" | "WebSearch" | "$web_search" | "websearch"
                ) =>
            {
                Shape::WebSearch
            }
            _ => match b.tool.split_once("__") {
                Some((server, tool)) if b.kind == ToolKind::Other => Shape::Mcp {
                    server: server.to_string(),
                    tool: tool.to_string(),
                },
                _ => Shape::Dynamic {
                    tool: b.tool.clone(),
                },
            },
        };
        ToolItem {
            id: b.call_id.clone(),
            shape,
            arguments: b.input.clone(),
            started_ms: now_ms(),
            root: cwd.to_path_buf(),
        }
    }

    pub(crate) fn is_command(&self) -> bool {
        matches!(self.shape, Shape::Command { .. })
    }

    /// The item while running (`end` None) or in its final state.
    pub(crate) fn item(&self, end: Option<&ToolCallEnd>) -> Item {
        let status = match end.map(|e| e.status) {
            None => ItemStatus::InProgress,
            Some(ToolStatus::Completed) => ItemStatus::Completed,
            Some(ToolStatus::Failed) => ItemStatus::Failed,
            Some(ToolStatus::Declined) => ItemStatus::Declined,
        };
        let duration = end.map(|_| now_ms() - self.started_ms);
        let output = end.map(|e| shown(&e.output).to_string());
        match &self.shape {
            Shape::Command { command, cwd } => Item::CommandExecution {
                id: self.id.clone(),
                command: command.clone(),
                cwd: cwd.clone(),
                process_id: None,
                status,
                command_actions: vec![json!({"type": "unknown", "command": command})],
                aggregated_output: output,
                exit_code: end.and_then(|e| e.exit_code),
                duration_ms: duration,
            },
            Shape::FileChange => Item::FileChange {
                id: self.id.clone(),
                changes: end
                    .map(|e| file_changes(&e.changes, &self.root))
                    .unwrap_or_default(),
                status,
            },
            Shape::Mcp { server, tool } => {
                let failed = matches!(status, ItemStatus::Failed | ItemStatus::Declined);
                Item::McpToolCall {
                    id: self.id.clone(),
                    server: server.clone(),
                    tool: tool.clone(),
                    // MCP calls have no "declined": a refused call failed.
                    status: if failed { ItemStatus::Failed } else { status },
                    arguments: self.arguments.clone(),
                    result: output
                        .as_ref()
                        .filter(|_| !failed)
                        .map(|text| json!({"content": [{"type": "text", "text": text}]})),
                    error: output
                        .filter(|_| failed)
                        .map(|message| TurnError { message }),
                    duration_ms: duration,
                }
            }
            Shape::WebSearch => Item::WebSearch {
                id: self.id.clone(),
                query: self.arguments["query"].as_str().unwrap_or("").to_string(),
                action: Some(web_search_action(&self.arguments)),
            },
            Shape::Dynamic { tool } => Item::DynamicToolCall {
                id: self.id.clone(),
                tool: tool.clone(),
                arguments: self.arguments.clone(),
                status: if status == ItemStatus::Declined {
                    ItemStatus::Failed
                } else {
                    status
                },
                success: end.map(|e| e.status == ToolStatus::Completed),
                content_items: output.map(|text| vec![json!({"type": "inputText", "text": text})]),
                duration_ms: duration,
            },
        }
    }

    /// The item of a call its turn ended before it did.
    pub(crate) fn cancelled(&self) -> Item {
        self.item(Some(&ToolCallEnd {
            call_id: self.id.clone(),
            status: ToolStatus::Failed,
            output: "The turn ended before this tool call finished.".into(),
            exit_code: None,
            changes: vec![],
        }))
    }
}

/// Per-file diffs of a call's changes.
pub(crate) fn file_changes(changes: &[FileChange], root: &Path) -> Vec<FileUpdateChange> {
    changes
        .iter()
        .map(|c| {
            let rel = |p: &Path| {
                p.strip_prefix(root)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .into_owned()
            };
            let kind = match c.kind {
                FileChangeKind::Add => json!({"type": "add"}),
                FileChangeKind::Delete => json!({"type": "delete"}),
                FileChangeKind::Update => {
                    json!({"type": "update", "move_path": c.move_path.as_ref().map(|p| p.display().to_string())})
                }
            };
            FileUpdateChange {
                path: c.path.display().to_string(),
                kind,
                diff: interpreter_core::workspace::diff::git_unified_diff(
                    &rel(c.move_path.as_ref().unwrap_or(&c.path)),
                    c.old_text.as_deref(),
                    c.new_text.as_deref(),
                ),
            }
        })
        .collect()
}

/// Plan steps as `TurnPlanStep`s.
pub(crate) fn plan_steps(plan: &Plan) -> Vec<Value> {
    plan.items
        .iter()
        .map(|i| {
            let status = match i.status {
                PlanStatus::Pending => "pending",
                PlanStatus::InProgress => "inProgress",
                PlanStatus::Completed => "completed",
            };
            json!({"step": i.step, "status": status})
        })
        .collect()
}

/// A thread's preview: the text of its first user message.
pub(crate) fn preview(input: &[Value]) -> String {
    input
        .iter()
        .filter_map(|i| i.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// The client's `UserInput` items as the core's input.
pub(crate) fn input_items(input: &[Value]) -> Result<Vec<InputItem>, RpcError> {
    let mut out = Vec::new();
    for (n, item) in input.iter().enumerate() {
        let field = |name: &str| {
            item.get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    RpcError::invalid_params(format!("input[{n}] needs a string `{name}`"))
                })
        };
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        out.push(match kind {
            "text" => InputItem::Text { text: field("text")? },
            "image" => {
                let url = field("url")?;
                if !url.starts_with("data:") && !url.starts_with("http") {
                    return Err(RpcError::invalid_params(format!(
                        "input[{n}]: an image url must be a data: or http(s) URL"
                    )));
                }
                InputItem::Image { url }
            }
            "localImage" => InputItem::LocalImage {
                path: PathBuf::from(field("path")?),
            },
            "skill" => InputItem::Skill {
                name: field("name")?,
                args: String::new(),
            },
            "mention" => InputItem::Text {
                text: format!("[{}]({})", field("name")?, field("path")?),
            },
            other => {
                return Err(RpcError::invalid_params(format!(
                    "input[{n}]: unsupported input type `{other}` (text, image, localImage, skill, mention)"
                )));
            }
        });
    }
    if out.is_empty() {
        return Err(RpcError::invalid_params("input must not be empty"));
    }
    Ok(out)
}

fn shown(s: &str) -> &str {
    if s.len() <= MAX_ITEM_OUTPUT {
        return s;
    }
    let mut start = s.len() - MAX_ITEM_OUTPUT;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn begin(kind: ToolKind, tool: &str) -> ToolCallBegin {
        ToolCallBegin {
            call_id: "c1".into(),
            tool: tool.into(),
            kind,
            title: "t".into(),
            input: json!({"a": 1}),
            locations: vec![],
            command: Some("ls -la".into()),
            subagent: None,
        }
    }

    fn end(status: ToolStatus) -> ToolCallEnd {
        ToolCallEnd {
            call_id: "c1".into(),
            status,
            output: "out".into(),
            exit_code: Some(0),
            changes: vec![FileChange {
                path: "/w/a.txt".into(),
                kind: FileChangeKind::Update,
                move_path: None,
                old_text: Some("a\n".into()),
                new_text: Some("b\n".into()),
            }],
        }
    }

    #[test]
    fn searches_become_web_search_items_with_v2_actions() {
        let cwd = Path::new("/w");
        let mut hosted = begin(ToolKind::Fetch, "web_search");
        hosted.input = json!({"type": "open_page", "url": "https://docs.rs"});
        let v = ToolItem::begin(&hosted, cwd).item(None).to_value();
        assert_eq!(v["type"], "webSearch");
        assert_eq!(
            v["action"],
            json!({"type": "openPage", "url": "https://docs.rs"})
        );
        let mut own = begin(ToolKind::Fetch, "WebSearch");
        own.input = json!({"query": "ropey"});
        let v = ToolItem::begin(&own, cwd)
            .item(Some(&end(ToolStatus::Completed)))
            .to_value();
        assert_eq!(v["type"], "webSearch");
        assert_eq!(v["query"], "ropey");
        assert_eq!(v["action"], json!({"type": "search", "query": "ropey"}));
        // A fetch is not a search.
        let fetch = ToolItem::begin(&begin(ToolKind::Fetch, "WebFetch"), cwd).item(None);
        assert_eq!(fetch.to_value()["type"], "dynamicToolCall");
    }

    #[test]
    fn tool_calls_become_items() {
        let cwd = Path::new("/w");
        let cmd = ToolItem::begin(&begin(ToolKind::Execute, "shell"), cwd);
        let v = cmd.item(Some(&end(ToolStatus::Declined))).to_value();
        assert_eq!(v["type"], "commandExecution");
        assert_eq!(
            (v["status"].as_str(), v["command"].as_str()),
            (Some("declined"), Some("ls -la"))
        );
        assert_eq!(v["cwd"], "/w");
        let edit = ToolItem::begin(&begin(ToolKind::Edit, "apply_patch"), cwd);
        let v = edit.item(Some(&end(ToolStatus::Completed))).to_value();
        assert_eq!(v["changes"][0]["kind"]["type"], "update");
        assert!(v["changes"][0]["diff"].as_str().unwrap().contains("-a\n+b"));
        let mcp = ToolItem::begin(&begin(ToolKind::Other, "echo__say"), cwd);
        let v = mcp.item(Some(&end(ToolStatus::Completed))).to_value();
        assert_eq!(
            (v["server"].as_str(), v["tool"].as_str()),
            (Some("echo"), Some("say"))
        );
        assert_eq!(v["result"]["content"][0]["text"], "out");
        let read = ToolItem::begin(&begin(ToolKind::Read, "read_file"), cwd);
        let v = read.item(None).to_value();
        assert_eq!(
            (v["type"].as_str(), v["status"].as_str()),
            (Some("dynamicToolCall"), Some("inProgress"))
        );
    }

    #[test]
    fn client_input_becomes_core_input() {
        let items = input_items(&[
            json!({"type": "text", "text": "hi"}),
            json!({"type": "image", "url": "data:image/png;base64,AA=="}),
            json!({"type": "localImage", "path": "/tmp/a.png"}),
            json!({"type": "skill", "name": "review", "path": "/x/SKILL.md"}),
            json!({"type": "mention", "name": "app", "path": "app://x"}),
        ])
        .unwrap();
        assert_eq!(items.len(), 5);
        assert_eq!(
            items[4],
            InputItem::Text {
                text: "[app](app://x)".into()
            }
        );
        assert!(input_items(&[json!({"type": "audio", "url": "x"})]).is_err());
        assert!(input_items(&[json!({"type": "text"})]).is_err());
        assert!(input_items(&[]).is_err());
    }
}
