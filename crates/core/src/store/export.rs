//! A session log read for an export: every prompt, answer and tool call in the order the log
//! recorded them (compacted turns included, undone ones left out), each call described by the
//! harness that made it, and every text redacted with the process's secrets.

use anyhow::{Context, Result};
use interpreter_protocol::export::{ExportEntry, ExportedCall, SessionExport};
use interpreter_protocol::{FileChange, TokenUsage, ToolKind};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::{LogLine, SessionMeta, ToolDetail};
use crate::harness::{self, PromptEnv, WebTools};
use crate::model::{HistoryItem, Part};
use crate::secrets::{redact, redact_json};
use crate::tools::CallDescription;
use crate::tools::table::ToolTable;
use crate::workspace::{DiskBackend, Workspace, diff::git_unified_diff};

/// What the log says, in order, before the calls are described.
enum Raw {
    /// A history item, the history index it had, and the harness then in use.
    Item(HistoryItem, usize, String),
    TurnEnd(Option<TokenUsage>),
    Compacted,
}

/// The log's lines replayed: what an export shows and what it needs to describe the calls.
struct Replayed {
    meta: SessionMeta,
    raws: Vec<Raw>,
    title: Option<String>,
    harness: String,
    provider: String,
    model: String,
    details: HashMap<String, ToolDetail>,
    total: TokenUsage,
}

/// Reads the session log at `path` for an export.
pub(crate) fn read(path: &Path) -> Result<SessionExport> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let r = replay(&bytes).with_context(|| format!("{} has no session header", path.display()))?;
    let updated_at = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .map(|t| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        });
    let mut describer = Describer::new(&r.meta);
    let entries = entries(&r.raws, &r.details, &mut describer, &r.meta.cwd);
    Ok(SessionExport {
        id: r.meta.id.clone(),
        title: r.title.map(|t| redact(&t).into_owned()),
        cwd: r.meta.cwd.clone(),
        created_at: r.meta.created_at.clone(),
        updated_at,
        provider: r.provider,
        model: r.model,
        harness: r.harness,
        entries,
        total_usage: r.total,
    })
}

/// Replays the log's lines; None without a header. Unreadable lines are skipped, as a load
/// skips them.
fn replay(bytes: &[u8]) -> Option<Replayed> {
    let mut meta: Option<SessionMeta> = None;
    let (mut raws, mut turns) = (Vec::new(), Vec::<(String, usize)>::new());
    // The history's length now, and where in `raws` the history since the last compaction
    // begins (undo never reaches further back).
    let (mut live, mut epoch) = (0usize, 0usize);
    let (mut title, mut harness, mut model) = (None, None, None);
    let mut details = HashMap::new();
    let mut total = TokenUsage::default();
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(line) = serde_json::from_slice::<LogLine>(line) else {
            continue;
        };
        match line {
            LogLine::Meta(m) => meta = Some(m),
            LogLine::Item { item } => {
                let h = harness
                    .clone()
                    .or_else(|| meta.as_ref().map(|m| m.harness.clone()));
                raws.push(Raw::Item(item, live, h.unwrap_or_default()));
                live += 1;
            }
            LogLine::TurnEnd { usage, .. } => {
                if let Some(u) = &usage {
                    total.add(u);
                }
                raws.push(Raw::TurnEnd(usage));
            }
            LogLine::Harness { harness: h } => harness = Some(h),
            LogLine::Model { provider, model: m } => model = Some((provider, m)),
            LogLine::Title { title: t } => title = Some(t),
            LogLine::Replace { history } => {
                live = history.len();
                raws.push(Raw::Compacted);
                epoch = raws.len();
                turns.clear();
            }
            LogLine::Checkpoint {
                turn_id,
                history_start,
                ..
            } => turns.push((turn_id, history_start)),
            LogLine::Undo { turn_ids } => {
                let Some(first) = turns.iter().position(|t| turn_ids.contains(&t.0)) else {
                    continue;
                };
                let start = turns[first].1;
                let cut = raws[epoch..]
                    .iter()
                    .position(|r| matches!(r, Raw::Item(_, i, _) if *i >= start))
                    .map_or(raws.len(), |p| epoch + p);
                raws.truncate(cut);
                turns.truncate(first);
                live = start;
            }
            LogLine::ToolDetail {
                call_id,
                changes,
                plan,
            } => {
                details.insert(call_id, ToolDetail { changes, plan });
            }
            LogLine::Permissions { .. } | LogLine::Goal { .. } => {}
        }
    }
    let meta = meta?;
    let (provider, model) = model.unwrap_or((meta.provider.clone(), meta.model.clone()));
    Some(Replayed {
        harness: harness.unwrap_or_else(|| meta.harness.clone()),
        meta,
        raws,
        title,
        provider,
        model,
        details,
        total,
    })
}

/// The entries an export shows, redacted.
fn entries(
    raws: &[Raw],
    details: &HashMap<String, ToolDetail>,
    describer: &mut Describer,
    cwd: &Path,
) -> Vec<ExportEntry> {
    let results: HashMap<&str, (&str, bool)> = raws
        .iter()
        .filter_map(|r| match r {
            Raw::Item(
                HistoryItem::ToolResult {
                    call_id,
                    output,
                    is_error,
                },
                ..,
            ) => Some((call_id.as_str(), (output.as_str(), *is_error))),
            _ => None,
        })
        .collect();
    let text = |s: &str| redact(s).into_owned();
    let mut out = Vec::new();
    for raw in raws {
        let (item, harness) = match raw {
            Raw::Item(item, _, harness) => (item, harness),
            Raw::TurnEnd(usage) => {
                out.push(ExportEntry::TurnEnded { usage: *usage });
                continue;
            }
            Raw::Compacted => {
                out.push(ExportEntry::Compacted);
                continue;
            }
        };
        let reply = match item {
            HistoryItem::User {
                text: t,
                images,
                synthetic: false,
            } => {
                out.push(ExportEntry::Prompt {
                    text: text(t),
                    images: images.clone(),
                });
                continue;
            }
            HistoryItem::Assistant(reply) => reply,
            _ => continue,
        };
        if let Some(r) = reply.reasoning().filter(|r| !r.trim().is_empty()) {
            out.push(ExportEntry::Reasoning { text: text(r) });
        }
        for part in &reply.parts {
            let call = match part {
                Part::Message(m) if !m.text.trim().is_empty() => {
                    out.push(ExportEntry::Answer {
                        text: text(&m.text),
                    });
                    continue;
                }
                Part::Message(_) => continue,
                Part::Call(call) => call,
            };
            let mut input: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
            let d = describer.describe(harness, &call.name, &input);
            redact_json(&mut input);
            let (output, failed) = results.get(call.id.as_str()).copied().unwrap_or(("", true));
            let detail = details.get(&call.id);
            out.push(ExportEntry::ToolCall(Box::new(ExportedCall {
                tool: call.name.clone(),
                kind: d.kind,
                title: text(&d.title),
                command: d.command.as_deref().map(text),
                input,
                output: text(output),
                failed,
                diffs: detail
                    .map(|d| d.changes.iter().map(|c| text(&diff(c, cwd))).collect())
                    .unwrap_or_default(),
            })));
            if let Some(mut plan) = detail.and_then(|d| d.plan.clone()) {
                plan.explanation = plan.explanation.as_deref().map(text);
                plan.items.iter_mut().for_each(|i| i.step = text(&i.step));
                out.push(ExportEntry::Plan(plan));
            }
        }
    }
    out
}

/// One file's change as a unified diff, its path relative to the session's folder.
fn diff(c: &FileChange, cwd: &Path) -> String {
    let rel = |p: &Path| {
        p.strip_prefix(cwd)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let path = rel(&c.path);
    let mut out = String::new();
    if let Some(to) = &c.move_path {
        out.push_str(&format!("rename from {path}\nrename to {}\n", rel(to)));
    }
    out.push_str(&git_unified_diff(
        &path,
        c.old_text.as_deref(),
        c.new_text.as_deref(),
    ));
    out
}

/// Describes calls as the harness that made them did, its tool table built once.
struct Describer {
    workspace: Option<Workspace>,
    env: PromptEnv,
    tables: HashMap<String, Option<ToolTable>>,
}

impl Describer {
    fn new(meta: &SessionMeta) -> Describer {
        let backend = Arc::new(DiskBackend);
        // A session whose folder is gone is still described, from the temporary folder.
        let workspace = Workspace::new(&meta.cwd, &meta.additional_directories, backend.clone())
            .or_else(|_| Workspace::new(&std::env::temp_dir(), &[], backend))
            .ok();
        let roots = workspace
            .as_ref()
            .map(|w| w.roots().to_vec())
            .unwrap_or_default();
        Describer {
            // Every tool a harness can offer, so any call it made is found.
            env: PromptEnv {
                cwd: meta.cwd.clone(),
                roots,
                os: std::env::consts::OS.into(),
                shell: String::new(),
                agents_md: None,
                sandbox: Default::default(),
                approval: Default::default(),
                tree: String::new(),
                skills: vec![],
                agents: vec![],
                commands: vec![],
                explore_model: None,
                plan_mode: false,
                face: Default::default(),
                web: WebTools {
                    fetch: true,
                    search: true,
                    moonshot_search: true,
                },
                images: true,
                model: meta.model.clone(),
                provider: meta.provider.clone(),
                github_cli: true,
                browser: true,
            },
            workspace,
            tables: HashMap::new(),
        }
    }

    fn describe(&mut self, harness: &str, tool: &str, args: &Value) -> CallDescription {
        let env = &self.env;
        let table = self
            .tables
            .entry(harness.to_string())
            .or_insert_with(|| harness::by_name(harness).map(|h| h.tools(env)));
        match (table.as_ref().and_then(|t| t.get(tool)), &self.workspace) {
            (Some(t), Some(ws)) => t.describe(args, ws),
            _ => CallDescription {
                kind: ToolKind::Other,
                title: tool.to_string(),
                locations: vec![],
                command: None,
            },
        }
    }
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
