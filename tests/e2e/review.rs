//! Issue 39's review, end to end: `interpreter review` and `exec review` for each target on
//! the mock model, which answers with findings JSON. The diff reaches the model, the
//! findings print readably (or as `--json` events and `-o` JSON), the answer must be findings
//! JSON, the turn runs read-only, and a bad target is a clear error with no model request.

use mock_llm::e2e::{TestRepo, exec_args, git, jsonl, succeeded};
use mock_llm::{MockServer, Reply, Script};
use std::process::Output;

const FINDINGS: &str = r#"{"findings": [{"title": "Guard the empty list",
  "body": "`first()` panics when the list is empty.", "confidence_score": 0.9, "priority": 1,
  "code_location": {"absolute_file_path": "ROOT/src/lib.rs",
                    "line_range": {"start": 2, "end": 3}}}],
 "overall_correctness": "patch is incorrect",
 "overall_explanation": "One panic on empty input.", "overall_confidence_score": 0.8}"#;

/// A repository on `main` with one commit, then a branch `feature` with a second commit that
/// adds `MARKER_COMMIT`, and an uncommitted change that adds `MARKER_WORKTREE`.
fn repo() -> (TestRepo, String) {
    let repo = TestRepo::new();
    git(repo.path(), &["checkout", "-q", "-b", "main"]);
    repo.write("src/lib.rs", "fn a() {}\n");
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "first"]);
    git(repo.path(), &["checkout", "-q", "-b", "feature"]);
    repo.write("src/lib.rs", "fn a() {}\n// MARKER_COMMIT\n");
    git(repo.path(), &["commit", "-q", "-am", "Add the marker"]);
    let sha = git(repo.path(), &["rev-parse", "HEAD"]).trim().to_string();
    repo.write(
        "src/lib.rs",
        "fn a() {}\n// MARKER_COMMIT\n// MARKER_WORKTREE\n",
    );
    (repo, sha)
}

fn findings(repo: &TestRepo) -> String {
    let root = std::fs::canonicalize(repo.path()).unwrap();
    FINDINGS.replace("ROOT", &root.to_string_lossy())
}

fn review(repo: &TestRepo, mock: &MockServer, extra: &[&str]) -> Output {
    let mut args = exec_args(&mock.url(), &["review"]);
    args.extend(extra.iter().map(|s| s.to_string()));
    repo.run(&args, "")
}

/// The text of the model request's last user message.
fn prompt_sent(mock: &MockServer) -> String {
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 1, "one model request");
    let messages = reqs[0].body["messages"].as_array().unwrap().clone();
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    match &user["content"] {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn each_target_sends_its_diff_and_prints_the_findings() {
    let (repo, sha) = repo();
    let cases: [(&[&str], &str, &str); 3] = [
        (
            &["--uncommitted"],
            "+// MARKER_WORKTREE",
            "+// MARKER_COMMIT",
        ),
        (&["--base", "main"], "+// MARKER_COMMIT", "Focus:"),
        (
            &["--commit", &sha, "look at panics"],
            "Add the marker",
            "MARKER_WORKTREE",
        ),
    ];
    for (flags, sent, unsent) in cases {
        let mock = MockServer::start_blocking(Script::new([Reply::text(findings(&repo))])).unwrap();
        let out = review(&repo, &mock, flags);
        let stdout = succeeded(&out);
        let prompt = prompt_sent(&mock);
        assert!(prompt.contains(sent), "{flags:?}: {prompt}");
        assert!(!prompt.contains(unsent), "{flags:?}: {prompt}");
        assert!(prompt.contains("overall_correctness"), "{prompt}");
        assert_eq!(
            stdout,
            "Verdict: patch is incorrect (confidence 0.80)\nOne panic on empty input.\n\n\
             [P1] Guard the empty list\n  src/lib.rs:2-3\n  `first()` panics when the list is empty.\n",
            "{flags:?}"
        );
        // The answer is constrained to the findings schema, and the turn is read-only.
        let body = &mock.model_requests()[0].body;
        let schema = &body["response_format"]["json_schema"]["schema"];
        assert_eq!(schema["required"][0], "findings", "{body}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("sandbox: read-only"), "{stderr}");
    }
    assert!(
        repo.read("src/lib.rs").contains("MARKER_WORKTREE"),
        "nothing was changed"
    );
}

#[test]
fn top_level_review_json_events_output_file_and_annotations() {
    let (repo, _) = repo();
    let mock = MockServer::start_blocking(Script::new([Reply::text(findings(&repo))])).unwrap();
    let last = repo.path().join("review.json");
    let notes = repo.path().join("annotations.txt");
    let mut args = vec!["review".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(
        [
            "--json",
            "--base",
            "main",
            "-o",
            last.to_str().unwrap(),
            "--github-annotations",
            notes.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let out = repo.run(&args, "");
    succeeded(&out);
    let events = jsonl(&out);
    assert_eq!(events[0]["type"], "thread.started");
    assert_eq!(events.last().unwrap()["type"], "turn.completed");
    let message = events
        .iter()
        .find(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
        .expect("the answer as an agent_message item");
    let answer: serde_json::Value =
        serde_json::from_str(message["item"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer["findings"][0]["priority"], 1);
    assert!(prompt_sent(&mock).contains("+// MARKER_COMMIT"));
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&last).unwrap()).unwrap();
    assert_eq!(kept, answer);
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "::warning file=src/lib.rs,line=2,endLine=3,title=[P1] Guard the empty list::`first()` panics when the list is empty.\n"
    );
}

#[test]
fn an_answer_that_is_not_findings_json_fails_clearly() {
    let (repo, _) = repo();
    let mock = MockServer::start_blocking(Script::new([Reply::text("Looks fine to me.")])).unwrap();
    let out = review(&repo, &mock, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Error: review: the model's answer holds no findings JSON object"),
        "{stderr}"
    );
}

#[test]
fn bad_targets_are_clear_errors_without_a_model_request() {
    let (repo, _) = repo();
    let mock = MockServer::start_blocking(Script::new([Reply::text("unused")])).unwrap();
    let cases: [(&[&str], &str); 2] = [
        (&["--base", "nope"], "base branch `nope` not found"),
        (
            &["--commit", "0123456789abcdef"],
            "commit `0123456789abcdef` not found",
        ),
    ];
    for (flags, message) in cases {
        let out = review(&repo, &mock, flags);
        assert_eq!(out.status.code(), Some(1), "{flags:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{flags:?}: {stderr}");
    }
    // A review changes nothing and answers in its own schema.
    let out = review(&repo, &mock, &["--diff"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--diff do not apply"));
    // Nothing to review in a clean tree.
    git(repo.path(), &["commit", "-q", "-am", "all in"]);
    let out = review(&repo, &mock, &["--uncommitted"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no uncommitted changes to review"));
    // A repository with no commits, and a folder outside git.
    let empty = TestRepo::new();
    let out = review(&empty, &mock, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the repository has no commits yet"));
    let plain = TestRepo::new();
    std::fs::remove_dir_all(plain.path().join(".git")).unwrap();
    let out = review(&plain, &mock, &["--base", "main"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a git repository"));
    assert!(mock.requests().is_empty(), "no request reached the model");
}

// The hostile-command tests' raw ACP client; not every helper is used here.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

/// `/review` over ACP: offered with its input hint, `/review base main` sends the branch's
/// diff to the model, and a missing branch is said plainly without a model request.
#[test]
fn acp_slash_review_with_a_base_branch() {
    let (repo, _) = repo();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("- **[P1] Guard it**")])).unwrap();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(&repo, &mock, &[], &[]);
    agent.initialize();
    let id = agent.new_session(&cwd, serde_json::json!([]));
    let answer = agent.prompt(&id, "/review base nope");
    assert_eq!(answer["stopReason"], "end_turn", "{answer}");
    assert!(mock.requests().is_empty(), "a bad target asks no model");
    let answer = agent.prompt(&id, "/review base main security");
    assert_eq!(answer["stopReason"], "end_turn", "{answer}");
    let updates = serde_json::to_string(agent.updates()).unwrap();
    assert!(
        updates.contains("base BRANCH|commit SHA"),
        "the input hint is offered: {updates}"
    );
    assert!(
        updates.contains("/review: base branch `nope` not found"),
        "{updates}"
    );
    let prompt = prompt_sent(&mock);
    assert!(prompt.contains("+// MARKER_COMMIT"), "{prompt}");
    assert!(prompt.contains("Focus: security"), "{prompt}");
    assert!(prompt.contains("Verdict: patch is correct"), "{prompt}");
    agent.exit();
}
