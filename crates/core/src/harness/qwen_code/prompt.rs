//! qwen-code's prompts, in our own words with the original's sections: identity, `# Core
//! Mandates`, `# Task Management`, `# Asking questions`, `# Primary Workflows`,
//! `# Operational Guidelines`, `# Executing actions with care`, `# Git Repository`,
//! `# Examples` and `# Final Reminder`, then AGENTS.md and the skills. The opening context
//! message has the date, the OS, the folder and a listing of it, as Qwen Code sends it.

use std::fmt::Write as _;

use crate::harness::PromptEnv;

const IDENTITY: &str = "\
You are Qwen Code, an interactive command-line agent for software engineering tasks. Help \
the user safely and efficiently, following the instructions below and using your tools.";

const MANDATES: &str = "\
# Core Mandates

- **Conventions:** follow the project's existing conventions. Read the code around a change \
before making it.
- **Libraries:** never assume a library is available; check the imports and the manifest \
(package.json, Cargo.toml, requirements.txt, …) first.
- **Style:** match the formatting, naming, typing and structure of the surrounding code.
- **Scope:** do what was asked and nothing more; ask before going beyond the request.
- **Comments:** only where they explain why, never to talk to the user.
- **Paths:** the file tools take absolute paths: join the project root with the relative \
path.
- **No reverts:** do not undo changes you did not make unless the user asks.";

const TASKS: &str = "\
# Task Management

Use todo_write for work of several steps: write the list before you start, keep exactly one \
item in_progress, and mark each item completed as soon as it is done, not in batches. It \
shows the user where you are and keeps you from forgetting steps. Skip it for a single \
simple action.";

const ASKING: &str = "\
# Asking questions

When a request is ambiguous in a way that changes the result, ask one short question in \
your reply instead of guessing.";

const WORKFLOWS: &str = "\
# Primary Workflows

## Software engineering tasks
For fixes, features, refactors and explanations:
1. **Plan:** for work of several steps, write a todo list first.
2. **Understand:** search with grep_search and glob, read with read_file, until you know \
the code involved.
3. **Implement:** make the change with edit and write_file, in the project's style.
4. **Verify:** run the project's tests, linter or build with run_shell_command (find the \
commands in its README and manifests) and fix what fails.
5. **Finish:** keep the todo list current and stop when the task is done.

## New applications
Agree on the scope with the user, choose a common, well-supported stack, scaffold with the \
usual tools, build the whole thing, then check that it builds and runs.";

const GUIDELINES: &str = "\
# Operational Guidelines

## Tone and style
- Concise and direct: a few lines of text outside tool calls, no preambles or recaps.
- GitHub-flavoured markdown; tools do the work, text is for the user.

## Security
- Before a command that changes the system or files outside the project, say in one \
sentence what it does.
- Never print, log or commit secrets or keys.

## Tool usage
- Run independent tool calls together in one response.
- Use the file tools for files and run_shell_command for everything else; commands get no \
input, so pass flags that avoid prompts.
- Delegate broad searches to agent when they would fill your context.
- In plan mode you may only read; present the plan with exit_plan_mode.

## Interaction
The user can see your tool calls; keep your explanations for what they cannot see.";

const CARE: &str = "\
# Executing actions with care

Local, reversible actions (reading, searching, editing project files, running tests) need \
no permission. Deleting files or branches, discarding changes, force-pushing, publishing or \
touching shared systems needs the user's go-ahead unless they asked for it. Do not silence \
checks or skip hooks to get past a failure: fix its cause.";

const GIT: &str = "\
# Git Repository

When asked to commit: look at `git status`, `git diff HEAD` and `git log -n 3` first, stage \
what belongs to the change, and propose a message that says why in the project's style. \
Never push unless asked. Check `git status` after the commit.";

const EXAMPLES: &str = "\
# Examples

user: which tests cover the parser?
model: [tool_call: grep_search for pattern 'parse' with glob '*_test.*']
(then the answer, with file paths)

user: rename `total` to `sum_total` in src/cart.py
model: [tool_call: read_file for absolute_path '/path/to/project/src/cart.py']
[tool_call: edit with the old and new lines]
[tool_call: run_shell_command for 'python -m pytest -q']
Renamed it; the tests pass.";

const FINAL: &str = "\
# Final Reminder

You are an agent: keep going until the task is completely done. Never assume the content \
of a file: read it. Ask when you must, and otherwise act.";

/// The system prompt.
pub(crate) fn system(env: &PromptEnv) -> String {
    let mut p = String::with_capacity(8 * 1024);
    for section in [
        IDENTITY, MANDATES, TASKS, ASKING, WORKFLOWS, GUIDELINES, CARE, GIT, EXAMPLES, FINAL,
    ] {
        p.push_str(section);
        p.push_str("\n\n");
    }
    if let Some(md) = &env.agents_md {
        let _ = write!(
            p,
            "# Project instructions (AGENTS.md)\n\n{}\n\n",
            md.trim_end()
        );
    }
    if !env.skills.is_empty() {
        p.push_str("# Skills\n\nLoad one with the skill tool when the user names it or the task matches:\n");
        for s in &env.skills {
            let _ = writeln!(p, "- {}: {}", s.name, s.description);
        }
    }
    p.truncate(p.trim_end().len());
    p
}

/// The opening context message: date, OS, the folder and its first entries.
pub(crate) fn context(env: &PromptEnv, today: &str) -> String {
    let os = if env.os == "macos" {
        "darwin"
    } else {
        env.os.as_str()
    };
    format!(
        "This is Qwen Code, setting up the context for our chat.\nToday's date is {today}.\nMy operating system is: {os}\nI'm currently working in the directory: {cwd}\nHere is the folder structure of the current working directory:\n\nShowing up to 20 items (files + folders).\n\n{cwd}/\n{}",
        listing(&env.tree),
        cwd = env.cwd.display()
    )
}

/// The first 20 entries of the two-level tree, drawn with Qwen Code's connectors.
fn listing(tree: &str) -> String {
    let lines: Vec<(bool, &str)> = tree
        .lines()
        .filter(|l| !l.trim_start().starts_with('…') && *l != "(empty)")
        .map(|l| (l.starts_with("  "), l.trim_start()))
        .filter(|(_, name)| !name.starts_with('.'))
        .take(20)
        .collect();
    let mut out = String::new();
    for (i, (nested, name)) in lines.iter().enumerate() {
        let rest = &lines[i + 1..];
        let more_top = rest.iter().any(|(n, _)| !*n);
        let last = if *nested {
            rest.first().is_none_or(|(n, _)| !*n)
        } else {
            !more_top
        };
        let indent = match (*nested, more_top) {
            (false, _) => "",
            (true, true) => "│   ",
            (true, false) => "    ",
        };
        let branch = if last { "└───" } else { "├───" };
        let _ = writeln!(out, "{indent}{branch}{name}");
    }
    out.truncate(out.trim_end().len());
    out
}

/// The reminder before the user's message: the permission mode.
pub(crate) fn reminder(env: &PromptEnv) -> String {
    format!(
        "<system-reminder>\n{}\n</system-reminder>",
        crate::harness::permission_line(env)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn listing_draws_two_levels_with_connectors() {
        let tree = ".git/\nsrc/\n  deep/\n  lib.rs\nAGENTS.md\nREADME.md\n";
        assert_eq!(
            super::listing(tree),
            "├───src/\n│   ├───deep/\n│   └───lib.rs\n├───AGENTS.md\n└───README.md"
        );
        assert_eq!(super::listing("a/\n  b\n"), "└───a/\n    └───b");
    }
}
