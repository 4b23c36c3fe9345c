//! Issue 39's `interpreter mcp-server`, as raw JSON-RPC lines on its stdio: hostile input
//! (a line that is not JSON, JSON that is not a message, a message over the cap, bad
//! arguments, a thread that is not ours, a cwd that does not exist) each answered with a
//! clear error while the server keeps serving, then one real thread on the mock model whose
//! answer carries `structuredContent.threadId` and whose session is stored. Every stdout line
//! must be JSON-RPC. The official SDK's view is tests/mcp-python/test_mcp_server.py.

use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// Notifications seen while waiting for answers.
    notes: Vec<Value>,
}

impl Server {
    fn start(repo: &TestRepo, mock: &MockServer) -> Server {
        let mut args = vec!["mcp-server".to_string()];
        args.extend(TestRepo::mock_config(&mock.url(), "chat"));
        let mut cmd = repo.command(&args);
        cmd.stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn interpreter mcp-server");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
            notes: Vec::new(),
        }
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that is not a notification.
    fn answer(&mut self) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("an answer within 30 s");
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
            assert_eq!(msg["jsonrpc"], "2.0", "{msg}");
            if msg.get("method").is_some() && msg.get("id").is_none() {
                self.notes.push(msg);
                continue;
            }
            return msg;
        }
    }

    fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        self.send(req.to_string().as_bytes());
        let msg = self.answer();
        assert_eq!(msg["id"], id, "{msg}");
        msg
    }
}

/// The text of an `isError` result.
fn error_result(msg: &Value) -> String {
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    msg["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn hostile_lines_get_clear_errors_and_a_thread_still_runs() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("all done")])).unwrap();
    let mut s = Server::start(&repo, &mock);

    s.send(b"{oops");
    let m = s.answer();
    assert_eq!(m["error"]["code"], -32700, "{m}");
    assert!(m.get("id").is_none_or(Value::is_null), "{m}");
    s.send(br#"{"jsonrpc":"2.0","id":9,"method":{"not":"a name"}}"#);
    let m = s.answer();
    assert_eq!(
        (m["id"].clone(), m["error"]["code"].clone()),
        (json!(9), json!(-32600))
    );

    s.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "0"}}})
        .to_string()
        .as_bytes(),
    );
    let m = s.answer();
    assert_eq!(
        m["result"]["serverInfo"]["name"], "interpreter-mcp-server",
        "{m}"
    );
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    // 17 MiB: over the 16 MiB cap, refused for its id without being held whole.
    let mut big = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"codex","arguments":{"prompt":""#.to_vec();
    big.extend(std::iter::repeat_n(b'z', 17 * 1024 * 1024));
    big.extend(br#""}}}"#);
    s.send(&big);
    let m = s.answer();
    assert_eq!(m["id"], 2, "{m}");
    let text = m["error"]["message"].as_str().unwrap();
    assert!(text.contains("over the limit of 16777216 bytes"), "{m}");

    let e = error_result(&s.call(3, "codex", json!({"prompt": 42})));
    assert!(e.contains("`prompt` must be a string"), "{e}");
    let missing = repo.path().join("no/such/folder");
    let e = error_result(&s.call(4, "codex", json!({"prompt": "hi", "cwd": missing})));
    assert!(e.contains("no/such/folder"), "{e}");
    let e = error_result(&s.call(
        5,
        "codex-reply",
        json!({"threadId": "0190ffff-0000-7000-8000-000000000000", "prompt": "hi"}),
    ));
    assert!(e.contains("no such thread"), "{e}");
    let m = s.call(6, "rm -rf", json!({}));
    assert_eq!(m["error"]["code"], -32602, "{m}");

    // Still serving: a real thread.
    let m = s.call(7, "codex", json!({"prompt": "finish it"}));
    assert_ne!(m["result"]["isError"], true, "{m}");
    let thread = m["result"]["structuredContent"]["threadId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        m["result"]["structuredContent"]["content"], "all done",
        "{m}"
    );
    assert_eq!(m["result"]["content"][0]["text"], "all done", "{m}");
    let events: Vec<&Value> = s
        .notes
        .iter()
        .filter(|n| n["method"] == "codex/event")
        .collect();
    assert!(
        events
            .iter()
            .all(|n| n["params"]["_meta"]["threadId"] == thread.as_str()
                && n["params"]["_meta"]["requestId"] == 7),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|n| n["params"]["msg"]["type"] == "turn_ended"),
        "{events:?}"
    );

    drop(s.stdin);
    let out = mock_llm::e2e::wait_with_timeout(s.child, Duration::from_secs(30));
    assert!(out.status.success(), "{:?}", out.status);
    assert!(
        repo.home
            .path()
            .join("sessions")
            .join(format!("{thread}.jsonl"))
            .is_file(),
        "the thread is a stored session"
    );
}
