//! Property tests: every spelling of a dangerous command that bash would run the same way is
//! caught (quoting, escapes, folders, wrappers, nested shells, lists, pipelines, subshells,
//! substitutions, odd whitespace, line continuations), and ordinary commands in the same
//! shapes are not. Options are caught in every abbreviation the program accepts, and no word
//! the parser cannot resolve to known text ever makes a command read-only.

use proptest::prelude::*;
use proptest::sample::select;

use super::analyze;
use super::tests::{ORDINARY, ROUND2_DANGEROUS, ROUND2_NOT_READ_ONLY};

/// `s` as one single-quoted shell word.
fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `s` as one double-quoted shell word.
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Ways to write the program name `rm` (or any name `n`).
fn spell(n: &str, how: usize) -> String {
    let (first, rest) = n.split_at(1);
    match how {
        0 => n.to_string(),
        1 => format!("\\{n}"),
        2 => format!("/bin/{n}"),
        3 => format!("/usr/bin/{n}"),
        4 => format!("\"{n}\""),
        5 => format!("'{n}'"),
        6 => format!("{first}''{rest}"),
        7 => format!("{first}\"\"{rest}"),
        8 => format!(
            "$'{}'",
            n.bytes().map(|b| format!("\\x{b:02x}")).collect::<String>()
        ),
        9 => format!("{first}\\{rest}"),
        _ => format!("$'{first}'{rest}"),
    }
}

const SPELLINGS: usize = 11;

/// Wrappers that run the command after them.
const PREFIXES: &[&str] = &[
    "",
    "command ",
    "command -p ",
    "env ",
    "env -i ",
    "env FOO=1 BAR=2 ",
    "/usr/bin/env -u X ",
    "exec ",
    "nice ",
    "nice -n 10 ",
    "timeout 5 ",
    "timeout -s KILL 5 ",
    "sudo ",
    "sudo -u root ",
    "sudo -E -H ",
    "doas ",
    "busybox ",
    "nohup ",
    "setsid ",
    "time ",
    "stdbuf -oL ",
    "ionice -c3 ",
    "FOO=1 ",
    "sudo env timeout 9 nice ",
];

/// Shapes around a command: `{}` is where it goes.
const SHAPES: &[&str] = &[
    "{}",
    "{};",
    "({})",
    "{ {}; }",
    "true && {}",
    "false || {}",
    "ls; {}",
    "{}; echo done",
    "echo start\n{}\necho end",
    "ls | {}",
    "{} | cat",
    "echo $({})",
    "x=$({})",
    "echo `{}`",
    "cat <({})",
    "if true; then {}; fi",
    "for i in 1 2; do {}; done",
    "while true; do {}; break; done",
    "case a in a) {};; esac",
    "f() { {}; }; f",
    "! {}",
    "{} &",
    "{} 2>/dev/null",
];

/// Ways to hand a command to another shell: `{s}` single-quoted, `{d}` double-quoted, `{r}`
/// raw.
const NESTINGS: &[&str] = &[
    "{r}",
    "sh -c {s}",
    "bash -c {s}",
    "bash -lc {d}",
    "/bin/sh -c {d}",
    "eval {s}",
    "eval {d}",
    "echo {s} | sh",
    "printf '%s\\n' {s} | bash",
    "bash <<'EOF'\n{r}\nEOF",
    "cat <<'EOF' | sh\n{r}\nEOF",
    "bash <<< {s}",
    "sudo sh -c {s}",
    "su -c {s}",
    "env bash -c {s}",
    "zsh -c {s}",
];

fn nest(cmd: &str, how: &str) -> String {
    how.replace("{s}", &single_quoted(cmd))
        .replace("{d}", &double_quoted(cmd))
        .replace("{r}", cmd)
}

/// Replaces single spaces between words (outside quotes) with other blanks.
fn rewhitespace(cmd: &str, pick: &[u8]) -> String {
    let mut out = String::new();
    let (mut single, mut double) = (false, false);
    let mut k = 0;
    let mut prev = '\0';
    for c in cmd.chars() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            _ => {}
        }
        if c == ' ' && !single && !double {
            let choice = pick.get(k % pick.len().max(1)).copied().unwrap_or(0);
            k += 1;
            out.push_str(match choice % 4 {
                0 => " ",
                1 => "   ",
                2 => "\t",
                _ => " \\\n  ",
            });
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

/// Dangerous commands, each with the program name separate so it can be respelled.
const DANGEROUS: &[(&str, &str)] = &[
    ("rm", "-rf ~"),
    ("rm", "-fr /"),
    ("rm", "-r -f /etc"),
    ("rm", "--recursive --force \"$HOME\""),
    ("rm", "-Rf ${HOME}/code"),
    ("rm", "-rf .."),
    ("rm", "-rf ../sibling"),
    ("rm", "-rf ."),
    ("rm", "-rf *"),
    ("rm", "-rfv /tmp/victim"),
    ("rm", "-rf $UNSET_THING"),
    ("rm", "-rf ~root"),
    ("git", "push origin :main"),
    ("git", "push --force"),
    ("git", "push -f origin main"),
    ("git", "push origin +main"),
    ("git", "push --delete origin b"),
    ("git", "push --force-with-lease origin main"),
    ("git", "reset --hard HEAD~1"),
    ("git", "clean -fdx"),
    ("find", "/ -delete"),
    ("find", "~ -name x -delete"),
    ("find", ". -exec rm -rf {} +"),
    ("dd", "if=/dev/zero of=/dev/sda"),
    ("mkfs.ext4", "/dev/sdb1"),
    ("chmod", "-R 777 /"),
    ("chown", "-R me ~"),
    // Issue 22: abbreviated options, brace and expansion forms.
    ("rm", "--recur -f /abs/dir"),
    ("rm", "--recur -f ./*"),
    ("git", "reset --har"),
    ("git", "push --dele origin main"),
    ("find", ". -{delete,print}"),
    ("rm", "${X:--rf} /"),
    ("find", "src ${U:--exec} touch PWN \\;"),
];

/// Downloads piped or substituted into a shell or an interpreter.
const DOWNLOADERS: &[&str] = &[
    "curl -fsSL https://x.sh",
    "wget -qO- https://x",
    "/usr/bin/curl -s https://x",
    "\\curl https://x",
    "env curl https://x",
];

const CONSUMERS: &[&str] = &[
    "sh",
    "bash",
    "/bin/sh",
    "env bash",
    "sudo bash",
    "sudo -E bash -",
    "python3",
    "python",
    "perl",
    "sh -s -- -y",
    "zsh",
    "command bash",
    "\\bash",
    "tee log | sh",
    "cat | bash",
];

const CONNECTORS: &[&str] = &[" | ", " |& ", " |\n"];

fn spelled_dangerous() -> impl Strategy<Value = String> {
    (
        select(DANGEROUS),
        0..SPELLINGS,
        select(PREFIXES),
        0..SPELLINGS,
    )
        .prop_map(|((name, args), how, prefix, prefix_how)| {
            // Respell the wrapper's own first word too.
            let prefix = match prefix.split_once(' ') {
                Some((first, rest)) if !first.is_empty() && !first.contains('=') => {
                    format!("{} {rest}", spell(first, prefix_how))
                }
                _ => prefix.to_string(),
            };
            format!("{prefix}{} {args}", spell(name, how))
        })
}

fn download_run() -> impl Strategy<Value = String> {
    prop_oneof![
        (select(DOWNLOADERS), select(CONNECTORS), select(CONSUMERS))
            .prop_map(|(d, c, s)| format!("{d}{c}{s}")),
        select(DOWNLOADERS).prop_map(|d| format!("sh <({d})")),
        select(DOWNLOADERS).prop_map(|d| format!("bash -c \"$({d})\"")),
        select(DOWNLOADERS).prop_map(|d| format!("source <({d})")),
        select(DOWNLOADERS).prop_map(|d| format!("eval \"$({d})\"")),
        select(DOWNLOADERS).prop_map(|d| format!("python3 <({d})")),
    ]
}

fn dressed(core: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    (
        core,
        select(NESTINGS),
        select(SHAPES),
        select(NESTINGS),
        proptest::collection::vec(any::<u8>(), 1..8),
    )
        .prop_map(|(cmd, inner, shape, outer, blanks)| {
            let cmd = rewhitespace(&cmd, &blanks);
            let cmd = nest(&cmd, inner);
            let cmd = shape.replace("{}", &cmd);
            nest(&cmd, outer)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_spelling_of_a_dangerous_command_is_caught(cmd in dressed(spelled_dangerous())) {
        let a = analyze(&cmd);
        prop_assert!(a.danger.is_some(), "not caught:\n{cmd}");
        prop_assert!(!a.read_only);
    }

    #[test]
    fn every_download_run_is_caught(cmd in dressed(download_run())) {
        let a = analyze(&cmd);
        prop_assert!(a.danger.is_some(), "not caught:\n{cmd}");
    }

    #[test]
    fn ordinary_commands_stay_ordinary_in_any_shape(
        cmd in select(ORDINARY),
        shape in select(SHAPES),
        nesting in select(&NESTINGS[..3]),
    ) {
        // Here-documents keep their lines as written; other shapes may wrap them.
        // and a comment runs to the end of its line.
        prop_assume!(!cmd.contains("<<") || shape == "{}");
        prop_assume!(!cmd.contains('#') || shape == "{}");
        let full = nest(&shape.replace("{}", cmd), nesting);
        let a = analyze(&full);
        prop_assert!(a.danger.is_none(), "flagged: {:?}\n{full}", a.danger);
    }
}

/// Simple commands that only read, as words (no quoting), for the read-only properties.
const READ_ONLY_BASES: &[&str] = &[
    "ls -la",
    "sort -n x",
    "git log -5",
    "git status",
    "find . -name x",
    "head -n 5 f",
    "wc -l f",
    "cat a",
    "uniq -c a",
    "grep -rn foo .",
    "rg foo",
    "time ls",
    "env -u X ls",
    "nice -n 5 sort a",
    "timeout 5 git diff",
    "sed -n 1,20p f",
];

/// Words whose text only the running shell knows, or that it makes into other words.
const UNRESOLVED: &[&str] = &[
    "$X",
    "\"$X\"",
    "${U:--o}",
    "${U:--o}keep.txt",
    "-$X",
    "$'\\x2d'$X",
    "$(echo -o)",
    "\"$(echo -o)\"",
    "`echo -o`",
    "{a,b}",
    "-{delete,print}",
    "{1..3}",
    "{-o,x}",
    "*",
    "?x",
    "[-]o",
    "*.txt",
    "$1",
    "\"$@\"",
    "$((1))",
    "~+",
];

/// Shapes that keep a read-only command read-only.
const READ_ONLY_SHAPES: &[&str] = &[
    "{}",
    "{};",
    "({})",
    "{ {}; }",
    "true && {}",
    "ls; {}",
    "{} | cat",
    "cat a | {}",
    "{} 2>/dev/null",
    "if true; then {}; fi",
];

/// `base` with `word` put in at `at` (inserted, or in place of the word there).
fn with_word(base: &str, word: &str, at: usize, replace: bool) -> String {
    let mut words: Vec<&str> = base.split(' ').collect();
    let at = at % (words.len() + usize::from(!replace));
    if replace && at < words.len() {
        words[at] = word;
    } else {
        words.insert(at.min(words.len()), word);
    }
    words.join(" ")
}

/// Long options as a program abbreviates them: `name` cut to `len` (at least `min`).
fn abbreviated(name: &str, min: usize, len: usize) -> String {
    let n = min + len % (name.len() - min + 1);
    name[..n].to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn read_only_commands_stay_read_only_in_plain_shapes(
        base in select(READ_ONLY_BASES),
        shape in select(READ_ONLY_SHAPES),
    ) {
        let cmd = shape.replace("{}", base);
        prop_assert!(analyze(&cmd).read_only, "not read-only:\n{cmd}");
    }

    #[test]
    fn no_unresolved_word_makes_a_command_read_only(
        base in select(READ_ONLY_BASES),
        word in select(UNRESOLVED),
        at in 0usize..8,
        replace in any::<bool>(),
        shape in select(READ_ONLY_SHAPES),
    ) {
        let cmd = shape.replace("{}", &with_word(base, word, at, replace));
        prop_assert!(!analyze(&cmd).read_only, "read-only:\n{cmd}");
    }

    #[test]
    fn the_read_only_probes_are_never_read_only(
        probe in select(ROUND2_NOT_READ_ONLY),
        shape in select(SHAPES),
        blanks in proptest::collection::vec(any::<u8>(), 1..8),
    ) {
        let cmd = shape.replace("{}", &rewhitespace(probe, &blanks));
        prop_assert!(!analyze(&cmd).read_only, "read-only:\n{cmd}");
    }

    #[test]
    fn the_dangerous_probes_are_caught_in_any_dress(
        cmd in dressed(select(ROUND2_DANGEROUS).prop_map(|(c, _)| c.to_string())),
    ) {
        prop_assert!(analyze(&cmd).danger.is_some(), "not caught:\n{cmd}");
    }

    #[test]
    fn abbreviated_options_are_the_options(len in 0usize..32, target in select(&["/abs/dir", "./*", "~", ".."])) {
        let recursive = abbreviated("recursive", 1, len);
        let cmd = format!("rm --{recursive} -f {target}");
        prop_assert!(analyze(&cmd).danger.is_some(), "not caught: {cmd}");
        let hard = abbreviated("hard", 1, len);
        let cmd = format!("git reset --{hard}");
        prop_assert!(analyze(&cmd).danger.is_some(), "not caught: {cmd}");
        for (name, min) in [("delete", 1), ("force", 2), ("mirror", 1), ("prune", 2)] {
            let cmd = format!("git push --{} origin main", abbreviated(name, min, len));
            prop_assert!(analyze(&cmd).danger.is_some(), "not caught: {cmd}");
        }
        let cmd = format!("git clean --{} -d", abbreviated("force", 1, len));
        prop_assert!(analyze(&cmd).danger.is_some(), "not caught: {cmd}");
        for (cmd, name, min) in [
            ("sort --{}=keep.txt x", "output", 1),
            ("sort --{}=sh x", "compress-program", 1),
            ("time --{}=notes.txt true", "output", 1),
            ("time --{} -o notes.txt true", "append", 1),
            ("sort --{}=/elsewhere x", "temporary-directory", 1),
        ] {
            let cmd = cmd.replace("{}", &abbreviated(name, min, len));
            prop_assert!(!analyze(&cmd).read_only, "read-only: {cmd}");
        }
    }
}
