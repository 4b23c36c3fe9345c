//! A raw NDJSON ACP client for the hostile-command tests (as in e2e/mcp.rs): it controls the
//! agent's stdin and lifetime, records updates and answers permission requests.

use mock_llm::MockServer;
use mock_llm::e2e::{TestRepo, interpreter_bin};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(60);

/// `interpreter acp` with a reader thread on its stdout.
pub struct Agent {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: u64,
    /// Every `session/update` params seen so far.
    updates: Vec<Value>,
    /// Every `session/request_permission` params seen so far, answered with `answer`.
    pub permissions: Vec<Value>,
    /// The option id permission requests are answered with (`allow_once`, `reject_once`).
    pub answer: &'static str,
    stderr: Arc<Mutex<String>>,
}

impl Agent {
    pub fn start(
        repo: &TestRepo,
        mock: &MockServer,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Agent {
        let mut args = vec!["acp".to_string()];
        args.extend(TestRepo::mock_config(&mock.url(), "chat"));
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut cmd = Command::new(interpreter_bin());
        cmd.envs(env.iter().copied());
        let mut child = cmd
            .args(&args)
            .current_dir(repo.path())
            .env("OPENINTERPRETER_HOME", repo.home.path())
            .env("INTERPRETER_LOG", "info")
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("OPENINTERPRETER_MODEL")
            .env_remove("OPENINTERPRETER_PROVIDER")
            .env_remove("OPENINTERPRETER_HARNESS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn interpreter acp");
        let stdout = child.stdout.take().expect("stdout");
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
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().expect("stderr");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Agent {
            stdin: child.stdin.take(),
            child,
            rx,
            next_id: 1,
            updates: Vec::new(),
            permissions: Vec::new(),
            answer: "reject_once",
            stderr,
        }
    }

    pub fn send(&mut self, msg: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{msg}").expect("write to the agent");
        stdin.flush().expect("flush");
    }

    /// Sends a request and waits for its response; answers permission requests and records
    /// notifications meanwhile. Ok(result) or Err(error object).
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + WAIT;
        loop {
            let msg = self.next_message(deadline);
            if msg.get("method").is_none() && msg["id"] == json!(id) {
                return match msg.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(msg["result"].clone()),
                };
            }
        }
    }

    pub fn next_message(&mut self, deadline: Instant) -> Value {
        self.next_message_or(deadline, "a response")
    }

    pub fn next_message_or(&mut self, deadline: Instant, what: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        let msg = match self.rx.recv_timeout(left) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("no {what} in time\n{}", self.log()),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the agent closed stdout\n{}", self.log())
            }
        };
        match msg.get("method").and_then(Value::as_str) {
            Some("session/update") => self.updates.push(msg["params"].clone()),
            Some("session/request_permission") => {
                self.permissions.push(msg["params"].clone());
                let id = msg["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "result":
                    {"outcome": {"outcome": "selected", "optionId": self.answer}}}));
            }
            Some(other) if msg.get("id").is_some() => {
                let id = msg["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "error":
                    {"code": -32601, "message": format!("{other} is not supported by this test")}}));
            }
            _ => {}
        }
        msg
    }

    /// Handles whatever arrives within `d` (answering permission requests), without waiting
    /// for anything in particular.
    pub fn pump(&mut self, d: Duration) {
        let deadline = Instant::now() + d;
        while let Ok(msg) = self
            .rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if msg.get("method").and_then(Value::as_str) == Some("session/request_permission") {
                self.permissions.push(msg["params"].clone());
                let id = msg["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "result":
                    {"outcome": {"outcome": "selected", "optionId": self.answer}}}));
            }
        }
    }

    pub fn log(&self) -> String {
        format!("agent stderr:\n{}", self.stderr.lock().unwrap())
    }

    /// Every `session/update` params seen so far (the trust tests read them).
    #[allow(dead_code)]
    pub fn updates(&self) -> &[Value] {
        &self.updates
    }

    pub fn initialize(&mut self) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .unwrap_or_else(|e| panic!("initialize failed: {e}"))
    }

    pub fn new_session(&mut self, cwd: &Path, mcp_servers: Value) -> String {
        let r = self
            .request(
                "session/new",
                json!({"cwd": cwd, "mcpServers": mcp_servers}),
            )
            .unwrap_or_else(|e| panic!("session/new failed: {e}\n{}", self.log()));
        r["sessionId"].as_str().expect("sessionId").to_string()
    }

    pub fn prompt(&mut self, session: &str, text: &str) -> Value {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
        .unwrap_or_else(|e| panic!("session/prompt failed: {e}\n{}", self.log()))
    }

    /// Closes stdin (the client went away) and waits for the agent to exit.
    pub fn exit(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    assert!(
                        status.success(),
                        "agent exited with {status}\n{}",
                        self.log()
                    );
                    return;
                }
                Ok(None) if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    panic!("the agent did not exit after stdin closed\n{}", self.log());
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => panic!("waiting for the agent: {e}"),
            }
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
