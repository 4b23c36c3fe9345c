//! Shell words after expansion, as far as they can be known before the command runs: literal
//! text (with which characters still glob), the home folder, and expansions whose value only
//! the running shell knows. Also where a path word points ([`Location`]).

use std::collections::HashMap;

/// What an expansion whose value is not known came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Unknown {
    /// A variable the script did not set (it comes from the environment).
    EnvVar(String),
    /// The output of a command (`$(…)`, `<(…)`); `download` when that command fetches from the
    /// network.
    Output { download: bool },
    /// Anything else: `${x:-…}`, arithmetic, brace expansion, positional parameters.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    /// Literal text; `glob` when its `*`, `?` and `[` still match file names.
    Lit {
        text: String,
        glob: bool,
    },
    /// The home folder (`~`, `~user`, `$HOME`).
    Home,
    Unknown(Unknown),
    /// A field boundary from word splitting (only while a word is being built).
    Split,
}

/// One shell word after expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Word {
    pub parts: Vec<Part>,
}

impl Word {
    pub(super) fn lit(text: &str) -> Word {
        Word {
            parts: vec![Part::Lit {
                text: text.to_string(),
                glob: false,
            }],
        }
    }

    /// The text, when every part is literal.
    pub(super) fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit { text, .. } => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }

    pub(super) fn is(&self, s: &str) -> bool {
        self.literal().as_deref() == Some(s)
    }

    pub(super) fn starts_with(&self, prefix: &str) -> bool {
        self.literal().is_some_and(|l| l.starts_with(prefix))
    }

    /// Whether an expansion of unknown value is part of the word.
    pub(super) fn has_unknown(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Unknown(_)))
    }

    /// Whether any part is the output of a download.
    pub(super) fn is_downloaded(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::Unknown(Unknown::Output { download: true })))
    }

    /// Whether an unquoted glob character is part of the word.
    pub(super) fn globs(&self) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Lit { text, glob: true } => text.contains(['*', '?', '[']),
            _ => false,
        })
    }

    /// Whether unquoted text holds a brace expansion (`{a,b}`, `-{delete,print}`, `{1..3}`),
    /// which we do not evaluate (`{}` and `{x}` are no expansion).
    pub(super) fn braces(&self) -> bool {
        let unquoted: String = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Lit { text, glob: true } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        has_brace_expansion(&unquoted)
    }

    /// How an option parser sees the word: its text when it is known, or whether it could
    /// start with `-` (an option) when it is not.
    pub(super) fn shape(&self) -> Shape {
        let fixed = !self.braces()
            && !self.has_unknown()
            && !self.parts.contains(&Part::Home)
            && !self.globs()
            && !self.extglob();
        if fixed {
            return Shape::Known(self.literal().unwrap_or_default());
        }
        // A glob is the names it matches, a brace form the words it makes: either may start
        // with `-` unless its first character is fixed text.
        match self.first_char() {
            None | Some(('-', _)) => Shape::Unknown,
            Some(('*' | '?' | '[' | '{' | '@' | '+' | '!', true)) => Shape::Unknown,
            Some(_) => Shape::NotOption,
        }
    }

    /// Whether the word is known text, or names that cannot be options (a path under the
    /// home folder, a glob such as `src/*.rs`): nothing in it is decided when it runs.
    pub(super) fn resolved(&self) -> bool {
        !self.has_unknown() && !self.braces() && self.shape() != Shape::Unknown
    }

    /// Whether the word, as a glob, could match the file name `name` (quoted parts match
    /// themselves; `*`, `?` and `[…]` in unquoted text match as bash's globs do).
    pub(super) fn may_match(&self, name: &str) -> bool {
        let mut pattern = Vec::new();
        for p in &self.parts {
            match p {
                Part::Lit { text, glob: true } => pattern.extend(glob_tokens(text)),
                Part::Lit { text, glob: false } => pattern.extend(text.chars().map(Tok::Char)),
                // Not known: could be anything.
                _ => pattern.push(Tok::Star),
            }
        }
        let name: Vec<char> = name.chars().collect();
        glob_match(&pattern, &name)
    }

    /// The first character of the word, and whether it is in unquoted text. None when the
    /// word starts with a part whose text is not known.
    fn first_char(&self) -> Option<(char, bool)> {
        for p in &self.parts {
            match p {
                Part::Lit { text, glob } => {
                    if let Some(c) = text.chars().next() {
                        return Some((c, *glob));
                    }
                }
                Part::Home => return Some(('/', false)),
                Part::Unknown(_) | Part::Split => return None,
            }
        }
        None
    }

    /// An extended glob (`@(a|b)`, `+(x)`, `!(y)`) in unquoted text.
    fn extglob(&self) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Lit { text, glob: true } => ["@(", "+(", "!(", "*(", "?("]
                .iter()
                .any(|g| text.contains(g)),
            _ => false,
        })
    }

    /// The word as shell text for a nested script: literal text as it is, the home folder as
    /// `~`, an environment variable as `${NAME}` (still unknown to the nested analysis). Err
    /// when a part cannot be written back (a command's output): the reason.
    pub(super) fn script_text(&self) -> Result<String, &'static str> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit { text, .. } => out.push_str(text),
                Part::Home => out.push('~'),
                Part::Unknown(Unknown::EnvVar(name)) => {
                    out.push_str("${");
                    out.push_str(name);
                    out.push('}');
                }
                Part::Unknown(Unknown::Output { download: true }) => {
                    return Err(super::DOWNLOAD_RUN);
                }
                Part::Unknown(_) => return Err(super::UNCHECKABLE_SCRIPT),
                Part::Split => out.push(' '),
            }
        }
        Ok(out)
    }
}

/// How an option parser sees a word ([`Word::shape`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Shape {
    /// Its text, known before it runs.
    Known(String),
    /// Not known, but it cannot start with `-`.
    NotOption,
    /// Only known when it runs, and it may start with `-`.
    Unknown,
}

/// One element of a glob pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Char(char),
    /// `?`
    Any,
    /// `*`
    Star,
    /// `[…]`: the ranges it matches, negated by `!` or `^`.
    Class {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
}

fn glob_tokens(text: &str) -> Vec<Tok> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => out.push(Tok::Star),
            '?' => out.push(Tok::Any),
            '[' => {
                let mut k = i + 1;
                let negated = matches!(chars.get(k), Some('!' | '^'));
                if negated {
                    k += 1;
                }
                let start = k;
                // `]` right after `[` or `[!` is a member.
                if chars.get(k) == Some(&']') {
                    k += 1;
                }
                while k < chars.len() && chars[k] != ']' {
                    k += 1;
                }
                if k >= chars.len() {
                    out.push(Tok::Char('['));
                } else {
                    let members = &chars[start..k];
                    let mut ranges = Vec::new();
                    let mut m = 0;
                    while m < members.len() {
                        if m + 2 < members.len() && members[m + 1] == '-' {
                            ranges.push((members[m], members[m + 2]));
                            m += 3;
                        } else {
                            ranges.push((members[m], members[m]));
                            m += 1;
                        }
                    }
                    out.push(Tok::Class { ranges, negated });
                    i = k;
                }
            }
            c => out.push(Tok::Char(c)),
        }
        i += 1;
    }
    out
}

fn glob_match(pattern: &[Tok], name: &[char]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((Tok::Star, rest)) => (0..=name.len()).any(|k| glob_match(rest, &name[k..])),
        Some((tok, rest)) => {
            let Some((&c, tail)) = name.split_first() else {
                return false;
            };
            let ok = match tok {
                Tok::Char(p) => *p == c,
                Tok::Any | Tok::Star => true,
                Tok::Class { ranges, negated } => {
                    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
                }
            };
            ok && glob_match(rest, tail)
        }
    }
}

/// Whether unquoted shell text holds a brace expansion: `{` … `}` around a top-level comma, or
/// a sequence `{a..b}`.
fn has_brace_expansion(text: &str) -> bool {
    let bytes = text.as_bytes();
    for (start, &b) in bytes.iter().enumerate() {
        if b != b'{' {
            continue;
        }
        let mut depth = 0usize;
        let mut comma = false;
        for (k, &c) in bytes[start..].iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b',' if depth == 1 => comma = true,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        let inner = &text[start + 1..start + k];
                        if comma || inner.contains("..") {
                            return true;
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    false
}

/// The working folder of a command, relative to the session's working folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cwd {
    /// Inside the workspace: the components below its root.
    Inside(Vec<String>),
    /// Somewhere else, or not known (`cd /`, `cd "$X"`, `cd ..` at the root).
    Unknown,
}

/// Where a path word points, judged from its text alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Location {
    /// Below the workspace root.
    Inside,
    /// The workspace root itself, or a glob that matches everything in it (`.`, `*`, `./*`).
    Root,
    /// An absolute path, or one that climbs out of the workspace.
    Outside,
    /// The home folder or a path under it.
    Home,
    /// Only known when the command runs.
    Unknown,
}

impl Location {
    /// Whether deleting (recursively) there can destroy more than part of the workspace.
    pub(super) fn unsafe_to_delete(self) -> bool {
        self != Location::Inside
    }

    /// Whether changing it (recursively) reaches beyond the workspace.
    pub(super) fn outside_workspace(self) -> bool {
        matches!(self, Location::Outside | Location::Home | Location::Unknown)
    }

    pub(super) fn describe(self) -> &'static str {
        match self {
            Location::Inside => "inside the workspace",
            Location::Root => "of the whole workspace",
            Location::Outside => "outside the workspace",
            Location::Home => "in the home folder",
            Location::Unknown => "of a path only known when the command runs",
        }
    }
}

/// Where `word` points when the command runs in `cwd`. Absolute paths count as outside, even
/// one that names a folder inside the workspace: the judgement uses the text alone.
pub(super) fn locate(word: &Word, cwd: &Cwd) -> Location {
    match word.parts.first() {
        Some(Part::Home) => return Location::Home,
        None => return Location::Inside,
        _ => {}
    }
    if word.has_unknown() || word.braces() || word.parts.contains(&Part::Home) {
        return Location::Unknown;
    }
    let Some(text) = word.literal() else {
        return Location::Unknown;
    };
    if text.is_empty() {
        // `rm -rf ""` deletes nothing.
        return Location::Inside;
    }
    if text.starts_with('/') {
        return Location::Outside;
    }
    let Cwd::Inside(base) = cwd else {
        return Location::Unknown;
    };
    let mut path: Vec<&str> = base.iter().map(String::as_str).collect();
    for comp in text.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                if path.pop().is_none() {
                    return Location::Outside;
                }
            }
            c => path.push(c),
        }
    }
    let Some(first) = path.first() else {
        return Location::Root;
    };
    // A glob in the top component that matches (nearly) everything: `*`, `.*`, `?*`, `[a-z]*`.
    if path.len() == 1 && word.globs() && matches_everything(first) {
        return Location::Root;
    }
    Location::Inside
}

fn matches_everything(component: &str) -> bool {
    let mut rest = String::new();
    let mut in_class = false;
    for c in component.chars() {
        match c {
            '[' => in_class = true,
            ']' => in_class = false,
            '*' | '?' => {}
            c if !in_class => rest.push(c),
            _ => {}
        }
    }
    rest.is_empty() || rest == "."
}

/// Shell variables as far as the script so far set them.
#[derive(Debug, Clone, Default)]
pub(super) struct Vars {
    /// Set by the script: Some(value), or None when set to something unknown.
    set: HashMap<String, Option<Vec<Part>>>,
    /// `IFS` was changed: unquoted expansions split in ways we do not follow.
    pub ifs_changed: bool,
}

impl Vars {
    pub(super) fn assign(&mut self, name: &str, value: Option<Vec<Part>>) {
        if name == "IFS" {
            self.ifs_changed = true;
        }
        self.set.insert(name.to_string(), value);
    }

    /// The value of `$name`.
    pub(super) fn lookup(&self, name: &str) -> Vec<Part> {
        let special = name.is_empty()
            || name.chars().all(|c| c.is_ascii_digit())
            || matches!(name, "@" | "*" | "#" | "?" | "-" | "$" | "!" | "_");
        if special {
            return vec![Part::Unknown(Unknown::Other)];
        }
        match self.set.get(name) {
            Some(Some(v)) => v.clone(),
            Some(None) => vec![Part::Unknown(Unknown::Other)],
            None if name == "HOME" => vec![Part::Home],
            // `$PWD` is the workspace itself (or wherever `cd` went): never a safe target.
            None if name == "PWD" || name == "OLDPWD" => vec![Part::Unknown(Unknown::Other)],
            None => vec![Part::Unknown(Unknown::EnvVar(name.to_string()))],
        }
    }

    /// `value` as an unquoted expansion yields it: split into fields at blanks, globbing.
    pub(super) fn unquoted(&self, value: Vec<Part>) -> Vec<Part> {
        let mut out = Vec::new();
        for p in value {
            match p {
                Part::Lit { text, .. } if self.ifs_changed && !text.is_empty() => {
                    out.push(Part::Unknown(Unknown::Other));
                }
                Part::Lit { text, .. } => {
                    for (i, field) in text.split([' ', '\t', '\n']).enumerate() {
                        if i > 0 {
                            out.push(Part::Split);
                        }
                        if !field.is_empty() {
                            out.push(Part::Lit {
                                text: field.to_string(),
                                glob: true,
                            });
                        }
                    }
                }
                other => out.push(other),
            }
        }
        out
    }
}

/// Splits parts at [`Part::Split`] into words, dropping fields that are empty (an unquoted
/// expansion of an empty value is no word at all). A brace form (`-{delete,print}`,
/// `{1..3000}`) becomes a word only known when it runs: bash makes it several words, which
/// we do not evaluate, so no rule may read its text as one word.
pub(super) fn split_fields(parts: Vec<Part>) -> Vec<Word> {
    split_words(parts)
        .into_iter()
        .map(|w| {
            if w.braces() {
                Word {
                    parts: vec![Part::Unknown(Unknown::Other)],
                }
            } else {
                w
            }
        })
        .collect()
}

fn split_words(parts: Vec<Part>) -> Vec<Word> {
    let mut words = Vec::new();
    let mut cur = Vec::new();
    for p in parts {
        if p == Part::Split {
            if !cur.is_empty() {
                words.push(Word {
                    parts: std::mem::take(&mut cur),
                });
            }
        } else {
            cur.push(p);
        }
    }
    if !cur.is_empty() {
        words.push(Word { parts: cur });
    }
    words
}

/// Decodes the body of `$'…'` (without the quotes).
pub(super) fn ansi_c(body: &str) -> String {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let radix_digits = |chars: &mut std::iter::Peekable<std::str::Chars>, radix, max| {
            let mut v = 0u32;
            let mut n = 0;
            while n < max {
                match chars.peek().and_then(|c| c.to_digit(radix)) {
                    Some(d) => {
                        v = v * radix + d;
                        chars.next();
                        n += 1;
                    }
                    None => break,
                }
            }
            (v, n)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                let (more, n) = radix_digits(&mut chars, 8, 2);
                v = v * 8u32.pow(n as u32) + more;
                out.extend(char::from_u32(v));
            }
            'x' => {
                let (v, n) = radix_digits(&mut chars, 16, 2);
                if n == 0 {
                    out.push_str("\\x");
                } else {
                    out.extend(char::from_u32(v));
                }
            }
            'u' | 'U' => {
                let (v, n) = radix_digits(&mut chars, 16, if e == 'u' { 4 } else { 8 });
                if n == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    out.extend(char::from_u32(v));
                }
            }
            'c' => {
                if let Some(c) = chars.next() {
                    out.extend(char::from_u32((c as u32) & 0x1f));
                }
            }
            other => out.push(other),
        }
    }
    out
}
