//! Path confinement: every path a tool touches must resolve, symlinks followed, inside a root.

use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path `{0}` contains a NUL byte")]
    Nul(String),
    #[error("path is empty")]
    Empty,
    #[error("path `{raw}` resolves to {resolved}, which is outside the workspace roots ({roots})")]
    Outside {
        raw: String,
        resolved: String,
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

/// Canonicalizes the longest existing prefix (resolving symlinks) and appends the rest.
fn resolve_existing_prefix(p: &Path) -> PathBuf {
    let mut existing = p.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
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

pub fn confine(roots: &[PathBuf], base: &Path, raw: &str) -> Result<PathBuf, PathError> {
    if raw.contains('\0') {
        return Err(PathError::Nul(raw.replace('\0', "\\0")));
    }
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(PathError::Empty);
    }
    let p = Path::new(trimmed);
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    let resolved = resolve_existing_prefix(&lexical_normalize(&joined));
    if roots.iter().any(|r| resolved.starts_with(r)) {
        Ok(resolved)
    } else {
        Err(PathError::Outside {
            raw: raw.to_string(),
            resolved: resolved.display().to_string(),
            roots: roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        let roots = vec![root.clone()];
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "link/secret",
            "x\0y",
            "",
            "./../../../../etc",
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
