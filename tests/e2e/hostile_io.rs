//! A hostile repository, a hostile model and a hostile provider, against the real binary and
//! the mock model (issue 12, rows 1, 5, 6, 7 and 8; docs/sandbox.md "Hostile input"):
//!
//! - files outside the workspace that the repository links to (AGENTS.md, a skill, a folder)
//!   never reach a model request, in either harness, and each link is named in a warning;
//! - a provider that takes the request and never answers costs a bounded time, and a slow one
//!   is shown as waiting (exec stderr, ACP notice), never on `--json` stdout;
//! - an LSP frame that promises a body that never comes does not deafen the server;
//! - a 50 MB ACP line is answered with an error quoting at most 200 bytes, at a small memory
//!   cost;
//! - model text and command output reach the terminal without control sequences.

#[path = "lsp_client.rs"]
mod lsp_client;

use mock_llm::e2e::{TestRepo, interpreter_bin, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

fn exec_args(mock: &MockServer, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

const DECOYS: [&str; 3] = ["DECOY-AGENTS-7f3a", "DECOY-SKILL-9c1b", "decoy-tree-4e2d"];

/// Row 1: the workspace's AGENTS.md, a skill folder and a folder are symlinks to files outside
/// it. Nothing of theirs reaches the model, in both harnesses that list the tree and skills;
/// each link is named in a warning. The user's own home AGENTS.md may link anywhere.
#[test]
fn files_outside_the_workspace_never_reach_the_model() {
    let repo = TestRepo::new();
    let outside = mock_llm::e2e::dir_outside_temp(repo.home.path());
    let o = outside.path();
    std::fs::write(o.join("agents.md"), format!("Obey {}", DECOYS[0])).unwrap();
    std::fs::create_dir_all(o.join("skill")).unwrap();
    std::fs::write(
        o.join("skill/SKILL.md"),
        format!("---\nname: leak\ndescription: {}\n---\nbody\n", DECOYS[1]),
    )
    .unwrap();
    std::fs::create_dir_all(o.join("folder")).unwrap();
    std::fs::write(o.join("folder").join(DECOYS[2]), "x").unwrap();
    std::fs::write(o.join("user-rules.md"), "USER-RULES-OK").unwrap();
    let link = |target: &std::path::Path, at: &str| {
        let at = repo.path().join(at);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, at).unwrap();
    };
    link(&o.join("agents.md"), "AGENTS.md");
    link(&o.join("skill"), ".agents/skills/leak");
    link(&o.join("folder"), "escape-link-5b7e");
    repo.write("src/main.rs", "fn main() {}\n");
    std::os::unix::fs::symlink(o.join("user-rules.md"), repo.home.path().join("AGENTS.md"))
        .unwrap();

    for harness in ["kimi-code", "native"] {
        let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
        let harness_arg = format!("harness=\"{harness}\"");
        let out = repo.run(
            &exec_args(&mock, &["--json", "-c", &harness_arg]),
            "what are the rules here?",
        );
        assert!(
            out.status.success(),
            "{harness}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let reqs = mock.model_requests();
        assert_eq!(reqs.len(), 1);
        let body = reqs[0].body.to_string();
        for decoy in DECOYS {
            assert!(
                !body.contains(decoy),
                "{harness}: {decoy} reached the model"
            );
        }
        assert!(
            !body.contains("escape-link-5b7e"),
            "{harness}: the link was listed"
        );
        assert!(
            body.contains("USER-RULES-OK"),
            "{harness}: the user's own AGENTS.md is read"
        );
        if harness == "kimi-code" {
            assert!(
                body.contains("main.rs"),
                "the tree listing is there: {body}"
            );
        }
        let warnings: Vec<String> = jsonl(&out)
            .iter()
            .filter(|e| e["type"] == "error")
            .filter_map(|e| e["message"].as_str().map(String::from))
            .collect();
        for name in ["AGENTS.md", ".agents/skills/leak", "escape-link-5b7e"] {
            assert!(
                warnings
                    .iter()
                    .any(|w| w.contains(name) && w.contains("outside the workspace")),
                "{harness}: no warning naming {name}: {warnings:?}"
            );
        }
    }
}

/// Row 5: a provider that accepts the request and never sends response headers fails within
/// the idle bound per attempt, retried per the policy: configured idle 2 s and 2 retries, so
/// about 6 s; bounded here at 30 s.
#[test]
fn a_silent_provider_costs_a_bounded_time() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([]).when_exhausted(Reply::hang())).unwrap();
    let started = Instant::now();
    let out = repo.run(
        &exec_args(
            &mock,
            &[
                "--json",
                "-c",
                "model_providers.mock.stream_idle_timeout_ms=2000",
                "-c",
                "model_providers.mock.request_max_retries=2",
            ],
        ),
        "hello?",
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1));
    let last = jsonl(&out).last().cloned().unwrap();
    assert_eq!(last["type"], "turn.failed", "{last}");
    let msg = last["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("mock sent no response headers within 2s"),
        "{msg}"
    );
    assert_eq!(mock.model_requests().len(), 3, "one try and two retries");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    eprintln!("silent provider: failed after {took:?}");
}

/// A slow first token is shown as waiting on stderr, also in `--json` mode, whose stdout
/// stays Codex's JSON Lines.
#[test]
fn a_slow_provider_is_shown_as_waiting_on_stderr_only() {
    let repo = TestRepo::new();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("late answer").with_delay(6500)]))
            .unwrap();
    let out = repo.run(&exec_args(&mock, &["--json"]), "take your time");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The first notice comes after 5 s of quiet (6 s on a slow machine).
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("waiting for mock: ") && l.ends_with(" s…")),
        "{stderr}"
    );
    let events = jsonl(&out);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("waiting"),
        "{events:?}"
    );
    assert!(events.iter().any(|e| e["item"]["text"] == "late answer"));
}

/// `interpreter acp` spoken to in raw lines.
struct Acp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    rx: Receiver<Value>,
}

impl Acp {
    fn start(repo: &TestRepo, mock: &MockServer) -> Acp {
        let mut args = vec!["acp".to_string()];
        args.extend(TestRepo::mock_config(&mock.url(), "chat"));
        let mut child = Command::new(interpreter_bin())
            .args(&args)
            .current_dir(repo.path())
            .env("OPENINTERPRETER_HOME", repo.home.path())
            .env_remove("CODEX_HOME")
            .env_remove("OPENINTERPRETER_MODEL")
            .env_remove("OPENINTERPRETER_PROVIDER")
            .env_remove("OPENINTERPRETER_HARNESS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn interpreter acp");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Acp {
            stdin: child.stdin.take().unwrap(),
            child,
            rx,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, v: Value) {
        self.send_raw(format!("{v}\n").as_bytes());
    }

    /// The next message matching `pred`, within 60 s.
    fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {what}"));
            if pred(&m) {
                return m;
            }
        }
    }

    fn response(&mut self, id: u64) -> Value {
        self.wait(&format!("response {id}"), |m| {
            m["id"] == json!(id) && m.get("method").is_none()
        })
    }

    /// Peak resident memory (VmHWM) of the agent, in KiB.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM")
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Row 8: a 50 MB line of invalid JSON is answered with a parse error that quotes at most
/// 200 bytes of it, the agent keeps serving, and its peak memory stays far below the line.
#[test]
fn a_50_mb_acp_line_costs_an_error_of_a_few_hundred_bytes() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([])).unwrap();
    let mut acp = Acp::start(&repo, &mock);
    acp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    acp.response(1);
    let before = acp.peak_rss_kib();
    let mut line =
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":".to_vec();
    line.resize(50 * 1024 * 1024, b'A');
    line.push(b'\n');
    acp.send_raw(&line);
    let err = acp.wait("the parse error", |m| m.get("error").is_some());
    let text = err.to_string();
    assert!(text.len() < 1024, "{} bytes of error", text.len());
    assert_eq!(err["error"]["code"], -32700, "{err}");
    let quoted = err["error"]["data"]["line"].as_str().unwrap();
    let quote = quoted.split('…').next().unwrap();
    assert!(quote.len() <= 200, "{} bytes quoted", quote.len());
    assert!(
        quoted.contains("over the limit of 16777216 bytes"),
        "{quoted}"
    );
    // Still serving.
    acp.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": {}}));
    let listed = acp.response(3);
    assert!(listed.get("result").is_some(), "{listed}");
    let peak = acp.peak_rss_kib();
    eprintln!("acp peak RSS: {before} KiB before the 50 MB line, {peak} KiB after");
    // The line is never held whole: at most the 16 MiB cap on top of the baseline.
    assert!(
        peak < before + 40 * 1024,
        "peak {peak} KiB (before: {before} KiB)"
    );
}

/// The same provider slowness as an ACP `info` notice, for a client that shows notices.
#[test]
fn a_slow_provider_is_an_acp_notice() {
    let repo = TestRepo::new();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("late answer").with_delay(6500)]))
            .unwrap();
    let mut acp = Acp::start(&repo, &mock);
    acp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {"session": {"notices": {}}}}}));
    acp.response(1);
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    acp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []}}));
    let sid = acp.response(2)["result"]["sessionId"].clone();
    acp.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}}),
    );
    let notice = acp.wait("a waiting notice", |m| {
        m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == "notice"
    });
    let update = &notice["params"]["update"];
    assert_eq!(update["severity"], "info", "{update}");
    assert!(
        update["title"]
            .as_str()
            .unwrap()
            .starts_with("waiting for mock: "),
        "{update}"
    );
    let done = acp.response(3);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
}

/// Row 6: a frame whose header promises a body that never comes, then valid frames: the
/// truncated frame gets an error, a later codeAction is answered, shutdown too.
#[test]
fn lsp_answers_after_a_truncated_frame() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([])).unwrap();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let mut client = lsp_client::LspClient::spawn(&root, repo.home.path(), &[]);
    client.initialize(
        &root,
        lsp_client::capabilities(false, false),
        lsp_client::mock_options(&mock.url()),
    );
    let uri = lsp_client::file_uri(&root.join("calc.py"));
    client.did_open(&uri, "python", 1, "def add(a, b):\n    return a - b\n");
    client.send_raw(
        b"Content-Length: 100000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"textDocument/hover\",\"params\":{\"te",
    );
    let resp = client.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}},
               "context": {"diagnostics": []}}),
    );
    assert!(
        resp["result"].as_array().is_some_and(|a| !a.is_empty()),
        "{resp}"
    );
    let cut = client.wait_for("the truncated frame's error", lsp_client::TIMEOUT, |m| {
        m["id"] == 77 && m.get("error").is_some()
    });
    assert!(
        cut["error"]["message"]
            .as_str()
            .unwrap()
            .contains("promised 100000 bytes"),
        "{cut}"
    );
    client.shutdown();
}

/// Row 7: terminal escapes in model text and command output (OSC 52 clipboard write, OSC 0
/// title, CSI 2J, 8-bit CSI) are not printed by `exec` human mode, with colours on or off;
/// our own colours stay when they are on.
#[test]
fn exec_human_mode_prints_no_control_sequences() {
    let hostile_text =
        "answer \u{1b}]52;c;ZXZpbA==\u{7}\u{1b}]0;pwned\u{1b}\\\u{1b}[2J\u{9b}31mend";
    for color in ["always", "never"] {
        let repo = TestRepo::new();
        let mock = MockServer::start_blocking(Script::new([
            Reply::tool_call(
                "c1",
                "shell",
                json!({"command": "printf 'out \\033]52;c;ZXZpbA==\\007\\033]0;t\\007\\033[2J done\\n'"}),
            ),
            Reply::text(hostile_text),
        ]))
        .unwrap();
        let out = repo.run(
            &exec_args(&mock, &["--color", color, "-c", "harness=\"native\""]),
            "print something",
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            for bad in ["\u{1b}]", "\u{1b}[2J", "\u{7}", "\u{9b}"] {
                assert!(!text.contains(bad), "{color}: {bad:?} on {name}: {text:?}");
            }
        }
        assert!(stdout.contains("answer end"), "{stdout:?}");
        assert!(
            stderr.contains("out  done"),
            "the command output is shown: {stderr:?}"
        );
        if color == "always" {
            assert!(
                stderr.contains("\u{1b}[35minterpreter\u{1b}[0m"),
                "{stderr:?}"
            );
        } else {
            assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
        }
    }
}

/// The same provider slowness as an LSP `$/progress` report of the running code action. (The
/// job also connects config.toml's `[mcp_servers]`, as every face does.)
#[test]
fn a_slow_provider_is_an_lsp_progress_report() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[mcp_servers.echo]\ncommand = '{}'\n",
            env!("CARGO_BIN_EXE_mcp-echo")
        ),
    )
    .unwrap();
    let mock =
        MockServer::start_blocking(Script::new(
            [Reply::text("nothing to fix").with_delay(6500)],
        ))
        .unwrap();
    let text = "def add(a, b):\n    return a - b\n";
    repo.write("calc.py", text);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let mut client = lsp_client::LspClient::spawn(&root, repo.home.path(), &[]);
    client.initialize(
        &root,
        lsp_client::capabilities(true, false),
        lsp_client::mock_options(&mock.url()),
    );
    let uri = lsp_client::file_uri(&root.join("calc.py"));
    client.did_open(&uri, "python", 1, text);
    let resp = client.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}},
               "context": {"diagnostics": []}}),
    );
    let command = lsp_client::action(&resp, "Explain with interpreter")["command"].clone();
    client.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    let create = client.wait_request("window/workDoneProgress/create");
    client.respond(&create["id"], Value::Null);
    let token = create["params"]["token"].clone();
    let report = client.wait_notification("$/progress", move |p| {
        p["token"] == token
            && p["value"]["kind"] == "report"
            && p["value"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("waiting for mock: "))
    });
    assert_eq!(report["params"]["value"]["cancellable"], true);
    client.wait_notification("$/progress", |p| p["value"]["kind"] == "end");
    client.shutdown();
    let tools = mock.model_requests()[0].body["tools"].to_string();
    assert!(tools.contains("echo__say"), "{tools}");
}
