//! mini-swe-agent's one tool, `bash`: each command in a subshell of its own, stdout and stderr
//! together, 30 s at most (its local environment's timeout), the result as its JSON
//! observation.

use interpreter_protocol::{ToolKind, ToolStatus};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

use super::prompt::SUBMIT;
use crate::harness::session_tools::describe;
use crate::tools::table::{
    FnTool, Tool, ToolError, ToolResult, ToolTable, Wording, spec, str_arg, str_or_empty,
};
use crate::tools::{ToolContext, ToolOutcome};

const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};
const TIMEOUT: Duration = Duration::from_secs(30);
/// Output shown whole below this many characters; above, its head and tail.
const WHOLE: usize = 10_000;
const PART: usize = 5_000;

pub(super) fn table() -> ToolTable {
    ToolTable::new(vec![bash()])
}

fn bash() -> Arc<dyn Tool> {
    FnTool::plain(
        WORDING,
        spec(
            "bash",
            "Execute a bash command",
            json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "The bash command to execute"}
            }, "required": ["command"]}),
        ),
        |a, _| {
            let mut d = describe(ToolKind::Execute, str_or_empty(a, "command"));
            d.command = Some(str_or_empty(a, "command"));
            d
        },
        |a, c| Box::pin(run(c, a)),
    )
}

async fn run(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(command) = str_arg(&args, "command") else {
        return Err(ToolError::message(
            "Missing 'command' argument in bash tool call.",
        ));
    };
    let r = ctx
        .authorize_and_run(
            "bash",
            ToolKind::Execute,
            command,
            ctx.workspace.cwd(),
            TIMEOUT,
            "Failed to run the command",
        )
        .await?;
    let (code, exception) = if r.timed_out {
        (
            -1,
            Some(format!(
                "An error occurred while executing the command: Command '{command}' timed out after {} seconds",
                TIMEOUT.as_secs()
            )),
        )
    } else {
        (r.exit_code.unwrap_or(-1), None)
    };
    let mut o = ToolOutcome::ok(observation(code, &r.output, exception.as_deref()));
    o.user_output = r.output;
    o.exit_code = r.exit_code;
    if code != 0 {
        o.status = ToolStatus::Failed;
    }
    Ok(o)
}

/// `{"returncode": N, "output": …}`, or the head and tail of a long output; strings as Jinja's
/// `tojson` writes them (ASCII, with `<`, `>`, `&` and `'` escaped).
pub(super) fn observation(code: i32, output: &str, exception: Option<&str>) -> String {
    let chars: Vec<char> = output.chars().collect();
    let mut out = format!("{{\"returncode\": {code}, ");
    if chars.len() < WHOLE {
        out.push_str(&format!("\"output\": {}", tojson(output)));
    } else {
        let head: String = chars[..PART].iter().collect();
        let tail: String = chars[chars.len() - PART..].iter().collect();
        out.push_str(&format!(
            "\"output_head\": {}, \"output_tail\": {}, \"elided_chars\": {}, \"warning\": \"Output too long.\"",
            tojson(&head),
            tojson(&tail),
            chars.len() - 2 * PART
        ));
    }
    if let Some(e) = exception {
        out.push_str(&format!(", \"exception_info\": {}", tojson(e)));
    }
    out.push('}');
    out
}

fn tojson(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\'' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether an observation is the submit command's: it exited 0 and its output's first line
/// is the submit word.
pub(super) fn submitted(observation: &str) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(observation) else {
        return false;
    };
    v["returncode"] == 0
        && v["output"]
            .as_str()
            .and_then(|o| o.trim_start().lines().next())
            .is_some_and(|first| first.trim() == SUBMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_are_mini_swe_agents_json() {
        assert_eq!(
            observation(0, "a <b>\n", None),
            "{\"returncode\": 0, \"output\": \"a \\u003cb\\u003e\\n\"}"
        );
        let long = "x".repeat(12_000);
        let o: Value = serde_json::from_str(&observation(1, &long, Some("boom"))).unwrap();
        assert_eq!(o["elided_chars"], 2_000);
        assert_eq!(o["output_head"].as_str().unwrap().len(), 5_000);
        assert_eq!(o["exception_info"], "boom");
        assert!(observation(0, "é", None).contains("\\u00e9"));
        assert!(submitted(&observation(
            0,
            "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\npatch",
            None
        )));
        assert!(!submitted(&observation(
            1,
            "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n",
            None
        )));
        assert!(!submitted(&observation(
            0,
            "ok\nCOMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
            None
        )));
    }
}
