//! Bounded resources, driven through `interpreter exec` and the mock: a 1 GB file is read in
//! windows (never whole), binary files are refused, and a command that spawns past
//! `max_processes` is killed with everything it started.
//!
//! This file is its own test binary on purpose: the peak RSS of our children
//! (`getrusage(RUSAGE_CHILDREN)`) then covers only the interpreter runs made here.

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;

fn args(url: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(url, "chat"));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// The tool output the model got back for call `id`, from the last request's messages.
fn tool_output(mock: &MockServer, id: &str) -> String {
    let reqs = mock.model_requests();
    let body = &reqs.last().expect("a model request").body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|| panic!("no tool output for {id} in {body}"))
}

fn peak_child_rss_mb() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0);
    usage.ru_maxrss as f64 / 1024.0
}

#[test]
fn a_1gb_file_is_windowed_and_binary_is_refused() {
    let repo = TestRepo::new();
    // 1 GiB, sparse: 1000 text lines (past the 8 KiB binary sniff), then a hole, which reads
    // as one long line of NUL bytes.
    let huge = repo.path().join("huge.log");
    let f = std::fs::File::create(&huge).unwrap();
    use std::io::Write;
    let head: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
    (&f).write_all(head.as_bytes()).unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    // 1 GiB of nothing but NUL: binary.
    let zeros = repo.path().join("disk.img");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    // 20 MB of real lines: over the whole-read limit, so streamed, with exact numbers.
    let text: String = (1..=1_000_000)
        .map(|i| format!("entry {i:07} ok\n"))
        .collect();
    std::fs::write(repo.path().join("big.txt"), &text).unwrap();

    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "read_file", json!({"path": "huge.log", "limit": 2})),
        Reply::tool_call("c2", "read_file", json!({"path": "disk.img"})),
        Reply::tool_call(
            "c3",
            "read_file",
            json!({"path": "big.txt", "offset": 500000, "limit": 2}),
        ),
        Reply::tool_call("c4", "read_file", json!({"path": "big.txt", "offset": -1})),
        Reply::text("done"),
    ]))
    .unwrap();
    let out = repo.run(&args(&mock.url(), &[]), "read the big files");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(jsonl(&out).iter().any(|e| e["item"]["text"] == "done"));

    let c1 = tool_output(&mock, "c1");
    assert!(c1.starts_with("L1: line 1\nL2: line 2\n"), "{c1}");
    assert!(
        c1.contains("1001 lines in total; continue with offset=3"),
        "{c1}"
    );
    assert!(c1.len() < 1000, "{} bytes", c1.len());

    let c2 = tool_output(&mock, "c2");
    assert!(c2.contains("binary file (1073741824 bytes)"), "{c2}");

    let c3 = tool_output(&mock, "c3");
    assert!(
        c3.starts_with("L500000: entry 0500000 ok\nL500001: entry 0500001 ok\n"),
        "{c3}"
    );
    assert!(c3.contains("1000000 lines in total"), "{c3}");
    let c4 = tool_output(&mock, "c4");
    assert_eq!(c4.trim_end(), "L1000000: entry 1000000 ok", "{c4}");

    // Nothing was loaded whole: the peak is far below the 1 GiB file (or even the 20 MB one).
    let peak = peak_child_rss_mb();
    eprintln!("peak RSS of the interpreter runs: {peak:.1} MB");
    assert!(peak < 100.0, "peak RSS {peak:.1} MB");
    assert_eq!(std::fs::metadata(&huge).unwrap().len(), 1 << 30);
}

#[test]
fn a_command_over_max_processes_is_killed_with_its_children() {
    let repo = TestRepo::new();
    let marker = "29.7182";
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "shell",
            json!({"command": format!("for i in $(seq 1 60); do sleep {marker} & done; wait; echo finished")}),
        ),
        Reply::text("ok"),
    ]))
    .unwrap();
    let out = repo.run(
        &args(&mock.url(), &["-c", "max_processes=16"]),
        "spawn many",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c1 = tool_output(&mock, "c1");
    assert!(c1.contains("over the limit of 16 (max_processes)"), "{c1}");
    assert!(!c1.contains("finished"), "{c1}");
    let left = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| c.ends_with(format!("sleep\0{marker}\0").as_bytes()))
        .count();
    assert_eq!(left, 0, "processes outlived the command");
}

/// The session logs under a home folder, and their total size.
fn sessions_size(home: &std::path::Path) -> u64 {
    std::fs::read_dir(home.join("sessions"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn a_provider_sending_50_mb_of_tool_input_again_and_again_is_stopped() {
    let repo = TestRepo::new();
    // A tool call whose input is 50 MB of input_json_delta, in 1 MB pieces, every time (made
    // as it is sent: a big test process would count in the children's RSS through fork).
    let huge = Reply::default()
        .then_padded_tool_call("toolu_1", "Probe", r#"{"command":"{{pad}}"}"#, 50 << 20)
        .with_repeat(3);
    let mock = MockServer::start_blocking(Script::new([huge])).unwrap();
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "messages"));
    let started = std::time::Instant::now();
    let out = repo.run(&a, "do it");
    let took = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = jsonl(&out);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn.failed", "{last}");
    let message = last["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("mock sent more than 524288 bytes of text, reasoning and tool calls")
            && message.contains("max_output_tokens = 32768"),
        "{message}"
    );
    let log = sessions_size(repo.home.path());
    let peak = peak_child_rss_mb();
    eprintln!(
        "50 MB tool input: {took:?}, peak RSS {peak:.1} MB, sessions {log} bytes, stdout {} bytes, stderr {} bytes",
        out.stdout.len(),
        out.stderr.len()
    );
    assert!(log < 64 * 1024, "session files hold {log} bytes");
    assert!(
        out.stderr.len() < 64 * 1024,
        "{} bytes of stderr",
        out.stderr.len()
    );
    assert!(
        out.stdout.len() < 64 * 1024,
        "{} bytes of stdout",
        out.stdout.len()
    );
    assert!(peak < 100.0, "peak RSS {peak:.1} MB");
    assert_eq!(
        mock.model_requests().len(),
        1,
        "a stopped response is not retried"
    );
}

#[test]
fn an_endless_message_ends_at_the_output_bound_not_the_request_timeout() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::default().then_endless("all work and no play makes jack a dull boy ")
    ]))
    .unwrap();
    let started = std::time::Instant::now();
    let out = repo.run(&args(&mock.url(), &[]), "write forever");
    let took = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = jsonl(&out).last().cloned().unwrap();
    assert_eq!(last["type"], "turn.failed", "{last}");
    let message = last["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("mock sent more than") && message.contains("max_output_tokens"),
        "{message}"
    );
    let log = sessions_size(repo.home.path());
    eprintln!(
        "endless message: stopped after {took:?}; sessions {log} bytes, stdout {} bytes",
        out.stdout.len()
    );
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    assert!(log < 64 * 1024, "session files hold {log} bytes");
    assert!(
        out.stdout.len() < 64 * 1024,
        "{} bytes of stdout",
        out.stdout.len()
    );
}
