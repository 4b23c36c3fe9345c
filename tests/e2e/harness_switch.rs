//! One session through several harnesses and wires: native on Chat, then claude-code on
//! Messages, then kimi-code on Chat again, each run resuming the stored session with its
//! tool calls. The mock checks every request's history against its wire's rules, so a tool
//! call rendered in a form the next provider refuses fails the run with a 400.

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

/// `-c` arguments for a provider `id` on the mock with `wire`.
fn provider(mock: &MockServer, id: &str, wire: &str) -> Vec<String> {
    vec![
        "-c".into(),
        format!("model_provider=\"{id}\""),
        "-c".into(),
        format!(
            "model_providers.{id}={{name=\"{id}\", base_url=\"{}\", wire_api=\"{wire}\", retry_base_delay_ms=10}}",
            mock.url()
        ),
    ]
}

fn run(repo: &TestRepo, args: &[String], stdin: &str) -> std::process::Output {
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(args, stdin, &[("HOME", home.as_str())]);
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `exec` on provider `id`; `-c` options must all come before `resume` (clap replaces
/// global options repeated after a subcommand).
fn exec(
    mock: &MockServer,
    id: &str,
    wire: &str,
    extra: &[&str],
    resume: Option<&str>,
) -> Vec<String> {
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(provider(mock, id, wire));
    a.extend(["-c".to_string(), "model=\"mock-model\"".to_string()]);
    a.extend(extra.iter().map(|s| s.to_string()));
    if let Some(session) = resume {
        a.extend(["resume".to_string(), session.to_string()]);
    }
    a
}

fn last_tool_result(body: &Value) -> String {
    let msgs = body["messages"].as_array().unwrap();
    for m in msgs.iter().rev() {
        if m["role"] == "tool" {
            return m["content"].as_str().unwrap().to_string();
        }
        if let Some(blocks) = m["content"].as_array()
            && let Some(b) = blocks.iter().rev().find(|b| b["type"] == "tool_result")
        {
            return b["content"].as_str().unwrap_or("").to_string();
        }
    }
    panic!("no tool result in {body}")
}

#[test]
fn native_then_claude_code_on_messages_then_kimi_code_on_chat() {
    let repo = TestRepo::new();
    repo.write("notes.txt", "alpha\n");
    let mock = MockServer::start_blocking(Script::new([
        // native (chat): a shell call with a Kimi-style id the Messages API would refuse.
        Reply::tool_call(
            "functions.shell:0",
            "shell",
            json!({"command": "cat notes.txt"}),
        ),
        Reply::text("It says alpha."),
        // claude-code (messages), thinking on: signed thinking, then a Read.
        Reply::default()
            .then_reasoning("Read the file again.")
            .then_tool_call("toolu_01", "Read", json!({"file_path": "notes.txt"})),
        Reply::default()
            .then_reasoning("Now write it.")
            .then_tool_call(
                "toolu_02",
                "Write",
                json!({"file_path": "notes.txt", "content": "beta\n"}),
            ),
        Reply::text("Now it says beta."),
        // kimi-code (chat) sees both earlier harnesses' calls.
        Reply::tool_call("functions.Read:0", "Read", json!({"path": "notes.txt"})),
        Reply::text("Still beta."),
    ]))
    .unwrap();

    let out = run(
        &repo,
        &exec(&mock, "mockchat", "chat", &[], None),
        "what does notes.txt say?",
    );
    let session = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    let effort = ["-c", "model_reasoning_effort=\"high\""];
    let second = exec(&mock, "mockmsg", "messages", &effort, Some(&session));
    run(&repo, &second, "/harness claude-code\nmake it say beta");
    run(
        &repo,
        &exec(&mock, "mockchat", "chat", &[], Some(&session)),
        "/harness kimi-code\nread it once more",
    );
    assert_eq!(repo.read("notes.txt"), "beta\n");

    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 7, "every request was answered, none refused");
    // The first Messages request carries native's call under an id the API accepts.
    let m = &reqs[2].body;
    assert!(reqs[2].path.ends_with("/v1/messages"));
    let tool_use = m["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|msg| msg["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_use["name"], "shell");
    let id = tool_use["id"].as_str().unwrap();
    assert!(id.starts_with("functions_shell_0_"), "{id}");
    assert!(
        m["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "Bash")
    );
    assert!(last_tool_result(&reqs[3].body).contains("alpha"));
    // The new harness's start-of-session context came with the switch (its skills list).
    assert!(
        m.to_string()
            .contains("Skills you can run with the Skill tool"),
        "{m}"
    );
    // Back on Chat, with kimi-code's tools and every earlier call answered.
    let c = &reqs[5].body;
    assert!(reqs[5].path.ends_with("/chat/completions"));
    assert!(
        c["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are Kimi Code")
    );
    let ids: Vec<&str> = c["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(ids, vec!["functions.shell:0", "toolu_01", "toolu_02"]);
    assert!(last_tool_result(&reqs[6].body).contains("beta"));
}

/// The messages of a request as (role, text) pairs; text is "" for non-string content.
fn texts(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn native_then_claude_code_then_kimi_cli_then_swe_agent() {
    let repo = TestRepo::new();
    repo.write("notes.txt", "alpha\n");
    let notes = std::fs::canonicalize(repo.path())
        .unwrap()
        .join("notes.txt")
        .display()
        .to_string();
    let act = |command: &str| Reply::text(format!("DISCUSSION\nNext step.\n\n```\n{command}\n```"));
    let mock = MockServer::start_blocking(Script::new([
        // native (chat)
        Reply::tool_call(
            "functions.shell:0",
            "shell",
            json!({"command": "cat notes.txt"}),
        ),
        Reply::text("It says alpha."),
        // claude-code (messages), with signed thinking
        Reply::default().then_reasoning("Write it.").then_tool_call(
            "toolu_01",
            "Write",
            json!({"file_path": "notes.txt", "content": "beta\n"}),
        ),
        Reply::text("Now it says beta."),
        // kimi-cli (chat)
        Reply::tool_call("ReadFile:0", "ReadFile", json!({"path": "notes.txt"})),
        Reply::text("Still beta."),
        // swe-agent (chat, text actions)
        act(&format!(
            "str_replace_editor str_replace {notes} --old_str beta --new_str gamma"
        )),
        act("submit"),
        act("submit"),
    ]))
    .unwrap();
    let out = run(
        &repo,
        &exec(&mock, "mockchat", "chat", &[], None),
        "what does notes.txt say?",
    );
    let session = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    let effort = ["-c", "model_reasoning_effort=\"high\""];
    run(
        &repo,
        &exec(&mock, "mockmsg", "messages", &effort, Some(&session)),
        "/harness claude-code\nmake it say beta",
    );
    run(
        &repo,
        &exec(&mock, "mockchat", "chat", &[], Some(&session)),
        "/harness kimi-cli\nread it once more",
    );
    run(
        &repo,
        &exec(&mock, "mockchat", "chat", &[], Some(&session)),
        "/harness swe-agent\nnow make it say gamma",
    );
    assert_eq!(repo.read("notes.txt"), "gamma\n");
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 9, "every request was answered, none refused");
    assert!(reqs[2].path.ends_with("/v1/messages"));
    // kimi-cli on Chat: its own prompt and tools, every earlier call answered.
    let k = &reqs[4].body;
    assert!(
        k["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are Kimi CLI")
    );
    assert!(
        k["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "StrReplaceFile")
    );
    let ids: Vec<&str> = k["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(ids, ["functions.shell:0", "toolu_01"]);
    assert!(last_tool_result(&reqs[5].body).contains("beta"));
    // swe-agent: no tools, no tool calls; every earlier call is a text action with its
    // observation, and the first prompt is the task.
    let s = &reqs[6].body;
    assert!(s.get("tools").is_none());
    let msgs = texts(s);
    assert!(
        s["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m.get("tool_calls").is_none() && m["role"] != "tool")
    );
    assert!(
        msgs[0]
            .1
            .starts_with("You are a helpful assistant that can interact with a computer")
    );
    assert!(
        msgs[1]
            .1
            .contains("<pr_description>\nwhat does notes.txt say?\n</pr_description>"),
        "{:?}",
        msgs[1]
    );
    let joined: Vec<String> = msgs.iter().map(|(r, t)| format!("{r}: {t}")).collect();
    let pos = |needle: &str| {
        joined
            .iter()
            .position(|m| m.contains(needle))
            .unwrap_or_else(|| panic!("{needle} not in {joined:#?}"))
    };
    let shell = pos("assistant: ```\ncat notes.txt\n```");
    assert!(
        joined[shell + 1].starts_with("user: OBSERVATION:\n")
            && joined[shell + 1].contains("alpha")
    );
    let write = pos(&format!(
        "str_replace_editor create {notes} --file_text 'beta\n'"
    ));
    assert!(
        joined[write + 1].starts_with("user: OBSERVATION:\nWrote 5 bytes to notes.txt"),
        "{}",
        joined[write + 1]
    );
    let read = pos(&format!("```\nstr_replace_editor view {notes}\n```"));
    assert!(joined[read].starts_with("assistant: ") && joined[read + 1].contains("beta"));
    assert!(shell < write && write < read);
    assert_eq!(msgs.last().unwrap().1, "now make it say gamma");
    assert!(
        texts(&reqs[7].body)
            .last()
            .unwrap()
            .1
            .starts_with(&format!("OBSERVATION:\nThe file {notes} has been edited."))
    );
    assert!(
        texts(&reqs[8].body)
            .last()
            .unwrap()
            .1
            .contains("Run the submit command again to confirm.")
    );
}
