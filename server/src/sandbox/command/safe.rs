//! Known read-only commands: ones that may run without the process sandbox and without
//! asking, because they neither write nor start other programs. Judged on the parse: every
//! simple command must be one of them, with no option that writes (`sort -o`, `tree -o`,
//! `uniq IN OUT`, `git branch NAME`), and nothing may be redirected into a file.

use super::parse::{Parsed, Simple};
use super::resolve::{self, Step};
use super::words::Word;

/// Programs that only read. Each may still have options that write: see [`step_reads_only`].
const READERS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "pwd",
    "echo",
    "printf",
    "which",
    "file",
    "stat",
    "tree",
    "du",
    "nl",
    "sort",
    "uniq",
    "true",
    "false",
    "diff",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "cut",
    "tr",
    "seq",
    "cmp",
    "comm",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "test",
    "[",
    "printenv",
    "whoami",
    "id",
    "uname",
    "type",
    "cd",
    "git",
    "date",
];

/// Wrappers that add nothing but timing or scheduling.
const TRANSPARENT: &[&str] = &["command", "nice", "timeout", "time", "env"];

/// Whether every command of `parsed` only reads.
pub(super) fn reads_only(parsed: &Parsed) -> bool {
    parsed.broken.is_none()
        && !parsed.substitutions
        && !parsed.functions
        && parsed.commands.iter().all(simple_reads_only)
}

fn simple_reads_only(c: &Simple) -> bool {
    if !c.assignments.is_empty() || !c.writes.iter().all(harmless_sink) {
        return false;
    }
    let chain = resolve::chain(&c.argv);
    if chain.unknown_name || chain.prefix_len.is_none() {
        return false;
    }
    if chain.lookup_only {
        return true;
    }
    let Some((last, wrappers)) = chain.steps.split_last() else {
        // Only redirections (`< f`) or assignments.
        return true;
    };
    wrappers.iter().all(|w| {
        TRANSPARENT.contains(&w.name.as_str())
            && !(w.name == "env" && w.args.iter().any(|a| a.starts_with("-")))
    }) && step_reads_only(last)
}

/// `/dev/null`, the standard streams, a terminal.
fn harmless_sink(w: &Word) -> bool {
    w.literal().is_some_and(|l| {
        matches!(
            l.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        )
    })
}

fn step_reads_only(s: &Step) -> bool {
    let name = s.name.as_str();
    if !READERS.contains(&name) {
        // `env` alone prints the environment.
        return name == "env" && s.args.is_empty();
    }
    let args = &s.args;
    let lits: Vec<Option<String>> = args.iter().map(Word::literal).collect();
    let has = |pred: &dyn Fn(&str) -> bool| lits.iter().flatten().any(|l| pred(l));
    let short_has = |letter: char| {
        has(&|l: &str| !l.starts_with("--") && l.starts_with('-') && l[1..].contains(letter))
    };
    match name {
        "find" => !has(&|l: &str| {
            ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls"].contains(&l)
                || l.starts_with("-fprint")
        }),
        "sort" => {
            !short_has('o')
                && !has(&|l: &str| l.starts_with("--output") || l.starts_with("--compress-program"))
        }
        "tree" => !short_has('o') && !short_has('R') && !has(&|l: &str| l.starts_with("--output")),
        "uniq" => operands(args, "fsw", &["skip-fields", "skip-chars", "check-chars"]) <= 1,
        "rg" => !has(&|l: &str| l.starts_with("--pre")),
        "file" => !short_has('C') && !has(&|l: &str| l == "--compile"),
        "date" => !short_has('s') && !has(&|l: &str| l.starts_with("--set")),
        "git" => git_reads_only(args),
        _ => true,
    }
}

/// Non-option words, skipping the values of the given options.
fn operands(args: &[Word], short_with_value: &str, long_with_value: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let mut options_done = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(l) = a.literal() else {
            n += 1;
            continue;
        };
        if options_done || !l.starts_with('-') || l == "-" {
            n += 1;
        } else if l == "--" {
            options_done = true;
        } else if let Some(long) = l.strip_prefix("--") {
            if long_with_value.contains(&long) {
                i += 1;
            }
        } else if l.len() == 2 && short_with_value.contains(&l[1..]) {
            i += 1;
        }
    }
    n
}

fn git_reads_only(args: &[Word]) -> bool {
    let mut i = 0;
    while let Some(l) = args.get(i).and_then(Word::literal) {
        match l.as_str() {
            // `-c` could set a pager or an external diff; other options change nothing run.
            "-C" => i += 2,
            "--no-pager" | "-P" => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).and_then(Word::literal) else {
        return false;
    };
    let rest = &args[i + 1..];
    if rest
        .iter()
        .filter_map(Word::literal)
        .any(|l| l.starts_with("--output") || l == "--ext-diff")
    {
        return false;
    }
    match sub.as_str() {
        "status" | "diff" | "log" | "show" | "rev-parse" | "ls-files" => true,
        "branch" => branch_lists_only(rest),
        _ => false,
    }
}

/// `git branch` that lists: no operand except patterns after `--list`, no option that
/// creates, deletes, renames, copies or changes upstreams.
fn branch_lists_only(args: &[Word]) -> bool {
    const FLAGS: &[&str] = &[
        "-a",
        "--all",
        "-r",
        "--remotes",
        "-v",
        "-vv",
        "--verbose",
        "-l",
        "--list",
        "--show-current",
        "-i",
        "--ignore-case",
        "--no-color",
        "--no-abbrev",
        "--no-column",
        "-q",
        "--quiet",
    ];
    const WITH_VALUE: &[&str] = &[
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
    ];
    let listing = args.iter().any(|a| a.is("-l") || a.is("--list"));
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(l) = a.literal() else {
            return false;
        };
        if FLAGS.contains(&l.as_str())
            || l.starts_with("--color")
            || l.starts_with("--column")
            || l.starts_with("--abbrev")
            || WITH_VALUE
                .iter()
                .any(|w| l.strip_prefix(w).is_some_and(|r| r.starts_with('=')))
        {
            continue;
        }
        if WITH_VALUE.contains(&l.as_str()) {
            // `--merged` and `--no-merged` take an optional commit; the others need one.
            i += 1;
            continue;
        }
        if l.starts_with('-') || !listing {
            return false;
        }
    }
    true
}
