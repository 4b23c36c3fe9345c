//! The two-level listing of the working directory that Kimi Code puts in its prompt:
//! directories first, case-insensitive order, at most 20 entries per directory, hidden
//! directories listed but not expanded.

use std::path::Path;

const MAX_CHILDREN: usize = 20;

pub fn two_level_listing(dir: &Path) -> String {
    let mut out = String::new();
    list(dir, 0, &mut out);
    if out.is_empty() {
        out.push_str("(empty)\n");
    }
    out
}

fn entries(dir: &Path) -> Vec<(String, bool)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(String, bool)> = rd
        .flatten()
        .map(|e| {
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .filter(|(n, _)| n != ".git")
        .collect();
    v.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| a.0.to_lowercase().cmp(&b.0.to_lowercase()))
    });
    v
}

fn list(dir: &Path, depth: usize, out: &mut String) {
    let all = entries(dir);
    let indent = "  ".repeat(depth);
    for (name, is_dir) in all.iter().take(MAX_CHILDREN) {
        out.push_str(&format!(
            "{indent}{name}{}\n",
            if *is_dir { "/" } else { "" }
        ));
        if *is_dir && depth == 0 && !name.starts_with('.') {
            list(&dir.join(name), 1, out);
        }
    }
    if all.len() > MAX_CHILDREN {
        out.push_str(&format!("{indent}… {} more\n", all.len() - MAX_CHILDREN));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn dirs_first_two_levels_hidden_not_expanded() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("src/deep/deeper")).unwrap();
        std::fs::create_dir_all(p.join(".hidden/inner")).unwrap();
        std::fs::write(p.join("README.md"), "").unwrap();
        std::fs::write(p.join("src/lib.rs"), "").unwrap();
        let t = super::two_level_listing(p);
        assert_eq!(t, ".hidden/\nsrc/\n  deep/\n  lib.rs\nREADME.md\n");
    }
}
