//! pi's system prompt, in our own words with the original's structure: who it is, `Available
//! tools:` (one line per tool), `Guidelines:`, `# Project Context` (AGENTS.md), the skills as
//! `<available_skills>`, then the date and the working directory. pi's own documentation
//! block is left out: its docs are not installed with us.

use std::fmt::Write as _;

use crate::harness::PromptEnv;

const INTRO: &str = "\
You are an expert coding assistant working inside pi, a coding agent harness. You help the \
user by reading files, running commands, editing code and writing new files.";

const TOOLS: &str = "\
Available tools:
- read: Read the contents of a file
- bash: Run bash commands (ls, rg, find, tests, builds)
- edit: Change a file by exact text replacement, several separate replacements in one call
- write: Create a file or replace all of it

Other tools may be available depending on the project.";

const GUIDELINES: &str = "\
Guidelines:
- Use bash for file operations such as ls, rg and find
- Use read to look at files, not cat or sed
- Use write only for new files or complete rewrites
- In edit, each oldText must match the original file exactly and appear once; edits must not overlap
- Keep each oldText small: just enough surrounding text to be unique
- Put several changes to one file in one edit call, as separate entries of edits
- Be concise in your responses
- Show file paths clearly when working with files";

pub(super) fn system(env: &PromptEnv, today: &str) -> String {
    let mut p = format!("{INTRO}\n\n{TOOLS}\n\n{GUIDELINES}");
    if let Some(md) = env.agents_md.as_deref().filter(|m| !m.trim().is_empty()) {
        let _ = write!(
            p,
            "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n## {}\n\n{}\n",
            env.cwd.join("AGENTS.md").display(),
            md.trim_end()
        );
    }
    if !env.skills.is_empty() {
        p.push_str(
            "\n\nThe following skills give specialized instructions for particular tasks. When a task matches a skill's description, read its file with read before you start.\n\n<available_skills>\n",
        );
        for s in &env.skills {
            let _ = writeln!(
                p,
                "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n    <location>{}</location>\n  </skill>",
                s.name, s.description, s.path
            );
        }
        p.push_str("</available_skills>");
    }
    let cwd = env.cwd.display().to_string().replace('\\', "/");
    let _ = write!(
        p,
        "\nCurrent date: {today}\nCurrent working directory: {cwd}"
    );
    p
}
