//! Issue 38 through the real binary and the mock model. Codex's `notify` program runs with
//! each completed turn's JSON, confined and without keys. Trusted projects: a project's own
//! config (`.codex/config.toml`, `.openinterpreter/config.toml`) loads only once the user
//! trusted the project; exec takes `--trust` and otherwise names what it left out; ACP
//! sessions load a trusted project's config and warn about an untrusted one; the answer is
//! saved in the user's config.toml as Codex saves it.

// The hostile-command tests' ACP client; not every helper is used here.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

use mock_llm::e2e::{TestRepo, exec_args};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

/// A repository whose Codex config picks pi's harness.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".codex/config.toml", "harness = \"pi\"\n");
    repo
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

fn exec(repo: &TestRepo, mock: &MockServer, extra: &[&str]) -> std::process::Output {
    let mut args = exec_args(&mock.url(), extra);
    args.push("hi".into());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", home.as_str())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

const PI_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

#[test]
fn exec_leaves_an_untrusted_projects_config_out_and_trust_loads_it_from_then_on() {
    let repo = project();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ]))
    .unwrap();
    let top = std::fs::canonicalize(repo.path()).unwrap();
    let out = exec(&repo, &mock, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&top.join(".codex/config.toml").display().to_string())
            && stderr.contains("not trusted yet")
            && stderr.contains("--trust"),
        "{stderr}"
    );
    assert_ne!(tool_names(&mock.model_requests()[0].body), PI_TOOLS);
    // `--trust` records the answer as Codex does, and the project's config loads.
    exec(&repo, &mock, &["--trust"]);
    assert_eq!(tool_names(&mock.model_requests()[1].body), PI_TOOLS);
    let user = std::fs::read_to_string(repo.home.path().join("config.toml")).unwrap();
    let saved: toml::Table = toml::from_str(&user).unwrap();
    assert_eq!(
        saved["projects"][top.to_str().unwrap()]["trust_level"].as_str(),
        Some("trusted"),
        "{user}"
    );
    // From then on without the flag.
    let out = exec(&repo, &mock, &[]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("not trusted"));
    assert_eq!(tool_names(&mock.model_requests()[2].body), PI_TOOLS);
}

#[test]
fn a_folder_inside_a_trusted_project_that_is_a_repository_of_its_own_is_not_trusted_by_it() {
    let repo = project();
    let inner = repo.path().join("vendor/dep");
    std::fs::create_dir_all(inner.join(".git")).unwrap();
    std::fs::create_dir_all(inner.join(".codex")).unwrap();
    std::fs::write(inner.join(".codex/config.toml"), "harness = \"minimal\"\n").unwrap();
    let top = std::fs::canonicalize(repo.path()).unwrap();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            top.display()
        ),
    )
    .unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    let out = exec(&repo, &mock, &["-C", inner.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("vendor/dep/.codex/config.toml"), "{stderr}");
    assert!(stderr.contains("not trusted yet"), "{stderr}");
}

#[test]
fn a_broken_project_file_is_named_and_left_out_while_the_rest_loads() {
    let repo = project();
    repo.write(
        ".openinterpreter/config.toml",
        "model_reasoning_effort = [\n",
    );
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    let mut args = exec_args(&mock.url(), &["--trust", "--json"]);
    args.push("hi".into());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", home.as_str())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items = mock_llm::e2e::jsonl(&out);
    let error = items
        .iter()
        .find(|e| e["type"] == "error")
        .unwrap_or_else(|| panic!("no error event: {items:?}"));
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(".openinterpreter/config.toml") && message.contains("left out"),
        "{message}"
    );
    assert_eq!(tool_names(&mock.model_requests()[0].body), PI_TOOLS);
}

#[test]
fn acp_sessions_load_a_trusted_projects_config_and_warn_about_an_untrusted_one() {
    let repo = project();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("a"), Reply::text("b")])).unwrap();
    let home = repo.home.path().display().to_string();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(&repo, &mock, &[], &[("HOME", home.as_str())]);
    agent.initialize();
    let untrusted = agent.new_session(&cwd, json!([]));
    agent.prompt(&untrusted, "hi");
    let warned = agent.updates().iter().any(|u| {
        u.to_string().contains(".codex/config.toml") && u.to_string().contains("not trusted")
    });
    assert!(warned, "{:#?}", agent.updates());
    assert_ne!(tool_names(&mock.model_requests()[0].body), PI_TOOLS);
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            cwd.display()
        ),
    )
    .unwrap();
    let trusted = agent.new_session(&cwd, json!([]));
    agent.prompt(&trusted, "hi");
    assert_eq!(tool_names(&mock.model_requests()[1].body), PI_TOOLS);
    agent.exit();
}

#[test]
fn acp_asks_at_the_first_prompt_and_a_trusted_project_loads_in_that_same_session() {
    let repo = project();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("a"),
        Reply::text("b"),
        Reply::text("c"),
    ]))
    .unwrap();
    let home = repo.home.path().display().to_string();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(&repo, &mock, &[], &[("HOME", home.as_str())]);
    agent.answer = "trust";
    agent.initialize();
    let id = agent.new_session(&cwd, json!([]));
    agent.prompt(&id, "hi");
    assert_eq!(agent.permissions.len(), 1, "{:#?}", agent.permissions);
    let asked = &agent.permissions[0];
    assert_eq!(asked["toolCall"]["toolCallId"], "trust-project");
    assert!(
        asked["toolCall"]["content"]
            .to_string()
            .contains(".codex/config.toml")
    );
    let options: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_always", "reject_always"]);
    // The same session, opened again with the project's config, ran the prompt.
    assert_eq!(tool_names(&mock.model_requests()[0].body), PI_TOOLS);
    let user = std::fs::read_to_string(repo.home.path().join("config.toml")).unwrap();
    assert!(user.contains("trust_level = \"trusted\""), "{user}");
    // Once answered, it is not asked again, in this session or the next.
    agent.prompt(&id, "again");
    let next = agent.new_session(&cwd, json!([]));
    agent.prompt(&next, "hi");
    assert_eq!(agent.permissions.len(), 1);
    assert_eq!(tool_names(&mock.model_requests()[2].body), PI_TOOLS);
    agent.exit();
}

#[test]
fn acp_a_project_the_user_does_not_trust_is_saved_and_never_asked_about_again() {
    let repo = project();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("a"), Reply::text("b")])).unwrap();
    let home = repo.home.path().display().to_string();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(&repo, &mock, &[], &[("HOME", home.as_str())]);
    agent.answer = "distrust";
    agent.initialize();
    let id = agent.new_session(&cwd, json!([]));
    agent.prompt(&id, "hi");
    assert_ne!(tool_names(&mock.model_requests()[0].body), PI_TOOLS);
    let user = std::fs::read_to_string(repo.home.path().join("config.toml")).unwrap();
    assert!(user.contains("trust_level = \"untrusted\""), "{user}");
    let next = agent.new_session(&cwd, json!([]));
    agent.prompt(&next, "hi");
    assert_eq!(agent.permissions.len(), 1);
    assert_ne!(tool_names(&mock.model_requests()[1].body), PI_TOOLS);
    agent.exit();
}

#[cfg(unix)]
#[test]
fn notify_runs_the_program_with_codexs_turn_json_and_without_the_key() {
    let repo = TestRepo::new();
    let out_dir = tempfile::tempdir().unwrap();
    let file = out_dir.path().join("notified.json");
    let mock = MockServer::start_blocking(Script::new([Reply::text("Fixed it.")])).unwrap();
    // The payload is the last argument; the environment is written beside it.
    let script = format!(
        "printf '%s' \"$1\" > '{f}'; env > '{f}.env'",
        f = file.display()
    );
    let notify = format!(
        "notify=[\"sh\", \"-c\", {}, \"notify\"]",
        toml::Value::from(script)
    );
    let mut args = exec_args(
        &mock.url(),
        &[
            "-c",
            &notify,
            "-c",
            "model_providers.mock.env_key=\"MOCK_PROVIDER_KEY\"",
        ],
    );
    args.push("fix add".into());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(
        &args,
        "",
        &[
            ("HOME", home.as_str()),
            ("MOCK_PROVIDER_KEY", "sk-notify-secret-123456"),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // It runs in the background: wait for it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !file.with_extension("json.env").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let sent: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(sent["type"], "agent-turn-complete");
    assert_eq!(sent["client"], "interpreter-exec");
    assert_eq!(sent["input-messages"], json!(["fix add"]));
    assert_eq!(sent["last-assistant-message"], "Fixed it.");
    assert_eq!(
        sent["cwd"],
        std::fs::canonicalize(repo.path())
            .unwrap()
            .display()
            .to_string()
    );
    assert!(sent["thread-id"].as_str().is_some_and(|t| !t.is_empty()));
    let env = std::fs::read_to_string(file.with_extension("json.env")).unwrap();
    assert!(!env.contains("sk-notify-secret"), "the key reached notify");
}

#[test]
fn claude_md_with_an_import_reaches_the_prompt_and_an_import_outside_does_not() {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "OUTSIDE-SECRET").unwrap();
    repo.write(
        "CLAUDE.md",
        &format!(
            "Use tabs. Also @docs/rules.md and @{}\n",
            outside.path().join("secret.md").display()
        ),
    );
    repo.write("docs/rules.md", "Never push on Fridays.");
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    let out = exec(&repo, &mock, &[]);
    let body = mock.model_requests()[0].body.to_string();
    assert!(
        body.contains("Use tabs.") && body.contains("Never push on Fridays."),
        "{body}"
    );
    assert!(!body.contains("OUTSIDE-SECRET"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("secret.md"), "{stderr}");
}
