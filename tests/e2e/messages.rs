//! A response with two messages reaches each face as two messages, each delta as it was sent:
//! exec's items (Responses wire, with phases) and ACP's message ids.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
    SessionUpdate, TextContent,
};
use agent_client_protocol::{AcpAgent, AcpAgentConfig, Client, on_receive_notification};
use mock_llm::e2e::{TestRepo, interpreter_bin, jsonl};
use mock_llm::{MockServer, Reply, Script};
use std::sync::{Arc, Mutex};

fn two_messages() -> Script {
    Script::new([Reply::default()
        .then_message_deltas(&["Looking ", "first."], Some("commentary"))
        .then_message_deltas(&["All ", "done."], Some("final_answer"))])
}

#[test]
fn exec_shows_two_messages_as_two_agent_message_items() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(two_messages()).unwrap();
    let mut args = vec!["exec".to_string(), "--json".into()];
    args.extend(TestRepo::mock_config(&mock.url(), "responses"));
    let out = repo.run(&args, "answer");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let texts: Vec<String> = jsonl(&out)
        .iter()
        .filter(|e| e["item"]["type"] == "agent_message")
        .map(|e| e["item"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, ["Looking first.", "All done."]);

    // The human output prints both, in order.
    let mock = MockServer::start_blocking(two_messages()).unwrap();
    let mut args = vec!["exec".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "responses"));
    let out = repo.run(&args, "answer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown = format!("{stderr}{stdout}");
    let (first, last) = (
        shown.find("Looking first.").expect("the commentary"),
        shown.find("All done.").expect("the answer"),
    );
    assert!(first < last, "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_gives_each_message_its_own_id_and_each_delta_its_own_chunk() {
    let repo = TestRepo::new();
    let mock = MockServer::start(two_messages()).await.unwrap();
    let mut args: Vec<String> = vec!["acp".into()];
    args.extend(TestRepo::mock_config(&mock.url(), "responses"));
    let agent = AcpAgent::new(AcpAgentConfig::new(interpreter_bin()).args(args).env(
        "OPENINTERPRETER_HOME",
        repo.home.path().display().to_string(),
    ));
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
            agent,
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
                    vec![ContentBlock::Text(TextContent::new("answer"))],
                ))
                .block_task()
                .await?;
                Ok(())
            },
        )
        .await
        .unwrap();
    let chunks: Vec<(String, String)> = updates
        .lock()
        .unwrap()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(c) => match &c.content {
                ContentBlock::Text(t) => Some((
                    c.message_id
                        .as_ref()
                        .map(|m| m.to_string())
                        .unwrap_or_default(),
                    t.text.clone(),
                )),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let texts: Vec<&str> = chunks.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts, ["Looking ", "first.", "All ", "done."]);
    let ids: Vec<&str> = chunks.iter().map(|(id, _)| id.as_str()).collect();
    assert!(!ids[0].is_empty());
    assert_eq!(ids[0], ids[1]);
    assert_eq!(ids[2], ids[3]);
    assert_ne!(ids[1], ids[2]);
}
