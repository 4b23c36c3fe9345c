//! Recognising shell commands that are really `apply_patch` calls.

/// Recognise a shell command that is really an apply_patch call:
/// `apply_patch <<'EOF'\n…\nEOF` (also `applypatch`, quotes optional, any
/// heredoc delimiter word), optionally prefixed by `cd <dir> && `. Also
/// `apply_patch "<patch text>"` with the whole patch as one argument.
/// Returns (optional cd dir, patch text). None for anything else.
pub fn parse_shell_invocation(command: &str) -> Option<(Option<String>, String)> {
    let mut rest = command.trim_start();

    let mut cd_dir = None;
    if let Some(after_cd) = strip_command_name(rest, &["cd"]) {
        let (dir, after_dir) = parse_word(after_cd.trim_start_matches([' ', '\t']))?;
        let after_and = after_dir
            .trim_start_matches([' ', '\t'])
            .strip_prefix("&&")?;
        rest = after_and.trim_start();
        cd_dir = Some(dir);
    }

    let after_name = strip_command_name(rest, &["apply_patch", "applypatch"])?;
    let args = after_name.trim_start_matches([' ', '\t']);

    let patch = if let Some(here_string) = args.strip_prefix("<<<") {
        single_argument(here_string.trim_start_matches([' ', '\t']))?
    } else if let Some(heredoc) = args.strip_prefix("<<") {
        heredoc_body(heredoc)?
    } else {
        single_argument(args)?
    };
    Some((cd_dir, patch))
}

/// If `text` starts with one of `names` as a whole word, return what follows.
fn strip_command_name<'a>(text: &'a str, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|name| {
        let rest = text.strip_prefix(name)?;
        match rest.chars().next() {
            None => Some(rest),
            Some(c) if c.is_whitespace() || c == '<' => Some(rest),
            Some(_) => None,
        }
    })
}

/// A single argument holding the whole patch; anything after it (other than
/// whitespace) disqualifies the command.
fn single_argument(text: &str) -> Option<String> {
    let (word, rest) = parse_word(text)?;
    if !rest.trim().is_empty() || !word.contains("*** ") {
        return None;
    }
    Some(word)
}

/// Parse the part after `<<`: `[-][ ]DELIM` (DELIM optionally quoted), the
/// end of that line, then the body up to a line equal to DELIM.
fn heredoc_body(text: &str) -> Option<String> {
    let (strip_tabs, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (delimiter, after) = parse_word(text.trim_start_matches([' ', '\t']))?;
    if delimiter.is_empty() {
        return None;
    }
    let (first_line_rest, body) = after.split_once('\n')?;
    if !first_line_rest.trim().is_empty() {
        return None;
    }

    let mut body_lines: Vec<&str> = body.split('\n').collect();
    // Lines after the terminator must be blank (no chained commands).
    let terminator = body_lines.iter().position(|line| {
        let line = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        line.trim_end() == delimiter
    });
    match terminator {
        Some(idx) => {
            if body_lines[idx + 1..].iter().any(|l| !l.trim().is_empty()) {
                return None;
            }
            body_lines.truncate(idx);
        }
        None => {
            // Tolerate a missing terminator when the patch itself is complete.
            while body_lines.last().is_some_and(|l| l.trim().is_empty()) {
                body_lines.pop();
            }
            if body_lines.last().map(|l| l.trim()) != Some(super::parser::END_PATCH_MARKER) {
                return None;
            }
        }
    }

    let mut patch = String::new();
    for line in body_lines {
        let line = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        patch.push_str(line.strip_suffix('\r').unwrap_or(line));
        patch.push('\n');
    }
    Some(patch)
}

/// Parse one shell word made of unquoted, `'single'` and `"double"` quoted
/// pieces. Returns the word and the remaining text, or `None` for an empty
/// word or an unterminated quote.
fn parse_word(text: &str) -> Option<(String, &str)> {
    let mut word = String::new();
    let mut chars = text.char_indices().peekable();
    let mut consumed_any = false;
    while let Some(&(idx, c)) = chars.peek() {
        match c {
            '\'' => {
                chars.next();
                loop {
                    let (_, c) = chars.next()?;
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                chars.next();
                loop {
                    let (_, c) = chars.next()?;
                    match c {
                        '"' => break,
                        '\\' => {
                            let (_, next) = chars.next()?;
                            match next {
                                '"' | '\\' | '$' | '`' => word.push(next),
                                '\n' => {}
                                other => {
                                    word.push('\\');
                                    word.push(other);
                                }
                            }
                        }
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                chars.next();
                match chars.next() {
                    Some((_, '\n')) => {}
                    Some((_, next)) => word.push(next),
                    None => word.push('\\'),
                }
            }
            c if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')') => {
                return consumed_any.then(|| (word, &text[idx..]));
            }
            c => {
                chars.next();
                word.push(c);
            }
        }
        consumed_any = true;
    }
    consumed_any.then_some((word, ""))
}
