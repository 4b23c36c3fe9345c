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
