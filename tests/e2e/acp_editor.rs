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
