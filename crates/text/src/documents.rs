//! Open editor documents: ropes keyed by URI, with version, language id and line ending.
//!
//! This is the truth while a document is open in the editor: the agent's file tools read it
//! before the disk (the LSP face's overlay). Every operation is synchronous and short, so a
//! front end can apply `didChange` notifications in arrival order without awaiting. Slow work
//! takes a [`DocumentSnapshot`] (an O(1) rope clone), never the lock.

use ropey::Rope;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use super::positions::{PositionEncoding, Range, position_to_char};

/// A document's dominant line terminator; agent text is normalised to it before edits are
/// computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineEnding {
    #[default]
    Lf,
    CrLf,
    Cr,
}

impl LineEnding {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::CrLf => "\r\n",
            LineEnding::Cr => "\r",
        }
    }

    /// The most common terminator among the first thousand (LF when there is none).
    pub fn detect(text: &str) -> LineEnding {
        let (mut lf, mut crlf, mut cr) = (0usize, 0usize, 0usize);
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() && lf + crlf + cr < 1000 {
            match bytes[i] {
                b'\n' => lf += 1,
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                    crlf += 1;
                    i += 1;
                }
                b'\r' => cr += 1,
                _ => {}
            }
            i += 1;
        }
        if crlf > lf && crlf >= cr {
            LineEnding::CrLf
        } else if cr > lf && cr > crlf {
            LineEnding::Cr
        } else {
            LineEnding::Lf
        }
    }
}

/// One `contentChanges` entry: a range in the text produced by the previous entry, or the
/// whole text when `range` is None.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChange {
    /// The replaced range; None replaces the whole text.
    pub range: Option<Range>,
    /// The new text for that range.
    pub text: String,
}

/// An open editor buffer: its text as a rope, at the client's version.
#[derive(Debug, Clone)]
pub struct Document {
    pub(crate) uri: String,
    /// The file behind a `file:` URI (canonical), if any.
    pub path: Option<PathBuf>,
    pub(crate) language_id: String,
    pub(crate) version: i32,
    pub(crate) line_ending: LineEnding,
    pub(crate) rope: Rope,
}

impl Document {
    /// A document as `didOpen` gives it.
    pub fn new(
        uri: String,
        path: Option<PathBuf>,
        language_id: String,
        version: i32,
        text: &str,
    ) -> Document {
        Document {
            uri,
            path,
            language_id,
            version,
            line_ending: LineEnding::detect(text),
            rope: Rope::from_str(text),
        }
    }

    /// Applies `changes` in order, each relative to the result of the previous one, then
    /// takes `version`.
    pub fn apply_changes(&mut self, version: i32, changes: &[TextChange], enc: PositionEncoding) {
        for change in changes {
            match change.range {
                None => {
                    self.rope = Rope::from_str(&change.text);
                    self.line_ending = LineEnding::detect(&change.text);
                }
                Some(range) => {
                    let a = position_to_char(&self.rope, range.start, enc);
                    let b = position_to_char(&self.rope, range.end, enc);
                    let (start, end) = if a <= b { (a, b) } else { (b, a) };
                    if end > start {
                        self.rope.remove(start..end);
                    }
                    if !change.text.is_empty() {
                        self.rope.insert(start, &change.text);
                    }
                }
            }
        }
        self.version = version;
    }

    /// A frozen copy at the current version.
    pub fn snapshot(&self) -> DocumentSnapshot {
        DocumentSnapshot {
            uri: self.uri.clone(),
            language_id: self.language_id.clone(),
            version: self.version,
            line_ending: self.line_ending,
            rope: self.rope.clone(),
        }
    }
}

/// A frozen copy of a document: cheap to take (the rope is shared), safe to hand to slow work.
#[derive(Debug, Clone)]
pub struct DocumentSnapshot {
    pub uri: String,
    pub language_id: String,
    pub version: i32,
    pub line_ending: LineEnding,
    pub rope: Rope,
}

/// Why a change could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// The URI was never opened (or was closed).
    #[error("document {0} is not open")]
    NotOpen(String),
}

/// The open documents of one client connection.
#[derive(Default)]
pub struct DocumentStore {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    docs: HashMap<String, Document>,
    by_path: HashMap<PathBuf, String>,
}

impl DocumentStore {
    /// No documents yet.
    pub fn new() -> DocumentStore {
        DocumentStore::default()
    }

    /// Opens (or reopens) a document.
    pub fn open(&self, doc: Document) {
        let mut inner = self.lock();
        if let Some(old) = inner.docs.remove(&doc.uri)
            && let Some(p) = old.path
        {
            inner.by_path.remove(&p);
        }
        if let Some(p) = &doc.path {
            inner.by_path.insert(p.clone(), doc.uri.clone());
        }
        inner.docs.insert(doc.uri.clone(), doc);
    }

    /// Applies one `didChange` notification.
    pub fn change(
        &self,
        uri: &str,
        version: i32,
        changes: &[TextChange],
        enc: PositionEncoding,
    ) -> Result<(), DocumentError> {
        let mut inner = self.lock();
        let doc = inner
            .docs
            .get_mut(uri)
            .ok_or_else(|| DocumentError::NotOpen(uri.to_string()))?;
        if version <= doc.version {
            tracing::debug!(
                "{uri}: version {version} after {}; applying anyway",
                doc.version
            );
        }
        doc.apply_changes(version, changes, enc);
        Ok(())
    }

    /// Forgets a document (`didClose`).
    pub fn close(&self, uri: &str) {
        let mut inner = self.lock();
        if let Some(doc) = inner.docs.remove(uri)
            && let Some(p) = doc.path
        {
            inner.by_path.remove(&p);
        }
    }

    /// A frozen copy of an open document.
    pub fn snapshot(&self, uri: &str) -> Option<DocumentSnapshot> {
        self.lock().docs.get(uri).map(Document::snapshot)
    }

    /// The open document behind a file path, if any.
    pub fn snapshot_path(&self, path: &Path) -> Option<DocumentSnapshot> {
        let inner = self.lock();
        let uri = inner.by_path.get(path)?;
        inner.docs.get(uri).map(Document::snapshot)
    }

    /// Every open document that has a file path, with its text (rope clones are O(1)).
    pub fn open_files(&self) -> Vec<(PathBuf, ropey::Rope)> {
        let inner = self.lock();
        inner
            .docs
            .values()
            .filter_map(|d| Some((d.path.clone()?, d.rope.clone())))
            .collect()
    }

    /// The client's version of an open document.
    pub fn version(&self, uri: &str) -> Option<i32> {
        self.lock().docs.get(uri).map(|d| d.version)
    }

    /// How many documents are open.
    pub fn len(&self) -> usize {
        self.lock().docs.len()
    }

    /// No document is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain data; keep serving.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::positions::Position;

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextChange {
        TextChange {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            text: text.into(),
        }
    }

    fn store_with(text: &str) -> DocumentStore {
        let store = DocumentStore::new();
        store.open(Document::new(
            "file:///a.rs".into(),
            Some(PathBuf::from("/a.rs")),
            "rust".into(),
            1,
            text,
        ));
        store
    }

    fn text(store: &DocumentStore) -> String {
        store.snapshot("file:///a.rs").unwrap().rope.to_string()
    }

    #[test]
    fn sequential_changes_are_relative_to_the_previous_result() {
        let store = store_with("hello world\n");
        // One notification, three events: each range refers to the text after the last one.
        store
            .change(
                "file:///a.rs",
                2,
                &[
                    change(0, 0, 0, 5, "goodbye"), // "goodbye world\n"
                    change(0, 8, 0, 13, "moon"),   // "goodbye moon\n"
                    change(1, 0, 1, 0, "x"),       // append on the last (empty) line
                ],
                PositionEncoding::Utf16,
            )
            .unwrap();
        assert_eq!(text(&store), "goodbye moon\nx");
        assert_eq!(store.version("file:///a.rs"), Some(2));
    }

    #[test]
    fn typing_sequence_with_astral_chars_and_crlf() {
        let store = store_with("a😀b\r\nc");
        let enc = PositionEncoding::Utf16;
        // Type "xy" after the emoji (UTF-16 column 3), one keystroke per notification.
        store
            .change("file:///a.rs", 2, &[change(0, 3, 0, 3, "x")], enc)
            .unwrap();
        store
            .change("file:///a.rs", 3, &[change(0, 4, 0, 4, "y")], enc)
            .unwrap();
        assert_eq!(text(&store), "a😀xyb\r\nc");
        // Backspace the emoji (its two code units).
        store
            .change("file:///a.rs", 4, &[change(0, 1, 0, 3, "")], enc)
            .unwrap();
        assert_eq!(text(&store), "axyb\r\nc");
        // Join the lines: the range from line end to the next line's start removes "\r\n".
        store
            .change("file:///a.rs", 5, &[change(0, 4, 1, 0, " ")], enc)
            .unwrap();
        assert_eq!(text(&store), "axyb c");
        // A range past the line end clamps; a line past the end appends.
        store
            .change("file:///a.rs", 6, &[change(0, 99, 7, 0, "!\n")], enc)
            .unwrap();
        assert_eq!(text(&store), "axyb c!\n");
        // A reversed range is treated as its normal form.
        store
            .change("file:///a.rs", 7, &[change(0, 3, 0, 1, "")], enc)
            .unwrap();
        assert_eq!(text(&store), "ab c!\n");
    }

    #[test]
    fn utf8_and_utf32_columns() {
        let store = store_with("é😀z");
        store
            .change(
                "file:///a.rs",
                2,
                &[change(0, 6, 0, 6, "_")],
                PositionEncoding::Utf8,
            )
            .unwrap();
        assert_eq!(text(&store), "é😀_z");
        store
            .change(
                "file:///a.rs",
                3,
                &[change(0, 1, 0, 2, "")],
                PositionEncoding::Utf32,
            )
            .unwrap();
        assert_eq!(text(&store), "é_z");
    }

    #[test]
    fn full_sync_replaces_and_redetects_line_endings() {
        let store = store_with("a\nb\n");
        assert_eq!(
            store.snapshot("file:///a.rs").unwrap().line_ending,
            LineEnding::Lf
        );
        store
            .change(
                "file:///a.rs",
                2,
                &[TextChange {
                    range: None,
                    text: "x\r\ny\r\n".into(),
                }],
                PositionEncoding::Utf16,
            )
            .unwrap();
        let snap = store.snapshot_path(Path::new("/a.rs")).unwrap();
        assert_eq!(snap.rope.to_string(), "x\r\ny\r\n");
        assert_eq!(snap.line_ending, LineEnding::CrLf);
        assert_eq!(snap.version, 2);
    }

    #[test]
    fn close_forgets_uri_and_path() {
        let store = store_with("a");
        let snap = store.snapshot("file:///a.rs").unwrap();
        store.close("file:///a.rs");
        assert!(store.snapshot_path(Path::new("/a.rs")).is_none());
        assert!(store.is_empty());
        assert!(matches!(
            store.change("file:///a.rs", 9, &[], PositionEncoding::Utf16),
            Err(DocumentError::NotOpen(_))
        ));
        // Snapshots taken before stay valid.
        assert_eq!(snap.rope.to_string(), "a");
    }

    #[test]
    fn line_ending_detection() {
        assert_eq!(LineEnding::detect("a\r\nb\r\nc\n"), LineEnding::CrLf);
        assert_eq!(LineEnding::detect("a\nb"), LineEnding::Lf);
        assert_eq!(LineEnding::detect("a\rb\r"), LineEnding::Cr);
        assert_eq!(LineEnding::detect("no breaks"), LineEnding::Lf);
    }
}
