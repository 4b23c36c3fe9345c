//! Code review, the same in every face (docs/review.md): what to review (`Target`), the
//! diff gathered with the agent's own read-only git (the face hands in a runner: this crate
//! runs nothing), the prompt, and the model's findings: checked, shown as text, and turned
//! into GitHub workflow commands for the Action's annotations.

use serde::{Deserialize, Serialize};

/// What a review looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Staged, unstaged and untracked changes against `HEAD`.
    Uncommitted,
    /// The work tree against its merge base with a branch.
    Base(String),
    /// One commit, with an optional label (its subject) for the user.
    Commit { sha: String, title: Option<String> },
    /// The user's own instructions, no diff gathered.
    Custom(String),
}

/// `/review [base BRANCH | commit SHA | uncommitted] [focus]`: the target and the focus text.
pub fn parse_slash(args: &str) -> Result<(Target, String), String> {
    let args = args.trim();
    let (word, rest) = match args.find(char::is_whitespace) {
        Some(i) => (&args[..i], args[i..].trim_start()),
        None => (args, ""),
    };
    let named = |what: &str| -> Result<(String, String), String> {
        let (name, focus) = match rest.find(char::is_whitespace) {
            Some(i) => (&rest[..i], rest[i..].trim()),
            None => (rest, ""),
        };
        if name.is_empty() {
            return Err(format!("usage: /review {what}"));
        }
        Ok((name.to_string(), focus.to_string()))
    };
    Ok(match word {
        "base" => {
            let (branch, focus) = named("base BRANCH [focus]")?;
            (Target::Base(branch), focus)
        }
        "commit" => {
            let (sha, focus) = named("commit SHA [focus]")?;
            (Target::Commit { sha, title: None }, focus)
        }
        "uncommitted" => (Target::Uncommitted, rest.to_string()),
        _ => (Target::Uncommitted, args.to_string()),
    })
}

/// What was gathered for a review: a line for the user and the text the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gathered {
    /// "uncommitted changes", "changes against main", "commit 1a2b3c4: subject".
    pub description: String,
    /// The diff and what else git said (untracked files), cut at [`MAX_DIFF_BYTES`].
    pub diff: String,
    /// How the model can see the whole diff itself (a git command), for a cut diff.
    pub command: String,
    /// The repository's top folder (findings' paths are shown relative to it); empty when
    /// unknown.
    pub root: String,
}

/// The most diff text a prompt carries; the model runs git itself for the rest.
pub const MAX_DIFF_BYTES: usize = 200 * 1024;

/// Gathers `target`'s diff with `git`, which runs `git <args>` in the session's folder and
/// returns its stdout (the face runs the core's confined git). A clear error for a folder
/// outside git, a repository with no commits, a missing branch or commit, and nothing to
/// review; no model request should follow one.
pub fn gather(
    target: &Target,
    mut git: impl FnMut(&[&str]) -> std::io::Result<Vec<u8>>,
) -> Result<Gathered, String> {
    let mut text = |args: &[&str]| git(args).map(|b| String::from_utf8_lossy(&b).into_owned());
    let top = text(&["rev-parse", "--show-toplevel"]).map(|t| t.trim_end().to_string());
    if let Target::Custom(instructions) = target {
        return Ok(Gathered {
            description: first_line(instructions),
            diff: String::new(),
            command: String::new(),
            root: top.unwrap_or_default(),
        });
    }
    let root = top.map_err(|_| "not a git repository: a review needs one".to_string())?;
    text(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        .map_err(|_| "the repository has no commits yet: nothing to review against".to_string())?;
    // A name that starts with `-` would be an option to git: never a branch or commit here.
    let resolve = |text: &mut dyn FnMut(&[&str]) -> std::io::Result<String>, name: &str| {
        if name.starts_with('-') || name.is_empty() {
            return None;
        }
        let spec = format!("{name}^{{commit}}");
        text(&["rev-parse", "--verify", "--quiet", &spec])
            .ok()
            .map(|s| s.trim().to_string())
    };
    let (description, diff, command) = match target {
        Target::Uncommitted => {
            let mut diff = text(&["diff", "--no-color", "--no-ext-diff", "HEAD"])
                .map_err(|e| format!("reading the uncommitted changes: {e}"))?;
            let untracked = text(&["ls-files", "--others", "--exclude-standard"])
                .map_err(|e| format!("listing untracked files: {e}"))?;
            if diff.trim().is_empty() && untracked.trim().is_empty() {
                return Err("no uncommitted changes to review".into());
            }
            if !untracked.trim().is_empty() {
                diff.push_str("\nUntracked files (new, not in the diff; read them):\n");
                diff.push_str(&untracked);
            }
            (
                "uncommitted changes".to_string(),
                diff,
                "git diff HEAD".to_string(),
            )
        }
        Target::Base(branch) => {
            let Some(tip) = resolve(&mut text, branch) else {
                return Err(format!("base branch `{branch}` not found"));
            };
            let base = text(&["merge-base", "HEAD", &tip])
                .map_err(|_| format!("`{branch}` shares no history with HEAD"))?;
            let base = base.trim().to_string();
            let diff = text(&["diff", "--no-color", "--no-ext-diff", &base])
                .map_err(|e| format!("reading the changes against `{branch}`: {e}"))?;
            if diff.trim().is_empty() {
                return Err(format!("no changes against `{branch}` to review"));
            }
            let short = base.get(..12).unwrap_or(&base);
            (
                format!("changes against {branch} (merge base {short})"),
                diff,
                format!("git diff {base}"),
            )
        }
        Target::Commit { sha, title } => {
            let Some(full) = resolve(&mut text, sha) else {
                return Err(format!("commit `{sha}` not found"));
            };
            let diff = text(&[
                "show",
                "--no-color",
                "--no-ext-diff",
                "--format=medium",
                &full,
            ])
            .map_err(|e| format!("reading commit `{sha}`: {e}"))?;
            let subject = title.clone().unwrap_or_else(|| {
                diff.lines()
                    .skip_while(|l| !l.is_empty())
                    .find(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_string())
                    .unwrap_or_default()
            });
            let short = full.get(..12).unwrap_or(&full);
            (
                format!("commit {short}: {subject}"),
                diff,
                format!("git show {full}"),
            )
        }
        Target::Custom(_) => unreachable!("handled above"),
    };
    Ok(Gathered {
        description,
        diff: cut(diff),
        command,
        root,
    })
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

fn cut(mut diff: String) -> String {
    if diff.len() > MAX_DIFF_BYTES {
        let mut end = MAX_DIFF_BYTES;
        while !diff.is_char_boundary(end) {
            end -= 1;
        }
        diff.truncate(end);
        diff.push_str("\n[… the diff is cut here; run the command above for the rest]\n");
    }
    diff
}

/// How the model answers: the findings JSON (exec, the app-server: it is parsed) or Markdown
/// (the terminal and ACP, where a person reads it as it streams).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Json,
    Markdown,
}

const RULES: &str = "\
You are reviewing code changes as a careful senior engineer. Report only problems the author \
would want to fix: bugs, regressions, security holes, missing error handling, broken or \
missing tests, races, misleading code. Each finding must be introduced by the change under \
review, be concrete (name the file and lines), and say why it is wrong and what to do. Skip \
style nits and praise. Priorities: 0 = must fix before merging (breaks things), 1 = should \
fix soon, 2 = worth fixing eventually, 3 = minor. Use your read-only tools to read code \
around the change when the diff is not enough. Do not edit files.";

const JSON_FORMAT: &str = r#"Answer with exactly one JSON object and nothing else:
{"findings": [{"title": "<at most 80 characters, imperative>",
  "body": "<Markdown: why it is a problem and how to fix it>",
  "confidence_score": <0.0-1.0>, "priority": <0-3>,
  "code_location": {"absolute_file_path": "<path>",
                    "line_range": {"start": <line>, "end": <line>}}}],
 "overall_correctness": "patch is correct" | "patch is incorrect",
 "overall_explanation": "<1-3 sentences>", "overall_confidence_score": <0.0-1.0>}
An empty "findings" list is right when nothing is worth changing."#;

const MARKDOWN_FORMAT: &str = "\
Answer in Markdown: one bullet per finding, `[P<priority>] <title>` in bold, then \
`path:start-end`, then why and how to fix it in a sentence or two. End with a line \
`Verdict: patch is correct` or `Verdict: patch is incorrect` and one sentence why. Say \
plainly when nothing is worth changing.";

/// The review prompt: the rules, the target, the user's focus, the diff, the answer's form.
pub fn prompt(target: &Target, gathered: &Gathered, focus: &str, answer: Answer) -> String {
    let mut p = format!("{RULES}\n\n");
    match target {
        Target::Custom(instructions) => {
            p.push_str(&format!(
                "Review what these instructions ask for:\n{instructions}\n"
            ));
        }
        _ => {
            p.push_str(&format!(
                "Review the {}. The diff (also: `{}`):\n\n```diff\n{}\n```\n",
                gathered.description,
                gathered.command,
                gathered.diff.trim_end()
            ));
        }
    }
    if !focus.trim().is_empty() {
        p.push_str(&format!("\nFocus: {}\n", focus.trim()));
    }
    p.push('\n');
    p.push_str(match answer {
        Answer::Json => JSON_FORMAT,
        Answer::Markdown => MARKDOWN_FORMAT,
    });
    p
}

/// The lines a finding covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineRange {
    pub start: u32,
    pub end: u32,
}

/// Where a finding is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeLocation {
    pub absolute_file_path: String,
    pub line_range: LineRange,
}

/// One problem the review found (Codex's `ReviewFinding`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub title: String,
    pub body: String,
    pub confidence_score: f64,
    /// 0 (must fix) to 3 (minor).
    #[serde(default)]
    pub priority: Option<u8>,
    pub code_location: CodeLocation,
}

/// The model's answer (Codex's `ReviewOutputEvent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub findings: Vec<Finding>,
    pub overall_correctness: String,
    pub overall_explanation: String,
    pub overall_confidence_score: f64,
}

/// The JSON Schema of [`Review`], for providers that constrain the answer (strict mode:
/// every property required, none extra).
pub fn output_schema() -> serde_json::Value {
    let closed = |props: serde_json::Value, required: &[&str]| {
        serde_json::json!({"type": "object", "properties": props,
            "required": required, "additionalProperties": false})
    };
    let range = closed(
        serde_json::json!({"start": {"type": "integer"}, "end": {"type": "integer"}}),
        &["start", "end"],
    );
    let location = closed(
        serde_json::json!({"absolute_file_path": {"type": "string"}, "line_range": range}),
        &["absolute_file_path", "line_range"],
    );
    let finding = closed(
        serde_json::json!({"title": {"type": "string"}, "body": {"type": "string"},
            "confidence_score": {"type": "number"},
            "priority": {"type": "integer", "minimum": 0, "maximum": 3},
            "code_location": location}),
        &[
            "title",
            "body",
            "confidence_score",
            "priority",
            "code_location",
        ],
    );
    closed(
        serde_json::json!({"findings": {"type": "array", "items": finding},
            "overall_correctness": {"type": "string",
                "enum": ["patch is correct", "patch is incorrect"]},
            "overall_explanation": {"type": "string"},
            "overall_confidence_score": {"type": "number"}}),
        &[
            "findings",
            "overall_correctness",
            "overall_explanation",
            "overall_confidence_score",
        ],
    )
}

/// The model's answer read as a [`Review`]: the JSON object alone, or inside a ```json
/// fence. The error says what is wrong, for the user.
pub fn parse_answer(text: &str) -> Result<Review, String> {
    let t = text.trim();
    let body = match t.find("```") {
        Some(i) => {
            let after = &t[i + 3..];
            let after = after.strip_prefix("json").unwrap_or(after);
            after.split("```").next().unwrap_or(after).trim()
        }
        None => t,
    };
    let start = body.find('{');
    let end = body.rfind('}');
    let json = match (start, end) {
        (Some(s), Some(e)) if s < e => &body[s..=e],
        _ => return Err("the model's answer holds no findings JSON object".into()),
    };
    let review: Review = serde_json::from_str(json)
        .map_err(|e| format!("the model's answer is not valid findings JSON: {e}"))?;
    for f in &review.findings {
        let r = &f.code_location.line_range;
        if r.start == 0 || r.end < r.start {
            return Err(format!(
                "the finding `{}` has a bad line range {}-{}",
                f.title, r.start, r.end
            ));
        }
        if f.priority.is_some_and(|p| p > 3) {
            return Err(format!("the finding `{}` has a priority above 3", f.title));
        }
    }
    Ok(review)
}

/// A path as the user knows it: relative to `root` when under it.
fn relative<'a>(path: &'a str, root: &str) -> &'a str {
    let root = root.trim_end_matches('/');
    match path.strip_prefix(root) {
        Some(rest) if !root.is_empty() && rest.starts_with('/') => &rest[1..],
        _ => path,
    }
}

/// "[P1] " for a finding with a priority its title does not already carry.
fn tag(f: &Finding) -> String {
    match f.priority {
        Some(p) if !f.title.starts_with('[') => format!("[P{p}] "),
        _ => String::new(),
    }
}

/// The review as text for a person: the verdict, then each finding with its place.
pub fn render_text(review: &Review, root: &str) -> String {
    let mut out = format!(
        "Verdict: {} (confidence {:.2})\n{}\n",
        review.overall_correctness,
        review.overall_confidence_score,
        review.overall_explanation.trim()
    );
    if review.findings.is_empty() {
        out.push_str("\nNo findings.\n");
    }
    for f in &review.findings {
        let r = &f.code_location.line_range;
        let lines = if r.start == r.end {
            r.start.to_string()
        } else {
            format!("{}-{}", r.start, r.end)
        };
        out.push_str(&format!(
            "\n{}{}\n  {}:{lines}\n",
            tag(f),
            f.title.trim(),
            relative(&f.code_location.absolute_file_path, root)
        ));
        for line in f.body.trim().lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// GitHub workflow commands, one `::warning` line per finding (`::error` for priority 0),
/// so the Action's step puts each on the PR's diff. Paths are made relative to `root`, the
/// repository's top. Everything from the model is escaped: no line break survives, so no
/// text of it can become a workflow command of its own.
pub fn workflow_commands(review: &Review, root: &str) -> String {
    let mut out = String::new();
    for f in &review.findings {
        let level = if f.priority == Some(0) {
            "error"
        } else {
            "warning"
        };
        let r = &f.code_location.line_range;
        let title = format!("{}{}", tag(f), f.title.trim());
        out.push_str(&format!(
            "::{level} file={},line={},endLine={},title={}::{}\n",
            escape_property(relative(&f.code_location.absolute_file_path, root)),
            r.start,
            r.end.max(r.start),
            escape_property(&title),
            escape_data(f.body.trim())
        ));
    }
    out
}

/// A workflow command's message, escaped as the runner's toolkit does.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value, escaped as the runner's toolkit does.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
