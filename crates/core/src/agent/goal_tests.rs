//! Goal budgets against the scripted mock model: they hold when the provider reports no
//! usage, and a turn that crosses its budget gets one wrap-up request, then ends.

use interpreter_protocol::{Event, GoalStatus, TurnEndReason};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::super::session::Session;
use super::super::turn::TurnKind;
use super::super::{EventSink, SessionOptions, SessionStart};
use crate::config::{Config, Overrides};
use crate::model::{HistoryItem, Parts as _};
use crate::workspace::DiskBackend;

/// The first words of the wrap-up message (`budget_reached`).
const WRAP_UP: &str = "The thread's goal has used its token budget";

fn session(
    mock: &MockServer,
    home: &std::path::Path,
    cwd: &std::path::Path,
) -> (Session, UnboundedReceiver<Event>) {
    let overrides = Overrides {
        config: vec![
            "model_provider=\"mock\"".into(),
            format!(
                "model_providers.mock={{name=\"mock\", base_url=\"{}\", wire_api=\"chat\", retry_base_delay_ms=10}}",
                mock.url()
            ),
            "model=\"kimi-k3\"".into(),
            "harness=\"kimi-code\"".into(),
        ],
        ..Default::default()
    };
    let config = Config::from_layers(home.to_path_buf(), None, None, &[], &overrides).unwrap();
    let (events, rx) = EventSink::new();
    let opts = SessionOptions {
        config,
        cwd: cwd.to_path_buf(),
        extra_roots: vec![],
        backend: Arc::new(DiskBackend),
        runner: None,
        events,
        events_with_handle: None,
        permissions: None,
        persist: false,
        output_schema: None,
        mcp_servers: vec![],
        face: Default::default(),
        checkpoints: false,
    };
    (
        Session::open(opts, SessionStart::New { id: None }).unwrap(),
        rx,
    )
}

/// A harmless call the kimi-code harness runs without asking.
fn glob(id: &str) -> Reply {
    Reply::tool_call(id, "Glob", json!({"pattern": "*"}))
}

/// Starts a goal with `budget` and runs the goal turn the idle session would start.
async fn run_goal_turn(s: &mut Session, budget: u64) -> TurnEndReason {
    s.set_goal(
        Some("Keep going".into()),
        Some(GoalStatus::Active),
        Some(budget),
    )
    .unwrap();
    let text = s.goal_turn().expect("an active goal asks for a turn");
    s.run_turn("t1".into(), TurnKind::Goal(text), CancellationToken::new())
        .await
        .reason
}

/// Every call in history has its result, so the next request is valid on every wire.
fn calls_and_results(history: &[HistoryItem]) -> (Vec<String>, Vec<String>) {
    let calls = history
        .iter()
        .filter_map(|h| match h {
            HistoryItem::Assistant(reply) => Some(reply.calls().map(|c| c.id.clone())),
            _ => None,
        })
        .flatten()
        .collect();
    let results = history
        .iter()
        .filter_map(|h| match h {
            HistoryItem::ToolResult { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    (calls, results)
}

fn started_calls(rx: &mut UnboundedReceiver<Event>) -> Vec<String> {
    let mut ids = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let Event::ToolCallBegin(b) = e {
            ids.push(b.call_id);
        }
    }
    ids
}

#[tokio::test]
async fn goal_budget_holds_against_a_provider_that_reports_no_usage() {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let replies = (0..20).map(|i| glob(&format!("c{i}")).without_usage());
    let mock = MockServer::start(Script::new(replies)).await.unwrap();
    let (mut s, _rx) = session(&mock, home.path(), cwd.path());
    let reason = run_goal_turn(&mut s, 2000).await;
    assert_eq!(reason, TurnEndReason::Completed);
    let reqs = mock.model_requests();
    // The first request alone is past 2000 tokens by its bytes: one wrap-up, then the end.
    assert!(reqs[0].body.to_string().len() > 8000);
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].body.to_string().contains(WRAP_UP));
    let goal = s.state.goal.clone().unwrap();
    assert_eq!(goal.status, GoalStatus::BudgetLimited);
    let sent: u64 = reqs
        .iter()
        .map(|r| r.body.to_string().len() as u64 / 4)
        .sum();
    assert!(goal.tokens_used >= sent, "{} < {sent}", goal.tokens_used);
    assert_eq!(s.goal_turn(), None, "no further goal turn starts");
}

#[tokio::test]
async fn goal_wrap_up_response_ends_the_turn_and_its_calls_are_answered_not_run() {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockServer::start(Script::new([
        glob("c1").with_usage(40_000, 10_000, 0, 0),
        glob("c2")
            .then_tool_call("c3", "Glob", json!({"pattern": "*.rs"}))
            .with_usage(1_000, 500, 0, 0),
        glob("c4").with_usage(1_000, 500, 0, 0),
    ]))
    .await
    .unwrap();
    let (mut s, mut rx) = session(&mock, home.path(), cwd.path());
    let reason = run_goal_turn(&mut s, 50_000).await;
    assert_eq!(reason, TurnEndReason::Completed);
    assert_eq!(mock.model_requests().len(), 2);
    // Only the first response's call ran; the wrap-up's two are answered, not run.
    assert_eq!(started_calls(&mut rx), ["c1"]);
    let (calls, results) = calls_and_results(&s.state.history);
    assert_eq!(calls, ["c1", "c2", "c3"]);
    assert_eq!(results, calls);
    let not_run = s
        .state
        .history
        .iter()
        .filter(|h| {
            matches!(h, HistoryItem::ToolResult { output, is_error: true, .. }
                if output.starts_with("Not run"))
        })
        .count();
    assert_eq!(not_run, 2);
    // The wrap-up request counts: the goal's total is both requests.
    let goal = s.state.goal.clone().unwrap();
    assert_eq!(
        (goal.status, goal.tokens_used),
        (GoalStatus::BudgetLimited, 51_500)
    );
}

#[tokio::test]
async fn goal_wrap_up_that_answers_ends_the_turn_as_completed() {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockServer::start(Script::new([
        glob("c1").with_usage(400, 100, 0, 0),
        Reply::text("Done: one step. Left: the rest.").with_usage(600, 50, 0, 0),
    ]))
    .await
    .unwrap();
    let (mut s, _rx) = session(&mock, home.path(), cwd.path());
    let reason = run_goal_turn(&mut s, 500).await;
    assert_eq!(reason, TurnEndReason::Completed);
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 2);
    assert!(!reqs[0].body.to_string().contains(WRAP_UP));
    assert!(reqs[1].body.to_string().contains(WRAP_UP));
    assert_eq!(s.state.goal.clone().unwrap().tokens_used, 1_150);
}

#[tokio::test]
async fn goal_counts_its_turn_to_the_end_after_the_model_marks_it_complete() {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockServer::start(Script::new([
        Reply::tool_call("g1", "UpdateGoal", json!({"status": "complete"}))
            .with_usage(100, 10, 0, 0),
        Reply::text("The goal is met.").with_usage(200, 20, 0, 0),
    ]))
    .await
    .unwrap();
    let (mut s, _rx) = session(&mock, home.path(), cwd.path());
    let reason = run_goal_turn(&mut s, 10_000).await;
    assert_eq!(reason, TurnEndReason::Completed);
    let goal = s.state.goal.clone().unwrap();
    assert_eq!((goal.status, goal.tokens_used), (GoalStatus::Complete, 330));
    // A later turn, the goal done, does not count toward it.
    mock.set_script(Script::new([Reply::text("Hello.").with_usage(50, 5, 0, 0)]));
    let user = TurnKind::User(vec![interpreter_protocol::InputItem::Text {
        text: "hi".into(),
    }]);
    s.run_turn("t2".into(), user, CancellationToken::new())
        .await;
    assert_eq!(s.state.goal.clone().unwrap().tokens_used, 330);
}
