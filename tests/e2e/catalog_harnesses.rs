//! kimi-cli, qwen-code, deepseek-tui, swe-agent, pi, mini-swe-agent, opencode, little-coder and
//! terminus-2 end to end through `interpreter exec`
//! against the mock, which checks every request's history against the Chat rules. Each task
//! reads a file, edits it, runs a failing command and sees the original's failure text,
//! updates the plan (swe-agent's original has no plan tool) and finishes; swe-agent does it
//! with text actions.

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

const CHECK: &str = "python3 -c 'import calc; assert calc.add(2, 3) == 6, \"add is wrong\"'";
const FIXED: &str = "def add(a, b):\n    return a + b\n";

fn calc_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo
}

fn abs(repo: &TestRepo, rel: &str) -> String {
    std::fs::canonicalize(repo.path())
        .unwrap()
        .join(rel)
        .display()
        .to_string()
}

fn run(repo: &TestRepo, mock: &MockServer, model: &str, extra: &[&str]) -> std::process::Output {
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    a.extend(["-c".to_string(), format!("model=\"{model}\"")]);
    a.extend(extra.iter().map(|s| s.to_string()));
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&a, "fix add", &[("HOME", home.as_str())]);
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

fn todo_list_kinds(out: &std::process::Output) -> Vec<String> {
    jsonl(out)
        .iter()
        .filter(|e| e["item"]["type"] == "todo_list")
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn kimi_cli_reads_edits_runs_and_plans_with_its_texts() {
    let repo = calc_repo();
    let todos = |a: &str, b: &str| json!({"todos": [{"title": "Fix add", "status": a}, {"title": "Check it", "status": b}]});
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "SetTodoList:0",
            "SetTodoList",
            todos("in_progress", "pending"),
        ),
        Reply::tool_call("ReadFile:1", "ReadFile", json!({"path": "calc.py"})),
        Reply::tool_call(
            "StrReplaceFile:2",
            "StrReplaceFile",
            json!({"path": "calc.py", "edit": {"old": "a - b", "new": "a + b"}}),
        ),
        Reply::tool_call("Shell:3", "Shell", json!({"command": CHECK})),
        Reply::tool_call("SetTodoList:4", "SetTodoList", todos("done", "done")),
        Reply::tool_call(
            "Shell:5",
            "Shell",
            json!({"command": "echo bg-done", "description": "say done", "run_in_background": true}),
        ),
        Reply::tool_call(
            "TaskOutput:6",
            "TaskOutput",
            json!({"task_id": "b1", "block": true, "timeout": 20}),
        ),
        Reply::tool_call("TaskList:7", "TaskList", json!({"active_only": false})),
        Reply::tool_call(
            "Agent:8",
            "Agent",
            json!({"description": "Check it", "prompt": "Say ok.", "subagent_type": "explore"}),
        ),
        Reply::text("ok"),
        Reply::text("Fixed add; the check itself expects the wrong sum."),
    ]))
    .unwrap();
    let out = run(&repo, &mock, "mock-model", &["--harness", "kimi-cli"]);
    assert_eq!(repo.read("calc.py"), FIXED);
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 11);
    assert_eq!(
        tool_names(&reqs[0].body),
        [
            "Agent",
            "SetTodoList",
            "Shell",
            "ReadFile",
            "Glob",
            "Grep",
            "WriteFile",
            "StrReplaceFile",
            "TaskList",
            "TaskOutput",
            "TaskStop"
        ]
    );
    let system = reqs[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are Kimi CLI"), "{system}");
    assert!(system.contains("# Prompt and Tool Use") && system.contains("# Ultimate Reminders"));
    let r = results(&reqs.last().unwrap().body);
    assert_eq!(
        r[0],
        "<system>Todo list updated</system>\nTodo list updated"
    );
    // The newer prompt's background Shell, its task tools and Agent.
    assert!(r[5].contains("b1"), "{}", r[5]);
    assert!(
        r[6].contains("<retrieval_status>complete</retrieval_status>") && r[6].contains("bg-done"),
        "{}",
        r[6]
    );
    assert!(
        r[7].contains("b1") && r[7].contains("echo bg-done"),
        "{}",
        r[7]
    );
    assert!(
        r[8].contains("agent_id: ")
            && r[8].contains("actual_subagent_type: explore\nstatus: completed\n\n[summary]\nok"),
        "{}",
        r[8]
    );
    assert_eq!(
        r[1],
        "<system>2 lines read from file starting from line 1. End of file reached.</system>\n     1\tdef add(a, b):\n     2\t    return a - b"
    );
    assert_eq!(
        r[2],
        "<system>File successfully edited. Applied 1 edit(s) with 1 total replacement(s).</system>"
    );
    assert!(
        r[3].starts_with("<system>ERROR: Command failed with exit code: 1.</system>\n")
            && r[3].contains("AssertionError: add is wrong"),
        "{}",
        r[3]
    );
    assert_eq!(
        todo_list_kinds(&out),
        ["item.started", "item.updated", "item.completed"]
    );
}

#[test]
fn qwen_code_is_the_default_for_qwen_on_chat_and_uses_its_texts() {
    let repo = calc_repo();
    let calc = abs(&repo, "calc.py");
    let todos = |a: &str, b: &str| {
        json!({"todos": [{"content": "Fix add", "status": a, "id": "1"},
                         {"content": "Check it", "status": b, "id": "2"}]})
    };
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("call_0", "todo_write", todos("in_progress", "pending")),
        Reply::tool_call("call_1", "read_file", json!({"file_path": calc})),
        Reply::tool_call("call_2", "read_file", json!({"file_path": "calc.py"})),
        Reply::tool_call(
            "call_3",
            "edit",
            json!({"file_path": calc, "old_string": "a - b", "new_string": "a + b"}),
        ),
        Reply::tool_call("call_4", "run_shell_command", json!({"command": CHECK})),
        Reply::tool_call("call_5", "todo_write", todos("completed", "completed")),
        Reply::text("Fixed add."),
    ]))
    .unwrap();
    // A Qwen model on a Chat provider routes to qwen-code.
    let out = run(&repo, &mock, "qwen3-coder-plus", &[]);
    assert_eq!(repo.read("calc.py"), FIXED);
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 7);
    let names = tool_names(&reqs[0].body);
    for t in [
        "agent",
        "list_directory",
        "read_file",
        "grep_search",
        "glob",
        "edit",
        "write_file",
        "run_shell_command",
        "todo_write",
    ] {
        assert!(names.contains(&t.to_string()), "{t} missing from {names:?}");
    }
    assert!(
        !names.contains(&"replace".to_string()),
        "older names are not listed"
    );
    let msgs = reqs[0].body["messages"].as_array().unwrap();
    assert!(
        msgs[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are Qwen Code")
    );
    assert!(
        msgs[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("This is Qwen Code, setting up the context")
    );
    assert_eq!(msgs[2]["content"], "Got it. Thanks for the context!");
    // The permission-mode reminder in its own message, then the user's.
    assert!(
        msgs[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("<system-reminder>"),
        "{}",
        msgs[3]
    );
    assert_eq!(msgs[4]["content"], "fix add");
    let r = results(&reqs[6].body);
    assert!(
        r[0].starts_with("Todos have been modified successfully.")
            && r[0].contains("<system-reminder>"),
        "{}",
        r[0]
    );
    assert_eq!(r[1], "def add(a, b):\n    return a - b\n");
    assert!(
        r[2].starts_with("File path must be absolute, but was relative: calc.py."),
        "{}",
        r[2]
    );
    assert!(
        r[3].starts_with(&format!(
            "The file: {calc} has been updated. Showing lines 1-3 of 3 from the edited file:"
        )),
        "{}",
        r[3]
    );
    assert!(
        r[4].starts_with(&format!("Command: {CHECK}\nDirectory: (root)\nOutput: "))
            && r[4].contains("AssertionError: add is wrong")
            && r[4].contains("\nExit Code: 1\n"),
        "{}",
        r[4]
    );
    assert_eq!(todo_list_kinds(&out).len(), 3);
}

#[test]
fn deepseek_tui_offers_only_tools_that_run() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "call_0",
            "checklist_write",
            json!({"todos": [{"content": "Fix add", "status": "in_progress"}, {"content": "Check it", "status": "pending"}]}),
        ),
        Reply::tool_call("call_1", "read_file", json!({"path": "calc.py"})),
        Reply::tool_call(
            "call_2",
            "edit_file",
            json!({"path": "calc.py", "search": "a - b", "replace": "a + b"}),
        ),
        Reply::tool_call("call_3", "exec_shell", json!({"command": CHECK})),
        Reply::tool_call("call_4", "checklist_update", json!({"id": 1, "status": "completed"})),
        Reply::tool_call("call_5", "git_status", json!({})),
        Reply::text("Fixed add."),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &mock,
        "deepseek-chat",
        &["--harness", "deepseek-tui"],
    );
    assert_eq!(repo.read("calc.py"), FIXED);
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 7);
    let names = tool_names(&reqs[0].body);
    // The seed's stubs are not advertised; nor are the tools whose capability this session
    // lacks (no search backend, no editor diagnostics, no face that asks).
    for stub in [
        "apply_patch",
        "diagnostics",
        "tool_search_tool_bm25",
        "web_search",
        "request_user_input",
        "automation_create",
        "rlm_eval",
    ] {
        assert!(
            !names.contains(&stub.to_string()),
            "{stub} is advertised: {names:?}"
        );
    }
    let r = results(&reqs[6].body);
    assert!(
        r[0].starts_with("Todo list updated (2 items, 0% complete)\n{"),
        "{}",
        r[0]
    );
    assert_eq!(r[1], "def add(a, b):\n    return a - b\n");
    assert!(
        r[2].contains("-    return a - b\n+    return a + b")
            && r[2].ends_with(&format!(
                "Replaced 1 occurrence in {}",
                abs(&repo, "calc.py")
            )),
        "{}",
        r[2]
    );
    assert!(
        r[3].starts_with("Command failed (exit code: Some(1))\n\nSTDOUT:\n\n\nSTDERR:\n")
            && r[3].contains("AssertionError: add is wrong"),
        "{}",
        r[3]
    );
    assert!(
        r[4].starts_with("Updated todo #1 to completed\n"),
        "{}",
        r[4]
    );
    assert!(
        r[5].starts_with("## "),
        "git status --porcelain -b: {}",
        r[5]
    );
    assert!(r[5].contains("calc.py"), "{}", r[5]);
    // The <turn_meta> in its own message before the user's.
    let first: Value = reqs[0].body["messages"].clone();
    assert!(
        first[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("<turn_meta>"),
        "{first}"
    );
    assert_eq!(first[2]["content"], "fix add", "{first}");
    assert_eq!(
        todo_list_kinds(&out),
        ["item.started", "item.updated", "item.completed"]
    );
}

#[test]
fn swe_agent_acts_in_text_with_corrections_observations_and_submit() {
    let repo = calc_repo();
    let calc = abs(&repo, "calc.py");
    let act = |discussion: &str, command: &str| {
        Reply::text(format!("DISCUSSION\n{discussion}\n\n```\n{command}\n```"))
    };
    let mock = MockServer::start_blocking(Script::new([
        act(
            "Look at the file first.",
            &format!("str_replace_editor view {calc}"),
        ),
        Reply::text("I know what to do now."),
        act(
            "Fix the operator.",
            &format!("str_replace_editor str_replace {calc} --old_str 'a - b' --new_str 'a + b'"),
        ),
        act("Run the check.", CHECK),
        act("Done.", "submit"),
        act("Confirm.", "submit"),
    ]))
    .unwrap();
    let out = run(&repo, &mock, "mock-model", &["--harness", "swe-agent"]);
    assert_eq!(repo.read("calc.py"), FIXED);
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 6, "the confirmed submit ends the task");
    for r in &reqs {
        assert!(
            r.body.get("tools").is_none(),
            "no tools on swe-agent's wire"
        );
        for m in r.body["messages"].as_array().unwrap() {
            assert!(m.get("tool_calls").is_none() && m["role"] != "tool", "{m}");
        }
    }
    let msgs = |i: usize| reqs[i].body["messages"].as_array().unwrap().clone();
    let text = |m: &Value| m["content"].as_str().unwrap().to_string();
    let first = msgs(0);
    assert!(
        text(&first[0])
            .starts_with("You are a helpful assistant that can interact with a computer")
    );
    assert!(text(&first[1]).starts_with("<uploaded_files>\n"));
    assert!(text(&first[1]).contains("<pr_description>\nfix add\n</pr_description>"));
    let second = msgs(1);
    assert_eq!(
        text(second.last().unwrap()),
        format!(
            "OBSERVATION:\nHere's the result of running `cat -n` on {calc}:\n     1\tdef add(a, b):\n     2\t    return a - b\n     3\t\n"
        )
    );
    let third = msgs(2);
    assert!(text(third.last().unwrap()).starts_with("Your output was not formatted correctly."));
    // Once the model answers properly the retry pair leaves the history.
    let fourth = msgs(3);
    assert!(
        fourth
            .iter()
            .all(|m| !text(m).starts_with("Your output was not formatted"))
    );
    assert!(fourth.iter().all(|m| text(m) != "I know what to do now."));
    assert!(
        text(fourth.last().unwrap())
            .starts_with(&format!("OBSERVATION:\nThe file {calc} has been edited."))
    );
    let fifth = msgs(4);
    let check = text(fifth.last().unwrap());
    assert!(
        check.starts_with("OBSERVATION:\nTraceback")
            && check.contains("AssertionError: add is wrong"),
        "{check}"
    );
    let review = text(msgs(5).last().unwrap());
    assert!(
        review.contains("Run the submit command again to confirm.")
            && review.contains("+    return a + b"),
        "{review}"
    );
    let events = jsonl(&out);
    assert!(events.iter().any(|e| e["type"] == "turn.completed"));
    assert!(events.iter().any(|e| e["item"]["type"] == "file_change"));
    assert!(
        events
            .iter()
            .any(|e| e["item"]["type"] == "command_execution")
    );
}

#[test]
fn swe_agent_gives_up_after_three_replies_without_an_action() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("hmm"),
        Reply::text("hmm"),
        Reply::text("hmm"),
        Reply::text("never asked"),
    ]))
    .unwrap();
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    a.extend(["--harness".to_string(), "swe-agent".to_string()]);
    let out = repo.run(&a, "fix add");
    assert!(!out.status.success());
    assert_eq!(mock.model_requests().len(), 3);
    let events = jsonl(&out);
    let failed = events.iter().find(|e| e["type"] == "turn.failed").unwrap();
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("without a valid action"),
        "{failed}"
    );
}

#[test]
fn chat_only_harnesses_refuse_other_wires_by_name() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("x")])).unwrap();
    for h in [
        "kimi-cli",
        "qwen-code",
        "deepseek-tui",
        "swe-agent",
        "pi",
        "mini-swe-agent",
        "opencode",
        "little-coder",
        "terminus-2",
    ] {
        for wire in ["responses", "messages"] {
            let mut a = vec!["exec".to_string(), "--json".to_string()];
            a.extend(TestRepo::mock_config(&mock.url(), wire));
            a.extend(["--harness".to_string(), h.to_string()]);
            let out = repo.run(&a, "hi");
            assert!(!out.status.success(), "{h} on {wire}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains(&format!(
                    "harness `{h}` does not support wire_api = \"{wire}\": it supports chat"
                )),
                "{h} on {wire}: {err}"
            );
        }
    }
    assert!(mock.model_requests().is_empty());
}

#[test]
fn pi_reads_edits_writes_and_runs_with_pis_texts() {
    let repo = calc_repo();
    repo.write(
        "notes.txt",
        &(1..=5).map(|n| format!("note {n}\n")).collect::<String>(),
    );
    let mock = MockServer::start_blocking(Script::new([
        Reply::default()
            .then_tool_call("r1", "read", json!({"path": "calc.py"}))
            .then_tool_call(
                "r2",
                "read",
                json!({"path": "notes.txt", "offset": 2, "limit": 2}),
            )
            .then_tool_call("r3", "read", json!({"path": "notes.txt", "offset": 9})),
        Reply::tool_call(
            "e1",
            "edit",
            json!({"path": "calc.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}),
        ),
        Reply::tool_call(
            "e2",
            "edit",
            json!({"path": "calc.py", "edits": [{"oldText": "missing", "newText": "x"}]}),
        ),
        Reply::tool_call(
            "w1",
            "write",
            json!({"path": "out/hello.txt", "content": "héllo"}),
        ),
        Reply::default()
            .then_tool_call("b1", "bash", json!({"command": CHECK.replace("6", "5")}))
            .then_tool_call("b2", "bash", json!({"command": "true"}))
            .then_tool_call("b3", "bash", json!({"command": "echo oops; exit 3"})),
        Reply::text("Fixed."),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "pi"]);
    assert_eq!(repo.read("calc.py"), FIXED);
    assert_eq!(repo.read("out/hello.txt"), "héllo");
    let reqs = mock.model_requests();
    assert_eq!(tool_names(&reqs[0].body), ["read", "bash", "edit", "write"]);
    let system = reqs[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.starts_with("You are an expert coding assistant working inside pi"),
        "{system}"
    );
    assert!(system.contains("\nCurrent working directory: "), "{system}");
    let r = results(&reqs.last().unwrap().body);
    assert_eq!(r[0], "def add(a, b):\n    return a - b");
    assert_eq!(
        r[1],
        "note 2\nnote 3\n\n[2 more lines in file. Use offset=4 to continue.]"
    );
    assert_eq!(r[2], "Offset 9 is beyond end of file (5 lines total)");
    assert_eq!(r[3], "Successfully replaced 1 block(s) in calc.py.");
    assert_eq!(
        r[4],
        "Could not find the exact text in calc.py. The old text must match exactly including all whitespace and newlines."
    );
    assert_eq!(r[5], "Successfully wrote 5 bytes to out/hello.txt");
    assert_eq!(r[6], "(no output)");
    assert_eq!(r[7], "(no output)");
    assert_eq!(r[8], "oops\n\nCommand exited with code 3");
}

#[test]
fn mini_swe_agent_calls_bash_corrects_replies_without_calls_and_ends_on_submit() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("I will look at the code."),
        Reply::tool_call("c1", "bash", json!({"command": "cat calc.py"})),
        Reply::tool_call(
            "c2",
            "bash",
            json!({"command": "sed -i 's/a - b/a + b/' calc.py"}),
        ),
        Reply::tool_call("c3", "bash", json!({"command": CHECK.replace("6", "5")})),
        Reply::tool_call(
            "c4",
            "bash",
            json!({"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}),
        ),
        Reply::text("NOT EXPECTED: the submit ends the task"),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "mini-swe-agent"]);
    assert_eq!(repo.read("calc.py"), FIXED);
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 5, "the submit command ends the task");
    assert_eq!(tool_names(&reqs[0].body), ["bash"]);
    let first = reqs[0].body["messages"].as_array().unwrap().clone();
    assert_eq!(first.len(), 2, "{first:#?}");
    assert!(
        first[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are a helpful assistant")
    );
    let task = first[1]["content"].as_str().unwrap();
    assert!(
        task.starts_with("Please solve this issue: fix add\n"),
        "{task}"
    );
    assert!(task.contains("<system_information>\n"), "{task}");
    // The reply without a call got the format error, as a user message.
    let second = reqs[1].body["messages"].as_array().unwrap().clone();
    let error = second.last().unwrap();
    assert_eq!(error["role"], "user");
    assert!(
        error["content"].as_str().unwrap().starts_with(
            "Tool call error:\n\n<error>\nNo tool calls found in the response. Every response MUST include at least one tool call.\n</error>"
        ),
        "{error}"
    );
    // Only the first task is wrapped, in every request.
    assert!(
        reqs[4].body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .starts_with("Please solve this issue: fix add")
    );
    let r = results(&reqs[4].body);
    assert_eq!(
        r[0],
        "{\"returncode\": 0, \"output\": \"def add(a, b):\\n    return a - b\\n\"}"
    );
    assert_eq!(r[1], "{\"returncode\": 0, \"output\": \"\"}");
}

/// terminus-2's reply as JSON: these keystrokes, and whether the task is complete.
fn terminus(keys: &[&str], complete: bool) -> Reply {
    let commands: Vec<Value> = keys
        .iter()
        .map(|k| json!({"keystrokes": k, "duration": 0.5}))
        .collect();
    Reply::text(
        json!({"analysis": "a", "plan": "p", "commands": commands, "task_complete": complete})
            .to_string(),
    )
}

/// The text of each request's last message.
fn last_messages(mock: &MockServer) -> Vec<String> {
    mock.model_requests()
        .iter()
        .map(|r| {
            let m = r.body["messages"].as_array().unwrap().last().unwrap();
            assert_eq!(m["role"], "user", "{m}");
            m["content"].as_str().unwrap().to_string()
        })
        .collect()
}

fn have_tmux() -> bool {
    std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn terminus_2_types_into_tmux_corrects_bad_json_and_ends_on_a_confirmed_completion() {
    if !have_tmux() {
        eprintln!("skipped: terminus-2 needs tmux, which this machine does not have");
        return;
    }
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("I will write the file."),
        terminus(&["echo hi > out.txt\n"], false),
        terminus(&[], true),
        terminus(&[], true),
        Reply::text("NOT EXPECTED: the second completion ends the task"),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "terminus-2"]);
    assert_eq!(repo.read("out.txt"), "hi\n");
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 4, "the confirmed completion ends the task");
    let first = &reqs[0].body;
    assert!(first.get("tools").is_none(), "no tools on the wire");
    assert_eq!(first["temperature"], 0.7);
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "no system message: {messages:#?}");
    let task = messages[0]["content"].as_str().unwrap();
    assert!(task.starts_with("You are an AI assistant"), "{task}");
    assert!(
        task.contains("Task Description:\nfix add\n\nCurrent terminal state:\n"),
        "{task}"
    );
    let last = last_messages(&mock);
    assert_eq!(
        last[1],
        "Previous response had parsing errors:\nERROR: No valid JSON found in response\nWARNINGS: - No valid JSON object found\n\nPlease fix these issues and provide a proper JSON response."
    );
    // The first screen the model read is the pane's: its prompt is where the keys went.
    let prompt = task.rsplit("Current terminal state:\n").next().unwrap();
    let prompt = prompt.lines().next().unwrap();
    assert!(
        last[2].starts_with(&format!(
            "New Terminal Output:\n{prompt} echo hi > out.txt\n"
        )),
        "{prompt:?}\n{}",
        last[2]
    );
    assert!(
        last[3].starts_with("Current terminal state:\nNew Terminal Output:\n"),
        "{}",
        last[3]
    );
    assert!(
        last[3].contains(
            "Is the task really complete? Marking it complete sends your solution for grading"
        ),
        "{}",
        last[3]
    );
    // The assistant's JSON goes back as its text; the observation as a user message.
    let history = reqs[3].body["messages"].as_array().unwrap();
    assert!(
        history
            .iter()
            .all(|m| m["role"] != "tool" && m.get("tool_calls").is_none())
    );
}

/// The shell in the pane is confined like any command, and what it starts ends with the
/// session, even a process that left its session.
#[cfg(unix)]
#[test]
fn terminus_2_pane_is_confined_and_does_not_outlive_the_session() {
    if !have_tmux() {
        eprintln!("skipped: terminus-2 needs tmux, which this machine does not have");
        return;
    }
    let repo = calc_repo();
    let outside =
        mock_llm::e2e::dir_outside_temp(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
    let escape = outside.path().join("escape.txt");
    let marker = format!("sleep {}", 40_000 + std::process::id() % 10_000);
    let mock = MockServer::start_blocking(Script::new([
        terminus(
            &[
                "echo inside > in.txt\n",
                &format!("echo escaped > {}\n", escape.display()),
                &format!("(setsid {marker} &)\n"),
            ],
            false,
        ),
        terminus(&[], true),
        terminus(&[], true),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &mock,
        "mock-model",
        &["--harness", "terminus-2", "--sandbox", "workspace-write"],
    );
    if jsonl(&out).iter().any(|e| {
        e["type"] == "error"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("No process sandbox"))
    }) {
        eprintln!("skipped: the kernel has no Landlock");
        return;
    }
    assert_eq!(repo.read("in.txt"), "inside\n");
    assert!(!escape.exists(), "the pane wrote outside the workspace");
    let last = last_messages(&mock);
    assert!(last[1].contains("Permission denied"), "{}", last[1]);
    let alive = || {
        std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!alive(), "`{marker}` outlived the session");
}

#[test]
fn terminus_2_in_read_only_mode_says_why_its_terminal_cannot_start() {
    if !have_tmux() {
        eprintln!("skipped: terminus-2 needs tmux, which this machine does not have");
        return;
    }
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        terminus(&["cat calc.py\n"], false),
        terminus(&[], true),
        terminus(&[], true),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &mock,
        "mock-model",
        &["--harness", "terminus-2", "--sandbox", "read-only"],
    );
    if jsonl(&out).iter().any(|e| {
        e["type"] == "error"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("No process sandbox"))
    }) {
        eprintln!("skipped: the kernel has no Landlock");
        return;
    }
    let last = last_messages(&mock);
    assert_eq!(last.len(), 3, "the session went on");
    assert!(
        last[1].starts_with("the tmux server could not start")
            && last[1].contains("terminus-2 needs a mode that allows writes"),
        "{}",
        last[1]
    );
}

#[cfg(unix)]
#[test]
fn terminus_2_without_tmux_says_so_and_the_session_goes_on() {
    let repo = calc_repo();
    // A PATH with a shell and nothing else.
    let bin = tempfile::tempdir().unwrap();
    for tool in ["bash", "sh", "env"] {
        let target = which(tool);
        std::os::unix::fs::symlink(&target, bin.path().join(tool)).unwrap();
    }
    let mock = MockServer::start_blocking(Script::new([
        terminus(&["ls\n"], false),
        terminus(&[], true),
        terminus(&[], true),
    ]))
    .unwrap();
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    a.extend(["--harness".to_string(), "terminus-2".to_string()]);
    let home = repo.home.path().display().to_string();
    let path = bin.path().display().to_string();
    let out = repo.run_with_env(&a, "fix add", &[("HOME", &home), ("PATH", &path)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = last_messages(&mock);
    assert_eq!(last.len(), 3);
    assert!(last[1].contains("terminus-2 needs tmux"), "{}", last[1]);
}

#[cfg(unix)]
fn which(tool: &str) -> std::path::PathBuf {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|d| std::path::Path::new(d).join(tool))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("no {tool}"))
}

#[test]
fn opencode_uses_its_ten_tools_with_its_texts() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let web = format!("http://{}", mock.addr());
    let calc = abs(&repo, "calc.py");
    mock.set_script(Script::new([
        Reply::default()
            .then_tool_call("r1", "read", json!({"filePath": calc}))
            .then_tool_call("g1", "glob", json!({"pattern": "*.py"}))
            .then_tool_call("g2", "grep", json!({"pattern": "def add", "include": "*.py"})),
        Reply::tool_call(
            "e1",
            "edit",
            json!({"filePath": calc, "oldString": "a - b", "newString": "a + b"}),
        ),
        Reply::tool_call(
            "w1",
            "write",
            json!({"filePath": abs(&repo, "NOTES.md"), "content": "fixed add\n"}),
        ),
        Reply::tool_call(
            "b1",
            "bash",
            json!({"command": CHECK.replace("6", "5"), "description": "Check that add works"}),
        ),
        Reply::tool_call(
            "t1",
            "todowrite",
            json!({"todos": [{"content": "Fix add", "status": "completed", "priority": "high"}]}),
        ),
        Reply::default()
            .then_tool_call("f1", "webfetch", json!({"url": format!("{web}/web/docs")}))
            .then_tool_call(
                "f2",
                "webfetch",
                json!({"url": format!("{web}/web/docs"), "format": "text"}),
            )
            .then_tool_call(
                "f3",
                "webfetch",
                json!({"url": format!("{web}/web/docs"), "format": "html"}),
            ),
        Reply::tool_call("s1", "skill", json!({"name": "review"})),
        Reply::tool_call(
            "k1",
            "task",
            json!({"description": "Find the answer", "prompt": "Say 42.", "subagent_type": "general"}),
        ),
        Reply::text("42"),
        Reply::text("Done."),
    ]));
    run(
        &repo,
        &mock,
        "mock-model",
        &["--harness", "opencode", "-c", "web.allow_private=true"],
    );
    assert_eq!(repo.read("calc.py"), FIXED);
    let reqs = mock.model_requests();
    assert_eq!(
        tool_names(&reqs[0].body),
        [
            "bash",
            "edit",
            "glob",
            "grep",
            "read",
            "skill",
            "task",
            "todowrite",
            "webfetch",
            "write"
        ]
    );
    let bash = &reqs[0].body["tools"][0]["function"]["parameters"];
    assert_eq!(bash["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(bash["additionalProperties"], false);
    let system = reqs[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains(
            "You are powered by the model named mock-model. The exact model ID is mock/mock-model"
        ),
        "{system}"
    );
    assert!(system.contains("<env>\n  Working directory: "), "{system}");
    let r = results(&reqs.last().unwrap().body);
    assert_eq!(
        r[0],
        format!(
            "<path>{calc}</path>\n<type>file</type>\n<content>\n1: def add(a, b):\n2:     return a - b\n\n(End of file - total 2 lines)\n</content>"
        )
    );
    assert_eq!(r[1], calc);
    assert_eq!(
        r[2],
        format!("Found 1 matches\n{calc}:\n  Line 1: def add(a, b):")
    );
    assert_eq!(r[3], "Edit applied successfully.");
    assert_eq!(r[4], "Wrote file successfully.");
    assert_eq!(r[5], "(no output)");
    assert_eq!(
        r[6],
        "[\n  {\n    \"content\": \"Fix add\",\n    \"status\": \"completed\",\n    \"priority\": \"high\"\n  }\n]"
    );
    // The page in each of opencode's formats: Markdown, its text, its HTML.
    assert!(r[7].contains("**docs**. The answer is 42."), "{}", r[7]);
    assert!(
        r[8].contains("This page is about docs. The answer is 42."),
        "{}",
        r[8]
    );
    assert!(!r[8].contains('<') && !r[8].contains("**"), "{}", r[8]);
    assert!(r[9].contains("<strong>docs</strong>"), "{}", r[9]);
    assert!(
        r[10].starts_with("<skill_content name=\"review\">\n# Skill: review\n"),
        "{}",
        r[10]
    );
    // One title request, beside the first turn, answered by the mock and not from the script.
    let titles = mock.title_requests();
    assert_eq!(titles.len(), 1);
    let t = &titles[0].body;
    assert!(t.get("tools").is_none(), "{t}");
    assert_eq!(t["max_tokens"], 32000);
    assert_eq!(t["temperature"], 1.0);
    let msgs = t["messages"].as_array().unwrap();
    assert!(
        msgs[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You write titles for conversations.")
    );
    assert_eq!(
        msgs[1]["content"],
        "Generate a title for this conversation:\n"
    );
    assert_eq!(msgs[2]["content"], "\"fix add\"");
    assert!(r[11].starts_with("task_id: ses_"), "{}", r[11]);
    assert!(
        r[11].ends_with(
            "(for resuming to continue this task if needed)\n\n<task_result>\n42\n</task_result>"
        ),
        "{}",
        r[11]
    );
}

#[test]
fn little_coder_keeps_a_shell_and_evidence_and_refuses_to_overwrite() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let web = format!("http://{}", mock.addr());
    mock.set_script(Script::new([
        Reply::default()
            .then_tool_call("r1", "read", json!({"path": "calc.py"}))
            .then_tool_call("g1", "glob", json!({"pattern": "*.py"})),
        Reply::tool_call(
            "e1",
            "edit",
            json!({"path": "calc.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}),
        ),
        Reply::tool_call("w1", "write", json!({"path": "calc.py", "content": "x"})),
        Reply::tool_call("w2", "write", json!({"path": "NOTES.md", "content": "fixed\n"})),
        Reply::tool_call("b1", "bash", json!({"command": CHECK.replace("6", "5")})),
        Reply::tool_call(
            "s1",
            "ShellSession",
            json!({"command": "mkdir -p sub && cd sub && export GREETING=hi"}),
        ),
        Reply::tool_call("s2", "ShellSession", json!({"command": "echo $GREETING; pwd; exit_code_test() { return 4; }; exit_code_test"})),
        Reply::tool_call("s3", "ShellSessionCwd", json!({})),
        Reply::tool_call("s4", "ShellSession", json!({"command": "sleep 5", "timeout": 1})),
        Reply::tool_call("s5", "ShellSessionCwd", json!({})),
        Reply::tool_call("s6", "ShellSessionReset", json!({})),
        Reply::tool_call("f1", "webfetch", json!({"url": format!("{web}/web/docs")})),
        Reply::tool_call("q1", "websearch", json!({"query": "rust traits"})),
        Reply::tool_call(
            "v1",
            "EvidenceAdd",
            json!({"source": format!("{web}/web/docs"), "note": "the answer", "snippet": "The answer is 42."}),
        ),
        Reply::default()
            .then_tool_call("v2", "EvidenceGet", json!({"id": "E1"}))
            .then_tool_call("v3", "EvidenceList", json!({})),
        Reply::text("Fixed; see the url."),
    ]));
    run(
        &repo,
        &mock,
        "mock-model",
        &[
            "--harness",
            "little-coder",
            // No browser, whatever this machine has: the Browser tools are not offered.
            "-c",
            "web.browser=\"/nonexistent/chromium\"",
            "-s",
            "workspace-write",
            "-c",
            "web.allow_private=true",
            "-c",
            &format!("web.search_url=\"{web}/search\""),
        ],
    );
    assert_eq!(repo.read("calc.py"), FIXED);
    assert_eq!(repo.read("NOTES.md"), "fixed\n");
    let reqs = mock.model_requests();
    let first = &reqs[0].body;
    assert_eq!(
        tool_names(first),
        [
            "read",
            "bash",
            "edit",
            "write",
            "EvidenceAdd",
            "EvidenceGet",
            "EvidenceList",
            "glob",
            "webfetch",
            "websearch",
            "ShellSession",
            "ShellSessionCwd",
            "ShellSessionReset"
        ]
    );
    // The original's request fields; the mock model is not a Kimi model.
    assert_eq!(first["temperature"], 0.3);
    assert_eq!(first["store"], false);
    assert_eq!(first["reasoning_effort"], "high");
    assert_eq!(first["thinking"]["type"], "enabled");
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("# little-coder\n"), "{system}");
    assert!(system.contains("\nCurrent working directory: "), "{system}");
    // "fix add" asks about code: the read/write guidance.
    assert!(system.ends_with("never a placeholder."), "{system}");
    let r = results(&reqs.last().unwrap().body);
    let root = abs(&repo, "");
    let root = root.trim_end_matches('/');
    assert_eq!(r[0], "def add(a, b):\n    return a - b");
    assert_eq!(r[1], format!("{root}/calc.py"));
    assert_eq!(r[2], "Successfully replaced 1 block(s) in calc.py.");
    assert!(
        r[3].starts_with(
            "calc.py already exists, and write only creates new files. Change it with edit: {"
        ),
        "{}",
        r[3]
    );
    assert_eq!(r[4], "Successfully wrote 6 bytes to NOTES.md");
    assert_eq!(r[5], "(no output)");
    assert_eq!(r[6], format!("[exit=0 cwd={root}/sub timed_out=false]"));
    assert_eq!(
        r[7],
        format!("hi\n{root}/sub\n[exit=4 cwd={root}/sub timed_out=false]")
    );
    assert_eq!(r[8], format!("{root}/sub"));
    assert_eq!(r[9], format!("[exit=-1 cwd={root} timed_out=true]"));
    // A timed-out command resets the session: the next starts in the workspace.
    assert_eq!(r[10], root);
    assert_eq!(
        r[11],
        "No shell session was running; the next command starts one."
    );
    assert!(r[12].contains("The answer is 42."), "{}", r[12]);
    assert!(
        r[13].starts_with("## Results for \"rust traits\"\n\n- ["),
        "{}",
        r[13]
    );
    assert_eq!(r[14], format!("Saved evidence E1 from {web}/web/docs."));
    assert_eq!(
        r[15],
        format!("E1\nsource: {web}/web/docs\nnote: the answer\n\nThe answer is 42.")
    );
    assert_eq!(r[16], format!("E1  {web}/web/docs  the answer"));
}

#[test]
fn kimi_code_makes_budgets_and_completes_a_goal_and_loads_a_skill() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "CreateGoal",
            json!({"objective": "Fix add", "completionCriterion": "add(2, 3) == 5"}),
        ),
        Reply::default()
            .then_tool_call("c2", "CreateGoal", json!({"objective": "Another"}))
            .then_tool_call("b1", "SetGoalBudget", json!({"value": 5, "unit": "turns"}))
            .then_tool_call("b2", "SetGoalBudget", json!({"value": 48, "unit": "hours"})),
        Reply::tool_call("g1", "GetGoal", json!({})),
        Reply::tool_call("s1", "Skill", json!({"skill": "review", "args": "calc.py"})),
        Reply::tool_call("u1", "UpdateGoal", json!({"status": "complete"})),
        Reply::tool_call("g2", "GetGoal", json!({})),
        Reply::text("Done."),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "kimi-code"]);
    let reqs = mock.model_requests();
    let names = tool_names(&reqs[0].body);
    for t in [
        "CreateGoal",
        "GetGoal",
        "SetGoalBudget",
        "Skill",
        "UpdateGoal",
    ] {
        assert!(names.iter().any(|n| n == t), "{t} in {names:?}");
    }
    // Kimi Code's own UpdateGoal: no second goal tool joins it.
    let last = &reqs.last().unwrap().body;
    assert!(!tool_names(last).iter().any(|n| n == "update_goal"));
    let r = results(last);
    let created: Value = serde_json::from_str(&r[0]).unwrap();
    assert_eq!(created["goal"]["objective"], "Fix add");
    assert_eq!(created["goal"]["completionCriterion"], "add(2, 3) == 5");
    assert_eq!(created["goal"]["status"], "active");
    assert_eq!(
        r[1],
        "ERROR: Goal not created: a current goal already exists. Pass replace=true to replace it."
    );
    assert_eq!(r[2], "Goal budget set: 5 turns.");
    assert_eq!(
        r[3],
        "Goal budget not set: 48 hours is not a reasonable goal budget."
    );
    let got: Value = serde_json::from_str(&r[4]).unwrap();
    assert_eq!(got["goal"]["budget"]["turnBudget"], 5);
    assert_eq!(got["goal"]["budget"]["remainingTurns"], 5);
    assert_eq!(got["goal"]["budget"]["overBudget"], false);
    assert!(
        r[5].starts_with("Skill \"review\" loaded inline. Follow its instructions.\n\n<kimi-skill-loaded name=\"review\" trigger=\"model-tool\" source=\"builtin\""),
        "{}",
        r[5]
    );
    assert!(r[5].contains("calc.py"), "{}", r[5]);
    assert!(
        r[6].starts_with("Goal completed successfully.\nWorked 0 turns over "),
        "{}",
        r[6]
    );
    assert_eq!(r[7], "{\n  \"goal\": null\n}");
}

#[test]
fn qwen_code_runs_a_command_in_the_background_and_hears_when_it_ends() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "b1",
            "run_shell_command",
            json!({"command": "echo started > bg.txt", "is_background": true}),
        ),
        Reply::tool_call(
            "b2",
            "run_shell_command",
            json!({"command": "sleep 1; cat bg.txt", "is_background": false}),
        ),
        Reply::text("Done."),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "qwen-code"]);
    let reqs = mock.model_requests();
    let shell = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "run_shell_command")
        .unwrap();
    assert_eq!(
        shell["function"]["parameters"]["required"],
        json!(["command", "is_background"])
    );
    let r = results(&reqs.last().unwrap().body);
    assert!(
        r[0].starts_with("Command: echo started > bg.txt\nDirectory: (root)\nOutput: Started in the background as task b1; its output goes to "),
        "{}",
        r[0]
    );
    assert!(r[1].contains("Output: started\n"), "{}", r[1]);
    // The task's end reaches the model in a later request.
    let last = reqs.last().unwrap().body.to_string();
    assert!(last.contains("<task-notification>"), "{last}");
}

/// A subagent the model names is continued with its own history: Z Code's SendMessage (on
/// Messages), opencode's `task_id`, Kimi Code's `resume`.
#[test]
fn a_finished_subagent_is_continued_by_its_id_in_every_harness_that_names_one() {
    let repo = calc_repo();
    let script = |call: Reply| {
        Script::new([
            Reply::tool_call(
                "a1",
                "Agent",
                json!({"description": "Keep a number", "prompt": "Remember the number 7.", "subagent_type": "general-purpose"}),
            ),
            Reply::text("Noted: 7."),
            call,
            Reply::text("It was 7."),
            Reply::text("Done."),
        ])
    };
    // Z Code, on the Messages wire.
    let mock = MockServer::start_blocking(script(Reply::tool_call(
        "s1",
        "SendMessage",
        json!({"to": "agent_{{last_uuid}}", "summary": "ask back", "message": "Which number?"}),
    )))
    .unwrap();
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "messages"));
    a.extend(["--harness".into(), "zcode".into()]);
    let out = repo.run(&a, "keep a number");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = mock.model_requests();
    // The continued subagent's request holds its first exchange and the new message.
    let resumed = reqs[3].body.to_string();
    assert!(
        resumed.contains("Remember the number 7.")
            && resumed.contains("Noted: 7.")
            && resumed.contains("Which number?"),
        "{resumed}"
    );
    let last = reqs.last().unwrap().body.to_string();
    assert!(last.contains("agentId: agent_"), "{last}");
    assert!(last.contains("Message delivered to agent_"), "{last}");
    assert!(last.contains("Its reply:\\n\\nIt was 7."), "{last}");

    // opencode's task_id.
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "t1",
            "task",
            json!({"description": "Keep a number", "prompt": "Remember the number 7.", "subagent_type": "general"}),
        ),
        Reply::text("Noted: 7."),
        Reply::tool_call(
            "t2",
            "task",
            json!({"description": "Ask back", "prompt": "Which number?", "subagent_type": "general", "task_id": "ses_{{last_uuid}}"}),
        ),
        Reply::text("It was 7."),
        Reply::tool_call("t3", "task", json!({"description": "x", "prompt": "y", "subagent_type": "general", "task_id": "ses_nope"})),
        Reply::text("Done."),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "opencode"]);
    let reqs = mock.model_requests();
    let resumed = reqs[3].body.to_string();
    assert!(
        resumed.contains("Noted: 7.") && resumed.contains("Which number?"),
        "{resumed}"
    );
    let r = results(&reqs.last().unwrap().body);
    assert!(
        r[1].ends_with("<task_result>\nIt was 7.\n</task_result>"),
        "{}",
        r[1]
    );
    // The same id again: the task it names is the one continued.
    assert_eq!(r[0].lines().next(), r[1].lines().next());
    assert_eq!(
        r[2],
        "No finished subagent has the id nope: start a new one."
    );
}

#[test]
fn kimi_code_globs_newest_first_with_folders_and_counts_a_total() {
    let repo = calc_repo();
    repo.write("pkg/old.py", "add = 1\n");
    // An older file: listed after the ones changed since.
    let old = std::fs::File::options()
        .write(true)
        .open(repo.path().join("pkg/old.py"))
        .unwrap();
    old.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
        .unwrap();
    repo.write("pkg/new.py", "add = 2\nadd = 3\n");
    let mock = MockServer::start_blocking(Script::new([
        Reply::default()
            .then_tool_call("g1", "Glob", json!({"pattern": "pkg"}))
            .then_tool_call("g2", "Glob", json!({"pattern": "pkg/*.py"}))
            .then_tool_call(
                "g3",
                "Glob",
                json!({"pattern": "pkg", "include_dirs": false}),
            )
            .then_tool_call(
                "r1",
                "Grep",
                json!({"pattern": "add", "output_mode": "count_matches"}),
            ),
        Reply::text("Done."),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "kimi-code"]);
    let r = results(&mock.model_requests().last().unwrap().body);
    assert_eq!(r[0].trim_end(), "pkg", "{}", r[0]);
    assert_eq!(r[1].trim_end(), "pkg/new.py\npkg/old.py", "{}", r[1]);
    assert_eq!(r[2].trim_end(), "No files found.", "{}", r[2]);
    assert!(
        r[3].ends_with("\n\nFound 4 total occurrences across 3 files."),
        "{}",
        r[3]
    );
}

#[test]
fn deepseek_tui_runs_background_commands_the_web_and_named_agents() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let web = format!("http://{}", mock.addr());
    mock.set_script(Script::new([
        Reply::tool_call(
            "e1",
            "exec_shell",
            json!({"command": "read line; echo got $line", "background": true, "interactive": true}),
        ),
        Reply::tool_call(
            "e2",
            "exec_shell_interact",
            json!({"task_id": "b1", "input": "hello\n", "timeout_ms": 5000}),
        ),
        Reply::tool_call(
            "e3",
            "exec_shell",
            json!({"command": "sleep 30", "background": true}),
        ),
        Reply::tool_call("e4", "exec_shell_cancel", json!({"task_id": "b2"})),
        Reply::tool_call(
            "e5",
            "exec_wait",
            json!({"task_id": "b2", "timeout_ms": 5000}),
        ),
        Reply::default()
            .then_tool_call("f1", "fetch_url", json!({"url": format!("{web}/web/docs")}))
            .then_tool_call("s1", "web_search", json!({"q": "rust traits"}))
            .then_tool_call("t1", "todo_add", json!({"content": "Fix add"}))
            .then_tool_call("p1", "project_map", json!({"max_depth": 1})),
        Reply::tool_call(
            "a1",
            "agent_open",
            json!({"name": "keeper", "prompt": "Remember the number 7."}),
        ),
        Reply::text("Noted: 7."),
        Reply::tool_call(
            "a2",
            "agent_eval",
            json!({"name": "keeper", "message": "Which number?"}),
        ),
        Reply::text("It was 7."),
        Reply::text("Done."),
    ]));
    run(
        &repo,
        &mock,
        "mock-model",
        &[
            "--harness",
            "deepseek-tui",
            "-c",
            "web.allow_private=true",
            "-c",
            &format!("web.search_url=\"{web}/search\""),
        ],
    );
    let reqs = mock.model_requests();
    let names = tool_names(&reqs[0].body);
    for t in [
        "exec_shell_wait",
        "fetch_url",
        "web_search",
        "todo_write",
        "tool_agent",
        "agent_open",
        "project_map",
    ] {
        assert!(names.iter().any(|n| n == t), "{t} in {names:?}");
    }
    let r = results(&reqs.last().unwrap().body);
    let json_of =
        |s: &str| -> Value { serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}")) };
    assert_eq!(json_of(&r[0])["task_id"], "b1");
    let interacted = json_of(&r[1]);
    assert_eq!(interacted["output"], "got hello\n", "{interacted}");
    assert_eq!(json_of(&r[3])["cancelled"], json!(["b2"]));
    let waited = json_of(&r[4]);
    assert_ne!(waited["status"], "running", "{waited}");
    let page = json_of(&r[5]);
    assert!(
        page["content"]
            .as_str()
            .unwrap()
            .contains("The answer is 42."),
        "{page}"
    );
    assert!(
        json_of(&r[6])["results"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "{}",
        r[6]
    );
    assert!(r[7].starts_with("Todo list updated (1 items"), "{}", r[7]);
    assert!(r[8].contains("calc.py"), "{}", r[8]);
    let opened = json_of(&r[9]);
    assert_eq!(opened["result"], "Noted: 7.");
    let again = json_of(&r[10]);
    assert_eq!(again["result"], "It was 7.");
    assert_eq!(again["agent_id"], opened["agent_id"]);
    // The continued agent saw its first exchange.
    let resumed = reqs[reqs.len() - 2].body.to_string();
    assert!(
        resumed.contains("Noted: 7.") && resumed.contains("Which number?"),
        "{resumed}"
    );
}

#[test]
fn kimi_code_enters_plan_mode_and_presents_its_plan_with_options() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("p1", "EnterPlanMode", json!({})),
        Reply::tool_call(
            "w1",
            "Write",
            json!({"path": "NOTES.md", "content": "x"}),
        ),
        Reply::tool_call(
            "p2",
            "ExitPlanMode",
            json!({"plan": "1. Fix add in calc.py", "options": [{"label": "Patch", "description": "change the operator"}, {"label": "Rewrite"}]}),
        ),
        Reply::text("Waiting for approval."),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "kimi-code"]);
    assert!(!repo.path().join("NOTES.md").exists());
    let reqs = mock.model_requests();
    let names = tool_names(&reqs[0].body);
    assert!(
        names.iter().any(|n| n == "EnterPlanMode") && names.iter().any(|n| n == "ExitPlanMode")
    );
    let r = results(&reqs.last().unwrap().body);
    assert!(r[0].contains("plan mode"), "{}", r[0]);
    assert!(
        r[1].contains("read-only"),
        "plan mode refuses the write: {}",
        r[1]
    );
    // exec answers every approval with no: the plan stays unapproved.
    assert!(r[2].contains("did not approve the plan"), "{}", r[2]);
}

#[test]
fn deepseek_tui_reverts_the_last_turns_files_through_the_checkpoints() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "w1",
            "write_file",
            json!({"path": "notes.txt", "content": "made by turn one\n"}),
        ),
        Reply::text("Wrote it."),
        Reply::tool_call("r1", "revert_turn", json!({})),
        Reply::tool_call("r2", "revert_turn", json!({"turn_offset": 5})),
        Reply::text("Reverted."),
    ]))
    .unwrap();
    let first = mock_llm::e2e::exec_args(&mock.url(), &["--json", "--harness", "deepseek-tui"]);
    let out = repo.run(&first, "write notes");
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    assert_eq!(repo.read("notes.txt"), "made by turn one\n");
    let next = mock_llm::e2e::exec_args(
        &mock.url(),
        &["--json", "--harness", "deepseek-tui", "resume", &id],
    );
    let out = repo.run(&next, "take it back");
    mock_llm::e2e::succeeded(&out);
    assert!(
        !repo.path().join("notes.txt").exists(),
        "the turn's file is gone"
    );
    let r = results(&mock.model_requests().last().unwrap().body);
    let reverted: Value = serde_json::from_str(&r[r.len() - 2]).unwrap();
    assert_eq!(reverted["reverted_turns"], 1);
    assert_eq!(reverted["removed"], json!(["notes.txt"]));
    assert!(
        r[r.len() - 1].contains("only 1 turn(s) can be undone, not 5"),
        "{}",
        r[r.len() - 1]
    );
}

#[test]
fn claude_code_works_in_a_worktree_and_leaves_it_keeping_or_removing() {
    let repo = calc_repo();
    mock_llm::e2e::git(repo.path(), &["add", "."]);
    mock_llm::e2e::git(
        repo.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
    );
    let top = std::fs::canonicalize(repo.path()).unwrap();
    let wt = top.join(".claude/worktrees/fix-add");
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("x0", "ExitWorktree", json!({"action": "keep"})),
        Reply::tool_call("e1", "EnterWorktree", json!({"name": "fix-add"})),
        Reply::tool_call(
            "w1",
            "Write",
            json!({"file_path": wt.join("notes.txt"), "content": "in the worktree\n"}),
        ),
        Reply::tool_call(
            "b1",
            "Bash",
            json!({"command": "pwd && git branch --show-current", "description": "where"}),
        ),
        Reply::tool_call(
            "w2",
            "Write",
            json!({"file_path": top.join("outside.txt"), "content": "no\n"}),
        ),
        Reply::tool_call("e2", "EnterWorktree", json!({"name": "second"})),
        Reply::tool_call("x1", "ExitWorktree", json!({"action": "remove"})),
        Reply::tool_call("x2", "ExitWorktree", json!({"action": "keep"})),
        Reply::tool_call("b2", "Bash", json!({"command": "pwd", "description": "where"})),
        Reply::tool_call(
            "e3",
            "EnterWorktree",
            json!({"path": ".claude/worktrees/fix-add"}),
        ),
        Reply::tool_call("x3", "ExitWorktree", json!({"action": "remove"})),
        Reply::tool_call("x4", "ExitWorktree", json!({"action": "keep"})),
        Reply::tool_call("e4", "EnterWorktree", json!({"name": "fix-add"})),
        Reply::tool_call("e5", "EnterWorktree", json!({"name": "second"})),
        Reply::tool_call(
            "w3",
            "Write",
            json!({"file_path": top.join(".claude/worktrees/second/draft.txt"), "content": "draft\n"}),
        ),
        Reply::tool_call(
            "x5",
            "ExitWorktree",
            json!({"action": "remove", "discard_changes": true}),
        ),
        Reply::text("Done."),
    ]))
    .unwrap();
    run(&repo, &mock, "mock-model", &["--harness", "claude-code"]);
    let reqs = mock.model_requests();
    let names = tool_names(&reqs[0].body);
    assert!(
        names.iter().any(|n| n == "EnterWorktree") && names.iter().any(|n| n == "ExitWorktree")
    );
    let r = results(&reqs.last().unwrap().body);
    let wt_s = wt.display().to_string();
    assert!(
        r[0].starts_with("No active EnterWorktree session"),
        "{}",
        r[0]
    );
    assert_eq!(
        r[1],
        format!(
            "Created worktree at {wt_s} on branch worktree-fix-add. The session is now working in the worktree. Use ExitWorktree to leave mid-session; when the session ends, the worktree stays on disk."
        )
    );
    assert!(
        r[3].contains(&wt_s) && r[3].contains("worktree-fix-add"),
        "{}",
        r[3]
    );
    // The folder from before is outside the session's workspace while it works in the worktree.
    assert!(!top.join("outside.txt").exists(), "{}", r[4]);
    assert!(r[5].contains("Already in a worktree session"), "{}", r[5]);
    assert!(
        r[6].contains("1 uncommitted file(s): notes.txt") && r[6].contains("discard_changes"),
        "{}",
        r[6]
    );
    assert!(
        r[7].starts_with(&format!(
            "Exited worktree. Your work is preserved at {wt_s} on branch worktree-fix-add."
        )),
        "{}",
        r[7]
    );
    assert_eq!(
        r[8].lines().next(),
        Some(top.display().to_string().as_str()),
        "{}",
        r[8]
    );
    assert!(
        r[9].starts_with(&format!(
            "Switched to worktree at {wt_s} on branch worktree-fix-add."
        )),
        "{}",
        r[9]
    );
    assert!(r[10].contains("entered by path"), "{}", r[10]);
    assert!(r[12].contains("already exists"), "{}", r[12]);
    // The prompt named the worktree while the session worked in it.
    let system = |i: usize| reqs[i].body["messages"][0].to_string();
    assert!(
        system(2).contains(&wt_s),
        "the worktree is not in the prompt"
    );
    assert!(!system(0).contains(&wt_s));
    assert!(
        !system(9).contains(&wt_s),
        "the prompt still names the worktree"
    );
    assert!(
        r[15].starts_with("Exited and removed worktree at"),
        "{}",
        r[15]
    );
    assert!(wt.join("notes.txt").exists(), "kept worktree lost its file");
    assert!(!top.join(".claude/worktrees/second").exists());
    let branches = mock_llm::e2e::git(&top, &["branch", "--list"]);
    assert!(
        branches.contains("worktree-fix-add") && !branches.contains("worktree-second"),
        "{branches}"
    );
}
