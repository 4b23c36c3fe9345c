//! How a program reads its options, so the rules see what the program will see: getopt's short
//! clusters (`-rf`, `-ofile`, `-o file`), `getopt_long`'s long options with unique prefixes
//! (`--outp` is `--output`; a prefix that names several options is each of them), git's
//! parse-options (prefixes too, and `--no-NAME`), `--`, and where options stop (GNU tools take
//! them anywhere, wrappers stop at the command they run).
//!
//! One function, [`parse`], is what the read-only list, the dangerous rules and the wrappers
//! all use. A word whose text is only known when the command runs (`${U:--o}`, `$X`, `$(…)`,
//! a brace form, a glob that could match `-o…`) is [`Item::Unresolved`]: it could be any option.

use super::words::{Shape, Word};

/// How long options are matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Long {
    /// `getopt_long`: the full name or a unique prefix of it.
    Prefix,
    /// git's parse-options: like `Prefix`, and `--no-NAME` (or a prefix of it) negates `NAME`.
    Git,
    /// The full name only (find-like and hand-written parsers, git's diff options).
    Exact,
}

/// A program's option syntax.
#[derive(Debug)]
pub(super) struct Syntax {
    /// getopt's optstring: each letter, then `:` when it takes a value (the rest of the word
    /// or the next word) or `::` when the value is optional (the rest of the word only).
    short: &'static str,
    /// Long names; `name=` takes a value (`--name=v` or `--name v`), `name=?` an optional
    /// one (`--name=v` only).
    long: &'static [&'static str],
    /// Options end at the first operand (getopt's `+`), as wrappers read them; otherwise
    /// they may come anywhere before `--` (GNU's permutation, git's parse-options).
    stop_at_operand: bool,
    long_match: Long,
    /// `-5`, `--5`, `-+5` are numbers (`head -5`, `nice -5`, `grep -3`).
    numbers: bool,
}

impl Syntax {
    /// A GNU `getopt_long` program that permutes.
    pub(super) const fn gnu(short: &'static str, long: &'static [&'static str]) -> Syntax {
        Syntax {
            short,
            long,
            stop_at_operand: false,
            long_match: Long::Prefix,
            numbers: false,
        }
    }

    /// Options stop at the first operand (wrappers, POSIX order).
    pub(super) const fn stop(self) -> Syntax {
        Syntax {
            stop_at_operand: true,
            ..self
        }
    }

    /// Long options by their full name only.
    pub(super) const fn exact(self) -> Syntax {
        Syntax {
            long_match: Long::Exact,
            ..self
        }
    }

    /// git's parse-options.
    pub(super) const fn git(self) -> Syntax {
        Syntax {
            long_match: Long::Git,
            ..self
        }
    }

    /// `-NUM` is an option.
    pub(super) const fn numbers(self) -> Syntax {
        Syntax {
            numbers: true,
            ..self
        }
    }

    /// The short letter's argument: None when the program has no such letter.
    fn short_arg(&self, letter: char) -> Option<Arg> {
        for (i, c) in self.short.char_indices() {
            if c == ':' {
                continue;
            }
            if c == letter {
                let rest = &self.short[i + c.len_utf8()..];
                return Some(if rest.starts_with("::") {
                    Arg::Optional
                } else if rest.starts_with(':') {
                    Arg::Required
                } else {
                    Arg::None
                });
            }
        }
        None
    }

    fn long_entries(&self) -> impl Iterator<Item = (&'static str, Arg)> + '_ {
        self.long.iter().map(|e| {
            if let Some(n) = e.strip_suffix("=?") {
                (n, Arg::Optional)
            } else if let Some(n) = e.strip_suffix('=') {
                (n, Arg::Required)
            } else {
                (*e, Arg::None)
            }
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    None,
    Required,
    Optional,
}

/// One word (or one letter of a cluster) as the program reads it.
#[derive(Debug, Clone)]
pub(super) enum Item {
    /// A short option and its value.
    Short {
        letter: char,
        value: Option<Word>,
    },
    /// A long option by its full name; `negated` for git's `--no-NAME`.
    Long {
        name: &'static str,
        negated: bool,
        value: Option<Word>,
    },
    /// `-5`: a number option.
    Number,
    /// A long prefix that names several options: each of them. The program refuses it; we
    /// count it as any of them.
    Ambiguous(Vec<&'static str>),
    /// An option the program does not have, as written.
    Unknown,
    /// A word where an option may be, whose text is only known when the command runs.
    Unresolved(Word),
    Operand(Word),
}

/// A program's arguments as it reads them.
#[derive(Debug, Clone, Default)]
pub(super) struct Options {
    pub items: Vec<Item>,
    /// Where the words after the options start, for programs whose options stop at the first
    /// operand (the wrapped command); the number of words otherwise.
    pub rest: usize,
    /// Where the first operand (or word that may be one) is.
    pub first_operand: Option<usize>,
}

impl Options {
    /// Whether the option is given (`short` letter or `long` name), or may be: an ambiguous
    /// prefix that could be it counts.
    pub(super) fn has(&self, short: Option<char>, long: Option<&str>) -> bool {
        self.items.iter().any(|i| match i {
            Item::Short { letter, .. } => Some(*letter) == short,
            Item::Long {
                name,
                negated: false,
                ..
            } => Some(*name) == long,
            Item::Ambiguous(names) => long.is_some_and(|l| names.contains(&l)),
            _ => false,
        })
    }

    /// The value of the first such option that has one.
    pub(super) fn value(&self, short: Option<char>, long: Option<&str>) -> Option<&Word> {
        self.items.iter().find_map(|i| match i {
            Item::Short {
                letter,
                value: Some(v),
            } if Some(*letter) == short => Some(v),
            Item::Long {
                name,
                negated: false,
                value: Some(v),
            } if Some(*name) == long => Some(v),
            _ => None,
        })
    }

    /// Every word was read as the program reads it: no unknown or ambiguous option and no
    /// word only known when it runs.
    pub(super) fn understood(&self) -> bool {
        !self
            .items
            .iter()
            .any(|i| matches!(i, Item::Ambiguous(_) | Item::Unknown | Item::Unresolved(_)))
    }

    /// The operands (for programs that permute); words that may be operands included.
    pub(super) fn operands(&self) -> impl Iterator<Item = &Word> {
        self.items.iter().filter_map(|i| match i {
            Item::Operand(w) | Item::Unresolved(w) => Some(w),
            _ => None,
        })
    }
}

/// Reads `args` (the words after the program's name) as a program with `syntax` does.
pub(super) fn parse(args: &[Word], syntax: &Syntax) -> Options {
    let mut out = Options::default();
    let mut i = 0;
    let mut options_done = false;
    while let Some(word) = args.get(i) {
        i += 1;
        let shape = word.shape();
        if options_done || !matches!(&shape, Shape::Known(t) if t.starts_with('-') && t.len() > 1) {
            out.first_operand.get_or_insert(i - 1);
        }
        let text = match shape {
            _ if options_done => {
                out.items.push(Item::Operand(word.clone()));
                continue;
            }
            Shape::Known(t) if t == "--" => {
                options_done = true;
                if syntax.stop_at_operand {
                    out.rest = i;
                    return out;
                }
                continue;
            }
            Shape::Known(t) if t.starts_with('-') && t.len() > 1 => t,
            Shape::Known(_) | Shape::NotOption => {
                if syntax.stop_at_operand {
                    out.rest = i - 1;
                    return out;
                }
                out.items.push(Item::Operand(word.clone()));
                continue;
            }
            Shape::Unknown => {
                if syntax.stop_at_operand {
                    // It may be an option or the command; the wrapper's reader takes it as
                    // the command, whose name is then unknown.
                    out.rest = i - 1;
                    return out;
                }
                out.items.push(Item::Unresolved(word.clone()));
                continue;
            }
        };
        if syntax.numbers && is_number(&text) {
            out.items.push(Item::Number);
        } else if let Some(long) = text.strip_prefix("--") {
            i += long_option(long, args.get(i), syntax, &mut out.items);
        } else {
            i += short_cluster(&text[1..], args.get(i), syntax, &mut out.items);
        }
    }
    out.rest = args.len();
    out
}

/// `-5`, `--5`, `-+5`.
fn is_number(text: &str) -> bool {
    let digits = text
        .strip_prefix("--")
        .or_else(|| text.strip_prefix("-+"))
        .or_else(|| text.strip_prefix('-'))
        .unwrap_or("");
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Reads one `--name[=value]`; how many more words it took (0 or 1).
fn long_option(arg: &str, next: Option<&Word>, syntax: &Syntax, items: &mut Vec<Item>) -> usize {
    let (name, attached) = match arg.split_once('=') {
        Some((n, v)) => (n, Some(Word::lit(v))),
        None => (arg, None),
    };
    match resolve_long(name, syntax) {
        Resolved::One {
            name,
            negated,
            arg: kind,
        } => {
            let takes_next = attached.is_none() && kind == Arg::Required && !negated;
            let value = if takes_next { next.cloned() } else { attached };
            items.push(Item::Long {
                name,
                negated,
                value,
            });
            usize::from(takes_next && next.is_some())
        }
        Resolved::Several(names) => {
            items.push(Item::Ambiguous(names));
            0
        }
        Resolved::None => {
            items.push(Item::Unknown);
            0
        }
    }
}

enum Resolved {
    One {
        name: &'static str,
        negated: bool,
        arg: Arg,
    },
    Several(Vec<&'static str>),
    None,
}

/// The long option `name` names, as `getopt_long` (or git) resolves it: the exact name wins,
/// then a unique prefix; a prefix of several is all of them.
fn resolve_long(name: &str, syntax: &Syntax) -> Resolved {
    if name.is_empty() {
        return Resolved::None;
    }
    let entries: Vec<(&'static str, Arg)> = syntax.long_entries().collect();
    if let Some(&(n, arg)) = entries.iter().find(|(n, _)| *n == name) {
        return Resolved::One {
            name: n,
            negated: false,
            arg,
        };
    }
    let negated_name = (syntax.long_match == Long::Git)
        .then(|| name.strip_prefix("no-"))
        .flatten();
    if let Some(base) = negated_name
        && let Some(&(n, arg)) = entries.iter().find(|(n, _)| *n == base)
    {
        return Resolved::One {
            name: n,
            negated: true,
            arg,
        };
    }
    if syntax.long_match == Long::Exact {
        return Resolved::None;
    }
    // Candidates: (name, negated, arg).
    let mut found: Vec<(&'static str, bool, Arg)> = entries
        .iter()
        .filter(|(n, _)| n.starts_with(name))
        .map(|&(n, a)| (n, false, a))
        .collect();
    if let Some(base) = negated_name.filter(|b| !b.is_empty()) {
        found.extend(
            entries
                .iter()
                .filter(|(n, _)| n.starts_with(base))
                .map(|&(n, a)| (n, true, a)),
        );
    } else if syntax.long_match == Long::Git && "no-".starts_with(name) {
        // `--n`, `--no`: also every negation.
        found.extend(entries.iter().map(|&(n, a)| (n, true, a)));
    }
    match found.as_slice() {
        [] => Resolved::None,
        [(name, negated, arg)] => Resolved::One {
            name,
            negated: *negated,
            arg: *arg,
        },
        several => {
            let mut names: Vec<&'static str> = several.iter().map(|(n, _, _)| *n).collect();
            names.dedup();
            Resolved::Several(names)
        }
    }
}

/// Reads the letters of one `-abc` word; how many more words it took (0 or 1).
fn short_cluster(
    letters: &str,
    next: Option<&Word>,
    syntax: &Syntax,
    items: &mut Vec<Item>,
) -> usize {
    for (k, letter) in letters.char_indices() {
        let rest = &letters[k + letter.len_utf8()..];
        match syntax.short_arg(letter) {
            None => items.push(Item::Unknown),
            Some(Arg::None) => items.push(Item::Short {
                letter,
                value: None,
            }),
            Some(Arg::Optional) => {
                let value = (!rest.is_empty()).then(|| Word::lit(rest));
                items.push(Item::Short { letter, value });
                return 0;
            }
            Some(Arg::Required) if !rest.is_empty() => {
                items.push(Item::Short {
                    letter,
                    value: Some(Word::lit(rest)),
                });
                return 0;
            }
            Some(Arg::Required) => {
                items.push(Item::Short {
                    letter,
                    value: next.cloned(),
                });
                return usize::from(next.is_some());
            }
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Syntax = Syntax::gnu(
        "bcCdfgik:mMno:rRsS:t:T:uVz",
        &[
            "output=",
            "compress-program=",
            "check=?",
            "reverse",
            "random-sort",
        ],
    );
    const PUSH: Syntax = Syntax::gnu("dfn", &["delete", "dry-run", "force", "follow-tags"]).git();

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::lit).collect()
    }

    #[test]
    fn long_options_resolve_as_getopt_long_does() {
        let o = parse(&words("--outp=keep.txt x"), &SORT);
        assert!(o.has(Some('o'), Some("output")));
        assert_eq!(o.value(None, Some("output")), Some(&Word::lit("keep.txt")));
        let o = parse(&words("--compress-prog sh x"), &SORT);
        assert!(o.has(None, Some("compress-program")));
        assert_eq!(o.operands().count(), 1);
        // `--r` could be `--reverse` or `--random-sort`: each of them.
        let o = parse(&words("--r"), &SORT);
        assert!(o.has(None, Some("reverse")) && o.has(None, Some("random-sort")));
        assert!(!o.understood());
        assert!(!parse(&words("--frobnicate"), &SORT).understood());
        assert!(!parse(&words("--outp"), &SORT.exact()).has(None, Some("output")));
    }

    #[test]
    fn short_clusters_take_their_values() {
        let o = parse(&words("-nrokeep.txt x"), &SORT);
        assert!(o.has(Some('o'), None));
        assert_eq!(o.value(Some('o'), None), Some(&Word::lit("keep.txt")));
        let o = parse(&words("-k -o x"), &SORT);
        assert!(!o.has(Some('o'), None), "-o is the key's value");
        assert_eq!(o.operands().count(), 1);
    }

    #[test]
    fn git_negations_and_prefixes() {
        let o = parse(&words("--dele origin main"), &PUSH);
        assert!(o.has(Some('d'), Some("delete")));
        assert!(!parse(&words("--no-force"), &PUSH).has(None, Some("force")));
        // `--d` is `--delete` or `--dry-run`; `--no-f` several negations.
        assert!(parse(&words("--d"), &PUSH).has(None, Some("delete")));
        assert!(!parse(&words("--no-f"), &PUSH).understood());
    }

    #[test]
    fn options_stop_where_the_program_stops_reading_them() {
        let env = Syntax::gnu("iu:", &["unset="]).stop();
        let o = parse(&words("-u X -- ls -la"), &env);
        assert_eq!(o.rest, 3);
        let o = parse(&words("-i ls -u x"), &env);
        assert_eq!(o.rest, 1);
        let o = parse(&words("a -- -o"), &SORT);
        assert_eq!(o.operands().count(), 2);
        assert!(!o.has(Some('o'), None));
    }
}
