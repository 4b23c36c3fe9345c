//! AGENTS.md discovery: the global file in the home folder, then one file per folder from the
//! project root (nearest `.git`) down to the cwd, within a byte budget. The project's files
//! are read through [`StartupReads`], so one that links outside the workspace is skipped with
//! a warning; the home folder's file is the user's own and read as it is. The budget
//! (`project_doc_max_bytes`, 32 KiB by default) is shared by all the files.

use std::path::{Path, PathBuf};

use crate::workspace::startup::{Scope, StartupReads};

const NAMES: &[&str] = &["AGENTS.override.md", "AGENTS.md"];

/// The nearest ancestor of `cwd` (itself included) holding a `.git`.
pub fn git_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

fn first_existing(
    reads: &mut StartupReads,
    dir: &Path,
    budget: usize,
    scope: Scope<'_>,
) -> Option<String> {
    NAMES.iter().find_map(|n| {
        let text = reads.read_text(&dir.join(n), budget, scope)?.text;
        (!text.trim().is_empty()).then_some(text)
    })
}

/// The merged instructions, or None when there are none.
pub(crate) fn load(
    reads: &mut StartupReads,
    home: &Path,
    cwd: &Path,
    budget: usize,
) -> Option<String> {
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
    if let Some(text) = first_existing(reads, home, budget, Scope::User) {
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
        let scope = Scope::Project { folder: &d };
        if let Some(text) = first_existing(reads, &d, budget, scope) {
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
        let cwd = std::fs::canonicalize(r.join("a/b")).unwrap();
        let reads = || StartupReads::new(std::slice::from_ref(&cwd));
        let got = load(&mut reads(), home.path(), &cwd, 32 * 1024).unwrap();
        assert_eq!(
            got,
            "global\n\n--- project-doc ---\n\nroot rules\n\na override\n\nleaf rules"
        );
        let got = load(&mut reads(), home.path(), &cwd, 10).unwrap();
        assert_eq!(got, "global\n\n--- project-doc ---\n\nroot");
        let empty = tempfile::tempdir().unwrap();
        assert!(load(&mut reads(), empty.path(), empty.path(), 100).is_none());
    }

    /// A project AGENTS.md that links outside the workspace is not read and is named in a
    /// warning; the home folder's own AGENTS.md may link anywhere.
    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_workspace_is_skipped() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = std::fs::canonicalize(repo.path()).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join("sub")).unwrap();
        std::fs::write(outside.path().join("decoy.md"), "DECOY").unwrap();
        std::fs::write(outside.path().join("mine.md"), "my global rules").unwrap();
        std::os::unix::fs::symlink(outside.path().join("decoy.md"), r.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("decoy.md"),
            r.join("sub/AGENTS.override.md"),
        )
        .unwrap();
        std::fs::write(r.join("sub/AGENTS.md"), "sub rules").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("mine.md"),
            home.path().join("AGENTS.md"),
        )
        .unwrap();
        let cwd = r.join("sub");
        let mut reads = StartupReads::new(std::slice::from_ref(&cwd));
        let got = load(&mut reads, home.path(), &cwd, 32 * 1024).unwrap();
        assert_eq!(got, "my global rules\n\n--- project-doc ---\n\nsub rules");
        let w = reads.take_warnings();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains(&r.join("AGENTS.md").display().to_string()),
            "{w:?}"
        );
        assert!(w[1].contains("AGENTS.override.md"), "{w:?}");
    }
}
