//! The action in a swe-agent reply, found the way the original looks for it: an
//! `execute_bash` tool invocation in one of the XML shapes models write, else the first
//! fenced block. Then the command line becomes a call: `str_replace_editor …` and `submit`
//! are the harness's own commands, `<mcp tool> {json}` an external tool, anything else bash.

use serde_json::{Map, Value, json};

/// The command a reply asks to run, if it names one.
pub(crate) fn extract_action(content: &str) -> Option<String> {
    named_tool_code(content, "execute_bash")
        .or_else(|| bash_invoke(content))
        .or_else(|| tagged_code(content, "execute_bash"))
        .or_else(|| fenced(content))
}

fn normalize(command: &str) -> Option<String> {
    let command = command.trim();
    (!command.is_empty()).then(|| command.to_string())
}

fn decode_entities(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text between `<tag>` and `</tag>`, first occurrence.
fn tag_text<'a>(content: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = content.find(&open)? + open.len();
    let end = content[start..].find(&close)?;
    Some(&content[start..start + end])
}

/// `<tool_invoke><name>NAME</name><code>…</code></tool_invoke>`.
fn named_tool_code(content: &str, name: &str) -> Option<String> {
    let mut rest = content;
    while let Some(start) = rest.find("<tool_invoke>") {
        let after = &rest[start + "<tool_invoke>".len()..];
        let end = after.find("</tool_invoke>")?;
        let block = &after[..end];
        if tag_text(block, "name").map(str::trim) == Some(name)
            && let Some(code) = tag_text(block, "code")
        {
            return normalize(&decode_entities(code));
        }
        rest = &after[end + "</tool_invoke>".len()..];
    }
    None
}

/// `<invoke name="bash">` (or `execute_bash`) with a `command` parameter or tag.
fn bash_invoke(content: &str) -> Option<String> {
    let mut rest = content;
    while let Some(start) = rest.find("<invoke name=") {
        let after = &rest[start..];
        let open_end = after.find('>')?;
        let open = &after[..=open_end];
        let is_bash = ["bash", "execute_bash"].iter().any(|n| {
            open.contains(&format!("name=\"{n}\"")) || open.contains(&format!("name='{n}'"))
        });
        let body = &after[open_end + 1..];
        let end = body.find("</invoke>")?;
        let block = &body[..end];
        if is_bash
            && let Some(command) =
                named_parameter(block, "command").or_else(|| tag_text(block, "command"))
        {
            return normalize(&decode_entities(command));
        }
        rest = &body[end + "</invoke>".len()..];
    }
    None
}

fn named_parameter<'a>(block: &'a str, name: &str) -> Option<&'a str> {
    for open in [
        format!("<parameter name=\"{name}\">"),
        format!("<parameter name='{name}'>"),
    ] {
        if let Some(start) = block.find(&open) {
            let after = &block[start + open.len()..];
            let end = after.find("</parameter>")?;
            return Some(&after[..end]);
        }
    }
    None
}

/// `<execute_bash>…</execute_bash>`, with or without an inner `<code>`.
fn tagged_code(content: &str, tag: &str) -> Option<String> {
    let block = tag_text(content, tag)?;
    let code = tag_text(block, "code").unwrap_or(block);
    normalize(&decode_entities(code))
}

/// The first fenced block; a `bash`, `sh` or `shell` label on its first line is dropped.
fn fenced(content: &str) -> Option<String> {
    let start = content.find("```")? + 3;
    let end = content[start..].find("```")?;
    let block = &content[start..start + end];
    let command = match block.split_once('\n') {
        Some((label, rest)) if matches!(label.trim(), "bash" | "sh" | "shell") => rest,
        _ => block,
    };
    normalize(command)
}

/// What a command line is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Command {
    /// `submit`.
    Submit,
    /// A tool of the session called by name: the editor, or an external (MCP) tool.
    Tool { name: String, arguments: Value },
    /// Anything else runs in bash.
    Bash(String),
}

/// Classifies a command line; `external` are the names of the session's other tools.
pub(crate) fn command(line: &str, external: &[&str]) -> Command {
    let trimmed = line.trim();
    if trimmed == "submit" {
        return Command::Submit;
    }
    if let Some(rest) = trimmed.strip_prefix("str_replace_editor")
        && (rest.is_empty() || rest.starts_with(char::is_whitespace))
    {
        return Command::Tool {
            name: "str_replace_editor".into(),
            arguments: editor_arguments(trimmed),
        };
    }
    for name in external {
        if let Some(rest) = trimmed.strip_prefix(name)
            && (rest.is_empty() || rest.starts_with(char::is_whitespace))
        {
            let rest = rest.trim();
            let arguments = if rest.is_empty() {
                Ok(json!({}))
            } else {
                serde_json::from_str::<Value>(rest)
            };
            let arguments = match arguments {
                Ok(v @ Value::Object(_)) => v,
                _ => json!({"invalid": format!("`{name}` takes one JSON object of arguments")}),
            };
            return Command::Tool {
                name: name.to_string(),
                arguments,
            };
        }
    }
    Command::Bash(trimmed.to_string())
}

/// `str_replace_editor <command> <path> [--file_text T] [--view_range A B] [--old_str S]
/// [--new_str S] [--insert_line N]` as the editor's JSON arguments. A line that does not
/// parse becomes `{"invalid": why}` for the editor to report.
pub(crate) fn editor_arguments(line: &str) -> Value {
    let Some(words) = shlex::split(line) else {
        return json!({"invalid": "the command line has an unclosed quote"});
    };
    let mut words = words.into_iter().skip(1);
    let mut args = Map::new();
    let positional = ["command", "path"];
    let mut next_positional = 0;
    while let Some(w) = words.next() {
        let Some(flag) = w.strip_prefix("--") else {
            if let Some(key) = positional.get(next_positional) {
                args.insert((*key).into(), json!(w));
                next_positional += 1;
                continue;
            }
            return json!({"invalid": format!("unexpected argument `{w}`")});
        };
        let Some(value) = words.next() else {
            return json!({"invalid": format!("--{flag} needs a value")});
        };
        let value = match flag {
            "file_text" | "old_str" | "new_str" => json!(value),
            "insert_line" => match value.trim().parse::<u64>() {
                Ok(n) => json!(n),
                Err(_) => return json!({"invalid": "--insert_line takes a line number"}),
            },
            "view_range" => match view_range(&value, &mut words) {
                Some(r) => r,
                None => {
                    return json!({"invalid": "--view_range takes two line numbers, e.g. --view_range 1 40"});
                }
            },
            other => return json!({"invalid": format!("unknown option --{other}")}),
        };
        args.insert(flag.into(), value);
    }
    Value::Object(args)
}

/// `--view_range 1 40` or `--view_range "[1, 40]"`.
fn view_range(first: &str, words: &mut impl Iterator<Item = String>) -> Option<Value> {
    if first.trim_start().starts_with('[') {
        let v: Vec<i64> = serde_json::from_str(first).ok()?;
        return (v.len() == 2).then(|| json!(v));
    }
    let a: i64 = first.trim().parse().ok()?;
    let b: i64 = words.next()?.trim().parse().ok()?;
    Some(json!([a, b]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_in_the_seed_order() {
        let xml = "x <tool_invoke><name>execute_bash</name><code>ls &amp;&amp; pwd</code></tool_invoke> ```\nnope\n```";
        assert_eq!(extract_action(xml).as_deref(), Some("ls && pwd"));
        let invoke =
            "<invoke name=\"bash\"><parameter name=\"command\">cat a.py</parameter></invoke>";
        assert_eq!(extract_action(invoke).as_deref(), Some("cat a.py"));
        let tagged = "<execute_bash><code> echo hi </code></execute_bash>";
        assert_eq!(extract_action(tagged).as_deref(), Some("echo hi"));
        let fenced = "DISCUSSION\nLook first.\n\n```bash\nls -la\n```\n```\nsecond\n```";
        assert_eq!(extract_action(fenced).as_deref(), Some("ls -la"));
        assert_eq!(
            extract_action("```python\nprint(1)\n```").as_deref(),
            Some("python\nprint(1)")
        );
        assert_eq!(extract_action("no action here"), None);
        assert_eq!(extract_action("```\n   \n```"), None);
    }

    #[test]
    fn commands_and_editor_arguments() {
        assert_eq!(command(" submit ", &[]), Command::Submit);
        assert_eq!(command("submitx", &[]), Command::Bash("submitx".into()));
        let line = "str_replace_editor str_replace /r/a.py --old_str 'a - b' --new_str \"a + b\"";
        assert_eq!(
            command(line, &[]),
            Command::Tool {
                name: "str_replace_editor".into(),
                arguments: json!({"command": "str_replace", "path": "/r/a.py", "old_str": "a - b", "new_str": "a + b"})
            }
        );
        assert_eq!(
            editor_arguments("str_replace_editor view /r --view_range 3 9"),
            json!({"command": "view", "path": "/r", "view_range": [3, 9]})
        );
        assert_eq!(
            editor_arguments("str_replace_editor view /r --view_range '[1, -1]'"),
            json!({"command": "view", "path": "/r", "view_range": [1, -1]})
        );
        assert_eq!(
            editor_arguments("str_replace_editor create /r/x --file_text 'a\nb\n'"),
            json!({"command": "create", "path": "/r/x", "file_text": "a\nb\n"})
        );
        assert!(editor_arguments("str_replace_editor view 'oops")["invalid"].is_string());
        assert!(editor_arguments("str_replace_editor view /r --bogus 1")["invalid"].is_string());
        assert_eq!(
            command("echo__say {\"text\": \"hi\"}", &["echo__say"]),
            Command::Tool {
                name: "echo__say".into(),
                arguments: json!({"text": "hi"})
            }
        );
        assert_eq!(
            command("ls -la", &["echo__say"]),
            Command::Bash("ls -la".into())
        );
    }
}
