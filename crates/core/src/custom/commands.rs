//! Custom commands: `/name args` sends a saved prompt as the user's message. Claude Code's
//! Markdown (front matter `description`, `argument-hint`, `model`, `allowed-tools`; the body
//! takes `$ARGUMENTS` and `$1`…`$9`) and Gemini CLI's TOML (`prompt`, `description`; the
//! prompt takes `{{args}}`). Without a placeholder the arguments are appended, as each peer
//! does.

use serde::Deserialize;
use std::path::{Path, PathBuf};

use super::check_name;

/// Which peer's placeholders a command's prompt uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// `$ARGUMENTS`, `$1`…`$9`.
    Claude,
    /// `{{args}}`.
    Gemini,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CustomCommand {
    /// What the user types after `/` (`git:commit` for `git/commit.md`).
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    pub prompt: String,
    pub style: Style,
    pub path: PathBuf,
}

#[derive(Debug, Deserialize)]
struct Markdown {
    description: Option<String>,
    #[serde(rename = "argument-hint", alias = "argument_hint")]
    argument_hint: Option<String>,
}

#[derive(Debug, Deserialize)]
struct GeminiToml {
    prompt: Option<String>,
    description: Option<String>,
}

/// Parses a command file by its extension; Err says what is wrong. A Markdown file without
/// front matter is all prompt (Claude Code's front matter is optional).
pub(crate) fn parse(path: &Path, name: String, text: &str) -> Result<CustomCommand, String> {
    check_name(&name)?;
    let is_toml = path.extension().is_some_and(|e| e == "toml");
    let (description, argument_hint, prompt, style) = if is_toml {
        let t: GeminiToml = toml::from_str(text).map_err(|e| format!("invalid TOML: {e}"))?;
        let prompt = t.prompt.ok_or("`prompt` is required")?;
        (t.description, None, prompt, Style::Gemini)
    } else if text.trim_start_matches('\u{feff}').starts_with("---") {
        let (yaml, body_start) = crate::skills::front_matter::split(text)?;
        let m: Markdown = super::front_matter(yaml)?;
        let body = text[body_start..].to_string();
        (m.description, m.argument_hint, body, Style::Claude)
    } else {
        (None, None, text.to_string(), Style::Claude)
    };
    if prompt.trim().is_empty() {
        return Err("the prompt is empty".into());
    }
    // As Claude Code does, a command without a description is described by its first line.
    let description = description
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| {
            let first = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            first.trim().chars().take(100).collect()
        });
    Ok(CustomCommand {
        name,
        description,
        argument_hint: argument_hint.filter(|h| !h.trim().is_empty()),
        prompt: prompt.trim().to_string(),
        style,
        path: path.to_path_buf(),
    })
}

impl CustomCommand {
    /// The user message `/name args` sends.
    pub(crate) fn expand(&self, args: &str) -> String {
        let args = args.trim();
        match self.style {
            Style::Gemini => {
                if self.prompt.contains("{{args}}") {
                    self.prompt.replace("{{args}}", args)
                } else if args.is_empty() {
                    self.prompt.clone()
                } else {
                    format!("{}\n\n/{} {args}", self.prompt, self.name)
                }
            }
            Style::Claude => {
                let positional = words(args);
                let used = self.prompt.contains("$ARGUMENTS")
                    || (1..=9).any(|i| self.prompt.contains(&format!("${i}")));
                let mut out = self.prompt.replace("$ARGUMENTS", args);
                // `$9` first, so `$1` does not eat the start of `$10`-like text.
                for i in (1..=9).rev() {
                    let value = positional.get(i - 1).map_or("", String::as_str);
                    out = out.replace(&format!("${i}"), value);
                }
                if !used && !args.is_empty() {
                    out.push_str(&format!("\n\nARGUMENTS: {args}"));
                }
                out
            }
        }
    }
}

/// Arguments split as a shell would at its simplest: on spaces, with "double" or 'single'
/// quotes keeping spaces inside one argument.
fn words(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claude Code's documented example of positional arguments.
    const REVIEW_PR: &str = "---
argument-hint: [pr-number] [priority] [assignee]
description: Review pull request
---

Review PR #$1 with priority $2 and assign to $3.
Focus on security, performance, and code style.
";

    /// Gemini CLI's documented `{{args}}` example, in its shape.
    const GEMINI_FIX: &str = r#"# In: <project>/.gemini/commands/git/fix.toml
# Invoked via: /git:fix "Button is misaligned"

description = "Generates a fix for a given issue."
prompt = "Please provide a code fix for the issue described here: {{args}}."
"#;

    #[test]
    fn claude_codes_positional_arguments_and_arguments() {
        let c = parse(Path::new("review-pr.md"), "review-pr".into(), REVIEW_PR).unwrap();
        assert_eq!(c.description, "Review pull request");
        assert_eq!(
            c.argument_hint.as_deref(),
            Some("[pr-number] [priority] [assignee]")
        );
        assert_eq!(
            c.expand("456 high \"alice b\""),
            "Review PR #456 with priority high and assign to alice b.\nFocus on security, performance, and code style."
        );
        let fix = parse(
            Path::new("fix-issue.md"),
            "fix-issue".into(),
            "Fix issue #$ARGUMENTS following our coding standards\n",
        )
        .unwrap();
        assert_eq!(
            fix.description,
            "Fix issue #$ARGUMENTS following our coding standards"
        );
        assert_eq!(
            fix.expand("123 high-priority"),
            "Fix issue #123 high-priority following our coding standards"
        );
        let plain = parse(Path::new("p.md"), "p".into(), "Do it.\n").unwrap();
        assert_eq!(plain.expand(""), "Do it.");
        assert_eq!(plain.expand("now"), "Do it.\n\nARGUMENTS: now");
    }

    #[test]
    fn geminis_args_and_appended_invocation() {
        let c = parse(Path::new("fix.toml"), "git:fix".into(), GEMINI_FIX).unwrap();
        assert_eq!(c.description, "Generates a fix for a given issue.");
        assert_eq!(
            c.expand("\"Button is misaligned\""),
            "Please provide a code fix for the issue described here: \"Button is misaligned\"."
        );
        let t = parse(Path::new("t.toml"), "t".into(), "prompt = \"Test.\"\n").unwrap();
        assert_eq!(t.expand("fast"), "Test.\n\n/t fast");
    }

    #[test]
    fn broken_files_say_what_is_wrong() {
        let err = parse(Path::new("a.toml"), "a".into(), "prompt = \n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
        let err = parse(Path::new("a.toml"), "a".into(), "description = \"d\"\n").unwrap_err();
        assert!(err.contains("prompt"), "{err}");
        let err = parse(Path::new("a.md"), "a".into(), "---\n- [\n---\nx\n").unwrap_err();
        assert!(err.contains("front matter"), "{err}");
        let err = parse(Path::new("a b.md"), "a b".into(), "x\n").unwrap_err();
        assert!(err.contains("spaces"), "{err}");
        assert_eq!(words("a 'b c' \"\" d"), ["a", "b c", "", "d"]);
    }
}
