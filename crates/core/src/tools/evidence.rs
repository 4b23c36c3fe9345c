//! Evidence a session keeps (little-coder's `EvidenceAdd`/`Get`/`List`): short cited
//! snippets the model saves while it researches and quotes in its answer. Kept in
//! `evidence.json` beside the session's task outputs, so a resumed session has them.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A snippet is cut to this many bytes, as the original caps it.
pub(crate) const MAX_SNIPPET_BYTES: usize = 1024;
/// Entries a session keeps at most; the model is told when it is full.
const MAX_ENTRIES: usize = 500;

/// One saved piece of evidence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Entry {
    pub(crate) id: String,
    pub(crate) source: String,
    pub(crate) note: String,
    pub(crate) snippet: String,
}

/// The session's evidence, in the order it was saved.
pub(crate) struct Evidence {
    path: PathBuf,
    entries: Mutex<Vec<Entry>>,
}

impl Evidence {
    /// The evidence kept in `dir` (empty when there is none or it cannot be read).
    pub(crate) fn new(dir: &Path) -> Self {
        let path = dir.join("evidence.json");
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Evidence {
            path,
            entries: Mutex::new(entries),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Saves an entry and returns it (its snippet cut to [`MAX_SNIPPET_BYTES`]).
    pub(crate) fn add(&self, source: &str, note: &str, snippet: &str) -> Result<Entry, String> {
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES {
            return Err(format!(
                "The session already keeps {MAX_ENTRIES} evidence entries; cite the ones you have."
            ));
        }
        let cut = snippet.floor_char_boundary(MAX_SNIPPET_BYTES);
        let entry = Entry {
            id: format!("E{}", entries.len() + 1),
            source: source.trim().to_string(),
            note: note.split_whitespace().collect::<Vec<_>>().join(" "),
            snippet: snippet[..cut].to_string(),
        };
        entries.push(entry.clone());
        if let Some(dir) = self.path.parent()
            && let Err(e) = crate::tools::background::create_private_dir(dir).and_then(|()| {
                crate::tools::background::write_private(
                    &self.path,
                    &serde_json::to_vec(&*entries).unwrap_or_default(),
                )
            })
        {
            tracing::warn!(
                "could not keep the evidence in {}: {e}",
                self.path.display()
            );
        }
        Ok(entry)
    }

    /// The entry with this id (`E3`, or just `3`).
    pub(crate) fn get(&self, id: &str) -> Option<Entry> {
        let id = id.trim();
        let want = if id.starts_with(['E', 'e']) {
            id[1..].to_string()
        } else {
            id.to_string()
        };
        self.lock().iter().find(|e| e.id[1..] == want).cloned()
    }

    /// Every entry, oldest first.
    pub(crate) fn list(&self) -> Vec<Entry> {
        self.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_numbered_cut_and_kept_for_a_resumed_session() {
        let dir = tempfile::tempdir().unwrap();
        let ev = Evidence::new(dir.path());
        let long = "é".repeat(800);
        let a = ev.add("https://a.test", "first\nnote", &long).unwrap();
        assert_eq!(a.id, "E1");
        assert_eq!(a.note, "first note");
        assert!(a.snippet.len() <= MAX_SNIPPET_BYTES && a.snippet.starts_with('é'));
        ev.add("doc.md", "second", "x").unwrap();
        let again = Evidence::new(dir.path());
        assert_eq!(again.list().len(), 2);
        assert_eq!(again.get("e2").unwrap().source, "doc.md");
        assert_eq!(again.get("2").unwrap().id, "E2");
        assert!(again.get("E9").is_none());
    }
}
