//! Issue 41 through the real binary: a Codex config.toml with a server that cannot start
//! (an unset token variable, a missing command, a crash, a hang past `startup_timeout_sec`)
//! still runs a session, with a warning naming it; Codex's
//! `enabled_tools` / `disabled_tools` choose the tools the model sees. Exec and ACP report the
//! three unusable servers of the issue (the terminal's test is in `tui.rs`, the app-server's in
//! `tests/app-server-python/test_mcp.py`), and ACP's `/mcp` says why each failed.

// The hostile-command tests' ACP client; not every helper is used here.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

use mock_llm::e2e::{TestRepo, exec_args, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::Value;

const ECHO: &str = env!("CARGO_BIN_EXE_mcp-echo");

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

fn exec_json(repo: &TestRepo, mock: &MockServer, extra: &[&str]) -> std::process::Output {
    let mut args = exec_args(&mock.url(), &["--json"]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("hi".into());
    let home = repo.home.path().display().to_string();
    repo.run_with_env(&args, "", &[("HOME", home.as_str())])
}

#[test]
fn an_unset_bearer_variable_leaves_only_that_server_out_and_tool_filters_apply() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[mcp_servers.github]\nurl = \"https://api.githubcopilot.com/mcp/\"\nbearer_token_env_var = \"INTERPRETER_TEST_UNSET_TOKEN\"\n\n\
             [mcp_servers.echo]\ncommand = '{ECHO}'\nenabled_tools = [\"say\", \"fail\"]\ndisabled_tools = [\"fail\"]\n\n\
             [mcp_servers.gone]\ncommand = '/nonexistent/mcp-server'\n\n\
             [mcp_servers.crashes]\ncommand = 'sh'\nargs = ['-c', 'echo boom >&2; exit 3']\n\n\
             [mcp_servers.hangs]\ncommand = 'sleep'\nargs = ['30']\nstartup_timeout_sec = 0.5\n"
        ),
    )
    .unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("done")])).unwrap();
    let out = exec_json(&repo, &mock, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let errors: Vec<String> = jsonl(&out)
        .iter()
        .filter(|e| e["type"] == "error")
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect();
    assert!(
        errors
            .iter()
            .any(|m| m.contains("`github` was left out")
                && m.contains("INTERPRETER_TEST_UNSET_TOKEN")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|m| m.contains("`gone`") && m.contains("/nonexistent/mcp-server")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|m| m.contains("`crashes`") && m.contains("boom")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|m| m.contains("`hangs`") && m.contains("0.5 s")),
        "{errors:?}"
    );
    let reqs = mock.model_requests();
    let names = tool_names(&reqs[0].body);
    assert!(names.contains(&"echo__say".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n == "echo__fail" || n == "echo__sleep"),
        "{names:?}"
    );
}

fn mcp(repo: &TestRepo, args: &[&str]) -> std::process::Output {
    let mut all = vec!["mcp".to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    let home = repo.home.path().display().to_string();
    repo.run_with_env(&all, "", &[("HOME", home.as_str())])
}

fn stdout_json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn mcp_add_list_get_remove_round_trip_keeps_the_users_comments() {
    let repo = TestRepo::new();
    let config = repo.home.path().join("config.toml");
    std::fs::write(&config, "# my settings\nmodel = \"mock-model\"\n").unwrap();
    let out = mcp(
        &repo,
        &["add", "docs", "--env", "A=1", "--", ECHO, "--long-names"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = mcp(
        &repo,
        &[
            "add",
            "tracker",
            "--url",
            "https://tracker.example/mcp",
            "--bearer-token-env-var",
            "TRACKER_TOKEN",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        mcp(&repo, &["add", "plain", "--url", "http://127.0.0.1:9/mcp"])
            .status
            .success()
    );

    let list = stdout_json(&mcp(&repo, &["list", "--json"]));
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["docs", "plain", "tracker"]);
    assert_eq!(list[0]["transport"]["type"], "stdio");
    assert_eq!(list[0]["transport"]["command"], ECHO);
    assert_eq!(
        list[0]["transport"]["args"],
        serde_json::json!(["--long-names"])
    );
    assert_eq!(list[0]["transport"]["env"]["A"], "1");
    assert_eq!(list[0]["auth_status"], "unsupported");
    assert_eq!(list[1]["auth_status"], "not_logged_in");
    assert_eq!(list[2]["transport"]["type"], "streamable_http");
    assert_eq!(
        list[2]["transport"]["bearer_token_env_var"],
        "TRACKER_TOKEN"
    );
    assert_eq!(list[2]["auth_status"], "bearer_token");
    let one = stdout_json(&mcp(&repo, &["get", "tracker", "--json"]));
    assert_eq!(one, list[2]);
    assert!(!mcp(&repo, &["get", "nothing", "--json"]).status.success());

    // An existing name is refused, nothing changes, and the refusal names --force.
    let before = std::fs::read_to_string(&config).unwrap();
    let out = mcp(&repo, &["add", "docs", "--", "other"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    assert!(
        mcp(&repo, &["add", "docs", "--force", "--", "other"])
            .status
            .success()
    );
    let one = stdout_json(&mcp(&repo, &["get", "docs", "--json"]));
    assert_eq!(one["transport"]["command"], "other");

    // A name TOML keys and tool names cannot both take, and a URL that is not http(s).
    let out = mcp(&repo, &["add", "my.server", "--", "x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("^[a-zA-Z0-9_-]+$"));
    let out = mcp(&repo, &["add", "ftp", "--url", "ftp://h/mcp"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("http(s)"));

    assert!(mcp(&repo, &["remove", "docs"]).status.success());
    let list = stdout_json(&mcp(&repo, &["list", "--json"]));
    assert_eq!(list.as_array().unwrap().len(), 2);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.starts_with("# my settings\nmodel = \"mock-model\"\n"),
        "{text}"
    );
}

/// A server added with `interpreter mcp add` runs in exec.
#[test]
fn a_server_added_by_the_command_runs_in_exec() {
    let repo = TestRepo::new();
    assert!(
        mcp(
            &repo,
            &[
                "add",
                "echo",
                "--env",
                "MCP_ECHO_PREFIX=added: ",
                "--",
                ECHO
            ]
        )
        .status
        .success()
    );
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "echo__say", serde_json::json!({"text": "hi"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let out = exec_json(&repo, &mock, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = mock.model_requests();
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let result = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool result");
    assert_eq!(result["content"], "added: hi");
}

fn error_items(out: &std::process::Output) -> Vec<String> {
    jsonl(out)
        .iter()
        .filter(|e| e["type"] == "error")
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect()
}

/// Claude Code's `.mcp.json` with `${VAR:-default}`: left out while the project is not
/// trusted (and named), then a working server once it is.
#[test]
fn a_trusted_projects_mcp_json_provides_a_server_and_an_untrusted_ones_is_not_read() {
    let repo = TestRepo::new();
    let file = serde_json::json!({"mcpServers": {"proj": {
        "command": ECHO,
        "env": {"MCP_ECHO_PREFIX": "${INTERPRETER_TEST_UNSET_PREFIX:-proj: }"}
    }}});
    repo.write(".mcp.json", &file.to_string());
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("untrusted"),
        Reply::tool_call("c1", "proj__say", serde_json::json!({"text": "hi"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let out = exec_json(&repo, &mock, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = format!(
        "{}{:?}",
        String::from_utf8_lossy(&out.stderr),
        error_items(&out)
    );
    assert!(
        said.contains(".mcp.json"),
        "the file left out is not named: {said}"
    );
    let names = tool_names(&mock.model_requests()[0].body);
    assert!(!names.iter().any(|n| n.starts_with("proj__")), "{names:?}");

    mock.clear_requests();
    let out = exec_json(&repo, &mock, &["--trust"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = mock.model_requests();
    assert!(tool_names(&reqs[0].body).contains(&"proj__say".to_string()));
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let result = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool result");
    assert_eq!(result["content"], "proj: hi");
}

#[test]
fn a_malformed_mcp_json_is_named_with_its_line_and_the_session_runs() {
    let repo = TestRepo::new();
    repo.write(".mcp.json", "{\n  \"mcpServers\": oops\n}\n");
    let mock = MockServer::start_blocking(Script::new([Reply::text("fine")])).unwrap();
    let out = exec_json(&repo, &mock, &["--trust"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let errors = error_items(&out);
    assert!(
        errors
            .iter()
            .any(|m| m.contains(".mcp.json") && m.contains("line 2")),
        "{errors:?}"
    );
    assert_eq!(mock.model_requests().len(), 1);
}

/// config.toml's server wins a name over `.mcp.json`'s; VS Code's `.vscode/mcp.json` adds its
/// own, and an entry asking for an `${input:…}` is left out and named.
#[test]
fn config_toml_wins_a_name_and_vs_code_inputs_are_named() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!("[mcp_servers.dup]\ncommand = '{ECHO}'\nenv = {{ MCP_ECHO_PREFIX = 'cfg: ' }}\n"),
    )
    .unwrap();
    let dup = serde_json::json!({"mcpServers": {"dup": {
        "command": ECHO, "env": {"MCP_ECHO_PREFIX": "proj: "}
    }}});
    repo.write(".mcp.json", &dup.to_string());
    let vscode = serde_json::json!({
        "inputs": [{"type": "promptString", "id": "tok", "password": true}],
        "servers": {
            "code": {"type": "stdio", "command": ECHO},
            "asks": {"type": "http", "url": "https://h/mcp",
                     "headers": {"Authorization": "Bearer ${input:tok}"}}
        }
    });
    repo.write(".vscode/mcp.json", &vscode.to_string());
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "dup__say", serde_json::json!({"text": "hi"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let out = exec_json(&repo, &mock, &["--trust"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let errors = error_items(&out);
    assert!(
        errors
            .iter()
            .any(|m| m.contains("`asks`") && m.contains("input:tok")),
        "{errors:?}"
    );
    let reqs = mock.model_requests();
    let names = tool_names(&reqs[0].body);
    assert!(names.contains(&"code__say".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("asks__")), "{names:?}");
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let result = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool result");
    assert_eq!(result["content"], "cfg: hi");
}

/// The config: an unset token variable, a missing command and a hanging server, next
/// to a working server and a disabled one.
fn three_broken(repo: &TestRepo) {
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[mcp_servers.echo]\ncommand = '{ECHO}'\n\n\
             [mcp_servers.github]\nurl = \"https://tracker.example/mcp\"\nbearer_token_env_var = \"INTERPRETER_TEST_UNSET_TOKEN\"\n\n\
             [mcp_servers.gone]\ncommand = '/nonexistent/mcp-server'\n\n\
             [mcp_servers.hangs]\ncommand = 'sleep'\nargs = ['30']\nstartup_timeout_sec = 0.5\n\n\
             [mcp_servers.off]\ncommand = 'true'\nenabled = false\n"
        ),
    )
    .unwrap();
}

/// Each of the three named with its reason in `text`.
fn names_the_three(text: &str) -> bool {
    text.contains("`github`")
        && text.contains("INTERPRETER_TEST_UNSET_TOKEN")
        && text.contains("`gone`")
        && text.contains("/nonexistent/mcp-server")
        && text.contains("`hangs`")
        && text.contains("0.5 s")
}

#[test]
fn exec_without_json_says_the_three_on_stderr_and_runs_the_turn() {
    let repo = TestRepo::new();
    three_broken(&repo);
    let mock = MockServer::start_blocking(Script::new([Reply::text("done")])).unwrap();
    let mut args = exec_args(&mock.url(), &[]);
    args.push("hi".into());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", home.as_str())]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done");
    assert!(names_the_three(&stderr), "{stderr}");
    assert!(
        !stderr.contains("`off`"),
        "a disabled server is no warning: {stderr}"
    );
}

/// The agent's text in every `agent_message_chunk` seen since update `from`.
fn agent_text(agent: &acp::Agent, from: usize) -> String {
    agent.updates()[from..]
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["update"]["content"]["text"].as_str())
        .collect()
}

#[test]
fn acp_warns_of_the_three_runs_the_turn_and_slash_mcp_says_why_each_failed() {
    let repo = TestRepo::new();
    three_broken(&repo);
    let mock = MockServer::start_blocking(Script::new([Reply::text("done")])).unwrap();
    let home = repo.home.path().display().to_string();
    let mut agent = acp::Agent::start(&repo, &mock, &[], &[("HOME", home.as_str())]);
    agent.initialize();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let session = agent.new_session(&cwd, serde_json::json!([]));
    let answer = agent.prompt(&session, "hi");
    assert_eq!(answer["stopReason"], "end_turn", "{}", agent.log());
    let said = agent_text(&agent, 0);
    assert!(said.contains("done"), "{said}");
    assert!(names_the_three(&said), "{said}");
    let offered = agent
        .updates()
        .iter()
        .rev()
        .find(|u| u["update"]["sessionUpdate"] == "available_commands_update")
        .map(|u| u["update"]["availableCommands"].to_string())
        .unwrap_or_default();
    assert!(
        offered.contains("\"name\":\"mcp\"") && offered.contains("Show MCP servers"),
        "{offered}"
    );

    let from = agent.updates().len();
    let answer = agent.prompt(&session, "/mcp");
    assert_eq!(answer["stopReason"], "end_turn");
    let listed = agent_text(&agent, from);
    assert!(listed.starts_with("MCP servers:"), "{listed}");
    assert!(
        listed.contains("- `echo`: ready (auth: unsupported)\n  - `say`: Repeats the text."),
        "{listed}"
    );
    assert!(
        listed.contains("- `github`: failed: mcp_servers.github.bearer_token_env_var: the variable INTERPRETER_TEST_UNSET_TOKEN is not set (auth: bearer_token)"),
        "{listed}"
    );
    assert!(
        listed.contains("- `gone`: failed: could not run `/nonexistent/mcp-server`"),
        "{listed}"
    );
    assert!(
        listed.contains("- `hangs`: failed: no answer to the MCP handshake within 0.5 s"),
        "{listed}"
    );
    assert!(
        listed.contains("- `off`: disabled (enabled = false) (auth: unsupported)"),
        "{listed}"
    );
    // `/mcp` is answered by the agent, not the model.
    assert_eq!(mock.model_requests().len(), 1);
    agent.exit();
}
