//! Issue 38 through the real binary and the mock model: custom commands (`/name args` sends
//! the file's prompt, expanded) and custom agents (a subagent call with the file's type runs
//! with its system prompt and tools), read from the user's folders and, once trusted, the
//! project's; an untrusted project's files are never read.

// The hostile-command tests' ACP client; not every helper is used here.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

use mock_llm::e2e::{TestRepo, exec_args};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

/// A project with a Claude Code command and agent, a broken Gemini command, and a user-level
/// Codex agent.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        ".claude/commands/greet.md",
        "---\ndescription: Greets someone\nargument-hint: [first] [last]\n---\nSay hello to $1 and mention $ARGUMENTS.\n",
    );
    repo.write(
        ".claude/agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews code, read-only\ntools: Read, Grep\nmodel: sonnet\n---\nYou review code and report findings.\n",
    );
    repo.write(".gemini/commands/broken.toml", "prompt = \n");
    let codex = repo.home.path().join(".codex/agents");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("helper.toml"),
        "name = \"helper\"\ndescription = \"Helps with chores\"\ndeveloper_instructions = \"You help.\"\n",
    )
    .unwrap();
    repo
}

fn exec(repo: &TestRepo, mock: &MockServer, extra: &[&str], prompt: &str) -> String {
    let mut args = exec_args(&mock.url(), &["-c", "harness=\"claude-code\""]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(prompt.into());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", home.as_str())]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

fn tool(body: &Value, name: &str) -> Option<Value> {
    body["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == name)
        .cloned()
}

fn tool_names(body: &Value) -> Vec<String> {
    let mut names: Vec<String> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn exec_expands_a_trusted_projects_command_and_runs_its_agent_with_its_prompt_and_tools() {
    let repo = project();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "a1",
            "Agent",
            json!({"description": "review", "prompt": "Review src.", "subagent_type": "reviewer"}),
        ),
        Reply::text("No findings."),
        Reply::text("Reviewed."),
    ]))
    .unwrap();
    let stderr = exec(&repo, &mock, &["--trust"], "/greet Ada Lovelace");
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 3, "{stderr}");
    // The command's prompt is the user's message, expanded.
    let asked = last_user_text(&reqs[0].body);
    assert!(
        asked.contains("Say hello to Ada and mention Ada Lovelace."),
        "{asked}"
    );
    // Both agents are in the Agent tool's type list.
    let agent = tool(&reqs[0].body, "Agent").unwrap().to_string();
    assert!(
        agent.contains("- reviewer: Reviews code, read-only"),
        "{agent}"
    );
    assert!(agent.contains("- helper: Helps with chores"), "{agent}");
    // The subagent ran with the file's prompt and only its tools.
    let child = &reqs[1].body;
    assert_eq!(
        child["messages"][0]["content"],
        "You review code and report findings."
    );
    assert_eq!(tool_names(child), ["Grep", "Read"]);
    assert!(last_user_text(child).contains("Review src."));
    // The model the mock provider lacks falls back with a warning naming the file; the broken
    // command file is named with its line.
    assert!(
        stderr.contains("reviewer.md") && stderr.contains("`sonnet`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("broken.toml") && stderr.contains("line 1"),
        "{stderr}"
    );
}

#[test]
fn exec_reads_no_agent_or_command_of_an_untrusted_project_and_says_so() {
    let repo = project();
    let mock = MockServer::start_blocking(Script::new([Reply::text("Hi.")])).unwrap();
    let stderr = exec(&repo, &mock, &[], "/greet Ada");
    let reqs = mock.model_requests();
    let asked = last_user_text(&reqs[0].body);
    assert!(
        asked.contains("/greet Ada") && !asked.contains("Say hello"),
        "{asked}"
    );
    let agent = tool(&reqs[0].body, "Agent").unwrap().to_string();
    assert!(!agent.contains("reviewer"), "{agent}");
    // The user's own agents load wherever the session runs.
    assert!(agent.contains("- helper: Helps with chores"), "{agent}");
    assert!(
        stderr.contains(".claude/agents") && stderr.contains("not trusted yet"),
        "{stderr}"
    );
    assert!(!stderr.contains("broken.toml"), "{stderr}");
}

/// The commands an ACP session advertised last.
fn commands(agent: &acp::Agent) -> Vec<(String, String)> {
    let update = agent
        .updates()
        .iter()
        .rev()
        .find(|u| u["update"]["sessionUpdate"] == "available_commands_update")
        .unwrap_or_else(|| panic!("no available_commands_update: {:#?}", agent.updates()));
    update["update"]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["description"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn acp_lists_a_trusted_projects_commands_and_agents_and_never_an_untrusted_ones() {
    let repo = project();
    let user_commands = repo.home.path().join(".claude/commands/git");
    std::fs::create_dir_all(&user_commands).unwrap();
    std::fs::write(user_commands.join("commit.md"), "Commit the staged work.\n").unwrap();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("a"), Reply::text("b")])).unwrap();
    let home = repo.home.path().display().to_string();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(
        &repo,
        &mock,
        &["-c", "harness=\"claude-code\""],
        &[("HOME", home.as_str())],
    );
    agent.answer = "distrust";
    agent.initialize();
    let untrusted = agent.new_session(&cwd, json!([]));
    agent.prompt(&untrusted, "hi");
    let listed = commands(&agent);
    assert!(!listed.iter().any(|(n, _)| n == "greet"), "{listed:?}");
    assert!(
        listed
            .iter()
            .any(|(n, d)| n == "git:commit" && d == "Command: Commit the staged work."),
        "{listed:?}"
    );
    let described = |i: usize| {
        let body = &mock.model_requests()[i].body;
        tool(body, "Agent").unwrap().to_string()
    };
    assert!(!described(0).contains("reviewer"), "{}", described(0));
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[projects.'{}']\ntrust_level = \"trusted\"\n",
            cwd.display()
        ),
    )
    .unwrap();
    let trusted = agent.new_session(&cwd, json!([]));
    agent.prompt(&trusted, "/greet Ada Lovelace");
    let listed = commands(&agent);
    assert!(
        listed
            .iter()
            .any(|(n, d)| n == "greet" && d == "Command: Greets someone"),
        "{listed:?}"
    );
    let asked = last_user_text(&mock.model_requests()[1].body);
    assert!(
        asked.contains("Say hello to Ada and mention Ada Lovelace."),
        "{asked}"
    );
    assert!(
        described(1).contains("- reviewer: Reviews code"),
        "{}",
        described(1)
    );
    agent.exit();
}

#[test]
fn an_agent_naming_another_configured_providers_model_runs_there() {
    let repo = TestRepo::new();
    let agents = repo.home.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("thinker.md"),
        "---\ndescription: Thinks hard\nmodel: deepseek-reasoner\neffort: high\n---\nYou think.\n",
    )
    .unwrap();
    let session = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "a1",
            "Agent",
            json!({"description": "think", "prompt": "Think it over.", "subagent_type": "thinker"}),
        ),
        Reply::text("Done."),
    ]))
    .unwrap();
    let other = MockServer::start_blocking(Script::new([Reply::text("Thought.")])).unwrap();
    let provider = format!(
        "model_providers.deepseek={{base_url=\"{}\", api_key=\"sk-other\", retry_base_delay_ms=10}}",
        other.url()
    );
    let stderr = exec(&repo, &session, &["-c", &provider], "go");
    assert!(!stderr.contains("thinker"), "{stderr}");
    let theirs = other.model_requests();
    assert_eq!(theirs.len(), 1, "{stderr}");
    assert_eq!(theirs[0].body["model"], "deepseek-reasoner");
    assert_eq!(theirs[0].body["messages"][0]["content"], "You think.");
    let ours = session.model_requests();
    assert_eq!(ours.len(), 2);
    assert!(ours.iter().all(|r| r.body["model"] == "mock-model"));
    assert!(ours[1].body.to_string().contains("Thought."));
}

/// `explore_model` runs the built-in read-only subagents on another model (the issue's
/// "explore on the cheapest one"); a subagent that may edit stays on the session's.
#[test]
fn explore_model_runs_the_read_only_built_in_subagents_on_another_configured_model() {
    let repo = TestRepo::new();
    let session = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "a1",
            "Agent",
            json!({"description": "look", "prompt": "Find main.", "subagent_type": "Explore"}),
        ),
        Reply::tool_call(
            "a2",
            "Agent",
            json!({"description": "fix", "prompt": "Fix main.", "subagent_type": "general-purpose"}),
        ),
        Reply::text("Fixed."),
        Reply::text("Done."),
    ]))
    .unwrap();
    let other = MockServer::start_blocking(Script::new([Reply::text("Found.")])).unwrap();
    let provider = format!(
        "model_providers.deepseek={{base_url=\"{}\", api_key=\"sk-other\", retry_base_delay_ms=10}}",
        other.url()
    );
    let stderr = exec(
        &repo,
        &session,
        &["-c", &provider, "-c", "explore_model=\"deepseek-chat\""],
        "go",
    );
    let theirs = other.model_requests();
    assert_eq!(theirs.len(), 1, "{stderr}");
    assert_eq!(theirs[0].body["model"], "deepseek-chat");
    assert!(last_user_text(&theirs[0].body).contains("Find main."));
    let ours = session.model_requests();
    assert_eq!(ours.len(), 4, "{stderr}");
    assert!(ours.iter().all(|r| r.body["model"] == "mock-model"));
    assert!(last_user_text(&ours[2].body).contains("Fix main."));
}
