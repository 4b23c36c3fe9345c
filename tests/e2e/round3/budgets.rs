//! Goal budgets hold without the provider's help (`exec --goal --goal-budget`): a provider
//! that reports no usage is counted by an estimate from the bytes sent and received, and a
//! turn that crosses its budget gets one wrap-up request, then ends, whatever that response
//! asks for; the goal's reported total includes the wrap-up.

use mock_llm::e2e::{TestRepo, wait_with_timeout};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;
use std::io::Write as _;
use std::process::Output;
use std::time::Duration;

/// The first words of the wrap-up message a turn gets when its goal's budget is used.
const WRAP_UP: &str = "The thread's goal has used its token budget";

/// `interpreter exec` against `mock` (chat wire) with `extra`, `prompt` on stdin, killed (and
/// the test failed) after 45 s: a goal that never stops fails instead of hanging.
fn exec(repo: &TestRepo, mock: &MockServer, extra: &[&str], prompt: &str) -> Output {
    let mut args = vec!["exec".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut child = repo.command(&args).spawn().expect("spawn interpreter");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        let _ = stdin.write_all(prompt.as_bytes());
    }
    wait_with_timeout(child, Duration::from_secs(45))
}

/// The goal's status and tokens used, from exec's closing line ("the goal stopped before it
/// was complete: budgetLimited (N tokens used of B)").
fn goal_report(stderr: &str) -> (String, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("the goal stopped before it was complete"))
        .unwrap_or_else(|| panic!("no goal report in:\n{stderr}"));
    let rest = line.split("complete: ").nth(1).unwrap_or_default();
    let status = rest.split(' ').next().unwrap_or_default().to_string();
    let used = rest
        .split('(')
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no token count in: {line}"));
    (status, used)
}

/// A goal against a provider that never reports usage, whose model always calls a tool: the
/// bytes sent count (the prompt and tools are kilobytes a request), the request that takes the
/// goal past its budget is followed by one wrap-up request and the run ends, failing as
/// budget-limited. Before, nothing was counted: the turn ran to `max_turn_requests` (and the
/// goal went on for as long as the model kept answering).
#[test]
fn a_goal_budget_holds_when_the_provider_reports_no_usage() {
    let repo = TestRepo::new();
    let replies = (0..150).map(|i| {
        Reply::tool_call(format!("c{i}"), "shell", json!({"command": "true"})).without_usage()
    });
    let mock = MockServer::start_blocking(Script::new(replies).when_exhausted(
        Reply::tool_call("again", "shell", json!({"command": "true"})).without_usage(),
    ))
    .unwrap();
    let out = exec(
        &repo,
        &mock,
        &["--goal", "--goal-budget", "2000"],
        "Keep going",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let reqs = mock.model_requests();
    // A token per 4 bytes of each request body: the least the estimate counts for it.
    let estimate = |r: &mock_llm::RecordedRequest| r.body.to_string().len() as u64 / 4;
    let mut sent = 0;
    let crossing = reqs
        .iter()
        .position(|r| {
            sent += estimate(r);
            sent >= 2000
        })
        .unwrap_or_else(|| panic!("{} requests never reached the budget", reqs.len()));
    // The request that crossed the budget (or an earlier one, its answer counted too), then
    // the wrap-up, and no more.
    assert!(
        reqs.len() >= 2 && reqs.len() <= crossing + 2,
        "{} requests; the budget was crossed by request {}\n{stderr}",
        reqs.len(),
        crossing + 1
    );
    let wrap_ups = reqs
        .iter()
        .filter(|r| r.body.to_string().contains(WRAP_UP))
        .count();
    assert_eq!(wrap_ups, 1, "only the last request is the wrap-up");
    assert!(reqs.last().unwrap().body.to_string().contains(WRAP_UP));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let (status, used) = goal_report(&stderr);
    assert_eq!(status, "budgetLimited", "{stderr}");
    let sent: u64 = reqs.iter().map(estimate).sum();
    assert!(
        used > 0 && used >= sent,
        "{used} tokens reported, {sent} sent"
    );
}

/// A goal turn whose first response reports usage past the budget and calls a tool: the
/// call runs, exactly one more request follows (the wrap-up, carrying the wrap-up message),
/// and although its response calls another tool (one that would write a file), nothing more
/// runs: the turn and the goal end. The goal's total includes both requests; the call that did
/// not run has its result in history, so the session resumes on a valid history.
#[test]
fn a_turn_that_crosses_its_budget_gets_one_wrap_up_request_then_ends() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(
        Script::new([
            Reply::tool_call("c1", "shell", json!({"command": "true"}))
                .with_usage(40_000, 10_000, 0, 0),
            Reply::tool_call("c2", "shell", json!({"command": "echo ran > ran.txt"}))
                .with_usage(1_000, 500, 0, 0),
        ])
        .when_exhausted(
            Reply::tool_call("again", "shell", json!({"command": "echo ran > ran.txt"}))
                .with_usage(1_000, 500, 0, 0),
        ),
    )
    .unwrap();
    let out = exec(
        &repo,
        &mock,
        &["--goal", "--goal-budget", "50000"],
        "Do both steps",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 2, "{stderr}");
    let wrap_up = reqs[1].body.to_string();
    assert!(
        wrap_up.contains("The thread's goal has used its token budget: 50000 of 50000 tokens"),
        "{wrap_up}"
    );
    assert!(
        !repo.path().join("ran.txt").exists(),
        "the wrap-up response's call ran"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        goal_report(&stderr),
        ("budgetLimited".to_string(), 51_500),
        "{stderr}"
    );

    // The session goes on from a valid history: the unrun call is answered as not run.
    mock.set_script(Script::new([Reply::text("Back.")]));
    let out = exec(
        &repo,
        &mock,
        &["--json", "resume", "--last"],
        "What is left?",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = mock.model_requests();
    let messages = reqs.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let answer = messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "c2")
        .unwrap_or_else(|| panic!("no result for c2 in {messages:?}"));
    assert!(
        answer["content"]
            .as_str()
            .unwrap_or_default()
            .contains("Not run"),
        "{answer}"
    );
}
