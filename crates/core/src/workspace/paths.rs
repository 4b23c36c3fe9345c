//! Path confinement: every path a tool touches must resolve, symlinks followed, inside a root.

use std::path::{Component, Path, PathBuf};

/// Why a path was refused. The text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// A NUL byte, which no file system path may hold.
    #[error("path `{0}` contains a NUL byte")]
    Nul(String),
    /// An empty path.
    #[error("path is empty")]
    Empty,
    /// Something that makes a path mean other than it shows: a look-alike or control
    /// character, a backslash, an unexpanded `~`.
    #[error("path `{raw}` is refused: it contains {what}")]
    Suspicious {
        /// As the model wrote it.
        raw: String,
        /// What was found in it.
        what: String,
    },
    /// The path leaves every workspace root.
    #[error("path `{raw}` resolves to {resolved}, which is outside the workspace roots ({roots})")]
    Outside {
        /// As the model wrote it.
        raw: String,
        /// Where it really points.
        resolved: String,
        /// The roots it was checked against.
        roots: String,
    },
}

/// Removes `.` and folds `..` without touching the disk.
pub fn lexical_normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Characters that look like `/`, `\\` or `.` (so `..∕x` reads as `../x`), or that disguise a
/// name (bidirectional overrides), with what to call them.
const LOOKALIKES: &[(char, &str)] = &[
    ('\u{2215}', "U+2215 DIVISION SLASH, which looks like `/`"),
    ('\u{2044}', "U+2044 FRACTION SLASH, which looks like `/`"),
    ('\u{FF0F}', "U+FF0F FULLWIDTH SOLIDUS, which looks like `/`"),
    ('\u{29F8}', "U+29F8 BIG SOLIDUS, which looks like `/`"),
    (
        '\u{2571}',
        "U+2571 BOX DRAWINGS DIAGONAL, which looks like `/`",
    ),
    (
        '\u{FF3C}',
        "U+FF3C FULLWIDTH REVERSE SOLIDUS, which looks like `\\`",
    ),
    ('\u{2216}', "U+2216 SET MINUS, which looks like `\\`"),
    (
        '\u{FE68}',
        "U+FE68 SMALL REVERSE SOLIDUS, which looks like `\\`",
    ),
    (
        '\u{FF0E}',
        "U+FF0E FULLWIDTH FULL STOP, which looks like `.`",
    ),
    ('\u{2024}', "U+2024 ONE DOT LEADER, which looks like `.`"),
    ('\u{2025}', "U+2025 TWO DOT LEADER, which looks like `..`"),
    (
        '\u{2026}',
        "U+2026 HORIZONTAL ELLIPSIS, which looks like `...`",
    ),
    ('\u{FE52}', "U+FE52 SMALL FULL STOP, which looks like `.`"),
    ('\u{00B7}', "U+00B7 MIDDLE DOT, which looks like `.`"),
    (
        '\u{202A}',
        "U+202A LEFT-TO-RIGHT EMBEDDING, which disguises the name",
    ),
    (
        '\u{202B}',
        "U+202B RIGHT-TO-LEFT EMBEDDING, which disguises the name",
    ),
    (
        '\u{202D}',
        "U+202D LEFT-TO-RIGHT OVERRIDE, which disguises the name",
    ),
    (
        '\u{202E}',
        "U+202E RIGHT-TO-LEFT OVERRIDE, which disguises the name",
    ),
    (
        '\u{2066}',
        "U+2066 LEFT-TO-RIGHT ISOLATE, which disguises the name",
    ),
    (
        '\u{2067}',
        "U+2067 RIGHT-TO-LEFT ISOLATE, which disguises the name",
    ),
    (
        '\u{2068}',
        "U+2068 FIRST STRONG ISOLATE, which disguises the name",
    ),
    (
        '\u{200B}',
        "U+200B ZERO WIDTH SPACE, which hides in the name",
    ),
    (
        '\u{FEFF}',
        "U+FEFF ZERO WIDTH NO-BREAK SPACE, which hides in the name",
    ),
];

/// Why a path the model gave is not even looked at: lookalike separators and dots, control
/// characters, backslashes, an unexpanded `~`.
fn suspicious(raw: &str) -> Option<String> {
    if let Some((_, what)) = LOOKALIKES.iter().find(|(c, _)| raw.contains(*c)) {
        return Some((*what).to_string());
    }
    if let Some(c) = raw.chars().find(|c| c.is_control()) {
        return Some(format!("the control character U+{:04X}", c as u32));
    }
    // On Windows a backslash is the separator (`winpath.rs` reads both).
    if cfg!(not(windows)) && raw.contains('\\') {
        return Some("a backslash; separate folders with `/`".into());
    }
    if raw.starts_with('~') {
        return Some("`~`, which is not expanded; give a path inside the workspace".into());
    }
    None
}

/// Canonicalizes the longest existing prefix (resolving symlinks) and appends the rest. A
/// dangling symlink is followed to where it points (so writing "through" it is judged by its
/// target, not by where the link sits).
fn resolve_existing_prefix(p: &Path) -> PathBuf {
    resolve_following(p, 0)
}

fn resolve_following(p: &Path, hops: u32) -> PathBuf {
    let mut existing = p.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            if let Some(first) = rest.last()
                && hops < 40
                && let Ok(target) = std::fs::read_link(real.join(first))
            {
                let mut next = real.join(target);
                for part in rest.iter().rev().skip(1) {
                    next.push(part);
                }
                return resolve_following(&lexical_normalize(&next), hops + 1);
            }
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return lexical_normalize(&out);
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

pub(super) fn confine(roots: &[PathBuf], base: &Path, raw: &str) -> Result<PathBuf, PathError> {
    if raw.contains('\0') {
        return Err(PathError::Nul(raw.replace('\0', "\\0")));
    }
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(PathError::Empty);
    }
    if let Some(what) = suspicious(trimmed) {
        return Err(PathError::Suspicious {
            raw: raw.escape_debug().to_string(),
            what,
        });
    }
    let p = Path::new(trimmed);
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    confine_path(roots, &joined).map_err(|e| match e {
        PathError::Outside {
            resolved, roots, ..
        } => PathError::Outside {
            raw: raw.to_string(),
            resolved,
            roots,
        },
        other => other,
    })
}

/// The confinement itself, for a path the agent built (not one the model gave, so no
/// spelling checks): symlinks resolved, dangling ones followed, `..` folded, and the result
/// inside one of `roots` or refused.
pub(super) fn confine_path(roots: &[PathBuf], path: &Path) -> Result<PathBuf, PathError> {
    let resolved = resolve_existing_prefix(&lexical_normalize(path));
    if roots.iter().any(|r| inside(&resolved, r)) {
        Ok(resolved)
    } else {
        Err(PathError::Outside {
            raw: path.display().to_string(),
            resolved: resolved.display().to_string(),
            roots: roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// Whether `resolved` is `root` or below it.
#[cfg(not(windows))]
fn inside(resolved: &Path, root: &Path) -> bool {
    resolved.starts_with(root)
}

/// Windows: drive letters, UNC shares and `\\?\` prefixes compared as the same places
/// (`winpath.rs`). Both paths were canonicalized as far as they exist, so their names carry the
/// file system's own spelling: comparing them exactly is case-insensitive where the volume is
/// (the file system folded the case) and exact where a folder is case-sensitive.
#[cfg(windows)]
fn inside(resolved: &Path, root: &Path) -> bool {
    use super::winpath;
    match (
        winpath::parse(&resolved.to_string_lossy()),
        winpath::parse(&root.to_string_lossy()),
    ) {
        (Ok(Some(p)), Ok(Some(r))) => winpath::is_within(&p, &r, false),
        _ => false,
    }
}

// Symlinks: Unix (Windows paths have their own suite, winpath_tests.rs).
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        // Dangling links, pointing outside at files that do not exist yet.
        std::os::unix::fs::symlink(outside.path().join("new.txt"), root.join("dangling")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("d/e"), root.join("deep")).unwrap();
        std::os::unix::fs::symlink("dangling", root.join("chain")).unwrap();
        let roots = vec![root.clone()];
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "link/secret",
            "x\0y",
            "",
            "./../../../../etc",
            "dangling",
            "deep/f.txt",
            "chain",
            "..\u{2215}..\u{2215}etc",
            "\u{FF0E}\u{FF0E}/x",
            "..\u{2024}/x",
            "a\u{202E}txt.exe",
            "..\\..\\etc",
            "~/.bashrc",
            "a\nb",
        ] {
            assert!(confine(&roots, &root, bad).is_err(), "{bad:?} was accepted");
        }
        for good in [
            "a.txt",
            "sub/new/file.rs",
            "./a/../b",
            &format!("{}/c", root.display()),
        ] {
            let p = confine(&roots, &root, good).unwrap();
            assert!(p.starts_with(&root), "{good}: {}", p.display());
        }
    }
}

// The confinement the product uses on Windows (`inside` over `winpath`), on real folders.
#[cfg(test)]
#[cfg(windows)]
#[path = "paths_windows_tests.rs"]
mod windows_tests;
