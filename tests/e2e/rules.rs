//! Issue 38's saved permission rules through the real binary and the mock model: Codex's
//! `.rules` files and Claude Code's `permissions` lists, from their docs' own examples, decide
//! what exec runs; ACP's "Always allow, and save" writes `rules/default.rules`, and the next
//! matching command runs unasked, in that session and the next.

// The hostile-command tests' ACP client; not every helper is used here.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

use mock_llm::e2e::{TestRepo, exec_args};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

/// The example of Codex's rules page (developers.openai.com/codex/rules), unchanged.
const CODEX_DOCS_RULES: &str = r#"# Prompt before running commands with the prefix `gh pr view` outside the sandbox.
prefix_rule(
    # The prefix to match.
    pattern = ["gh", "pr", "view"],

    # The action to take when Codex requests to run a matching command.
    decision = "prompt",

    # Optional rationale for why this rule exists.
    justification = "Viewing PRs is allowed with approval",

    # `match` and `not_match` are optional "inline unit tests" where you can
    # provide examples of commands that should (or should not) match this rule.
    match = [
        "gh pr view 7888",
        "gh pr view --repo openai/codex",
        "gh pr view 7888 --json title,body,comments",
    ],
    not_match = [
        # Does not match because the `pattern` must be an exact prefix.
        "gh pr --repo openai/codex view 7888",
    ],
)
"#;

/// The example settings.json long shown on Claude Code's settings page
/// (code.claude.com/docs/en/settings), as recalled: its `permissions` entries are confirmed by
/// the docs' rule syntax, but the page's current examples (settings-example) could not be read
/// in full from here to compare byte for byte.
const CLAUDE_DOCS_SETTINGS: &str = r#"{
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
  "env": {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "OTEL_METRICS_EXPORTER": "otlp"
  }
}
"#;

/// A script whose model runs each command with `shell`, then says "done".
fn shell_script(commands: &[&str]) -> Script {
    let mut replies: Vec<Reply> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| Reply::tool_call(format!("c{i}"), "shell", json!({"command": c})))
        .collect();
    replies.push(Reply::text("done"));
    Script::new(replies)
}

/// What the model was told for call `id`.
fn tool_output(mock: &MockServer, id: &str) -> String {
    let reqs = mock.model_requests();
    let body = &reqs.last().expect("a model request").body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|| panic!("no tool output for {id}"))
}

/// A repository whose user has Codex's docs' rules file and Claude Code's docs' settings.
fn repo_with_docs_examples(rules: &str) -> TestRepo {
    let repo = TestRepo::new();
    let home = repo.home.path();
    std::fs::create_dir_all(home.join("rules")).unwrap();
    std::fs::write(home.join("rules/docs.rules"), CODEX_DOCS_RULES).unwrap();
    std::fs::write(home.join("rules/mine.rules"), rules).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), CLAUDE_DOCS_SETTINGS).unwrap();
    repo
}

fn exec(repo: &TestRepo, mock: &MockServer, extra: &[&str]) -> (String, String) {
    let mut args = exec_args(&mock.url(), &["--harness", "native"]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("go".into());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", home.as_str())]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

#[test]
fn exec_a_forbidden_rule_refuses_in_full_access_with_its_justification() {
    let repo = repo_with_docs_examples(
        "prefix_rule(pattern = [\"touch\"], decision = \"forbidden\", justification = \"Use the write tool instead.\")\n",
    );
    let mock =
        MockServer::start_blocking(shell_script(&["touch made.txt", "curl --version"])).unwrap();
    let (_, stderr) = exec(&repo, &mock, &["-s", "danger-full-access"]);
    // Both docs' files load without a word of complaint.
    assert!(!stderr.contains("nothing from that file"), "{stderr}");
    assert!(!stderr.contains("is ignored"), "{stderr}");
    assert!(!repo.path().join("made.txt").exists());
    let said = tool_output(&mock, "c0");
    assert!(said.contains("Use the write tool instead."), "{said}");
    assert!(said.contains("mine.rules:1"), "{said}");
    // Claude Code's `Bash(curl:*)` deny, from its docs' example.
    let said = tool_output(&mock, "c1");
    assert!(
        said.contains("Refused") && said.contains("Bash(curl:*)"),
        "{said}"
    );
}

#[test]
fn exec_an_allow_rule_runs_what_the_untrusted_policy_would_refuse() {
    let untrusted = ["-c", "approval_policy=\"untrusted\""];
    // Without a rule: exec cannot ask, so the command is refused.
    let repo = repo_with_docs_examples("");
    let mock = MockServer::start_blocking(shell_script(&["touch made.txt"])).unwrap();
    exec(&repo, &mock, &untrusted);
    assert!(!repo.path().join("made.txt").exists());
    // With one, it runs; each part of a list must be allowed.
    let repo = repo_with_docs_examples(
        "prefix_rule(pattern = [\"touch\", [\"made.txt\", \"also.txt\"]])\n",
    );
    let mock = MockServer::start_blocking(shell_script(&[
        "touch made.txt && touch also.txt",
        "touch made.txt && mkdir other",
    ]))
    .unwrap();
    exec(&repo, &mock, &untrusted);
    assert!(repo.path().join("made.txt").exists() && repo.path().join("also.txt").exists());
    assert!(!repo.path().join("other").exists());
}

#[test]
fn exec_a_malformed_rules_file_is_named_with_its_line_and_loads_nothing() {
    let repo = repo_with_docs_examples(
        "prefix_rule(pattern = [\"touch\"])\nprefix_rule(pattern = [\"ls\"], match = [\"cat x\"])\n",
    );
    let mock = MockServer::start_blocking(shell_script(&["touch made.txt"])).unwrap();
    let (_, stderr) = exec(&repo, &mock, &["-c", "approval_policy=\"untrusted\""]);
    assert!(
        stderr.contains("mine.rules:2:") && stderr.contains("`match` example `cat x`"),
        "{stderr}"
    );
    // Its first rule did not load either.
    assert!(!repo.path().join("made.txt").exists());
}

fn option_ids(asked: &Value) -> Vec<String> {
    asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn acp_always_and_save_writes_default_rules_and_the_next_command_runs_unasked() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c0", "shell", json!({"command": "touch first.txt"})),
        Reply::text("one"),
        Reply::tool_call(
            "c1",
            "shell",
            json!({"command": "touch first.txt second.txt"}),
        ),
        Reply::text("two"),
        Reply::tool_call(
            "c2",
            "shell",
            json!({"command": "touch first.txt third.txt"}),
        ),
        Reply::text("three"),
        Reply::tool_call("c3", "shell", json!({"command": "rm -rf /"})),
        Reply::text("four"),
    ]))
    .unwrap();
    let home = repo.home.path().display().to_string();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(
        &repo,
        &mock,
        &["-c", "harness=\"native\""],
        &[("HOME", home.as_str())],
    );
    agent.answer = "allow_always_save";
    agent.initialize();
    let id = agent.new_session(&cwd, json!([]));
    agent.prompt(&id, "first");
    assert_eq!(agent.permissions.len(), 1, "{:#?}", agent.permissions);
    let asked = &agent.permissions[0];
    assert!(
        option_ids(asked).contains(&"allow_always_save".to_string()),
        "{asked:#}"
    );
    assert!(
        asked
            .to_string()
            .contains("Always allow `touch first.txt`, and save"),
        "{asked:#}"
    );
    assert!(repo.path().join("first.txt").exists());
    let saved = std::fs::read_to_string(repo.home.path().join("rules/default.rules")).unwrap();
    assert_eq!(
        saved,
        "prefix_rule(pattern=[\"touch\", \"first.txt\"], decision=\"allow\")\n"
    );
    // At once in this session, and in the next one.
    agent.prompt(&id, "second");
    assert!(repo.path().join("second.txt").exists());
    let next = agent.new_session(&cwd, json!([]));
    agent.prompt(&next, "third");
    assert!(repo.path().join("third.txt").exists());
    assert_eq!(agent.permissions.len(), 1, "{:#?}", agent.permissions);
    // A dangerous command never offers it.
    agent.answer = "reject_once";
    agent.prompt(&next, "fourth");
    assert_eq!(agent.permissions.len(), 2);
    let ids = option_ids(&agent.permissions[1]);
    assert!(
        !ids.iter().any(|i| i.starts_with("allow_always")),
        "{ids:?}"
    );
    agent.exit();
}

fn add_file(path: &str) -> String {
    format!("*** Begin Patch\n*** Add File: {path}\n+hello\n*** End Patch\n")
}

#[test]
fn exec_a_trusted_projects_claude_settings_and_codex_rules_apply_and_an_untrusted_ones_do_not() {
    let repo = TestRepo::new();
    repo.write(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["Edit(src/**)"]}}"#,
    );
    repo.write(
        ".codex/rules/project.rules",
        "prefix_rule(pattern = [\"touch\"])\n",
    );
    let script = |n: &str| {
        Script::new([
            Reply::tool_call(
                "c0",
                "apply_patch",
                json!({"input": add_file(&format!("src/{n}.txt"))}),
            ),
            Reply::tool_call(
                "c1",
                "apply_patch",
                json!({"input": add_file(&format!("other/{n}.txt"))}),
            ),
            Reply::tool_call("c2", "shell", json!({"command": format!("touch {n}.txt")})),
            Reply::text("done"),
        ])
    };
    let untrusted = ["-c", "approval_policy=\"untrusted\""];
    let mock = MockServer::start_blocking(script("a")).unwrap();
    let (_, stderr) = exec(&repo, &mock, &untrusted);
    assert!(
        stderr.contains("not trusted yet") && stderr.contains("project.rules"),
        "{stderr}"
    );
    for f in ["src/a.txt", "other/a.txt", "a.txt"] {
        assert!(!repo.path().join(f).exists(), "{f} was made");
    }
    let mock = MockServer::start_blocking(script("b")).unwrap();
    let mut trusted = untrusted.to_vec();
    trusted.push("--trust");
    exec(&repo, &mock, &trusted);
    assert!(repo.path().join("src/b.txt").exists());
    assert!(!repo.path().join("other/b.txt").exists());
    assert!(repo.path().join("b.txt").exists());
}

/// The `mcp-echo` fixture, as an MCP server in the user's config.toml.
const ECHO: &str = env!("CARGO_BIN_EXE_mcp-echo");

#[test]
fn exec_claude_mcp_rules_allow_a_servers_tools_and_deny_one_of_them() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!("[mcp_servers.echo]\ncommand = '{ECHO}'\n"),
    )
    .unwrap();
    let script = || {
        Script::new([
            Reply::tool_call("c0", "echo__say", json!({"text": "zebra-42"})),
            Reply::tool_call("c1", "echo__fail", json!({})),
            Reply::text("done"),
        ])
    };
    let untrusted = ["-c", "approval_policy=\"untrusted\""];
    // Without rules, exec cannot ask: the tool does not run.
    let mock = MockServer::start_blocking(script()).unwrap();
    exec(&repo, &mock, &untrusted);
    let said = tool_output(&mock, "c0");
    assert!(
        said.contains("rejected") && !said.contains("zebra-42"),
        "{said}"
    );
    std::fs::create_dir_all(repo.home.path().join(".claude")).unwrap();
    std::fs::write(
        repo.home.path().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["mcp__echo"], "deny": ["mcp__echo__fail"]}}"#,
    )
    .unwrap();
    let mock = MockServer::start_blocking(script()).unwrap();
    exec(&repo, &mock, &untrusted);
    let said = tool_output(&mock, "c0");
    assert!(
        said.contains("zebra-42") && !said.contains("rejected"),
        "{said}"
    );
    let said = tool_output(&mock, "c1");
    assert!(
        said.contains("Refused") && said.contains("mcp__echo__fail"),
        "{said}"
    );
}
