//! `interpreter exec` end to end against the mock model server.

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

fn exec_args(mock: &MockServer, wire: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), wire));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Applies `diff` in `dir` with `git apply`, as a pipeline would.
fn git_apply(dir: &std::path::Path, diff: &str) {
    use std::io::Write;
    let mut apply = std::process::Command::new("git")
        .args(["apply", "-"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    apply
        .stdin
        .take()
        .unwrap()
        .write_all(diff.as_bytes())
        .unwrap();
    assert!(apply.wait().unwrap().success(), "git apply failed:\n{diff}");
}

const FIX_PATCH: &str = "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n";

fn fix_script() -> Script {
    Script::new([
        Reply::default()
            .then_reasoning("Read the file first.")
            .then_text("Reading calc.py.")
            .then_raw_tool_call("call_1", "read_file", "{\"path\":\"calc.py\"}", 3),
        Reply::tool_call("call_2", "apply_patch", json!({"input": FIX_PATCH})),
        Reply::tool_call(
            "call_3",
            "shell",
            json!({"command": "python3 -c 'import calc; print(calc.add(2, 3))'"}),
        ),
        Reply::text("Fixed add: it now returns a + b.").with_usage(100, 20, 80, 5),
    ])
}

#[test]
fn json_mode_emits_the_exact_codex_event_sequence_and_edits_the_file() {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    let mock = MockServer::start_blocking(fix_script()).unwrap();
    let out = repo.run(
        &exec_args(&mock, "chat", &["--json"]),
        "Fix the add function",
    );
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut events = jsonl(&out);
    let thread_id = events[0]["thread_id"].as_str().unwrap().to_string();
    events[0]["thread_id"] = json!("T");
    // Usage sums the four requests; only the last one is scripted, so take it from the output.
    let usage = events.last().unwrap()["usage"].clone();
    let path = std::fs::canonicalize(repo.path()).unwrap().join("calc.py");
    let expected = vec![
        json!({"type": "thread.started", "thread_id": "T"}),
        json!({"type": "turn.started"}),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "Read the file first."}}),
        json!({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "Reading calc.py."}}),
        json!({"type": "item.completed", "item": {"id": "item_2", "type": "file_change",
            "changes": [{"path": path.display().to_string(), "kind": "update"}], "status": "completed"}}),
        json!({"type": "item.started", "item": {"id": "item_3", "type": "command_execution",
            "command": "python3 -c 'import calc; print(calc.add(2, 3))'", "aggregated_output": "",
            "exit_code": null, "status": "in_progress"}}),
        json!({"type": "item.completed", "item": {"id": "item_3", "type": "command_execution",
            "command": "python3 -c 'import calc; print(calc.add(2, 3))'", "aggregated_output": "5\n",
            "exit_code": 0, "status": "completed"}}),
        json!({"type": "item.completed", "item": {"id": "item_4", "type": "agent_message", "text": "Fixed add: it now returns a + b."}}),
        json!({"type": "turn.completed", "usage": usage}),
    ];
    assert_eq!(events, expected);
    assert_eq!(usage["cached_input_tokens"], 80);
    assert_eq!(usage["cache_write_input_tokens"], 0);
    assert_eq!(usage["reasoning_output_tokens"], 5);
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");

    // The model saw each tool's result, paired with its call, and the K3-style request rules.
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 4);
    let last = &reqs[3].body;
    let msgs = last["messages"].as_array().unwrap();
    let tool_msgs: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_msgs.len(), 3);
    assert_eq!(tool_msgs[0]["tool_call_id"], "call_1");
    assert!(
        tool_msgs[0]["content"]
            .as_str()
            .unwrap()
            .contains("L2:     return a - b")
    );
    assert!(
        tool_msgs[1]["content"]
            .as_str()
            .unwrap()
            .contains("M calc.py")
    );
    assert!(
        tool_msgs[2]["content"]
            .as_str()
            .unwrap()
            .contains("Exit code: 0")
    );
    assert_eq!(last["prompt_cache_key"], thread_id);
    assert_eq!(last["stream_options"]["include_usage"], true);
    assert!(last["max_completion_tokens"].is_u64());
    assert!(last.get("temperature").is_none());
    // System prompt and tools are byte-identical across the turn's requests (prefix cache).
    for r in &reqs[1..] {
        assert_eq!(r.body["messages"][0], reqs[0].body["messages"][0]);
        assert_eq!(r.body["tools"], reqs[0].body["tools"]);
    }
}

#[test]
fn responses_wire_api_works_the_same() {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    let mock = MockServer::start_blocking(fix_script()).unwrap();
    let out = repo.run(
        &exec_args(&mock, "responses", &["--json"]),
        "Fix the add function",
    );
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let types: Vec<String> = jsonl(&out)
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["type"].as_str().unwrap(),
                e["item"]["type"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(types.last().unwrap().trim(), "turn.completed");
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");
    let reqs = mock.model_requests();
    assert!(reqs[0].path.ends_with("/responses"));
    let input = reqs[3].body["input"].as_array().unwrap();
    assert!(
        input
            .iter()
            .any(|i| i["type"] == "function_call_output" && i["call_id"] == "call_3")
    );
}

#[test]
fn human_mode_prints_answer_on_stdout_and_diff_applies_with_git() {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    let pristine = tempfile::tempdir().unwrap();
    std::fs::write(
        pristine.path().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    let mock = MockServer::start_blocking(fix_script()).unwrap();
    let out = repo.run(
        &exec_args(&mock, "chat", &["--diff"]),
        "Fix the add function",
    );
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let diff = String::from_utf8(out.stdout).unwrap();
    assert!(
        diff.starts_with("diff --git a/calc.py b/calc.py\n"),
        "{diff}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Fixed add"), "{stderr}");
    // The diff is what a pipeline would `git apply`.
    git_apply(pristine.path(), &diff);
    assert_eq!(
        std::fs::read_to_string(pristine.path().join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );

    // Without --diff the final answer is the only thing on stdout.
    let mock = MockServer::start_blocking(Script::new([Reply::text("All good.")])).unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &[]), "check");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "All good.\n");
}

/// `--diff` in a git work tree holds what shell commands changed as well as the file tools'
/// edits, and leaves out what was already uncommitted before the run.
#[test]
fn diff_holds_shell_edits_and_not_earlier_work() {
    let repo = TestRepo::new();
    let git = |dir: &std::path::Path, args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    repo.write("a.txt", "alpha\n");
    repo.write("b.txt", "beta\n");
    repo.write("wip.txt", "committed\n");
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "start"]);
    let pristine = tempfile::tempdir().unwrap();
    git(
        pristine.path(),
        &["clone", "-q", repo.path().to_str().unwrap(), "."],
    );
    // The user's uncommitted work: not the agent's, so not in the patch.
    repo.write("wip.txt", "user change\n");

    let patch = "*** Begin Patch\n*** Update File: b.txt\n@@\n-beta\n+BETA\n*** End Patch\n";
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "shell",
            json!({"command": "sed -i 's/alpha/ALPHA/' a.txt && printf 'made by shell\\n' > new.txt"}),
        ),
        Reply::tool_call("c2", "apply_patch", json!({"input": patch})),
        Reply::text("Done."),
    ]))
    .unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &["--diff"]), "edit things");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let diff = String::from_utf8(out.stdout).unwrap();
    for f in ["a/a.txt", "a/b.txt", "b/new.txt"] {
        assert!(diff.contains(f), "{f} missing from:\n{diff}");
    }
    assert!(!diff.contains("wip.txt"), "{diff}");

    git_apply(pristine.path(), &diff);
    let read = |f: &str| std::fs::read_to_string(pristine.path().join(f)).unwrap();
    assert_eq!(read("a.txt"), "ALPHA\n");
    assert_eq!(read("b.txt"), "BETA\n");
    assert_eq!(read("new.txt"), "made by shell\n");
    assert_eq!(read("wip.txt"), "committed\n");
}

#[test]
fn output_last_message_and_output_schema() {
    let repo = TestRepo::new();
    let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]});
    repo.write("schema.json", &schema.to_string());
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("{\"answer\":\"42\"}")])).unwrap();
    let last = repo.path().join("last.txt");
    let out = repo.run(
        &exec_args(
            &mock,
            "chat",
            &[
                "--json",
                "--output-schema",
                "schema.json",
                "-o",
                last.to_str().unwrap(),
            ],
        ),
        "answer",
    );
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&last).unwrap(),
        "{\"answer\":\"42\"}"
    );
    let body = &mock.model_requests()[0].body;
    assert_eq!(
        body["response_format"]["json_schema"]["name"],
        "codex_output_schema"
    );
    assert_eq!(body["response_format"]["json_schema"]["schema"], schema);
}

#[test]
fn resume_replays_history_to_the_model() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("First answer."),
        Reply::text("Second answer."),
    ]))
    .unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &["--json"]), "first question");
    assert!(out.status.success());
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    let mut args = exec_args(&mock, "chat", &["--json"]);
    args.extend(["resume".to_string(), id.clone()]);
    let out = repo.run(&args, "second question");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = jsonl(&out);
    assert_eq!(events[0]["thread_id"], id.as_str());
    let reqs = mock.model_requests();
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let texts: Vec<(String, String)> = msgs
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let pos_q1 = texts
        .iter()
        .position(|(r, c)| r == "user" && c == "first question")
        .unwrap();
    let pos_a1 = texts
        .iter()
        .position(|(r, c)| r == "assistant" && c == "First answer.")
        .unwrap();
    assert!(pos_q1 < pos_a1);
    assert_eq!(
        texts.last().unwrap(),
        &("user".to_string(), "second question".to_string())
    );
    // The prefix sent in turn one is a byte-identical prefix of turn two's request.
    let first = reqs[0].body["messages"].as_array().unwrap();
    assert_eq!(&msgs[..first.len()], &first[..]);
}

#[test]
fn retries_429_then_succeeds() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::error(429, "slow down").with_header("retry-after", "0"),
        Reply::text("Done after retry."),
    ]))
    .unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &["--json"]), "hi");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = jsonl(&out);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "error" && e["message"].as_str().unwrap().contains("slow down"))
    );
    assert!(
        events
            .iter()
            .any(|e| e["item"]["text"] == "Done after retry.")
    );
    assert_eq!(mock.model_requests().len(), 2);
}

#[test]
fn repeated_500_fails_the_turn_with_the_provider_message() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::error(500, "upstream is on fire").with_repeat(20)
    ]))
    .unwrap();
    let mut args = exec_args(&mock, "chat", &["--json"]);
    args.extend([
        "-c".into(),
        "model_providers.mock.request_max_retries=2".into(),
    ]);
    let out = repo.run(&args, "hi");
    assert_eq!(out.status.code(), Some(1));
    let events = jsonl(&out);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn.failed");
    assert!(
        last["error"]["message"]
            .as_str()
            .unwrap()
            .contains("upstream is on fire"),
        "{last}"
    );
    assert_eq!(mock.model_requests().len(), 3);
}

#[test]
fn quota_errors_are_not_retried_and_401_is_surfaced_verbatim() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::error(
        429,
        "You exceeded your current token quota",
    )
    .with_error_code("exceeded_current_quota_error")]))
    .unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &["--json"]), "hi");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(mock.model_requests().len(), 1);
    assert!(String::from_utf8_lossy(&out.stdout).contains("You exceeded your current token quota"));

    let mock =
        MockServer::start_blocking(Script::new([Reply::error(401, "Invalid Authentication")]))
            .unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &["--json"]), "hi");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(mock.model_requests().len(), 1);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Invalid Authentication"));
}

#[test]
fn stream_cut_mid_tool_call_is_a_clear_error() {
    let repo = TestRepo::new();
    let cut = Reply::default()
        .then_raw_tool_call("call_1", "apply_patch", "{\"input\":\"*** Begin Pa", 2)
        .then_cut();
    let mock = MockServer::start_blocking(Script::new([cut.with_repeat(5)])).unwrap();
    let mut args = exec_args(&mock, "chat", &["--json"]);
    args.extend([
        "-c".into(),
        "model_providers.mock.stream_max_retries=1".into(),
    ]);
    let out = repo.run(&args, "hi");
    assert_eq!(out.status.code(), Some(1));
    let events = jsonl(&out);
    let msg = events.last().unwrap()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        msg.contains("stream disconnected before completion"),
        "{msg}"
    );
    assert!(msg.contains("apply_patch"), "{msg}");
    assert_eq!(mock.model_requests().len(), 2);
}

#[test]
fn invalid_tool_arguments_go_back_to_the_model_as_a_tool_error() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::default().then_raw_tool_call("call_1", "shell", "{\"command\": \"ls", 2),
        Reply::tool_call("call_2", "no_such_tool", json!({})),
        Reply::text("Recovered."),
    ]))
    .unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &["--json"]), "hi");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 3);
    let msgs = reqs[2].body["messages"].as_array().unwrap();
    let call = msgs
        .iter()
        .find(|m| m["tool_calls"][0]["id"] == "call_1")
        .unwrap();
    // Broken arguments never reach history as they came.
    assert_eq!(call["tool_calls"][0]["function"]["arguments"], "{}");
    let results: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        results[0].contains("Error parsing JSON arguments"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("does not exist"), "{}", results[1]);
}

#[test]
fn failed_patch_changes_nothing_and_outside_paths_are_refused() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.write("b.txt", "two\n");
    let bad = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-missing line\n+x\n*** End Patch\n";
    let outside = "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch\n";
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": bad})),
        Reply::tool_call("c2", "apply_patch", json!({"input": outside})),
        Reply::text("ok"),
    ]))
    .unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &["--json"]), "edit");
    assert!(out.status.success());
    assert_eq!(repo.read("a.txt"), "one\n");
    assert!(!repo.path().parent().unwrap().join("escape.txt").exists());
    let events = jsonl(&out);
    let changes: Vec<&Value> = events
        .iter()
        .filter(|e| e["item"]["type"] == "file_change")
        .collect();
    assert!(changes.iter().all(|e| e["item"]["status"] == "failed"));
    let msgs = mock.model_requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let results: Vec<String> = msgs
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert!(
        results[0].contains("Failed to find expected lines in b.txt"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("outside the workspace"),
        "{}",
        results[1]
    );
}

#[test]
fn missing_key_is_one_clear_line_and_exit_2() {
    let repo = TestRepo::new();
    let out = repo.run_with_env(
        &[
            "exec".into(),
            "-c".into(),
            "model_providers.kimi.env_key=\"INTERPRETER_E2E_UNSET_KEY\"".into(),
        ],
        "hi",
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.starts_with("Error:")).unwrap();
    assert!(
        line.contains("INTERPRETER_E2E_UNSET_KEY") && line.contains("model_providers.kimi"),
        "{err}"
    );
}

#[test]
fn bad_config_file_names_file_and_line() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        "model = \"x\"\nmodel_provider = = 1\n",
    )
    .unwrap();
    let out = repo.run(&["exec".into()], "hi");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.toml") && err.contains("line 2"),
        "{err}"
    );
}

#[test]
fn outside_git_requires_the_skip_flag() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(mock_llm::e2e::interpreter_bin());
        cmd.arg("exec")
            .args(extra)
            .arg("hi")
            .current_dir(dir.path())
            .env("OPENINTERPRETER_HOME", home.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "Not inside a trusted directory and --skip-git-repo-check was not specified."
        )
    );
    let mock = MockServer::start_blocking(Script::new([Reply::text("fine")])).unwrap();
    let mut args: Vec<String> = TestRepo::mock_config(&mock.url(), "chat");
    args.push("--skip-git-repo-check".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn slash_harness_and_model_lines_are_session_commands() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    let out = repo.run(
        &exec_args(&mock, "chat", &["--json"]),
        "/harness native\n/model other-model\nhello",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = &mock.model_requests()[0].body;
    assert_eq!(body["model"], "other-model");
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"], "hello");
    let out = repo.run(
        &exec_args(&mock, "chat", &["--json"]),
        "/harness nope\nhello",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown harness `nope`"));
}

#[test]
fn sigterm_mid_command_stops_promptly_and_kills_the_process_group() {
    let repo = TestRepo::new();
    let marker = repo.path().join("child.pid");
    let cmd = format!("sleep 60 & echo $! > {}; wait", marker.display());
    let mock = MockServer::start_blocking(Script::new([Reply::tool_call(
        "c1",
        "shell",
        json!({"command": cmd}),
    )]))
    .unwrap();
    let mut child = std::process::Command::new(mock_llm::e2e::interpreter_bin())
        .args(exec_args(&mock, "chat", &["--json"]))
        .arg("go")
        .current_dir(repo.path())
        .env("OPENINTERPRETER_HOME", repo.home.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !marker.exists() && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let sleeper: i32 = std::fs::read_to_string(&marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let t = std::time::Instant::now();
    unsafe_kill(child.id() as i32, 15);
    let status = child.wait().unwrap();
    assert!(
        t.elapsed() < std::time::Duration::from_secs(3),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(status.code(), Some(1));
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(
        !std::path::Path::new(&format!("/proc/{sleeper}")).exists() || is_zombie(sleeper),
        "orphan sleep {sleeper} survived"
    );
}

fn unsafe_kill(pid: i32, sig: i32) {
    std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains(") Z "))
        .unwrap_or(true)
}

/// `--goal`: the prompt is the session's goal; turns run until the model marks it complete.
#[test]
fn goal_runs_turns_until_the_model_marks_it_complete() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("Step one.").with_usage(20, 7, 0, 0),
        Reply::tool_call("g1", "update_goal", json!({"status": "complete"}))
            .with_usage(20, 7, 0, 0),
        Reply::text("Done.").with_usage(20, 7, 0, 0),
    ]))
    .unwrap();
    let out = repo.run(
        &exec_args(&mock, "chat", &["--json", "--goal"]),
        "Finish both steps",
    );
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = jsonl(&out);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let count = |k: &str| kinds.iter().filter(|t| **t == k).count();
    assert_eq!(
        (count("turn.started"), count("turn.completed")),
        (2, 2),
        "{kinds:?}"
    );
    // Each turn's own usage: 27 tokens in the first, 54 in the second (two requests).
    let usage: Vec<u64> = events
        .iter()
        .filter(|e| e["type"] == "turn.completed")
        .map(|e| {
            e["usage"]["input_tokens"].as_u64().unwrap()
                + e["usage"]["output_tokens"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(usage, [27, 54]);
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].body.to_string().contains("Finish both steps"));
    assert!(reqs[0].body.to_string().contains("update_goal"));
}

/// `--goal --goal-budget`: the goal stops at its budget, and exec says so and fails.
#[test]
fn goal_stops_at_its_budget_and_exec_fails() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("Working.").with_usage(20, 7, 0, 0),
        Reply::text("Still working.").with_usage(20, 7, 0, 0),
        Reply::text("never asked").with_usage(20, 7, 0, 0),
    ]))
    .unwrap();
    let out = repo.run(
        &exec_args(&mock, "chat", &["--goal", "--goal-budget", "50"]),
        "Keep going",
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("budgetLimited") && stderr.contains("54 tokens used of 50"),
        "{stderr}"
    );
    assert_eq!(mock.model_requests().len(), 2);
}

/// A goal turn that crosses its budget between two requests is asked, in its next request, to
/// wrap up; it ends there and no further goal turn starts. The wrap-up request counts too.
#[test]
fn goal_turn_that_crosses_its_budget_is_asked_to_wrap_up() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "shell", json!({"command": "true"})).with_usage(40, 20, 0, 0),
        Reply::text("Done so far: one step. Left: the other.").with_usage(40, 20, 0, 0),
        Reply::text("never asked").with_usage(20, 7, 0, 0),
    ]))
    .unwrap();
    let out = repo.run(
        &exec_args(&mock, "chat", &["--goal", "--goal-budget", "50"]),
        "Do both steps",
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("budgetLimited") && stderr.contains("120 tokens used of 50"),
        "{stderr}"
    );
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 2);
    let wrap_up = "The thread's goal has used its token budget: 60 of 50 tokens";
    assert!(!reqs[0].body.to_string().contains(wrap_up));
    let second = reqs[1].body.to_string();
    assert!(second.contains(wrap_up), "{second}");
    // It comes after the command's result: the turn goes on, told to finish.
    assert!(second.find(wrap_up) > second.find("\"tool\""), "{second}");
}

/// A goal turn that fails on an exhausted quota stops the goal as usage-limited instead of
/// pausing it.
#[test]
fn goal_stops_as_usage_limited_when_the_quota_runs_out() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("Step one.").with_usage(20, 7, 0, 0),
        Reply::error(
            429,
            "You exceeded your current quota, please check your plan",
        ),
        Reply::text("never asked"),
    ]))
    .unwrap();
    let out = repo.run(&exec_args(&mock, "chat", &["--goal"]), "Keep going");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("usageLimited") && stderr.contains("27 tokens used"),
        "{stderr}"
    );
    assert_eq!(mock.model_requests().len(), 2);
}
