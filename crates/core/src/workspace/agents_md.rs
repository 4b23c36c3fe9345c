//! Project instructions: the global file in the home folder, then one file per folder from the
//! project root (nearest `.git`) down to the cwd, within a byte budget. In each folder the
//! first of `AGENTS.override.md`, `AGENTS.md`, Claude Code's `CLAUDE.md`, then the names in
//! `project_doc_fallback_filenames` (Codex's key) is taken. A `CLAUDE.md` may import files
//! with `@path` (Claude Code's memory imports: relative to the file, outside code, five deep),
//! each added after it. The project's files and their imports are read through
//! [`StartupReads`], so one that links or points outside the workspace is skipped with a
//! warning; the home folder's file is the user's own and read as it is. The budget
//! (`project_doc_max_bytes`, 32 KiB by default) is shared by all the files.

use std::path::{Path, PathBuf};

use crate::workspace::startup::{Scope, StartupReads};

const NAMES: &[&str] = &["AGENTS.override.md", "AGENTS.md", "CLAUDE.md"];
/// The file whose `@path` lines are imports.
const IMPORTING: &str = "CLAUDE.md";
/// How deep imports may nest, as Claude Code allows.
const IMPORT_DEPTH: usize = 5;

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
    fallbacks: &[String],
) -> Option<String> {
    let names = NAMES
        .iter()
        .copied()
        .chain(fallbacks.iter().map(String::as_str));
    names.into_iter().find_map(|n| {
        // A fallback name is a file name, never a path.
        if n.is_empty() || n.contains(['/', '\\']) || n == ".." {
            return None;
        }
        let path = dir.join(n);
        let text = reads.read_text(&path, budget, scope)?.text;
        if text.trim().is_empty() {
            return None;
        }
        if n != IMPORTING {
            return Some(text);
        }
        let mut seen = vec![path.clone()];
        let mut out = text;
        with_imports(reads, &path, &mut out, budget, scope, 1, &mut seen);
        Some(out)
    })
}

/// The `@path` words of `text` outside code blocks and code spans, as Claude Code reads them:
/// a word that starts with `@` and names a path (a `/` or a `.` in it, so `@alice` is a
/// mention, not an import).
fn import_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_span = false;
        let visible: String = line
            .chars()
            .map(|c| {
                if c == '`' {
                    in_span = !in_span;
                    ' '
                } else if in_span {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        for word in visible.split_whitespace() {
            let Some(p) = word.strip_prefix('@') else {
                continue;
            };
            let p = p.trim_end_matches([',', ';', ':', ')', '!', '?']);
            if !p.is_empty() && (p.contains('/') || p.contains('.')) && !out.iter().any(|o| o == p)
            {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// Adds the files `file`'s text imports after it, and theirs, up to [`IMPORT_DEPTH`].
fn with_imports(
    reads: &mut StartupReads,
    file: &Path,
    out: &mut String,
    budget: usize,
    scope: Scope<'_>,
    depth: usize,
    seen: &mut Vec<PathBuf>,
) {
    if depth > IMPORT_DEPTH {
        return;
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    for raw in import_paths(&out.clone()) {
        let path = match raw.strip_prefix("~/") {
            Some(rest) => match dirs::home_dir() {
                Some(h) => h.join(rest),
                None => continue,
            },
            None => dir.join(&raw),
        };
        if seen.contains(&path) || out.len() >= budget {
            continue;
        }
        seen.push(path.clone());
        let Some(read) = reads.read_text(&path, budget - out.len(), scope) else {
            continue;
        };
        let mut text = read.text;
        with_imports(reads, &path, &mut text, budget, scope, depth + 1, seen);
        out.truncate(out.trim_end().len());
        out.push_str("\n\n");
        out.push_str(text.trim_end());
    }
}

/// The merged instructions, or None when there are none.
pub(crate) fn load(
    reads: &mut StartupReads,
    home: &Path,
    cwd: &Path,
    budget: usize,
    fallbacks: &[String],
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
    if let Some(text) = first_existing(reads, home, budget, Scope::User, fallbacks) {
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
        if let Some(text) = first_existing(reads, &d, budget, scope, fallbacks) {
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
        let got = load(&mut reads(), home.path(), &cwd, 32 * 1024, &[]).unwrap();
        assert_eq!(
            got,
            "global\n\n--- project-doc ---\n\nroot rules\n\na override\n\nleaf rules"
        );
        let got = load(&mut reads(), home.path(), &cwd, 10, &[]).unwrap();
        assert_eq!(got, "global\n\n--- project-doc ---\n\nroot");
        let empty = tempfile::tempdir().unwrap();
        assert!(load(&mut reads(), empty.path(), empty.path(), 100, &[]).is_none());
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
        let got = load(&mut reads, home.path(), &cwd, 32 * 1024, &[]).unwrap();
        assert_eq!(got, "my global rules\n\n--- project-doc ---\n\nsub rules");
        let w = reads.take_warnings();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains(&r.join("AGENTS.md").display().to_string()),
            "{w:?}"
        );
        assert!(w[1].contains("AGENTS.override.md"), "{w:?}");
    }

    #[test]
    fn claude_md_and_fallback_names_stand_in_for_agents_md_and_claude_md_imports() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let r = std::fs::canonicalize(repo.path()).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join("docs")).unwrap();
        std::fs::create_dir_all(r.join("a/b")).unwrap();
        std::fs::write(
            r.join("CLAUDE.md"),
            "Root. See @docs/style.md and @alice.\n`@docs/not.md` and\n```\n@docs/fenced.md\n```\n",
        )
        .unwrap();
        std::fs::write(r.join("docs/style.md"), "Style: tabs. More in @deeper.md").unwrap();
        std::fs::write(r.join("docs/deeper.md"), "Deeper.").unwrap();
        std::fs::write(r.join("docs/not.md"), "NOT").unwrap();
        std::fs::write(r.join("docs/fenced.md"), "FENCED").unwrap();
        std::fs::write(r.join("a/TEAM.md"), "Team rules.").unwrap();
        std::fs::write(r.join("a/b/AGENTS.md"), "Leaf.").unwrap();
        std::fs::write(r.join("a/b/CLAUDE.md"), "NOT TAKEN: AGENTS.md comes first").unwrap();
        let cwd = r.join("a/b");
        let mut reads = StartupReads::new(std::slice::from_ref(&r));
        let got = load(
            &mut reads,
            home.path(),
            &cwd,
            32 * 1024,
            &["TEAM.md".into()],
        )
        .unwrap();
        assert_eq!(
            got,
            "Root. See @docs/style.md and @alice.\n`@docs/not.md` and\n```\n@docs/fenced.md\n```\n\nStyle: tabs. More in @deeper.md\n\nDeeper.\n\nTeam rules.\n\nLeaf."
        );
    }

    #[test]
    fn an_import_outside_the_workspace_is_skipped_with_a_warning() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = std::fs::canonicalize(repo.path()).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::write(outside.path().join("secret.md"), "SECRET").unwrap();
        std::fs::write(
            r.join("CLAUDE.md"),
            format!("Rules. @{}", outside.path().join("secret.md").display()),
        )
        .unwrap();
        let mut reads = StartupReads::new(std::slice::from_ref(&r));
        let got = load(&mut reads, home.path(), &r, 32 * 1024, &[]).unwrap();
        assert!(!got.contains("SECRET"), "{got}");
        assert_eq!(reads.take_warnings().len(), 1);
    }
}
