//! `confine` on Windows, on real folders: what the tools use, not only the lexical rule of
//! `winpath_tests.rs`. Runs on Windows, and under wine in `scripts/cross-check.sh`.

use super::*;

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src").join("main.rs"), "fn main() {}\n").unwrap();
    (dir, root)
}

/// `root` as a plain drive path (`C:\…`), without the `\\?\` that `canonicalize` adds.
fn plain(root: &Path) -> String {
    let s = root.display().to_string();
    s.strip_prefix(r"\\?\").unwrap_or(&s).to_string()
}

#[test]
fn inside_the_workspace_in_every_spelling() {
    let (_dir, root) = workspace();
    let roots = vec![root.clone()];
    let base = plain(&root);
    for good in [
        r"src\main.rs".to_string(),
        "src/main.rs".to_string(),
        r"src\new\file.rs".to_string(),
        r".\src\..\src\main.rs".to_string(),
        format!(r"{base}\src\main.rs"),
        format!("{}/src/main.rs", base.replace('\\', "/")),
        format!(r"\\?\{base}\src\main.rs"),
    ] {
        let p = confine(&roots, &root, &good).unwrap_or_else(|e| panic!("{good}: {e}"));
        assert!(inside(&p, &root), "{good} resolved to {}", p.display());
    }
}

#[test]
fn a_drive_letter_in_either_case_is_the_same_drive() {
    let (_dir, root) = workspace();
    let base = plain(&root);
    let mut chars = base.chars();
    let letter = chars.next().unwrap();
    let swapped = if letter.is_ascii_uppercase() {
        letter.to_ascii_lowercase()
    } else {
        letter.to_ascii_uppercase()
    };
    let raw = format!(r"{swapped}{}\src\main.rs", chars.as_str());
    confine(&[root.clone()], &root, &raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
}

#[test]
fn leaving_the_workspace_is_refused() {
    let (_dir, root) = workspace();
    let roots = vec![root.clone()];
    let base = plain(&root);
    let sibling = format!("{base}-other\\x.txt");
    for bad in [
        r"..\x.txt",
        r"src\..\..\x.txt",
        "../../../../../../Windows/win.ini",
        r"C:\Windows\win.ini",
        r"\Windows\win.ini",
        r"\\server\share\x.txt",
        r"\\.\PhysicalDrive0",
        sibling.as_str(),
    ] {
        match confine(&roots, &root, bad) {
            Ok(p) => panic!("{bad} was allowed as {}", p.display()),
            Err(e) => assert!(matches!(e, PathError::Outside { .. }), "{bad}: {e}"),
        }
    }
}

#[test]
fn names_windows_reads_differently_are_refused() {
    let (_dir, root) = workspace();
    let roots = vec![root.clone()];
    // (A trailing dot is no escape here: Windows opens `main.rs.` as `main.rs`, inside.)
    for bad in [r"src\NUL", r"src\con.txt", r"src\new.rs:stream"] {
        assert!(
            confine(&roots, &root, bad).is_err(),
            "{bad} was allowed as {:?}",
            confine(&roots, &root, bad)
        );
    }
}
