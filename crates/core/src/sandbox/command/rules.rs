//! What makes a command dangerous: the rules applied to the program each simple command
//! really runs (after [`super::resolve`]), and the scripts it hands to a shell, checked again
//! as scripts.

use super::options::{self, Item};
use super::parse::{Producer, Simple, Stdin};
use super::resolve::{self, Step};
use super::syntaxes;
use super::words::{Cwd, Location, Part, Word, locate};
use super::{DOWNLOAD_RUN, UNCHECKABLE_PIPE, UNCHECKABLE_SCRIPT, analyze_nested};

const FORCE_PUSH: &str = "force push rewrites remote history";
const DELETE_PUSH: &str = "git push deletes a remote branch";
const UNKNOWN_NAME: &str = "runs a program whose name is only known when the command runs (a variable, a substitution or a glob)";

const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "posh", "rbash", "lksh",
    "pdksh", "oksh", "tcsh", "csh",
];

/// Why `simple` is dangerous, if it is. `depth`: how many scripts deep it is nested.
pub(super) fn judge(simple: &Simple, depth: usize) -> Option<String> {
    for target in &simple.writes {
        if let Some(device) = device(target) {
            return Some(format!("writes to the device {device}"));
        }
    }
    judge_argv(&simple.argv, &simple.cwd, &simple.stdin, depth)
}

fn judge_argv(argv: &[Word], cwd: &Cwd, stdin: &Stdin, depth: usize) -> Option<String> {
    let chain = resolve::chain(argv);
    if chain.unknown_name {
        return Some(UNKNOWN_NAME.into());
    }
    if chain.lookup_only {
        return None;
    }
    let step = chain.last()?;
    let cwd = if chain.chdir {
        Cwd::Unknown
    } else {
        cwd.clone()
    };
    judge_step(step, &cwd, stdin, depth)
}

fn judge_step(step: &Step, cwd: &Cwd, stdin: &Stdin, depth: usize) -> Option<String> {
    let args = &step.args;
    let name = step.name.as_str();
    match name {
        _ if SHELLS.contains(&name) => shell(args, cwd, stdin, depth),
        "eval" => nested(&joined(args), cwd, depth),
        "source" | "." => args.first().and_then(script_operand),
        _ if interpreter(name) => interpreted(name, args, stdin),
        "rm" => rm(args, cwd),
        "find" => find(args, cwd, stdin, depth),
        "git" => git(args, cwd, depth),
        "gh" => gh(args),
        "dd" => dd(args, cwd),
        "chmod" | "chown" | "chgrp" => permissions(name, args, cwd),
        "kill" => kill(args),
        "mke2fs" | "mkswap" | "wipefs" | "blkdiscard" | "fdisk" | "sfdisk" | "cfdisk"
        | "parted" | "sgdisk" | "gdisk" => Some(format!("{name} formats or partitions a disk")),
        _ if name == "mkfs" || name.starts_with("mkfs.") => Some(format!("{name} formats a disk")),
        "shutdown" | "reboot" | "halt" | "poweroff" => Some("shuts the machine down".into()),
        "systemctl"
            if args.iter().any(|a| {
                [
                    "poweroff",
                    "reboot",
                    "halt",
                    "kexec",
                    "suspend",
                    "hibernate",
                ]
                .iter()
                .any(|s| a.is(s))
            }) =>
        {
            Some("shuts the machine down".into())
        }
        "trap" => match args.first() {
            Some(a) if !a.starts_with("-") => nested(a, cwd, depth),
            _ => None,
        },
        "alias" => args.iter().find_map(|a| {
            let l = a.literal()?;
            let (_, value) = l.split_once('=')?;
            nested(&Word::lit(value), cwd, depth)
        }),
        _ => None,
    }
}

/// Checks `script` (a word that a shell will parse again).
fn nested(script: &Word, cwd: &Cwd, depth: usize) -> Option<String> {
    match script.script_text() {
        Ok(text) => analyze_nested(&text, cwd.clone(), depth + 1),
        Err(reason) => Some(reason.to_string()),
    }
}

fn joined(args: &[Word]) -> Word {
    let mut parts = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            parts.push(Part::Lit {
                text: " ".into(),
                glob: false,
            });
        }
        parts.extend(a.parts.iter().cloned());
    }
    Word { parts }
}

/// A script file given to a shell or `source`: one fetched from the network, or whose
/// name is a command's output, cannot be checked.
fn script_operand(w: &Word) -> Option<String> {
    if w.is_downloaded() {
        return Some(DOWNLOAD_RUN.into());
    }
    w.has_unknown().then(|| UNCHECKABLE_SCRIPT.into())
}

/// A script a shell reads from its standard input.
fn stdin_script(stdin: &Stdin, cwd: &Cwd, depth: usize) -> Option<String> {
    match stdin {
        Stdin::Pipe(Producer::Download) => Some(DOWNLOAD_RUN.into()),
        Stdin::Pipe(Producer::Text(w)) | Stdin::Text(w) => nested(w, cwd, depth),
        Stdin::Pipe(Producer::Other) => Some(UNCHECKABLE_PIPE.into()),
        Stdin::File | Stdin::Inherited => None,
    }
}

/// `sh -c STRING`, `bash -s`, `bash script`, `bash` reading a pipe.
fn shell(args: &[Word], cwd: &Cwd, stdin: &Stdin, depth: usize) -> Option<String> {
    let mut i = 0;
    let (mut command, mut from_stdin) = (false, false);
    while let Some(a) = args.get(i) {
        let Some(l) = a.literal() else {
            // The script (or a script file) only known at run time: judged below.
            break;
        };
        if l == "--" || l == "-" {
            i += 1;
            break;
        }
        if l.starts_with("--") {
            i += if l == "--rcfile" || l == "--init-file" {
                2
            } else {
                1
            };
            continue;
        }
        if (l.starts_with('-') || l.starts_with('+')) && l.len() > 1 {
            let letters = &l[1..];
            if l.starts_with('-') {
                command |= letters.contains('c');
                from_stdin |= letters.contains('s');
            }
            i += if letters.contains(['o', 'O']) { 2 } else { 1 };
            continue;
        }
        break;
    }
    match args.get(i) {
        Some(script) if command => nested(script, cwd, depth),
        None if command => None,
        _ if from_stdin => stdin_script(stdin, cwd, depth),
        Some(file) => script_operand(file),
        None => stdin_script(stdin, cwd, depth),
    }
}

fn interpreter(name: &str) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "python"
            | "pypy"
            | "perl"
            | "ruby"
            | "node"
            | "nodejs"
            | "php"
            | "lua"
            | "luajit"
            | "Rscript"
            | "deno"
            | "bun"
            | "tclsh"
            | "osascript"
    )
}

/// Another language's interpreter: only a program downloaded from the network is judged
/// (its code is not shell; what it does is the sandbox's business).
fn interpreted(name: &str, args: &[Word], stdin: &Stdin) -> Option<String> {
    let code_flags: &[&str] = match name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
    {
        "python" | "pypy" => &["-c", "-m"],
        "perl" => &["-e", "-E"],
        "ruby" | "lua" | "luajit" => &["-e"],
        "node" | "nodejs" | "bun" | "deno" => &["-e", "--eval", "-p", "--print", "run", "eval"],
        "php" => &["-r", "-f"],
        _ => &[],
    };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.is_downloaded() {
            return Some(DOWNLOAD_RUN.into());
        }
        let l = a.literal()?;
        if code_flags
            .iter()
            .any(|f| l == *f || (f.len() == 2 && l.starts_with(f)))
        {
            return None;
        }
        if l == "-" {
            break;
        }
        if !l.starts_with('-') {
            // A script file.
            return None;
        }
        i += if matches!(l.as_str(), "-W" | "-X" | "-I" | "-r" | "--require") {
            2
        } else {
            1
        };
    }
    (*stdin == Stdin::Pipe(Producer::Download)).then(|| DOWNLOAD_RUN.into())
}

fn rm(args: &[Word], cwd: &Cwd) -> Option<String> {
    if args.iter().any(Word::has_unknown) {
        // Options and paths only known when it runs: it may be `-rf /`.
        return Some("rm of a path only known when the command runs".into());
    }
    let o = options::parse(args, &syntaxes::RM);
    // `--recur` is `--recursive`, as rm's getopt_long reads it.
    let recursive = o.has(Some('r'), Some("recursive")) || o.has(Some('R'), None);
    if !recursive {
        return None;
    }
    o.operands()
        .map(|t| locate(t, cwd))
        .find(|l| l.unsafe_to_delete())
        .map(|l| format!("recursive delete {}", l.describe()))
}

/// Tests that narrow what `find` matches by name, time or size (`-type` alone does not).
const FIND_FILTERS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-empty",
    "-newer",
    "-mtime",
    "-mmin",
    "-ctime",
    "-cmin",
    "-atime",
    "-amin",
    "-size",
    "-user",
    "-uid",
    "-inum",
    "-samefile",
];

/// What `find` runs or deletes; a word that could become one of these is the worst case.
const FIND_ACTIONS: &[&str] = &["-delete", "-exec", "-execdir", "-ok", "-okdir"];

/// `${U:--exec}`, `-{delete,print}`, `$X`, or a glob such as `*` that could match a file
/// named `-delete`: find may read any of them as an action. The value of a test
/// (`-name "$P"`) is not read as one.
fn may_hide_an_action(args: &[Word]) -> bool {
    args.iter().enumerate().any(|(k, a)| {
        let a_value = k > 0
            && args[k - 1]
                .literal()
                .is_some_and(|l| find_test_takes_value(&l));
        !a_value
            && (a.has_unknown() || FIND_ACTIONS.iter().any(|act| a.globs() && a.may_match(act)))
    })
}

/// A find test whose next word is its value.
fn find_test_takes_value(l: &str) -> bool {
    const TESTS: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-regextype",
        "-lname",
        "-ilname",
        "-anewer",
        "-cnewer",
        "-mtime",
        "-mmin",
        "-ctime",
        "-cmin",
        "-atime",
        "-amin",
        "-size",
        "-user",
        "-uid",
        "-group",
        "-gid",
        "-inum",
        "-samefile",
        "-perm",
        "-type",
        "-xtype",
        "-maxdepth",
        "-mindepth",
        "-links",
        "-used",
        "-fstype",
        "-context",
        "-printf",
    ];
    TESTS.contains(&l) || l.starts_with("-newer")
}

fn find(args: &[Word], cwd: &Cwd, stdin: &Stdin, depth: usize) -> Option<String> {
    if may_hide_an_action(args) {
        return Some(
            "find with a word only known when the command runs (it could be -delete or -exec)"
                .into(),
        );
    }
    let mut i = 0;
    while let Some(l) = args.get(i).and_then(Word::literal) {
        match l.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            _ if l.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut starts = Vec::new();
    while let Some(a) = args.get(i) {
        let l = a.literal().unwrap_or_default();
        if l.starts_with('-') || matches!(l.as_str(), "(" | "!" | ")" | ",") {
            break;
        }
        starts.push(locate(a, cwd));
        i += 1;
    }
    if starts.is_empty() {
        starts.push(locate(&Word::lit("."), cwd));
    }
    let expr = &args[i..];
    let filtered = expr.iter().any(|a| FIND_FILTERS.iter().any(|f| a.is(f)));
    // The worst place a found path can be.
    let worst = starts
        .iter()
        .copied()
        .map(|l| {
            if l == Location::Root && filtered {
                Location::Inside
            } else {
                l
            }
        })
        .max_by_key(|l| match l {
            Location::Inside => 0,
            Location::Root => 1,
            Location::Outside => 2,
            Location::Home => 3,
            Location::Unknown => 4,
        })
        .unwrap_or(Location::Inside);
    if expr.iter().any(|a| a.is("-delete")) && worst != Location::Inside {
        return Some(format!("find -delete {}", worst.describe()));
    }
    let found = match worst {
        Location::Inside => Word::lit("./found"),
        Location::Root => Word::lit("."),
        Location::Outside => Word::lit("/found"),
        Location::Home => Word {
            parts: vec![Part::Home],
        },
        Location::Unknown => Word {
            parts: vec![Part::Unknown(super::words::Unknown::Other)],
        },
    };
    let mut k = 0;
    while k < expr.len() {
        let is_exec = ["-exec", "-execdir", "-ok", "-okdir"]
            .iter()
            .any(|e| expr[k].is(e));
        if !is_exec {
            k += 1;
            continue;
        }
        let end = expr[k + 1..]
            .iter()
            .position(|a| a.is(";") || a.is("+"))
            .map_or(expr.len(), |p| k + 1 + p);
        let inner: Vec<Word> = expr[k + 1..end]
            .iter()
            .map(|w| {
                if w.literal().is_some_and(|l| l.contains("{}")) {
                    found.clone()
                } else {
                    w.clone()
                }
            })
            .collect();
        if let Some(why) = judge_argv(&inner, cwd, stdin, depth) {
            return Some(format!("find -exec: {why}"));
        }
        // Deleting each file found is a recursive delete of where it searches.
        let deletes = resolve::chain(&inner)
            .last()
            .is_some_and(|s| matches!(s.name.as_str(), "rm" | "unlink" | "shred" | "rmdir"));
        if deletes && worst != Location::Inside {
            return Some(format!("find -exec rm {}", worst.describe()));
        }
        k = end + 1;
    }
    None
}

fn git(args: &[Word], cwd: &Cwd, depth: usize) -> Option<String> {
    const WITH_VALUE: &[&str] = &[
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--super-prefix",
        "--exec-path",
    ];
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(l) = a.literal() else {
            return Some("git with a subcommand only known when the command runs".into());
        };
        if WITH_VALUE.contains(&l.as_str()) {
            if l == "-c"
                && let Some(why) = args.get(i + 1).and_then(|v| git_config(v, cwd, depth))
            {
                return Some(why);
            }
            i += 2;
        } else if l.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let sub = args.get(i)?.literal()?;
    let rest = &args[i + 1..];
    // git's parse-options reads a unique prefix as the option (`--har` is `--hard`).
    match sub.as_str() {
        "push" => push(rest),
        "reset" => reset(rest),
        "clean" => clean(rest),
        _ => None,
    }
}

/// `gh` commands that act on GitHub in the user's name and cannot be taken back: closing,
/// commenting, merging, reviewing, deleting, and `gh api` with a method other than GET.
fn gh(args: &[Word]) -> Option<String> {
    const WRITES: &[(&str, &[&str])] = &[
        ("issue", &["close", "comment", "delete", "lock", "transfer"]),
        ("pr", &["close", "comment", "merge", "review", "lock"]),
        ("repo", &["delete", "archive", "rename"]),
        ("release", &["delete"]),
    ];
    let mut words = Vec::new();
    let (mut i, mut after_group) = (0, 0);
    while let Some(a) = args.get(i) {
        let Some(l) = a.literal() else {
            return Some("gh with a subcommand only known when the command runs".into());
        };
        match l.as_str() {
            "-R" | "--repo" => i += 2,
            _ if l.starts_with('-') => i += 1,
            _ => {
                words.push(l);
                i += 1;
                if words.len() == 1 {
                    after_group = i;
                } else {
                    break;
                }
            }
        }
    }
    let group = words.first()?.as_str();
    if group == "api" {
        return gh_api(&args[after_group..]);
    }
    let action = words.get(1)?.as_str();
    WRITES
        .iter()
        .any(|(g, actions)| *g == group && actions.contains(&action))
        .then(|| format!("gh {group} {action} acts on GitHub in your name"))
}

/// `gh api`: a request with a method other than GET, or with fields (which make it a POST).
fn gh_api(args: &[Word]) -> Option<String> {
    let lits: Vec<Option<String>> = args.iter().map(Word::literal).collect();
    let mut method: Option<String> = None;
    let mut fields = false;
    for (k, l) in lits.iter().enumerate() {
        let Some(l) = l else { continue };
        let next = || lits.get(k + 1).cloned().flatten();
        match l.as_str() {
            "-X" | "--method" => method = Some(next().unwrap_or_default()),
            _ if l.starts_with("--method=") => method = Some(l["--method=".len()..].into()),
            _ if l.starts_with("-X") && l.len() > 2 => method = Some(l[2..].into()),
            "-f" | "-F" | "--field" | "--raw-field" | "--input" => fields = true,
            _ if l.starts_with("--field=") || l.starts_with("--raw-field=") => fields = true,
            _ => {}
        }
    }
    let writes = match &method {
        Some(m) => !m.eq_ignore_ascii_case("GET"),
        None => fields,
    };
    writes.then(|| "gh api sends a request that changes GitHub in your name".into())
}

fn reset(args: &[Word]) -> Option<String> {
    let o = options::parse(args, &syntaxes::GIT_RESET);
    if o.has(None, Some("hard")) {
        return Some("git reset --hard discards uncommitted changes".into());
    }
    o.items
        .iter()
        .any(|i| matches!(i, Item::Unresolved(_)))
        .then(|| {
            "git reset with an option only known when the command runs (it could be --hard)".into()
        })
}

/// `git -c key=value`: a value that git runs as a shell command is checked as one.
fn git_config(v: &Word, cwd: &Cwd, depth: usize) -> Option<String> {
    let l = v.literal()?;
    let (key, value) = l.split_once('=')?;
    let key = key.to_ascii_lowercase();
    if key.starts_with("alias.") {
        return value
            .strip_prefix('!')
            .and_then(|cmd| nested(&Word::lit(cmd), cwd, depth));
    }
    let runs = [
        "core.sshcommand",
        "core.pager",
        "core.editor",
        "core.fsmonitor",
        "diff.external",
        "sequence.editor",
    ];
    if runs.contains(&key.as_str()) {
        return nested(&Word::lit(value), cwd, depth);
    }
    None
}

fn push(args: &[Word]) -> Option<String> {
    if args.iter().any(|a| a.literal().is_none()) {
        return Some(
            "git push with a word only known when the command runs (it could force or delete)"
                .into(),
        );
    }
    let o = options::parse(args, &syntaxes::GIT_PUSH);
    let forced = o.has(Some('f'), Some("force"))
        || ["force-with-lease", "force-if-includes", "mirror"]
            .iter()
            .any(|l| o.has(None, Some(l)));
    if forced {
        return Some(FORCE_PUSH.into());
    }
    if o.has(Some('d'), Some("delete")) || o.has(None, Some("prune")) {
        return Some(DELETE_PUSH.into());
    }
    for refspec in o.operands().filter_map(Word::literal) {
        if refspec.starts_with('+') && refspec.len() > 1 {
            return Some(FORCE_PUSH.into());
        }
        if refspec.starts_with(':') && refspec.len() > 1 {
            return Some(DELETE_PUSH.into());
        }
    }
    None
}

fn clean(args: &[Word]) -> Option<String> {
    let o = options::parse(args, &syntaxes::GIT_CLEAN);
    // A word only known when it runs may be `-f`.
    let force = o.has(Some('f'), Some("force")) || args.iter().any(|a| a.literal().is_none());
    let dry = o.has(Some('n'), Some("dry-run"));
    (force && !dry).then(|| "git clean -f deletes untracked files".into())
}

fn dd(args: &[Word], cwd: &Cwd) -> Option<String> {
    for a in args {
        if a.has_unknown() {
            return Some("dd with an operand only known when the command runs".into());
        }
        let Some(target) = strip_literal_prefix(a, "of=") else {
            continue;
        };
        let loc = locate(&target, cwd);
        if loc.outside_workspace() {
            return Some(format!("dd writes {}", loc.describe()));
        }
    }
    None
}

/// `of=~/x` → `~/x`, with the `~` expanded as bash does after `=`.
fn strip_literal_prefix(w: &Word, prefix: &str) -> Option<Word> {
    let mut parts = w.parts.clone();
    let Some(Part::Lit { text, glob }) = parts.first_mut() else {
        return None;
    };
    let rest = text.strip_prefix(prefix)?.to_string();
    if *glob && rest.starts_with('~') {
        let tail = rest
            .find('/')
            .map(|i| rest[i..].to_string())
            .unwrap_or_default();
        parts[0] = Part::Lit {
            text: tail,
            glob: true,
        };
        parts.insert(0, Part::Home);
    } else {
        *text = rest;
    }
    Some(Word { parts })
}

fn permissions(name: &str, args: &[Word], cwd: &Cwd) -> Option<String> {
    let mut recursive = false;
    let mut reference = false;
    let mut options_done = false;
    let mut operands = Vec::new();
    for a in args {
        let l = a.literal().unwrap_or_default();
        if options_done || a.has_unknown() {
            operands.push(a);
        } else if l == "--" {
            options_done = true;
        } else if l.starts_with("--") {
            let o = options::parse(std::slice::from_ref(a), &syntaxes::CHMOD_LONG);
            recursive |= o.has(None, Some("recursive"));
            reference |= o.has(None, Some("reference"));
        } else if l.len() > 1
            && l.starts_with('-')
            && l[1..].chars().all(|c| "RcfvhHLP".contains(c))
        {
            recursive |= l.contains('R');
        } else {
            operands.push(a);
        }
    }
    if !recursive {
        return None;
    }
    let files = if reference {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or(&[])
    };
    files
        .iter()
        .map(|f| locate(f, cwd))
        .find(|l| l.outside_workspace())
        .map(|l| format!("recursive {name} {}", l.describe()))
}

fn kill(args: &[Word]) -> Option<String> {
    let mut after_options = false;
    for (k, a) in args.iter().enumerate() {
        let Some(l) = a.literal() else {
            continue;
        };
        if l == "--" {
            after_options = true;
            continue;
        }
        if l == "-1" && (k > 0 || after_options) {
            return Some("signals every process you own (kill -1)".into());
        }
    }
    None
}

/// A block or character device a redirection writes to (not `/dev/null`, a terminal or a
/// descriptor).
fn device(target: &Word) -> Option<String> {
    let l = target.literal()?;
    let dev = l.strip_prefix("/dev/")?;
    let harmless = ["null", "zero", "full", "stdout", "stderr", "stdin", "tty"].contains(&dev)
        // `/dev/tcp/…` and `/dev/udp/…` are bash's sockets, not devices.
        || ["fd/", "pts/", "shm/", "tcp/", "udp/"]
            .iter()
            .any(|p| dev.starts_with(p));
    (!harmless).then_some(l)
}
