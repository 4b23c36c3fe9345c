//! mini-swe-agent's texts, in our own words with the original's structure: a one-sentence
//! system message; the instance template around the first task (the task, a recommended
//! workflow, the command rules, an example response, `<system_information>` as `uname -srvm`
//! gives it, useful command examples, the macOS `sed -i ''` note); and the format error.

use crate::harness::PromptEnv;

pub(super) const SYSTEM: &str =
    "You are a helpful assistant that works on a computer through its shell.";
/// The command that ends the task; its output after the first line is the submission.
pub(super) const SUBMIT: &str = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

pub(super) fn instance(_env: &PromptEnv, task: &str) -> String {
    let (system, release, version, machine) = uname();
    let mut p = format!(
        "Please solve this issue: {task}\n\n\
You can run bash commands and edit files to do it.\n\n\
## Recommended Workflow\n\n\
1. Look at the code to find what the issue is about\n\
2. Write a small script that shows the problem\n\
3. Change the source to fix it\n\
4. Run your script again to check the fix\n\
5. Think about edge cases and check them too\n\
6. When you are done, run `echo {SUBMIT}` as a command of its own. Do not combine it with any other command. <important>After it you cannot work on this task any more.</important>\n\n\
## Command Execution Rules\n\n\
You work in a loop: you send a command, it runs in a new subshell, you see its result, and you send the next one.\n\n\
**CRITICAL REQUIREMENTS:**\n\n\
- Say briefly what you are thinking before each command.\n\
- Every response MUST include AT LEAST ONE bash tool call.\n\
- Directory and environment changes do not last: every command runs in a new subshell. Put them in the command itself, e.g. `MY_ENV_VAR=MY_VALUE cd /path/to/dir && ...`.\n\
- To finish, run `echo {SUBMIT}` on its own.\n\n\
<example_response>\n\
First I look at the files in the current folder.\n\n\
[Calls the bash tool with {{\"command\": \"ls -la\"}}]\n\
</example_response>\n\n\
<system_information>\n{system} {release} {version} {machine}\n</system_information>\n\n\
## Useful command examples\n\n\
### Create a new file:\n\n\
```bash\ncat <<'EOF' > newfile.py\nimport numpy as np\nhello = \"world\"\nprint(hello)\nEOF\n```\n\n\
### Edit files with sed:\n\n"
    );
    if system == "Darwin" {
        p.push_str(
            "<important>You are on macOS: use `sed -i ''` where the examples say `sed -i`.</important>\n\n",
        );
    }
    p.push_str(
        "```bash\n\
# Replace every occurrence\nsed -i 's/old_string/new_string/g' filename.py\n\n\
# Replace only the first occurrence\nsed -i 's/old_string/new_string/' filename.py\n\n\
# Replace the first occurrence on line 1\nsed -i '1s/old_string/new_string/' filename.py\n\n\
# Replace every occurrence on lines 1 to 10\nsed -i '1,10s/old_string/new_string/g' filename.py\n\
```\n\n\
### View parts of a file:\n\n\
```bash\nnl -ba filename.py | sed -n '10,20p'\n```\n\n\
### Any other command you want to run\n\n\
```bash\nanything\n```",
    );
    p
}

/// The `Tool call error:` turn for `error`.
pub(super) fn format_error(error: &str) -> String {
    format!(
        "Tool call error:\n\n<error>\n{error}\n</error>\n\n\
Here is how to make a correct tool call:\n\n\
Every response has to use the 'bash' tool at least once to run commands.\n\n\
Call the bash tool with your command as its argument:\n\
- Tool: bash\n\
- Arguments: {{\"command\": \"your_command_here\"}}\n\n\
To end the task, run this command: `echo {SUBMIT}`\n\
with no other command."
    )
}

/// `uname -srvm`'s four fields.
fn uname() -> (String, String, String, String) {
    #[cfg(unix)]
    {
        // SAFETY: uname fills the struct; each field is a NUL-terminated C string.
        unsafe {
            let mut u: libc::utsname = std::mem::zeroed();
            if libc::uname(&mut u) == 0 {
                let f = |s: &[libc::c_char]| {
                    std::ffi::CStr::from_ptr(s.as_ptr())
                        .to_string_lossy()
                        .into_owned()
                };
                return (f(&u.sysname), f(&u.release), f(&u.version), f(&u.machine));
            }
        }
    }
    (
        if cfg!(windows) {
            "Windows"
        } else {
            std::env::consts::OS
        }
        .to_string(),
        String::new(),
        String::new(),
        std::env::consts::ARCH.to_string(),
    )
}
