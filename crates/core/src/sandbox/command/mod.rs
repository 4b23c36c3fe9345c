//! Command safety on the parsed command, not its text.
//!
//! A shell command line is parsed with the bash grammar of tree-sitter ([`parse`]) into the
//! simple commands it runs, each with its words expanded as far as they can be known before it
//! runs (variables the script set, `~`, quoting, escapes, `$'…'`). Each simple command is
//! resolved through its wrappers to the program that does the work ([`resolve`]: `\rm`,
//! `/bin/rm`, `command`, `env`, `exec`, `nice`, `timeout`, `xargs`, `sudo`, …), and the
//! scripts it hands to a shell (`sh -c`, `bash -c`, `eval`, a here-document or a pipe into
//! `sh`) are parsed and judged again ([`rules`]). What cannot be parsed, or depends on a value
//! only known when it runs in a place where that matters, counts as dangerous.
//!
//! [`safe`] decides the other end: commands that only read, which may run unasked.
//!
//! Paths are judged from their text: relative ones that stay below the session's folder are
//! inside the workspace; absolute ones, `~`, `$HOME`, `..` above the root and unknown
//! expansions are not. `rm -rf build` is an ordinary command (the sandbox and the approval
//! policy decide it like any other); `rm -rf .`, `rm -rf *` and `rm -rf /abs/path` are
//! dangerous.

mod options;
mod parse;
mod resolve;
mod rules;
mod safe;
mod syntaxes;
mod words;

use words::Cwd;

/// The reason given for a script fetched from the network and run.
const DOWNLOAD_RUN: &str = "runs a script downloaded from the network";
/// A shell is given a script that is only known when the command runs.
const UNCHECKABLE_SCRIPT: &str =
    "runs a shell script that is only known when the command runs, so it cannot be checked";
/// A shell reads commands from another program's output.
const UNCHECKABLE_PIPE: &str =
    "pipes the output of another program into a shell, so the commands it runs cannot be checked";
/// Scripts inside scripts followed at most this deep.
const MAX_NESTING: usize = 8;

/// What a command line does, as far as its parse tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Analysis {
    /// Why it is dangerous (it always asks, and is refused where nobody can ask).
    pub danger: Option<String>,
    /// Every command in it only reads: it may run without the process sandbox.
    pub read_only: bool,
    /// For one plain command: the words an "always allow" covers (its wrappers, its program
    /// and its first argument). None for anything compound.
    pub key_words: Option<Vec<String>>,
}

/// Parses and judges `command` as bash.
pub(crate) fn analyze(command: &str) -> Analysis {
    let mut a = analyze_at(command, Cwd::Inside(Vec::new()), 0);
    // tree-sitter reads `\<newline>` inside a word as a word break, bash joins the lines:
    // judge both readings and keep the stricter verdict.
    if command.contains("\\\n") || command.contains("\\\r\n") {
        let joined = command.replace("\\\r\n", "").replace("\\\n", "");
        let b = analyze_at(&joined, Cwd::Inside(Vec::new()), 0);
        a.danger = a.danger.or(b.danger);
        a.read_only &= b.read_only;
        a.key_words = None;
    }
    a
}

/// Each simple command of `command` (in pipelines, lists and substitutions), for saved
/// rules. None when it cannot be parsed.
pub(crate) fn simple_commands(command: &str) -> Option<Vec<crate::config::rules::CommandPart>> {
    let parsed = parse::parse(command, Cwd::Inside(Vec::new()));
    if parsed.broken.is_some() {
        return None;
    }
    let parts = parsed
        .commands
        .iter()
        .map(|c| crate::config::rules::CommandPart {
            words: c.argv.iter().map(words::Word::literal).collect(),
            redirects: !c.assignments.is_empty()
                || c.writes
                    .iter()
                    .any(|w| w.literal().as_deref() != Some("/dev/null")),
        });
    Some(parts.collect())
}

/// One simple command only reads (it is safe to run unasked): for the parts of a line no
/// saved rule names.
pub(crate) fn part_read_only(part: &crate::config::rules::CommandPart) -> bool {
    if part.redirects {
        return false;
    }
    let Some(words) = part.words.iter().cloned().collect::<Option<Vec<String>>>() else {
        return false;
    };
    shlex::try_join(words.iter().map(String::as_str)).is_ok_and(|line| analyze(&line).read_only)
}

/// The danger in a script nested `depth` deep in another (`sh -c '…'`).
fn analyze_nested(script: &str, cwd: Cwd, depth: usize) -> Option<String> {
    if depth > MAX_NESTING {
        return Some("nests shell scripts too deeply to check".into());
    }
    let a = analyze_at(script, cwd.clone(), depth);
    if a.danger.is_some() || !script.contains("\\\n") {
        return a.danger;
    }
    analyze_at(&script.replace("\\\n", ""), cwd, depth).danger
}

fn analyze_at(command: &str, cwd: Cwd, depth: usize) -> Analysis {
    let parsed = parse::parse(command, cwd);
    if let Some(why) = &parsed.broken {
        return Analysis {
            danger: Some(why.clone()),
            read_only: false,
            key_words: None,
        };
    }
    let danger = parsed.commands.iter().find_map(|c| rules::judge(c, depth));
    Analysis {
        read_only: danger.is_none() && safe::reads_only(&parsed),
        key_words: key_words(&parsed),
        danger,
    }
}

fn key_words(parsed: &parse::Parsed) -> Option<Vec<String>> {
    if parsed.compound || parsed.commands.len() != 1 {
        return None;
    }
    let c = &parsed.commands[0];
    if !c.assignments.is_empty() || !c.writes.is_empty() || c.stdin != parse::Stdin::Inherited {
        return None;
    }
    let chain = resolve::chain(&c.argv);
    let n = (chain.prefix_len? + 1).min(c.argv.len());
    c.argv[..n].iter().map(words::Word::literal).collect()
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
