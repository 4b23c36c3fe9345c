//! Conversions between LSP types and the workspace's own (positions, edits, paths). The only
//! place where `ls_types` meets `workspace::`.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use tower_lsp_server::ls_types as lsp;

use interpreter_text::documents::TextChange;
use interpreter_text::edits::TextEdit;
use interpreter_text::positions::{Position, PositionEncoding, Range};

pub(super) fn position(p: lsp::Position) -> Position {
    Position::new(p.line, p.character)
}

pub(super) fn to_lsp_position(p: Position) -> lsp::Position {
    lsp::Position::new(p.line, p.character)
}

pub(super) fn range(r: lsp::Range) -> Range {
    Range::new(position(r.start), position(r.end))
}

pub(super) fn to_lsp_range(r: Range) -> lsp::Range {
    lsp::Range::new(to_lsp_position(r.start), to_lsp_position(r.end))
}

pub(super) fn text_change(c: lsp::TextDocumentContentChangeEvent) -> TextChange {
    TextChange {
        range: c.range.map(range),
        text: c.text,
    }
}

pub(super) fn to_lsp_edit(e: TextEdit) -> lsp::TextEdit {
    lsp::TextEdit {
        range: to_lsp_range(e.range),
        new_text: e.new_text,
    }
}

pub(super) fn to_lsp_encoding(enc: PositionEncoding) -> lsp::PositionEncodingKind {
    match enc {
        PositionEncoding::Utf8 => lsp::PositionEncodingKind::UTF8,
        PositionEncoding::Utf16 => lsp::PositionEncodingKind::UTF16,
        PositionEncoding::Utf32 => lsp::PositionEncodingKind::UTF32,
    }
}

/// Picks the position encoding: the user's preference when the client offers it, else
/// UTF-16 (every client supports it, and a companion server that shares buffers with other
/// servers should not force a second encoding on them), else the client's first choice we
/// know.
pub(super) fn negotiate_encoding(
    offered: Option<&[lsp::PositionEncodingKind]>,
    preferred: Option<PositionEncoding>,
) -> PositionEncoding {
    let Some(offered) = offered.filter(|o| !o.is_empty()) else {
        return PositionEncoding::Utf16;
    };
    let known: Vec<PositionEncoding> = offered
        .iter()
        .filter_map(|k| PositionEncoding::parse(k.as_str()))
        .collect();
    if let Some(p) = preferred.filter(|p| known.contains(p)) {
        return p;
    }
    if known.contains(&PositionEncoding::Utf16) || known.is_empty() {
        return PositionEncoding::Utf16;
    }
    known[0]
}

/// The file behind a `file:` URI, made canonical (symlinks resolved) so it matches the
/// paths the workspace tools produce. The file itself need not exist.
pub(super) fn uri_to_path(uri: &lsp::Uri) -> Option<PathBuf> {
    if uri.scheme().as_str() != "file" {
        return None;
    }
    let p = uri.to_file_path()?.into_owned();
    if !p.is_absolute() {
        return None;
    }
    Some(canonical(&p))
}

/// Canonicalizes the longest existing prefix of `p` (I/O: reads the file system).
pub(super) fn canonical(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => canonical(parent).join(name),
        _ => p.to_path_buf(),
    }
}

pub(super) fn path_to_uri(path: &Path) -> Option<lsp::Uri> {
    lsp::Uri::from_file_path(path)
}

pub(super) fn parse_uri(s: &str) -> Option<lsp::Uri> {
    lsp::Uri::from_str(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_negotiation() {
        let k = |s: &'static str| lsp::PositionEncodingKind::new(s);
        // Neovim offers utf-8 first; we stay on utf-16 unless asked.
        let nvim = [k("utf-8"), k("utf-16"), k("utf-32")];
        assert_eq!(
            negotiate_encoding(Some(&nvim), None),
            PositionEncoding::Utf16
        );
        assert_eq!(
            negotiate_encoding(Some(&nvim), Some(PositionEncoding::Utf8)),
            PositionEncoding::Utf8
        );
        assert_eq!(
            negotiate_encoding(Some(&nvim), Some(PositionEncoding::Utf32)),
            PositionEncoding::Utf32
        );
        assert_eq!(
            negotiate_encoding(None, Some(PositionEncoding::Utf8)),
            PositionEncoding::Utf16
        );
        assert_eq!(
            negotiate_encoding(Some(&[k("utf-32")]), None),
            PositionEncoding::Utf32
        );
        assert_eq!(
            negotiate_encoding(Some(&[k("utf-7")]), None),
            PositionEncoding::Utf16
        );
    }

    #[test]
    fn file_uris_to_canonical_paths() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(real.join("a b.rs"), "").unwrap();
        let uri = path_to_uri(&real.join("a b.rs")).unwrap();
        assert!(uri.as_str().contains("a%20b.rs"), "{}", uri.as_str());
        assert_eq!(uri_to_path(&uri).unwrap(), real.join("a b.rs"));
        // A file that does not exist yet keeps its name under the canonical folder.
        let uri = path_to_uri(&real.join("new/x.rs")).unwrap();
        assert_eq!(uri_to_path(&uri).unwrap(), real.join("new/x.rs"));
        assert_eq!(
            uri_to_path(&parse_uri("untitled:Untitled-1").unwrap()),
            None
        );
    }
}
