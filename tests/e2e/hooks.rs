//! Hooks through the real binary and the mock model (issue 38): a Codex `hooks.json` and
//! Claude Code's `settings.json` in the peers' own shapes, every decision a hook can make on
//! a turn (context, a blocked call, feedback after a call, a turn sent back by `Stop`), a
//! project's hooks held until their definition is trusted, and a hook that hangs.

// The hostile-command tests' ACP client; not every helper is used here.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

use mock_llm::e2e::{TestRepo, exec_args, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

fn exec(repo: &TestRepo, mock: &MockServer, extra: &[&str], prompt: &str) -> std::process::Output {
    let mut args = exec_args(&mock.url(), &["-s", "workspace-write", "--json"]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(prompt.into());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", home.as_str())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// stdout and stderr: exec --json says warnings as error events.
fn said(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every message text of a request, joined.
fn texts(body: &Value) -> String {
    body.to_string()
}

/// A user hooks file in Codex's shape: the docs' events with small shell handlers that keep
/// what they read beside the repository.
fn codex_hooks(repo: &TestRepo) {
    let dir = repo.path().display().to_string();
    let hooks = json!({
        "description": "test hooks",
        "hooks": {
            "SessionStart": [{"matcher": "startup|resume", "hooks": [
                {"type": "command", "command": "echo 'session context: use tabs'"}]}],
            "UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": "echo 'Project rules: be brief'"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
                format!("cat > '{dir}/pre.json'; if grep -q 'rm -rf' '{dir}/pre.json'; then echo 'no rm -rf here' >&2; exit 2; fi"),
                "timeout": 30}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
                format!("cat > '{dir}/post.json'; echo '{{\"hookSpecificOutput\": {{\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"formatted\"}}}}'")}]}],
            "Stop": [{"hooks": [{"type": "command", "command":
                "if grep -q '\"stop_hook_active\":false'; then echo '{\"decision\": \"block\", \"reason\": \"run the tests first\"}'; fi"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command":
                format!("cat > '{dir}/end.json'")}]}],
            "NoSuchEvent": [{"hooks": [{"type": "command", "command": "true"}]}]
        }
    });
    std::fs::write(repo.home.path().join("hooks.json"), hooks.to_string()).unwrap();
}

#[test]
fn a_codex_hooks_file_adds_context_blocks_a_call_gives_feedback_and_sends_the_turn_back() {
    let repo = TestRepo::new();
    codex_hooks(&repo);
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "shell", json!({"command": "rm -rf build"})),
        Reply::tool_call("c2", "shell", json!({"command": "echo hi"})),
        Reply::text("done"),
        Reply::text("tests pass"),
    ]))
    .unwrap();
    let out = exec(&repo, &mock, &[], "clean up");
    let stderr = said(&out);
    assert!(
        stderr.contains("`NoSuchEvent` is not a hook event"),
        "{stderr}"
    );
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 4, "{stderr}");
    let first = texts(&reqs[0].body);
    assert!(
        first.contains("SessionStart hook additional context: session context: use tabs"),
        "{first}"
    );
    assert!(
        first.contains("UserPromptSubmit hook additional context: Project rules: be brief"),
        "{first}"
    );
    // The blocked call did not run, and the model reads why.
    let second = texts(&reqs[1].body);
    assert!(
        second.contains("A PreToolUse hook blocked this tool call: no rm -rf here"),
        "{second}"
    );
    let pre: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join("pre.json")).unwrap())
            .unwrap();
    assert_eq!(pre["hook_event_name"], "PreToolUse");
    assert_eq!(pre["tool_name"], "Bash");
    assert_eq!(pre["tool_input"]["command"], "echo hi");
    assert_eq!(pre["tool_use_id"], "c2");
    // PostToolUse saw the call's result, and its context joins the result.
    let third = texts(&reqs[2].body);
    assert!(
        third.contains("PostToolUse hook additional context: formatted"),
        "{third}"
    );
    let post: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join("post.json")).unwrap())
            .unwrap();
    assert!(
        post["tool_response"].as_str().unwrap().contains("hi"),
        "{post}"
    );
    // The Stop hook sent the turn back once; the second time it let it end.
    let fourth = texts(&reqs[3].body);
    assert!(
        fourth.contains("Stop hook feedback: run the tests first"),
        "{fourth}"
    );
    // SessionEnd ran as exec closed the session.
    let end: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join("end.json")).unwrap())
            .unwrap();
    assert_eq!(
        (end["hook_event_name"].as_str(), end["reason"].as_str()),
        (Some("SessionEnd"), Some("other"))
    );
    // exec --json reports the blocked call's hook as an error item; the turn completed.
    let events = jsonl(&out);
    assert!(
        events.iter().any(|e| e["type"] == "error"
            && e["message"]
                .as_str()
                .unwrap_or("")
                .contains("PreToolUse hook")),
        "{events:?}"
    );
    assert!(events.iter().any(|e| e["type"] == "turn.completed"));
}

/// The inputs the recording hook kept.
fn edits(repo: &TestRepo) -> Vec<Value> {
    std::fs::read_dir(repo.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("edit."))
        .map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap())
        .collect()
}

#[test]
fn a_trusted_projects_claude_hooks_wait_for_their_own_trust_and_a_change_asks_again() {
    let repo = TestRepo::new();
    let dir = repo.path().display().to_string();
    // Claude Code's docs' shape: a formatter after every Edit or Write, reading file_path.
    let settings = |cmd: &str| {
        json!({"permissions": {"allow": ["Bash(npm run lint)"]},
               "hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [
                   {"type": "command", "command": cmd}]}]}})
        .to_string()
    };
    // The runs for two files go at once: each keeps its input in a file of its own.
    let record = format!("cat > \"$(mktemp '{dir}/edit.XXXXXX')\"");
    repo.write(".claude/settings.json", &settings(&record));
    let patch =
        "*** Begin Patch\n*** Add File: a.txt\n+one\n*** Add File: b.txt\n+two\n*** End Patch\n";
    let script = || {
        Script::new([
            Reply::tool_call("e1", "apply_patch", json!({"input": patch})),
            Reply::text("edited"),
        ])
    };
    let mock = MockServer::start_blocking(script()).unwrap();
    let out = exec(&repo, &mock, &["--trust"], "edit");
    let stderr = said(&out);
    assert!(
        stderr.contains("do not run until you trust them"),
        "{stderr}"
    );
    assert!(
        !repo.path().join("edits.jsonl").exists(),
        "an unreviewed project hook ran"
    );
    // `interpreter hooks trust` approves the definition as it is.
    let home = repo.home.path().display().to_string();
    let listed = repo.run_with_env(
        &["hooks".into(), "list".into()],
        "",
        &[("HOME", home.as_str())],
    );
    assert!(String::from_utf8_lossy(&listed.stdout).contains("review   PostToolUse [Edit|Write]"));
    let trusted = repo.run_with_env(
        &["hooks".into(), "trust".into()],
        "",
        &[("HOME", home.as_str())],
    );
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let user = std::fs::read_to_string(repo.home.path().join("config.toml")).unwrap();
    assert!(user.contains("trusted_hash = \"sha256:"), "{user}");
    std::fs::remove_file(repo.path().join("a.txt")).unwrap();
    std::fs::remove_file(repo.path().join("b.txt")).unwrap();
    mock.set_script(script());
    exec(&repo, &mock, &[], "edit");
    // One run per changed file, each with Claude's `file_path`.
    let lines = edits(&repo);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| l["tool_name"] == "Write" || l["tool_name"] == "Edit")
    );
    let paths: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["tool_input"]["file_path"].as_str())
        .collect();
    assert!(
        paths.iter().any(|p| p.ends_with("a.txt")) && paths.iter().any(|p| p.ends_with("b.txt")),
        "{paths:?}"
    );
    // A changed definition waits for review again.
    repo.write(
        ".claude/settings.json",
        &settings(&format!("{record}; true")),
    );
    let again = |extra: &[&str]| {
        mock.set_script(script());
        std::fs::remove_file(repo.path().join("a.txt")).unwrap();
        std::fs::remove_file(repo.path().join("b.txt")).unwrap();
        said(&exec(&repo, &mock, extra, "edit"))
    };
    assert!(again(&[]).contains("do not run until you trust them"));
    assert_eq!(edits(&repo).len(), 2, "the changed hook ran unreviewed");
    // Codex's flag runs it for one run, and says so; nothing is recorded.
    assert!(
        again(&["--dangerously-bypass-hook-trust"])
            .contains("--dangerously-bypass-hook-trust is on")
    );
    assert_eq!(edits(&repo).len(), 4);
    assert!(again(&[]).contains("do not run until you trust them"));
}

#[test]
fn a_hook_that_hangs_or_floods_is_bounded_and_the_turn_goes_on() {
    let repo = TestRepo::new();
    // Claude Code's `async` hook runs in the background: its exit 2 blocks nothing.
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "head -c 50000000 /dev/zero | tr '\\0' x; sleep 30", "timeout": 2},
        {"type": "command", "command": "echo 'too late to block' >&2; exit 2", "async": true}
    ]}]}});
    std::fs::write(repo.home.path().join("hooks.json"), hooks.to_string()).unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "shell", json!({"command": "echo ran"})),
        Reply::text("ok"),
    ]))
    .unwrap();
    let out = exec(&repo, &mock, &[], "go");
    let events = jsonl(&out);
    assert!(
        events.iter().any(|e| e["type"] == "error"
            && e["message"]
                .as_str()
                .unwrap_or("")
                .contains("longer than its timeout")),
        "{events:?}"
    );
    // The call ran after the failed hook.
    let second = texts(&mock.model_requests()[1].body);
    assert!(second.contains("ran"), "{second}");
}

#[test]
fn acp_asks_about_the_project_then_its_hooks_and_they_run_in_that_same_session() {
    let repo = TestRepo::new();
    // Codex's docs' project hooks file: a prompt hook that loads instructions.
    repo.write(
        ".codex/hooks.json",
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "echo 'Team rule: small commits'", "timeout": 10}]}]}})
        .to_string(),
    );
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("a"), Reply::text("b")])).unwrap();
    let home = repo.home.path().display().to_string();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(&repo, &mock, &[], &[("HOME", home.as_str())]);
    agent.answer = "trust";
    agent.initialize();
    let id = agent.new_session(&cwd, json!([]));
    agent.prompt(&id, "hi");
    let asked: Vec<&str> = agent
        .permissions
        .iter()
        .map(|p| p["toolCall"]["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["trust-project", "trust-hooks"]);
    assert!(
        agent.permissions[1]["toolCall"]["content"]
            .to_string()
            .contains("Team rule")
    );
    let first = texts(&mock.model_requests()[0].body);
    assert!(
        first.contains("UserPromptSubmit hook additional context: Team rule: small commits"),
        "{first}"
    );
    let user = std::fs::read_to_string(repo.home.path().join("config.toml")).unwrap();
    assert!(user.contains("trusted_hash"), "{user}");
    // Answered: the next session asks nothing and runs the hook.
    let next = agent.new_session(&cwd, json!([]));
    agent.prompt(&next, "hi");
    assert_eq!(agent.permissions.len(), 2);
    assert!(texts(&mock.model_requests()[1].body).contains("Team rule"));
    agent.exit();
}

#[test]
fn hooks_in_config_toml_run_and_features_hooks_false_turns_them_all_off() {
    let repo = TestRepo::new();
    let dir = repo.path().display().to_string();
    // Codex's documented inline form, with a status message.
    let config = format!(
        "[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"cat > '{dir}/seen.json'\"\ntimeout = 30\nstatusMessage = \"Checking Bash command\"\n"
    );
    let config_path = repo.home.path().join("config.toml");
    let mock_settings = std::fs::read_to_string(&config_path).unwrap_or_default();
    std::fs::write(&config_path, format!("{mock_settings}\n{config}")).unwrap();
    let script = || {
        Script::new([
            Reply::tool_call("c1", "shell", json!({"command": "echo ran"})),
            Reply::text("ok"),
        ])
    };
    let mock = MockServer::start_blocking(script()).unwrap();
    exec(&repo, &mock, &[], "go");
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["tool_name"], "Bash");
    std::fs::remove_file(repo.path().join("seen.json")).unwrap();
    let with_switch = std::fs::read_to_string(&config_path).unwrap().replacen(
        "[[hooks.PreToolUse]]",
        "[features]\nhooks = false\n\n[[hooks.PreToolUse]]",
        1,
    );
    std::fs::write(&config_path, with_switch).unwrap();
    mock.set_script(script());
    exec(&repo, &mock, &[], "go");
    assert!(!repo.path().join("seen.json").exists());
}

/// Claude Code's settings.json with the permissions of its settings page's example and the
/// hook of its hooks guide (a Bash command log kept with jq in ~/.claude), unchanged.
const CLAUDE_SETTINGS_WITH_HOOKS: &str = r#"{
  "permissions": {
    "allow": [
      "Bash(npm run lint)",
      "Bash(npm run test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": [
      "Bash(curl:*)",
      "Read(./.env)",
      "Read(./.env.*)",
      "Read(./secrets/**)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "jq -r '\"\\(.tool_input.command) - \\(.tool_input.description // \"No description\")\"' >> ~/.claude/bash-command-log.txt"
          }
        ]
      }
    ]
  }
}
"#;

/// Codex's config.toml with a hook in its documented inline form, and a rule of its rules page.
const CODEX_CONFIG_WITH_HOOKS: &str = r#"
[[hooks.PostToolUse]]
matcher = "^Bash$"

[[hooks.PostToolUse.hooks]]
type = "command"
command = "jq -c '{tool: .tool_name, command: .tool_input.command}' >> post.log"
timeout = 30
statusMessage = "Logging the command"
"#;

const CODEX_RULE: &str = r#"prefix_rule(
    pattern = ["gh", "pr", "view"],
    decision = "prompt",
    justification = "Viewing PRs is allowed with approval",
    match = ["gh pr view 7888"],
    not_match = ["gh pr --repo openai/codex view 7888"],
)
"#;

#[test]
fn the_peers_documented_settings_hooks_and_rules_work_unchanged_together() {
    let repo = TestRepo::new();
    let home = repo.home.path();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        CLAUDE_SETTINGS_WITH_HOOKS,
    )
    .unwrap();
    std::fs::create_dir_all(home.join("rules")).unwrap();
    std::fs::write(home.join("rules/default.rules"), CODEX_RULE).unwrap();
    let config = home.join("config.toml");
    let before = std::fs::read_to_string(&config).unwrap_or_default();
    std::fs::write(&config, format!("{before}\n{CODEX_CONFIG_WITH_HOOKS}")).unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "shell", json!({"command": "echo hello"})),
        Reply::tool_call("c2", "shell", json!({"command": "curl --version"})),
        Reply::tool_call("c3", "shell", json!({"command": "gh pr view 7888"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let out = exec(&repo, &mock, &[], "go");
    let said = said(&out);
    assert!(!said.contains("left out"), "{said}");
    // Claude Code's hook kept its log where its guide says, for every Bash call.
    let log = std::fs::read_to_string(home.join(".claude/bash-command-log.txt"))
        .unwrap_or_else(|e| panic!("{e}: {said}"));
    assert!(log.contains("echo hello - No description"), "{log}");
    // Codex's hook ran after the command that ran.
    let post = std::fs::read_to_string(repo.path().join("post.log")).unwrap();
    assert!(
        post.contains(r#"{"tool":"Bash","command":"echo hello"}"#),
        "{post}"
    );
    // Claude Code's deny and Codex's prompt rule held (exec cannot ask).
    let last = texts(&mock.model_requests()[3].body);
    assert!(last.contains("curl"), "{last}");
    assert!(!post.contains("curl --version"), "{post}");
    assert!(!post.contains("gh pr view"), "{post}");
}
