//! The history rules real providers enforce, checked on every model request the mock gets.
//! A request that breaks one is answered with a 400 naming the rule, as the provider would,
//! so a test sees a history the real API would refuse (for example after a mid-session
//! switch of harness or wire).

use serde_json::Value;

/// The signature the mock puts on a thinking block, and checks when the block comes back:
/// a block that was altered or made up fails like a forged one at the real API.
pub fn thinking_signature(thinking: &str) -> String {
    let hash = thinking.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("mocksig_{hash:016x}")
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Checks a Chat Completions body: every assistant tool call is answered by a `tool` message
/// with its id before the next user or assistant message, and every `tool` message answers
/// one.
pub fn chat(body: &Value) -> Result<(), String> {
    // Only the pairing is checked: bodies without messages are other tests' business.
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Ok(());
    };
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if role == "tool" {
            let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
            match pending.iter().position(|p| p == id) {
                Some(at) => {
                    pending.remove(at);
                }
                None => {
                    return Err(format!(
                        "messages[{i}]: a message with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id `{id}` answers none)"
                    ));
                }
            }
            continue;
        }
        if !pending.is_empty() {
            return Err(format!(
                "messages[{i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing: {}",
                pending.join(", ")
            ));
        }
        if role == "assistant"
            && let Some(calls) = m.get("tool_calls").and_then(Value::as_array)
        {
            for c in calls {
                let id = c.get("id").and_then(Value::as_str).unwrap_or("");
                if id.is_empty() {
                    return Err(format!("messages[{i}]: a tool call without an id"));
                }
                pending.push(id.to_string());
            }
        }
    }
    if !pending.is_empty() {
        return Err(format!(
            "an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing: {}",
            pending.join(", ")
        ));
    }
    Ok(())
}

/// The blocks of a message's `content` (a string counts as one text block).
fn blocks(content: &Value) -> Result<Vec<Value>, String> {
    match content {
        Value::String(s) => Ok(vec![serde_json::json!({"type": "text", "text": s})]),
        Value::Array(b) => Ok(b.clone()),
        _ => Err("content must be a string or an array of blocks".into()),
    }
}

/// Checks an Anthropic Messages body against the API's rules for requests and history.
pub fn messages(body: &Value) -> Result<(), String> {
    let max_tokens = body.get("max_tokens").and_then(Value::as_u64).unwrap_or(0);
    if max_tokens == 0 {
        return Err("max_tokens: Field required (a positive integer)".into());
    }
    check_thinking_param(body, max_tokens)?;
    check_system(body)?;
    check_tools(body)?;
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err("messages: Field required".into());
    };
    if messages.is_empty() {
        return Err("messages: at least one message is required".into());
    }
    let mut previous_calls: Vec<String> = Vec::new();
    let mut previous_role = "";
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if role != "user" && role != "assistant" {
            return Err(format!(
                "messages.{i}.role: Input should be 'user' or 'assistant'"
            ));
        }
        if i == 0 && role != "user" {
            return Err("messages.0: the first message must use the user role".into());
        }
        if role == previous_role {
            return Err(format!(
                "messages.{i}: roles must alternate between \"user\" and \"assistant\", but found multiple \"{role}\" roles in a row"
            ));
        }
        let content = blocks(m.get("content").unwrap_or(&Value::Null))
            .map_err(|e| format!("messages.{i}.content: {e}"))?;
        if content.is_empty() {
            return Err(format!(
                "messages.{i}: all messages must have non-empty content"
            ));
        }
        for (k, b) in content.iter().enumerate() {
            check_block(role, b).map_err(|e| format!("messages.{i}.content.{k}: {e}"))?;
        }
        if role == "user" {
            check_results(i, &content, &previous_calls)?;
            previous_calls.clear();
        } else {
            previous_calls = content
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .filter_map(|b| b["id"].as_str().map(String::from))
                .collect();
        }
        previous_role = role;
    }
    if !previous_calls.is_empty() {
        return Err(format!(
            "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            messages.len() - 1,
            previous_calls.join(", ")
        ));
    }
    check_final_thinking(body, messages)?;
    let breakpoints = body.to_string().matches("\"cache_control\"").count();
    if breakpoints > 4 {
        return Err(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
        ));
    }
    Ok(())
}

fn check_thinking_param(body: &Value, max_tokens: u64) -> Result<(), String> {
    let Some(t) = body.get("thinking") else {
        return Ok(());
    };
    match t.get("type").and_then(Value::as_str) {
        Some("enabled") => {
            let budget = t.get("budget_tokens").and_then(Value::as_u64).unwrap_or(0);
            if budget < 1024 {
                return Err(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                        .into(),
                );
            }
            if budget >= max_tokens {
                return Err("`max_tokens` must be greater than `thinking.budget_tokens`".into());
            }
            Ok(())
        }
        Some("disabled" | "adaptive") => Ok(()),
        _ => Err("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'".into()),
    }
}

fn check_system(body: &Value) -> Result<(), String> {
    match body.get("system") {
        None | Some(Value::String(_)) => Ok(()),
        Some(Value::Array(parts)) => {
            for (k, p) in parts.iter().enumerate() {
                if p["type"] != "text" || p["text"].as_str().is_none_or(str::is_empty) {
                    return Err(format!("system.{k}: text content blocks must be non-empty"));
                }
            }
            Ok(())
        }
        Some(_) => Err("system: Input should be a string or a list of text blocks".into()),
    }
}

fn check_tools(body: &Value) -> Result<(), String> {
    let Some(tools) = body.get("tools") else {
        return Ok(());
    };
    let Some(tools) = tools.as_array() else {
        return Err("tools: Input should be a valid list".into());
    };
    for (k, t) in tools.iter().enumerate() {
        let name = t["name"].as_str().unwrap_or("");
        if !valid_id(name) || name.len() > 64 {
            return Err(format!(
                "tools.{k}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            ));
        }
        if t["input_schema"]["type"] != "object" {
            return Err(format!(
                "tools.{k}.input_schema.type: Input should be 'object'"
            ));
        }
    }
    Ok(())
}

fn check_block(role: &str, b: &Value) -> Result<(), String> {
    match b.get("type").and_then(Value::as_str).unwrap_or("") {
        "text" => match b.get("text").and_then(Value::as_str) {
            Some(t) if !t.is_empty() => Ok(()),
            _ => Err("text content blocks must be non-empty".into()),
        },
        "image" if role == "user" => {
            let src = &b["source"];
            match src["type"].as_str() {
                Some("base64")
                    if matches!(
                        src["media_type"].as_str(),
                        Some("image/png" | "image/jpeg" | "image/gif" | "image/webp")
                    ) && src["data"].as_str().is_some_and(|d| !d.is_empty()) =>
                {
                    Ok(())
                }
                Some("url") if src["url"].as_str().is_some() => Ok(()),
                _ => Err(
                    "image.source: a base64 source needs a supported media_type and data".into(),
                ),
            }
        }
        "tool_use" if role == "assistant" => {
            let id = b["id"].as_str().unwrap_or("");
            if !valid_id(id) {
                return Err(format!(
                    "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$' (got `{id}`)"
                ));
            }
            if !b["input"].is_object() {
                return Err("tool_use.input: Input should be a valid dictionary".into());
            }
            Ok(())
        }
        "tool_result" if role == "user" => match b.get("content") {
            None => Ok(()),
            Some(Value::String(s)) if !s.is_empty() => Ok(()),
            Some(Value::String(_)) => {
                Err("tool_result: content must be non-empty if present".into())
            }
            Some(Value::Array(_)) => Ok(()),
            Some(_) => Err("tool_result.content: Input should be a string or a list".into()),
        },
        "thinking" if role == "assistant" => {
            let text = b["thinking"].as_str().unwrap_or("");
            match b["signature"].as_str() {
                None | Some("") => Err("thinking.signature: Field required".into()),
                Some(sig) if sig != thinking_signature(text) => {
                    Err("Invalid `signature` in `thinking` block".into())
                }
                Some(_) => Ok(()),
            }
        }
        "redacted_thinking" if role == "assistant" => match b["data"].as_str() {
            Some(d) if !d.is_empty() => Ok(()),
            _ => Err("redacted_thinking.data: Field required".into()),
        },
        other => Err(format!(
            "`{other}` blocks are not allowed in {role} messages"
        )),
    }
}

/// A user message after tool calls begins with one result per call; results answer only
/// the previous message's calls.
fn check_results(i: usize, content: &[Value], calls: &[String]) -> Result<(), String> {
    let leading = content
        .iter()
        .take_while(|b| b["type"] == "tool_result")
        .count();
    for (k, b) in content.iter().enumerate() {
        if b["type"] != "tool_result" {
            continue;
        }
        let id = b["tool_use_id"].as_str().unwrap_or("");
        if !calls.iter().any(|c| c == id) {
            return Err(format!(
                "messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            ));
        }
        if k >= leading {
            return Err(format!(
                "messages.{i}.content.{k}: `tool_result` blocks must come before any other content in a user message"
            ));
        }
    }
    let answered: Vec<&str> = content[..leading]
        .iter()
        .filter_map(|b| b["tool_use_id"].as_str())
        .collect();
    let missing: Vec<&str> = calls
        .iter()
        .map(String::as_str)
        .filter(|c| !answered.contains(c))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            i.saturating_sub(1),
            missing.join(", ")
        ));
    }
    Ok(())
}

/// With thinking on, the assistant message whose tool calls the last message answers must
/// start with its thinking block.
fn check_final_thinking(body: &Value, messages: &[Value]) -> Result<(), String> {
    if body.pointer("/thinking/type").and_then(Value::as_str) != Some("enabled") {
        return Ok(());
    }
    let [.., assistant, last] = messages else {
        return Ok(());
    };
    let last_blocks = blocks(&last["content"]).unwrap_or_default();
    if !last_blocks.iter().any(|b| b["type"] == "tool_result") {
        return Ok(());
    }
    let first = blocks(&assistant["content"]).unwrap_or_default();
    match first.first().and_then(|b| b["type"].as_str()) {
        Some("thinking" | "redacted_thinking") => Ok(()),
        other => Err(format!(
            "messages.{}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.",
            messages.len() - 2,
            other.unwrap_or("nothing")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(messages: Value) -> Value {
        json!({"model": "m", "max_tokens": 100, "messages": messages})
    }

    #[test]
    fn messages_rules() {
        let ok = body(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": thinking_signature("t")},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"},
                {"type": "text", "text": "more"}]}
        ]));
        assert_eq!(messages(&ok), Ok(()));
        let cases = [
            (
                json!([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]),
                "alternate",
            ),
            (
                json!([{"role": "assistant", "content": "a"}]),
                "first message",
            ),
            (json!([{"role": "user", "content": ""}]), "non-empty"),
            (
                json!([{"role": "user", "content": "a"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "functions.Read:0", "name": "Read", "input": {}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "functions.Read:0"}]}]),
                "pattern",
            ),
            (
                json!([{"role": "user", "content": "a"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
                    {"role": "user", "content": "no result"}]),
                "without `tool_result`",
            ),
            (
                json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9"}]}]),
                "unexpected `tool_use_id`",
            ),
            (
                json!([{"role": "user", "content": "a"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
                    {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t1"}]}]),
                "before any other",
            ),
            (
                json!([{"role": "user", "content": "a"},
                    {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": ""}, {"type": "text", "text": "x"}]}]),
                "signature: Field required",
            ),
            (
                json!([{"role": "user", "content": "a"},
                    {"role": "assistant", "content": [{"type": "thinking", "thinking": "edited", "signature": thinking_signature("t")}, {"type": "text", "text": "x"}]}]),
                "Invalid `signature`",
            ),
        ];
        for (msgs, want) in cases {
            let err = messages(&body(msgs.clone())).unwrap_err();
            assert!(err.contains(want), "{want}: {err} for {msgs}");
        }
        let mut thinking = ok.clone();
        thinking["thinking"] = json!({"type": "enabled", "budget_tokens": 2000});
        thinking["max_tokens"] = json!(4000);
        assert_eq!(messages(&thinking), Ok(()));
        thinking["messages"][1]["content"]
            .as_array_mut()
            .unwrap()
            .remove(0);
        assert!(
            messages(&thinking)
                .unwrap_err()
                .contains("must start with a thinking block")
        );
    }

    #[test]
    fn chat_rules() {
        let call = json!({"role": "assistant", "content": null,
                          "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
        let ok = json!({"messages": [{"role": "user", "content": "a"}, call,
                                     {"role": "tool", "tool_call_id": "c1", "content": "r"},
                                     {"role": "user", "content": "b"}]});
        assert_eq!(chat(&ok), Ok(()));
        let missing = json!({"messages": [{"role": "user", "content": "a"}, call, {"role": "user", "content": "b"}]});
        assert!(chat(&missing).unwrap_err().contains("missing: c1"));
        let orphan = json!({"messages": [{"role": "user", "content": "a"},
                                         {"role": "tool", "tool_call_id": "c9", "content": "r"}]});
        assert!(chat(&orphan).unwrap_err().contains("c9"));
    }
}
