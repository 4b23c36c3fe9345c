//! swe-agent's prompts, in our own words with the original's structure: a one-line system
//! message (plus the commands, which the original's tool bundle documents), and the task
//! wrapped in the SWE-bench template (`<uploaded_files>`, `<pr_description>`, the note that
//! tests are handled, five steps).

use std::fmt::Write as _;

use crate::harness::PromptEnv;

const SYSTEM: &str = "\
You are a helpful assistant that can interact with a computer to solve tasks.

Every reply has a DISCUSSION of what you will do next and exactly one command in a ``` block. \
The command's output comes back as an OBSERVATION. Commands:
- any bash command (non-interactive, 30-second limit);
- str_replace_editor <command> <absolute path> [options]: view (a file with line numbers, or \
a folder two levels deep; --view_range START END), create (--file_text TEXT), str_replace \
(--old_str TEXT --new_str TEXT; old_str must match exactly once), insert (--insert_line N \
--new_str TEXT, after line N), undo_edit (revert the last edit of the file). Quote \
multi-line values;
- submit: when the task is done. You are asked to review your changes once; run submit again \
to confirm.";

/// The system prompt.
pub(crate) fn system(env: &PromptEnv) -> String {
    let mut p = SYSTEM.to_string();
    if !env.skills.is_empty() {
        p.push_str(
            "\n\nSkills (task instructions; view the SKILL.md of one that fits and follow it):\n",
        );
        for s in &env.skills {
            let _ = writeln!(p, "- {}: {} ({})", s.name, s.description, s.path);
        }
        p.truncate(p.trim_end().len());
    }
    p
}

/// The first user message: the task in the SWE-bench template. `extra` are further commands
/// (the session's MCP tools) with their descriptions.
pub(crate) fn task(env: &PromptEnv, task: &str, extra: &[(String, String)]) -> String {
    let dir = env.cwd.display();
    let mut t = format!(
        "<uploaded_files>\n{dir}\n</uploaded_files>\nA code repository is uploaded in the directory {dir}. Here is the PR description:\n\n<pr_description>\n{task}\n</pr_description>\n\n\
         Make the changes to the repository that the <pr_description> asks for.\n\
         Any changes to test files that the <pr_description> mentions are already made, so you do not need to touch the tests.\n\
         Keep the changes to non-test files in {dir} as small as the <pr_description> allows.\n\
         Work in these steps:\n\
         1. Find and read the code the <pr_description> is about.\n\
         2. Write a script that reproduces the problem and run it with bash to see it fail.\n\
         3. Change the source code to fix it.\n\
         4. Run the script again and check that the problem is gone.\n\
         5. Think of edge cases and make sure the fix covers them.\n\
         Think it through carefully; a long analysis is fine."
    );
    if let Some(md) = &env.agents_md {
        let _ = write!(
            t,
            "\n\n<project_instructions>\n{}\n</project_instructions>",
            md.trim_end()
        );
    }
    if !extra.is_empty() {
        t.push_str("\n\nMore commands (arguments as one JSON object):");
        for (name, description) in extra {
            let _ = write!(t, "\n- {name} {{…}}: {description}");
        }
    }
    t
}
