//! Sessions against the scripted mock model: subagents leave their parent as it was.

use futures::future::BoxFuture;
use interpreter_protocol::{InputItem, TurnEndReason};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use super::turn::TurnKind;
use super::{EventSink, SessionOptions, SessionStart};
use crate::config::{Config, Overrides};
use crate::model::{HistoryItem, Parts as _, ToolSpec};
use crate::tools::table::Tool;
use crate::tools::{CallDescription, ToolContext, ToolOutcome};
use crate::workspace::{DiskBackend, Workspace};

/// A tool whose run panics, as a buggy tool would.
struct Panics(ToolSpec);

impl Tool for Panics {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn describe(&self, _: &Value, _: &Workspace) -> CallDescription {
        CallDescription {
            kind: interpreter_protocol::ToolKind::Other,
            title: "boom".into(),
            locations: vec![],
            command: None,
        }
    }
    fn run<'a>(&'a self, _: Value, _: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async { panic!("the tool broke") })
    }
}

fn session(mock: &MockServer, home: &std::path::Path, cwd: &std::path::Path) -> Session {
    let opts = session_options(mock, home, cwd);
    let mut s = Session::open(opts, SessionStart::New { id: None }).unwrap();
    let boom = Arc::new(Panics(ToolSpec {
        name: "Boom".into(),
        description: "Breaks.".into(),
        parameters: json!({"type": "object"}),
    }));
    s.state.tools = s.state.tools.extended([boom as Arc<dyn Tool>]);
    s
}

/// Options for a session on the mock model, Kimi Code's harness, logging nothing.
fn session_options(
    mock: &MockServer,
    home: &std::path::Path,
    cwd: &std::path::Path,
) -> SessionOptions {
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
    let (events, _rx) = EventSink::new();
    SessionOptions {
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
    }
}

/// What must not change when a subagent runs: the parent's own history so far, its tools,
/// its policy and its event sink.
fn parent_state(s: &Session) -> (Vec<HistoryItem>, Vec<String>, usize) {
    (
        s.state.history.clone(),
        s.state
            .tools
            .names()
            .iter()
            .map(|n| n.to_string())
            .collect(),
        Arc::as_ptr(&s.services.policy) as *const u8 as usize,
    )
}

fn user(text: &str) -> TurnKind {
    TurnKind::User(vec![InputItem::Text { text: text.into() }])
}

#[tokio::test]
async fn a_subagent_whose_tool_panics_leaves_the_parent_as_it_was() {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockServer::start(Script::new([
        Reply::tool_call(
            "a1",
            "Agent",
            json!({"description": "explore", "prompt": "look around"}),
        ),
        Reply::tool_call("b1", "Boom", json!({})),
        Reply::text("The child is done."),
        Reply::text("The parent is done."),
    ]))
    .await
    .unwrap();
    let mut s = session(&mock, home.path(), cwd.path());
    let (_, tools_before, policy_before) = parent_state(&s);
    let ended = s
        .run_turn("t1".into(), user("delegate"), CancellationToken::new())
        .await;
    assert_eq!(ended.reason, TurnEndReason::Completed);
    let (history, tools, policy) = parent_state(&s);
    assert_eq!((tools, policy), (tools_before, policy_before));
    // The parent saw only its own call and the subagent's answer; the child's panic stayed
    // inside the child (a failed call it read and went past).
    let results: Vec<&str> = history
        .iter()
        .filter_map(|h| match h {
            HistoryItem::ToolResult { output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1);
    assert!(
        results[0].ends_with("status: completed\n\n[summary]\nThe child is done."),
        "{}",
        results[0]
    );
    let child_request = &mock.model_requests()[2].body;
    let child_tool_result = child_request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        child_tool_result["content"]
            .as_str()
            .unwrap()
            .contains("internal error"),
        "{child_tool_result}"
    );
    assert!(
        !history
            .iter()
            .any(|h| matches!(h, HistoryItem::User { text, .. } if text == "look around")),
        "the child's prompt leaked into the parent"
    );
}

#[tokio::test]
async fn a_cancelled_subagent_leaves_the_parent_as_it_was_and_it_goes_on() {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockServer::start(Script::new([
        Reply::tool_call(
            "a1",
            "Agent",
            json!({"description": "slow", "prompt": "take your time"}),
        ),
        Reply::text("never seen").with_delay(10_000),
    ]))
    .await
    .unwrap();
    let mut s = session(&mock, home.path(), cwd.path());
    let (_, tools_before, policy_before) = parent_state(&s);
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        stop.cancel();
    });
    let ended = s.run_turn("t1".into(), user("delegate"), cancel).await;
    assert_eq!(ended.reason, TurnEndReason::Cancelled);
    let (history, tools, policy) = parent_state(&s);
    assert_eq!((tools, policy), (tools_before, policy_before));
    // Every call in the parent's history has its result, so the next request is valid.
    let calls = history
        .iter()
        .filter(|h| matches!(h, HistoryItem::Assistant(reply) if reply.has_calls()))
        .count();
    let results = history
        .iter()
        .filter(|h| matches!(h, HistoryItem::ToolResult { .. }))
        .count();
    assert_eq!(calls, results);

    mock.set_script(Script::new([Reply::text("Back again.")]));
    let ended = s
        .run_turn("t2".into(), user("go on"), CancellationToken::new())
        .await;
    assert_eq!(ended.reason, TurnEndReason::Completed);
    assert!(matches!(
        s.state.history.last(),
        Some(HistoryItem::Assistant(reply)) if reply.text() == "Back again."
    ));
}

#[tokio::test]
async fn input_steered_in_while_the_model_answers_gets_its_own_request() {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockServer::start(Script::new([])).await.unwrap();
    let mut s = session(&mock, home.path(), cwd.path());
    mock.set_script(Script::new([
        Reply::text("one").with_delay(300),
        Reply::text("two"),
    ]));
    // As if `Op::Steer` came while the answer streamed: after the request went out.
    let steer = s.active.steer.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        steer.lock().unwrap().push(InputItem::Text {
            text: "late steer".into(),
        });
    });
    let ended = s
        .run_turn("t1".into(), user("start"), CancellationToken::new())
        .await;
    assert_eq!(ended.reason, TurnEndReason::Completed);
    assert_eq!(mock.model_requests().len(), 2);
    let last = mock.model_requests().last().unwrap().body.to_string();
    assert!(last.contains("late steer"), "{last}");
    assert!(matches!(
        s.state.history.last(),
        Some(HistoryItem::Assistant(reply)) if reply.text() == "two"
    ));
}

#[tokio::test]
async fn titles_schemas_and_policies_are_ops_and_the_policy_is_logged() {
    use interpreter_protocol::{ApprovalPolicy, Op, Permissions, SandboxMode};
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockServer::start(Script::new([Reply::text("{}"), Reply::text("plain")]))
        .await
        .unwrap();
    let overrides = Overrides {
        config: vec![
            "model_provider=\"mock\"".into(),
            format!(
                "model_providers.mock={{name=\"mock\", base_url=\"{}\", wire_api=\"chat\"}}",
                mock.url()
            ),
            "model=\"mock-model\"".into(),
        ],
        ..Default::default()
    };
    let config =
        Config::from_layers(home.path().to_path_buf(), None, None, &[], &overrides).unwrap();
    let (events, _rx) = EventSink::new();
    let opts = SessionOptions {
        config,
        cwd: cwd.path().to_path_buf(),
        extra_roots: vec![],
        backend: Arc::new(DiskBackend),
        runner: None,
        events,
        events_with_handle: None,
        permissions: None,
        persist: true,
        output_schema: None,
        mcp_servers: vec![],
        face: Default::default(),
        checkpoints: false,
    };
    let h = super::spawn(opts, SessionStart::New { id: None })
        .await
        .unwrap();
    let store = crate::store::SessionStore::new(home.path());
    let first = store.summary(h.id()).unwrap().permissions.unwrap();
    assert_eq!(
        first.approval,
        ApprovalPolicy::OnRequest,
        "the starting policy is logged"
    );
    let never = Permissions {
        sandbox: SandboxMode::ReadOnly,
        approval: ApprovalPolicy::Never,
        ask_commands: false,
    };
    let _ = h.submit(Op::SetPermissions(never));
    assert!(matches!(
        h.submit(Op::SetTitle { title: "  ".into() }).done().await,
        super::OpResult::Failed(_)
    ));
    let _ = h
        .submit(Op::SetTitle {
            title: "Named".into(),
        })
        .done()
        .await;
    let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let _ = h.submit(Op::SetOutputSchema {
        schema: Some(schema),
    });
    let _ = h
        .submit(Op::UserInput {
            items: vec![InputItem::Text { text: "a".into() }],
        })
        .done()
        .await;
    let _ = h.submit(Op::SetOutputSchema { schema: None });
    let _ = h
        .submit(Op::UserInput {
            items: vec![InputItem::Text { text: "b".into() }],
        })
        .done()
        .await;
    let summary = store.summary(h.id()).unwrap();
    assert_eq!(summary.permissions, Some(never));
    assert_eq!(summary.title.as_deref(), Some("Named"));
    let bodies: Vec<String> = mock
        .model_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(bodies[0].contains("response_format"), "{}", bodies[0]);
    assert!(!bodies[1].contains("response_format"), "{}", bodies[1]);
}

/// External tools that say which of their names a call routes to.
struct LongNames(Vec<String>);

impl crate::tools::ExternalTools for LongNames {
    fn specs(&self) -> Vec<ToolSpec> {
        self.0
            .iter()
            .map(|n| crate::tools::table::spec(n, "A tool.", json!({"type": "object"})))
            .collect()
    }
    fn describe(&self, tool: &str, _: &Value) -> Option<CallDescription> {
        Some(CallDescription {
            kind: interpreter_protocol::ToolKind::Other,
            title: format!("routes to {tool}"),
            locations: vec![],
            command: None,
        })
    }
    fn call<'a>(&'a self, _: &'a str, _: Value, _: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async { ToolOutcome::ok("") })
    }
}

/// Every harness, after every naming rule: each MCP tool has a valid name of its own that
/// no other tool has, and a call by that name reaches it.
#[test]
fn mcp_tool_names_are_unique_and_reachable_in_every_harness() {
    // As `mcp::names` names them: two 72-character tools that share 64 characters, one
    // whose name is what another's cut looks like, and names the harnesses use themselves.
    let shared = format!("srv__{}", "t".repeat(59));
    let mut inner = crate::tools::names::UniqueNames::default();
    let raw = [
        format!("{shared}_alpha__"),
        format!("{shared}_beta___"),
        // 64 characters each, apart only in their last ones: a prefix and a cut at 64
        // would make them one name.
        format!("srv__{}_abc", "t".repeat(55)),
        format!("srv__{}_abd", "t".repeat(55)),
        "x".repeat(80),
        "Bash".into(),
        "shell".into(),
        "mcp__srv__a".into(),
        "srv__a".into(),
    ];
    let mut internal: Vec<String> = raw.iter().map(|n| inner.claim(n)).collect();
    internal.push(inner.claim(&internal[4].clone()));
    let ext: Arc<dyn crate::tools::ExternalTools> = Arc::new(LongNames(internal.clone()));
    let env = crate::harness::PromptEnv {
        cwd: "/repo".into(),
        roots: vec!["/repo".into()],
        os: "linux".into(),
        shell: "bash (/bin/bash)".into(),
        agents_md: None,
        sandbox: crate::config::SandboxMode::WorkspaceWrite,
        approval: crate::config::ApprovalPolicy::OnRequest,
        tree: String::new(),
        skills: vec![],
        agents: vec![],
        commands: vec![],
        explore_model: None,
        plan_mode: false,
        face: Default::default(),
        web: Default::default(),
        images: false,
        model: String::new(),
        provider: String::new(),
        github_cli: false,
        browser: false,
    };
    let ws = Workspace::new(&std::env::temp_dir(), &[], Arc::new(DiskBackend)).unwrap();
    for name in crate::harness::names() {
        let h = crate::harness::by_name(name).unwrap();
        let own = h.tools(&env).names().len();
        let table = super::session::tool_table(&h, &env, Some(&ext));
        let names: Vec<&str> = table.all_names().collect();
        let mut seen = std::collections::HashSet::new();
        for n in &names {
            assert!(seen.insert(*n), "{name}: `{n}` twice in {names:?}");
            assert!(
                !n.is_empty()
                    && n.len() <= 64
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{name}: `{n}` is not a name providers accept"
            );
        }
        // Listed: the harness's own tools, then the external ones (hidden tools follow).
        let listed = table.names();
        let external = &listed[own..];
        assert_eq!(external.len(), internal.len(), "{name}: {names:?}");
        for (shown, inner) in external.iter().zip(&internal) {
            let d = table.get(shown).unwrap().describe(&json!({}), &ws);
            assert_eq!(d.title, format!("routes to {inner}"), "{name}: `{shown}`");
        }
    }
}

/// A face's permissions are the session's from its first event: one `SessionConfigured`
/// carries them (ask-before-commands too), no `SettingsChanged` follows, and a sink built from
/// the session's handle has it before the first event.
#[tokio::test]
async fn permissions_and_the_handle_are_set_once_when_a_session_opens() {
    let mock = MockServer::start(Script::new(vec![])).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut opts = session_options(&mock, home.path(), cwd.path());
    let auto = interpreter_protocol::PermissionMode::Auto
        .permissions(interpreter_protocol::ApprovalPolicy::OnRequest);
    assert!(auto.ask_commands);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    opts.permissions = Some(auto);
    opts.events_with_handle = Some(Box::new(move |session: super::WeakSessionHandle| {
        EventSink::from_fn(move |e| {
            let _ = tx.send((session.upgrade().map(|h| h.id().to_string()), e));
        })
    }));
    let handle = super::spawn(opts, SessionStart::New { id: None })
        .await
        .unwrap();
    handle.submit(interpreter_protocol::Op::Replay).done().await;
    let mut configured = 0;
    while let Ok((session, e)) = rx.try_recv() {
        assert_eq!(session.as_deref(), Some(handle.id()), "{e:?}");
        match e {
            interpreter_protocol::Event::SessionConfigured(c) => {
                configured += 1;
                assert_eq!(c.settings.permissions, auto);
            }
            interpreter_protocol::Event::SettingsChanged(s) => panic!("changed at open: {s:?}"),
            _ => {}
        }
    }
    assert_eq!(configured, 1);
}

/// A tool that notes how many of its calls run at once. A reading call waits (up to a
/// bound) for a second one to join it; a writing call only looks.
struct Overlap {
    spec: ToolSpec,
    kind: interpreter_protocol::ToolKind,
    running: Arc<std::sync::atomic::AtomicUsize>,
    joined: Arc<tokio::sync::Notify>,
}

impl Tool for Overlap {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, _: &Value, _: &Workspace) -> CallDescription {
        CallDescription::new(self.kind, self.spec.name.clone(), vec![])
    }
    fn run<'a>(&'a self, args: Value, _: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        use std::sync::atomic::Ordering::SeqCst;
        Box::pin(async move {
            let name = args["name"].as_str().unwrap_or_default().to_string();
            let others = self.running.fetch_add(1, SeqCst);
            let company = if self.kind == interpreter_protocol::ToolKind::Edit {
                others
            } else {
                self.joined.notify_waiters();
                let waited =
                    tokio::time::timeout(std::time::Duration::from_secs(5), self.joined.notified());
                match others {
                    0 => usize::from(waited.await.is_ok()),
                    n => n,
                }
            };
            self.running.fetch_sub(1, SeqCst);
            ToolOutcome::ok(format!("{name}: {company} alongside"))
        })
    }
}

#[tokio::test]
async fn reads_of_one_response_run_together_and_writes_alone_with_results_in_call_order() {
    let (home, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockServer::start(Script::new([
        Reply::default()
            .then_tool_call("r1", "Look", json!({"name": "r1"}))
            .then_tool_call("r2", "Look", json!({"name": "r2"}))
            .then_tool_call("w1", "Change", json!({"name": "w1"}))
            .then_tool_call("r3", "Look", json!({"name": "r3"}))
            .then_tool_call("w2", "Change", json!({"name": "w2"})),
        Reply::text("done"),
    ]))
    .await
    .unwrap();
    let mut s = session(&mock, home.path(), cwd.path());
    let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let joined = Arc::new(tokio::sync::Notify::new());
    let tool = |name: &str, kind| {
        Arc::new(Overlap {
            spec: ToolSpec {
                name: name.into(),
                description: "Notes company.".into(),
                parameters: json!({"type": "object"}),
            },
            kind,
            running: running.clone(),
            joined: joined.clone(),
        }) as Arc<dyn Tool>
    };
    s.state.tools = s.state.tools.extended([
        tool("Look", interpreter_protocol::ToolKind::Read),
        tool("Change", interpreter_protocol::ToolKind::Edit),
    ]);
    let ended = s
        .run_turn("t1".into(), user("go"), CancellationToken::new())
        .await;
    assert_eq!(ended.reason, TurnEndReason::Completed);
    let results: Vec<&str> = s
        .state
        .history
        .iter()
        .filter_map(|h| match h {
            HistoryItem::ToolResult { output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect();
    // r1 and r2 overlap; w1 runs alone and splits r3 from them; r3 and w2 have no company.
    assert_eq!(
        results,
        vec![
            "r1: 1 alongside",
            "r2: 1 alongside",
            "w1: 0 alongside",
            "r3: 0 alongside",
            "w2: 0 alongside"
        ]
    );
}
