//! Fetch and search end to end through `interpreter exec` on the mock, which also serves the
//! pages (`/web/…`) and a SearXNG-style search (`/search`): results cite their URLs, HTML
//! becomes Markdown, bad URLs and private addresses get clear errors and the turn goes on,
//! and the calls of one response that only read run together.

use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

fn exec(repo: &TestRepo, mock: &MockServer, harness: &str, extra: &[&str]) -> Vec<Value> {
    let wire = if harness == "claude-code" {
        "messages"
    } else {
        "chat"
    };
    let out =
        mock_llm::e2e::exec_with_harness(repo, &mock.url(), wire, harness, extra, "look it up");
    mock_llm::e2e::jsonl(&out)
}

fn root(mock: &MockServer) -> String {
    format!("http://{}", mock.addr())
}

/// The tool results the last request carried (Chat or Messages), in order.
fn results(mock: &MockServer) -> Vec<String> {
    let body = mock.model_requests().last().unwrap().body.clone();
    let mut out = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        if m["role"] == "tool" {
            out.push(m["content"].as_str().unwrap_or_default().to_string());
        }
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                out.push(b["content"].as_str().unwrap_or_default().to_string());
            }
        }
    }
    out
}

fn local_web(mock: &MockServer) -> Vec<String> {
    vec![
        "-c".into(),
        "web.allow_private=true".into(),
        "-c".into(),
        format!("web.search_url=\"{}/search\"", root(mock)),
    ]
}

#[test]
fn kimi_code_searches_fetches_and_reads_several_pages_at_once() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let base = root(&mock);
    mock.set_script(Script::new([
        Reply::tool_call("s1", "WebSearch", json!({"query": "tokio runtime"})),
        Reply::default()
            .then_tool_call(
                "f1",
                "FetchURL",
                json!({"url": format!("{base}/web/slow/300/one")}),
            )
            .then_tool_call(
                "f2",
                "FetchURL",
                json!({"url": format!("{base}/web/slow/300/two")}),
            )
            .then_tool_call("f3", "FetchURL", json!({"url": "file:///etc/passwd"}))
            .then_tool_call(
                "f4",
                "FetchURL",
                json!({"url": format!("{base}/missing-page")}),
            ),
        Reply::text("done"),
    ]));
    let extra = local_web(&mock);
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let events = exec(&repo, &mock, "kimi-code", &extra);
    let tools: Vec<String> = mock.model_requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        tools.contains(&"FetchURL".to_string()) && tools.contains(&"WebSearch".to_string()),
        "{tools:?}"
    );
    let r = results(&mock);
    assert_eq!(r.len(), 5, "{r:#?}");
    assert!(
        r[0].starts_with("Web search results for \"tokio runtime\":"),
        "{}",
        r[0]
    );
    assert!(
        r[0].contains(&format!(
            "1. [tokio runtime: the guide]({base}/web/tokio-runtime-guide)"
        )),
        "{}",
        r[0]
    );
    // Results come back in the order of the calls, each citing its page; HTML is Markdown.
    for (text, name) in [(&r[1], "one"), (&r[2], "two")] {
        assert!(
            text.starts_with(&format!(
                "Fetched [Mock page: {name}]({base}/web/slow/300/{name})"
            )),
            "{text}"
        );
        assert!(text.contains(&format!("# {name}")), "{text}");
        assert!(
            text.contains(&format!("This page is about **{name}**. The answer is 42.")),
            "{text}"
        );
        assert!(
            !text.contains("track()") && !text.contains("color: red"),
            "{text}"
        );
    }
    assert!(
        r[3].contains("only http and https URLs can be fetched, not `file:`"),
        "{}",
        r[3]
    );
    assert!(
        r[4].starts_with("ERROR: FetchURL failed with HTTP 404"),
        "{}",
        r[4]
    );
    // The fetches show as their own kind of item, and the turn went on to its end.
    assert!(
        events.iter().any(|e| e["type"] == "turn.completed"),
        "{events:#?}"
    );
}

#[test]
fn private_addresses_are_refused_unless_allowed_and_no_backend_means_no_search() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let base = root(&mock);
    mock.set_script(Script::new([
        Reply::tool_call(
            "f1",
            "WebFetch",
            json!({"url": format!("{base}/web/secret"), "prompt": "what is it?"}),
        ),
        Reply::text("done"),
    ]));
    exec(&repo, &mock, "claude-code", &[]);
    let tools: Vec<String> = mock.model_requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(tools.contains(&"WebFetch".to_string()), "{tools:?}");
    assert!(!tools.contains(&"WebSearch".to_string()), "{tools:?}");
    let r = results(&mock);
    assert!(
        r[0].starts_with("<tool_use_error>WebFetch failed:"),
        "{}",
        r[0]
    );
    assert!(r[0].contains("private, loopback or link-local"), "{}", r[0]);
    assert!(
        !mock.requests().iter().any(|q| q.path.starts_with("/web/")),
        "the refused page was requested"
    );
}

#[test]
fn web_enabled_false_offers_no_web_tools() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    exec(&repo, &mock, "kimi-code", &["-c", "web.enabled=false"]);
    let body = &mock.model_requests()[0].body;
    let names = body["tools"].to_string();
    assert!(
        !names.contains("FetchURL") && !names.contains("WebSearch"),
        "{names}"
    );
}

/// The items of one type the exec run printed, completed.
fn completed(events: &[Value], kind: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == kind)
        .map(|e| e["item"].clone())
        .collect()
}

#[test]
fn kimi_codes_search_service_is_asked_with_the_providers_key() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let service = format!("web.search_url=\"{}/coding/v1/search\"", root(&mock));
    let script = || {
        Script::new([
            Reply::tool_call(
                "s1",
                "WebSearch",
                json!({"query": "ropey rope", "limit": 3}),
            ),
            Reply::text("done"),
        ])
    };
    mock.set_script(script());
    let events = exec(
        &repo,
        &mock,
        "kimi-code",
        &[
            "-c",
            "web.search=\"kimi-code\"",
            "-c",
            &service,
            "-c",
            "model_providers.mock.api_key=\"sk-kimi-test\"",
        ],
    );
    let asked: Vec<_> = mock
        .requests()
        .into_iter()
        .filter(|r| r.path == "/coding/v1/search")
        .collect();
    assert_eq!(asked.len(), 1, "one search request");
    assert_eq!(asked[0].method, "POST");
    assert_eq!(asked[0].body["text_query"], "ropey rope");
    assert_eq!(asked[0].body["limit"], 3);
    let auth = asked[0]
        .headers
        .get("authorization")
        .cloned()
        .unwrap_or_default();
    assert_eq!(auth, "Bearer sk-kimi-test");
    let r = results(&mock);
    assert!(
        r[0].starts_with("Web search results for \"ropey rope\":"),
        "{}",
        r[0]
    );
    assert!(r[0].contains("[ropey rope: the guide](http://"), "{}", r[0]);
    // The snippet, not the crawled page.
    assert!(r[0].contains("Everything about ropey rope."), "{}", r[0]);
    assert!(!r[0].contains("whole crawled page"), "{}", r[0]);
    let searches = completed(&events, "web_search");
    assert_eq!(searches.len(), 1, "{events:?}");
    assert_eq!(searches[0]["query"], "ropey rope");

    // Without a key the call is a clear error and the turn goes on.
    mock.clear_requests();
    mock.set_script(script());
    exec(
        &repo,
        &mock,
        "kimi-code",
        &["-c", "web.search=\"kimi-code\"", "-c", &service],
    );
    let r = results(&mock);
    assert!(r[0].contains("needs the provider's API key"), "{}", r[0]);
    assert!(!mock.requests().iter().any(|q| q.path.ends_with("/search")));
}

#[test]
fn moonshots_builtin_search_is_declared_and_its_calls_answered_with_their_arguments() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "functions.$web_search:0",
            "$web_search",
            json!({"search_result": {"search_id": "s-1"}, "query": "k3 price"}),
        ),
        Reply::text("It costs little."),
    ]))
    .unwrap();
    let events = exec(
        &repo,
        &mock,
        "kimi-code",
        &["-c", "web.search=\"moonshot-builtin\""],
    );
    let reqs = mock.model_requests();
    let tools = reqs[0].body["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t["type"] == "builtin_function" && t["function"]["name"] == "$web_search"),
        "{tools:?}"
    );
    assert!(
        !tools.iter().any(|t| t["function"]["name"] == "WebSearch"),
        "our own WebSearch is not offered beside the builtin"
    );
    let r = results(&mock);
    let echoed: Value = serde_json::from_str(&r[0]).unwrap();
    assert_eq!(
        echoed,
        json!({"search_result": {"search_id": "s-1"}, "query": "k3 price"})
    );
    assert_eq!(completed(&events, "web_search")[0]["query"], "k3 price");
}

#[test]
fn codex_web_search_setting_declares_openais_hosted_search_and_exec_shows_its_items() {
    let repo = TestRepo::new();
    let item = json!({"type": "response.output_item.done", "output_index": 0, "item": {
        "type": "web_search_call", "id": "ws_1", "status": "completed",
        "action": {"type": "search", "query": "rust 2024 edition"}}});
    let mock = MockServer::start_blocking(Script::new([Reply::default()
        .then_raw(format!(
            "event: response.output_item.done\ndata: {item}\n\n"
        ))
        .then_text("The 2024 edition shipped in Rust 1.85.")]))
    .unwrap();
    let run = |extra: &[&str]| {
        let out = mock_llm::e2e::exec_with_harness(
            &repo,
            &mock.url(),
            "responses",
            "native",
            extra,
            "when did it ship?",
        );
        mock_llm::e2e::jsonl(&out)
    };
    let events = run(&["-c", "web_search=\"live\""]);
    let body = &mock.model_requests()[0].body;
    let hosted: Vec<_> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["type"] == "web_search")
        .collect();
    assert_eq!(
        hosted,
        [&json!({"type": "web_search", "external_web_access": true})]
    );
    let started: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "item.started" && e["item"]["type"] == "web_search")
        .collect();
    assert_eq!(started.len(), 1, "{events:?}");
    let done = completed(&events, "web_search");
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["id"], started[0]["item"]["id"]);
    assert_eq!(done[0]["query"], "rust 2024 edition");
    assert_eq!(done[0]["action"]["type"], "search");
    assert_eq!(
        completed(&events, "agent_message")[0]["text"],
        "The 2024 edition shipped in Rust 1.85."
    );

    // `cached` reads OpenAI's cache only; `disabled` declares nothing.
    mock.clear_requests();
    mock.set_script(Script::new([Reply::text("ok")]));
    run(&["-c", "web_search=\"cached\""]);
    let tools = mock.model_requests()[0].body["tools"].to_string();
    assert!(tools.contains(r#""external_web_access":false"#), "{tools}");
    mock.clear_requests();
    mock.set_script(Script::new([Reply::text("ok")]));
    run(&["-c", "web_search=\"disabled\""]);
    let tools = mock.model_requests()[0].body["tools"].to_string();
    assert!(!tools.contains("web_search"), "{tools}");
}

#[test]
fn a_search_backend_the_provider_cannot_run_is_a_clear_config_error() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    let mut args = vec!["exec".to_string(), "--json".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend([
        "-c".into(),
        "web.search=\"openai-hosted\"".into(),
        "hi".into(),
    ]);
    let out = repo.run(&args, "");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs a Responses provider"), "{err}");
    assert!(
        mock.model_requests().is_empty(),
        "no request on a bad config"
    );
}
