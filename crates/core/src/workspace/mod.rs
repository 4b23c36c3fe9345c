//! The document model every file tool goes through: path confinement to the workspace roots,
//! ropes of what was read and written, and diffs of everything the agent changed.
//!
//! Where text comes from is a [`FileBackend`]: the disk (exec), the ACP client's buffers, or
//! the LSP client's open documents. Tools never touch the file system directly.

pub mod agents_md;
mod backend;
pub mod diff;
mod paths;
pub(crate) mod startup;
pub(crate) mod window;
/// Pure, so its tests run on every platform; used by confinement on Windows.
#[cfg_attr(not(windows), allow(dead_code))]
mod winpath;

/// A relative path with `/` between folders on every platform, as diffs (`git apply`), the
/// model and `@` mentions expect.
pub fn slash_path(rel: &Path) -> String {
    let text = rel.to_string_lossy();
    if cfg!(windows) {
        text.replace('\\', "/")
    } else {
        text.into_owned()
    }
}

pub use backend::{DiskBackend, FileBackend, MAX_READ_BYTES, write_private};

/// Texts that differ from the disk, by path: open editor documents and the agent's unsaved
/// writes (`None`: deleted in this session). Searches see these instead of the disk.
pub type Buffers = std::collections::HashMap<PathBuf, Option<String>>;
pub use paths::{PathError, lexical_normalize};

use interpreter_protocol::{FileChange, FileChangeKind};
use ropey::Rope;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) struct Workspace {
    cwd: PathBuf,
    roots: Vec<PathBuf>,
    backend: Arc<dyn FileBackend>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Last text we saw or wrote, per file. Ropes make snapshots cheap.
    buffers: HashMap<PathBuf, Rope>,
    /// Text before the agent's first change to each file; None if it did not exist.
    originals: BTreeMap<PathBuf, Option<String>>,
    /// Files written or removed since [`Workspace::take_written`] was last called.
    written: std::collections::BTreeSet<PathBuf>,
}

impl Workspace {
    /// `cwd` is the first root; `extra_roots` are additional directories the tools may use.
    pub(crate) fn new(
        cwd: &Path,
        extra_roots: &[PathBuf],
        backend: Arc<dyn FileBackend>,
    ) -> io::Result<Workspace> {
        let cwd = std::fs::canonicalize(cwd)?;
        let mut roots = vec![cwd.clone()];
        for r in extra_roots {
            let abs = if r.is_absolute() {
                r.clone()
            } else {
                cwd.join(r)
            };
            match std::fs::canonicalize(&abs) {
                Ok(c) => roots.push(c),
                Err(e) => tracing::warn!("ignoring additional directory {}: {e}", abs.display()),
            }
        }
        Ok(Workspace {
            cwd,
            roots,
            backend,
            state: Mutex::new(State::default()),
        })
    }

    /// The same workspace working in `cwd` instead (a worktree, or back from one): `cwd` is
    /// the first root, the additional roots stay, and what was read and written so far moves
    /// over (undo and the turn's diff still know it).
    pub(crate) fn relocated(&self, cwd: &Path) -> io::Result<Workspace> {
        let moved = Workspace::new(cwd, &self.roots[1..], self.backend.clone())?;
        let state = std::mem::take(&mut *self.state.lock().unwrap_or_else(|e| e.into_inner()));
        *moved.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
        Ok(moved)
    }

    pub(crate) fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub(crate) fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Resolves a path the model gave (relative to `base` or the cwd) to a real path inside
    /// the roots, following symlinks. Anything else is refused.
    pub(crate) fn resolve(&self, raw: &str) -> Result<PathBuf, PathError> {
        self.resolve_from(&self.cwd, raw)
    }

    /// A tool's optional working folder: the session's cwd when absent or empty.
    pub(crate) fn resolve_dir(&self, raw: Option<&str>) -> Result<PathBuf, PathError> {
        match raw.filter(|r| !r.is_empty()) {
            Some(r) => self.resolve(r),
            None => Ok(self.cwd.clone()),
        }
    }

    pub(crate) fn resolve_from(&self, base: &Path, raw: &str) -> Result<PathBuf, PathError> {
        paths::confine(&self.roots, base, raw)
    }

    /// A path for display and diffs: relative to the cwd when inside it.
    pub(crate) fn display_path(&self, p: &Path) -> String {
        match p.strip_prefix(&self.cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => slash_path(rel),
            Ok(_) => ".".into(),
            Err(_) => p.display().to_string(),
        }
    }

    /// Of `paths` (relative to the cwd), those an editor holds with unsaved changes: its
    /// buffer's text differs from the disk's. Empty when reads do not go through an editor.
    pub(crate) async fn unsaved(&self, paths: &[String]) -> HashSet<String> {
        let mut out = HashSet::new();
        if !self.backend.reads_editor_buffers() {
            return out;
        }
        for rel in paths {
            let abs = self.cwd.join(rel);
            // Only text on disk can differ from a buffer; a missing or binary file is left to
            // the checkpoint's own comparison.
            let Ok(disk) = std::fs::read(&abs).map(String::from_utf8) else {
                continue;
            };
            if let (Ok(disk), Ok(buffer)) = (disk, self.backend.read(&abs).await)
                && buffer != disk
            {
                out.insert(rel.clone());
            }
        }
        out
    }

    pub(crate) async fn read_text(&self, path: &Path) -> io::Result<String> {
        let text = self.backend.read(path).await?;
        self.lock()
            .buffers
            .insert(path.to_path_buf(), Rope::from_str(&text));
        Ok(text)
    }

    /// Lines `offset..offset+limit` of a file (see [`window`]). A file on disk over
    /// [`MAX_READ_BYTES`] is streamed from the disk rather than read whole (an editor buffer of
    /// that size, if any, is not consulted); lines are cut at `max_line_bytes` there.
    pub(crate) async fn read_lines(
        &self,
        path: &Path,
        offset: i64,
        limit: usize,
        max_line_bytes: usize,
    ) -> io::Result<window::LineWindow> {
        let big = tokio::fs::metadata(path)
            .await
            .is_ok_and(|m| m.is_file() && m.len() > MAX_READ_BYTES);
        if !big {
            let text = self.read_text(path).await?;
            return Ok(window::from_text(&text, offset, limit));
        }
        let path = path.to_path_buf();
        tokio::task::spawn_blocking(move || window::stream(&path, offset, limit, max_line_bytes))
            .await
            .map_err(io::Error::other)?
    }

    /// Whether the agent read or wrote `path` in this session (Claude Code's Edit asks for a
    /// Read first).
    pub(crate) fn has_seen(&self, path: &Path) -> bool {
        self.lock().buffers.contains_key(path)
    }

    /// The text the agent last read or wrote for `path` in this session.
    pub(crate) fn seen_text(&self, path: &Path) -> Option<String> {
        self.lock().buffers.get(path).map(Rope::to_string)
    }

    /// What searches must see instead of the disk (see [`FileBackend::buffers`]).
    pub(crate) fn buffers(&self) -> Buffers {
        self.backend.buffers()
    }

    /// Reads a file that may not exist (None), for callers that create files.
    pub(crate) async fn read_optional(&self, path: &Path) -> io::Result<Option<String>> {
        match self.read_text(path).await {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub(crate) async fn write_text(&self, path: &Path, text: &str) -> io::Result<()> {
        self.remember_original(path).await?;
        self.backend.write(path, text).await?;
        let mut st = self.lock();
        st.buffers.insert(path.to_path_buf(), Rope::from_str(text));
        st.written.insert(path.to_path_buf());
        Ok(())
    }

    pub(crate) async fn remove(&self, path: &Path) -> io::Result<()> {
        self.remember_original(path).await?;
        self.backend.remove(path).await?;
        let mut st = self.lock();
        st.buffers.remove(path);
        st.written.insert(path.to_path_buf());
        Ok(())
    }

    async fn remember_original(&self, path: &Path) -> io::Result<()> {
        if self.lock().originals.contains_key(path) {
            return Ok(());
        }
        let buffered = self.lock().buffers.get(path).map(|r| r.to_string());
        let before = match buffered {
            Some(text) => Some(text),
            None => match self.backend.read(path).await {
                Ok(t) => Some(t),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            },
        };
        self.lock()
            .originals
            .entry(path.to_path_buf())
            .or_insert(before);
        Ok(())
    }

    /// The files under the cwd written or removed since the last call, relative to the cwd
    /// and `/`-separated (a turn's own writes, for its checkpoint).
    pub(crate) fn take_written(&self) -> Vec<String> {
        let written = std::mem::take(&mut self.lock().written);
        written
            .iter()
            .filter_map(|p| p.strip_prefix(&self.cwd).ok())
            .filter(|rel| !rel.as_os_str().is_empty())
            .map(slash_path)
            .collect()
    }

    /// Forgets what the agent read (after an undo changed files under it): tools that want
    /// a file read first ask for a new read.
    pub(crate) fn forget_reads(&self) {
        self.lock().buffers.clear();
    }

    /// Everything the agent changed since the workspace was created, as before/after pairs.
    pub(crate) fn changes(&self) -> Vec<FileChange> {
        let st = self.lock();
        st.originals
            .iter()
            .filter_map(|(path, old)| {
                let new = st.buffers.get(path).map(|r| r.to_string());
                let kind = match (old, &new) {
                    (None, Some(_)) => FileChangeKind::Add,
                    (Some(_), None) => FileChangeKind::Delete,
                    (Some(o), Some(n)) if o != n => FileChangeKind::Update,
                    _ => return None,
                };
                Some(FileChange {
                    path: path.clone(),
                    kind,
                    move_path: None,
                    old_text: old.clone(),
                    new_text: new,
                })
            })
            .collect()
    }

    /// A `git apply`-able unified diff of every change, paths relative to the cwd.
    pub(crate) fn unified_diff(&self) -> String {
        self.changes()
            .iter()
            .map(|c| {
                diff::git_unified_diff(
                    &self.display_path(&c.path),
                    c.old_text.as_deref(),
                    c.new_text.as_deref(),
                )
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data; keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tracks_originals_and_diffs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let ws = Workspace::new(dir.path(), &[], Arc::new(DiskBackend)).unwrap();
        let a = ws.resolve("a.txt").unwrap();
        ws.write_text(&a, "one\n2\n").await.unwrap();
        ws.write_text(&a, "one\nTWO\n").await.unwrap();
        let b = ws.resolve("sub/b.txt").unwrap();
        ws.write_text(&b, "new\n").await.unwrap();
        let changes = ws.changes();
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[0].old_text.as_deref(), Some("one\ntwo\n"));
        assert_eq!(changes[0].new_text.as_deref(), Some("one\nTWO\n"));
        assert_eq!(changes[1].kind, FileChangeKind::Add);
        let d = ws.unified_diff();
        assert!(d.contains("diff --git a/a.txt b/a.txt"), "{d}");
        assert!(d.contains("-two\n+TWO\n"), "{d}");
        assert!(
            d.contains("new file mode 100644\n--- /dev/null\n+++ b/sub/b.txt"),
            "{d}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/b.txt")).unwrap(),
            "new\n"
        );
    }

    #[tokio::test]
    async fn reverting_a_change_drops_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x\n").unwrap();
        let ws = Workspace::new(dir.path(), &[], Arc::new(DiskBackend)).unwrap();
        let a = ws.resolve("a.txt").unwrap();
        ws.write_text(&a, "y\n").await.unwrap();
        ws.write_text(&a, "x\n").await.unwrap();
        assert!(ws.changes().is_empty());
    }
}
