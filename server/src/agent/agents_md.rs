//! AGENTS.md discovery: the global file in the home folder, then one file per folder from the
//! project root (nearest `.git`) down to the cwd, within a byte budget.

use std::path::{Path, PathBuf};

const NAMES: &[&str] = &["AGENTS.override.md", "AGENTS.md"];

/// The nearest ancestor of `cwd` (itself included) holding a `.git`.
pub fn git_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

fn first_existing(dir: &Path) -> Option<(PathBuf, String)> {
    NAMES.iter().find_map(|n| {
        let p = dir.join(n);
        let text = std::fs::read_to_string(&p).ok()?;
        (!text.trim().is_empty()).then_some((p, text))
    })
}

/// The merged instructions, or None when there are none.
pub fn load(home: &Path, cwd: &Path, budget: usize) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut used = 0usize;
    let mut take = |text: &str, parts: &mut Vec<String>| {
        if used >= budget {
            return;
        }
        let room = budget - used;
        let mut t = text.trim_end();
        if t.len() > room {
            let mut end = room;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t = &t[..end];
        }
        used += t.len();
        parts.push(t.to_string());
    };
    if let Some((_, text)) = first_existing(home) {
        take(&text, &mut parts);
    }
    let global_count = parts.len();
    let dirs: Vec<PathBuf> = match git_root(cwd) {
        Some(root) => {
            let mut v: Vec<PathBuf> = cwd
                .ancestors()
                .take_while(|d| d.starts_with(&root))
                .map(Path::to_path_buf)
                .collect();
            v.reverse();
            v
        }
        None => vec![cwd.to_path_buf()],
    };
    let mut project = Vec::new();
    for d in dirs {
        if let Some((_, text)) = first_existing(&d) {
            take(&text, &mut project);
        }
    }
    if parts.is_empty() && project.is_empty() {
        return None;
    }
    let mut out = parts.join("\n\n");
    if !project.is_empty() {
        if global_count > 0 {
            out.push_str("\n\n--- project-doc ---\n\n");
        }
        out.push_str(&project.join("\n\n"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_to_cwd_order_override_and_budget() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join("a/b")).unwrap();
        std::fs::write(r.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(r.join("a/AGENTS.md"), "ignored").unwrap();
        std::fs::write(r.join("a/AGENTS.override.md"), "a override").unwrap();
        std::fs::write(r.join("a/b/AGENTS.md"), "leaf rules").unwrap();
        std::fs::write(home.path().join("AGENTS.md"), "global").unwrap();
        let got = load(home.path(), &r.join("a/b"), 32 * 1024).unwrap();
        assert_eq!(
            got,
            "global\n\n--- project-doc ---\n\nroot rules\n\na override\n\nleaf rules"
        );
        let got = load(home.path(), &r.join("a/b"), 10).unwrap();
        assert_eq!(got, "global\n\n--- project-doc ---\n\nroot");
        let empty = tempfile::tempdir().unwrap();
        assert!(load(empty.path(), empty.path(), 100).is_none());
    }
}
