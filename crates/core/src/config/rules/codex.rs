//! Codex's `.rules` files: the Starlark subset its execpolicy reads, `prefix_rule(pattern =
//! [...], decision = "allow" | "prompt" | "forbidden", justification = "...", match = [...],
//! not_match = [...])`, with `#` comments, either quote, trailing commas and alternatives
//! (`["git", ["status", "log"]]`). Written by hand: the language needs only calls, strings and
//! lists, and a full Starlark interpreter would run code from a project's files.

use super::{CommandRule, Decision, Rule};

/// A file larger than this is refused whole (real rule files are a few KiB).
pub(crate) const MAX_FILE_BYTES: usize = 1 << 20;
/// Lists nest at most this deep (a pattern's alternatives, or an example's tokens).
const MAX_DEPTH: usize = 2;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
}

/// A token and the line it starts on.
type Spanned = (Tok, usize);

/// A parsed value: a string or a list, with its line.
#[derive(Debug, Clone)]
enum Value {
    Str(String, usize),
    List(Vec<Value>, usize),
}

impl Value {
    fn line(&self) -> usize {
        match self {
            Value::Str(_, l) | Value::List(_, l) => *l,
        }
    }
}

/// Reads one file's text; `name` is how errors name it. Any error means no rule of the file
/// loads: the error says `name:line: what`.
pub(crate) fn parse(name: &str, text: &str) -> Result<Vec<Rule<CommandRule>>, String> {
    if text.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{name}: larger than {} KiB, so it is not read",
            MAX_FILE_BYTES / 1024
        ));
    }
    let toks = lex(text).map_err(|(line, e)| format!("{name}:{line}: {e}"))?;
    let mut p = Parser { toks, at: 0 };
    let mut rules = Vec::new();
    while let Some((tok, line)) = p.next() {
        let Tok::Ident(func) = tok else {
            return Err(format!(
                "{name}:{line}: expected a call such as prefix_rule(...)"
            ));
        };
        let args = p
            .call_args(line)
            .map_err(|(l, e)| format!("{name}:{l}: {e}"))?;
        match func.as_str() {
            "prefix_rule" => rules
                .push(prefix_rule(name, line, args).map_err(|(l, e)| format!("{name}:{l}: {e}"))?),
            // Codex's metadata on where programs live: nothing to decide with here.
            "host_executable" => {}
            other => {
                return Err(format!(
                    "{name}:{line}: unknown function `{other}` (only prefix_rule is read)"
                ));
            }
        }
    }
    Ok(rules)
}

fn lex(text: &str) -> Result<Vec<Spanned>, (usize, String)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '#' => {
                while chars.peek().is_some_and(|c| *c != '\n') {
                    chars.next();
                }
            }
            '(' | ')' | '[' | ']' | ',' | '=' => out.push((Tok::Punct(c), line)),
            '"' | '\'' => {
                let start = line;
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None | Some('\n') => return Err((start, "unterminated string".into())),
                        Some(q) if q == c => break,
                        Some('\\') => match chars.next() {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some(e @ ('\\' | '"' | '\'')) => s.push(e),
                            Some(e) => {
                                return Err((start, format!("unknown escape `\\{e}` in a string")));
                            }
                            None => return Err((start, "unterminated string".into())),
                        },
                        Some(ch) => s.push(ch),
                    }
                }
                out.push((Tok::Str(s), start));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut id = String::from(c);
                while let Some(&n) = chars
                    .peek()
                    .filter(|n| n.is_ascii_alphanumeric() || **n == '_')
                {
                    id.push(n);
                    chars.next();
                }
                out.push((Tok::Ident(id), line));
            }
            other => return Err((line, format!("unexpected `{other}`"))),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Spanned>,
    at: usize,
}

type Failure = (usize, String);

impl Parser {
    fn next(&mut self) -> Option<Spanned> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|(t, _)| t)
    }

    fn last_line(&self) -> usize {
        self.toks.last().map_or(1, |(_, l)| *l)
    }

    fn expect(&mut self, want: char) -> Result<usize, Failure> {
        match self.next() {
            Some((Tok::Punct(c), l)) if c == want => Ok(l),
            Some((t, l)) => Err((l, format!("expected `{want}`, found {}", show(&t)))),
            None => Err((
                self.last_line(),
                format!("expected `{want}` before the end of the file"),
            )),
        }
    }

    /// `( name = value, ... )` after a function's name; positional values get no name.
    fn call_args(&mut self, line: usize) -> Result<Vec<(Option<String>, Value)>, Failure> {
        self.expect('(').map_err(|(_, e)| (line, e))?;
        let mut args = Vec::new();
        loop {
            if self.peek() == Some(&Tok::Punct(')')) {
                self.next();
                return Ok(args);
            }
            let name = match (self.toks.get(self.at), self.toks.get(self.at + 1)) {
                (Some((Tok::Ident(n), _)), Some((Tok::Punct('='), _))) => {
                    let n = n.clone();
                    self.at += 2;
                    Some(n)
                }
                _ => None,
            };
            args.push((name, self.value(0)?));
            match self.next() {
                Some((Tok::Punct(','), _)) => {}
                Some((Tok::Punct(')'), _)) => return Ok(args),
                Some((t, l)) => {
                    return Err((l, format!("expected `,` or `)`, found {}", show(&t))));
                }
                None => return Err((line, "prefix_rule( is never closed".into())),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, Failure> {
        match self.next() {
            Some((Tok::Str(s), l)) => Ok(Value::Str(s, l)),
            Some((Tok::Punct('['), l)) => {
                if depth >= MAX_DEPTH {
                    return Err((l, "lists nest too deeply".into()));
                }
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(&Tok::Punct(']')) {
                        self.next();
                        return Ok(Value::List(items, l));
                    }
                    items.push(self.value(depth + 1)?);
                    match self.next() {
                        Some((Tok::Punct(','), _)) => {}
                        Some((Tok::Punct(']'), _)) => return Ok(Value::List(items, l)),
                        Some((t, l2)) => {
                            return Err((l2, format!("expected `,` or `]`, found {}", show(&t))));
                        }
                        None => return Err((l, "a list is never closed".into())),
                    }
                }
            }
            Some((t, l)) => Err((
                l,
                format!("expected a string or a list, found {}", show(&t)),
            )),
            None => Err((self.last_line(), "the file ends inside a call".into())),
        }
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Ident(i) => format!("`{i}`"),
        Tok::Str(s) => format!("the string \"{s}\""),
        Tok::Punct(c) => format!("`{c}`"),
    }
}

fn prefix_rule(
    name: &str,
    line: usize,
    args: Vec<(Option<String>, Value)>,
) -> Result<Rule<CommandRule>, Failure> {
    let (mut pattern, mut decision, mut justification) = (None, None, None);
    let (mut matches, mut not_matches) = (None, None);
    for (i, (key, value)) in args.into_iter().enumerate() {
        // Codex's signature: prefix_rule(pattern, decision, justification, match, not_match).
        let key = key.unwrap_or_else(|| {
            ["pattern", "decision", "justification", "match", "not_match"]
                .get(i)
                .unwrap_or(&"?")
                .to_string()
        });
        let l = value.line();
        let slot = match key.as_str() {
            "pattern" => &mut pattern,
            "decision" => &mut decision,
            "justification" => &mut justification,
            "match" => &mut matches,
            "not_match" => &mut not_matches,
            other => return Err((l, format!("prefix_rule has no argument `{other}`"))),
        };
        if slot.replace(value).is_some() {
            return Err((l, format!("`{key}` is given twice")));
        }
    }
    let pattern = match pattern {
        Some(v) => tokens(v, true)?,
        None => return Err((line, "prefix_rule needs a `pattern`".into())),
    };
    if pattern.is_empty() || pattern.iter().any(Vec::is_empty) {
        return Err((
            line,
            "the pattern and its alternatives must not be empty".into(),
        ));
    }
    let decision = match decision {
        None => Decision::Allow,
        Some(Value::Str(s, l)) => Decision::parse(&s).ok_or((
            l,
            format!("decision must be \"allow\", \"prompt\" or \"forbidden\", not \"{s}\""),
        ))?,
        Some(v) => return Err((v.line(), "decision must be a string".into())),
    };
    let justification = match justification {
        None => None,
        Some(Value::Str(s, _)) => Some(s),
        Some(v) => return Err((v.line(), "justification must be a string".into())),
    };
    let rule = CommandRule::Prefix(pattern);
    for (examples, want) in [(matches, true), (not_matches, false)] {
        for (example, l) in examples.map(examples_of).transpose()?.unwrap_or_default() {
            let words: Vec<Option<String>> = example.iter().cloned().map(Some).collect();
            if rule.matches(&words) != want {
                let (field, verb) = match want {
                    true => ("match", "does not match"),
                    false => ("not_match", "matches"),
                };
                return Err((
                    l,
                    format!(
                        "the `{field}` example `{}` {verb} the rule's pattern",
                        example.join(" ")
                    ),
                ));
            }
        }
    }
    Ok(Rule {
        matcher: rule,
        decision,
        justification,
        source: format!("{name}:{line}"),
    })
}

/// A pattern: each element a string or a list of alternatives (`alternatives`), or an
/// example's tokens (strings only).
fn tokens(v: Value, alternatives: bool) -> Result<Vec<Vec<String>>, Failure> {
    let Value::List(items, _) = v else {
        return Err((v.line(), "expected a list".into()));
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::Str(s, _) => Ok(vec![s]),
            Value::List(alts, l) if alternatives => alts
                .into_iter()
                .map(|a| match a {
                    Value::Str(s, _) => Ok(s),
                    other => Err((other.line(), "alternatives must be strings".into())),
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|(_, e): Failure| (l, e)),
            other => Err((other.line(), "expected a string".into())),
        })
        .collect()
}

/// `match`/`not_match`: each example a command line (split as a shell would) or a token list.
fn examples_of(v: Value) -> Result<Vec<(Vec<String>, usize)>, Failure> {
    let Value::List(items, _) = v else {
        return Err((v.line(), "examples must be a list".into()));
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::Str(s, l) => shlex::split(&s)
                .map(|w| (w, l))
                .ok_or((l, format!("the example `{s}` cannot be split into words"))),
            Value::List(_, l) => {
                let words = tokens(item, false)?.into_iter().flatten().collect();
                Ok((words, l))
            }
        })
        .collect()
}
