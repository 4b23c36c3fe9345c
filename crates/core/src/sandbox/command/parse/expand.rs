//! Expanding one word node as far as it can be before the command runs: quoting, escapes,
//! `$'…'`, variables the script set, `~`, and substitutions (whose commands are walked too).

use tree_sitter::Node;

use super::super::words::{Part, Unknown, Word, ansi_c};
use super::{Walker, named_children};

impl Walker<'_> {
    /// An unquoted here-document's text: expansions and substitutions are live in it.
    pub(super) fn heredoc_body(&mut self, n: Node) -> Word {
        let mut parts = Vec::new();
        let mut pos = n.start_byte();
        for c in named_children(n) {
            if c.start_byte() > pos {
                parts.push(Part::Lit {
                    text: self.src[pos..c.start_byte()].to_string(),
                    glob: false,
                });
            }
            match c.kind() {
                "heredoc_content" => parts.push(Part::Lit {
                    text: self.text(c).to_string(),
                    glob: false,
                }),
                _ => self.parts(c, true, false, &mut parts),
            }
            pos = c.end_byte();
        }
        if n.end_byte() > pos {
            parts.push(Part::Lit {
                text: self.src[pos..n.end_byte()].to_string(),
                glob: false,
            });
        }
        Word { parts }
    }

    /// The parts of one word node; `quoted` inside double quotes, `first` at a word's start
    /// (where `~` expands).
    pub(super) fn parts(&mut self, n: Node, quoted: bool, first: bool, out: &mut Vec<Part>) {
        if n.is_error() || n.is_missing() {
            self.broken("the command could not be parsed");
            return;
        }
        let text = self.text(n);
        match n.kind() {
            "word" | "command_name" if n.named_child_count() == 0 => {
                if has_raw_newline(text) {
                    // Bash ends a word at a newline; tree-sitter sometimes does not (a line
                    // that starts with `\`), so its reading cannot be trusted.
                    self.broken("the command could not be parsed as bash would");
                    return;
                }
                unescape_word(text, first, out)
            }
            "command_name" => {
                for c in named_children(n) {
                    self.parts(c, quoted, first, out);
                }
            }
            "raw_string" => out.push(Part::Lit {
                text: text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text)
                    .to_string(),
                glob: false,
            }),
            "ansi_c_string" => out.push(Part::Lit {
                text: ansi_c(
                    text.strip_prefix("$'")
                        .and_then(|t| t.strip_suffix('\''))
                        .unwrap_or(text),
                ),
                glob: false,
            }),
            "string" | "translated_string" => self.string(n, out),
            "concatenation" => {
                for (i, c) in named_children(n).into_iter().enumerate() {
                    self.parts(c, quoted, first && i == 0, out);
                }
            }
            "simple_expansion" => {
                let name = named_children(n)
                    .first()
                    .map(|c| self.text(*c))
                    .unwrap_or("");
                let value = self.vars.lookup(name);
                if quoted {
                    out.extend(value.into_iter().filter(|p| *p != Part::Split));
                } else {
                    out.extend(self.vars.unquoted(value));
                }
            }
            "expansion" => {
                let kids = named_children(n);
                let plain = n.child_count() == 3
                    && kids.len() == 1
                    && matches!(kids[0].kind(), "variable_name" | "special_variable_name");
                if plain {
                    let value = self.vars.lookup(self.text(kids[0]));
                    if quoted {
                        out.extend(value.into_iter().filter(|p| *p != Part::Split));
                    } else {
                        out.extend(self.vars.unquoted(value));
                    }
                } else {
                    self.scan(n);
                    out.push(Part::Unknown(Unknown::Other));
                }
            }
            "command_substitution" | "process_substitution" => {
                let download = self.substitution(n);
                out.push(Part::Unknown(Unknown::Output { download }));
            }
            "number" if n.named_child_count() == 0 => out.push(Part::Lit {
                text: text.to_string(),
                glob: false,
            }),
            "extglob_pattern" => out.push(Part::Lit {
                text: text.to_string(),
                glob: true,
            }),
            _ => {
                self.scan(n);
                out.push(Part::Unknown(Unknown::Other));
            }
        }
    }

    /// A double-quoted string. tree-sitter leaves newlines between its content nodes out of
    /// them: the text between children is taken from the source.
    fn string(&mut self, n: Node, out: &mut Vec<Part>) {
        if n.kind() == "translated_string" {
            for c in named_children(n) {
                self.string(c, out);
            }
            return;
        }
        let inner_start = n.start_byte() + 1;
        let inner_end = n.end_byte().saturating_sub(1).max(inner_start);
        let mut pos = inner_start;
        let gap = |w: &mut Self, from: usize, to: usize, out: &mut Vec<Part>| {
            if to > from {
                out.push(Part::Lit {
                    text: unescape_double_quoted(&w.src[from..to]),
                    glob: false,
                });
            }
        };
        for c in named_children(n) {
            gap(self, pos, c.start_byte(), out);
            match c.kind() {
                "string_content" => out.push(Part::Lit {
                    text: unescape_double_quoted(self.text(c)),
                    glob: false,
                }),
                _ => self.parts(c, true, false, out),
            }
            pos = c.end_byte();
        }
        gap(self, pos, inner_end, out);
        out.push(Part::Lit {
            text: String::new(),
            glob: false,
        });
    }
}

/// An unquoted word's text: backslashes quote the next character, `\<newline>` disappears,
/// and a leading `~` is the home folder.
fn unescape_word(text: &str, first: bool, out: &mut Vec<Part>) {
    let mut rest = text;
    if first && rest.starts_with('~') {
        let end = rest.find('/').unwrap_or(rest.len());
        let user = &rest[1..end];
        if user.is_empty()
            || user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            out.push(Part::Home);
            rest = &rest[end..];
        } else if user == "+" || user == "-" {
            out.push(Part::Unknown(Unknown::Other));
            rest = &rest[end..];
        }
    }
    let mut lit = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(e) => {
                    push_lit(out, std::mem::take(&mut lit), true);
                    push_lit(out, e.to_string(), false);
                }
            }
        } else {
            lit.push(c);
        }
    }
    push_lit(out, lit, true);
}

/// A newline in an unquoted word that no backslash escapes.
fn has_raw_newline(text: &str) -> bool {
    let mut escaped = false;
    for c in text.chars() {
        match c {
            '\n' if !escaped => return true,
            '\\' if !escaped => escaped = true,
            _ => escaped = false,
        }
    }
    false
}

fn push_lit(out: &mut Vec<Part>, text: String, glob: bool) {
    if text.is_empty() {
        return;
    }
    if let Some(Part::Lit { text: t, glob: g }) = out.last_mut()
        && *g == glob
    {
        t.push_str(&text);
        return;
    }
    out.push(Part::Lit { text, glob });
}

fn unescape_double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    out.extend(chars.next());
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}
