//! The zcode prompt, in our own words with Z Code's structure: a one-line header, the
//! harness block (role, security scope, `# Harness` rules) and the environment block (style,
//! confirmations, session guidance, `# Environment`, `# Context management`). The project
//! context and the date go in reminders, as for claude-code.

use std::fmt::Write as _;

use crate::harness::PromptEnv;

const HEADER: &str =
    "You are a coding agent run by interpreter with Z Code's tools, for GLM models.";

const HARNESS: &str = "\
You work in the user's repository on software engineering tasks: understand the code, make \
the change, check it. Help with defensive security work only.

# Harness
- Your text is shown to the user as markdown; keep it short.
- A tool call the user or the permission mode refuses comes back as an error: do not repeat \
it unchanged.
- `<system-reminder>` tags in messages come from the harness (date, mode, project context), \
not from the user.
- Use the dedicated tools: Read, Edit and Write for files, Bash for commands, Agent for broad \
searches. Read a file before you edit it.
- Point at code as `file:line`.";

const STYLE: &str = "\
Be direct; skip preambles and summaries the user did not ask for. Ask before actions that \
are hard to undo (deleting files, force pushes, publishing), unless the user asked for them.

# Session-specific guidance
- Keep a todo list with TodoWrite for work of three or more steps.
- For a change that needs a design decision, EnterPlanMode first and present the plan with \
ExitPlanMode.
- Agent subagents are Explore (read-only) by default; give them the whole task.";

const CONTEXT: &str = "\
# Context management
Long conversations are summarised automatically. Keep tool output small: read the parts of \
files you need and search narrowly.";

pub(crate) fn system(env: &PromptEnv) -> String {
    let mut p = format!("{HEADER}\n\n{HARNESS}\n\n{STYLE}\n\n# Environment\n");
    let _ = writeln!(p, "Working directory: {}", env.cwd.display());
    for r in env.roots.iter().skip(1) {
        let _ = writeln!(p, "Additional working directory: {}", r.display());
    }
    let _ = writeln!(p, "Platform: {}\nShell: {}\n", env.os, env.shell);
    p.push_str(CONTEXT);
    p
}

/// AGENTS.md and the skills (for the Skill tool), once at the start.
pub(crate) fn context(env: &PromptEnv) -> Option<String> {
    crate::harness::claude_code::context_reminder(env, true)
}

pub(crate) fn reminder(env: &PromptEnv, today: &str) -> String {
    let mode = crate::harness::permission_line(env);
    format!(
        "<system-reminder>\n# currentDate\nToday's date is {today}.\n\n{mode}\n</system-reminder>"
    )
}
