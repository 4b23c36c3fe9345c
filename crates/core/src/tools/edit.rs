//! Exact-text replacement for the Edit tools of the harnesses that take `old_string` /
//! `new_string` (Kimi Code, Claude Code, Z Code). Each words the misses its own way.

/// Why a replacement did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EditMiss {
    /// `old` is not in the text.
    NotFound,
    /// `old` is in the text this many times and `all` was not set.
    Ambiguous(usize),
}

/// Replaces `old` with `new` in `text`; it must be unique unless `all`. In a CRLF file, text
/// from the model with LF line ends matches and is written back with CRLF. Returns the new
/// text and the number of replacements.
pub(crate) fn replace_exact(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
) -> Result<(String, usize), EditMiss> {
    let crlf = text.contains("\r\n") && !old.contains("\r\n");
    let (old, new) = if crlf {
        (old.replace('\n', "\r\n"), new.replace('\n', "\r\n"))
    } else {
        (old.to_string(), new.to_string())
    };
    let count = text.matches(&old).count();
    match count {
        0 => Err(EditMiss::NotFound),
        n if n > 1 && !all => Err(EditMiss::Ambiguous(n)),
        n if all => Ok((text.replace(&old, &new), n)),
        n => Ok((text.replacen(&old, &new, 1), n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_all_and_crlf() {
        assert_eq!(
            replace_exact("a b a", "b", "c", false),
            Ok(("a c a".into(), 1))
        );
        assert_eq!(
            replace_exact("a b a", "a", "c", false),
            Err(EditMiss::Ambiguous(2))
        );
        assert_eq!(
            replace_exact("a b a", "a", "c", true),
            Ok(("c b c".into(), 2))
        );
        assert_eq!(replace_exact("a", "x", "c", true), Err(EditMiss::NotFound));
        assert_eq!(
            replace_exact("x\r\ny\r\n", "x\ny", "z\nw", false),
            Ok(("z\r\nw\r\n".into(), 1))
        );
    }
}
