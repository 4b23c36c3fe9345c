//! What the editor knows, over ACP with the official Rust SDK as the client: diagnostics
//! after edits (`_interpreter/diagnostics`).

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, InitializeRequest, Meta,
    NewSessionRequest, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, StopReason,
    TextContent, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{
    AcpAgent, AcpAgentConfig, Client, UntypedMessage, on_receive_notification, on_receive_request,
};
use mock_llm::e2e::{TestRepo, interpreter_bin};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
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

/// The text of every tool result in a Chat request, by call id.
fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                other => other.to_string(),
            };
            (m["tool_call_id"].as_str().unwrap_or("").to_string(), text)
        })
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// An editor's diagnostics: a warning `a.py` always had, an error while it names
/// `undefined_name`, and from the fourth request on a late one a slow server found.
fn editor_diagnostics(asked: usize, paths: &[PathBuf], file: &Path) -> Value {
    let range = |line: u32, col: u32| json!({"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 3}});
    let mut out = serde_json::Map::new();
    let wanted = paths.is_empty() || paths.iter().any(|p| p == file);
    if wanted {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let mut list = vec![
            json!({"range": range(0, 0), "severity": 2, "message": "old warning", "source": "pyright"}),
        ];
        if text.contains("undefined_name") {
            list.push(json!({"range": range(1, 4), "severity": 1, "message": "\"undefined_name\" is not defined", "source": "pyright", "code": "reportUndefinedVariable"}));
        }
        if asked >= 4 {
            list.push(json!({"range": range(0, 0), "severity": 1, "message": "late error", "source": "pyright"}));
        }
        out.insert(file.display().to_string(), Value::Array(list));
    }
    json!({"diagnostics": out})
}

#[derive(Default)]
struct Editor {
    /// The paths of each `_interpreter/diagnostics` request, in order.
    asked: Vec<Vec<PathBuf>>,
    writes: usize,
}

/// Runs two prompts (an edit turn, then "next") with a client that offers diagnostics or not.
async fn run(offer: bool) -> (Vec<Value>, Editor, PathBuf) {
    let repo = TestRepo::new();
    repo.write("a.py", "x = 1\n");
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let file = cwd.join("a.py");
    let mut script = vec![Reply::tool_call(
        "w1",
        "Write",
        json!({"file_path": file, "content": "x = 1\ny = undefined_name\n"}),
    )];
    if offer {
        script.push(Reply::tool_call(
            "d1",
            "mcp__ide__getDiagnostics",
            json!({}),
        ));
    }
    script.extend([Reply::text("Done."), Reply::text("Next done.")]);
    let mock = MockServer::start(Script::new(script)).await.unwrap();
    let editor = Arc::new(Mutex::new(Editor::default()));
    let (e1, e2) = (editor.clone(), editor.clone());
    let f = file.clone();
    let mut caps =
        ClientCapabilities::new().fs(FileSystemCapabilities::new().write_text_file(true));
    if offer {
        let mut meta = Meta::new();
        meta.insert("interpreter/diagnostics".into(), json!(true));
        caps = caps.meta(meta);
    }
    Client
        .v1()
        .on_receive_notification(
            async move |_n: SessionNotification, _cx| Ok(()),
            on_receive_notification!(),
        )
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
            async move |r: WriteTextFileRequest, responder, _cx| {
                std::fs::write(&r.path, &r.content).unwrap();
                e1.lock().unwrap().writes += 1;
                responder.respond(WriteTextFileResponse::new())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: UntypedMessage, responder, _cx| {
                assert_eq!(r.method, "_interpreter/diagnostics", "{r:?}");
                assert!(r.params["sessionId"].is_string());
                let paths: Vec<PathBuf> =
                    serde_json::from_value(r.params["paths"].clone()).unwrap();
                let mut e = e2.lock().unwrap();
                e.asked.push(paths.clone());
                responder.respond(editor_diagnostics(e.asked.len(), &paths, &f))
            },
            on_receive_request!(),
        )
        .connect_with(
            agent(&repo, &mock, &["-c", "harness=\"claude-code\""]),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(
                    InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps),
                )
                .block_task()
                .await?;
                let session = cx
                    .send_request(NewSessionRequest::new(cwd.clone()))
                    .block_task()
                    .await?;
                for text in ["write a.py", "next"] {
                    let resp = cx
                        .send_request(PromptRequest::new(
                            session.session_id.clone(),
                            vec![ContentBlock::Text(TextContent::new(text))],
                        ))
                        .block_task()
                        .await?;
                    assert_eq!(resp.stop_reason, StopReason::EndTurn);
                }
                Ok(())
            },
        )
        .await
        .unwrap();
    let bodies = mock.model_requests().into_iter().map(|r| r.body).collect();
    let editor = std::mem::take(&mut *editor.lock().unwrap());
    (bodies, editor, file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_that_breaks_the_file_gets_the_new_error_in_its_result() {
    let (bodies, editor, file) = run(true).await;
    assert_eq!(editor.writes, 1);
    // Before the write, after it, the model's own look (every file), the turn's end.
    assert_eq!(
        editor.asked,
        vec![
            vec![file.clone()],
            vec![file.clone()],
            vec![],
            vec![file.clone()]
        ]
    );
    assert!(tool_names(&bodies[0]).contains(&"mcp__ide__getDiagnostics".to_string()));
    let results = tool_results(&bodies[1]);
    let (id, write) = &results[0];
    assert_eq!(id, "w1");
    assert!(
        write.ends_with(
            "\n\nNew diagnostics after this edit:\na.py:2:5 error pyright: \"undefined_name\" is not defined\n"
        ),
        "{write}"
    );
    assert!(!write.contains("old warning"), "{write}");
    // The model's own call gets Claude Code's JSON for every file.
    let (_, all) = &tool_results(&bodies[2])[1];
    let all: Value = serde_json::from_str(all).unwrap();
    assert_eq!(all[0]["uri"], format!("file://{}", file.display()));
    assert_eq!(all[0]["diagnostics"][1]["severity"], "Error");
    assert_eq!(all[0]["diagnostics"][1]["code"], "reportUndefinedVariable");
    // What the language server found after the turn ended reaches the next request.
    let next = bodies[3]["messages"].to_string();
    assert!(
        next.contains("reported after your last turn:\\na.py:1:1 error pyright: late error"),
        "{next}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_diagnostics_is_never_asked_and_requests_stay_as_they_were() {
    let (bodies, editor, _) = run(false).await;
    assert_eq!(editor.writes, 1);
    assert!(editor.asked.is_empty());
    assert!(!tool_names(&bodies[0]).contains(&"mcp__ide__getDiagnostics".to_string()));
    for b in &bodies {
        assert!(!b.to_string().contains("diagnostics"), "{b}");
    }
}

// ---- Questions as form elicitations (`elicitation/create`).

use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateElicitationResponse, ElicitationAcceptAction,
    ElicitationAction, ElicitationCapabilities, ElicitationContentValue,
    ElicitationFormCapabilities,
};

/// How the test's user answers a form: `None` never answers.
type Respond = fn(&Value) -> Option<ElicitationAction>;

struct Asked {
    bodies: Vec<Value>,
    stop: StopReason,
    /// Every `elicitation/create` the client got, as JSON.
    forms: Vec<Value>,
    permissions: usize,
}

fn accept(fields: &[(&str, ElicitationContentValue)]) -> ElicitationAction {
    let content: std::collections::BTreeMap<String, ElicitationContentValue> = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    ElicitationAction::Accept(ElicitationAcceptAction::new().content(content))
}

/// One prompt whose first reply calls `tool` with `args`; the client answers forms with
/// `respond` and never answers permission requests.
async fn ask(harness: &str, calls: Vec<Reply>, respond: Respond, extra: &[&str]) -> Asked {
    let repo = TestRepo::new();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mock = MockServer::start(Script::new(calls)).await.unwrap();
    let forms = Arc::new(Mutex::new(Vec::new()));
    let permissions = Arc::new(Mutex::new(0));
    let (f1, p1) = (forms.clone(), permissions.clone());
    let harness_arg = format!("harness=\"{harness}\"");
    let mut args = vec!["-c", harness_arg.as_str()];
    args.extend_from_slice(extra);
    let caps = ClientCapabilities::new()
        .elicitation(ElicitationCapabilities::new().form(ElicitationFormCapabilities::new()));
    let stop = Client
        .v1()
        .on_receive_notification(
            async move |_n: SessionNotification, _cx| Ok(()),
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |_r: RequestPermissionRequest, responder, _cx| {
                *p1.lock().unwrap() += 1;
                // Never answered: the approval timeout decides.
                std::mem::forget(responder);
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: CreateElicitationRequest, responder, _cx| {
                let form = serde_json::to_value(&r).unwrap();
                f1.lock().unwrap().push(form.clone());
                match respond(&form) {
                    Some(action) => responder.respond(CreateElicitationResponse::new(action)),
                    None => {
                        std::mem::forget(responder);
                        Ok(())
                    }
                }
            },
            on_receive_request!(),
        )
        .connect_with(
            agent(&repo, &mock, &args),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(
                    InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps),
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
                        vec![ContentBlock::Text(TextContent::new("set up a database"))],
                    ))
                    .block_task()
                    .await?;
                Ok(resp.stop_reason)
            },
        )
        .await
        .unwrap();
    let bodies = mock.model_requests().into_iter().map(|r| r.body).collect();
    let forms = forms.lock().unwrap().clone();
    let permissions = *permissions.lock().unwrap();
    Asked {
        bodies,
        stop,
        forms,
        permissions,
    }
}

fn claude_question() -> Value {
    json!({"questions": [
        {"question": "Which database?", "header": "DB", "multiSelect": false,
         "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]},
        {"question": "Which extras?", "header": "Extras", "multiSelect": true,
         "options": [{"label": "Auth", "description": "logins"}, {"label": "Cache", "description": "speed"}]}
    ]})
}

fn codex_question() -> Value {
    json!({"questions": [{"id": "db", "header": "DB", "question": "Which database?",
        "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_is_a_form_and_the_picks_reach_the_model() {
    let a = ask(
        "claude-code",
        vec![
            Reply::tool_call("q1", "AskUserQuestion", claude_question()),
            Reply::text("Postgres it is."),
        ],
        |_| {
            Some(accept(&[
                ("q1", ElicitationContentValue::String("Postgres".into())),
                (
                    "q2",
                    ElicitationContentValue::StringArray(vec!["Auth".into(), "Cache".into()]),
                ),
            ]))
        },
        &[],
    )
    .await;
    assert_eq!(a.stop, StopReason::EndTurn);
    let form = &a.forms[0];
    assert_eq!(form["mode"], "form");
    assert_eq!(form["toolCallId"], "q1", "{form}");
    let props = &form["requestedSchema"]["properties"];
    assert_eq!(props["q1"]["type"], "string");
    assert_eq!(props["q1"]["oneOf"][1]["const"], "Postgres", "{form}");
    assert_eq!(props["q2"]["type"], "array");
    assert_eq!(props["q1_other"]["type"], "string");
    let (_, result) = &tool_results(&a.bodies[1])[0];
    assert_eq!(
        result,
        "User has answered your questions: \"Which database?\"=\"Postgres\", \"Which extras?\"=\"Auth, Cache\". You can now continue with the user's answers in mind."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_user_input_is_listed_for_a_client_that_asks_and_takes_the_users_own_words() {
    let a = ask(
        "native",
        vec![
            Reply::tool_call("q1", "request_user_input", codex_question()),
            Reply::text("MariaDB, then."),
        ],
        |_| {
            Some(accept(&[(
                "q1_other",
                ElicitationContentValue::String(" MariaDB ".into()),
            )]))
        },
        &[],
    )
    .await;
    assert_eq!(a.stop, StopReason::EndTurn);
    assert!(tool_names(&a.bodies[0]).contains(&"request_user_input".to_string()));
    let (_, result) = &tool_results(&a.bodies[1])[0];
    assert_eq!(result, r#"{"answers":{"db":{"answers":["MariaDB"]}}}"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_question_ends_the_turn() {
    let a = ask(
        "claude-code",
        vec![
            Reply::tool_call("q1", "AskUserQuestion", claude_question()),
            Reply::text("never sent"),
        ],
        |_| Some(ElicitationAction::Cancel),
        &[],
    )
    .await;
    assert_eq!(a.stop, StopReason::Cancelled);
    assert_eq!(a.bodies.len(), 1, "no request after the cancelled question");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unanswered_questions_and_approvals_give_up_after_the_approval_timeout() {
    let started = std::time::Instant::now();
    let a = ask(
        "native",
        vec![
            Reply::tool_call("q1", "request_user_input", codex_question()),
            Reply::tool_call("s1", "shell", json!({"command": "touch made.txt"})),
            Reply::text("Nobody answered."),
        ],
        |_| None,
        &[
            "-c",
            "approval_timeout_secs=1",
            "-c",
            "approval_policy=\"untrusted\"",
        ],
    )
    .await;
    assert_eq!(a.stop, StopReason::EndTurn);
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    assert_eq!((a.forms.len(), a.permissions), (1, 1));
    let (_, q) = &tool_results(&a.bodies[1])[0];
    assert!(q.starts_with("Nobody answered within 1 seconds."), "{q}");
    let (_, s) = &tool_results(&a.bodies[2])[1];
    assert!(
        s.contains("Nobody answered the approval request within 1 seconds"),
        "{s}"
    );
}

// ---- Subagents as child sessions (the draft updates Zed decodes).

/// Every `session/update` the client got, raw, after a prompt that runs an Explore subagent.
async fn subagent_run(advertise: bool) -> (Vec<Value>, String) {
    use agent_client_protocol::v1::schema::SubagentCapabilities;
    let repo = TestRepo::new();
    repo.write("notes.txt", "the answer is 42\n");
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mock = MockServer::start(Script::new([
        Reply::tool_call(
            "a1",
            "Agent",
            json!({"description": "find the answer", "prompt": "Read notes.txt and report.", "subagent_type": "Explore"}),
        ),
        Reply::tool_call("r1", "Read", json!({"file_path": cwd.join("notes.txt")})),
        Reply::text("The answer is 42."),
        Reply::text("The subagent says 42."),
    ]))
    .await
    .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s1 = seen.clone();
    let mut caps = ClientCapabilities::new();
    if advertise {
        caps = caps.subagents(SubagentCapabilities::new());
    }
    let sid = Client
        .v1()
        .on_receive_notification(
            async move |n: UntypedMessage, _cx| {
                if n.method == "session/update" {
                    s1.lock().unwrap().push(n.params);
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(
            agent(&repo, &mock, &["-c", "harness=\"claude-code\""]),
            async |cx: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>| {
                cx.send_request(
                    InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps),
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
                        vec![ContentBlock::Text(TextContent::new("what is the answer?"))],
                    ))
                    .block_task()
                    .await?;
                assert_eq!(resp.stop_reason, StopReason::EndTurn);
                Ok(session.session_id.0.to_string())
            },
        )
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    (seen, sid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagents_are_child_sessions_in_the_shapes_zed_decodes() {
    let (seen, parent) = subagent_run(true).await;
    let kind = |n: &Value| {
        n["update"]["sessionUpdate"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let spawned = seen
        .iter()
        .find(|n| kind(n) == "subagent_spawned")
        .expect("subagent_spawned");
    assert_eq!(spawned["sessionId"], parent.as_str());
    let u = &spawned["update"];
    let child = u["subagentSessionId"].as_str().unwrap().to_string();
    assert_ne!(child, parent);
    assert_eq!(
        (u["name"].as_str(), u["task"].as_str()),
        (Some("Explore"), Some("find the answer"))
    );
    assert_eq!(u["prompt"], "Read notes.txt and report.");
    assert!(u["capabilities"].is_object());
    // The child's Read is a tool call of the child session, attributed to the parent's call.
    let read: Vec<&Value> = seen
        .iter()
        .filter(|n| n["update"]["toolCallId"] == "r1")
        .collect();
    assert!(!read.is_empty());
    for n in &read {
        assert_eq!(n["sessionId"], child.as_str(), "{n}");
        assert_eq!(
            n["update"]["_meta"]["claudeCode"]["parentToolUseId"], "a1",
            "{n}"
        );
    }
    // The parent's own call stays on the parent session.
    assert!(
        seen.iter()
            .filter(|n| n["update"]["toolCallId"] == "a1")
            .all(|n| n["sessionId"] == parent.as_str())
    );
    let done = seen
        .iter()
        .position(|n| kind(n) == "subagent_state_update")
        .expect("subagent_state_update");
    assert_eq!(seen[done]["update"]["subagentSessionId"], child.as_str());
    assert_eq!(seen[done]["update"]["state"], "completed");
    let last_read = seen
        .iter()
        .rposition(|n| n["update"]["toolCallId"] == "r1")
        .unwrap();
    assert!(last_read < done, "the child's calls come before its end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_capability_a_subagent_stays_in_the_parents_tool_cards() {
    let (seen, parent) = subagent_run(false).await;
    assert!(seen.iter().all(|n| n["sessionId"] == parent.as_str()));
    assert!(!seen.iter().any(|n| {
        n["update"]["sessionUpdate"]
            .as_str()
            .is_some_and(|k| k.starts_with("subagent"))
    }));
    assert!(seen.iter().any(|n| n["update"]["toolCallId"] == "r1"));
    assert!(!seen.iter().any(|n| {
        n["update"]
            .get("_meta")
            .is_some_and(|m| m.get("claudeCode").is_some())
    }));
}
