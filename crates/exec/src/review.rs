//! `exec review` (and `interpreter review`): the target's diff gathered by the agent's own
//! confined git before any session exists, so a bad target is an error and no model request;
//! then the model's findings JSON checked and shown (docs/review.md).

use std::path::Path;

use interpreter_face::review::{self, Answer, Target};
use interpreter_face::terminal_text::sanitize;

use crate::ExecOptions;
use crate::output::fail;

/// A review's prompt, the repository's top folder (findings' paths are shown relative to it)
/// and what the transcript's header shows instead of the long prompt.
pub(crate) struct Prepared {
    pub(crate) prompt: String,
    pub(crate) root: String,
    pub(crate) shown: String,
}

/// The review of `target` in `cwd`; Err is the exit code, the error already printed.
pub(crate) fn prepare(cwd: &Path, args: &ExecOptions, target: &Target) -> Result<Prepared, i32> {
    let gathered = review::gather(target, |a| {
        interpreter_core::sandbox::git::run(cwd, a, None)
    })
    .map_err(|e| fail(1, &format!("review: {e}")))?;
    let focus = match target {
        Target::Custom(_) => "",
        _ => args.prompt.as_deref().unwrap_or_default(),
    };
    let prompt = review::prompt(target, &gathered, focus, Answer::Json);
    let mut shown = format!("review: {}", gathered.description);
    if !focus.is_empty() {
        shown.push_str(&format!(" (focus: {focus})"));
    }
    Ok(Prepared {
        prompt,
        root: gathered.root,
        shown,
    })
}

/// After the review turn: the answer checked as findings JSON, shown on stdout (human mode;
/// `--json` keeps stdout for events), and written as workflow commands for
/// `--github-annotations`. The exit code: 1 when the answer is not a review.
pub(crate) fn finish(args: &ExecOptions, last: Option<&str>, root: &str) -> i32 {
    let Some(last) = last else {
        return fail(1, "review: the model gave no answer");
    };
    let parsed = match review::parse_answer(last) {
        Ok(r) => r,
        Err(e) => return fail(1, &format!("review: {e}")),
    };
    if !args.json {
        print!("{}", sanitize(&review::render_text(&parsed, root)));
    }
    if let Some(path) = &args.annotations
        && let Err(e) = std::fs::write(path, review::workflow_commands(&parsed, root))
    {
        return fail(1, &format!("--github-annotations {}: {e}", path.display()));
    }
    0
}
