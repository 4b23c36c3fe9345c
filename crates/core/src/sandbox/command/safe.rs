//! Known read-only commands: ones that may run without the process sandbox and without
//! asking, because they neither write nor start other programs. The list is small, as
//! Codex's is, and judged on the parse the way each program reads its words:
//!
//! - every word is known before the command runs: no expansion (`$X`, `${U:--o}`), no
//!   substitution, no brace form, no glob that could match `-o…` (a path under the home
//!   folder and a glob such as `src/*.rs` are known enough);
//! - options are read as the program reads them ([`super::options`]): `--outp` is sort's
//!   `--output`, an unknown or ambiguous option is not read-only;
//! - no option writes or runs (`sort -o`, `sort --compress-program`, `find -exec`/`-delete`/
//!   `-fprint`, `uniq IN OUT`, `rg --pre`, `git diff --output`, `git branch NAME`), and the
//!   wrappers around it only time or schedule it (`time` without `-o`/`-a`, `env` without
//!   `NAME=VALUE` or `-S`, `nice`, `timeout`, `command`);
//! - nothing is redirected into a file.

use super::options::{self, Item, Options};
use super::parse::{Parsed, Simple};
use super::resolve::{self, Step};
use super::syntaxes;
use super::words::Word;

/// Programs with no option that writes or runs something, in any implementation we know.
const READERS: &[&str] = &[
    "cat", "cd", "cut", "echo", "false", "grep", "head", "id", "ls", "nl", "pwd", "printf", "seq",
    "stat", "tail", "tr", "true", "uname", "wc", "which", "whoami", "test", "[",
];

/// Wrappers that add nothing but timing or scheduling (with the options [`wrapper_reads`]
/// allows).
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
    // A word only known when it runs could be any option or program.
    if !c.argv.iter().all(Word::resolved) {
        return false;
    }
    let chain = resolve::chain(&c.argv);
    if chain.unknown_name || chain.prefix_len.is_none() {
        return false;
    }
    let Some((last, wrappers)) = chain.steps.split_last() else {
        // Only redirections (`< f`) or assignments.
        return true;
    };
    if !wrappers.iter().all(wrapper_reads) {
        return false;
    }
    if chain.lookup_only {
        return last.name == "command";
    }
    step_reads_only(last)
}

/// A wrapper that only times or schedules the command, its options all understood.
fn wrapper_reads(w: &Step) -> bool {
    if !TRANSPARENT.contains(&w.name.as_str()) {
        return false;
    }
    let Some(syntax) = syntaxes::wrapper(&w.name) else {
        return false;
    };
    let o = options::parse(&w.args, syntax);
    if !o.understood() {
        return false;
    }
    match w.name.as_str() {
        // GNU time writes its report to `-o FILE` (`--output`, `--append`).
        "time" => !o.has(Some('o'), Some("output")) && !o.has(Some('a'), Some("append")),
        // `NAME=VALUE` can point PATH at the workspace; `-S` builds a command line.
        "env" => {
            !o.has(Some('S'), Some("split-string"))
                && !w.args[o.rest..]
                    .iter()
                    .take_while(|a| a.is("-") || a.literal().is_some_and(|l| l.contains('=')))
                    .any(|a| !a.is("-"))
        }
        _ => true,
    }
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
    let args = &s.args;
    if READERS.contains(&name) {
        return true;
    }
    match name {
        // `env` alone prints the environment.
        "env" => args.is_empty(),
        "find" => find_reads_only(args),
        "sort" => {
            let o = options::parse(args, &syntaxes::SORT);
            o.understood()
                && !o.has(Some('o'), Some("output"))
                && !o.has(None, Some("compress-program"))
                && !o.has(Some('T'), Some("temporary-directory"))
        }
        // `uniq IN OUT` writes OUT.
        "uniq" => {
            let o = options::parse(args, &syntaxes::UNIQ);
            o.understood() && o.operands().count() <= 1
        }
        "rg" => {
            // ripgrep rejects flags it does not know; these run other programs.
            let o = options::parse(args, &syntaxes::RG);
            !o.has(None, Some("pre"))
                && !o.has(None, Some("hostname-bin"))
                && !o.has(Some('z'), Some("search-zip"))
                && !o
                    .items
                    .iter()
                    .any(|i| matches!(i, Item::Ambiguous(_) | Item::Unresolved(_)))
        }
        "sed" => sed_prints_lines(args),
        "git" => git_reads_only(args),
        _ => false,
    }
}

/// `find` without an action that deletes, writes or runs (its words are exact: find takes
/// no abbreviations).
fn find_reads_only(args: &[Word]) -> bool {
    !args.iter().filter_map(Word::literal).any(|l| {
        ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls"].contains(&l.as_str())
            || l.starts_with("-fprint")
    })
}

/// `sed -n N p` or `sed -n M,Np` with at most one file (Codex's shape).
fn sed_prints_lines(args: &[Word]) -> bool {
    let lits: Option<Vec<String>> = args.iter().map(Word::literal).collect();
    let Some(lits) = lits else {
        return false;
    };
    let numbers = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match lits.as_slice() {
        [n, script] | [n, script, _] if n == "-n" => {
            let file_ok = lits.get(2).is_none_or(|f| !f.starts_with('-'));
            let range = script
                .strip_suffix('p')
                .is_some_and(|r| match r.split_once(',') {
                    Some((a, b)) => numbers(a) && numbers(b),
                    None => numbers(r),
                });
            file_ok && range
        }
        _ => false,
    }
}

fn git_reads_only(args: &[Word]) -> bool {
    let mut i = 0;
    // git's own options are matched exactly (git.c); `-c` could set a pager or an external
    // diff, so only these are read-only.
    while let Some(l) = args.get(i).and_then(Word::literal) {
        match l.as_str() {
            "-C" => i += 2,
            "--no-pager" | "-P" => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).and_then(Word::literal) else {
        return false;
    };
    let rest = &args[i + 1..];
    match sub.as_str() {
        "status" | "rev-parse" => true,
        "diff" | "log" | "show" => !writes_or_runs_diff(rest),
        "branch" => branch_lists_only(&options::parse(rest, &syntaxes::GIT_BRANCH)),
        _ => false,
    }
}

/// Diff options that write a file or run a configured program. git reads diff options by
/// their full name; a prefix of one counts too, in case a git that abbreviates them runs.
fn writes_or_runs_diff(args: &[Word]) -> bool {
    const RISKY: &[&str] = &["output", "ext-diff", "textconv"];
    args.iter().filter_map(Word::literal).any(|l| {
        let Some(long) = l.strip_prefix("--") else {
            return false;
        };
        let name = long.split('=').next().unwrap_or(long);
        name.len() >= 2 && RISKY.iter().any(|r| r.starts_with(name))
    })
}

/// `git branch` that lists: no option that creates, deletes, renames, copies or changes
/// upstreams, and operands only as patterns after `--list`.
fn branch_lists_only(o: &Options) -> bool {
    const LISTING: &[&str] = &[
        "verbose",
        "quiet",
        "remotes",
        "all",
        "list",
        "show-current",
        "ignore-case",
        "color",
        "abbrev",
        "column",
        "omit-empty",
        "contains",
        "no-contains",
        "merged",
        "no-merged",
        "points-at",
        "sort",
        "format",
    ];
    let listing = o.has(Some('l'), Some("list"));
    o.understood()
        && o.items.iter().all(|i| match i {
            Item::Short { letter, .. } => "vqrali".contains(*letter),
            Item::Long { name, .. } => LISTING.contains(name),
            Item::Operand(_) => listing,
            _ => false,
        })
}
