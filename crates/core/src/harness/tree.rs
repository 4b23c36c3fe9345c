//! The two-level listing of the working directory that Kimi Code puts in its prompt:
//! directories first, case-insensitive order, at most 20 entries per directory, hidden
//! directories listed but not expanded. Listed through [`StartupReads`]: an entry that links
//! outside the workspace is left out (and named in a warning); one linking inside is listed
//! as what it points to.

use std::path::Path;

use crate::workspace::startup::{Scope, StartupReads};

const MAX_CHILDREN: usize = 20;

pub(super) fn two_level_listing(reads: &mut StartupReads, dir: &Path) -> String {
    let mut out = String::new();
    list(reads, dir, dir, 0, &mut out);
    if out.is_empty() {
        out.push_str("(empty)\n");
    }
    out
}

fn entries(reads: &mut StartupReads, cwd: &Path, dir: &Path) -> Vec<(String, bool)> {
    let mut v: Vec<(String, bool)> = reads
        .list_dir(dir, Scope::Project { folder: cwd })
        .into_iter()
        .map(|e| (e.name, e.is_dir))
        .filter(|(n, _)| n != ".git")
        .collect();
    v.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| a.0.to_lowercase().cmp(&b.0.to_lowercase()))
    });
    v
}

fn list(reads: &mut StartupReads, cwd: &Path, dir: &Path, depth: usize, out: &mut String) {
    let all = entries(reads, cwd, dir);
    let indent = "  ".repeat(depth);
    for (name, is_dir) in all.iter().take(MAX_CHILDREN) {
        out.push_str(&format!(
            "{indent}{name}{}\n",
            if *is_dir { "/" } else { "" }
        ));
        if *is_dir && depth == 0 && !name.starts_with('.') {
            list(reads, cwd, &dir.join(name), 1, out);
        }
    }
    if all.len() > MAX_CHILDREN {
        out.push_str(&format!("{indent}… {} more\n", all.len() - MAX_CHILDREN));
    }
}

#[cfg(test)]
mod tests {
    use crate::workspace::startup::StartupReads;

    #[test]
    fn dirs_first_two_levels_hidden_not_expanded() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("src/deep/deeper")).unwrap();
        std::fs::create_dir_all(p.join(".hidden/inner")).unwrap();
        std::fs::write(p.join("README.md"), "").unwrap();
        std::fs::write(p.join("src/lib.rs"), "").unwrap();
        let root = std::fs::canonicalize(p).unwrap();
        let t =
            super::two_level_listing(&mut StartupReads::new(std::slice::from_ref(&root)), &root);
        assert_eq!(t, ".hidden/\nsrc/\n  deep/\n  lib.rs\nREADME.md\n");
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_workspace_are_left_out_and_named() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("private/keys")).unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("private"), root.join("escape")).unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("alias")).unwrap();
        let mut reads = StartupReads::new(std::slice::from_ref(&root));
        let t = super::two_level_listing(&mut reads, &root);
        assert_eq!(t, "alias/\nsrc/\n");
        let w = reads.take_warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("escape"), "{w:?}");
    }
}
