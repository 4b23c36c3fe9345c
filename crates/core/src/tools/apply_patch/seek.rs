//! Locating a chunk's lines inside a file, with a ladder of increasingly
//! lenient comparisons (exact, trailing whitespace, surrounding whitespace,
//! Unicode punctuation normalisation).

/// The comparison levels, tried in order; the first level that finds a match
/// anywhere in the search range wins.
const LEVELS: [fn(&str, &str) -> bool; 4] = [
    |a, b| a == b,
    |a, b| a.trim_end() == b.trim_end(),
    |a, b| a.trim() == b.trim(),
    |a, b| normalise(a) == normalise(b),
];

/// Map typographic punctuation and exotic spaces to their ASCII equivalents,
/// then trim.
pub(crate) fn normalise(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect();
    mapped.trim().to_string()
}

fn matches_at(lines: &[String], pattern: &[String], at: usize, eq: fn(&str, &str) -> bool) -> bool {
    lines[at..at + pattern.len()]
        .iter()
        .zip(pattern)
        .all(|(line, pat)| eq(line, pat))
}

/// Does `pattern` match at exactly `at` (at any fuzz level)?
pub(crate) fn matches_exactly_at(lines: &[String], pattern: &[String], at: usize) -> bool {
    if at + pattern.len() > lines.len() {
        return false;
    }
    LEVELS.iter().any(|eq| matches_at(lines, pattern, at, *eq))
}

/// Find the first index `>= start` at which `pattern` occurs in `lines`.
///
/// An empty pattern matches at `start`.
pub(crate) fn seek_sequence(lines: &[String], pattern: &[String], start: usize) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start.min(lines.len()));
    }
    if pattern.len() > lines.len() || start > lines.len() - pattern.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    LEVELS
        .iter()
        .find_map(|eq| (start..=last_start).find(|&at| matches_at(lines, pattern, at, *eq)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exact_match_beats_fuzzy_match() {
        let lines = v(&["foo  ", "foo"]);
        assert_eq!(seek_sequence(&lines, &v(&["foo"]), 0), Some(1));
    }

    #[test]
    fn respects_start_and_bounds() {
        let lines = v(&["a", "b", "a"]);
        assert_eq!(seek_sequence(&lines, &v(&["a"]), 1), Some(2));
        assert_eq!(seek_sequence(&lines, &v(&["a", "b", "a", "b"]), 0), None);
        assert_eq!(seek_sequence(&lines, &v(&["a"]), 5), None);
        assert_eq!(seek_sequence(&lines, &[], 2), Some(2));
    }

    #[test]
    fn normalise_maps_punctuation_and_spaces() {
        assert_eq!(
            normalise("\u{00A0}a\u{2014}b \u{201C}c\u{201D} \u{2018}d\u{2019}\u{3000}"),
            "a-b \"c\" 'd'"
        );
    }
}
