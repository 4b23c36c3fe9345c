//! Automatic compaction near the context limit, end to end through `exec resume`.

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::Value;

fn args(mock: &MockServer, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    // A tiny window so a few long messages cross the threshold (85%, minus the output budget).
    a.extend(
        [
            "-c",
            "model_context_window=4400",
            "-c",
            "model_max_output_tokens=1000",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_long_session_compacts_keeps_user_messages_and_continues() {
    let repo = TestRepo::new();
    let first_q = format!("First question. {}", "alpha ".repeat(500));
    let second_q = format!("Second question. {}", "beta ".repeat(500));
    let mock = MockServer::start_blocking(Script::new([
        Reply::text(format!("First answer. {}", "gamma ".repeat(300))),
        Reply::text("## Task\nTwo questions about alpha and beta.\n## Next\nAnswer the second."),
        Reply::text("Second answer."),
        Reply::text("Third answer."),
    ]))
    .unwrap();
    let out = repo.run(&args(&mock, &[]), &first_q);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();

    let mut a = args(&mock, &[]);
    a.extend(["resume".to_string(), id.clone()]);
    let out = repo.run(&a, &second_q);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = jsonl(&out);
    assert!(events.iter().any(|e| e["item"]["text"] == "Second answer."));

    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 3);
    // Request 2 is the compaction itself: the whole history plus the instruction, no tools.
    let compaction = &reqs[1].body;
    assert!(compaction.get("tools").is_none());
    assert!(
        user_texts(compaction)
            .last()
            .unwrap()
            .contains("handoff note")
    );
    // Request 3 continues on the compacted history: smaller, user messages verbatim, summary in.
    let after = &reqs[2].body;
    let users = user_texts(after);
    assert!(
        users.contains(&first_q) && users.contains(&second_q),
        "user messages must survive verbatim"
    );
    assert!(
        users
            .iter()
            .any(|u| u.contains("<compacted_context>") && u.contains("Answer the second."))
    );
    assert!(
        !after.to_string().contains("First answer."),
        "the old assistant reply is summarized away"
    );
    // Smaller than the same conversation uncompacted (the compaction request carried it whole).
    let conversation = |body: &Value, drop_last: usize| -> usize {
        let m = body["messages"].as_array().unwrap();
        m[1..m.len() - drop_last]
            .iter()
            .map(|x| x.to_string().len())
            .sum()
    };
    assert!(conversation(after, 0) < conversation(compaction, 1));

    // The compacted history is what a later resume continues from.
    let mut a = args(&mock, &[]);
    a.extend(["resume".to_string(), id]);
    let out = repo.run(&a, "third");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let last = &mock.model_requests()[3].body;
    assert!(last.to_string().contains("<compacted_context>"));
    assert!(!last.to_string().contains("First answer."));
}
