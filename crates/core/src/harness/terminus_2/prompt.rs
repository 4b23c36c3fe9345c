//! terminus-2's texts. The protocol strings (the parse-error feedback, the observation labels,
//! the output-limit marker) are the original's exactly, since models are tuned to them; the
//! instructions and the completion question keep the original's structure in our own words.
//! Also the pane's shell prompt, which the first screen shows.

use std::path::Path;

/// How the feedback on an unparsable reply begins.
pub(super) const PARSE_ERROR_PREFIX: &str = "Previous response had parsing errors:";
/// The question a first `task_complete: true` is answered with.
pub(super) const CONFIRM_QUESTION: &str = "Is the task really complete?";
/// Observations show at most this many bytes of output: its head and its tail.
pub(super) const OUTPUT_LIMIT: usize = 10_000;

/// The feedback on a reply that is not the JSON the protocol asks for.
pub(super) fn parse_error(error: &str, warning: &str) -> String {
    let mut feedback = format!("ERROR: {error}");
    if !warning.is_empty() {
        feedback.push_str("\nWARNINGS: ");
        feedback.push_str(warning);
    }
    format!(
        "{PARSE_ERROR_PREFIX}\n{feedback}\n\nPlease fix these issues and provide a proper JSON response."
    )
}

/// The answer to a first `task_complete: true`: the terminal as it is, and the question.
pub(super) fn confirm(terminal: &str) -> String {
    format!(
        "Current terminal state:\n{terminal}\n\n{CONFIRM_QUESTION} Marking it complete sends your solution for grading, and after that nothing can be changed. If you are sure, send \"task_complete\": true in your JSON response once more."
    )
}

/// `output` whole when it fits the limit, else its first and last halves around a marker.
pub(super) fn limit_output(output: &str) -> String {
    if output.len() <= OUTPUT_LIMIT {
        return output.to_string();
    }
    let half = OUTPUT_LIMIT / 2;
    let head = &output[..output.floor_char_boundary(half)];
    let tail = &output[output.ceil_char_boundary(output.len() - half)..];
    let omitted = output.len() - head.len() - tail.len();
    format!(
        "{head}\n[... output limited to {OUTPUT_LIMIT} bytes; {omitted} interior bytes omitted ...]\n{tail}"
    )
}

/// The first user message: the protocol, the task and the terminal's first screen.
pub(super) fn initial(task: &str, screen: &str) -> String {
    format!(
        r#"You are an AI assistant that solves command-line tasks on a Linux machine. You get a task and the output of the commands run so far, and you solve the task by sending batches of shell commands.

Answer in JSON with this structure:

{{
  "analysis": "Look at the current state from the terminal output. What do you see? What is done, and what is left to do?",
  "plan": "Say what you will do next: which commands you run and why, and what you expect each of them to do.",
  "commands": [
    {{
      "keystrokes": "ls -la\n",
      "duration": 0.1
    }},
    {{
      "keystrokes": "cd project\n",
      "duration": 0.1
    }}
  ],
  "task_complete": true
}}

Required fields:
- "analysis": what you make of the situation
- "plan": what you do next
- "commands": the list of command objects to run

Optional fields:
- "task_complete": whether the task is done (a boolean, false when left out)

A command object has:
- "keystrokes": the exact keys to send to the terminal (required)
- "duration": how many seconds to wait for it before the next command is sent (1.0 when left out)

IMPORTANT: the text of "keystrokes" is typed exactly as written, key for key. Write each command the way you want it to reach the terminal:
- Most shell commands need a trailing newline (\n) to run
- Special keys are written the tmux way:
  - C-c for Ctrl+C
  - C-d for Ctrl+D

"duration" is how long to wait (default 1.0 seconds) before the next command is sent. For instant commands (cd, ls, echo, cat) use 0.1 seconds. For ordinary commands (gcc, find, rustc) use 1.0 seconds. For slow ones (make, python3 running a long script, wget of a file) pick a duration that fits.

Prefer a short duration to a long one: you can always wait more on a later turn with {{"keystrokes": "", "duration": 10.0}} if a command has not finished. Never wait more than 60 seconds at once; poll instead, to see how it is going.

Notes:
- Keystrokes are sent to the terminal exactly as written
- Leave out whitespace before or after the keystrokes unless the command needs it
- Text before or after the JSON object is tolerated, with a warning
- The JSON must be valid: escape quotes and special characters inside strings
- The commands list may be empty when you only want to wait

Task Description:
{task}

Current terminal state:
{screen}"#
    )
}

/// The shell's prompt in the pane: `user@host:<cwd>$ ` (`#` for root). The harness sets it,
/// so the first screen the model reads is the one the pane shows. Returns the `PS1` value
/// and the first line of a fresh pane.
pub(super) fn prompt_line(cwd: &Path) -> (String, String) {
    let clean = |s: String| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect()
    };
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .or_else(|_| std::env::var("USERNAME"))
        .map(clean)
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "user".into());
    let host = clean(hostname())
        .split('.')
        .next()
        .filter(|h| !h.is_empty())
        .unwrap_or("localhost")
        .to_string();
    let sigil = if is_root() { '#' } else { '$' };
    (
        format!("{user}@{host}:$PWD{sigil} "),
        format!("{user}@{host}:{}{sigil}", cwd.display()),
    )
}

/// What a fresh pane shows: the prompt, then empty lines to the pane's height.
pub(super) fn first_screen(cwd: &Path) -> String {
    let (_, line) = prompt_line(cwd);
    format!("{line}\n{}", "\n".repeat(super::HEIGHT as usize - 1))
}

#[cfg(unix)]
fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(not(unix))]
fn hostname() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_default()
}

#[cfg(unix)]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_head_and_tail() {
        assert_eq!(limit_output("short"), "short");
        let long = format!("{}{}", "a".repeat(6_000), "b".repeat(6_000));
        let limited = limit_output(&long);
        assert!(limited.starts_with(&"a".repeat(5_000)));
        assert!(limited.ends_with(&"b".repeat(5_000)));
        assert!(
            limited.contains(
                "\n[... output limited to 10000 bytes; 2000 interior bytes omitted ...]\n"
            )
        );
        // Cuts fall on character boundaries.
        let wide = "é".repeat(6_000);
        assert!(limit_output(&wide).contains("interior bytes omitted"));
    }

    #[test]
    fn parse_errors_carry_the_original_wording() {
        assert_eq!(
            parse_error("Invalid JSON", ""),
            "Previous response had parsing errors:\nERROR: Invalid JSON\n\nPlease fix these issues and provide a proper JSON response."
        );
        assert_eq!(
            parse_error(
                "Missing required fields: plan",
                "- Extra text detected before JSON object"
            ),
            "Previous response had parsing errors:\nERROR: Missing required fields: plan\nWARNINGS: - Extra text detected before JSON object\n\nPlease fix these issues and provide a proper JSON response."
        );
    }
}
