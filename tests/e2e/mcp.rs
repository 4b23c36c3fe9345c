//! MCP servers from ACP `session/new`: the real `interpreter acp` binary, spoken to in raw
//! NDJSON (so the tests control its stdin and lifetime), the mock model, and the `mcp-echo`
//! fixture as stdio and streamable HTTP server.

use mock_llm::e2e::{TestRepo, interpreter_bin};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ECHO: &str = env!("CARGO_BIN_EXE_mcp-echo");
const WAIT: Duration = Duration::from_secs(60);

/// `interpreter acp` with a reader thread on its stdout.
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: u64,
    /// Every `session/update` params seen so far.
    updates: Vec<Value>,
    /// Every `session/request_permission` params seen so far (all answered `allow_once`).
    permissions: Vec<Value>,
    stderr: Arc<Mutex<String>>,
}

impl Agent {
    fn start(repo: &TestRepo, mock: &MockServer, mode: &str) -> Agent {
        let mut args = vec!["acp".to_string()];
        args.extend(TestRepo::mock_config(&mock.url(), "chat"));
        args.extend(["-c".to_string(), format!("sandbox_mode=\"{mode}\"")]);
        let mut child = Command::new(interpreter_bin())
            .args(&args)
            .current_dir(repo.path())
            .env("OPENINTERPRETER_HOME", repo.home.path())
            .env("INTERPRETER_LOG", "info")
            .env_remove("CODEX_HOME")
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
            stderr,
        }
    }

    fn send(&mut self, msg: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{msg}").expect("write to the agent");
        stdin.flush().expect("flush");
    }

    /// Sends a request and waits for its response; answers permission requests and records
    /// notifications meanwhile. Ok(result) or Err(error object).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
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

    /// Handles messages until `pred` holds for a recorded update.
    fn wait_for_update(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(u) = self.updates.iter().find(|u| pred(u)) {
                return u.clone();
            }
            let _ = self.next_message_or(deadline, what);
        }
    }

    fn next_message(&mut self, deadline: Instant) -> Value {
        self.next_message_or(deadline, "a response")
    }

    fn next_message_or(&mut self, deadline: Instant, what: &str) -> Value {
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
                    {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}));
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

    fn log(&self) -> String {
        format!("agent stderr:\n{}", self.stderr.lock().unwrap())
    }

    fn initialize(&mut self) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .unwrap_or_else(|e| panic!("initialize failed: {e}"))
    }

    fn new_session(&mut self, cwd: &Path, mcp_servers: Value) -> String {
        let r = self
            .request(
                "session/new",
                json!({"cwd": cwd, "mcpServers": mcp_servers}),
            )
            .unwrap_or_else(|e| panic!("session/new failed: {e}\n{}", self.log()));
        r["sessionId"].as_str().expect("sessionId").to_string()
    }

    fn prompt(&mut self, session: &str, text: &str) -> Value {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
        .unwrap_or_else(|e| panic!("session/prompt failed: {e}\n{}", self.log()))
    }

    /// All agent message text sent for `session`.
    fn agent_text(&self, session: &str) -> String {
        self.updates
            .iter()
            .filter(|u| u["sessionId"] == session)
            .filter(|u| u["update"]["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["update"]["content"]["text"].as_str())
            .collect()
    }

    /// The `tool_call` and `tool_call_update`s of one call, in order.
    fn call_updates(&self, call_id: &str) -> Vec<Value> {
        self.updates
            .iter()
            .map(|u| u["update"].clone())
            .filter(|u| u["toolCallId"] == call_id)
            .collect()
    }

    /// Closes stdin (the client went away) and waits for the agent to exit.
    fn exit(mut self) {
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

fn stdio_server(name: &str, args: &[String], env: &[(&str, &str)]) -> Value {
    json!({
        "name": name,
        "command": ECHO,
        "args": args,
        "env": env.iter().map(|(k, v)| json!({"name": k, "value": v})).collect::<Vec<_>>(),
    })
}

fn read_pid(path: &Path) -> u32 {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Running, and not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(
            stat.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next()),
            Some("Z" | "X")
        ),
        Err(_) => false,
    }
}

fn assert_gone(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        if Instant::now() > deadline {
            // Do not leave it behind for the next test run.
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{what} (pid {pid}) is still running");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn tool_names(request_body: &Value) -> Vec<String> {
    request_body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).expect("canonicalize")
}

#[test]
fn stdio_server_tools_are_listed_called_and_shown_and_a_broken_server_only_warns() {
    let repo = TestRepo::new();
    let pid_file = repo.home.path().join("echo.pid");
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "echo__say", json!({"text": "hi"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let mut agent = Agent::start(&repo, &mock, "workspace-write");
    let init = agent.initialize();
    assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["http"], true);
    let servers = json!([
        stdio_server(
            "echo",
            &["--pid-file".into(), pid_file.display().to_string()],
            &[("MCP_ECHO_PREFIX", "echo: ")],
        ),
        {"name": "broken", "command": "/nonexistent/mcp-server", "args": [], "env": []},
    ]);
    let sid = agent.new_session(&canonical(repo.path()), servers);
    let echo_pid = read_pid(&pid_file);
    let resp = agent.prompt(&sid, "say hi through the echo server");
    assert_eq!(resp["stopReason"], "end_turn", "{}", agent.log());

    // The failed server is reported where the user sees it, and nothing else failed.
    let text = agent.agent_text(&sid);
    assert!(
        text.contains("MCP server `broken` failed to start")
            && text.contains("/nonexistent/mcp-server"),
        "no visible warning in {text:?}"
    );
    assert!(text.contains("done"));

    // The model saw the MCP tools after the harness's own, with object schemas.
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 2);
    let names = tool_names(&reqs[0].body);
    let first_mcp = names.iter().position(|n| n.starts_with("echo__")).unwrap();
    assert!(first_mcp > 0, "harness tools come first: {names:?}");
    assert_eq!(
        &names[first_mcp..],
        ["echo__say", "echo__fail", "echo__sleep"],
        "{names:?}"
    );
    let fail = &reqs[0].body["tools"][first_mcp + 1]["function"];
    assert_eq!(fail["parameters"]["type"], "object");
    assert_eq!(fail["description"], "Always fails.");
    assert!(!names.iter().any(|n| n.starts_with("broken")));

    // `auto` asks before an MCP tool runs, naming the server and tool.
    assert_eq!(agent.permissions.len(), 1, "{:?}", agent.permissions);
    let asked = &agent.permissions[0]["toolCall"];
    assert_eq!(asked["toolCallId"], "c1");
    assert_eq!(asked["rawInput"]["command"], "mcp echo.say");

    // The call shows as a tool call: pending → in progress → completed with the output.
    let call = agent.call_updates("c1");
    assert_eq!(call[0]["sessionUpdate"], "tool_call");
    // `other` is ACP's default kind, left out on the wire.
    assert!(
        matches!(call[0]["kind"].as_str(), None | Some("other")),
        "{:?}",
        call[0]
    );
    assert_eq!(call[0]["title"], "echo: say");
    assert_eq!(call[0]["rawInput"], json!({"text": "hi"}));
    let last = call.last().unwrap();
    assert_eq!(last["status"], "completed", "{call:?}");
    assert_eq!(last["content"][0]["content"]["text"], "echo: hi");

    // The result reached the model, paired with its call.
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let tool_msg = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool message");
    assert_eq!(tool_msg["tool_call_id"], "c1");
    assert_eq!(tool_msg["content"], "echo: hi");

    // Closing the session stops its server.
    assert!(alive(echo_pid));
    agent
        .request("session/close", json!({"sessionId": sid}))
        .unwrap();
    assert_gone(echo_pid, "the MCP server of a closed session");
    agent.exit();
}

#[test]
fn a_session_whose_only_server_fails_still_answers() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("hello")])).unwrap();
    let mut agent = Agent::start(&repo, &mock, "workspace-write");
    agent.initialize();
    // Starts, but is not an MCP server: the handshake fails and its stderr is quoted.
    let servers = json!([
        {"name": "not-mcp", "command": "/bin/sh", "args": ["-c", "echo 'no such tool here' >&2; exit 3"], "env": []},
    ]);
    let sid = agent.new_session(&canonical(repo.path()), servers);
    let resp = agent.prompt(&sid, "hi");
    assert_eq!(resp["stopReason"], "end_turn");
    let text = agent.agent_text(&sid);
    assert!(
        text.contains("MCP server `not-mcp` failed to start") && text.contains("no such tool here"),
        "{text:?}"
    );
    assert!(text.ends_with("hello"), "{text:?}");
    let names = tool_names(&mock.model_requests()[0].body);
    assert!(!names.iter().any(|n| n.contains("__")), "{names:?}");
    agent.exit();
}

/// Issue 41 in ACP: a config.toml server naming an unset token variable is left out with a
/// warning the user sees, and the session answers.
#[test]
fn acp_an_unset_bearer_variable_leaves_only_that_server_out() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[mcp_servers.github]\nurl = 'https://api.githubcopilot.com/mcp/'\nbearer_token_env_var = 'INTERPRETER_TEST_UNSET_TOKEN'\n\n[mcp_servers.echo]\ncommand = '{ECHO}'\n"
        ),
    )
    .unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("hello")])).unwrap();
    let mut agent = Agent::start(&repo, &mock, "workspace-write");
    agent.initialize();
    let sid = agent.new_session(&canonical(repo.path()), json!([]));
    let resp = agent.prompt(&sid, "hi");
    assert_eq!(resp["stopReason"], "end_turn");
    let text = agent.agent_text(&sid);
    assert!(
        text.contains("MCP server `github` was left out")
            && text.contains("INTERPRETER_TEST_UNSET_TOKEN"),
        "{text:?}"
    );
    let names = tool_names(&mock.model_requests()[0].body);
    assert!(names.contains(&"echo__say".to_string()), "{names:?}");
    agent.exit();
}

#[test]
fn http_server_tools_run_without_asking_in_full_access() {
    let repo = TestRepo::new();
    let mut server = Command::new(ECHO)
        .arg("--http")
        .env("MCP_ECHO_PREFIX", "web: ")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn mcp-echo --http");
    let mut url = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");

    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "web__say", json!({"text": "over http"})),
        Reply::tool_call("c2", "web__fail", json!({})),
        Reply::text("done"),
    ]))
    .unwrap();
    let mut agent = Agent::start(&repo, &mock, "danger-full-access");
    agent.initialize();
    let servers = json!([{"type": "http", "name": "web", "url": url,
        "headers": [{"name": "X-Test", "value": "1"}]}]);
    let sid = agent.new_session(&canonical(repo.path()), servers);
    let resp = agent.prompt(&sid, "call the web server");
    assert_eq!(resp["stopReason"], "end_turn", "{}", agent.log());
    assert!(agent.permissions.is_empty(), "{:?}", agent.permissions);

    let say = agent.call_updates("c1");
    let last = say.last().unwrap();
    assert_eq!(last["status"], "completed", "{say:?}");
    assert_eq!(last["content"][0]["content"]["text"], "web: over http");
    // An `isError` result is a failed call, and the model hears it.
    let fail = agent.call_updates("c2");
    assert_eq!(fail.last().unwrap()["status"], "failed", "{fail:?}");
    let reqs = mock.model_requests();
    let msgs = reqs[2].body["messages"].as_array().unwrap();
    let results: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results[0]["content"], "web: over http");
    assert_eq!(results[1]["content"], "it failed");
    agent.exit();
    drop(server.stdin.take());
    let _ = server.wait();
}

#[test]
fn a_cancelled_mcp_call_returns_promptly() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::tool_call(
        "c1",
        "echo__sleep",
        json!({"seconds": 60}),
    )]))
    .unwrap();
    let mut agent = Agent::start(&repo, &mock, "danger-full-access");
    agent.initialize();
    let sid = agent.new_session(
        &canonical(repo.path()),
        json!([stdio_server("echo", &[], &[])]),
    );
    let id = agent.next_id;
    agent.next_id += 1;
    agent.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "sleep"}]}}),
    );
    agent.wait_for_update("the sleep call to start", |u| {
        u["update"]["toolCallId"] == "c1" && u["update"]["status"] == "in_progress"
    });
    let started = Instant::now();
    agent.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}));
    let deadline = Instant::now() + WAIT;
    let resp = loop {
        let msg = agent.next_message(deadline);
        if msg.get("method").is_none() && msg["id"] == json!(id) {
            break msg;
        }
    };
    assert_eq!(resp["result"]["stopReason"], "cancelled", "{resp}");
    assert!(started.elapsed() < Duration::from_secs(10));
    agent.exit();
}

/// `mcp-echo` args for a server that ignores stdin EOF and has a child of its own.
fn stubborn_server(home: &Path, tag: &str) -> (Vec<String>, PathBuf, PathBuf) {
    let pid_file = home.join(format!("{tag}.pid"));
    let child_pid_file = home.join(format!("{tag}-child.pid"));
    let args = vec![
        "--pid-file".to_string(),
        pid_file.display().to_string(),
        "--child-pid-file".to_string(),
        child_pid_file.display().to_string(),
        "--linger".to_string(),
    ];
    (args, pid_file, child_pid_file)
}

#[test]
fn closing_the_session_or_exiting_the_agent_leaves_no_server_process_behind() {
    let repo = TestRepo::new();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("ok"), Reply::text("ok")])).unwrap();
    let mut agent = Agent::start(&repo, &mock, "workspace-write");
    agent.initialize();
    let cwd = canonical(repo.path());

    let (args, pid_file, child_pid_file) = stubborn_server(repo.home.path(), "closed");
    let sid = agent.new_session(&cwd, json!([stdio_server("echo", &args, &[])]));
    // The prompt waits for the connection, so the server is up afterwards.
    assert_eq!(agent.prompt(&sid, "hi")["stopReason"], "end_turn");
    let (pid, child) = (read_pid(&pid_file), read_pid(&child_pid_file));
    assert!(alive(pid) && alive(child));
    agent
        .request("session/close", json!({"sessionId": sid}))
        .unwrap();
    assert_gone(pid, "the MCP server of a closed session");
    assert_gone(child, "the child of the MCP server of a closed session");

    let (args, pid_file, child_pid_file) = stubborn_server(repo.home.path(), "exited");
    let sid = agent.new_session(&cwd, json!([stdio_server("echo", &args, &[])]));
    assert_eq!(agent.prompt(&sid, "hi")["stopReason"], "end_turn");
    let (pid, child) = (read_pid(&pid_file), read_pid(&child_pid_file));
    assert!(alive(pid) && alive(child));
    agent.exit();
    assert_gone(pid, "the MCP server");
    assert_gone(child, "the MCP server's child");
}

/// The parameters schema the model was given for `name`, if it was given that tool.
fn tool_parameters(request_body: &Value, name: &str) -> Option<Value> {
    request_body["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == name)
        .map(|t| t["function"]["parameters"].clone())
}

fn exec_args(mock: &MockServer, model: &str) -> Vec<String> {
    let mut args = vec!["exec".to_string(), "--json".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(["-c".to_string(), format!("model=\"{model}\"")]);
    args
}

/// `[mcp_servers]` in config.toml is connected by `exec` (Codex's keys), and a Kimi model gets
/// every tool schema in the dialect Moonshot accepts; a tool no rewrite can fix is left out
/// with a warning, and the session runs.
#[test]
fn config_toml_servers_run_in_exec_and_kimi_gets_schemas_it_accepts() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[mcp_servers.7zip]\ncommand = '{ECHO}'\nargs = ['--schema-shapes']\nenv = {{ MCP_ECHO_PREFIX = 'cfg: ' }}\nstartup_timeout_sec = 20\n"
        ),
    )
    .unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "t7zip__say", json!({"text": "hi"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let out = repo.run(&exec_args(&mock, "kimi-k3"), "use the tools");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let events = mock_llm::e2e::jsonl(&out);
    assert!(
        events.iter().any(|e| e["type"] == "error"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("shape_remote"))),
        "no warning for the tool left out: {events:?}"
    );
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 2);
    let body = &reqs[0].body;
    let p = |name: &str| {
        tool_parameters(body, name)
            .unwrap_or_else(|| panic!("{name} missing: {:?}", tool_names(body)))
    };
    assert_eq!(
        p("t7zip__shape_anyof")["properties"]["v"],
        json!({"anyOf": [{"minLength": 1, "type": "string"}, {"maxLength": 0, "type": "string"}]})
    );
    assert_eq!(
        p("t7zip__shape_tuple")["properties"],
        json!({"pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
               "nothing": {"type": "array"}})
    );
    let b = p("t7zip__shape_bool");
    assert_eq!(b["properties"], json!({"any": {}}));
    assert_eq!(b["required"], json!(["any"]));
    assert_eq!(
        p("t7zip__shape_ref_sibling")["properties"]["day"],
        json!({"type": "string", "format": "date", "description": "The day"})
    );
    let d = p("t7zip__shape_definitions");
    assert_eq!(d["properties"]["a"], json!({"$ref": "#/$defs/A"}));
    assert_eq!(
        d["$defs"]["A"]["properties"]["n"],
        json!({"type": "integer"})
    );
    assert!(d.get("definitions").is_none(), "{d}");
    assert_eq!(p("t7zip__shape_no_type")["type"], "object");
    let names = tool_names(body);
    assert!(
        tool_parameters(body, "t7zip__shape_remote").is_none(),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with(|c: char| c.is_ascii_digit())),
        "{names:?}"
    );
    // The server's tools work: the call's result reached the model.
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let result = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool result");
    assert_eq!(result["content"], "cfg: hi");

    // Another provider's model gets the schemas as the server gave them.
    mock.set_script(Script::new([Reply::text("plain")]));
    mock.clear_requests();
    let out = repo.run(&exec_args(&mock, "mock-model"), "list");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = &mock.model_requests()[0].body;
    let tuple = tool_parameters(body, "7zip__shape_tuple").expect("unchanged name");
    assert!(tuple["properties"]["pair"]["items"].is_array(), "{tuple}");
    assert!(tool_parameters(body, "7zip__shape_remote").is_some());
}

/// ACP: config.toml's servers join the client's `mcpServers`; on a name clash the client's
/// server is the one that runs.
#[test]
fn acp_client_servers_join_config_servers_and_win_a_name_clash() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[mcp_servers.echo]\ncommand = '{ECHO}'\nenv = {{ MCP_ECHO_PREFIX = 'config: ' }}\n\n[mcp_servers.cfgonly]\ncommand = '{ECHO}'\n"
        ),
    )
    .unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "echo__say", json!({"text": "hi"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let mut agent = Agent::start(&repo, &mock, "danger-full-access");
    agent.initialize();
    let sid = agent.new_session(
        &canonical(repo.path()),
        json!([stdio_server(
            "echo",
            &[],
            &[("MCP_ECHO_PREFIX", "client: ")]
        )]),
    );
    let resp = agent.prompt(&sid, "say hi");
    assert_eq!(resp["stopReason"], "end_turn", "{}", agent.log());
    let reqs = mock.model_requests();
    let names = tool_names(&reqs[0].body);
    assert!(names.contains(&"cfgonly__say".to_string()), "{names:?}");
    assert_eq!(
        names.iter().filter(|n| *n == "echo__say").count(),
        1,
        "{names:?}"
    );
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let result = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool result");
    assert_eq!(result["content"], "client: hi");
    agent.exit();
}

/// `tool_timeout_sec` bounds one call: the model hears that the server did not finish.
#[test]
fn a_configured_tool_timeout_ends_a_slow_call() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!("[mcp_servers.slow]\ncommand = '{ECHO}'\ntool_timeout_sec = 1\n"),
    )
    .unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "slow__sleep", json!({"seconds": 30})),
        Reply::text("gave up"),
    ]))
    .unwrap();
    let started = Instant::now();
    let out = repo.run(&exec_args(&mock, "mock-model"), "sleep");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    let msgs = mock.model_requests()[1].body["messages"].clone();
    let text = msgs.to_string();
    assert!(
        text.contains("did not finish `sleep` within 1 s (tool_timeout_sec)"),
        "{text}"
    );
}

/// MCP tools join every harness, named its way: `mcp__<server>__<tool>` where the original
/// does that, `<server>__<tool>` elsewhere, and as text commands for swe-agent.
#[test]
fn mcp_tools_join_every_harness_in_its_own_naming() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!("[mcp_servers.echo]\ncommand = '{ECHO}'\nstartup_timeout_sec = 20\n"),
    )
    .unwrap();
    let cases = [
        ("native", "chat", "echo__say"),
        ("kimi-code", "chat", "echo__say"),
        ("minimal", "chat", "echo__say"),
        ("claude-code", "messages", "mcp__echo__say"),
        ("claude-code-bare", "messages", "mcp__echo__say"),
        ("zcode", "messages", "mcp__echo__say"),
        ("kimi-cli", "chat", "echo__say"),
        ("qwen-code", "chat", "mcp__echo__say"),
        ("deepseek-tui", "chat", "echo__say"),
    ];
    let prompt = |harness: &str, wire: &str| -> Value {
        let args: Vec<String> = [
            "debug".to_string(),
            "prompt".into(),
            "--harness".into(),
            harness.into(),
            "-c".into(),
            "model_provider=\"mock\"".into(),
            "-c".into(),
            format!(
                "model_providers.mock={{name=\"mock\", base_url=\"http://127.0.0.1:9/v1\", wire_api=\"{wire}\"}}"
            ),
        ]
        .into();
        let out = repo.run(&args, "");
        assert!(
            out.status.success(),
            "{harness}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("debug prompt prints JSON");
        v.get("body").cloned().unwrap_or(v)
    };
    // Chat and Responses name a tool under `function` or at the top; Messages at the top.
    let names_of = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()))
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    for (harness, wire, name) in cases {
        let body = prompt(harness, wire);
        let names = names_of(&body);
        assert!(
            names.iter().any(|n| n == name),
            "{harness} on {wire}: no {name} in {names:?}"
        );
    }
    // swe-agent has no wire tools: the server's tools are commands listed in the task text.
    let body = prompt("swe-agent", "chat");
    assert!(names_of(&body).is_empty());
    assert!(
        body["messages"].to_string().contains("echo__say"),
        "swe-agent's prompt does not list the MCP tool"
    );
}

// Issue 22 item 5: MCP servers' own process trees.
#[path = "mcp_trees.rs"]
mod trees;
