//! Which program a simple command really runs: `\rm`, `/bin/rm`, `command rm`, `env A=1 rm`,
//! `sudo -u x nice -n 5 timeout 10 rm`, `xargs rm` all run `rm`. Each wrapper is a step of
//! the [`Chain`]; the last step is the program whose arguments the rules judge.

use super::options::{self, Options};
use super::syntaxes;
use super::words::{Part, Unknown, Word};

/// One program in a chain and the words it is given.
#[derive(Debug, Clone)]
pub(super) struct Step {
    /// The program's name, without its folder (`/usr/bin/env` → `env`).
    pub name: String,
    pub args: Vec<Word>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Chain {
    /// Outermost first; the last is the program that does the work.
    pub steps: Vec<Step>,
    /// A program's name is only known when the command runs (`$CMD`, `"$(…)"`, a glob).
    pub unknown_name: bool,
    /// A wrapper changes the folder the program runs in (`env -C`, `chroot`).
    pub chdir: bool,
    /// How many words of the command line the wrappers and the program's name take, when
    /// they are the command line's own words (not split from `env -S` or read by `xargs`).
    pub prefix_len: Option<usize>,
    /// `command -v`, `type`-like lookups: nothing runs.
    pub lookup_only: bool,
}

/// Programs that fetch from the network.
const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "wget2",
    "fetch",
    "aria2c",
    "http",
    "https",
    "xh",
    "httpie",
    "lwp-request",
];

impl Chain {
    pub(super) fn last(&self) -> Option<&Step> {
        self.steps.last()
    }

    /// Whether the program run is a downloader.
    pub(super) fn downloads(&self) -> bool {
        self.last()
            .is_some_and(|s| DOWNLOADERS.contains(&s.name.as_str()))
    }
}

/// The program a command word names: its literal text without folders, or None when it is
/// only known at run time.
pub(super) fn program_name(w: &Word) -> Option<String> {
    if w.has_unknown() || w.globs() || w.braces() {
        return None;
    }
    let text: String = w
        .parts
        .iter()
        .map(|p| match p {
            Part::Lit { text, .. } => text.as_str(),
            Part::Home => "~",
            _ => "",
        })
        .collect();
    let name = text.rsplit('/').next().unwrap_or(&text).to_string();
    (!name.is_empty()).then_some(name)
}

/// Resolves the wrappers of `argv`.
pub(super) fn chain(argv: &[Word]) -> Chain {
    let mut c = Chain {
        prefix_len: Some(0),
        ..Chain::default()
    };
    let mut words: Vec<Word> = argv.to_vec();
    let mut pos = 0usize;
    // Bounded: each round consumes at least one word.
    for _ in 0..64 {
        let Some(name_word) = words.get(pos) else {
            break;
        };
        let Some(name) = program_name(name_word) else {
            c.unknown_name = true;
            break;
        };
        let args = words[pos + 1..].to_vec();
        c.steps.push(Step {
            name: name.clone(),
            args: args.clone(),
        });
        let next = match unwrap(&name, &args) {
            Some(u) => u,
            None => {
                if let Some(p) = &mut c.prefix_len {
                    *p = pos + 1;
                }
                break;
            }
        };
        match next {
            Unwrapped::Lookup => {
                c.lookup_only = true;
                break;
            }
            Unwrapped::At { skip, chdir } => {
                c.chdir |= chdir;
                pos += 1 + skip;
            }
            Unwrapped::Replace { words: w, chdir } => {
                c.chdir |= chdir;
                c.prefix_len = None;
                words = w;
                pos = 0;
            }
        }
        if pos >= words.len() {
            // A wrapper with no program (`env`, `nice`): it runs nothing else.
            if let Some(p) = &mut c.prefix_len {
                *p = words.len();
            }
            break;
        }
    }
    c
}

enum Unwrapped {
    /// The wrapped program's name is `skip` words after the wrapper's.
    At { skip: usize, chdir: bool },
    /// The wrapped command line is made of new words (`env -S`, `xargs`).
    Replace { words: Vec<Word>, chdir: bool },
    /// Nothing runs (`command -v x`).
    Lookup,
}

fn at(skip: usize) -> Option<Unwrapped> {
    Some(Unwrapped::At { skip, chdir: false })
}

/// What the wrapper `name` runs, given its arguments; None when `name` is not a wrapper.
fn unwrap(name: &str, args: &[Word]) -> Option<Unwrapped> {
    if matches!(name, "busybox" | "toybox") {
        return at(0);
    }
    let syntax = syntaxes::wrapper(name)?;
    let o = options::parse(args, syntax);
    let i = o.rest;
    let shell_string = |s: &Word| Unwrapped::Replace {
        words: vec![Word::lit("sh"), Word::lit("-c"), s.clone()],
        chdir: false,
    };
    match name {
        "command" if o.has(Some('v'), None) || o.has(Some('V'), None) => Some(Unwrapped::Lookup),
        "sudo" => sudo(args, &o),
        "env" => env(args, &o),
        "xargs" => xargs(args, &o),
        // A process already running: nothing after it is run.
        "ionice" if o.has(Some('p'), Some("pid")) || o.has(Some('P'), Some("pgid")) => None,
        "ionice" if o.has(Some('u'), Some("uid")) => None,
        "chrt" | "taskset" if o.has(Some('p'), Some("pid")) => None,
        // The priority, or the CPU mask (`taskset -c 0-3 cmd` reads its list as the mask).
        "chrt" | "taskset" => at(i + 1),
        "timeout" => at(i + 1),
        "chroot" => Some(Unwrapped::At {
            skip: i + 1,
            chdir: true,
        }),
        "flock" => match o.value(Some('c'), Some("command")) {
            Some(s) => Some(shell_string(s)),
            // The lock file, then the command.
            None => at(i + 1),
        },
        "watch" if o.has(Some('x'), Some("exec")) => at(i),
        "watch" => (i < args.len()).then(|| Unwrapped::Replace {
            words: shell_c(&args[i..]),
            chdir: false,
        }),
        "su" | "script" | "runuser" => {
            let command = o
                .value(Some('c'), Some("command"))
                .or_else(|| o.value(None, Some("session-command")));
            match command {
                Some(s) => Some(shell_string(s)),
                // `runuser -u USER [--] COMMAND`.
                None if name == "runuser" && o.has(Some('u'), Some("user")) => {
                    o.first_operand.and_then(at)
                }
                None => None,
            }
        }
        _ => at(i),
    }
}

/// `sudo [OPTIONS] COMMAND`; `sudo -s`/`-i` run their words through a shell, `sudo -e` edits.
fn sudo(args: &[Word], o: &Options) -> Option<Unwrapped> {
    let i = o.rest;
    if o.has(Some('e'), Some("edit")) || o.has(Some('l'), Some("list")) {
        return None;
    }
    let shell = o.has(Some('s'), Some("shell")) || o.has(Some('i'), Some("login"));
    if shell && i < args.len() {
        // `sudo -s cmd args`: the shell runs them as one command line.
        return Some(Unwrapped::Replace {
            words: shell_c(&args[i..]),
            chdir: false,
        });
    }
    if shell {
        return Some(Unwrapped::Replace {
            words: vec![Word::lit("sh")],
            chdir: false,
        });
    }
    let chdir = o.has(Some('D'), Some("chdir")) || o.has(Some('R'), Some("chroot"));
    Some(Unwrapped::At { skip: i, chdir })
}

/// `sh -c '<words joined by spaces>'`: how `sudo -s`, `watch` and `su -c` run their words.
fn shell_c(words: &[Word]) -> Vec<Word> {
    let mut parts = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            parts.push(Part::Lit {
                text: " ".into(),
                glob: false,
            });
        }
        parts.extend(w.parts.iter().cloned());
    }
    vec![Word::lit("sh"), Word::lit("-c"), Word { parts }]
}

/// `env [OPTION]... [-] [NAME=VALUE]... [COMMAND [ARG]...]`; `-S` splits a string into the
/// command line.
fn env(args: &[Word], o: &Options) -> Option<Unwrapped> {
    let mut i = o.rest;
    let chdir = o.has(Some('C'), Some("chdir"));
    if args.get(i).is_some_and(|a| a.is("-")) {
        i += 1;
    }
    while args
        .get(i)
        .and_then(Word::literal)
        .is_some_and(|l| is_assignment(&l))
    {
        i += 1;
    }
    if !o.has(Some('S'), Some("split-string")) {
        return Some(Unwrapped::At { skip: i, chdir });
    }
    let split = o.value(Some('S'), Some("split-string"));
    let mut words = split
        .and_then(Word::literal)
        .map(|s| s.split_whitespace().map(Word::lit).collect::<Vec<_>>())
        .unwrap_or_else(|| {
            vec![Word {
                parts: vec![Part::Unknown(Unknown::Other)],
            }]
        });
    words.extend(args[i.min(args.len())..].iter().cloned());
    Some(Unwrapped::Replace { words, chdir })
}

fn is_assignment(l: &str) -> bool {
    l.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `xargs [OPTIONS] [COMMAND [ARG]...]`: the command gets words read from the input, at the
/// end or in place of the `-I` string.
fn xargs(args: &[Word], o: &Options) -> Option<Unwrapped> {
    let i = o.rest;
    let replace = match o.value(Some('I'), None) {
        Some(w) => w.literal(),
        None => o
            .value(Some('i'), Some("replace"))
            .and_then(Word::literal)
            .or_else(|| o.has(Some('i'), Some("replace")).then(|| "{}".to_string())),
    };
    let input = || Word {
        parts: vec![Part::Unknown(Unknown::Other)],
    };
    let mut words: Vec<Word> = args[i.min(args.len())..].to_vec();
    if words.is_empty() {
        words.push(Word::lit("echo"));
    }
    match replace {
        Some(r) => {
            for w in &mut words[1..] {
                if w.literal().is_some_and(|l| l.contains(&r)) {
                    *w = input();
                }
            }
        }
        None => words.push(input()),
    }
    Some(Unwrapped::Replace {
        words,
        chdir: false,
    })
}
