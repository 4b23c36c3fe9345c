//! Issue 27 through the real binary and the mock model: one turn patches a CRLF file, adds a
//! file, and runs a command that creates a file, deletes one and clears an exec bit. The user
//! then edits an unrelated file and one of the agent's. `interpreter exec undo` puts the turn's
//! files back byte for byte, keeps both user edits (naming the second as skipped), and the
//! next request no longer holds the turn. In a repository, in one with staged changes (its
//! index and HEAD untouched), and outside git.

use mock_llm::e2e::{TestRepo, git, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;
use std::path::Path;
use std::process::Output;

const PROMPT: &str = "make the three changes, please";

const PATCH: &str = "*** Begin Patch\n*** Update File: crlf.txt\n@@\n one\n-two\n+TWO\n*** Update File: also.txt\n@@\n-before\n+agent\n*** Add File: added.txt\n+new\n*** End Patch\n";

fn script() -> Script {
    Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": PATCH})),
        Reply::tool_call(
            "c2",
            "shell",
            json!({"command": "echo out > made.txt && rm doomed.txt && chmod a-x run.sh"}),
        ),
        Reply::text("Done."),
        Reply::text("Still here."),
    ])
}

fn args(mock: &MockServer, extra: &[&str]) -> Vec<String> {
    mock_llm::e2e::exec_args(&mock.url(), extra)
}

fn ok(out: &Output) -> String {
    mock_llm::e2e::succeeded(out)
}

fn bytes(root: &Path, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(root.join(rel)).ok()
}

#[cfg(unix)]
fn mode(root: &Path, rel: &str) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(root.join(rel))
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

fn files(repo: &TestRepo) {
    std::fs::write(repo.path().join("crlf.txt"), b"one\r\ntwo\r\n").unwrap();
    repo.write("doomed.txt", "delete me\n");
    repo.write("run.sh", "#!/bin/sh\necho hi\n");
    repo.write("unrelated.txt", "untouched\n");
    repo.write("also.txt", "before\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let p = repo.path().join("run.sh");
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The turn, the user's edits, the undo, and a next prompt; `extra` goes to every exec.
fn turn_edit_undo(repo: &TestRepo, extra: &[&str]) {
    let root = repo.path();
    let mock = MockServer::start_blocking(script()).unwrap();
    let mut first = extra.to_vec();
    first.push("--json");
    let out = repo.run(&args(&mock, &first), PROMPT);
    let events = jsonl(&out);
    ok(&out);
    let id = events[0]["thread_id"].as_str().unwrap().to_string();
    // The turn did what it was told.
    assert_eq!(bytes(root, "added.txt").unwrap(), b"new\n");
    assert_eq!(bytes(root, "made.txt").unwrap(), b"out\n");
    assert_eq!(bytes(root, "doomed.txt"), None);
    assert_ne!(bytes(root, "crlf.txt").unwrap(), b"one\r\ntwo\r\n");
    #[cfg(unix)]
    assert_eq!(mode(root, "run.sh"), 0o644);
    // The user, after the turn.
    repo.write("unrelated.txt", "the user's own\n");
    repo.write("also.txt", "the user rewrote this\n");

    let mut undo = extra.to_vec();
    undo.extend(["undo", &id]);
    let said = ok(&repo.run(&args(&mock, &undo), ""));
    assert!(said.starts_with("Undid the last turn."), "{said}");
    assert!(
        said.contains("- kept `also.txt`: changed after the turn; kept"),
        "{said}"
    );
    assert!(said.contains("- removed `added.txt`"), "{said}");
    assert!(said.contains("- restored `doomed.txt`"), "{said}");
    assert_eq!(bytes(root, "crlf.txt").unwrap(), b"one\r\ntwo\r\n");
    assert_eq!(bytes(root, "doomed.txt").unwrap(), b"delete me\n");
    assert_eq!(bytes(root, "added.txt"), None);
    assert_eq!(bytes(root, "made.txt"), None);
    #[cfg(unix)]
    assert_eq!(mode(root, "run.sh"), 0o755);
    assert_eq!(bytes(root, "unrelated.txt").unwrap(), b"the user's own\n");
    assert_eq!(bytes(root, "also.txt").unwrap(), b"the user rewrote this\n");

    // The next request holds no trace of the undone turn.
    mock.clear_requests();
    let mut next = extra.to_vec();
    next.extend(["resume", &id]);
    ok(&repo.run(&args(&mock, &next), "what now?"));
    let requests = mock.model_requests();
    let body = requests.last().expect("a request").body.to_string();
    assert!(body.contains("what now?"), "{body}");
    assert!(
        !body.contains(PROMPT),
        "the undone prompt is still sent: {body}"
    );
    assert!(
        !body.contains("made.txt"),
        "the undone tool call is still sent: {body}"
    );

    // Nothing left to undo: said, and nothing changes.
    let mut again = extra.to_vec();
    again.extend(["undo", &id, "--turns", "2"]);
    let out = repo.run(&args(&mock, &again), "");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only 1 turn(s) can be undone, not 2"), "{err}");
}

#[test]
fn exec_undo_in_a_repository() {
    let repo = TestRepo::new();
    files(&repo);
    turn_edit_undo(&repo, &[]);
}

#[test]
fn exec_undo_leaves_staged_changes_index_and_head_alone() {
    let repo = TestRepo::new();
    files(&repo);
    repo.write("staged.txt", "v1\n");
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "first"]);
    repo.write("staged.txt", "v2, staged\n");
    git(repo.path(), &["add", "staged.txt"]);
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let refs = git(repo.path(), &["for-each-ref"]);
    let index = std::fs::read(repo.path().join(".git/index")).unwrap();
    let stash = git(repo.path(), &["stash", "list"]);
    turn_edit_undo(&repo, &[]);
    assert_eq!(git(repo.path(), &["rev-parse", "HEAD"]), head);
    assert_eq!(git(repo.path(), &["for-each-ref"]), refs);
    assert_eq!(git(repo.path(), &["stash", "list"]), stash);
    assert_eq!(
        std::fs::read(repo.path().join(".git/index")).unwrap(),
        index
    );
    assert_eq!(
        git(repo.path(), &["diff", "--cached", "--name-only"]),
        "staged.txt\n"
    );
}

#[test]
fn exec_undo_outside_git() {
    let repo = TestRepo::new();
    std::fs::remove_dir_all(repo.path().join(".git")).unwrap();
    files(&repo);
    turn_edit_undo(&repo, &["--skip-git-repo-check"]);
}

mod acp {
    use super::*;
    use agent_client_protocol::schema::ProtocolVersion;
    use agent_client_protocol::v1::schema::{
        ContentBlock, InitializeRequest, LoadSessionRequest, NewSessionRequest, PromptRequest,
        RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
        SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason, TextContent,
    };
    use agent_client_protocol::{
        AcpAgent, AcpAgentConfig, Client, on_receive_notification, on_receive_request,
    };
    use mock_llm::e2e::interpreter_bin;
    use std::sync::{Arc, Mutex};

    /// `interpreter acp` on the mock, its home the repository's.
    fn acp_agent(mock: &MockServer, repo: &TestRepo) -> AcpAgent {
        let mut args: Vec<String> = vec!["acp".into()];
        args.extend(TestRepo::mock_config(&mock.url(), "chat"));
        AcpAgent::new(AcpAgentConfig::new(interpreter_bin()).args(args).env(
            "OPENINTERPRETER_HOME",
            repo.home.path().display().to_string(),
        ))
    }

    /// The agent's message text goes to `said`.
    fn collect_text(said: &Mutex<String>, n: SessionNotification) {
        if let SessionUpdate::AgentMessageChunk(c) = n.update
            && let ContentBlock::Text(t) = c.content
        {
            said.lock().unwrap().push_str(&t.text);
        }
    }

    /// `/undo` in an ACP session (Zed's agent panel types it): the same turn, the same user
    /// edits, the same result; the report is the agent's message.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slash_undo_over_acp() {
        let repo = TestRepo::new();
        files(&repo);
        let root = std::fs::canonicalize(repo.path()).unwrap();
        let mock = MockServer::start(script()).await.unwrap();
        let agent = acp_agent(&mock, &repo);
        let said = Arc::new(Mutex::new(String::new()));
        let heard = said.clone();
        let cwd = root.clone();
        Client
            .v1()
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    collect_text(&heard, n);
                    Ok(())
                },
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
            .connect_with(
                agent,
                async |cx: agent_client_protocol::v1::ConnectionTo<
                    agent_client_protocol::Agent,
                >| {
                    cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                        .block_task()
                        .await?;
                    let session = cx
                        .send_request(NewSessionRequest::new(cwd.clone()))
                        .block_task()
                        .await?;
                    let prompt = async |text: &str| {
                        cx.send_request(PromptRequest::new(
                            session.session_id.clone(),
                            vec![ContentBlock::Text(TextContent::new(text))],
                        ))
                        .block_task()
                        .await
                    };
                    assert_eq!(prompt(PROMPT).await?.stop_reason, StopReason::EndTurn);
                    assert_eq!(bytes(&cwd, "added.txt").unwrap(), b"new\n");
                    std::fs::write(cwd.join("unrelated.txt"), "the user's own\n").unwrap();
                    std::fs::write(cwd.join("also.txt"), "the user rewrote this\n").unwrap();
                    said.lock().unwrap().clear();
                    assert_eq!(prompt("/undo").await?.stop_reason, StopReason::EndTurn);
                    assert_eq!(prompt("what now?").await?.stop_reason, StopReason::EndTurn);
                    Ok(())
                },
            )
            .await
            .unwrap();
        let said = said.lock().unwrap().clone();
        assert!(said.contains("Undid the last turn."), "{said}");
        assert!(
            said.contains("- kept `also.txt`: changed after the turn; kept"),
            "{said}"
        );
        assert_eq!(bytes(&root, "crlf.txt").unwrap(), b"one\r\ntwo\r\n");
        assert_eq!(bytes(&root, "doomed.txt").unwrap(), b"delete me\n");
        assert_eq!(bytes(&root, "added.txt"), None);
        assert_eq!(bytes(&root, "made.txt"), None);
        #[cfg(unix)]
        assert_eq!(mode(&root, "run.sh"), 0o755);
        assert_eq!(bytes(&root, "unrelated.txt").unwrap(), b"the user's own\n");
        assert_eq!(
            bytes(&root, "also.txt").unwrap(),
            b"the user rewrote this\n"
        );
        let requests = mock.model_requests();
        let body = requests.last().unwrap().body.to_string();
        assert!(
            body.contains("what now?") && !body.contains(PROMPT),
            "{body}"
        );
    }

    /// `/rewind` over ACP: listed, then taken by number; each prompt's answer names its turn
    /// (`_meta["interpreter/turnId"]`) and an undo's answer carries its report
    /// (`_meta["interpreter/undone"]`). `session/fork` copies the conversation into a new
    /// session, and the source goes on without it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rewind_and_fork_over_acp() {
        use agent_client_protocol::v1::schema::ForkSessionRequest;
        let repo = TestRepo::new();
        let root = std::fs::canonicalize(repo.path()).unwrap();
        let add = |name: &str| json!({"input": format!("*** Begin Patch\n*** Add File: {name}\n+{name}\n*** End Patch\n")});
        let mock = MockServer::start(Script::new([
            Reply::tool_call("c1", "apply_patch", add("one.txt")),
            Reply::text("One."),
            Reply::tool_call("c2", "apply_patch", add("two.txt")),
            Reply::text("Two."),
            Reply::text("In the fork."),
            Reply::text("Back in the source."),
        ]))
        .await
        .unwrap();
        let agent = acp_agent(&mock, &repo);
        let said = Arc::new(Mutex::new(String::new()));
        let heard = said.clone();
        let cwd = root.clone();
        let metas = Arc::new(Mutex::new(Vec::new()));
        let kept = metas.clone();
        let replayed = Arc::new(Mutex::new(Vec::new()));
        let seen = replayed.clone();
        Client
            .v1()
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    if let SessionUpdate::UserMessageChunk(c) = &n.update
                        && let ContentBlock::Text(t) = &c.content
                    {
                        let turn = c.meta.as_ref().and_then(|m| m.get("interpreter/turnId"));
                        seen.lock().unwrap().push((t.text.clone(), turn.cloned()));
                    }
                    collect_text(&heard, n);
                    Ok(())
                },
                on_receive_notification!(),
            )
            .connect_with(
                agent,
                async |cx: agent_client_protocol::v1::ConnectionTo<
                    agent_client_protocol::Agent,
                >| {
                    let init = cx
                        .send_request(InitializeRequest::new(ProtocolVersion::V1))
                        .block_task()
                        .await?;
                    let caps = serde_json::to_value(&init.agent_capabilities).unwrap();
                    assert!(caps["sessionCapabilities"]["fork"].is_object(), "{caps}");
                    let session = cx
                        .send_request(NewSessionRequest::new(cwd.clone()))
                        .block_task()
                        .await?;
                    let prompt = async |id: &agent_client_protocol::v1::schema::SessionId,
                                        text: &str| {
                        let r = cx
                            .send_request(PromptRequest::new(
                                id.clone(),
                                vec![ContentBlock::Text(TextContent::new(text))],
                            ))
                            .block_task()
                            .await?;
                        assert_eq!(r.stop_reason, StopReason::EndTurn);
                        kept.lock()
                            .unwrap()
                            .push(serde_json::to_value(&r.meta).unwrap());
                        Ok::<_, agent_client_protocol::Error>(())
                    };
                    prompt(&session.session_id, "alpha first").await?;
                    prompt(&session.session_id, "bravo second").await?;
                    assert!(cwd.join("two.txt").exists());
                    let fork = cx
                        .send_request(ForkSessionRequest::new(
                            session.session_id.clone(),
                            cwd.clone(),
                        ))
                        .block_task()
                        .await?;
                    assert_ne!(fork.session_id, session.session_id);
                    prompt(&fork.session_id, "charlie in the fork").await?;
                    // Loaded again, the fork's messages name the turns they started.
                    cx.send_request(LoadSessionRequest::new(
                        fork.session_id.clone(),
                        cwd.clone(),
                    ))
                    .block_task()
                    .await?;
                    said.lock().unwrap().clear();
                    prompt(&session.session_id, "/rewind").await?;
                    prompt(&session.session_id, "/rewind 2").await?;
                    prompt(&session.session_id, "delta after the rewind").await?;
                    Ok(())
                },
            )
            .await
            .unwrap();
        let said = said.lock().unwrap().clone();
        assert!(
            said.contains(
                "Turns you can rewind to, oldest first:\n\n1. alpha first\n2. bravo second"
            ),
            "{said}"
        );
        assert!(said.contains("removed `two.txt`"), "{said}");
        assert!(root.join("one.txt").exists());
        assert!(!root.join("two.txt").exists());
        let metas = metas.lock().unwrap().clone();
        let second_turn = metas[1]["interpreter/turnId"].as_str().unwrap().to_string();
        assert_ne!(
            metas[0]["interpreter/turnId"],
            metas[1]["interpreter/turnId"]
        );
        assert!(
            metas[3].is_null(),
            "a listing changes nothing: {:?}",
            metas[3]
        );
        let replayed = replayed.lock().unwrap().clone();
        let turn = |i: usize| Some(metas[i]["interpreter/turnId"].clone());
        assert_eq!(
            replayed,
            [
                ("alpha first".to_string(), turn(0)),
                ("bravo second".to_string(), turn(1)),
                ("charlie in the fork".to_string(), turn(2)),
            ]
        );
        let undone = &metas[4]["interpreter/undone"];
        assert_eq!(undone["turnIds"], json!([second_turn]), "{undone}");
        assert_eq!(undone["removed"], json!(["two.txt"]), "{undone}");
        assert_eq!(undone["conversation"], json!(true));
        let bodies: Vec<String> = mock
            .model_requests()
            .iter()
            .map(|r| r.body.to_string())
            .collect();
        assert_eq!(bodies.len(), 6);
        // The fork holds both earlier turns; the rewound source only the first.
        assert!(bodies[4].contains("charlie in the fork") && bodies[4].contains("bravo second"));
        assert!(bodies[5].contains("delta after the rewind") && bodies[5].contains("alpha first"));
        assert!(!bodies[5].contains("bravo second") && !bodies[5].contains("charlie in the fork"));
    }
}
