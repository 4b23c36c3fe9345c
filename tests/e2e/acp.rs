//! `interpreter acp` driven by the official Rust ACP SDK's client role against the mock model.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, InitializeRequest, NewSessionRequest,
    PromptRequest, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason, TextContent,
    ToolCallContent, ToolCallStatus, ToolKind, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{
    AcpAgent, AcpAgentConfig, Client, on_receive_notification, on_receive_request,
};
use mock_llm::e2e::{TestRepo, interpreter_bin};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn agent(repo: &TestRepo, mock: &MockServer, extra: &[&str]) -> AcpAgent {
    let mut args: Vec<String> = vec!["acp".into()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(extra.iter().map(|s| s.to_string()));
    AcpAgent::new(AcpAgentConfig::new(interpreter_bin()).args(args).env(
        "OPENINTERPRETER_HOME",
        repo.home.path().display().to_string(),
    ))
}

#[derive(Default)]
struct Seen {
    updates: Vec<SessionUpdate>,
    permissions: Vec<RequestPermissionRequest>,
    writes: Vec<WriteTextFileRequest>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_with_an_edit_asks_permission_with_the_diff_and_writes_through_the_client() {
    let repo = TestRepo::new();
    repo.write("a.txt", "hello\n");
    let patch =
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+hello world\n*** End Patch\n";
    let mock = MockServer::start(Script::new([
        Reply::default().then_text("Editing a.txt.").then_tool_call(
            "call_1",
            "apply_patch",
            json!({"input": patch}),
        ),
        Reply::text("Done."),
    ]))
    .await
    .unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let file = cwd.join("a.txt");
    let stop = Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                s1.lock().unwrap().updates.push(n.update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: RequestPermissionRequest, responder, _cx| {
                s2.lock().unwrap().permissions.push(r);
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        "allow_once",
                    )),
                ))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: WriteTextFileRequest, responder, _cx| {
                std::fs::write(&r.path, &r.content).unwrap();
                s3.lock().unwrap().writes.push(r);
                responder.respond(WriteTextFileResponse::new())
            },
            on_receive_request!(),
        )
        .connect_with(
            agent(&repo, &mock, &["-c", "approval_policy=\"untrusted\""]),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                let init = cx
                    .send_request(
                        InitializeRequest::new(ProtocolVersion::V1).client_capabilities(
                            ClientCapabilities::new()
                                .fs(FileSystemCapabilities::new().write_text_file(true)),
                        ),
                    )
                    .block_task()
                    .await?;
                assert!(init.agent_capabilities.load_session);
                let session = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                let resp = cx
                    .send_request(PromptRequest::new(
                        session.session_id.clone(),
                        vec![ContentBlock::Text(TextContent::new(
                            "make it say hello world",
                        ))],
                    ))
                    .block_task()
                    .await?;
                Ok(resp.stop_reason)
            },
        )
        .await
        .unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(repo.read("a.txt"), "hello world\n");

    let seen = seen.lock().unwrap();
    // The permission request carries the diff.
    assert_eq!(seen.permissions.len(), 1);
    let fields = &seen.permissions[0].tool_call.fields;
    let diffs: Vec<_> = fields
        .content
        .iter()
        .flatten()
        .filter_map(|c| match c {
            ToolCallContent::Diff(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(diffs.len(), 1);
    assert_eq!(diffs[0].path, file);
    assert_eq!(diffs[0].old_text.as_deref(), Some("hello\n"));
    assert_eq!(diffs[0].new_text, "hello world\n");
    // The edit went through fs/write_text_file.
    assert_eq!(seen.writes.len(), 1);
    assert_eq!(seen.writes[0].path, file);
    assert_eq!(seen.writes[0].content, "hello world\n");
    // tool_call (edit) → in_progress → completed with the diff.
    let mut saw_call = false;
    let mut statuses = Vec::new();
    for u in &seen.updates {
        match u {
            SessionUpdate::ToolCall(tc) if tc.tool_call_id.0.as_ref() == "call_1" => {
                assert_eq!(tc.kind, ToolKind::Edit);
                assert_eq!(tc.locations[0].path, file);
                saw_call = true;
            }
            SessionUpdate::ToolCallUpdate(u) if u.tool_call_id.0.as_ref() == "call_1" => {
                if let Some(s) = u.fields.status {
                    statuses.push(s);
                }
                if u.fields.status == Some(ToolCallStatus::Completed) {
                    assert!(matches!(
                        u.fields.content.as_deref(),
                        Some([ToolCallContent::Diff(_)])
                    ));
                }
            }
            _ => {}
        }
    }
    assert!(saw_call);
    assert_eq!(
        statuses,
        vec![ToolCallStatus::InProgress, ToolCallStatus::Completed]
    );
    let text: String = seen
        .updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(text, "Editing a.txt.Done.");
    assert!(
        seen.updates
            .iter()
            .any(|u| matches!(u, SessionUpdate::SessionInfoUpdate(_)))
    );
    assert!(
        seen.updates
            .iter()
            .any(|u| matches!(u, SessionUpdate::AvailableCommandsUpdate(_)))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_key_answers_auth_required_naming_the_variable() {
    let repo = TestRepo::new();
    let agent = AcpAgent::new(
        AcpAgentConfig::new(interpreter_bin())
            .args([
                "acp",
                "-c",
                "model_providers.kimi.env_key=\"INTERPRETER_ACP_UNSET_KEY\"",
            ])
            .env(
                "OPENINTERPRETER_HOME",
                repo.home.path().display().to_string(),
            ),
    );
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let err = Client
        .v1()
        .connect_with(
            agent,
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let r = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await;
                Ok(r.err())
            },
        )
        .await
        .unwrap()
        .expect("session/new must fail without a key");
    assert_eq!(i32::from(err.code), -32000);
    assert!(
        err.message.contains("INTERPRETER_ACP_UNSET_KEY"),
        "{}",
        err.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_terminals_run_commands_when_enabled() {
    use agent_client_protocol::v1::schema::{
        CreateTerminalRequest, CreateTerminalResponse, ReleaseTerminalRequest,
        ReleaseTerminalResponse, TerminalExitStatus, TerminalOutputRequest, TerminalOutputResponse,
        WaitForTerminalExitRequest, WaitForTerminalExitResponse,
    };
    let repo = TestRepo::new();
    let mock = MockServer::start(Script::new([
        Reply::tool_call(
            "call_t",
            "shell",
            json!({"command": "echo from-client-terminal"}),
        ),
        Reply::text("ok"),
    ]))
    .await
    .unwrap();
    // The fake editor runs the command itself and remembers what it was asked.
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let output = Arc::new(Mutex::new(String::new()));
    let (l1, l2, l3, l4, o1, o2) = (
        log.clone(),
        log.clone(),
        log.clone(),
        log.clone(),
        output.clone(),
        output.clone(),
    );
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let stop = Client
        .v1()
        .on_receive_request(
            async move |_r: RequestPermissionRequest, responder, _cx| {
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        "allow_once",
                    )),
                ))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: CreateTerminalRequest, responder, _cx| {
                l1.lock()
                    .unwrap()
                    .push(format!("create {} {:?}", r.command, r.args));
                let out = std::process::Command::new(&r.command)
                    .args(&r.args)
                    .current_dir(r.cwd.unwrap())
                    .output()
                    .unwrap();
                *o1.lock().unwrap() = String::from_utf8_lossy(&out.stdout).into_owned();
                responder.respond(CreateTerminalResponse::new("term-1"))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |_r: WaitForTerminalExitRequest, responder, _cx| {
                l2.lock().unwrap().push("wait".into());
                responder.respond(WaitForTerminalExitResponse::new(
                    TerminalExitStatus::new().exit_code(0u32),
                ))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |_r: TerminalOutputRequest, responder, _cx| {
                l3.lock().unwrap().push("output".into());
                let text = o2.lock().unwrap().clone();
                responder.respond(
                    TerminalOutputResponse::new(text, false)
                        .exit_status(TerminalExitStatus::new().exit_code(0u32)),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |_r: ReleaseTerminalRequest, responder, _cx| {
                l4.lock().unwrap().push("release".into());
                responder.respond(ReleaseTerminalResponse::new())
            },
            on_receive_request!(),
        )
        .connect_with(
            agent(&repo, &mock, &["-c", "acp_client_terminals=true"]),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(
                    InitializeRequest::new(ProtocolVersion::V1)
                        .client_capabilities(ClientCapabilities::new().terminal(true)),
                )
                .block_task()
                .await?;
                let session = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                let resp = cx
                    .send_request(PromptRequest::new(
                        session.session_id.clone(),
                        vec![ContentBlock::Text(TextContent::new("run it"))],
                    ))
                    .block_task()
                    .await?;
                Ok(resp.stop_reason)
            },
        )
        .await
        .unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            "create /bin/bash [\"-c\", \"echo from-client-terminal\"]".to_string(),
            "wait".into(),
            "output".into(),
            "release".into()
        ]
    );
    let second = &mock.model_requests()[1].body;
    let tool_msg = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool_msg["content"]
            .as_str()
            .unwrap()
            .contains("from-client-terminal")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kimi_code_todolist_becomes_an_acp_plan() {
    use agent_client_protocol::v1::schema::PlanEntryStatus;
    let repo = TestRepo::new();
    let mock = MockServer::start(Script::new([
        Reply::tool_call(
            "functions.TodoList:0",
            "TodoList",
            json!({"todos": [{"title": "Read the code", "status": "done"}, {"title": "Fix it", "status": "in_progress"}]}),
        ),
        Reply::text("ok"),
    ]))
    .await
    .unwrap();
    let updates = Arc::new(Mutex::new(Vec::new()));
    let u1 = updates.clone();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                u1.lock().unwrap().push(n.update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(
            agent(&repo, &mock, &["-c", "model=\"kimi-k3\""]),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let s = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                cx.send_request(PromptRequest::new(
                    s.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new("plan it"))],
                ))
                .block_task()
                .await?;
                Ok(())
            },
        )
        .await
        .unwrap();
    let updates = updates.lock().unwrap();
    let plan = updates
        .iter()
        .find_map(|u| match u {
            SessionUpdate::Plan(p) => Some(p.clone()),
            _ => None,
        })
        .expect("a plan update");
    let entries: Vec<(String, PlanEntryStatus)> = plan
        .entries
        .iter()
        .map(|e| (e.content.clone(), e.status.clone()))
        .collect();
    assert_eq!(
        entries,
        vec![
            ("Read the code".to_string(), PlanEntryStatus::Completed),
            ("Fix it".to_string(), PlanEntryStatus::InProgress)
        ]
    );
    assert_eq!(tool_names_of(&mock.model_requests()[0].body)[0], "Agent");
}

fn tool_names_of(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_replays_edits_as_diffs_and_plans() {
    use agent_client_protocol::v1::schema::LoadSessionRequest;
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n";
    let mock = MockServer::start(Script::new([
        Reply::tool_call(
            "p1",
            "update_plan",
            json!({"plan": [{"step": "edit a.txt", "status": "completed"}]}),
        ),
        Reply::tool_call("e1", "apply_patch", json!({"input": patch})),
        Reply::text("Edited."),
    ]))
    .await
    .unwrap();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let id = Client
        .v1()
        .connect_with(
            agent(&repo, &mock, &[]),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let s = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                cx.send_request(PromptRequest::new(
                    s.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new("edit it"))],
                ))
                .block_task()
                .await?;
                Ok(s.session_id)
            },
        )
        .await
        .unwrap();
    assert_eq!(repo.read("a.txt"), "two\n");
    // A new agent process loads the session and replays it.
    let updates = Arc::new(Mutex::new(Vec::new()));
    let u1 = updates.clone();
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                u1.lock().unwrap().push(n.update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(
            agent(&repo, &mock, &[]),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                cx.send_request(LoadSessionRequest::new(id.clone(), cwd.clone()))
                    .block_task()
                    .await?;
                Ok(())
            },
        )
        .await
        .unwrap();
    let updates = updates.lock().unwrap();
    let edit = updates
        .iter()
        .find_map(|u| match u {
            SessionUpdate::ToolCall(tc) if tc.tool_call_id.0.as_ref() == "e1" => Some(tc.clone()),
            _ => None,
        })
        .expect("the edit is replayed");
    assert_eq!(edit.status, ToolCallStatus::Completed);
    match edit.content.as_slice() {
        [ToolCallContent::Diff(d)] => {
            assert_eq!(d.old_text.as_deref(), Some("one\n"));
            assert_eq!(d.new_text, "two\n");
        }
        other => panic!("expected one diff, got {other:?}"),
    }
    assert!(
        updates
            .iter()
            .any(|u| matches!(u, SessionUpdate::Plan(p) if p.entries.len() == 1))
    );
}

/// claude-code's plan mode in an editor: read-only until the user approves the plan through
/// the permission prompt, then the edit goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_plan_mode_asks_to_leave_and_then_edits() {
    let repo = TestRepo::new();
    repo.write("a.txt", "hello\n");
    let edit = json!({"file_path": "a.txt", "old_string": "hello", "new_string": "hello world"});
    let mock = MockServer::start(Script::new([
        Reply::tool_call("toolu_1", "EnterPlanMode", json!({})),
        Reply::tool_call("toolu_2", "Read", json!({"file_path": "a.txt"})),
        Reply::tool_call("toolu_3", "Edit", edit.clone()),
        Reply::tool_call(
            "toolu_4",
            "ExitPlanMode",
            json!({"plan": "Append ` world` to the greeting in a.txt.",
                   "allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}]}),
        ),
        Reply::tool_call("toolu_5", "Edit", edit),
        Reply::text("Done."),
    ]))
    .await
    .unwrap();
    let permissions = Arc::new(Mutex::new(Vec::new()));
    let p1 = permissions.clone();
    let updates = Arc::new(Mutex::new(Vec::new()));
    let u1 = updates.clone();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let stop = Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                u1.lock().unwrap().push(n.update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: RequestPermissionRequest, responder, _cx| {
                p1.lock().unwrap().push(r);
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        "allow_once",
                    )),
                ))
            },
            on_receive_request!(),
        )
        .connect_with(
            agent(
                &repo,
                &mock,
                &[
                    "-c",
                    "model_providers.mock.wire_api=\"messages\"",
                    "-c",
                    "model=\"claude-sonnet-4-6\"",
                ],
            ),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let s = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                let resp = cx
                    .send_request(PromptRequest::new(
                        s.session_id.clone(),
                        vec![ContentBlock::Text(TextContent::new("greet the world"))],
                    ))
                    .block_task()
                    .await?;
                Ok(resp.stop_reason)
            },
        )
        .await
        .unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(repo.read("a.txt"), "hello world\n");
    // The client's mode follows the session's: read-only in plan mode, back after it, with
    // the options saying the same.
    let updates = updates.lock().unwrap();
    let modes: Vec<String> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::CurrentModeUpdate(m) => Some(m.current_mode_id.0.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(modes, ["read-only", "auto"], "{updates:#?}");
    let option_modes: Vec<String> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ConfigOptionUpdate(o) => serde_json::to_value(&o.config_options)
                .ok()?
                .as_array()?
                .iter()
                .find(|o| o["id"] == "mode")
                .and_then(|o| o["currentValue"].as_str().map(String::from)),
            _ => None,
        })
        .collect();
    assert_eq!(option_modes, ["read-only", "auto"], "{updates:#?}");
    // One question, for leaving plan mode; the refused edit asked nothing.
    let permissions = permissions.lock().unwrap();
    assert_eq!(permissions.len(), 1);
    assert_eq!(
        permissions[0].tool_call.fields.title.as_deref(),
        Some("Approve the plan and leave plan mode")
    );
    // The user reads the plan, and the permissions it asks for, in the prompt.
    let asked = serde_json::to_string(&permissions[0].tool_call.fields.content).unwrap();
    assert!(
        asked.contains("Append ` world` to the greeting in a.txt.")
            && asked.contains("To carry it out, the agent asks to:\\n- run tests (Bash)"),
        "{asked}"
    );
    let reqs = mock.model_requests();
    let results: Vec<serde_json::Value> = reqs[5].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results[2]["is_error"], true, "{}", results[2]);
    assert!(
        results[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("User has approved your plan. Plan mode is off: you can now edit files and run commands. The allowedPrompts were shown to the user with the plan;"),
        "{}",
        results[3]
    );
    assert_eq!(
        results[4]["content"], "Replaced 1 occurrence in a.txt",
        "{}",
        results[4]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_task_is_a_tool_call_of_its_own_with_live_output() {
    let repo = TestRepo::new();
    let mock = MockServer::start(Script::new([
        Reply::tool_call(
            "c1",
            "Bash",
            json!({"command": "echo live-output; sleep 0.5; echo bye", "run_in_background": true, "description": "slow job"}),
        ),
        Reply::tool_call(
            "c2",
            "TaskOutput",
            json!({"task_id": "b1", "block": true, "timeout": 60}),
        ),
        Reply::text("ok"),
    ]))
    .await
    .unwrap();
    let updates = Arc::new(Mutex::new(Vec::new()));
    let u1 = updates.clone();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let a1 = asked.clone();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                u1.lock().unwrap().push(n.update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: RequestPermissionRequest, responder, _cx| {
                a1.lock().unwrap().push(r.tool_call.fields.title.clone());
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        "allow_once",
                    )),
                ))
            },
            on_receive_request!(),
        )
        .connect_with(
            agent(
                &repo,
                &mock,
                &[
                    "-c",
                    "model=\"kimi-k3\"",
                    "-c",
                    "approval_policy=\"untrusted\"",
                ],
            ),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let s = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                cx.send_request(PromptRequest::new(
                    s.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new("run it"))],
                ))
                .block_task()
                .await?;
                Ok(())
            },
        )
        .await
        .unwrap();
    // Approved like any command.
    assert_eq!(
        asked.lock().unwrap().clone(),
        vec![Some("echo live-output; sleep 0.5; echo bye".to_string())]
    );
    let updates = updates.lock().unwrap();
    let mine = |id: &str| id == "background-b1";
    let call = updates
        .iter()
        .find_map(|u| match u {
            SessionUpdate::ToolCall(c) if mine(&c.tool_call_id.0) => Some(c.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the task's own tool call: {updates:#?}"));
    assert_eq!(call.kind, ToolKind::Execute);
    assert_eq!(call.title, "slow job (background)");
    let statuses: Vec<ToolCallStatus> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(c) if mine(&c.tool_call_id.0) => c.fields.status,
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![ToolCallStatus::InProgress, ToolCallStatus::Completed]
    );
    let shown: Vec<String> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(c) if mine(&c.tool_call_id.0) => c.fields.content.clone(),
            _ => None,
        })
        .flatten()
        .filter_map(|c| match c {
            ToolCallContent::Content(c) => match c.content {
                ContentBlock::Text(t) => Some(t.text),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(
        shown.iter().any(|t| t.contains("live-output")),
        "no live output shown: {shown:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_prompt_runs_as_a_turn_of_its_own_while_the_session_is_open() {
    let repo = TestRepo::new();
    let mock = MockServer::start(Script::new([
        // Six fields (seconds first): every second, once.
        Reply::tool_call(
            "c1",
            "CronCreate",
            json!({"cron": "* * * * * *", "prompt": "ping from cron", "recurring": false}),
        ),
        Reply::text("scheduled"),
        Reply::text("pong"),
    ]))
    .await
    .unwrap();
    let updates = Arc::new(Mutex::new(Vec::new()));
    let u1 = updates.clone();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let seen = updates.clone();
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                u1.lock().unwrap().push(n.update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(
            agent(&repo, &mock, &["-c", "model=\"kimi-k3\""]),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let s = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                cx.send_request(PromptRequest::new(
                    s.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new("remind me"))],
                ))
                .block_task()
                .await?;
                // The job fires within a second; its turn's answer follows on its own.
                for _ in 0..300 {
                    let done = seen.lock().unwrap().iter().any(|u| {
                        matches!(u, SessionUpdate::AgentMessageChunk(c)
                            if matches!(&c.content, ContentBlock::Text(t) if t.text.contains("pong")))
                    });
                    if done {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Ok(())
            },
        )
        .await
        .unwrap();
    let updates = updates.lock().unwrap();
    let texts: Vec<(String, String)> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk(c) => Some(("user", &c.content)),
            SessionUpdate::AgentMessageChunk(c) => Some(("agent", &c.content)),
            _ => None,
        })
        .filter_map(|(who, c)| match c {
            ContentBlock::Text(t) => Some((who.to_string(), t.text.clone())),
            _ => None,
        })
        .collect();
    let at = |who: &str, text: &str| {
        texts
            .iter()
            .position(|(w, t)| w == who && t.contains(text))
            .unwrap_or_else(|| panic!("no {who} `{text}` in {texts:#?}"))
    };
    assert!(at("agent", "scheduled") < at("user", "ping from cron"));
    assert!(at("user", "ping from cron") < at("agent", "pong"));
    let requests = mock.model_requests();
    assert_eq!(requests.len(), 3);
    let fired = requests[2].body["messages"].to_string();
    assert!(fired.contains("<cron-fire jobId="), "{fired}");
    assert!(
        fired.contains("<prompt>\\nping from cron\\n</prompt>"),
        "{fired}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_searches_and_image_reads_run_together_as_fetch_and_read_calls() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("shot.png"), mock_llm::e2e::TINY_PNG).unwrap();
    let mock = MockServer::start(Script::new([Reply::text("placeholder")]))
        .await
        .unwrap();
    let web = format!("http://{}", mock.addr());
    mock.set_script(Script::new([
        Reply::default()
            .then_tool_call(
                "f1",
                "FetchURL",
                json!({"url": format!("{web}/web/slow/200/docs")}),
            )
            .then_tool_call("s1", "WebSearch", json!({"query": "tokio"}))
            .then_tool_call("m1", "ReadMediaFile", json!({"path": "shot.png"})),
        Reply::text("read them"),
    ]));
    let updates = Arc::new(Mutex::new(Vec::new()));
    let u1 = updates.clone();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let search = format!("web.search_url=\"{web}/search\"");
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                u1.lock().unwrap().push(n.update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(
            agent(
                &repo,
                &mock,
                &[
                    "-c",
                    "model=\"kimi-k3\"",
                    "-c",
                    "web.allow_private=true",
                    "-c",
                    &search,
                ],
            ),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let s = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                cx.send_request(PromptRequest::new(
                    s.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new("look these up"))],
                ))
                .block_task()
                .await?;
                Ok(())
            },
        )
        .await
        .unwrap();
    let updates = updates.lock().unwrap();
    let kinds: Vec<(String, ToolKind)> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCall(c) => Some((c.tool_call_id.0.to_string(), c.kind)),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("f1".to_string(), ToolKind::Fetch),
            ("s1".to_string(), ToolKind::Fetch),
            ("m1".to_string(), ToolKind::Read)
        ]
    );
    // All three started before any ended: they ran together.
    let first_end = updates
        .iter()
        .position(|u| matches!(u, SessionUpdate::ToolCallUpdate(c) if c.fields.status == Some(ToolCallStatus::Completed)))
        .unwrap();
    let last_start = updates
        .iter()
        .rposition(|u| matches!(u, SessionUpdate::ToolCall(_)))
        .unwrap();
    assert!(last_start < first_end, "{updates:#?}");
    let second = mock.model_requests()[1].body.to_string();
    assert!(second.contains("Fetched [Mock page: docs]"), "{second}");
    assert!(
        second.contains("Web search results for \\\"tokio\\\""),
        "{second}"
    );
    assert!(second.contains("data:image/png;base64,"), "{second}");
}

/// claude-code's ScheduleWakeup in an editor, whose session stays open: a one-shot job the
/// schedule lists as a wakeup (its firing is the schedule's, as a cron job's above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_schedule_wakeup_keeps_a_one_shot_job() {
    let repo = TestRepo::new();
    let mock = MockServer::start(Script::new([
        Reply::tool_call(
            "toolu_1",
            "ScheduleWakeup",
            json!({"delaySeconds": 5, "reason": "checking the long build", "prompt": "check the build"}),
        ),
        Reply::tool_call("toolu_2", "CronList", json!({})),
        Reply::text("I will look again in a minute."),
    ]))
    .await
    .unwrap();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    Client
        .v1()
        .connect_with(
            agent(
                &repo,
                &mock,
                &[
                    "-c",
                    "model_providers.mock.wire_api=\"messages\"",
                    "-c",
                    "model=\"claude-sonnet-4-6\"",
                ],
            ),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let s = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                cx.send_request(PromptRequest::new(
                    s.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new("watch the build"))],
                ))
                .block_task()
                .await?;
                Ok(())
            },
        )
        .await
        .unwrap();
    let reqs = mock.model_requests();
    let results: Vec<String> = reqs[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].as_str().unwrap_or_default().to_string())
        .collect();
    // The delay is held to at least a minute.
    assert!(
        results[0].starts_with("Scheduled wakeup in 60 s: checking the long build (job "),
        "{}",
        results[0]
    );
    let id = results[0]
        .split("(job ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    assert!(
        results[1].starts_with(&format!("{id}\twakeup\tonce\tnext "))
            && results[1].ends_with("\tcheck the build"),
        "{}",
        results[1]
    );
}
