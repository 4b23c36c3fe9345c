//! Managing stored sessions as a whole: copying one under a new id (a fork), archiving and
//! restoring, naming one that is not open, and the summary a session list shows. Archived
//! logs live in `<home>/sessions/archived`, out of sight of `list`, `load` and `exists`.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::time::SystemTime;

use super::{LogLine, SessionMeta, SessionStore, writer};

/// What a session list shows about one stored session, read in one pass over its log.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// The log's header line.
    pub meta: SessionMeta,
    /// When the log last changed.
    pub modified: SystemTime,
    /// The latest title line (the first user message's first line, or a name it was given).
    pub title: Option<String>,
    /// The first message the user typed.
    pub preview: String,
    /// The policy the session last ran with, if it logged one.
    pub permissions: Option<interpreter_protocol::Permissions>,
    /// The model the session last used (a `/model` switch, else the header's).
    pub model: String,
}

/// Longest preview kept, in characters.
const PREVIEW_CHARS: usize = 200;

impl SessionStore {
    fn archive_dir(&self) -> PathBuf {
        self.dir.join("archived")
    }

    fn archived_path(&self, id: &str) -> Result<PathBuf> {
        let live = self.path_for(id)?;
        let name = live.file_name().context("session file name")?;
        Ok(self.archive_dir().join(name))
    }

    /// The log file of a live session, if it exists.
    pub(crate) fn log_path(&self, id: &str) -> Option<PathBuf> {
        self.path_for(id).ok().filter(|p| p.exists())
    }

    /// Whether `id` is an archived session.
    pub(crate) fn is_archived(&self, id: &str) -> bool {
        self.archived_path(id).map(|p| p.exists()).unwrap_or(false)
    }

    /// Copies session `from` to a new session `to`: the same history, settings, title and
    /// policy, under its own header. The copy is fsynced before this returns.
    pub(crate) fn fork(&self, from: &str, to: &str) -> Result<()> {
        let src = self.path_for(from)?;
        let dst = self.path_for(to)?;
        let text = std::fs::read_to_string(&src)
            .with_context(|| format!("no session `{from}` ({})", src.display()))?;
        let mut out = writer::open_private(
            &dst,
            std::fs::OpenOptions::new().append(true).create_new(true),
        )
        .with_context(|| format!("creating session log {}", dst.display()))?;
        let mut wrote_header = false;
        for line in text.lines() {
            let copied = match serde_json::from_str::<LogLine>(line) {
                Ok(LogLine::Meta(mut meta)) if !wrote_header => {
                    wrote_header = true;
                    meta.id = to.to_string();
                    meta.created_at = chrono::Utc::now().to_rfc3339();
                    serde_json::to_string(&LogLine::Meta(meta))?
                }
                // A torn or unknown line is copied as it is; loading reports it as usual.
                _ => line.to_string(),
            };
            writeln!(out, "{copied}").with_context(|| format!("writing {}", dst.display()))?;
        }
        anyhow::ensure!(wrote_header, "{} has no session header", src.display());
        out.sync_data()
            .with_context(|| format!("syncing session log {}", dst.display()))
    }

    /// Moves a session out of the list; `load` and `exists` no longer see it.
    pub(crate) fn archive(&self, id: &str) -> Result<()> {
        let live = self.path_for(id)?;
        let archived = self.archived_path(id)?;
        anyhow::ensure!(live.exists(), "no session `{id}`");
        std::fs::create_dir_all(self.archive_dir())
            .with_context(|| format!("creating {}", self.archive_dir().display()))?;
        std::fs::rename(&live, &archived).with_context(|| format!("archiving {}", live.display()))
    }

    /// Brings an archived session back.
    pub(crate) fn unarchive(&self, id: &str) -> Result<()> {
        let live = self.path_for(id)?;
        let archived = self.archived_path(id)?;
        anyhow::ensure!(archived.exists(), "no archived session `{id}`");
        anyhow::ensure!(!live.exists(), "session `{id}` exists already");
        std::fs::rename(&archived, &live)
            .with_context(|| format!("restoring {}", archived.display()))
    }

    /// Names a session that no session task has open (an open one takes `Op::SetTitle`);
    /// one another process writes is refused ([`super::SessionBusy`]).
    pub(crate) fn set_title(&self, id: &str, title: &str) -> Result<()> {
        let mut log = self.reopen(id)?;
        log.append(&LogLine::Title {
            title: title.to_string(),
        })?;
        log.sync()
    }

    /// The summary of one session, live or archived.
    pub(crate) fn summary(&self, id: &str) -> Option<SessionSummary> {
        let path = match self.path_for(id) {
            Ok(p) if p.exists() => p,
            _ => self.archived_path(id).ok()?,
        };
        summarize(
            File::open(&path).ok()?,
            std::fs::metadata(&path).ok()?.modified().ok()?,
        )
    }

    /// Summaries of every live (or every archived) session, newest first.
    pub(crate) fn summaries(&self, archived: bool) -> Vec<SessionSummary> {
        let dir = if archived {
            self.archive_dir()
        } else {
            self.dir.clone()
        };
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut out: Vec<SessionSummary> = rd
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .filter_map(|e| {
                let modified = e.metadata().and_then(|m| m.modified()).ok()?;
                summarize(File::open(e.path()).ok()?, modified)
            })
            .collect();
        out.sort_by_key(|s| std::cmp::Reverse(s.modified));
        out
    }
}

/// Reads a log once for its summary; only the lines a summary needs are parsed.
fn summarize(file: File, modified: SystemTime) -> Option<SessionSummary> {
    let mut lines = BufReader::new(file).lines().map_while(std::io::Result::ok);
    let meta = match serde_json::from_str::<LogLine>(&lines.next()?).ok()? {
        LogLine::Meta(m) => m,
        _ => return None,
    };
    let mut summary = SessionSummary {
        model: meta.model.clone(),
        meta,
        modified,
        title: None,
        preview: String::new(),
        permissions: None,
    };
    for line in lines {
        let wanted = line.starts_with(r#"{"type":"title""#)
            || line.starts_with(r#"{"type":"permissions""#)
            || line.starts_with(r#"{"type":"model""#)
            || (summary.preview.is_empty()
                && line.starts_with(r#"{"type":"item","item":{"type":"user""#));
        if !wanted {
            continue;
        }
        match serde_json::from_str::<LogLine>(&line) {
            Ok(LogLine::Title { title }) => summary.title = Some(title),
            Ok(LogLine::Permissions { permissions }) => summary.permissions = Some(permissions),
            Ok(LogLine::Model { model, .. }) => summary.model = model,
            Ok(LogLine::Item {
                item:
                    crate::model::HistoryItem::User {
                        text,
                        synthetic: false,
                        ..
                    },
            }) => summary.preview = text.trim().chars().take(PREVIEW_CHARS).collect(),
            _ => {}
        }
    }
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HistoryItem;
    use interpreter_protocol::{ApprovalPolicy, Permissions, SandboxMode};

    fn store_with_session(home: &std::path::Path) -> SessionStore {
        let store = SessionStore::new(home);
        let mut log = store
            .create(&SessionMeta {
                id: "s1".into(),
                cwd: "/w".into(),
                created_at: "then".into(),
                provider: "p".into(),
                model: "m".into(),
                harness: "native".into(),
                additional_directories: vec![],
            })
            .unwrap();
        for line in [
            LogLine::Item {
                item: HistoryItem::User {
                    text: "context".into(),
                    images: vec![],
                    synthetic: true,
                },
            },
            LogLine::Item {
                item: HistoryItem::User {
                    text: "fix the bug\nplease".into(),
                    images: vec![],
                    synthetic: false,
                },
            },
            LogLine::Title {
                title: "fix the bug".into(),
            },
            LogLine::Permissions {
                permissions: Permissions {
                    sandbox: SandboxMode::ReadOnly,
                    approval: ApprovalPolicy::Never,
                    ask_commands: false,
                },
            },
        ] {
            log.append(&line).unwrap();
        }
        log.sync().unwrap();
        store
    }

    #[test]
    fn fork_copies_history_under_a_new_header() {
        let home = tempfile::tempdir().unwrap();
        let store = store_with_session(home.path());
        store.fork("s1", "s2").unwrap();
        let copy = store.load("s2").unwrap();
        assert_eq!(store.summary("s2").unwrap().meta.id, "s2");
        assert_eq!(copy.history, store.load("s1").unwrap().history);
        assert_eq!(copy.title.as_deref(), Some("fix the bug"));
        let s = store.summary("s2").unwrap();
        assert_eq!(s.permissions.unwrap().approval, ApprovalPolicy::Never);
        assert_eq!(s.preview, "fix the bug\nplease");
        assert!(
            store.fork("s1", "s2").is_err(),
            "an existing id is never overwritten"
        );
        assert!(store.fork("nope", "s3").is_err());
    }

    #[test]
    fn archive_hides_and_unarchive_restores() {
        let home = tempfile::tempdir().unwrap();
        let store = store_with_session(home.path());
        store.archive("s1").unwrap();
        assert!(!store.exists("s1") && store.is_archived("s1"));
        assert!(store.list(None).is_empty() && store.summaries(false).is_empty());
        assert_eq!(store.summaries(true)[0].meta.id, "s1");
        assert!(store.summary("s1").is_some());
        assert!(store.archive("s1").is_err());
        store.unarchive("s1").unwrap();
        assert!(store.exists("s1") && !store.is_archived("s1"));
        assert!(store.unarchive("s1").is_err());
    }

    #[test]
    fn naming_a_closed_session_is_its_title() {
        let home = tempfile::tempdir().unwrap();
        let store = store_with_session(home.path());
        store.set_title("s1", "Bug hunt").unwrap();
        assert_eq!(store.title("s1").as_deref(), Some("Bug hunt"));
        assert_eq!(store.load("s1").unwrap().title.as_deref(), Some("Bug hunt"));
        assert!(store.set_title("missing", "x").is_err());
    }
}
