//! The session facade: what a face may do with sessions, stored or running. It offers the
//! verbs of a thread manager (open, list, load, fork, archive, unarchive, rename, delete)
//! over one home's store. The store itself (`store/`) is private to the core, so a face that
//! wants a new verb adds it here, once, instead of reading or writing session logs itself.

use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::agent::{self, SessionError, SessionHandle, SessionOptions, SessionStart};
use crate::store::SessionStore;

pub use crate::store::{SessionBusy, SessionMeta, SessionSummary};

/// The sessions stored under one home (`<home>/sessions`).
pub struct Sessions {
    store: SessionStore,
}

impl Sessions {
    /// The sessions of `home` (the `OPENINTERPRETER_HOME` of a loaded config).
    pub fn new(home: &Path) -> Sessions {
        Sessions {
            store: SessionStore::new(home),
        }
    }

    /// Opens a session, new or stored (`start`), running on its own task. Loading a stored
    /// session makes this process its only writer.
    pub async fn open(
        options: SessionOptions,
        start: SessionStart,
    ) -> Result<SessionHandle, SessionError> {
        agent::spawn(options, start).await
    }

    /// The live sessions, newest first; with `cwd`, only those started there.
    pub fn list(&self, cwd: Option<&Path>) -> Vec<(SessionMeta, SystemTime)> {
        self.store.list(cwd)
    }

    /// What a session list shows of each live (or, with `archived`, archived) session.
    pub fn summaries(&self, archived: bool) -> Vec<SessionSummary> {
        self.store.summaries(archived)
    }

    /// One session's summary, if it is live.
    pub fn summary(&self, id: &str) -> Option<SessionSummary> {
        self.store.summary(id)
    }

    /// Whether `id` is a live (not archived) stored session.
    pub fn exists(&self, id: &str) -> bool {
        self.store.exists(id)
    }

    /// Whether `id` is an archived session.
    pub fn is_archived(&self, id: &str) -> bool {
        self.store.is_archived(id)
    }

    /// The latest title of a session.
    pub fn title(&self, id: &str) -> Option<String> {
        self.store.title(id)
    }

    /// The size of a session's log in bytes.
    pub fn size(&self, id: &str) -> Option<u64> {
        self.store.size(id)
    }

    /// The log file of a live session (clients show it as the thread's path).
    pub fn log_path(&self, id: &str) -> Option<PathBuf> {
        self.store.log_path(id)
    }

    /// The log file `query` names: a path to one, a session's id, or a prefix of exactly one
    /// live session's id. The error says which ids a prefix matches.
    pub fn find(&self, query: &str) -> Result<PathBuf> {
        self.store.find(query)
    }

    /// The session logged at `log` as an export shows it: prompts, answers, described tool
    /// calls with their diffs, and tokens per turn, secrets redacted.
    pub fn export(&self, log: &Path) -> Result<interpreter_protocol::export::SessionExport> {
        crate::store::read_export(log)
    }

    /// Copies session `from` to a new session `to`: the same history, settings, title and
    /// policy. Open `to` to continue it.
    pub fn fork(&self, from: &str, to: &str) -> Result<()> {
        self.store.fork(from, to)
    }

    /// Moves a session out of the lists; `unarchive` brings it back.
    pub fn archive(&self, id: &str) -> Result<()> {
        self.store.archive(id)
    }

    /// Brings an archived session back.
    pub fn unarchive(&self, id: &str) -> Result<()> {
        self.store.unarchive(id)
    }

    /// Names a session that is not open (an open one takes `Op::SetTitle`).
    pub fn rename(&self, id: &str, title: &str) -> Result<()> {
        self.store.set_title(id, title)
    }

    /// Deletes a stored session's log and the files beside it.
    pub fn delete(&self, id: &str) -> Result<()> {
        self.store.delete(id)
    }
}

/// Names the face in the lock files of the sessions this process writes, so a second writer
/// is told who holds a session ("open in acp, pid 4242").
pub fn set_face(face: &'static str) {
    crate::store::set_face(face)
}
