//! Issue 22, rows 6 and 12 (MCP): hostile MCP servers through `interpreter exec`, config.toml
//! servers and the `mcp-echo` fixture. Long tool names stay unique and reachable after the
//! harness's naming rules; a result too large ends its call at once (stdio and HTTP).

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const ECHO: &str = env!("CARGO_BIN_EXE_mcp-echo");

fn exec_args(mock: &MockServer, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["exec".to_string(), "--json".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn with_server(repo: &TestRepo, args: &str, extra: &str) {
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!("[mcp_servers.echo]\ncommand = '{ECHO}'\nargs = [{args}]\nstartup_timeout_sec = 20\n{extra}"),
    )
    .unwrap();
}

/// The tool names a model request carried.
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The tool results of a model request, by call id.
fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn long_mcp_tool_names_stay_unique_and_reach_their_tools_in_claude_code() {
    let repo = TestRepo::new();
    with_server(&repo, "'--long-names'", "");
    let harness = ["-c", "harness=\"claude-code\""];
    let mock = MockServer::start_blocking(Script::new([Reply::text("listed")])).unwrap();
    let out = repo.run(&exec_args(&mock, &harness), "list the tools");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = tool_names(&mock.model_requests()[0].body);
    let mut seen = std::collections::HashSet::new();
    for n in &names {
        assert!(seen.insert(n), "`{n}` twice in {names:?}");
        assert!(n.len() <= 64, "`{n}` is longer than providers accept");
    }
    let long: Vec<&String> = names
        .iter()
        .filter(|n| n.contains("tttttttt") || n.contains("uuuuuuuu"))
        .collect();
    assert_eq!(long.len(), 4, "{names:?}");
    assert!(
        long.iter().all(|n| n.starts_with("mcp__echo__")),
        "{long:?}"
    );

    // Each name reaches its own tool (the server answers with the tool's own name).
    let mut calls = Reply::default();
    for (i, n) in long.iter().enumerate() {
        calls = calls.then_tool_call(format!("c{i}"), n.as_str(), json!({}));
    }
    mock.set_script(Script::new([calls, Reply::text("done")]));
    mock.clear_requests();
    let out = repo.run(&exec_args(&mock, &harness), "call them all");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tool_results(&mock.model_requests()[1].body);
    let expected = [
        "tttttttttttttttttttttttttttttttttttttttttttttttttttttt_one",
        "tttttttttttttttttttttttttttttttttttttttttttttttttttttt_two",
        "uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu_alpha",
        "uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu_gamma",
    ];
    for (i, tool) in expected.iter().enumerate() {
        let id = format!("c{i}");
        let r = results
            .iter()
            .find(|(c, _)| *c == id)
            .unwrap_or_else(|| panic!("no result for {id}: {results:?}"));
        assert_eq!(r.1, format!("I am {tool}"), "{} → {results:?}", long[i]);
    }
}

#[test]
fn a_100_mb_mcp_result_ends_its_call_at_once() {
    let repo = TestRepo::new();
    with_server(&repo, "'--big'", "tool_timeout_sec = 60\n");
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "echo__big", json!({"bytes": 100_000_000})),
        Reply::tool_call("c2", "echo__say", json!({"text": "still there"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let started = Instant::now();
    let out = repo.run(&exec_args(&mock, &[]), "fetch it");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(jsonl(&out).iter().any(|e| e["item"]["text"] == "done"));
    let results = tool_results(&mock.model_requests()[2].body);
    assert_eq!(results[1].1, "still there", "the server keeps serving");
    let text = &results[0].1;
    eprintln!("100 MB MCP result: the call ended after {took:?}: {text}");
    assert!(
        text.contains("result too large (1000000") && text.contains(" bytes"),
        "{text}"
    );
    assert!(!text.contains("did not finish"), "{text}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn a_100_mb_mcp_result_over_http_ends_its_call_at_once() {
    use std::io::BufRead;
    let mut server = std::process::Command::new(ECHO)
        .args(["--http", "--big"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[mcp_servers.echo]\nurl = '{}'\ntool_timeout_sec = 60\n",
            url.trim()
        ),
    )
    .unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "echo__big", json!({"bytes": 100_000_000})),
        Reply::tool_call("c2", "echo__say", json!({"text": "still there"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let started = Instant::now();
    let out = repo.run(&exec_args(&mock, &[]), "fetch it");
    let took = started.elapsed();
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // rmcp's HTTP client refuses an event over its 16 MiB cap and fails the request at once
    // (its message says less than ours); the server keeps serving.
    let results = tool_results(&mock.model_requests()[2].body);
    eprintln!("100 MB MCP result over HTTP: the call ended after {took:?}: {results:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(!results[0].1.contains("did not finish"), "{results:?}");
    assert_eq!(results[1].1, "still there", "{results:?}");
}
