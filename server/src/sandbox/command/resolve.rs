//! Which program a simple command really runs: `\rm`, `/bin/rm`, `command rm`, `env A=1 rm`,
//! `sudo -u x nice -n 5 timeout 10 rm`, `xargs rm` all run `rm`. Each wrapper is a step of
//! the [`Chain`]; the last step is the program whose arguments the rules judge.

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

/// Short options of each wrapper that take a value, and long ones that do.
struct Options {
    short_with_value: &'static str,
    long_with_value: &'static [&'static str],
}

/// Skips the options of a wrapper: the index of the first operand. Stops at `--` (skipped)
/// or at the first word that is not an option.
fn skip_options(args: &[Word], o: &Options) -> usize {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(l) = a.option() else {
            break;
        };
        if l == "--" {
            return i + 1;
        }
        if let Some(long) = l.strip_prefix("--") {
            i += if !long.contains('=') && o.long_with_value.contains(&long) {
                2
            } else {
                1
            };
            continue;
        }
        // A cluster: the first letter that takes a value takes the rest, or the next word.
        let letters = &l[1..];
        let mut takes_next = false;
        for (k, ch) in letters.char_indices() {
            if o.short_with_value.contains(ch) {
                takes_next = k + ch.len_utf8() == letters.len();
                break;
            }
        }
        i += if takes_next { 2 } else { 1 };
    }
    i
}

fn at(skip: usize) -> Option<Unwrapped> {
    Some(Unwrapped::At { skip, chdir: false })
}

/// What the wrapper `name` runs, given its arguments; None when `name` is not a wrapper.
fn unwrap(name: &str, args: &[Word]) -> Option<Unwrapped> {
    let opts = |short, long| Options {
        short_with_value: short,
        long_with_value: long,
    };
    match name {
        "command" => {
            let i = skip_options(args, &opts("", &[]));
            let lookup = args[..i]
                .iter()
                .filter_map(Word::option)
                .any(|o| o.contains(['v', 'V']));
            if lookup {
                Some(Unwrapped::Lookup)
            } else {
                at(i)
            }
        }
        "builtin" | "nohup" | "unbuffer" | "pkexec" | "coproc" | "then" | "do" | "else" => {
            at(skip_options(args, &opts("", &[])))
        }
        "exec" => at(skip_options(args, &opts("a", &[]))),
        "nice" => {
            // `nice -5 cmd`: a number option.
            at(skip_options(args, &opts("n", &["adjustment"])))
        }
        "time" => at(skip_options(args, &opts("fo", &["format", "output"]))),
        "setsid" | "ionice" | "stdbuf" | "doas" | "runuser" => {
            let short = match name {
                "ionice" => "cnt",
                "stdbuf" => "ioe",
                "doas" => "uC",
                "runuser" => "ugGl",
                _ => "",
            };
            if name == "ionice" && args.iter().any(|a| a.is("-p") || a.is("-P")) {
                return None;
            }
            at(skip_options(
                args,
                &opts(
                    short,
                    &[
                        "input",
                        "output",
                        "error",
                        "user",
                        "group",
                        "class",
                        "classdata",
                    ],
                ),
            ))
        }
        "timeout" => {
            let i = skip_options(args, &opts("ks", &["kill-after", "signal"]));
            // Then the duration.
            at(i + 1)
        }
        "chrt" | "taskset" => {
            if args.iter().any(|a| a.is("-p") || a.is("--pid")) {
                return None;
            }
            let i = skip_options(args, &opts("", &[]));
            // The priority or CPU mask (`taskset -c 0-3 cmd` takes its list as an option).
            let takes_value = name == "chrt" || !args[..i].iter().any(|a| a.is("-c"));
            at(if takes_value { i + 1 } else { i })
        }
        _ => unwrap_more(name, args),
    }
}

/// Wrappers that run a command line or pass their words to a shell (`sudo -s`, `watch`,
/// `su -c`, `flock -c`), and the less common ones.
fn unwrap_more(name: &str, args: &[Word]) -> Option<Unwrapped> {
    let opts = |short, long| Options {
        short_with_value: short,
        long_with_value: long,
    };
    match name {
        "sudo" => sudo(args),
        "env" => env(args),
        "xargs" => xargs(args),
        "chroot" => {
            let i = skip_options(args, &opts("", &["userspec", "groups"]));
            Some(Unwrapped::At {
                skip: i + 1,
                chdir: true,
            })
        }
        "flock" => {
            let i = skip_options(
                args,
                &opts("wEc", &["timeout", "conflict-exit-code", "command"]),
            );
            if let Some(c) = args[..i.min(args.len())]
                .iter()
                .position(|a| a.is("-c") || a.is("--command"))
            {
                return args.get(c + 1).map(|s| Unwrapped::Replace {
                    words: vec![Word::lit("sh"), Word::lit("-c"), s.clone()],
                    chdir: false,
                });
            }
            // The lock file, then the command.
            at(i + 1)
        }
        "busybox" | "toybox" => at(0),
        "strace" | "ltrace" => at(skip_options(
            args,
            &opts(
                "abeEIoOpPsSuUX",
                &["output", "trace", "signal", "attach", "user"],
            ),
        )),
        "systemd-run" => at(skip_options(
            args,
            &opts(
                "pEMuH",
                &[
                    "property",
                    "setenv",
                    "unit",
                    "description",
                    "slice",
                    "uid",
                    "gid",
                    "machine",
                    "host",
                    "working-directory",
                ],
            ),
        )),
        "watch" => {
            let i = skip_options(args, &opts("nd", &["interval", "differences"]));
            (i < args.len()).then(|| Unwrapped::Replace {
                words: shell_c(&args[i..]),
                chdir: false,
            })
        }
        "su" | "script" => {
            let c = args.iter().position(|a| a.is("-c") || a.is("--command"))?;
            args.get(c + 1).map(|s| Unwrapped::Replace {
                words: vec![Word::lit("sh"), Word::lit("-c"), s.clone()],
                chdir: false,
            })
        }
        _ => None,
    }
}

/// `sudo [OPTIONS] COMMAND`; `sudo -s`/`-i` run their words through a shell.
fn sudo(args: &[Word]) -> Option<Unwrapped> {
    let opts = |short, long| Options {
        short_with_value: short,
        long_with_value: long,
    };
    let i = skip_options(
        args,
        &opts(
            "ugpCDhrtTUR",
            &[
                "user",
                "group",
                "prompt",
                "close-from",
                "chdir",
                "host",
                "role",
                "type",
                "command-timeout",
                "other-user",
                "chroot",
            ],
        ),
    );
    let shell = args[..i]
        .iter()
        .filter_map(Word::option)
        .any(|o| !o.starts_with("--") && o.contains(['s', 'i']));
    if args[..i].iter().any(|a| a.is("-e") || a.is("--edit")) {
        return None;
    }
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
    at(i)
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

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [--] [NAME=VALUE]... [COMMAND [ARG]...]`.
fn env(args: &[Word]) -> Option<Unwrapped> {
    let mut i = 0;
    let mut chdir = false;
    let mut split: Option<Vec<Word>> = None;
    while let Some(a) = args.get(i) {
        let Some(l) = a.option() else {
            break;
        };
        if l == "--" {
            i += 1;
            break;
        }
        let value_of = |prefix: &str, long: &str| -> Option<Option<Word>> {
            if l == prefix || l == long {
                return Some(args.get(i + 1).cloned());
            }
            let v = l
                .strip_prefix(&format!("{long}="))
                .or_else(|| l.strip_prefix(prefix));
            v.map(|v| Some(Word::lit(v)))
        };
        let takes_next = l == "-u"
            || l == "--unset"
            || l == "-C"
            || l == "--chdir"
            || l == "-S"
            || l == "--split-string";
        if let Some(v) = value_of("-S", "--split-string") {
            let words = v
                .and_then(|w| w.literal())
                .map(|s| s.split_whitespace().map(Word::lit).collect::<Vec<_>>());
            split = Some(words.unwrap_or_else(|| {
                vec![Word {
                    parts: vec![Part::Unknown(Unknown::Other)],
                }]
            }));
        } else if value_of("-C", "--chdir").is_some() {
            chdir = true;
        }
        i += if takes_next { 2 } else { 1 };
    }
    while args
        .get(i)
        .and_then(Word::literal)
        .is_some_and(|l| is_assignment(&l))
    {
        i += 1;
    }
    match split {
        Some(mut words) => {
            words.extend(args[i.min(args.len())..].iter().cloned());
            Some(Unwrapped::Replace { words, chdir })
        }
        None => Some(Unwrapped::At { skip: i, chdir }),
    }
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
fn xargs(args: &[Word]) -> Option<Unwrapped> {
    let i = skip_options(
        args,
        &Options {
            short_with_value: "ILnPsEdae",
            long_with_value: &[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-chars",
                "eof",
                "process-slot-var",
                "max-lines",
            ],
        },
    );
    let replace = args[..i.min(args.len())]
        .iter()
        .enumerate()
        .find_map(|(k, a)| {
            let l = a.option()?;
            if l == "-I" {
                return args.get(k + 1).and_then(Word::literal);
            }
            if let Some(r) = l
                .strip_prefix("-I")
                .or_else(|| l.strip_prefix("--replace="))
            {
                return Some(r.to_string());
            }
            (l == "-i" || l == "--replace").then(|| "{}".to_string())
        });
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
