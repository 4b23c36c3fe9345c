//! The session log: one append-only JSONL file per session under `<home>/sessions`, fsynced at
//! every turn boundary, created with mode 0600, written by one process at a time
//! (`writer.rs`). Loading skips every line it cannot read (a half-written last line is the
//! usual one) with a warning naming it, and closes tool calls that never got a result.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::model::{HistoryItem, Parts as _};

mod export;
mod manage;
mod writer;
pub(crate) use export::read as read_export;
pub use manage::SessionSummary;
pub use writer::SessionBusy;
pub(crate) use writer::{SessionLog, set_face};

/// The first line of a session log: how the session started. Later `Model` and `Harness`
/// lines change its model and harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// Its id, also the log's file name (`<id>.jsonl`).
    pub id: String,
    /// The working directory it started in (session lists filter by it).
    pub cwd: PathBuf,
    /// When it was created (a fork: when it was forked), RFC 3339 in UTC.
    pub created_at: String,
    /// The provider's id it started with.
    pub provider: String,
    /// The model it started with.
    pub model: String,
    /// The harness it started with.
    pub harness: String,
    /// The extra workspace roots it was opened with (ACP lists them with the session).
    #[serde(default)]
    pub additional_directories: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum LogLine {
    Meta(SessionMeta),
    Item {
        item: HistoryItem,
    },
    TurnEnd {
        turn_id: String,
        reason: String,
        /// The turn's tokens (absent in logs written before they were recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<interpreter_protocol::TokenUsage>,
    },
    Harness {
        harness: String,
    },
    Model {
        provider: String,
        model: String,
    },
    Title {
        title: String,
    },
    /// History was compacted: from here on it is these items.
    Replace {
        history: Vec<HistoryItem>,
    },
    /// The policy the session runs with from here on (at its start and after each change),
    /// so a face can restore it when the session is resumed or forked.
    Permissions {
        permissions: interpreter_protocol::Permissions,
    },
    /// A user turn ended: where its history began, and the workspace's checkpoints before
    /// and after it (absent when none could be taken).
    Checkpoint {
        turn_id: String,
        history_start: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<String>,
        /// What the turn changed that undo cannot put back (ignored by git, too large,
        /// special, git's own files, other roots), with why.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        uncovered: Vec<crate::checkpoint::Uncovered>,
        /// The turn ran no tool: it changed no file, and has no checkpoints of its own.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        quiet: bool,
    },
    /// These turns were taken back from the conversation: history is cut where the first
    /// began. Their lines stay in the log.
    Undo {
        turn_ids: Vec<String>,
    },
    /// The session's goal now (None: cleared).
    Goal {
        goal: Option<interpreter_protocol::Goal>,
    },
    /// What a tool call changed (for replaying diffs and plans on load).
    ToolDetail {
        call_id: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changes: Vec<interpreter_protocol::FileChange>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plan: Option<interpreter_protocol::Plan>,
    },
}

/// A tool call's changes and plan, kept for replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ToolDetail {
    pub changes: Vec<interpreter_protocol::FileChange>,
    pub plan: Option<interpreter_protocol::Plan>,
}

/// A user turn the session can take back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TurnMark {
    pub turn_id: String,
    /// The history's length when the turn began.
    pub history_start: usize,
    /// The workspace's checkpoints before and after the turn.
    pub before: Option<String>,
    pub after: Option<String>,
    /// What the turn changed that its checkpoints could not hold.
    pub uncovered: Vec<crate::checkpoint::Uncovered>,
    /// The turn ran no tool (no checkpoints needed).
    pub quiet: bool,
}

/// What a log holds after loading.
#[derive(Debug, Clone)]
pub(crate) struct LoadedSession {
    pub history: Vec<HistoryItem>,
    /// The turns since the last compaction, oldest first, undone ones gone.
    pub turns: Vec<TurnMark>,
    pub harness: String,
    pub provider: String,
    pub model: String,
    pub title: Option<String>,
    pub warnings: Vec<String>,
    pub details: std::collections::HashMap<String, ToolDetail>,
    /// The goal the log last recorded.
    pub goal: Option<interpreter_protocol::Goal>,
    /// The bytes of the log that were read.
    pub log_len: u64,
}

pub(crate) struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    pub(crate) fn new(home: &Path) -> Self {
        SessionStore {
            dir: home.join("sessions"),
        }
    }

    fn path_for(&self, id: &str) -> Result<PathBuf> {
        // Ids become file names: refuse anything that could walk out of the folder.
        anyhow::ensure!(
            !id.is_empty()
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "invalid session id `{id}`"
        );
        Ok(self.dir.join(format!("{id}.jsonl")))
    }

    /// Creates the log of a new session and becomes its writer.
    pub(crate) fn create(&self, meta: &SessionMeta) -> Result<SessionLog> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let path = self.path_for(&meta.id)?;
        let file = writer::open_private(&path, OpenOptions::new().append(true).create_new(true))
            .with_context(|| format!("creating session log {}", path.display()))?;
        let lock = writer::WriterLock::acquire(&path, &meta.id)?;
        let mut log = SessionLog::claimed(&meta.id, path, Box::new(file), Some(lock), 0);
        log.append(&LogLine::Meta(meta.clone()))?;
        log.sync()?;
        Ok(log)
    }

    /// Becomes the writer of an existing log (resume): takes its lock (a [`SessionBusy`]
    /// error names who has it) and cuts a torn last line.
    pub(crate) fn reopen(&self, id: &str) -> Result<SessionLog> {
        let path = self.path_for(id)?;
        anyhow::ensure!(path.exists(), "no session `{id}` ({})", path.display());
        let lock = writer::WriterLock::acquire(&path, id)?;
        let (file, len) = writer::open_for_append(&path)?;
        Ok(SessionLog::claimed(
            id,
            path,
            Box::new(file),
            Some(lock),
            len,
        ))
    }

    /// The log of a session loaded for display, `loaded_len` bytes when it was read: it is
    /// claimed (as by [`Self::reopen`]) only when the session first runs a turn.
    pub(crate) fn reopen_later(&self, id: &str, loaded_len: u64) -> Result<SessionLog> {
        Ok(SessionLog::unclaimed(id, self.path_for(id)?, loaded_len))
    }

    pub(crate) fn exists(&self, id: &str) -> bool {
        self.path_for(id).map(|p| p.exists()).unwrap_or(false)
    }

    pub(crate) fn load(&self, id: &str) -> Result<LoadedSession> {
        let path = self.path_for(id)?;
        let bytes = std::fs::read(&path)
            .with_context(|| format!("no session `{id}` ({})", path.display()))?;
        let mut meta = None;
        let mut history = Vec::new();
        let mut warnings = Vec::new();
        let mut harness = None;
        let mut model = None;
        let mut title = None;
        let mut details = std::collections::HashMap::new();
        let mut turns: Vec<TurnMark> = Vec::new();
        let mut goal = None;
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            if line.trim_ascii().is_empty() {
                continue;
            }
            match serde_json::from_slice::<LogLine>(line) {
                Ok(LogLine::Meta(m)) => meta = Some(m),
                Ok(LogLine::Item { item }) => history.push(item),
                Ok(LogLine::TurnEnd { .. }) => {}
                Ok(LogLine::Harness { harness: h }) => harness = Some(h),
                Ok(LogLine::Model { provider, model: m }) => model = Some((provider, m)),
                Ok(LogLine::Title { title: t }) => title = Some(t),
                Ok(LogLine::Permissions { .. }) => {}
                Ok(LogLine::Replace { history: h }) => {
                    history = h;
                    turns.clear();
                }
                Ok(LogLine::Checkpoint {
                    turn_id,
                    history_start,
                    before,
                    after,
                    uncovered,
                    quiet,
                }) => turns.push(TurnMark {
                    turn_id,
                    history_start,
                    before,
                    after,
                    uncovered,
                    quiet,
                }),
                Ok(LogLine::Undo { turn_ids }) => {
                    if let Some(first) = turns.iter().position(|t| turn_ids.contains(&t.turn_id)) {
                        history.truncate(turns[first].history_start);
                        turns.truncate(first);
                    }
                }
                Ok(LogLine::ToolDetail {
                    call_id,
                    changes,
                    plan,
                }) => {
                    details.insert(call_id, ToolDetail { changes, plan });
                }
                Ok(LogLine::Goal { goal: g }) => goal = g,
                Err(e) => warnings.push(format!(
                    "skipped unreadable line {} of {}: {e}",
                    i + 1,
                    path.display()
                )),
            }
        }
        let meta = meta.with_context(|| format!("{} has no session header", path.display()))?;
        close_dangling_tool_calls(&mut history);
        let (provider, model) = model.unwrap_or((meta.provider.clone(), meta.model.clone()));
        Ok(LoadedSession {
            harness: harness.unwrap_or_else(|| meta.harness.clone()),
            provider,
            model,
            title,
            details,
            goal,
            history,
            turns,
            warnings,
            log_len: bytes.len() as u64,
        })
    }

    /// The log `query` names: a path to a log file, a session's id, or a prefix of exactly
    /// one live session's id.
    pub(crate) fn find(&self, query: &str) -> Result<PathBuf> {
        let as_path = Path::new(query);
        // An id is letters, digits, `-` and `_`: anything else names a file.
        let id_like = query
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !id_like {
            anyhow::ensure!(as_path.is_file(), "no session file {query}");
            return Ok(as_path.to_path_buf());
        }
        if let Ok(path) = self.path_for(query)
            && path.is_file()
        {
            return Ok(path);
        }
        let ids: Vec<String> = self
            .list(None)
            .into_iter()
            .map(|(m, _)| m.id)
            .filter(|id| id.starts_with(query))
            .collect();
        match ids.as_slice() {
            [one] => self.path_for(one),
            [] => anyhow::bail!("no session `{query}` in {}", self.dir.display()),
            many => anyhow::bail!(
                "`{query}` is the start of {} sessions' ids ({}): give more of it",
                many.len(),
                many.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// Sessions, newest first, optionally only those started in `cwd`.
    pub(crate) fn list(&self, cwd: Option<&Path>) -> Vec<(SessionMeta, std::time::SystemTime)> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<_> = rd
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .filter_map(|e| {
                let modified = e.metadata().and_then(|m| m.modified()).ok()?;
                let mut first = String::new();
                BufReader::new(File::open(e.path()).ok()?)
                    .read_line(&mut first)
                    .ok()?;
                match serde_json::from_str::<LogLine>(&first).ok()? {
                    LogLine::Meta(m) => Some((m, modified)),
                    _ => None,
                }
            })
            .filter(|(m, _)| cwd.is_none_or(|c| m.cwd == c))
            .collect();
        out.sort_by_key(|e| std::cmp::Reverse(e.1));
        out
    }

    /// The size of a session's log in bytes (for pickers), without reading it.
    pub(crate) fn size(&self, id: &str) -> Option<u64> {
        std::fs::metadata(self.path_for(id).ok()?)
            .ok()
            .map(|m| m.len())
    }

    /// A session's title, read from its title line without loading the history.
    pub(crate) fn title(&self, id: &str) -> Option<String> {
        let file = File::open(self.path_for(id).ok()?).ok()?;
        BufReader::new(file)
            .lines()
            .map_while(std::io::Result::ok)
            .filter(|l| l.starts_with(r#"{"type":"title""#))
            .filter_map(|l| match serde_json::from_str::<LogLine>(&l) {
                Ok(LogLine::Title { title }) => Some(title),
                _ => None,
            })
            .last()
    }

    pub(crate) fn delete(&self, id: &str) -> Result<()> {
        let path = self.path_for(id)?;
        std::fs::remove_file(&path).with_context(|| format!("deleting {}", path.display()))?;
        for file in writer::sidecars(&path) {
            let _ = std::fs::remove_file(file);
        }
        Ok(())
    }
}

/// A crash mid-tool-call leaves a call without a result; providers reject that, so add one.
fn close_dangling_tool_calls(history: &mut Vec<HistoryItem>) {
    let mut answered = std::collections::HashSet::new();
    for item in history.iter() {
        if let HistoryItem::ToolResult { call_id, .. } = item {
            answered.insert(call_id.clone());
        }
    }
    let mut missing = Vec::new();
    for item in history.iter() {
        if let HistoryItem::Assistant(reply) = item {
            for c in reply.calls() {
                if !answered.contains(&c.id) {
                    missing.push(c.id.clone());
                }
            }
        }
    }
    for call_id in missing {
        history.push(HistoryItem::ToolResult {
            call_id,
            output: "The tool call was interrupted before it finished (the agent stopped).".into(),
            is_error: true,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AssistantReply, ToolCall};
    use std::io::Write;

    fn meta(id: &str, cwd: &str) -> SessionMeta {
        SessionMeta {
            id: id.into(),
            cwd: cwd.into(),
            created_at: "now".into(),
            provider: "p".into(),
            model: "m".into(),
            harness: "native".into(),
            additional_directories: vec![],
        }
    }
    #[test]
    fn round_trip_skips_torn_line_and_closes_dangling_calls() {
        let home = tempfile::tempdir().unwrap();
        let store = SessionStore::new(home.path());
        let mut log = store.create(&meta("s1", "/w")).unwrap();
        log.append(&LogLine::Item {
            item: HistoryItem::User {
                text: "hi".into(),
                images: vec![],
                synthetic: false,
            },
        })
        .unwrap();
        log.append(&LogLine::Item {
            item: HistoryItem::Assistant(AssistantReply::new(
                "",
                vec![ToolCall {
                    id: "c1".into(),
                    name: "shell".into(),
                    arguments: "{}".into(),
                }],
            )),
        })
        .unwrap();
        log.sync().unwrap();
        drop(log);
        let path = home.path().join("sessions/s1.jsonl");
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"item\",\"item\":{\"ty").unwrap();
        let loaded = store.load("s1").unwrap();
        assert_eq!(loaded.history.len(), 3);
        assert!(
            matches!(&loaded.history[2], HistoryItem::ToolResult { call_id, .. } if call_id == "c1")
        );
        assert_eq!(loaded.warnings.len(), 1);
        // Unix modes only: on Windows the profile folder's ACL keeps it private.
        if let Some(mode) = crate::platform::mode(&std::fs::metadata(&path).unwrap()) {
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(store.list(Some(Path::new("/w"))).len(), 1);
        assert!(store.list(Some(Path::new("/other"))).is_empty());
        assert!(store.load("../etc/passwd").is_err());
    }
}
