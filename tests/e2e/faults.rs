//! Provider faults and crashes: each ends in the documented behaviour, the session log stays
//! intact, and a follow-up prompt in the same session works.

use mock_llm::e2e::{TestRepo, interpreter_bin, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn args(url: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(url, "chat"));
    a.extend(
        [
            "-c",
            "model_providers.mock.request_max_retries=2",
            "-c",
            "model_providers.mock.stream_max_retries=1",
            "-c",
            "model_providers.mock.stream_idle_timeout_ms=400",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn resume(url: &str, id: &str) -> Vec<String> {
    let mut a = args(url, &[]);
    a.extend(["resume".to_string(), id.to_string()]);
    a
}

fn last_event(out: &std::process::Output) -> Value {
    jsonl(out).last().cloned().unwrap()
}

/// Runs a faulty first turn, then a follow-up turn in the same session that must work and
/// carry the first user message (the log stayed intact).
fn fault_then_follow_up(
    name: &str,
    fault: Vec<Reply>,
    expect_failed: Option<&str>,
) -> (TestRepo, MockServer) {
    let repo = TestRepo::new();
    let mut replies = fault;
    replies.push(Reply::text("recovered"));
    let mock = MockServer::start_blocking(Script::new(replies)).unwrap();
    let out = repo.run(&args(&mock.url(), &[]), &format!("first prompt ({name})"));
    let events = jsonl(&out);
    let id = events[0]["thread_id"].as_str().unwrap().to_string();
    match expect_failed {
        Some(text) => {
            assert_eq!(out.status.code(), Some(1), "{name}");
            let last = last_event(&out);
            assert_eq!(last["type"], "turn.failed", "{name}: {last}");
            let msg = last["error"]["message"].as_str().unwrap();
            assert!(msg.contains(text), "{name}: {msg}");
        }
        None => {
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // The follow-up uses a fresh script so it does not depend on how many retries happened.
    mock.set_script(Script::new([Reply::text("recovered")]));
    mock.clear_requests();
    let out = repo.run(&resume(&mock.url(), &id), "follow-up");
    assert!(
        out.status.success(),
        "{name} follow-up: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        jsonl(&out).iter().any(|e| e["item"]["text"] == "recovered"),
        "{name}"
    );
    let body = mock.model_requests()[0].body.to_string();
    assert!(
        body.contains(&format!("first prompt ({name})")),
        "{name}: first turn lost"
    );
    (repo, mock)
}

#[test]
fn http_errors_retry_then_fail_clearly() {
    for status in [500u16, 502, 503] {
        fault_then_follow_up(
            &format!("http {status}"),
            vec![Reply::error(status, format!("upstream {status} trouble")).with_repeat(3)],
            Some(&format!("upstream {status} trouble")),
        );
    }
    // A retryable error followed by success just works.
    fault_then_follow_up(
        "429 then ok",
        vec![Reply::error(429, "slow down").with_header("retry-after", "0")],
        None,
    );
}

#[test]
fn stalled_truncated_and_garbage_streams() {
    // Stalls past the idle timeout, twice (the retry stalls too).
    fault_then_follow_up(
        "stall",
        vec![
            Reply::default()
                .then_text("partial")
                .then_delay(3000)
                .then_text("never")
                .with_repeat(2),
        ],
        Some("idle timeout"),
    );
    // Truncated twice.
    fault_then_follow_up(
        "truncated",
        vec![
            Reply::default()
                .then_text("partial")
                .then_cut()
                .with_repeat(2),
        ],
        Some("stream disconnected before completion"),
    );
    // A garbage line in an otherwise good stream is skipped.
    fault_then_follow_up(
        "garbage",
        vec![
            Reply::default()
                .then_raw("data: {not json at all\n\n")
                .then_text("fine"),
        ],
        None,
    );
}

#[test]
fn connection_refused_is_a_clear_error() {
    // A port nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let repo = TestRepo::new();
    let url = format!("http://127.0.0.1:{port}/v1");
    let t = Instant::now();
    let out = repo.run(&args(&url, &[]), "hi");
    assert_eq!(out.status.code(), Some(1));
    let msg = last_event(&out)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        msg.contains("could not reach mock") && msg.contains(&url),
        "{msg}"
    );
    assert!(t.elapsed() < Duration::from_secs(20));
}

#[test]
fn bad_tool_calls_huge_outputs_and_loops_are_contained() {
    let repo = TestRepo::new();
    // A gigantic tool output is capped before it reaches the model.
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "shell",
            json!({"command": "head -c 50000000 /dev/zero | tr '\\0' x"}),
        ),
        Reply::text("done"),
    ]))
    .unwrap();
    let out = repo.run(&args(&mock.url(), &[]), "big");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = mock.model_requests()[1].body.to_string();
    assert!(
        body.len() < 200_000,
        "tool output reached the model uncapped: {} bytes",
        body.len()
    );
    assert!(body.contains("truncated"));

    // A model that loops calling tools stops at max_turn_requests.
    let mock = MockServer::start_blocking(Script::new([Reply::tool_call(
        "c",
        "shell",
        json!({"command": "true"}),
    )
    .with_repeat(50)]))
    .unwrap();
    let out = repo.run(&args(&mock.url(), &["-c", "max_turn_requests=4"]), "loop");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        last_event(&out)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_turn_requests")
    );
    assert_eq!(mock.model_requests().len(), 4);
}

#[test]
fn kill_9_mid_tool_call_keeps_completed_turns_and_whole_files() {
    let repo = TestRepo::new();
    repo.write("a.txt", "old\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n";
    let marker = repo.path().join("started");
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": patch})),
        Reply::text("Turn one done."),
        Reply::tool_call(
            "c2",
            "shell",
            json!({"command": format!("touch {}; sleep 30", marker.display())}),
        ),
    ]))
    .unwrap();
    let out = repo.run(&args(&mock.url(), &[]), "turn one");
    assert!(out.status.success());
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();

    // Turn two: killed with SIGKILL while its command runs.
    let mut child = Command::new(interpreter_bin())
        .args(resume(&mock.url(), &id))
        .arg("turn two")
        .current_dir(repo.path())
        .env("OPENINTERPRETER_HOME", repo.home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !marker.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(repo.read("a.txt"), "new\n", "the edited file must be whole");

    // Turn three resumes: turn one is all there, turn two's user message and call too.
    mock.set_script(Script::new([Reply::text("Back.")]));
    mock.clear_requests();
    let out = repo.run(&resume(&mock.url(), &id), "turn three");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let msgs = mock.model_requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let text = serde_json::to_string(&msgs).unwrap();
    for needle in [
        "turn one",
        "Turn one done.",
        "turn two",
        "turn three",
        "M a.txt",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
    // The interrupted call got a result, so the history is valid for the provider.
    let interrupted = msgs
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "c2")
        .expect("a result for the interrupted call");
    assert!(
        interrupted["content"]
            .as_str()
            .unwrap()
            .contains("interrupted")
    );
}
