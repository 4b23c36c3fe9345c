//! A [`FileBackend`] for editor sessions: reads see open documents first and the disk
//! second; writes and deletes land in an in-memory overlay and never touch the disk.
//!
//! After a turn the front end takes [`OverlayBackend::changes`]: per file, the text the agent
//! based its change on (a versioned document snapshot, or what the disk held) and the text it
//! produced. The front end turns those into editor edits.

use futures::future::BoxFuture;
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use interpreter_core::workspace::{Buffers, DiskBackend, FileBackend};
use interpreter_text::documents::{DocumentSnapshot, DocumentStore};

/// What a file held when the agent last read it before changing it.
#[derive(Debug, Clone)]
pub(crate) enum BaseText {
    /// An open document, at the version the agent read.
    Document(DocumentSnapshot),
    /// A file that was not open, as read from disk.
    Disk(String),
    /// The file did not exist.
    Missing,
}

/// One file the agent changed.
#[derive(Debug, Clone)]
pub(crate) struct OverlayChange {
    pub path: PathBuf,
    pub base: BaseText,
    /// The agent's text; None when it deleted the file.
    pub new_text: Option<String>,
}

pub(crate) struct OverlayBackend {
    documents: Arc<DocumentStore>,
    disk: DiskBackend,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The agent's writes: Some(text), or None for a deletion.
    files: BTreeMap<PathBuf, Option<String>>,
    /// The base of each file, refreshed by every read until the first write.
    bases: HashMap<PathBuf, BaseText>,
}

impl OverlayBackend {
    pub(crate) fn new(documents: Arc<DocumentStore>) -> OverlayBackend {
        OverlayBackend {
            documents,
            disk: DiskBackend,
            state: Mutex::new(State::default()),
        }
    }

    /// Every file whose overlay text differs from its base, in path order.
    pub(crate) fn changes(&self) -> Vec<OverlayChange> {
        let st = self.lock();
        st.files
            .iter()
            .filter_map(|(path, new_text)| {
                let base = st.bases.get(path).cloned().unwrap_or(BaseText::Missing);
                let unchanged = match (&base, new_text) {
                    (BaseText::Missing, None) => true,
                    (BaseText::Disk(old), Some(new)) => old == new,
                    (BaseText::Document(s), Some(new)) => s.rope == new.as_str(),
                    _ => false,
                };
                (!unchanged).then(|| OverlayChange {
                    path: path.clone(),
                    base,
                    new_text: new_text.clone(),
                })
            })
            .collect()
    }

    /// The current text of `path` outside the overlay, recording it as the base unless the
    /// agent already wrote the file.
    async fn read_through(&self, path: &Path) -> io::Result<String> {
        if let Some(snap) = self.documents.snapshot_path(path) {
            let text = snap.rope.to_string();
            self.record_base(path, BaseText::Document(snap));
            return Ok(text);
        }
        match self.disk.read(path).await {
            Ok(text) => {
                self.record_base(path, BaseText::Disk(text.clone()));
                Ok(text)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.record_base(path, BaseText::Missing);
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    fn record_base(&self, path: &Path, base: BaseText) {
        let mut st = self.lock();
        if !st.files.contains_key(path) {
            st.bases.insert(path.to_path_buf(), base);
        }
    }

    async fn ensure_base(&self, path: &Path) -> io::Result<()> {
        if self.lock().bases.contains_key(path) {
            return Ok(());
        }
        match self.read_through(path).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} was deleted in this session", path.display()),
    )
}

impl FileBackend for OverlayBackend {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<String>> {
        Box::pin(async move {
            let written = self.lock().files.get(path).cloned();
            match written {
                Some(Some(text)) => Ok(text),
                Some(None) => Err(not_found(path)),
                None => self.read_through(path).await,
            }
        })
    }

    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            self.ensure_base(path).await?;
            self.lock()
                .files
                .insert(path.to_path_buf(), Some(text.to_string()));
            Ok(())
        })
    }

    fn buffers(&self) -> Buffers {
        let mut out: Buffers = self
            .documents
            .open_files()
            .into_iter()
            .map(|(path, rope)| (path, Some(rope.to_string())))
            .collect();
        for (path, text) in &self.lock().files {
            out.insert(path.clone(), text.clone());
        }
        out
    }

    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            self.ensure_base(path).await?;
            let mut st = self.lock();
            let exists = match st.files.get(path) {
                Some(entry) => entry.is_some(),
                None => !matches!(st.bases.get(path), Some(BaseText::Missing) | None),
            };
            if !exists {
                return Err(not_found(path));
            }
            st.files.insert(path.to_path_buf(), None);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_text::documents::Document;

    #[tokio::test]
    async fn buffers_before_disk_and_writes_stay_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("open.py"), "on disk\n").unwrap();
        std::fs::write(root.join("closed.py"), "closed\n").unwrap();
        let docs = Arc::new(DocumentStore::new());
        docs.open(Document::new(
            "file:///open.py".into(),
            Some(root.join("open.py")),
            "python".into(),
            7,
            "unsaved buffer\n",
        ));
        let overlay = Arc::new(OverlayBackend::new(docs.clone()));
        let ws = overlay.clone();

        let open = root.join("open.py");
        assert_eq!(ws.read(&open).await.unwrap(), "unsaved buffer\n");
        ws.write(&open, "agent text\n").await.unwrap();
        assert_eq!(ws.read(&open).await.unwrap(), "agent text\n");
        let closed = root.join("closed.py");
        ws.write(&closed, "closed, edited\n").await.unwrap();
        let new = root.join("new.py");
        ws.write(&new, "fresh\n").await.unwrap();

        // Nothing reached the disk.
        assert_eq!(
            std::fs::read_to_string(root.join("open.py")).unwrap(),
            "on disk\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("closed.py")).unwrap(),
            "closed\n"
        );
        assert!(!root.join("new.py").exists());

        // Searches see the same texts: writes over open documents over the disk.
        let other = root.join("other.py");
        docs.open(Document::new(
            "file:///other.py".into(),
            Some(other.clone()),
            "python".into(),
            1,
            "open, never read\n",
        ));
        ws.remove(&closed).await.unwrap();
        let buffers = ws.buffers();
        assert_eq!(buffers[&open].as_deref(), Some("agent text\n"));
        assert_eq!(buffers[&other].as_deref(), Some("open, never read\n"));
        assert_eq!(buffers[&new].as_deref(), Some("fresh\n"));
        assert_eq!(buffers[&closed], None);
        ws.write(&closed, "closed, edited\n").await.unwrap();

        let changes = overlay.changes();
        assert_eq!(changes.len(), 3);
        let by = |p: &Path| changes.iter().find(|c| c.path == p).unwrap();
        match &by(&open).base {
            BaseText::Document(s) => {
                assert_eq!(s.version, 7);
                assert_eq!(s.rope.to_string(), "unsaved buffer\n");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&by(&closed).base, BaseText::Disk(t) if t == "closed\n"));
        assert!(matches!(by(&new).base, BaseText::Missing));
        assert_eq!(by(&new).new_text.as_deref(), Some("fresh\n"));
    }

    #[tokio::test]
    async fn deletes_and_reverts() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        let overlay = Arc::new(OverlayBackend::new(Arc::new(DocumentStore::new())));
        let ws = overlay.clone();
        let a = root.join("a.txt");
        ws.remove(&a).await.unwrap();
        assert!(root.join("a.txt").exists());
        assert_eq!(
            ws.read(&a).await.unwrap_err().kind(),
            io::ErrorKind::NotFound,
            "a deleted file reads as missing"
        );
        assert!(overlay.changes()[0].new_text.is_none());
        // Writing the original text back is no change at all.
        ws.write(&a, "a\n").await.unwrap();
        assert!(overlay.changes().is_empty());
        let missing = root.join("missing.txt");
        assert!(ws.remove(&missing).await.is_err());
    }
}
