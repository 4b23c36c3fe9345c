//! Where in a command the danger of its approval request is. The request says why a command
//! is dangerous (`recursive delete outside the workspace`), not where: the command may hide
//! the `rm -rf` after sixty blank lines, three hundred harmless ones or four thousand
//! characters of one line, and a prompt too small for all of it must still show that part.
//! The core's own rules find it: the command's lines, then the pieces of a long line, are
//! judged one by one, and the pieces that alone are dangerous for the same reason are the
//! part the reason is about.

use interpreter_core::sandbox::{Intent, Policy, Verdict};
use interpreter_protocol::{ApprovalPolicy, SandboxMode};
use std::ops::Range;

/// Pieces judged one at a time at most (each is a parse); past it, prefixes are halved.
const MAX_JUDGED: usize = 2_000;
/// A dangerous line longer than this is searched for the pieces that make it so.
const LONG_LINE: usize = 160;

/// The byte ranges of `command` that carry the danger `reason` names: the lines that are
/// dangerous for that reason on their own, narrowed to the commands inside a long line that
/// are. Empty when no part of it is dangerous alone (the danger is in how they combine).
pub(crate) fn locate(command: &str, reason: &str) -> Vec<Range<usize>> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Vec::new();
    }
    let judge = Judge::new();
    let lines = split_lines(command);
    let mut found = judge.matching(command, &lines, reason);
    if found.is_empty() {
        found.extend(judge.first_prefix(command, &lines, reason));
    }
    found
        .into_iter()
        .flat_map(|line| match line.len() > LONG_LINE {
            true => judge.narrow(command, line, reason),
            false => vec![line],
        })
        .collect()
}

/// Why the core finds `command` dangerous, if it does.
#[cfg(test)]
pub(crate) fn reason_of(command: &str) -> Option<String> {
    match Judge::new().0.decide(&Intent::Exec {
        command: command.into(),
    }) {
        Verdict::Ask {
            reason,
            dangerous: true,
        } => Some(reason),
        _ => None,
    }
}

/// The core's danger rules, through its policy.
struct Judge(Policy);

impl Judge {
    fn new() -> Judge {
        // Danger is judged before the sandbox or the approval policy count, so any mode that
        // asks will do.
        Judge(Policy::new(
            SandboxMode::WorkspaceWrite,
            ApprovalPolicy::OnRequest,
        ))
    }

    /// Whether `text` alone is dangerous for `reason`.
    fn names(&self, text: &str, reason: &str) -> bool {
        if text.trim().is_empty() {
            return false;
        }
        let intent = Intent::Exec {
            command: text.to_string(),
        };
        matches!(
            self.0.decide(&intent),
            Verdict::Ask { reason: r, dangerous: true } if r.trim() == reason
        )
    }

    /// The pieces (ranges of `text`) that alone are dangerous for `reason`; only the first
    /// [`MAX_JUDGED`] that are not blank are judged.
    fn matching(&self, text: &str, pieces: &[Range<usize>], reason: &str) -> Vec<Range<usize>> {
        pieces
            .iter()
            .filter(|r| !text[(*r).clone()].trim().is_empty())
            .take(MAX_JUDGED)
            .filter(|r| self.names(&text[(*r).clone()], reason))
            .cloned()
            .collect()
    }

    /// The piece where the danger is complete: the last of the shortest run of pieces from
    /// the first that is dangerous for `reason` (a danger that spans pieces, or one past
    /// those [`Judge::matching`] judges).
    fn first_prefix(
        &self,
        text: &str,
        pieces: &[Range<usize>],
        reason: &str,
    ) -> Option<Range<usize>> {
        let first = pieces.first()?;
        let upto = |n: usize| &text[first.start..pieces[n - 1].end];
        if !self.names(upto(pieces.len()), reason) {
            return None;
        }
        let (mut lo, mut hi) = (1, pieces.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.names(upto(mid), reason) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        pieces.get(lo - 1).cloned()
    }

    /// The parts of a long dangerous `line` that carry the danger: the commands between its
    /// separators, or smaller pieces still (inside quotes: `sh -c "…; rm -rf /"`).
    fn narrow(&self, text: &str, line: Range<usize>, reason: &str) -> Vec<Range<usize>> {
        let commands = split(text, line.clone(), true);
        let found = self.matching(text, &commands, reason);
        let found = if found.is_empty() {
            let all = self.finer(text, line.clone(), reason);
            if all.is_empty() {
                self.first_prefix(text, &commands, reason)
                    .into_iter()
                    .collect()
            } else {
                all
            }
        } else {
            found
        };
        if found.is_empty() {
            return vec![line];
        }
        found
            .into_iter()
            .flat_map(|r| match r.len() > LONG_LINE {
                true => {
                    let finer = self.finer(text, r.clone(), reason);
                    if finer.is_empty() { vec![r] } else { finer }
                }
                false => vec![r],
            })
            .collect()
    }

    /// The pieces of `range` between any quote, bracket or separator that are dangerous
    /// for `reason` alone.
    fn finer(&self, text: &str, range: Range<usize>, reason: &str) -> Vec<Range<usize>> {
        self.matching(text, &split(text, range, false), reason)
    }
}

/// The byte ranges of `text`'s lines, without their newlines (a trailing one starts no
/// line).
pub(crate) fn split_lines(text: &str) -> Vec<Range<usize>> {
    let body = text.trim_end_matches('\n');
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in body.char_indices() {
        if c == '\n' {
            out.push(start..i);
            start = i + 1;
        }
    }
    out.push(start..body.len());
    out
}

/// `range` of `text` cut at shell separators (`;`, `&`, `|`, parentheses, backquotes), each
/// piece trimmed of blanks. `quotes`: separators inside quotes do not cut, else quotes
/// and braces cut too.
fn split(text: &str, range: Range<usize>, quotes: bool) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut push = |r: Range<usize>| {
        let piece = &text[r.clone()];
        let start = r.start + (piece.len() - piece.trim_start().len());
        let end = r.start + piece.trim_end().len();
        if start < end {
            out.push(start..end);
        }
    };
    let mut start = range.start;
    let (mut single, mut double, mut escaped) = (false, false, false);
    for (i, c) in text[range.clone()].char_indices() {
        let at = range.start + i;
        if escaped {
            escaped = false;
            continue;
        }
        let cut = match c {
            '\\' if !single => {
                escaped = true;
                false
            }
            '\'' if quotes && !double => {
                single = !single;
                false
            }
            '"' if quotes && !single => {
                double = !double;
                false
            }
            ';' | '&' | '|' | '(' | ')' | '`' => !single && !double,
            '\'' | '"' | '{' | '}' => !quotes,
            _ => false,
        };
        if cut {
            push(start..at);
            start = at + c.len_utf8();
        }
    }
    push(start..range.end);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(command: &str) -> String {
        reason_of(command).unwrap_or_else(|| panic!("not dangerous: {command}"))
    }

    fn located(command: &str) -> Vec<&str> {
        locate(command, &reason(command))
            .into_iter()
            .map(|r| &command[r])
            .collect()
    }

    #[test]
    fn the_dangerous_line_is_found_after_blank_and_harmless_lines() {
        let blank = format!("{}rm -rf /tmp/x-something", "\n".repeat(60));
        assert_eq!(located(&blank), ["rm -rf /tmp/x-something"]);
        let mut many = String::new();
        for i in 0..300 {
            many.push_str(&format!("echo step {i}\n"));
        }
        many.push_str("rm -rf ~/projects\necho done\n");
        assert_eq!(located(&many), ["rm -rf ~/projects"]);
    }

    #[test]
    fn a_long_line_is_narrowed_to_the_command_that_is_dangerous() {
        let long = format!("echo '{}' && rm -rf /srv/data; echo ok", "x".repeat(4000));
        assert_eq!(located(&long), ["rm -rf /srv/data"]);
        let quoted = format!("sh -c \"echo {}; rm -rf /srv/data\"", "y".repeat(4000));
        assert_eq!(located(&quoted), ["rm -rf /srv/data"]);
    }

    #[test]
    fn a_danger_over_several_lines_is_where_it_is_complete() {
        // A here-document: no line alone is dangerous, the script is.
        let cmd = "echo start\nbash <<'EOF'\nrm -rf /srv/data\nEOF\necho end";
        let found = located(cmd);
        assert!(
            found.iter().any(|f| f.contains("rm -rf /srv/data")),
            "{found:?}"
        );
    }
}
