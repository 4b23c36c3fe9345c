//! Which shell runs a command line, and how words are quoted for it: `/bin/bash -c` (else
//! `/bin/sh`) on Unix; PowerShell on Windows (`pwsh`, else Windows PowerShell), as Codex does
//! there, with `-NoProfile -NonInteractive -Command`.
//!
//! The quoting and argument building are pure, so their tests run on every platform.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The language a shell speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// bash or sh.
    #[cfg_attr(windows, allow(dead_code))]
    Posix,
    /// PowerShell 7 (`pwsh`) or Windows PowerShell 5.1.
    #[cfg_attr(not(windows), allow(dead_code))]
    PowerShell,
}

/// The shell commands run in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shell {
    pub dialect: Dialect,
    pub program: PathBuf,
}

/// Sent before a PowerShell command so its output reaches us as UTF-8 whatever the console's
/// code page (Windows PowerShell writes the OEM code page to a pipe otherwise).
const POWERSHELL_UTF8: &str = "[Console]::OutputEncoding = [System.Text.Encoding]::UTF8; $OutputEncoding = [System.Text.Encoding]::UTF8; ";

impl Shell {
    /// This machine's shell, found once per process.
    pub(crate) fn detect() -> &'static Shell {
        static SHELL: std::sync::OnceLock<Shell> = std::sync::OnceLock::new();
        SHELL.get_or_init(find)
    }

    /// The argument vector that runs `command` (program first).
    pub(crate) fn argv(&self, command: &str) -> Vec<OsString> {
        match self.dialect {
            Dialect::Posix => vec![
                self.program.clone().into_os_string(),
                "-c".into(),
                command.into(),
            ],
            Dialect::PowerShell => vec![
                self.program.clone().into_os_string(),
                "-NoLogo".into(),
                "-NoProfile".into(),
                "-NonInteractive".into(),
                "-Command".into(),
                format!("{POWERSHELL_UTF8}{command}").into(),
            ],
        }
    }

    /// One word quoted so the shell reads it back unchanged.
    pub(crate) fn quote(&self, word: &str) -> String {
        match self.dialect {
            Dialect::Posix => posix_quote(word),
            Dialect::PowerShell => powershell_quote(word),
        }
    }

    /// What the prompt says the shell is: "bash (/bin/bash)", "PowerShell (C:\…\pwsh.exe)".
    pub(crate) fn describe(&self) -> String {
        let name = match self.dialect {
            Dialect::PowerShell => "PowerShell".to_string(),
            Dialect::Posix => self
                .program
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sh".into()),
        };
        format!("{name} ({})", self.program.display())
    }
}

#[cfg(unix)]
fn find() -> Shell {
    let program = if Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "/bin/sh"
    };
    Shell {
        dialect: Dialect::Posix,
        program: PathBuf::from(program),
    }
}

#[cfg(windows)]
fn find() -> Shell {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    let system_root = std::env::var_os("SystemRoot").map(PathBuf::from);
    Shell {
        dialect: Dialect::PowerShell,
        program: powershell_program(&dirs, system_root.as_deref(), |p| p.is_file()),
    }
}

#[cfg(not(any(unix, windows)))]
fn find() -> Shell {
    Shell {
        dialect: Dialect::Posix,
        program: PathBuf::from("sh"),
    }
}

/// `pwsh.exe` on `PATH`, else `powershell.exe` on `PATH`, else Windows PowerShell where
/// Windows installs it, else the bare name.
#[cfg_attr(not(windows), allow(dead_code))]
pub(crate) fn powershell_program(
    path: &[PathBuf],
    system_root: Option<&Path>,
    exists: impl Fn(&Path) -> bool,
) -> PathBuf {
    for name in ["pwsh.exe", "powershell.exe"] {
        if let Some(found) = path.iter().map(|d| d.join(name)).find(|p| exists(p)) {
            return found;
        }
    }
    if let Some(root) = system_root {
        let builtin = root.join("System32/WindowsPowerShell/v1.0/powershell.exe");
        if exists(&builtin) {
            return builtin;
        }
    }
    PathBuf::from("powershell.exe")
}

/// A word for bash and sh: bare when it holds only safe characters, else single-quoted.
pub(crate) fn posix_quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// A word for PowerShell: bare when it holds only safe characters, else a single-quoted
/// (verbatim) string, where the only special character is the quote itself, doubled.
/// PowerShell also takes the typographic quotes U+2018, U+2019, U+201A and U+201B as single
/// quotes, so those are doubled too.
pub(crate) fn powershell_quote(w: &str) -> String {
    if !w.is_empty()
        && !w.starts_with('-')
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./\\:+=".contains(c))
    {
        return w.to_string();
    }
    let mut out = String::with_capacity(w.len() + 2);
    out.push('\'');
    for c in w.chars() {
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}') {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pwsh() -> Shell {
        Shell {
            dialect: Dialect::PowerShell,
            program: PathBuf::from(r"C:\Program Files\PowerShell\7\pwsh.exe"),
        }
    }

    #[test]
    fn powershell_words_are_quoted_verbatim() {
        let cases = [
            ("src", "src"),
            (r"C:\repo\src\main.rs", r"C:\repo\src\main.rs"),
            ("", "''"),
            ("two words", "'two words'"),
            ("it's", "'it''s'"),
            ("$env:OPENAI_API_KEY", "'$env:OPENAI_API_KEY'"),
            (
                "$(Remove-Item -Recurse C:\\)",
                "'$(Remove-Item -Recurse C:\\)'",
            ),
            ("a`b", "'a`b'"),
            ("a;b|c&d", "'a;b|c&d'"),
            ("@(1,2)", "'@(1,2)'"),
            ("-Recurse", "'-Recurse'"),
            ("\"double\"", "'\"double\"'"),
            ("it\u{2019}s", "'it\u{2019}\u{2019}s'"),
            ("\u{2018}x\u{201B}", "'\u{2018}\u{2018}x\u{201B}\u{201B}'"),
            ("line\nbreak", "'line\nbreak'"),
        ];
        for (word, quoted) in cases {
            assert_eq!(powershell_quote(word), quoted, "{word:?}");
        }
    }

    /// In a single-quoted PowerShell string nothing is special but the (doubled) quotes:
    /// reading the quoted word back the way PowerShell's tokenizer does gives the word.
    #[test]
    fn powershell_quoting_round_trips() {
        fn unquote(q: &str) -> String {
            let is_quote =
                |c: char| matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}');
            let Some(inner) = q.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) else {
                return q.to_string();
            };
            let mut out = String::new();
            let mut chars = inner.chars().peekable();
            while let Some(c) = chars.next() {
                if is_quote(c) {
                    // A lone quote would end the string: every quote inside must be doubled.
                    assert!(chars.next().is_some_and(is_quote), "lone quote in {q:?}");
                }
                out.push(c);
            }
            out
        }
        for word in [
            "plain",
            "'",
            "''",
            "'; Remove-Item C:\\ -Recurse; '",
            "\u{2019}; calc; \u{2018}",
            "$x $(y) `z",
            "",
            "-WhatIf",
        ] {
            assert_eq!(unquote(&powershell_quote(word)), word, "{word:?}");
        }
    }

    #[test]
    fn posix_words_are_single_quoted() {
        assert_eq!(posix_quote("src/main.rs"), "src/main.rs");
        assert_eq!(posix_quote("it's"), "'it'\\''s'");
        assert_eq!(posix_quote(""), "''");
        assert_eq!(posix_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn powershell_runs_the_command_without_profile() {
        let argv = pwsh().argv("Get-ChildItem -Force; exit 3");
        let argv: Vec<String> = argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            &argv[..5],
            [
                r"C:\Program Files\PowerShell\7\pwsh.exe",
                "-NoLogo",
                "-NoProfile",
                "-NonInteractive",
                "-Command"
            ]
        );
        assert_eq!(argv.len(), 6, "the command is one argument");
        assert!(argv[5].ends_with("; Get-ChildItem -Force; exit 3"));
        assert!(argv[5].starts_with("[Console]::OutputEncoding"));
        assert_eq!(pwsh().quote("a b"), "'a b'");
        assert!(pwsh().describe().starts_with("PowerShell ("));
    }

    #[cfg(windows)]
    #[test]
    fn windows_commands_run_in_powershell() {
        let shell = Shell::detect();
        assert_eq!(shell.dialect, Dialect::PowerShell);
        assert!(
            shell.describe().starts_with("PowerShell ("),
            "{}",
            shell.describe()
        );
    }

    #[test]
    fn pwsh_is_preferred_then_windows_powershell() {
        let dirs = [
            PathBuf::from(r"C:\Windows\System32"),
            PathBuf::from(r"C:\Program Files\PowerShell\7"),
        ];
        let root = Path::new(r"C:\Windows");
        let only =
            |names: &'static [&'static str]| move |p: &Path| names.iter().any(|n| p.ends_with(n));
        let found = powershell_program(&dirs, Some(root), only(&["pwsh.exe", "powershell.exe"]));
        assert!(found.ends_with("pwsh.exe"), "{found:?}");
        let found = powershell_program(&dirs, Some(root), only(&["powershell.exe"]));
        assert!(found.ends_with("powershell.exe"));
        assert!(found.starts_with(&dirs[0]));
        let found = powershell_program(&[], Some(root), only(&["powershell.exe"]));
        assert!(found.starts_with(root) && found.ends_with("powershell.exe"));
        let found = powershell_program(&[], None, |_| false);
        assert_eq!(found, PathBuf::from("powershell.exe"));
    }
}
