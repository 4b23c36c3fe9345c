//! The editor's diagnostics as the model reads them: which ones an edit made new, and one
//! line per problem (`path:line:col severity source: message`), bounded.

use interpreter_protocol::{Diagnostic, DiagnosticSeverity};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Problems shown after an edit at most; the rest are counted.
pub(crate) const MAX_SHOWN: usize = 20;

/// The errors and warnings in `after` that `before` did not have. Lines move when text is
/// edited, so a problem is the same one when its severity, source, code and message are;
/// repeats count (two identical errors where there was one: one is new).
pub(crate) fn new_problems<'a>(
    before: &[Diagnostic],
    after: &'a [Diagnostic],
) -> Vec<&'a Diagnostic> {
    let key = |d: &Diagnostic| {
        (
            d.severity,
            d.source.clone(),
            d.code.clone(),
            d.message.clone(),
        )
    };
    let mut seen: HashMap<_, usize> = HashMap::new();
    for d in before {
        *seen.entry(key(d)).or_default() += 1;
    }
    after
        .iter()
        .filter(|d| {
            matches!(
                d.severity,
                DiagnosticSeverity::Error | DiagnosticSeverity::Warning
            )
        })
        .filter(|d| match seen.get_mut(&key(d)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

/// One line per problem, errors first, at most [`MAX_SHOWN`], then how many more there are.
/// Paths are shown relative to `cwd` when they are inside it.
pub(crate) fn render(problems: &[(PathBuf, Diagnostic)], cwd: &Path) -> String {
    let mut sorted: Vec<&(PathBuf, Diagnostic)> = problems.iter().collect();
    sorted.sort_by_key(|(p, d)| {
        (
            d.severity,
            p.clone(),
            d.range.start.line,
            d.range.start.character,
        )
    });
    let mut out = String::new();
    for (path, d) in sorted.iter().take(MAX_SHOWN) {
        let shown = path.strip_prefix(cwd).unwrap_or(path);
        let source = d
            .source
            .as_deref()
            .map(|s| format!(" {s}"))
            .unwrap_or_default();
        let message = d
            .message
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!(
            "{}:{}:{} {}{source}: {message}\n",
            shown.display(),
            d.range.start.line + 1,
            d.range.start.character + 1,
            d.severity.as_str(),
        ));
    }
    if sorted.len() > MAX_SHOWN {
        out.push_str(&format!("… and {} more\n", sorted.len() - MAX_SHOWN));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_protocol::{Position, Range};

    fn diag(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
        let at = Position { line, character: 4 };
        Diagnostic {
            range: Range { start: at, end: at },
            severity,
            message: message.into(),
            source: Some("pyright".into()),
            code: None,
        }
    }

    #[test]
    fn only_problems_the_edit_made_count_wherever_the_old_ones_moved() {
        use DiagnosticSeverity::*;
        let before = [diag(3, Error, "old"), diag(5, Warning, "twice")];
        let after = [
            diag(9, Error, "old"),
            diag(1, Warning, "twice"),
            diag(2, Warning, "twice"),
            diag(4, Error, "fresh"),
            diag(6, Hint, "hint only"),
        ];
        let new: Vec<&str> = new_problems(&before, &after)
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(new, ["twice", "fresh"]);
    }

    #[test]
    fn lines_are_one_based_relative_and_bounded() {
        let cwd = Path::new("/w");
        let one = vec![(
            PathBuf::from("/w/src/a.py"),
            diag(2, DiagnosticSeverity::Error, "undefined name `x`\n  here"),
        )];
        assert_eq!(
            render(&one, cwd),
            "src/a.py:3:5 error pyright: undefined name `x` here\n"
        );
        let many: Vec<_> = (0..25)
            .map(|i| {
                (
                    PathBuf::from("/elsewhere/b.py"),
                    diag(i, DiagnosticSeverity::Warning, "w"),
                )
            })
            .collect();
        let text = render(&many, cwd);
        assert_eq!(text.lines().count(), MAX_SHOWN + 1);
        assert!(text.starts_with("/elsewhere/b.py:1:5 warning pyright: w\n"));
        assert!(text.ends_with("… and 5 more\n"));
    }
}
