//! Rebasing the agent's result onto a buffer the user kept editing: a line-based three-way
//! merge (`similar::TextMerge`) of base (what the agent read), ours (the buffer now) and
//! theirs (what the agent wrote).
//!
//! Changes on separate lines combine; identical changes count once; changes to the same or
//! adjacent lines are a conflict (like `git merge`), and a conflict is never resolved by
//! guessing: the caller drops the agent's edit and says why.

use similar::TextMerge;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebase {
    /// The buffer already is the merged result (nothing to apply).
    UpToDate,
    /// The merged text to bring the buffer to.
    Merged(String),
    /// The user and the agent changed the same lines. `lines` are 1-based line numbers of
    /// the conflicting regions in the current buffer.
    Conflict { lines: Vec<usize> },
}

/// Merges the agent's change (`base` → `theirs`) into the user's buffer `ours`.
pub fn rebase(base: &str, ours: &str, theirs: &str) -> Rebase {
    if base == theirs || ours == theirs {
        return Rebase::UpToDate;
    }
    if base == ours {
        return Rebase::Merged(theirs.to_string());
    }
    let merge = TextMerge::from_lines(base, ours, theirs);
    if merge.is_conflicted() {
        return Rebase::Conflict {
            lines: merge
                .conflicts()
                .map(|r| r.ours_range().start + 1)
                .collect(),
        };
    }
    let merged = merge.to_string();
    if merged == ours {
        Rebase::UpToDate
    } else {
        Rebase::Merged(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";

    #[test]
    fn user_typing_elsewhere_is_kept() {
        // The user edited fn a while the agent fixed fn b.
        let ours = "fn a() {\n    1 + 1\n}\n\nfn b() {\n    2\n}\n";
        let theirs = "fn a() {\n    1\n}\n\nfn b() {\n    20\n}\n";
        assert_eq!(
            rebase(BASE, ours, theirs),
            Rebase::Merged("fn a() {\n    1 + 1\n}\n\nfn b() {\n    20\n}\n".into())
        );
    }

    #[test]
    fn same_lines_conflict_and_name_the_line() {
        let ours = "fn a() {\n    1\n}\n\nfn b() {\n    3\n}\n";
        let theirs = "fn a() {\n    1\n}\n\nfn b() {\n    20\n}\n";
        assert_eq!(
            rebase(BASE, ours, theirs),
            Rebase::Conflict { lines: vec![6] }
        );
    }

    #[test]
    fn trivial_cases() {
        let theirs = "x\n";
        assert_eq!(rebase(BASE, BASE, theirs), Rebase::Merged("x\n".into()));
        assert_eq!(rebase(BASE, "y\n", BASE), Rebase::UpToDate);
        assert_eq!(rebase(BASE, theirs, theirs), Rebase::UpToDate);
        // The buffer already has the agent's change plus more typing (an edit that was
        // applied before the user typed on): nothing left to do.
        let theirs = "fn a() {\n    1\n}\n\nfn b() {\n    20\n}\n";
        let ours = "// note\nfn a() {\n    1\n}\n\nfn b() {\n    20\n}\n";
        assert_eq!(rebase(BASE, ours, theirs), Rebase::UpToDate);
    }

    #[test]
    fn crlf_text_merges() {
        let base = "a\r\nb\r\nc\r\nd\r\n";
        let ours = "A\r\nb\r\nc\r\nd\r\n";
        let theirs = "a\r\nb\r\nc\r\nD\r\n";
        assert_eq!(
            rebase(base, ours, theirs),
            Rebase::Merged("A\r\nb\r\nc\r\nD\r\n".into())
        );
    }
}
