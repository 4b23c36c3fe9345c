//! Harnesses and skills, end to end against the mock; the golden first request of every
//! harness on each wire it speaks.

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::path::PathBuf;

fn exec_args(mock: &MockServer, model: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    a.extend(["-c".to_string(), format!("model=\"{model}\"")]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Runs in an isolated HOME so user-level skills of the machine do not leak in.
fn run(repo: &TestRepo, args: &[String], stdin: &str) -> std::process::Output {
    let home = repo.home.path().display().to_string();
    repo.run_with_env(args, stdin, &[("HOME", home.as_str())])
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

/// The text of a Chat request's last user message: the prompt (reminders come before it).
fn last_user(body: &Value) -> &str {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
}

fn golden_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("README.md", "# demo\n");
    repo.write("src/lib.rs", "pub fn f() {}\n");
    repo.write("AGENTS.md", "Run `cargo test` before finishing.\n");
    repo
}

fn debug_prompt(repo: &TestRepo, harness: &str, wire: &str, model: &str) -> String {
    // The goldens show the tools that need a browser whether this machine has one or not:
    // `[web] browser` names a file, so one counts as found (none is started).
    let browser = repo.home.path().join("chromium");
    std::fs::write(&browser, "").unwrap();
    let args: Vec<String> = [
        "debug",
        "prompt",
        "--harness",
        harness,
        "-c",
        "model_provider=\"mock\"",
        "-c",
        &format!(
            "model_providers.mock={{name=\"mock\", base_url=\"http://127.0.0.1:9/v1\", wire_api=\"{wire}\"}}"
        ),
        "-c",
        &format!("model=\"{model}\""),
        "-c",
        &format!("web.browser={}", toml_string(&browser.display().to_string())),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run(repo, &args, "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Replaces what differs between machines and runs: the folder, the session id, the date,
/// the kernel.
fn normalize(body: &str, repo: &TestRepo) -> String {
    let cwd = std::fs::canonicalize(repo.path())
        .unwrap()
        .display()
        .to_string();
    let mut v: Value = serde_json::from_str(body).unwrap();
    if v.get("prompt_cache_key").is_some() {
        v["prompt_cache_key"] = json!("<SESSION>");
    }
    let text = serde_json::to_string_pretty(&v)
        .unwrap()
        .replace(&cwd, "<CWD>");
    let date = chrono_free_today(&text);
    let text = match date {
        Some(d) => text.replace(&d, "<DATE>"),
        None => text,
    };
    without_prompt_line(&without_uname(&text))
}

/// terminus-2's first screen shows the pane's prompt, `user@host:<CWD>$` (`#` for root).
fn without_prompt_line(text: &str) -> String {
    let marker = "Current terminal state:\\n";
    let Some(start) = text.find(marker).map(|i| i + marker.len()) else {
        return text.to_string();
    };
    let Some(end) = text[start..].find(":<CWD>").map(|i| start + i) else {
        return text.to_string();
    };
    let after = end + ":<CWD>".len();
    let rest = text[after..]
        .strip_prefix(['#', '$'])
        .unwrap_or(&text[after..]);
    format!("{}<USER>@<HOST>:<CWD><SIGIL>{rest}", &text[..start])
}

/// mini-swe-agent's `<system_information>` holds this machine's `uname -srvm`.
fn without_uname(text: &str) -> String {
    let open = "<system_information>\\n";
    let close = "\\n</system_information>";
    match (text.find(open), text.find(close)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}<UNAME>{}", &text[..a + open.len()], &text[b..])
        }
        _ => text.to_string(),
    }
}

/// The date the first request names, in whichever form the harness writes it
/// (`2026-12-01`, or Qwen Code's `Tuesday, December 1, 2026`).
fn chrono_free_today(text: &str) -> Option<String> {
    let marker = [
        "Today's date is ",
        "Date: ",
        "Current date: ",
        "Today's date: ",
    ]
    .into_iter()
    .find(|m| text.contains(m))?;
    let i = text.find(marker)? + marker.len();
    let rest = &text[i..];
    let end = rest.find(['.', '\\', '\n']).unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

/// The golden first requests: (harness, wire, model). Files are `<harness>.json` for Chat,
/// `<harness>.<wire>.json` otherwise. A harness not listed here gets one golden, on its
/// first wire with `mock-model` (see [`goldens`]).
const GOLDENS: &[(&str, &str, &str)] = &[
    ("kimi-code", "chat", "kimi-k3"),
    ("kimi-code", "responses", "kimi-k3"),
    ("native", "chat", "kimi-k3"),
    ("native", "responses", "gpt-5.5"),
    ("minimal", "chat", "kimi-k3"),
    ("minimal", "responses", "kimi-k3"),
    ("claude-code", "messages", "claude-sonnet-4-6"),
    ("claude-code", "chat", "claude-sonnet-4-6"),
    ("claude-code", "responses", "claude-sonnet-4-6"),
    ("claude-code-bare", "messages", "deepseek-v4-pro"),
    ("claude-code-bare", "chat", "deepseek-v4-pro"),
    ("claude-code-bare", "responses", "deepseek-v4-pro"),
    ("zcode", "messages", "glm-4.7"),
    ("kimi-cli", "chat", "kimi-k2-turbo-preview"),
    ("qwen-code", "chat", "qwen3-coder-plus"),
    ("deepseek-tui", "chat", "deepseek-chat"),
    ("swe-agent", "chat", "mock-model"),
];

/// Every harness in the registry, with the goldens [`GOLDENS`] lists for it.
fn goldens() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut all = Vec::new();
    for h in interpreter_core::harness::harnesses() {
        let listed: Vec<_> = GOLDENS.iter().filter(|g| g.0 == h.name).copied().collect();
        if listed.is_empty() {
            all.push((h.name, h.wires[0].as_str(), "mock-model"));
        }
        all.extend(listed);
    }
    all
}

#[test]
fn golden_first_request_per_harness_is_stable() {
    let golden_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for (harness, wire, model) in goldens() {
        let repo = golden_repo();
        let first = debug_prompt(&repo, harness, wire, model);
        let second = debug_prompt(&repo, harness, wire, model);
        // Byte-identical apart from the session id: the provider's prefix cache hits.
        let strip = |s: &str| {
            let mut v: Value = serde_json::from_str(s).unwrap();
            v.as_object_mut().unwrap().remove("prompt_cache_key");
            v.to_string()
        };
        assert_eq!(
            strip(&first),
            strip(&second),
            "{harness} on {wire} is not stable across runs"
        );
        let normalized = normalize(&first, &repo);
        let name = if wire == "chat" {
            format!("{harness}.json")
        } else {
            format!("{harness}.{wire}.json")
        };
        let path = golden_dir.join(name);
        if update {
            std::fs::create_dir_all(&golden_dir).unwrap();
            std::fs::write(&path, &normalized).unwrap();
            continue;
        }
        // The goldens are Linux's first requests: the platform line and the shell the
        // prompts name differ on macOS and Windows by design (stability is checked above).
        if cfg!(not(target_os = "linux")) {
            continue;
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("missing {}: run with UPDATE_GOLDEN=1", path.display()));
        assert_eq!(
            normalized, expected,
            "{harness} on {wire}: the first request changed; if intended, rerun with UPDATE_GOLDEN=1 and review the diff"
        );
    }
}

#[test]
fn debug_prompt_works_for_every_harness_on_every_wire_it_speaks() {
    let speaks = |h: &str, wire: &str| {
        interpreter_core::harness::harnesses()
            .any(|i| i.name == h && i.wires.iter().any(|w| w.as_str() == wire))
    };
    let repo = golden_repo();
    for h in interpreter_core::harness::names() {
        for wire in ["chat", "responses", "messages"] {
            let args: Vec<String> = [
                "debug",
                "prompt",
                "--harness",
                h,
                "-c",
                "model_provider=\"mock\"",
                "-c",
                &format!(
                    "model_providers.mock={{name=\"mock\", base_url=\"http://127.0.0.1:9/v1\", wire_api=\"{wire}\"}}"
                ),
                "-c",
                "model=\"mock-model\"",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let out = run(&repo, &args, "");
            let err = String::from_utf8_lossy(&out.stderr);
            if speaks(h, wire) {
                assert!(out.status.success(), "{h} on {wire}: {err}");
                let body: Value = serde_json::from_slice(&out.stdout).unwrap();
                let key = match wire {
                    "responses" => "input",
                    _ => "messages",
                };
                assert!(body[key].is_array(), "{h} on {wire}: {body}");
            } else {
                assert!(!out.status.success(), "{h} on {wire} should be refused");
                assert!(
                    err.contains(&format!(
                        "harness `{h}` does not support wire_api = \"{wire}\""
                    )),
                    "{h} on {wire}: {err}"
                );
            }
        }
    }
}

fn todo(a: &str, b: &str) -> Value {
    json!({"todos": [{"title": "Fix add", "status": a}, {"title": "Check it", "status": b}]})
}

#[test]
fn kimi_code_task_uses_kimi_tools_and_todolist_becomes_todo_list_items() {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "functions.TodoList:0",
            "TodoList",
            todo("in_progress", "pending"),
        ),
        Reply::tool_call("functions.Read:1", "Read", json!({"path": "calc.py"})),
        Reply::tool_call(
            "functions.Edit:2",
            "Edit",
            json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ),
        Reply::tool_call(
            "functions.Bash:3",
            "Bash",
            json!({"command": "python3 -c 'import calc; print(calc.add(2, 3))'"}),
        ),
        Reply::tool_call("functions.TodoList:4", "TodoList", todo("done", "done")),
        Reply::text("Fixed."),
    ]))
    .unwrap();
    // kimi-k3 picks the kimi-code harness by default.
    let out = run(&repo, &exec_args(&mock, "kimi-k3", &[]), "fix add");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");
    let events = jsonl(&out);
    let kinds: Vec<String> = events
        .iter()
        .filter(|e| e["item"]["type"] == "todo_list")
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        vec!["item.started", "item.updated", "item.completed"]
    );
    let done = events
        .iter()
        .rfind(|e| e["item"]["type"] == "todo_list")
        .unwrap();
    assert_eq!(
        done["item"]["items"],
        json!([{"text": "Fix add", "completed": true}, {"text": "Check it", "completed": true}])
    );
    assert!(
        events
            .iter()
            .any(|e| e["item"]["type"] == "file_change" && e["item"]["status"] == "completed")
    );
    assert!(events.iter().any(
        |e| e["item"]["type"] == "command_execution" && e["item"]["aggregated_output"] == "5\n"
    ));

    let reqs = mock.model_requests();
    assert_eq!(
        tool_names(&reqs[0].body),
        vec![
            "Agent",
            "AgentSwarm",
            "AskUserQuestion",
            "Bash",
            "CreateGoal",
            "CronCreate",
            "CronDelete",
            "CronList",
            "Edit",
            "EnterPlanMode",
            "ExitPlanMode",
            "FetchURL",
            "GetGoal",
            "Glob",
            "Grep",
            "Read",
            "ReadMediaFile",
            "SetGoalBudget",
            "Skill",
            "TaskList",
            "TaskOutput",
            "TaskStop",
            "TodoList",
            "UpdateGoal",
            "Write"
        ]
    );
    let results = tool_results(&reqs[5].body);
    assert!(
        results[0].starts_with("Todo list updated.\nCurrent todo list:\n  [in_progress] Fix add"),
        "{}",
        results[0]
    );
    assert!(results[1].ends_with("\n<system>2 lines read from file starting from line 1. Total lines in file: 2. End of file reached.</system>"), "{}", results[1]);
    assert!(
        results[1].starts_with("1\tdef add(a, b):\n2\t    return a - b\n"),
        "{}",
        results[1]
    );
    assert_eq!(results[2], "Replaced 1 occurrence(s) in calc.py");
    assert_eq!(results[3], "5\n");
    // Kimi rules, and the reminder in its own message before the user's.
    let first = &reqs[0].body;
    assert_eq!(first["thinking"]["type"], "enabled");
    let msgs = first["messages"].as_array().unwrap();
    assert!(
        msgs[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("<system-reminder>\nToday's date is ")
    );
    assert_eq!(msgs[2]["content"], "fix add");
    // Every assistant tool-call message echoes reasoning_content.
    for m in reqs[5].body["messages"].as_array().unwrap() {
        if m["role"] == "assistant" {
            assert!(m.get("reasoning_content").is_some(), "{m}");
        }
    }
}

#[test]
fn kimi_code_bash_failure_and_edit_errors_use_kimi_texts() {
    let repo = TestRepo::new();
    repo.write("a.txt", "x\nx\n");
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "Bash", json!({"command": "exit 3"})),
        Reply::tool_call(
            "c2",
            "Edit",
            json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
        ),
        Reply::tool_call(
            "c3",
            "Edit",
            json!({"path": "a.txt", "old_string": "nope", "new_string": "y"}),
        ),
        Reply::tool_call("c4", "Bash", json!({"command": "true"})),
        Reply::tool_call("c5", "Bash", json!({"command": "sleep 1", "timeout": 301})),
        Reply::text("ok"),
    ]))
    .unwrap();
    let out = run(&repo, &exec_args(&mock, "kimi-k3", &[]), "go");
    assert!(out.status.success());
    let r = tool_results(&mock.model_requests()[5].body);
    assert_eq!(r[0], "\nCommand failed with exit code: 3");
    assert!(
        r[1].contains("found 2 times") && r[1].contains("replace_all"),
        "{}",
        r[1]
    );
    assert_eq!(r[2], "Edit failed: old_string not found in a.txt.");
    assert_eq!(r[3], "Command executed successfully.");
    assert!(r[4].contains("between 1 and 300"), "{}", r[4]);
    assert_eq!(repo.read("a.txt"), "x\nx\n");
}

#[test]
fn the_same_task_runs_in_native_and_minimal() {
    let patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n";
    for harness in ["native", "minimal"] {
        let repo = TestRepo::new();
        repo.write("calc.py", "def add(a, b):\n    return a - b\n");
        let mut replies = vec![Reply::tool_call(
            "c1",
            "shell",
            json!({"command": "cat calc.py"}),
        )];
        if harness == "native" {
            replies.push(Reply::tool_call(
                "c1b",
                "update_plan",
                json!({"plan": [{"step": "fix", "status": "in_progress"}]}),
            ));
        }
        replies.extend([
            Reply::tool_call("c2", "apply_patch", json!({"input": patch})),
            Reply::tool_call(
                "c3",
                "shell",
                json!({"command": "python3 -c 'import calc; print(calc.add(2, 3))'"}),
            ),
            Reply::text("Fixed."),
        ]);
        let n = replies.len();
        let mock = MockServer::start_blocking(Script::new(replies)).unwrap();
        let out = run(
            &repo,
            &exec_args(&mock, "mock-model", &["--harness", harness]),
            "fix add",
        );
        assert!(
            out.status.success(),
            "{harness}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            repo.read("calc.py"),
            "def add(a, b):\n    return a + b\n",
            "{harness}"
        );
        let reqs = mock.model_requests();
        assert_eq!(reqs.len(), n);
        let names = tool_names(&reqs[0].body);
        if harness == "minimal" {
            assert_eq!(names, vec!["shell", "apply_patch"]);
            assert!(jsonl(&out).iter().all(|e| e["item"]["type"] != "todo_list"));
        } else {
            assert!(
                names.contains(&"update_plan".to_string())
                    && names.contains(&"read_file".to_string())
            );
            assert!(jsonl(&out).iter().any(|e| e["item"]["type"] == "todo_list"));
        }
        let results = tool_results(&reqs[n - 1].body);
        assert!(
            results.last().unwrap().contains("Exit code: 0")
                && results.last().unwrap().contains("5\n")
        );
    }
}

#[test]
fn slash_harness_on_the_first_stdin_line_switches_the_harness() {
    let repo = TestRepo::new();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("a"), Reply::text("b")])).unwrap();
    let out = run(&repo, &exec_args(&mock, "mock-model", &[]), "hello");
    assert!(out.status.success());
    let out = run(
        &repo,
        &exec_args(&mock, "mock-model", &[]),
        "/harness kimi-code\nhello",
    );
    assert!(out.status.success());
    let reqs = mock.model_requests();
    assert!(tool_names(&reqs[0].body).contains(&"exec_command".to_string()));
    assert!(tool_names(&reqs[1].body).contains(&"Bash".to_string()));
    assert!(
        reqs[1].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are Kimi Code")
    );
}

#[test]
fn subagent_gets_a_fresh_context_and_only_its_answer_returns() {
    let repo = TestRepo::new();
    repo.write("notes.txt", "the answer is 42\n");
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "functions.Agent:0",
            "Agent",
            json!({"description": "find the answer", "prompt": "Read notes.txt and report the answer.", "subagent_type": "explore"}),
        ),
        Reply::tool_call("functions.Read:0", "Read", json!({"path": "notes.txt"})),
        Reply::text("The answer is 42."),
        Reply::text("The subagent says 42."),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "kimi-k3", &[]),
        "what is the answer in notes?",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 4);
    // The subagent's first request: fresh history, no Agent tool.
    let sub = &reqs[1].body;
    let sub_users: Vec<&str> = sub["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(sub_users[0], "Read notes.txt and report the answer.");
    assert!(
        !sub_users
            .iter()
            .any(|u| u.contains("what is the answer in notes?"))
    );
    assert!(!tool_names(sub).contains(&"Agent".to_string()));
    // The parent sees only the final message as the Agent tool's result, in Kimi Code's
    // shape: the agent's id (to resume it), its type and status, then the summary.
    let parent = &reqs[3].body;
    let results = tool_results(parent);
    assert_eq!(results.len(), 1);
    assert!(results[0].starts_with("agent_id: "), "{}", results[0]);
    assert!(
        results[0].ends_with(
            "\nactual_subagent_type: explore\nstatus: completed\n\n[summary]\nThe answer is 42."
        ),
        "{}",
        results[0]
    );
    assert!(!parent.to_string().contains("functions.Read:0"));
    let events = jsonl(&out);
    let messages: Vec<&str> = events
        .iter()
        .filter(|e| e["item"]["type"] == "agent_message")
        .map(|e| e["item"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages, vec!["The subagent says 42."]);
    // Resuming replays the parent history without the subagent's items.
    let id = events[0]["thread_id"].as_str().unwrap();
    let log =
        std::fs::read_to_string(repo.home.path().join(format!("sessions/{id}.jsonl"))).unwrap();
    assert!(!log.contains("functions.Read:0"));
}

#[test]
fn bundled_skills_expand_on_slash_commands_and_repo_skills_override_them() {
    for (skill, marker) in [
        ("review", "# Review the working-tree diff"),
        (
            "commit-message",
            "# Write a commit message for the staged diff",
        ),
        ("explain-error", "# Explain an error"),
        ("write-tests", "# Write tests"),
    ] {
        let repo = TestRepo::new();
        let mock = MockServer::start_blocking(Script::new([
            Reply::tool_call("c1", "Bash", json!({"command": "git status --short"})),
            Reply::text("Verdict: nothing to report."),
        ]))
        .unwrap();
        let out = run(
            &repo,
            &exec_args(&mock, "kimi-k3", &[]),
            &format!("/{skill} the parser module"),
        );
        assert!(
            out.status.success(),
            "{skill}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let first = &mock.model_requests()[0].body;
        let user = last_user(first);
        assert!(
            user.starts_with(&format!(
                "<skill>\n<name>{skill}</name>\n<path>builtin://skills/{skill}/SKILL.md</path>"
            )),
            "{user}"
        );
        assert!(user.contains(marker), "{skill}: {user}");
        assert!(
            user.contains("the parser module"),
            "{skill}: $ARGUMENTS not substituted"
        );
        // The skill is also listed for the model.
        assert!(
            first["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains(&format!("- {skill}: "))
        );
    }

    let repo = TestRepo::new();
    repo.write(
        ".agents/skills/review/SKILL.md",
        "---\nname: review\ndescription: Team review checklist\n---\nCheck the changelog entry for $ARGUMENTS.\n",
    );
    repo.write(
        ".agents/skills/bad/SKILL.md",
        "---\nname: [oops\n---\nbody\n",
    );
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    let out = run(&repo, &exec_args(&mock, "kimi-k3", &[]), "/review parser");
    assert!(out.status.success());
    let user = last_user(&mock.model_requests()[0].body).to_string();
    assert!(
        user.contains("Check the changelog entry for parser."),
        "{user}"
    );
    // The broken skill is skipped with a clear warning, nothing crashes.
    let events = jsonl(&out);
    assert!(
        events.iter().any(
            |e| e["type"] == "error" && e["message"].as_str().unwrap().contains("bad/SKILL.md")
        )
    );
}

#[test]
fn read_serves_builtin_skill_files() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "Read",
            json!({"path": "builtin://skills/review/SKILL.md"}),
        ),
        Reply::text("ok"),
    ]))
    .unwrap();
    let out = run(&repo, &exec_args(&mock, "kimi-k3", &[]), "review please");
    assert!(out.status.success());
    let r = tool_results(&mock.model_requests()[1].body);
    assert!(r[0].contains("# Review the working-tree diff"), "{}", r[0]);
}

#[test]
fn kimi_codes_prompt_cache_key_is_session_and_the_id() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("hi")])).unwrap();
    let out = run(
        &repo,
        &exec_args(&mock, "kimi-k3", &["--harness", "kimi-code"]),
        "hello",
    );
    let thread = mock_llm::e2e::jsonl(&out)
        .iter()
        .find(|e| e["type"] == "thread.started")
        .map(|e| e["thread_id"].as_str().unwrap().to_string())
        .unwrap();
    assert_eq!(
        mock.model_requests()[0].body["prompt_cache_key"],
        format!("session_{thread}")
    );
    // Other harnesses send the id itself, as Codex does.
    mock.clear_requests();
    mock.set_script(Script::new([Reply::text("hi")]));
    let out = run(
        &repo,
        &exec_args(&mock, "kimi-k3", &["--harness", "native"]),
        "hello",
    );
    let thread = mock_llm::e2e::jsonl(&out)
        .iter()
        .find(|e| e["type"] == "thread.started")
        .map(|e| e["thread_id"].as_str().unwrap().to_string())
        .unwrap();
    assert_eq!(mock.model_requests()[0].body["prompt_cache_key"], thread);
}
