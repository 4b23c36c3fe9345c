//! Background tasks end to end through `interpreter exec` on the mock: `Bash` with
//! `run_in_background` answers at once with a task id, `TaskOutput` waits for the end,
//! `TaskStop` stops, bad ids get clear errors, the next request tells the model that a task
//! ended, and nothing a task started outlives the run.

use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

fn exec(repo: &TestRepo, mock: &MockServer, wire: &str, harness: &str) -> std::process::Output {
    mock_llm::e2e::exec_with_harness(repo, &mock.url(), wire, harness, &[], "run the job")
}

/// Every text the model was sent in `body` (Chat or Messages), in order.
fn texts(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        match &m["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(blocks) => {
                for b in blocks {
                    match &b["content"] {
                        Value::String(s) => out.push(s.clone()),
                        _ => out.extend(b["text"].as_str().map(str::to_string)),
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn kimi_code_starts_a_task_waits_for_it_and_gets_clear_errors() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "Bash",
            json!({"command": "echo started; sleep 1; echo finished", "run_in_background": true, "description": "slow job"}),
        ),
        Reply::tool_call(
            "c2",
            "TaskOutput",
            json!({"task_id": "b1", "block": true, "timeout": 60}),
        ),
        Reply::tool_call("c3", "TaskStop", json!({"task_id": "b1"})),
        Reply::tool_call("c4", "TaskOutput", json!({"task_id": "b9"})),
        Reply::tool_call(
            "c5",
            "Bash",
            json!({"command": "echo x", "run_in_background": true}),
        ),
        Reply::text("done"),
    ]))
    .unwrap();
    exec(&repo, &mock, "chat", "kimi-code");
    let requests = mock.model_requests();
    let last = texts(&requests.last().unwrap().body);
    let result = |prefix: &str| {
        last.iter()
            .find(|t| t.contains(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in {last:#?}"))
            .clone()
    };
    let started = result("Command started in the background as task b1");
    assert!(started.contains("b1.output"), "{started}");
    let output = result("<task_id>b1</task_id>");
    assert!(
        output.contains("<retrieval_status>complete</retrieval_status>"),
        "{output}"
    );
    assert!(output.contains("<status>completed</status>"), "{output}");
    assert!(output.contains("started\nfinished"), "{output}");
    // Stopping a task that ended, and asking for one that never was, are clear errors.
    result("ERROR: Task `b1` is not running: it completed (exit code 0).");
    result("ERROR: No task with id `b9`. Known tasks: b1.");
    result("ERROR: `description` is required with `run_in_background`.");
    // TaskOutput saw it end: no notification repeats it.
    assert!(
        !last.iter().any(|t| t.contains("<task-notification>")),
        "{last:#?}"
    );
    // The output file is the session's, private, and holds the whole output.
    let file = repo.home.path().join("tasks");
    let found: Vec<_> = walk(&file)
        .into_iter()
        .filter(|p| p.ends_with("b1.output"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        std::fs::read_to_string(&found[0]).unwrap(),
        "started\nfinished\n"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&found[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn claude_code_is_notified_when_a_task_ends_and_stops_one_that_runs() {
    let repo = TestRepo::new();
    let wait = json!({"command": "sleep 2"});
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "Bash",
            json!({"command": "echo hello-from-bg", "run_in_background": true, "description": "say hello"}),
        ),
        Reply::tool_call("c2", "Bash", wait.clone()),
        Reply::tool_call("c3", "Bash", wait),
        Reply::tool_call(
            "c4",
            "Bash",
            json!({"command": "sleep 600", "run_in_background": true, "description": "forever"}),
        ),
        Reply::tool_call("c5", "TaskStop", json!({"task_id": "b2"})),
        Reply::tool_call("c6", "TaskStop", json!({"task_id": "b2"})),
        Reply::text("done"),
    ]))
    .unwrap();
    exec(&repo, &mock, "messages", "claude-code");
    let requests = mock.model_requests();
    let last = texts(&requests.last().unwrap().body);
    let notification = last
        .iter()
        .find(|t| t.contains("<task-notification>"))
        .unwrap_or_else(|| panic!("no notification in {last:#?}"));
    for part in [
        "<task-id>b1</task-id>",
        "<tool-use-id>c1</tool-use-id>",
        "<status>completed</status>",
        "<summary>Background command \"say hello\" completed (exit code 0)</summary>",
    ] {
        assert!(notification.contains(part), "{part} not in {notification}");
    }
    assert!(
        last.iter()
            .any(|t| t.starts_with("Command running in background with ID: b1.")),
        "{last:#?}"
    );
    let stopped = last
        .iter()
        .find(|t| t.contains("Successfully stopped task: b2 (sleep 600)"))
        .unwrap_or_else(|| panic!("b2 was not stopped: {last:#?}"));
    let stopped: Value = serde_json::from_str(stopped).unwrap();
    assert_eq!(stopped["task_type"], "local_bash");
    assert!(
        last.iter()
            .any(|t| t.contains("Task `b2` is not running: it was stopped.")),
        "{last:#?}"
    );
    // A stop the model asked for needs no notification; only b1's came.
    assert_eq!(
        last.iter()
            .filter(|t| t.contains("<task-notification>"))
            .count(),
        1
    );
}

#[cfg(unix)]
#[test]
fn nothing_a_background_task_started_outlives_the_run() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "Bash",
            json!({"command": "sleep 600 & echo $! > bg.pid; wait", "run_in_background": true, "description": "server"}),
        ),
        Reply::tool_call(
            "c2",
            "Bash",
            json!({"command": "for i in $(seq 100); do test -s bg.pid && break; sleep 0.1; done; cat bg.pid"}),
        ),
        Reply::text("done"),
    ]))
    .unwrap();
    exec(&repo, &mock, "chat", "kimi-code");
    let pid: i32 = std::fs::read_to_string(repo.dir.path().join("bg.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let alive = || {
        std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    for _ in 0..100 {
        if !alive() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("process {pid}, started by a background task, outlived the run");
}

#[test]
fn kimi_code_agent_swarm_runs_one_subagent_per_item_and_answers_in_item_order() {
    let repo = TestRepo::new();
    let answer = || Reply::text("answer: {{last_user}}");
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "s1",
            "AgentSwarm",
            json!({"description": "check modules", "subagent_type": "explore", "prompt_template": "Check {{item}} please", "items": ["alpha", "beta", "gamma"]}),
        ),
        answer(),
        answer(),
        answer(),
        Reply::tool_call(
            "s2",
            "AgentSwarm",
            json!({"description": "bad", "prompt_template": "no placeholder", "items": ["x"]}),
        ),
        Reply::text("done"),
    ]))
    .unwrap();
    exec(&repo, &mock, "chat", "kimi-code");
    let last = texts(&mock.model_requests().last().unwrap().body);
    let swarm = last
        .iter()
        .find(|t| t.starts_with("<agent_swarm_result>"))
        .unwrap_or_else(|| panic!("no swarm result in {last:#?}"));
    assert!(
        swarm.contains("<summary>completed: 3, failed: 0</summary>"),
        "{swarm}"
    );
    let order: Vec<usize> = ["alpha", "beta", "gamma"]
        .iter()
        .map(|item| {
            swarm
                .find(&format!(
                    "<subagent item=\"{item}\" outcome=\"completed\">\nanswer: Check {item} please\n</subagent>"
                ))
                .unwrap_or_else(|| panic!("{item} missing from {swarm}"))
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{swarm}");
    assert!(
        last.iter()
            .any(|t| t
                == "ERROR: `prompt_template` must contain {{item}}: it is replaced by each item."),
        "{last:#?}"
    );
}

#[test]
fn exec_says_it_cannot_keep_a_schedule() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "CronCreate",
            json!({"cron": "*/5 * * * *", "prompt": "check the build"}),
        ),
        Reply::tool_call("c2", "CronList", json!({})),
        Reply::text("done"),
    ]))
    .unwrap();
    exec(&repo, &mock, "chat", "kimi-code");
    let last = texts(&mock.model_requests().last().unwrap().body);
    assert!(
        last.iter().any(|t| t
            .starts_with("ERROR: This session ends after its turn, so it cannot keep a schedule.")),
        "{last:#?}"
    );
    assert!(
        last.iter().any(|t| t == "No jobs are scheduled."),
        "{last:#?}"
    );
}

#[test]
fn native_exec_command_keeps_a_running_process_as_a_session_for_write_stdin() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("e1", "exec_command", json!({"cmd": "echo quick", "yield_time_ms": 5000})),
        // A tiny REPL: it answers each line it reads, until `quit`.
        Reply::tool_call(
            "e2",
            "exec_command",
            json!({"cmd": "while read line; do [ \"$line\" = quit ] && exit 3; echo \"got $line\"; done", "yield_time_ms": 300}),
        ),
        Reply::tool_call("w1", "write_stdin", json!({"session_id": 2, "chars": "hello\n", "yield_time_ms": 1000})),
        Reply::tool_call("w2", "write_stdin", json!({"session_id": 2, "chars": "quit\n", "yield_time_ms": 5000})),
        Reply::tool_call("w3", "write_stdin", json!({"session_id": 2, "chars": "again\n"})),
        Reply::tool_call("w4", "write_stdin", json!({"session_id": 99, "chars": ""})),
        // The older name still runs.
        Reply::tool_call("s1", "shell", json!({"command": ["bash", "-lc", "echo legacy"]})),
        Reply::text("done"),
    ]))
    .unwrap();
    let outputs = native_outputs(&repo, &mock);
    assert_eq!(outputs.len(), 7, "{outputs:#?}");
    assert!(
        outputs[0].contains("Process exited with code 0\nOutput:\nquick"),
        "{}",
        outputs[0]
    );
    assert!(outputs[0].starts_with("Chunk ID: "), "{}", outputs[0]);
    assert!(
        outputs[1].contains("Process running with session ID 2\nOutput:\n"),
        "{}",
        outputs[1]
    );
    assert!(
        outputs[2].contains("Process running with session ID 2\nOutput:\ngot hello"),
        "{}",
        outputs[2]
    );
    assert!(
        outputs[3].contains("Process exited with code 3"),
        "{}",
        outputs[3]
    );
    assert!(
        outputs[4].contains("Session 2 is not running"),
        "{}",
        outputs[4]
    );
    assert!(
        outputs[5].contains("Unknown session id 99")
            || outputs[5].contains("No task with id `b99`"),
        "{}",
        outputs[5]
    );
    assert!(outputs[6].contains("legacy"), "{}", outputs[6]);
    let tools = mock.model_requests()[0].body["tools"].to_string();
    assert!(
        tools.contains("\"exec_command\"") && tools.contains("\"write_stdin\""),
        "{tools}"
    );
    assert!(!tools.contains("\"shell\""), "{tools}");
}

#[test]
#[cfg(unix)]
fn native_exec_command_with_tty_runs_a_repl_on_a_terminal() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "e1",
            "exec_command",
            json!({"cmd": "test -t 0 && test -t 1 && echo on-a-terminal", "tty": true, "yield_time_ms": 5000}),
        ),
        Reply::tool_call(
            "e2",
            "exec_command",
            json!({"cmd": "test -t 0 || echo on-pipes", "yield_time_ms": 5000}),
        ),
        // Python reads a pipe to its end before it runs anything; on a terminal it is a REPL.
        Reply::tool_call("e3", "exec_command", json!({"cmd": "python3 -q", "tty": true, "yield_time_ms": 1500})),
        Reply::tool_call("w1", "write_stdin", json!({"session_id": 3, "chars": "print(6 * 7)\n", "yield_time_ms": 1500})),
        Reply::tool_call("w2", "write_stdin", json!({"session_id": 3, "chars": "exit()\n", "yield_time_ms": 5000})),
        Reply::text("done"),
    ]))
    .unwrap();
    let outputs = native_outputs(&repo, &mock);
    assert_eq!(outputs.len(), 5, "{outputs:#?}");
    assert!(outputs[0].contains("on-a-terminal"), "{}", outputs[0]);
    assert!(outputs[1].contains("on-pipes"), "{}", outputs[1]);
    assert!(
        outputs[2].contains("Process running with session ID 3"),
        "{}",
        outputs[2]
    );
    assert!(
        outputs[2].contains(">>>"),
        "the REPL's prompt: {}",
        outputs[2]
    );
    assert!(outputs[3].contains("42"), "{}", outputs[3]);
    assert!(
        outputs[4].contains("Process exited with code 0"),
        "{}",
        outputs[4]
    );
}

/// Runs `exec` with the native harness on the Responses wire; the outputs of its calls, as
/// the last request carried them.
fn native_outputs(repo: &TestRepo, mock: &MockServer) -> Vec<String> {
    let out = mock_llm::e2e::exec_with_harness(repo, &mock.url(), "responses", "native", &[], "go");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = mock.model_requests().last().unwrap().body.clone();
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].as_str().unwrap_or_default().to_string())
        .collect()
}
