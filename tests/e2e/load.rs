//! One `interpreter acp` process, 20 concurrent sessions × 5 prompts against the mock: every
//! prompt gets its own answer, with no cross-talk. Prints the agent's peak RSS.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
    SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{AcpAgent, AcpAgentConfig, Client, on_receive_notification};
use mock_llm::e2e::{TestRepo, interpreter_bin};
use mock_llm::{MockServer, Reply, Script};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const SESSIONS: usize = 20;
const PROMPTS: usize = 5;

/// The agent's peak RSS in KiB, found by the unique model name on its command line.
fn peak_rss_kib(marker: &str) -> Option<u64> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            let status = std::fs::read_to_string(entry.path().join("status")).ok()?;
            return status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok();
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sessions_five_prompts_each_without_cross_talk() {
    let repo = TestRepo::new();
    let mock = MockServer::start(Script::new([
        Reply::text("echo: {{last_user}}").with_repeat((SESSIONS * PROMPTS * 2) as u32)
    ]))
    .await
    .unwrap();
    let marker = format!("load-test-{}", std::process::id());
    let mut args: Vec<String> = vec!["acp".into()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(["-c".to_string(), format!("model=\"{marker}\"")]);
    let agent = AcpAgent::new(AcpAgentConfig::new(interpreter_bin()).args(args).env(
        "OPENINTERPRETER_HOME",
        repo.home.path().display().to_string(),
    ));
    // Agent text per session, in arrival order.
    let texts: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let t1 = texts.clone();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let start = std::time::Instant::now();
    let marker2 = marker.clone();
    let peak = Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                if let SessionUpdate::AgentMessageChunk(c) = &n.update
                    && let ContentBlock::Text(t) = &c.content
                {
                    t1.lock()
                        .unwrap()
                        .entry(n.session_id.0.to_string())
                        .or_default()
                        .push_str(&t.text);
                }
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
                let mut ids = Vec::new();
                for _ in 0..SESSIONS {
                    let s = cx
                        .send_request(NewSessionRequest::new(cwd.clone()))
                        .block_task()
                        .await?;
                    ids.push(s.session_id);
                }
                let mut tasks = Vec::new();
                for (i, id) in ids.iter().enumerate() {
                    let cx = cx.clone();
                    let id = id.clone();
                    tasks.push(tokio::spawn(async move {
                        let mut stops = Vec::new();
                        for p in 0..PROMPTS {
                            let r = cx
                                .send_request(PromptRequest::new(
                                    id.clone(),
                                    vec![ContentBlock::Text(TextContent::new(format!(
                                        "session {i} prompt {p}|"
                                    )))],
                                ))
                                .block_task()
                                .await?;
                            stops.push(r.stop_reason);
                        }
                        Ok::<_, agent_client_protocol::Error>((id, stops))
                    }));
                }
                let mut results = Vec::new();
                for t in tasks {
                    results.push(t.await.expect("task panicked")?);
                }
                let peak = peak_rss_kib(&marker2);
                Ok((results, peak))
            },
        )
        .await
        .unwrap();
    let elapsed = start.elapsed();
    let (results, peak) = peak;
    let texts = texts.lock().unwrap();
    for (i, (id, stops)) in results.iter().enumerate() {
        assert_eq!(stops, &vec![StopReason::EndTurn; PROMPTS]);
        let expected: String = (0..PROMPTS)
            .map(|p| format!("echo: session {i} prompt {p}|"))
            .collect();
        assert_eq!(
            texts.get(&*id.0).map(String::as_str),
            Some(expected.as_str()),
            "session {i}"
        );
    }
    assert_eq!(mock.model_requests().len(), SESSIONS * PROMPTS);
    eprintln!(
        "load: {SESSIONS} sessions x {PROMPTS} prompts in {:.2}s; agent peak RSS {} KiB",
        elapsed.as_secs_f64(),
        peak.map(|p| p.to_string())
            .unwrap_or_else(|| "unknown".into())
    );
}
