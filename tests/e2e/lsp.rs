//! `interpreter lsp` end to end over stdio, driven by a scripted client against the mock
//! model: code actions, executeCommand → progress → versioned applyEdit, rebasing over the
//! user's typing, conflicts, cancellation, configuration errors, Explain, and liveness.

#[path = "lsp_client.rs"]
mod lsp_client;

use lsp_client::{
    LspClient, TIMEOUT, action, apply_text_edits, capabilities, file_uri, mock_options,
};
use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const DISK: &str = "def add(a, b):\n    return a - b\n";
const NOTE: &str = "# unsaved note\n";

/// Context includes the unsaved line, so the patch only applies to the buffer, not the disk.
const PATCH: &str = "*** Begin Patch\n*** Update File: calc.py\n@@\n # unsaved note\n def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n";

struct Setup {
    repo: TestRepo,
    client: LspClient,
    uri: String,
    /// The client's copy of the buffer.
    text: String,
    version: i32,
}

/// A repo with calc.py on disk, a server pointed at `mock`, and calc.py open with an
/// unsaved first line (version 2).
fn setup(mock: &MockServer, progress: bool, show_document: bool) -> Setup {
    let repo = TestRepo::new();
    repo.write("calc.py", DISK);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let mut client = LspClient::spawn(&root, repo.home.path(), &[]);
    let init = client.initialize(
        &root,
        capabilities(progress, show_document),
        mock_options(&mock.url()),
    );
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    let uri = file_uri(&root.join("calc.py"));
    client.did_open(&uri, "python", 1, DISK);
    client.did_change(
        &uri,
        2,
        json!([{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": NOTE}]),
    );
    Setup {
        repo,
        client,
        uri,
        text: format!("{NOTE}{DISK}"),
        version: 2,
    }
}

fn diagnostic() -> Value {
    json!({"range": {"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 16}},
           "severity": 1, "source": "test", "message": "add subtracts"})
}

/// Requests code actions for line 3 and executes `title`; returns the request id.
fn run_action(s: &mut Setup, title: &str, prompt: Option<&str>) -> i64 {
    let resp = s.client.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": s.uri},
               "range": {"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 16}},
               "context": {"diagnostics": [diagnostic()]}}),
    );
    let mut command = action(&resp, title)["command"].clone();
    if let Some(p) = prompt {
        command["arguments"][0]["prompt"] = json!(p);
    }
    let id = s.client.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    let resp = s.client.wait_for("executeCommand response", TIMEOUT, |m| {
        m["id"] == json!(id) && m.get("method").is_none()
    });
    assert!(resp.get("error").is_none(), "{resp}");
    id
}

/// Answers `window/workDoneProgress/create`; returns the token.
fn accept_progress(s: &mut Setup) -> Value {
    let create = s.client.wait_request("window/workDoneProgress/create");
    s.client.respond(&create["id"], Value::Null);
    let token = create["params"]["token"].clone();
    let t = token.clone();
    let begin = s.client.wait_notification("$/progress", move |p| {
        p["token"] == t && p["value"]["kind"] == "begin"
    });
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    token
}

fn progress_end(s: &mut Setup, token: &Value) -> String {
    let t = token.clone();
    let end = s.client.wait_notification("$/progress", move |p| {
        p["token"] == t && p["value"]["kind"] == "end"
    });
    end["params"]["value"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Answers an applyEdit like an editor: checks the version, applies, echoes a didChange.
fn accept_edit(s: &mut Setup) -> Value {
    let req = s.client.wait_request("workspace/applyEdit");
    let change = &req["params"]["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["uri"], json!(s.uri), "{req}");
    assert_eq!(change["textDocument"]["version"], json!(s.version), "{req}");
    let edits = change["edits"].as_array().unwrap().clone();
    s.text = apply_text_edits(&s.text, &edits);
    s.version += 1;
    let (uri, version) = (s.uri.clone(), s.version);
    s.client
        .did_change(&uri, version, json!([{"text": s.text.clone()}]));
    s.client.respond(&req["id"], json!({"applied": true}));
    req
}

fn wait_model_requests(mock: &MockServer, n: usize) {
    let deadline = Instant::now() + TIMEOUT;
    while mock.model_requests().len() < n {
        assert!(Instant::now() < deadline, "the mock never got {n} requests");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn fix_edits_the_unsaved_buffer_with_a_minimal_versioned_edit() {
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": PATCH})),
        Reply::text("Fixed: add now adds."),
    ]))
    .unwrap();
    let mut s = setup(&mock, true, false);
    run_action(&mut s, "Fix with interpreter: add subtracts", None);
    let token = accept_progress(&mut s);
    let req = accept_edit(&mut s);
    assert_eq!(req["params"]["label"], "interpreter: Fix");
    // One character changed, so one one-character edit.
    assert_eq!(
        req["params"]["edit"]["documentChanges"][0]["edits"],
        json!([{"range": {"start": {"line": 2, "character": 13}, "end": {"line": 2, "character": 14}}, "newText": "+"}])
    );
    let end = progress_end(&mut s, &token);
    assert!(end.contains("edited calc.py"), "{end}");
    assert_eq!(s.text, format!("{NOTE}def add(a, b):\n    return a + b\n"));
    // The agent saw the buffer, not the disk, and the disk is untouched.
    let first = mock.model_requests()[0].body.to_string();
    assert!(first.contains("# unsaved note"), "{first}");
    assert!(first.contains("add subtracts"), "{first}");
    assert_eq!(s.repo.read("calc.py"), DISK);
    s.client.shutdown();
}

#[test]
fn typing_during_the_turn_is_rebased_not_clobbered() {
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": PATCH})),
        Reply::text("done").with_delay(1500),
    ]))
    .unwrap();
    let mut s = setup(&mock, false, false);
    run_action(&mut s, "Fix with interpreter: add subtracts", None);
    // The patch has run against version 2 once the second model request arrives.
    wait_model_requests(&mock, 2);
    // The user types on line 1 (not next to the agent's line 3).
    s.version += 1;
    let (uri, v) = (s.uri.clone(), s.version);
    s.client.did_change(
        &uri,
        v,
        json!([{"range": {"start": {"line": 0, "character": 14}, "end": {"line": 0, "character": 14}}, "text": " (typed)"}]),
    );
    s.text = format!("# unsaved note (typed)\n{DISK}");
    accept_edit(&mut s); // asserts the edit targets version 3
    assert_eq!(
        s.text,
        "# unsaved note (typed)\ndef add(a, b):\n    return a + b\n"
    );
    s.client.shutdown();
}

#[test]
fn typing_on_the_same_line_drops_the_edit_and_says_why() {
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": PATCH})),
        Reply::text("done").with_delay(1500),
    ]))
    .unwrap();
    let mut s = setup(&mock, false, false);
    run_action(&mut s, "Fix with interpreter: add subtracts", None);
    wait_model_requests(&mock, 2);
    let (uri, v) = (s.uri.clone(), s.version + 1);
    s.client.did_change(
        &uri,
        v,
        json!([{"range": {"start": {"line": 2, "character": 16}, "end": {"line": 2, "character": 16}}, "text": " * 2"}]),
    );
    let msg = s.client.wait_notification("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("dropped the edit")
    });
    let text = msg["params"]["message"].as_str().unwrap();
    assert!(
        text.contains("calc.py") && text.contains("line 3"),
        "{text}"
    );
    assert!(
        s.client
            .try_wait_for(Duration::from_millis(500), |m| m["method"]
                == "workspace/applyEdit")
            .is_none()
    );
    s.client.shutdown();
}

fn slow_fix_script() -> Script {
    Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": PATCH})).with_delay(4000),
        Reply::text("done"),
    ])
}

#[test]
fn progress_cancel_stops_the_turn_and_applies_nothing() {
    let mock = MockServer::start_blocking(slow_fix_script()).unwrap();
    let mut s = setup(&mock, true, false);
    run_action(&mut s, "Fix with interpreter: add subtracts", None);
    let token = accept_progress(&mut s);
    wait_model_requests(&mock, 1);
    s.client
        .notify("window/workDoneProgress/cancel", json!({"token": token}));
    let started = Instant::now();
    let end = progress_end(&mut s, &token);
    assert!(end.contains("cancelled"), "{end}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "cancel took {:?}",
        started.elapsed()
    );
    assert!(
        s.client
            .try_wait_for(Duration::from_secs(5), |m| m["method"]
                == "workspace/applyEdit")
            .is_none(),
        "an edit was applied after cancel"
    );
    assert_eq!(mock.model_requests().len(), 1);
    s.client.shutdown();
}

#[test]
fn cancel_request_for_the_command_stops_the_turn() {
    let mock = MockServer::start_blocking(slow_fix_script()).unwrap();
    let mut s = setup(&mock, true, false);
    let id = run_action(&mut s, "Fix with interpreter: add subtracts", None);
    let token = accept_progress(&mut s);
    wait_model_requests(&mock, 1);
    s.client.notify("$/cancelRequest", json!({"id": id}));
    let end = progress_end(&mut s, &token);
    assert!(end.contains("cancelled"), "{end}");
    assert!(
        s.client
            .try_wait_for(Duration::from_secs(5), |m| m["method"]
                == "workspace/applyEdit")
            .is_none()
    );
    s.client.shutdown();
}

#[test]
fn bad_configuration_is_reported_and_the_server_keeps_serving() {
    let mock = MockServer::start_blocking(
        Script::new([]).when_exhausted(Reply::text("It adds two numbers.")),
    )
    .unwrap();
    let repo = TestRepo::new();
    repo.write("calc.py", DISK);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let mut client = LspClient::spawn(&root, repo.home.path(), &[]);
    client.initialize(
        &root,
        capabilities(false, false),
        json!({"provider": "nope", "modle": "x"}),
    );
    let err = client.wait_notification("window/showMessage", |p| p["type"] == 1);
    let text = err["params"]["message"].as_str().unwrap();
    assert!(text.contains("unknown model_provider `nope`"), "{text}");
    client.wait_notification("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("unknown setting `modle`")
    });
    let uri = file_uri(&root.join("calc.py"));
    client.did_open(&uri, "python", 1, DISK);
    let explain = json!({"command": "interpreter.explain", "arguments": [{"uri": uri,
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}]});
    let resp = client.call("workspace/executeCommand", explain.clone());
    assert!(resp.get("error").is_none(), "{resp}");
    client.wait_notification("window/showMessage", |p| {
        p["type"] == 1
            && p["message"]
                .as_str()
                .unwrap_or("")
                .contains("invalid configuration")
    });
    // Settings of the wrong type are refused; the server goes on.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"model": 5}}),
    );
    client.wait_notification("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("settings ignored")
    });
    // A malformed command argument is an error response, not a crash.
    let resp = client.call(
        "workspace/executeCommand",
        json!({"command": "interpreter.fix", "arguments": [{"uri": 42}]}),
    );
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
    // Good settings: Explain answers with a message (no showDocument support).
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"interpreter": mock_options(&mock.url())}}),
    );
    client.call("workspace/executeCommand", explain);
    client.wait_notification("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("It adds two numbers.")
    });
    client.shutdown();
}

#[test]
fn missing_api_key_is_a_clear_message_not_a_crash() {
    let repo = TestRepo::new();
    repo.write("calc.py", DISK);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let mut client = LspClient::spawn(&root, repo.home.path(), &[]);
    // The default provider (Kimi) needs MOONSHOT_API_KEY, which the client removed.
    client.initialize(&root, capabilities(false, false), json!({}));
    let uri = file_uri(&root.join("calc.py"));
    client.did_open(&uri, "python", 1, DISK);
    let resp = client.call(
        "workspace/executeCommand",
        json!({"command": "interpreter.writeTests", "arguments": [{"uri": uri,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}]}),
    );
    assert!(resp.get("error").is_none(), "{resp}");
    let msg = client.wait_notification("window/showMessage", |p| p["type"] == 1);
    let text = msg["params"]["message"].as_str().unwrap();
    assert!(
        text.contains("missing API key") && text.contains("MOONSHOT_API_KEY"),
        "{text}"
    );
    let resp = client.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}),
    );
    action(&resp, "Ask interpreter…");
    client.shutdown();
}

/// The agent's search tools see the open buffers: the unsaved line is found, at its buffer
/// line number, and a file that exists only as an unsaved buffer too.
#[test]
fn search_tools_see_unsaved_buffers() {
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "grep_files", json!({"pattern": "unsaved"})),
        Reply::tool_call("c2", "glob", json!({"pattern": "*.py"})),
        Reply::text("Found it."),
    ]))
    .unwrap();
    let mut s = setup(&mock, false, true);
    let root = std::fs::canonicalize(s.repo.path()).unwrap();
    let scratch = file_uri(&root.join("scratch.py"));
    s.client
        .did_open(&scratch, "python", 1, "x = 1  # unsaved scratch\n");
    run_action(&mut s, "Explain with interpreter", None);
    let req = s.client.wait_request("window/showDocument");
    s.client.respond(&req["id"], json!({"success": true}));
    let reqs = mock.model_requests();
    let output = |id: &str| {
        reqs.iter()
            .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .unwrap_or_else(|| panic!("no output for {id}"))
    };
    let grep = output("c1");
    assert!(grep.contains("calc.py:1: # unsaved note"), "{grep}");
    assert!(
        grep.contains("scratch.py:1: x = 1  # unsaved scratch"),
        "{grep}"
    );
    let glob = output("c2");
    assert!(
        glob.contains("calc.py") && glob.contains("scratch.py"),
        "{glob}"
    );
    assert!(!root.join("scratch.py").exists());
    s.client.shutdown();
}

#[test]
fn explain_opens_a_markdown_document_when_the_client_can() {
    let mock = MockServer::start_blocking(Script::new([Reply::text(
        "`add` returns the **difference**, not the sum.",
    )]))
    .unwrap();
    let mut s = setup(&mock, false, true);
    run_action(&mut s, "Explain with interpreter", None);
    let req = s.client.wait_request("window/showDocument");
    let uri = req["params"]["uri"].as_str().unwrap().to_string();
    assert!(uri.starts_with("file://") && uri.ends_with(".md"), "{uri}");
    let path = uri.trim_start_matches("file://");
    let md = std::fs::read_to_string(path).unwrap();
    assert!(md.contains("returns the **difference**"), "{md}");
    assert!(
        path.starts_with(&s.repo.home.path().display().to_string()),
        "answers go under the server's temp folder: {path}"
    );
    s.client.respond(&req["id"], json!({"success": true}));
    s.client.shutdown();
}

#[test]
fn ask_needs_a_prompt_and_passes_it_to_the_model() {
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("Because of the minus.")])).unwrap();
    let mut s = setup(&mock, false, false);
    let resp = s.client.call(
        "workspace/executeCommand",
        json!({"command": "interpreter.ask", "arguments": [{"uri": s.uri,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}]}),
    );
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
    run_action(
        &mut s,
        "Ask interpreter…",
        Some("Why does add(2, 2) return 0?"),
    );
    s.client.wait_notification("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("Because of the minus.")
    });
    let body = mock.model_requests()[0].body.to_string();
    assert!(body.contains("Why does add(2, 2) return 0?"), "{body}");
    s.client.shutdown();
}

#[test]
fn utf8_positions_when_negotiated() {
    let text = "v = \"😀\" - 1\n";
    let patch = "*** Begin Patch\n*** Update File: u.py\n@@\n-v = \"😀\" - 1\n+v = \"😀\" + 1\n*** End Patch\n";
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": patch})),
        Reply::text("ok"),
    ]))
    .unwrap();
    let repo = TestRepo::new();
    repo.write("u.py", text);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let mut client = LspClient::spawn(&root, repo.home.path(), &[]);
    let mut caps = capabilities(false, false);
    caps["general"]["positionEncodings"] = json!(["utf-8", "utf-16", "utf-32"]);
    let mut options = mock_options(&mock.url());
    options["positionEncoding"] = json!("utf-8");
    let init = client.initialize(&root, caps, options);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    let uri = file_uri(&root.join("u.py"));
    client.did_open(&uri, "python", 1, text);
    client.call(
        "workspace/executeCommand",
        json!({"command": "interpreter.fix", "arguments": [{"uri": uri,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}]}),
    );
    let req = client.wait_request("workspace/applyEdit");
    // `v = "` is 5 bytes, 😀 4, `" ` 2: the minus is at UTF-8 column 11 (UTF-16 would be 9).
    assert_eq!(
        req["params"]["edit"]["documentChanges"][0]["edits"],
        json!([{"range": {"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 12}}, "newText": "+"}])
    );
    client.respond(&req["id"], json!({"applied": true}));
    client.shutdown();
}

#[test]
fn pending_client_requests_never_wedge_the_server() {
    // Eight Explain jobs each wait on a showDocument the client does not answer, while the
    // client sends two hundred more requests: every one must still be answered.
    let mock =
        MockServer::start_blocking(Script::new([]).when_exhausted(Reply::text("An explanation.")))
            .unwrap();
    let mut s = setup(&mock, false, true);
    let explain = json!({"command": "interpreter.explain", "arguments": [{"uri": s.uri,
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}]});
    for _ in 0..8 {
        s.client
            .request("workspace/executeCommand", explain.clone());
    }
    let mut pending = Vec::new();
    for _ in 0..8 {
        pending.push(s.client.wait_request("window/showDocument"));
    }
    let ids: Vec<i64> = (0..200)
        .map(|i| {
            s.client.request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": s.uri},
                       "range": {"start": {"line": i % 3, "character": 0}, "end": {"line": i % 3, "character": 0}},
                       "context": {"diagnostics": []}}),
            )
        })
        .collect();
    for id in ids {
        let resp = s.client.wait_for("codeAction response", TIMEOUT, |m| {
            m["id"] == json!(id) && m.get("method").is_none()
        });
        assert!(resp["result"].is_array(), "{resp}");
    }
    for req in pending {
        s.client.respond(&req["id"], json!({"success": true}));
    }
    s.client.shutdown();
}
