//! Issue 22, item 11, with the official Rust ACP SDK as the client: a permission request shows
//! the whole command (every line, invisible and bidirectional characters escaped) in its
//! content, says why a dangerous command is dangerous, and offers no "always allow" for a
//! command the policy asks about every time.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PermissionOptionKind, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, TextContent, ToolCallContent,
};
use agent_client_protocol::{AcpAgent, AcpAgentConfig, Client, on_receive_request};
use mock_llm::e2e::{TestRepo, interpreter_bin};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn texts(r: &RequestPermissionRequest) -> Vec<String> {
    r.tool_call
        .fields
        .content
        .iter()
        .flatten()
        .filter_map(|c| match c {
            ToolCallContent::Content(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn offers_always(r: &RequestPermissionRequest) -> bool {
    r.options
        .iter()
        .any(|o| o.kind == PermissionOptionKind::AllowAlways)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_permission_request_shows_the_escaped_command_and_why_it_is_dangerous() {
    let repo = TestRepo::new();
    let victim = super::victim();
    let v = victim.path().display().to_string();
    // Two lines, a right-to-left override and a zero-width space: shown raw in a title this
    // reads as `echo okrm -rf …` with the end reversed.
    let dangerous = format!("echo ok\nrm -rf {v}/x\u{202E}hs.txt\u{200B}");
    let ordinary = "touch made-by-the-agent.txt".to_string();
    let mock = MockServer::start(Script::new([
        Reply::tool_call("c0", "shell", json!({"command": dangerous})),
        Reply::tool_call("c1", "shell", json!({"command": ordinary})),
        Reply::text("done"),
    ]))
    .await
    .unwrap();
    let seen = Arc::new(Mutex::new(Vec::<RequestPermissionRequest>::new()));
    let s1 = seen.clone();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut args: Vec<String> = vec!["acp".into()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(["-c".into(), "harness=\"native\"".into()]);
    let agent = AcpAgent::new(AcpAgentConfig::new(interpreter_bin()).args(args).env(
        "OPENINTERPRETER_HOME",
        repo.home.path().display().to_string(),
    ));
    Client
        .v1()
        .on_receive_request(
            async move |r: RequestPermissionRequest, responder, _cx| {
                s1.lock().unwrap().push(r);
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        "reject_once",
                    )),
                ))
            },
            on_receive_request!(),
        )
        .connect_with(
            agent,
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                // A new session is in `auto` mode: every command that is not read-only asks.
                let session = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                cx.send_request(PromptRequest::new(
                    session.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new("go"))],
                ))
                .block_task()
                .await?;
                Ok(())
            },
        )
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    let (first, second) = (&seen[0], &seen[1]);

    let text = texts(first).join("\n");
    assert!(
        text.contains(&format!(
            "echo ok\nrm -rf {v}/x\\u{{202e}}hs.txt\\u{{200b}}"
        )),
        "the command, every line, escaped:\n{text}"
    );
    assert!(
        text.contains("Dangerous:") && text.contains("recursive delete outside the workspace"),
        "the reason:\n{text}"
    );
    let title = first.tool_call.fields.title.clone().unwrap_or_default();
    for shown in [&text, &title] {
        assert!(
            !shown.contains(['\u{202E}', '\u{200B}']),
            "a raw invisible character: {shown:?}"
        );
    }
    assert!(!title.contains('\n'), "{title:?}");
    assert!(!offers_always(first), "{:#?}", first.options);

    // An ordinary command asks in auto mode too, and may be allowed for the session.
    assert!(texts(second).join("\n").contains(&ordinary));
    assert!(!texts(second).join("\n").contains("Dangerous"));
    assert!(offers_always(second), "{:#?}", second.options);
    assert!(victim.path().join("keep.txt").exists());
}
