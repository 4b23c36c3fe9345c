//! A terminus-2 reply: the first balanced `{…}` of its text (braces inside JSON strings do not
//! count), read as `{analysis, plan, commands: [{keystrokes, duration}], task_complete}`. The
//! errors and warnings are the original's, checked in its order.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One command of a reply: keys to send, and how long to wait after them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Keys {
    pub keystrokes: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
}

/// A reply that follows the protocol.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub commands: Vec<Keys>,
    pub task_complete: bool,
}

/// A reply that does not: the error and the warnings (`- …` lines) for the feedback.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unparsable {
    pub error: &'static str,
    pub warning: String,
}

pub(crate) fn parse(text: &str) -> Result<Reply, Unparsable> {
    let Some((json, warning)) = first_object(text) else {
        return Err(Unparsable {
            error: "No valid JSON found in response",
            warning: "- No valid JSON object found".into(),
        });
    };
    let fail = |error| {
        Err(Unparsable {
            error,
            warning: warning.clone(),
        })
    };
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(json) else {
        return fail("Invalid JSON");
    };
    for (name, error) in [
        ("analysis", "Missing required fields: analysis"),
        ("plan", "Missing required fields: plan"),
        ("commands", "Missing required fields: commands"),
    ] {
        if fields.get(name).is_none_or(Value::is_null) {
            return fail(error);
        }
    }
    let Ok(commands) = serde_json::from_value::<Vec<Keys>>(fields["commands"].clone()) else {
        return fail("Field 'commands' must be an array");
    };
    Ok(Reply {
        commands,
        task_complete: is_true(fields.get("task_complete")),
    })
}

/// `true`, or a string that says so, as the original accepts.
fn is_true(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => matches!(s.to_ascii_lowercase().as_str(), "true" | "1" | "yes"),
        _ => false,
    }
}

/// The first balanced object in `text`, and the warning about text around it.
fn first_object(text: &str) -> Option<(&str, String)> {
    let (mut depth, mut start) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' if depth > 0 => in_string = true,
            '{' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    let (before, after) = (&text[..start], &text[i + 1..]);
                    return Some((&text[start..=i], extra_text(before, after)));
                }
            }
            _ => {}
        }
    }
    None
}

fn extra_text(before: &str, after: &str) -> String {
    let mut lines = Vec::new();
    if !before.trim().is_empty() {
        lines.push("- Extra text detected before JSON object");
    }
    if !after.trim().is_empty() {
        lines.push("- Extra text detected after JSON object");
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> (&'static str, String) {
        let e = parse(text).unwrap_err();
        (e.error, e.warning)
    }

    #[test]
    fn a_reply_gives_its_commands_and_completion() {
        let r = parse(r#"{"analysis":"a","plan":"p","commands":[{"keystrokes":"ls\n","duration":0.1},{"keystrokes":"C-c"}],"task_complete":"yes"}"#).unwrap();
        assert_eq!(
            r.commands,
            vec![
                Keys {
                    keystrokes: "ls\n".into(),
                    duration: Some(0.1)
                },
                Keys {
                    keystrokes: "C-c".into(),
                    duration: None
                }
            ]
        );
        assert!(r.task_complete);
        let r = parse(r#"{"analysis":"","plan":"","commands":[]}"#).unwrap();
        assert!(r.commands.is_empty() && !r.task_complete);
    }

    #[test]
    fn the_first_balanced_object_is_used_and_braces_in_strings_do_not_count() {
        let text = "Here it is:\n```json\n{\"analysis\":\"a } brace\",\"plan\":\"{\\\"q\\\"\",\"commands\":[{\"keystrokes\":\"echo '}'\\n\"}]}\n```\n{\"second\": 1}";
        let r = parse(text).unwrap();
        assert_eq!(r.commands[0].keystrokes, "echo '}'\n");
        let (json, warning) = first_object(text).unwrap();
        assert!(json.ends_with("}]}"));
        assert_eq!(
            warning,
            "- Extra text detected before JSON object\n- Extra text detected after JSON object"
        );
        assert_eq!(first_object("} {\"a\":1}").unwrap().0, "{\"a\":1}");
        assert_eq!(first_object("  {\"a\":1}\n").unwrap().1, "");
    }

    #[test]
    fn every_error_has_the_original_text() {
        assert_eq!(
            error("no json here"),
            (
                "No valid JSON found in response",
                "- No valid JSON object found".into()
            )
        );
        assert_eq!(error("{\"a\": 1, }").0, "Invalid JSON");
        assert_eq!(
            error("x {\"plan\":\"p\",\"commands\":[]}"),
            (
                "Missing required fields: analysis",
                "- Extra text detected before JSON object".into()
            )
        );
        assert_eq!(
            error("{\"analysis\":\"a\",\"commands\":[]}").0,
            "Missing required fields: plan"
        );
        assert_eq!(
            error("{\"analysis\":\"a\",\"plan\":\"p\"}").0,
            "Missing required fields: commands"
        );
        for commands in ["\"ls\"", "{}", "[{\"duration\":1}]", "[\"ls\"]"] {
            assert_eq!(
                error(&format!(
                    "{{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":{commands}}}"
                ))
                .0,
                "Field 'commands' must be an array"
            );
        }
        assert_eq!(error("{\"a\": 1").0, "No valid JSON found in response");
    }
}
