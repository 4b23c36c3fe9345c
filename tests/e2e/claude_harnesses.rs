//! claude-code, claude-code-bare and zcode end to end through `interpreter exec` against the
//! mock, which checks every request's history against its wire's rules (a history the real
//! API would refuse gets a 400 and fails the run). Each task reads a file, edits it, runs a
//! failing command and sees the original's failure text, updates the plan, and finishes.

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

fn exec_args(mock: &MockServer, wire: &str, model: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), wire));
    a.extend(["-c".to_string(), format!("model=\"{model}\"")]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Runs in an isolated HOME so user-level skills of the machine do not leak in.
fn run(repo: &TestRepo, args: &[String], stdin: &str) -> std::process::Output {
    let home = repo.home.path().display().to_string();
    repo.run_with_env(args, stdin, &[("HOME", home.as_str())])
}

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The tool results of a Messages request, in order: (content, is_error).
fn message_results(body: &Value) -> Vec<(String, bool)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            (
                b["content"].as_str().unwrap_or("").to_string(),
                b["is_error"] == true,
            )
        })
        .collect()
}

/// The tool results of a Chat request, in order.
fn chat_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

const CHECK: &str = "python3 -c 'import calc; assert calc.add(2, 3) == 6, \"add is wrong\"'";

fn calc_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo
}

fn todos(first: &str, second: &str) -> Value {
    json!({"todos": [
        {"content": "Fix add", "status": first, "activeForm": "Fixing add"},
        {"content": "Check it", "status": second, "activeForm": "Checking it"}]})
}

/// The task as Claude Code would run it; `think` adds a signed thinking block to every
/// reply (the mock checks each comes back unchanged).
fn claude_script(think: bool) -> Vec<Reply> {
    let step = |r: Reply| {
        if think {
            Reply::default()
                .then_reasoning("One step at a time.")
                .event(r.events[0].clone())
        } else {
            r
        }
    };
    vec![
        step(Reply::tool_call(
            "toolu_01",
            "TaskCreate",
            json!({"subject": "Fix add", "description": "add must add", "activeForm": "Fixing add"}),
        )),
        step(Reply::tool_call(
            "toolu_02",
            "Read",
            json!({"file_path": "calc.py"}),
        )),
        step(Reply::tool_call(
            "toolu_03",
            "Edit",
            json!({"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        )),
        step(Reply::tool_call(
            "toolu_04",
            "Bash",
            json!({"command": CHECK}),
        )),
        step(Reply::tool_call(
            "toolu_05",
            "TaskUpdate",
            json!({"taskId": "1", "status": "completed"}),
        )),
        Reply::text("Fixed add; the check expects 6, which is wrong for 2 + 3."),
    ]
}

fn todo_list_kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["item"]["type"] == "todo_list")
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn claude_code_on_messages_reads_edits_runs_and_plans() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new(claude_script(true))).unwrap();
    // A Messages provider routes to claude-code; effort turns thinking on, so the mock also
    // checks that every tool-use turn comes back with its signed thinking first.
    let out = run(
        &repo,
        &exec_args(
            &mock,
            "messages",
            "claude-sonnet-4-6",
            &["-c", "model_reasoning_effort=\"high\""],
        ),
        "fix add",
    );
    ok(&out);
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 6);
    assert!(reqs.iter().all(|r| r.path.ends_with("/v1/messages")));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
    assert!(
        reqs[0]
            .header("user-agent")
            .unwrap()
            .starts_with("interpreter/")
    );
    let first = &reqs[0].body;
    assert_eq!(
        tool_names(first),
        vec![
            "Agent",
            "AskUserQuestion",
            "Bash",
            "CronCreate",
            "CronDelete",
            "CronList",
            "Edit",
            "EnterPlanMode",
            "EnterWorktree",
            "ExitPlanMode",
            "ExitWorktree",
            "Glob",
            "Grep",
            "NotebookEdit",
            "Read",
            "ScheduleWakeup",
            "Skill",
            "TaskCreate",
            "TaskGet",
            "TaskList",
            "TaskOutput",
            "TaskStop",
            "TaskUpdate",
            "WebFetch",
            "Write"
        ]
    );
    // The prompt names the task list, not TodoWrite.
    let system = first["system"].to_string();
    assert!(system.contains("TaskCreate") && !system.contains("TodoWrite"));
    assert_eq!(first["thinking"]["type"], "enabled");
    let results = message_results(&reqs[5].body);
    assert_eq!(
        results[0],
        ("Task #1 created successfully: Fix add".to_string(), false),
        "TaskCreate's text"
    );
    assert!(
        results[4].0.starts_with("Updated task #1 status"),
        "{}",
        results[4].0
    );
    assert!(
        results[1].0.starts_with("1\tdef add(a, b):\n2\t    return a - b\n<system>2 lines read from file starting from line 1. Total lines in file: 2. End of file reached.</system>"),
        "{}",
        results[1].0
    );
    assert_eq!(
        results[2],
        ("Replaced 1 occurrence in calc.py".into(), false)
    );
    let (bash, is_error) = &results[3];
    assert!(*is_error);
    assert!(
        bash.starts_with("<tool_use_error>Exit code 1\n")
            && bash.contains("AssertionError: add is wrong")
            && bash.ends_with("</tool_use_error>"),
        "{bash}"
    );
    // The thinking came back with its signature on the assistant turns.
    let assistant = &reqs[1].body["messages"][1]["content"];
    assert_eq!(assistant[0]["type"], "thinking");
    assert_eq!(
        assistant[0]["signature"],
        mock_llm::validate::thinking_signature("One step at a time.")
    );
    let events = jsonl(&out);
    assert_eq!(
        todo_list_kinds(&events),
        vec!["item.started", "item.updated", "item.completed"]
    );
    let done = events
        .iter()
        .rfind(|e| e["item"]["type"] == "todo_list")
        .unwrap();
    assert_eq!(
        done["item"]["items"],
        json!([{"text": "Fix add", "completed": true}])
    );
}

fn claude_todo_ok() -> &'static str {
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable"
}

#[test]
fn claude_code_on_chat_runs_the_same_task() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new(claude_script(false))).unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "chat", "mock-model", &["--harness", "claude-code"]),
        "fix add",
    );
    ok(&out);
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");
    let reqs = mock.model_requests();
    assert!(reqs.iter().all(|r| r.path.ends_with("/chat/completions")));
    let names = tool_names(&reqs[0].body);
    assert!(names.contains(&"TaskCreate".to_string()) && !names.contains(&"TodoWrite".to_string()));
    let results = chat_results(&reqs[5].body);
    assert_eq!(results[2], "Replaced 1 occurrence in calc.py");
    assert!(
        results[3].starts_with("<tool_use_error>Exit code 1\n")
            && results[3].contains("AssertionError: add is wrong"),
        "{}",
        results[3]
    );
    assert_eq!(todo_list_kinds(&jsonl(&out)).len(), 3);
}

#[test]
fn claude_code_bare_is_three_tools_and_edits_need_a_read() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "toolu_00",
            "Edit",
            json!({"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ),
        Reply::tool_call("toolu_01", "Read", json!({"file_path": "calc.py"})),
        Reply::tool_call(
            "toolu_02",
            "Edit",
            json!({"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ),
        Reply::tool_call("toolu_03", "Bash", json!({"command": CHECK})),
        Reply::text("Done."),
    ]))
    .unwrap();
    // DeepSeek routes to the bare profile.
    let out = run(
        &repo,
        &exec_args(&mock, "messages", "deepseek-v4-pro", &[]),
        "fix add",
    );
    ok(&out);
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");
    let reqs = mock.model_requests();
    assert_eq!(tool_names(&reqs[0].body), vec!["Bash", "Edit", "Read"]);
    let system = reqs[0].body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("CWD: "), "{system}");
    let results = message_results(&reqs[4].body);
    assert_eq!(
        results[0],
        (
            "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>".into(),
            true
        )
    );
    assert_eq!(results[1].0, "1\tdef add(a, b):\n2\t    return a - b");
    assert!(
        results[2].0.starts_with("The file ")
            && results[2].0.ends_with(
                "calc.py has been updated successfully. (file state is current in your context — no need to Read it back)"
            ),
        "{}",
        results[2].0
    );
    assert!(results[3].1 && results[3].0.contains("AssertionError: add is wrong"));
}

#[test]
fn zcode_on_messages_uses_z_code_texts_and_hidden_grep() {
    let repo = calc_repo();
    let ztodos = |a: &str, b: &str| {
        json!({"todos": [{"content": "Fix add", "status": a, "priority": "high"},
                         {"content": "Check it", "status": b, "priority": "medium"}]})
    };
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("toolu_01", "TodoWrite", ztodos("in_progress", "pending")),
        Reply::tool_call("toolu_02", "Grep", json!({"pattern": "def add"})),
        Reply::tool_call("toolu_03", "Read", json!({"file_path": "calc.py"})),
        Reply::tool_call("toolu_04", "Read", json!({"file_path": "calc.py"})),
        Reply::tool_call(
            "toolu_05",
            "Edit",
            json!({"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ),
        Reply::tool_call("toolu_06", "Bash", json!({"command": CHECK})),
        Reply::tool_call("toolu_07", "TodoWrite", ztodos("completed", "completed")),
        Reply::text("Done."),
    ]))
    .unwrap();
    // GLM on a Messages provider routes to zcode.
    let out = run(
        &repo,
        &exec_args(&mock, "messages", "glm-4.7", &[]),
        "fix add",
    );
    ok(&out);
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");
    let reqs = mock.model_requests();
    let names = tool_names(&reqs[0].body);
    assert_eq!(
        names,
        vec![
            "Agent",
            "AskUserQuestion",
            "Bash",
            "Edit",
            "EnterPlanMode",
            "ExitPlanMode",
            "Read",
            "Skill",
            "TodoRead",
            "TodoWrite",
            "WebFetch",
            "Write",
            "SendMessage",
        ]
    );
    let results = message_results(&reqs[7].body);
    let todo: Value = serde_json::from_str(&results[0].0).unwrap();
    assert_eq!(todo["oldTodos"], json!([]));
    assert_eq!(
        todo["summary"],
        json!({"total": 2, "pending": 1, "inProgress": 1, "completed": 0})
    );
    assert_eq!(results[1].0, "Found 1 file\ncalc.py");
    assert_eq!(results[2].0, "1\tdef add(a, b):\n2\t    return a - b");
    assert_eq!(
        results[3].0,
        "Wasted call — file unchanged since your last Read. Refer to that earlier tool_result instead."
    );
    assert!(results[4].0.ends_with("has been updated successfully. (file state is current in your context — no need to Read it back)"));
    assert!(results[5].1);
    assert!(
        results[5].0.starts_with("Exit code 1\n") && results[5].0.contains("add is wrong"),
        "{}",
        results[5].0
    );
    let done: Value = serde_json::from_str(&results[6].0).unwrap();
    assert_eq!(done["oldTodos"][0]["status"], "in_progress");
    assert_eq!(todo_list_kinds(&jsonl(&out)).len(), 3);
}

#[test]
fn zcode_on_chat_is_a_clear_config_error() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("x")])).unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "chat", "glm-4.7", &["--harness", "zcode"]),
        "hi",
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("harness `zcode` does not support wire_api = \"chat\": it supports messages"),
        "{err}"
    );
    assert!(mock.model_requests().is_empty());
}

#[test]
fn plan_mode_is_read_only_and_leaving_it_needs_the_user() {
    let repo = calc_repo();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("toolu_01", "EnterPlanMode", json!({})),
        Reply::tool_call(
            "toolu_02",
            "Edit",
            json!({"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ),
        Reply::tool_call(
            "toolu_03",
            "ExitPlanMode",
            json!({"plan": "1. Change `a - b` to `a + b` in calc.py"}),
        ),
        Reply::text("Waiting for approval."),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "messages", "claude-sonnet-4-6", &[]),
        "fix add",
    );
    ok(&out);
    // exec answers every approval with no: the plan is not approved and nothing changed.
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a - b\n");
    let results = message_results(&mock.model_requests()[3].body);
    assert!(
        results[0].0.starts_with("Entered plan mode."),
        "{}",
        results[0].0
    );
    assert!(
        results[1].1,
        "the edit is refused in plan mode: {}",
        results[1].0
    );
    assert!(
        results[1].0.starts_with("<tool_use_error>"),
        "{}",
        results[1].0
    );
    assert!(
        results[2].1 && results[2].0.contains("did not approve the plan"),
        "{}",
        results[2].0
    );
}

#[test]
fn messages_overload_rate_limit_and_stream_errors_are_retried() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::error(529, "Overloaded").with_header("retry-after", "0"),
        Reply::error(429, "Slow down").with_header("retry-after", "0"),
        Reply::default()
            .then_text("par")
            .then_stream_error("Overloaded", "overloaded_error"),
        Reply::text("Recovered."),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "messages", "claude-sonnet-4-6", &[]),
        "hi",
    );
    ok(&out);
    assert_eq!(mock.model_requests().len(), 4);
    let events = jsonl(&out);
    let retries: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "error")
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(retries[0].contains("HTTP 529: Overloaded"), "{retries:?}");
    assert!(retries[1].contains("HTTP 429: Slow down"), "{retries:?}");
    assert!(retries[2].contains("Overloaded"), "{retries:?}");
    let last = events
        .iter()
        .rfind(|e| e["item"]["type"] == "agent_message")
        .unwrap();
    assert_eq!(last["item"]["text"], "Recovered.");
}

#[test]
fn messages_key_goes_in_x_api_key_or_bearer_as_configured() {
    for (auth, header, value) in [
        ("x-api-key", "x-api-key", "sk-mock-0123456789"),
        ("bearer", "authorization", "Bearer sk-mock-0123456789"),
    ] {
        let repo = TestRepo::new();
        let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
        let extra = [
            "-c".to_string(),
            format!("model_providers.mock.auth=\"{auth}\""),
            "-c".to_string(),
            "model_providers.mock.env_key=\"MOCK_MESSAGES_KEY\"".to_string(),
        ];
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let home = repo.home.path().display().to_string();
        let out = repo.run_with_env(
            &exec_args(&mock, "messages", "claude-sonnet-4-6", &extra),
            "hi",
            &[
                ("HOME", home.as_str()),
                ("MOCK_MESSAGES_KEY", "sk-mock-0123456789"),
            ],
        );
        ok(&out);
        let req = &mock.model_requests()[0];
        assert_eq!(req.header(header), Some(value), "{auth}");
        let other = if header == "x-api-key" {
            "authorization"
        } else {
            "x-api-key"
        };
        assert_eq!(req.header(other), None, "{auth}");
        // Nothing names another product: our own user agent, no vendor client headers.
        assert!(
            req.header("user-agent")
                .unwrap()
                .starts_with("interpreter/")
        );
        assert!(req.header("x-app").is_none() && req.header("anthropic-beta").is_none());
        assert!(req.body.get("metadata").is_none());
    }
}

#[test]
fn claude_code_task_list_links_lists_gets_and_deletes_and_todo_write_still_answers() {
    let repo = calc_repo();
    let create = |id: &str, subject: &str| {
        Reply::tool_call(
            id,
            "TaskCreate",
            json!({"subject": subject, "description": format!("{subject}, fully")}),
        )
    };
    let mock = MockServer::start_blocking(Script::new([
        create("toolu_01", "Fix add"),
        create("toolu_02", "Check it"),
        Reply::tool_call(
            "toolu_03",
            "TaskUpdate",
            json!({"taskId": "2", "addBlockedBy": ["1"], "owner": "main", "status": "in_progress"}),
        ),
        Reply::tool_call("toolu_04", "TaskList", json!({})),
        Reply::tool_call("toolu_05", "TaskGet", json!({"taskId": "2"})),
        Reply::tool_call(
            "toolu_06",
            "TaskUpdate",
            json!({"taskId": "9", "status": "completed"}),
        ),
        Reply::tool_call(
            "toolu_07",
            "TaskUpdate",
            json!({"taskId": "1", "status": "deleted"}),
        ),
        Reply::tool_call("toolu_08", "TaskList", json!({})),
        // Not offered, but a model used to it still gets its answer.
        Reply::tool_call("toolu_09", "TodoWrite", todos("in_progress", "pending")),
        Reply::text("Listed."),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "messages", "claude-sonnet-4-6", &[]),
        "plan the fix",
    );
    ok(&out);
    let reqs = mock.model_requests();
    let results = message_results(&reqs[9].body);
    let texts: Vec<&str> = results.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "Task #1 created successfully: Fix add",
            "Task #2 created successfully: Check it",
            "Updated task #2 owner, status, blockedBy",
            "#1 [pending] Fix add\n#2 [in_progress] Check it (main) [blocked by #1]",
            "Task #2: Check it\nStatus: in_progress\nDescription: Check it, fully\nOwner: main\nBlocked by: #1",
            "<tool_use_error>Task #9 not found</tool_use_error>",
            "Updated task #1 deleted",
            "#2 [in_progress] Check it (main)",
            claude_todo_ok(),
        ]
    );
    assert!(results[5].1 && !results[4].1);
    // Each change is the session's plan, as a todo list every face shows.
    let events = jsonl(&out);
    let lists: Vec<&Value> = events
        .iter()
        .filter(|e| e["item"]["type"] == "todo_list")
        .map(|e| &e["item"]["items"])
        .collect();
    assert_eq!(
        lists[2],
        &json!([{"text": "Fix add", "completed": false}, {"text": "Check it", "completed": false}])
    );
    assert!(lists.contains(&&json!([{"text": "Check it", "completed": false}])));
}

const NOTEBOOK: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 1,\n   \"id\": \"c1\",\n   \"metadata\": {},\n   \"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"-1\\n\"\n     ]\n    }\n   ],\n   \"source\": [\n    \"print(2 - 3)\"\n   ]\n  }\n ],\n \"metadata\": {\n  \"kernelspec\": {\n   \"display_name\": \"Python 3\",\n   \"name\": \"python3\"\n  }\n },\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

#[test]
fn claude_code_notebook_edit_replaces_inserts_and_deletes_cells() {
    let repo = TestRepo::new();
    repo.write("nb.ipynb", NOTEBOOK);
    let nb = repo.path().join("nb.ipynb").display().to_string();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "toolu_01",
            "NotebookEdit",
            json!({"notebook_path": nb, "cell_id": "c1", "new_source": "a = 2\nprint(a + 3)"}),
        ),
        Reply::tool_call(
            "toolu_02",
            "NotebookEdit",
            json!({"notebook_path": nb, "new_source": "# Sums", "cell_type": "markdown", "edit_mode": "insert"}),
        ),
        Reply::tool_call(
            "toolu_03",
            "NotebookEdit",
            json!({"notebook_path": nb, "cell_id": "nope", "new_source": "", "edit_mode": "delete"}),
        ),
        Reply::tool_call(
            "toolu_04",
            "NotebookEdit",
            json!({"notebook_path": repo.path().join("gone.ipynb"), "cell_id": "c1", "new_source": "x"}),
        ),
        Reply::text("Edited."),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "messages", "claude-sonnet-4-6", &[]),
        "edit the notebook",
    );
    ok(&out);
    let text = repo.read("nb.ipynb");
    let nbv: Value = serde_json::from_str(&text).unwrap();
    let cells = nbv["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0]["cell_type"], "markdown");
    assert_eq!(cells[0]["source"], json!(["# Sums"]));
    assert_eq!(cells[1]["source"], json!(["a = 2\n", "print(a + 3)"]));
    assert_eq!(cells[1]["outputs"], json!([]));
    assert!(cells[1]["execution_count"].is_null());
    // The rest of the file is as Jupyter wrote it.
    assert!(
        text.ends_with(
            " \"metadata\": {\n  \"kernelspec\": {\n   \"display_name\": \"Python 3\",\n   \"name\": \"python3\"\n  }\n },\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"
        ),
        "{text}"
    );
    let results = message_results(&mock.model_requests()[4].body);
    assert_eq!(
        results[0],
        ("Updated cell c1 with a = 2\nprint(a + 3)".into(), false)
    );
    let id = cells[0]["id"].as_str().unwrap();
    assert_eq!(
        results[1],
        (format!("Inserted cell {id} with # Sums"), false)
    );
    assert_eq!(
        results[2],
        (
            "<tool_use_error>Cell with ID \"nope\" not found in notebook.</tool_use_error>".into(),
            true
        )
    );
    assert!(
        results[3].1 && results[3].0.contains("Notebook file does not exist"),
        "{:?}",
        results[3]
    );
    // The edits are file changes, shown and undoable like Edit's.
    let changed = jsonl(&out)
        .iter()
        .filter(|e| {
            e["type"] == "item.completed"
                && e["item"]["type"] == "file_change"
                && e["item"]["status"] == "completed"
        })
        .count();
    assert_eq!(changed, 2);
}

#[test]
fn claude_code_schedule_wakeup_says_when_the_session_keeps_no_schedule() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "toolu_01",
            "ScheduleWakeup",
            json!({"delaySeconds": 120, "reason": "checking the build", "prompt": "check the build"}),
        ),
        Reply::text("Cannot wait here."),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "messages", "claude-sonnet-4-6", &[]),
        "watch the build",
    );
    ok(&out);
    let results = message_results(&mock.model_requests()[1].body);
    assert!(
        results[0].1 && results[0].0.contains("cannot keep a schedule"),
        "{:?}",
        results[0]
    );
}
