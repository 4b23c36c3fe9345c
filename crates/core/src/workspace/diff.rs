//! Unified diffs that `git apply` accepts.

use similar::TextDiff;

/// The diff of one file from `old` to `new` (None: the file is absent, so added or deleted),
/// with git's headers for `path` and three lines of context.
pub fn git_unified_diff(path: &str, old: Option<&str>, new: Option<&str>) -> String {
    let mut out = format!("diff --git a/{path} b/{path}\n");
    let (from, to) = match (old, new) {
        (None, _) => {
            out.push_str("new file mode 100644\n");
            ("/dev/null".to_string(), format!("b/{path}"))
        }
        (_, None) => {
            out.push_str("deleted file mode 100644\n");
            (format!("a/{path}"), "/dev/null".to_string())
        }
        _ => (format!("a/{path}"), format!("b/{path}")),
    };
    let old = old.unwrap_or("");
    let new = new.unwrap_or("");
    let diff = TextDiff::from_lines(old, new);
    out.push_str(
        &diff
            .unified_diff()
            .context_radius(3)
            .header(&from, &to)
            .to_string(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_newline_is_marked() {
        let d = git_unified_diff("a", Some("x"), Some("y\n"));
        assert!(d.contains("\\ No newline at end of file"), "{d}");
    }
}
