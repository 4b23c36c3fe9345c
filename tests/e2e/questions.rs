//! Questions for the user (Claude Code's `AskUserQuestion`, Codex's `request_user_input`)
//! through the faces that cannot ask: `exec` answers at once that nobody can be asked.

use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

fn exec_args(mock: &MockServer, harness: &str) -> Vec<String> {
    let mut a = vec!["exec".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    a.extend(["-c".to_string(), format!("harness=\"{harness}\"")]);
    a
}

/// The text of the tool result for `id` in a Chat request.
fn tool_result(body: &Value, id: &str) -> String {
    let m = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {body}"));
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.to_string(),
    }
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn claude_question() -> Value {
    json!({"questions": [{"question": "Which database?", "header": "DB", "multiSelect": false,
        "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]}]})
}

pub(crate) fn codex_question() -> Value {
    json!({"questions": [{"id": "db", "header": "DB", "question": "Which database?",
        "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]}]})
}

#[test]
fn exec_answers_at_once_that_nobody_can_be_asked_and_the_model_decides() {
    for (harness, tool, args, listed) in [
        ("claude-code", "AskUserQuestion", claude_question(), true),
        ("native", "request_user_input", codex_question(), false),
    ] {
        let repo = TestRepo::new();
        let mock = MockServer::start_blocking(Script::new([
            Reply::tool_call("q1", tool, args),
            Reply::text("No one to ask: I chose SQLite."),
        ]))
        .unwrap();
        let started = std::time::Instant::now();
        let out = repo.run(&exec_args(&mock, harness), "set up a database");
        assert!(
            out.status.success(),
            "{harness}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        let reqs = mock.model_requests();
        assert_eq!(reqs.len(), 2, "{harness}");
        // Claude Code lists the tool in -p mode too; Codex only where someone can answer.
        assert_eq!(
            tool_names(&reqs[0].body).contains(&tool.to_string()),
            listed,
            "{harness}"
        );
        let result = tool_result(&reqs[1].body, "q1");
        assert!(
            result.contains("No one can answer questions here"),
            "{harness}: {result}"
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("I chose SQLite"));
    }
}
