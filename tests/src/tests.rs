//! Tests of the mock server over real HTTP.

use std::time::{Duration, Instant};

use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::{MockServer, RecordedRequest, Reply, Script, ServerOptions};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn chat_request(include_usage: bool) -> Value {
    let mut body = json!({
        "model": "kimi-k2-test",
        "stream": true,
        "messages": [{"role": "user", "content": "hello there"}],
    });
    if include_usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

fn responses_request() -> Value {
    json!({"model": "gpt-test", "stream": true, "input": [{"role": "user", "content": "hi"}]})
}

/// The `data:` payloads of an SSE body, in order.
fn sse_data(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .filter_map(|block| {
            block
                .lines()
                .find_map(|l| l.strip_prefix("data: ").map(str::to_string))
        })
        .collect()
}

/// `(event, data)` pairs of a Responses SSE body; checks `event:` matches `data.type`.
fn sse_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = None;
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = Some(e.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = Some(serde_json::from_str::<Value>(d).unwrap());
                }
            }
            let (event, data) = (event.unwrap(), data.unwrap());
            assert_eq!(data["type"], json!(event), "event name matches data.type");
            (event, data)
        })
        .collect()
}

/// Reads a body chunk by chunk: returns the text received and whether the
/// body ended with an error (aborted connection).
async fn read_body(resp: reqwest::Response) -> (String, bool) {
    let mut stream = resp.bytes_stream();
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(bytes) => out.extend_from_slice(&bytes),
            Err(_) => return (String::from_utf8(out).unwrap(), true),
        }
    }
    (String::from_utf8(out).unwrap(), false)
}

async fn post(url: &str, body: &Value) -> reqwest::Response {
    client().post(url).json(body).send().await.unwrap()
}

#[tokio::test]
async fn chat_stream_shape_with_reasoning_text_tools_and_usage() {
    let script = Script::from_json(
        r#"{"replies":[{"events":[
            {"reasoning": "Let me think about this."},
            {"text": "I will list the files and read one."},
            {"tool_call": {"id": "call_1", "name": "shell", "arguments": "{\"command\":\"ls -la\"}", "fragments": 3}},
            {"tool_call": {"id": "call_2", "name": "read", "arguments": "{\"path\":\"a.txt\"}"}}
          ],
          "usage": {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 2, "reasoning_tokens": 1}}]}"#,
    )
    .unwrap();
    let server = MockServer::start(script).await.unwrap();
    let resp = post(
        &format!("{}/chat/completions", server.url()),
        &chat_request(true),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let (body, aborted) = read_body(resp).await;
    assert!(!aborted);
    let data = sse_data(&body);
    assert_eq!(data.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    for c in &chunks {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["model"], "kimi-k2-test");
        assert_eq!(c["id"], chunks[0]["id"]);
    }
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );

    let mut reasoning = String::new();
    let mut content = String::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut tool_chunks = Vec::new();
    let mut finish = None;
    for c in &chunks[1..] {
        let Some(choice) = c["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        if let Some(r) = delta["reasoning_content"].as_str() {
            reasoning.push_str(r);
        }
        if let Some(t) = delta["content"].as_str() {
            content.push_str(t);
        }
        if let Some(tcs) = delta["tool_calls"].as_array() {
            for tc in tcs {
                tool_chunks.push(tc.clone());
                let i = tc["index"].as_u64().unwrap() as usize;
                if calls.len() <= i {
                    calls.push(Default::default());
                }
                if let Some(id) = tc["id"].as_str() {
                    calls[i].0 = id.to_string();
                    calls[i].1 = tc["function"]["name"].as_str().unwrap().to_string();
                    assert_eq!(tc["type"], "function");
                }
                calls[i].2 += tc["function"]["arguments"].as_str().unwrap();
            }
        }
        if !choice["finish_reason"].is_null() {
            finish = Some(choice["finish_reason"].clone());
            assert_eq!(choice["delta"], json!({}));
        }
    }
    assert_eq!(reasoning, "Let me think about this.");
    assert_eq!(content, "I will list the files and read one.");
    assert_eq!(
        calls,
        vec![
            (
                "call_1".into(),
                "shell".into(),
                r#"{"command":"ls -la"}"#.into()
            ),
            ("call_2".into(), "read".into(), r#"{"path":"a.txt"}"#.into()),
        ]
    );
    // 3 fragments + 2 (default) fragments; only the first of each carries id/name.
    assert_eq!(tool_chunks.len(), 5);
    assert_eq!(
        tool_chunks.iter().filter(|t| t.get("id").is_some()).count(),
        2
    );
    assert!(tool_chunks[1].get("id").is_none() && tool_chunks[1]["function"].get("name").is_none());
    assert_eq!(finish, Some(json!("tool_calls")));

    // The usage chunk follows the finish chunk, with empty choices.
    let usage_chunk = &chunks[chunks.len() - 1];
    assert_eq!(usage_chunk["choices"], json!([]));
    assert_eq!(
        usage_chunk["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
               "prompt_tokens_details": {"cached_tokens": 2},
               "completion_tokens_details": {"reasoning_tokens": 1}})
    );
    let finish_chunk = &chunks[chunks.len() - 2];
    assert_eq!(finish_chunk["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn chat_without_include_usage_puts_usage_on_finish_chunk() {
    let server = MockServer::start(Script::new([Reply::text("Hello from the mock model.")]))
        .await
        .unwrap();
    let resp = post(
        &format!("{}/chat/completions", server.url()),
        &chat_request(false),
    )
    .await;
    let (body, _) = read_body(resp).await;
    let data = sse_data(&body);
    assert_eq!(data.last().unwrap(), "[DONE]");
    let finish: Value = serde_json::from_str(&data[data.len() - 2]).unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = &finish["usage"];
    assert!(usage["prompt_tokens"].as_u64().unwrap() > 0);
    assert_eq!(usage["completion_tokens"], 26 / 4);
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 0);
    let text: String = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(String::from)
        })
        .collect();
    assert_eq!(text, "Hello from the mock model.");
}

#[tokio::test]
async fn chat_non_streaming_returns_a_completion_object() {
    let server = MockServer::start(Script::new([Reply::text("done")
        .then_reasoning("hm")
        .then_tool_call("c9", "shell", json!({"command": "pwd"}))]))
    .await
    .unwrap();
    let mut body = chat_request(false);
    body["stream"] = json!(false);
    let resp = post(&format!("{}/chat/completions", server.url()), &body).await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["object"], "chat.completion");
    let choice = &v["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], "done");
    assert_eq!(choice["message"]["reasoning_content"], "hm");
    assert_eq!(
        choice["message"]["tool_calls"][0],
        json!({"id": "c9", "type": "function", "function": {"name": "shell", "arguments": "{\"command\":\"pwd\"}"}})
    );
    assert!(v["usage"]["total_tokens"].as_u64().is_some());
}

#[tokio::test]
async fn responses_stream_event_sequence() {
    let script = Script::new([Reply::default()
        .then_reasoning("Thinking hard.")
        .then_text("Running it now.")
        .then_raw_tool_call("call_7", "shell", r#"{"command":"echo hi"}"#, 3)
        .with_usage(20, 8, 4, 3)]);
    let server = MockServer::start(script).await.unwrap();
    let resp = post(&format!("{}/responses", server.url()), &responses_request()).await;
    assert_eq!(resp.status(), 200);
    let (body, aborted) = read_body(resp).await;
    assert!(!aborted);
    let events = sse_events(&body);
    let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    let expected_prefix = ["response.created", "response.output_item.added"];
    assert_eq!(&kinds[..2], &expected_prefix);
    let mut dedup: Vec<&str> = kinds.clone();
    dedup.dedup();
    assert_eq!(
        dedup,
        vec![
            "response.created",
            "response.output_item.added",
            "response.reasoning_summary_text.delta",
            "response.output_item.done",
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.output_item.done",
            "response.completed",
        ]
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == "response.function_call_arguments.delta")
            .count(),
        3
    );
    assert_eq!(events[0].1["response"]["status"], "in_progress");
    let rid = events[0].1["response"]["id"].clone();

    let concat = |kind: &str| -> String {
        events
            .iter()
            .filter(|(k, _)| k == kind)
            .map(|(_, d)| d["delta"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        concat("response.reasoning_summary_text.delta"),
        "Thinking hard."
    );
    assert_eq!(concat("response.output_text.delta"), "Running it now.");
    assert_eq!(
        concat("response.function_call_arguments.delta"),
        r#"{"command":"echo hi"}"#
    );
    for (k, d) in &events {
        if k == "response.output_text.delta" {
            assert_eq!(d["output_index"], 1);
            assert_eq!(d["content_index"], 0);
        }
        if k == "response.reasoning_summary_text.delta" {
            assert_eq!(d["summary_index"], 0);
        }
    }

    let done: Vec<&Value> = events
        .iter()
        .filter(|(k, _)| k == "response.output_item.done")
        .map(|(_, d)| &d["item"])
        .collect();
    assert_eq!(
        done[0]["summary"],
        json!([{"type": "summary_text", "text": "Thinking hard."}])
    );
    assert_eq!(done[1]["type"], "message");
    assert_eq!(done[1]["status"], "completed");
    assert_eq!(
        done[1]["content"],
        json!([{"type": "output_text", "text": "Running it now.", "annotations": []}])
    );
    assert_eq!(done[2]["type"], "function_call");
    assert_eq!(done[2]["call_id"], "call_7");
    assert_eq!(done[2]["name"], "shell");
    assert_eq!(done[2]["arguments"], r#"{"command":"echo hi"}"#);

    let completed = &events.last().unwrap().1["response"];
    assert_eq!(completed["id"], rid);
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"].as_array().unwrap().len(), 3);
    assert_eq!(completed["output"][2], *done[2]);
    assert_eq!(
        completed["usage"],
        json!({"input_tokens": 20, "input_tokens_details": {"cached_tokens": 4},
               "output_tokens": 8, "output_tokens_details": {"reasoning_tokens": 3},
               "total_tokens": 28})
    );
}

#[tokio::test]
async fn responses_finish_reasons_map_to_incomplete() {
    let server = MockServer::start(Script::new([
        Reply::text("trunc").with_finish_reason("length"),
        Reply::text("bad").with_finish_reason("content_filter"),
    ]))
    .await
    .unwrap();
    for reason in ["max_output_tokens", "content_filter"] {
        let resp = post(&format!("{}/responses", server.url()), &responses_request()).await;
        let (body, _) = read_body(resp).await;
        let events = sse_events(&body);
        let (kind, last) = events.last().unwrap();
        assert_eq!(kind, "response.incomplete");
        assert_eq!(last["response"]["status"], "incomplete");
        assert_eq!(last["response"]["incomplete_details"]["reason"], reason);
    }
}

#[tokio::test]
async fn responses_non_streaming() {
    let server = MockServer::start(Script::new([Reply::text("plain")]))
        .await
        .unwrap();
    let mut req = responses_request();
    req["stream"] = json!(false);
    let v: Value = post(&format!("{}/responses", server.url()), &req)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["output"][0]["content"][0]["text"], "plain");
}

#[tokio::test]
async fn error_status_with_retry_after_then_repeat() {
    let script = Script::from_json(
        r#"{"replies":[
            {"status": 429, "error": {"type": "rate_limit_reached_error", "message": "slow down", "code": "rate_limit"},
             "headers": {"retry-after": "0"}, "repeat": 2},
            {"events": [{"text": "finally"}], "repeat": 2},
            {"events": [{"text": "last"}]}
        ]}"#,
    )
    .unwrap();
    let server = MockServer::start(script).await.unwrap();
    let url = format!("{}/chat/completions", server.url());
    for _ in 0..2 {
        let resp = post(&url, &chat_request(true)).await;
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.headers()["retry-after"], "0");
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        let v: Value = resp.json().await.unwrap();
        assert_eq!(
            v,
            json!({"error": {"type": "rate_limit_reached_error", "message": "slow down", "code": "rate_limit"}})
        );
    }
    for expected in ["finally", "finally", "last"] {
        let (body, _) = read_body(post(&url, &chat_request(true)).await).await;
        assert!(
            body.contains(&format!("\"content\":\"{expected}\"")),
            "{body}"
        );
    }
    // Then the script is exhausted.
    let resp = post(&url, &chat_request(true)).await;
    assert_eq!(resp.status(), 500);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["type"], "mock_exhausted");
    assert_eq!(
        v["error"]["message"],
        "mock script exhausted after 5 requests"
    );
    assert_eq!(server.model_requests().len(), 6);
}

#[tokio::test]
async fn custom_when_exhausted_and_error_constructor() {
    let script =
        Script::new([Reply::error(503, "overloaded")]).when_exhausted(Reply::text("again"));
    let server = MockServer::start(script).await.unwrap();
    let url = format!("{}/chat/completions", server.url());
    let resp = post(&url, &chat_request(true)).await;
    assert_eq!(resp.status(), 503);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["message"], "overloaded");
    for _ in 0..2 {
        let (body, _) = read_body(post(&url, &chat_request(true)).await).await;
        assert!(body.contains("\"content\":\"again\""));
    }
}

#[tokio::test]
async fn cut_aborts_the_body_without_done() {
    let script = Script::new([
        Reply::text("partial answer").then_cut(),
        Reply::text("partial answer").then_cut(),
    ]);
    let server = MockServer::start(script).await.unwrap();
    let resp = post(
        &format!("{}/chat/completions", server.url()),
        &chat_request(true),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let (body, aborted) = read_body(resp).await;
    assert!(aborted, "the client sees an incomplete body");
    assert!(body.contains("partial "));
    assert!(!body.contains("[DONE]"));
    assert!(!body.contains("finish_reason\":\"stop"));
    assert!(!body.contains("usage"));

    let resp = post(&format!("{}/responses", server.url()), &responses_request()).await;
    let (body, aborted) = read_body(resp).await;
    assert!(aborted);
    assert!(body.contains("response.output_text.delta"));
    assert!(!body.contains("response.completed"));
}

#[tokio::test]
async fn delay_event_flushes_what_came_before() {
    let script = Script::new([Reply::text("before").then_delay(600).then_text(" after")]);
    let server = MockServer::start(script).await.unwrap();
    let start = Instant::now();
    let resp = post(
        &format!("{}/chat/completions", server.url()),
        &chat_request(true),
    )
    .await;
    let mut stream = resp.bytes_stream();
    let mut seen = String::new();
    let mut first_text_at = None;
    while let Some(chunk) = stream.next().await {
        seen.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        if first_text_at.is_none() && seen.contains("before") {
            first_text_at = Some(start.elapsed());
        }
    }
    // The text before the delay arrived well before the end of the body.
    let first = first_text_at.unwrap();
    let end = start.elapsed();
    assert!(end >= Duration::from_millis(600));
    assert!(
        end - first >= Duration::from_millis(450),
        "first {first:?}, end {end:?}"
    );
    assert!(seen.contains("[DONE]"));
}

#[tokio::test]
async fn reply_delay_delays_headers() {
    let server = MockServer::start(Script::new([Reply::text("slow").with_delay(300)]))
        .await
        .unwrap();
    let start = Instant::now();
    let resp = post(
        &format!("{}/chat/completions", server.url()),
        &chat_request(true),
    )
    .await;
    assert!(start.elapsed() >= Duration::from_millis(300));
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn stream_error_and_raw() {
    let script = Script::new([
        Reply::text("oops")
            .then_raw("data: {not json\n\n")
            .then_stream_error("upstream exploded", "server_error"),
        Reply::text("oops").then_stream_error("upstream exploded", "server_error"),
    ]);
    let server = MockServer::start(script).await.unwrap();
    let resp = post(
        &format!("{}/chat/completions", server.url()),
        &chat_request(true),
    )
    .await;
    let (body, aborted) = read_body(resp).await;
    assert!(!aborted);
    assert!(body.contains("\n\ndata: {not json\n\n"));
    let data = sse_data(&body);
    let err: Value = serde_json::from_str(data.last().unwrap()).unwrap();
    assert_eq!(
        err,
        json!({"error": {"message": "upstream exploded", "type": "server_error", "code": "server_error"}})
    );
    assert!(!body.contains("[DONE]"));

    let resp = post(&format!("{}/responses", server.url()), &responses_request()).await;
    let (body, _) = read_body(resp).await;
    let events = sse_events(&body);
    let (kind, data) = events.last().unwrap();
    assert_eq!(kind, "response.failed");
    assert_eq!(data["response"]["status"], "failed");
    assert_eq!(
        data["response"]["error"],
        json!({"code": "server_error", "message": "upstream exploded"})
    );
    assert!(!body.contains("response.completed"));
}

#[tokio::test]
async fn recording_via_api_endpoint_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("requests.jsonl");
    let server = MockServer::start_with(
        Script::new([Reply::text("one"), Reply::text("two")]),
        ServerOptions {
            record_path: Some(record.clone()),
            ..ServerOptions::default()
        },
    )
    .unwrap();
    let base = server.url();
    let c = client();
    c.post(format!("{base}/chat/completions"))
        .header("Authorization", "Bearer sk-test")
        .header("X-Custom", "yes")
        .json(&chat_request(true))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let models: Value = c
        .get(format!("{base}/models"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        models,
        json!({"object": "list", "data": [{"id": "mock-model", "object": "model", "owned_by": "mock"}]})
    );
    let nf = c
        .post(format!("{base}/embeddings"))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(nf.status(), 404);
    assert!(nf.json::<Value>().await.unwrap()["error"]["message"].is_string());
    c.post(format!("{base}/responses"))
        .json(&responses_request())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();

    let via_http: Vec<RecordedRequest> = c
        .get(format!("http://{}/_mock/requests", server.addr()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let in_process = server.requests();
    assert_eq!(via_http, in_process);
    assert_eq!(in_process.len(), 4);
    let first = &in_process[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(first.headers["x-custom"], "yes");
    assert_eq!(first.body["model"], "kimi-k2-test");
    assert_eq!(in_process[1].method, "GET");
    assert_eq!(in_process[1].body, json!(""));
    assert_eq!(in_process[2].body, json!("not json"));
    let model = server.model_requests();
    assert_eq!(model.len(), 2);
    assert_eq!(model[1].path, "/v1/responses");

    let lines: Vec<RecordedRequest> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, in_process);
}

#[tokio::test]
async fn script_can_be_replaced_over_http_and_in_process() {
    let server = MockServer::start(Script::new([Reply::text("old")]))
        .await
        .unwrap();
    let c = client();
    let url = format!("{}/chat/completions", server.url());
    let new = Script::new([Reply::text("new one")]);
    let resp = c
        .post(format!("http://{}/_mock/script", server.addr()))
        .body(new.to_json())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (body, _) = read_body(post(&url, &chat_request(true)).await).await;
    assert!(body.contains("\"content\":\"new \""), "{body}");
    server.set_script(Script::new([Reply::text("third")]));
    let (body, _) = read_body(post(&url, &chat_request(true)).await).await;
    assert!(body.contains("\"content\":\"third\""));
    // Control requests are not recorded.
    assert_eq!(server.requests().len(), 2);
    let bad = c
        .post(format!("http://{}/_mock/script", server.addr()))
        .body("{")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
}

#[tokio::test]
async fn any_path_prefix_works() {
    let server = MockServer::start(Script::new([Reply::text("x").with_repeat(4)]))
        .await
        .unwrap();
    let root = format!("http://{}", server.addr());
    for path in [
        "/v1/chat/completions",
        "/chat/completions",
        "/api/v1/chat/completions",
        "/api/paas/v4/responses",
    ] {
        let resp = post(&format!("{root}{path}"), &chat_request(true)).await;
        assert_eq!(resp.status(), 200, "{path}");
        let (body, _) = read_body(resp).await;
        assert!(body.contains("\"x\""), "{path}: {body}");
    }
}

/// A plain `#[test]` (no tokio test runtime) with its own runtime, and shutdown on drop.
#[test]
fn works_from_a_plain_test_and_stops_on_drop() {
    let server = MockServer::start_blocking(Script::new([Reply::text("sync")])).unwrap();
    let addr = server.addr();
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = runtime.block_on(async {
        read_body(post(&format!("{url}/chat/completions"), &chat_request(true)).await)
            .await
            .0
    });
    assert!(body.contains("sync"));
    // A raw blocking HTTP request while no runtime is being driven on this thread.
    {
        use std::io::{Read as _, Write as _};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert!(out.contains("mock-model"));
    }
    drop(server);
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[tokio::test]
async fn scripted_headers_go_on_streams_and_override_defaults() {
    let server = MockServer::start(Script::new([Reply::text("h")
        .with_header("x-request-id", "req-42")
        .with_header("cache-control", "no-store")]))
    .await
    .unwrap();
    let resp = post(
        &format!("{}/chat/completions", server.url()),
        &chat_request(true),
    )
    .await;
    assert_eq!(resp.headers()["x-request-id"], "req-42");
    assert_eq!(resp.headers()["cache-control"], "no-store");
    assert_eq!(resp.headers().get_all("cache-control").iter().count(), 1);
}

#[tokio::test]
async fn messages_stream_signs_thinking_and_streams_tool_input() {
    let server = MockServer::start(Script::new([Reply::default()
        .then_reasoning("Look first.")
        .then_text("Reading.")
        .then_tool_call("toolu_1", "Read", json!({"file_path": "a.py"}))]))
    .await
    .unwrap();
    let req = json!({"model": "claude-x", "max_tokens": 100, "stream": true,
                     "messages": [{"role": "user", "content": "hi"}]});
    let resp = post(&format!("{}/messages", server.url()), &req).await;
    assert_eq!(resp.status(), 200);
    let (body, aborted) = read_body(resp).await;
    assert!(!aborted);
    let events = sse_events(&body);
    let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds[..2], ["message_start", "ping"]);
    assert_eq!(kinds[kinds.len() - 2..], ["message_delta", "message_stop"]);
    let sig = events
        .iter()
        .find(|(_, d)| d["delta"]["type"] == "signature_delta")
        .unwrap();
    assert_eq!(
        sig.1["delta"]["signature"],
        crate::validate::thinking_signature("Look first.")
    );
    let input: String = events
        .iter()
        .filter(|(_, d)| d["delta"]["type"] == "input_json_delta")
        .map(|(_, d)| d["delta"]["partial_json"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(input, "{\"file_path\":\"a.py\"}");
    assert_eq!(
        events[kinds.len() - 2].1["delta"]["stop_reason"],
        "tool_use"
    );
    assert_eq!(server.model_requests().len(), 1);
}

#[tokio::test]
async fn invalid_histories_get_the_apis_400_and_use_no_reply() {
    let server = MockServer::start(Script::new([Reply::text("ok")]))
        .await
        .unwrap();
    let orphan = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": "no result"}]});
    let resp = post(&format!("{}/messages", server.url()), &orphan).await;
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("without `tool_result`")
    );
    let chat = json!({"model": "m", "messages": [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "b"}]});
    let resp = post(&format!("{}/chat/completions", server.url()), &chat).await;
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing: c1")
    );
    // The scripted reply is still there for a valid request.
    let resp = post(
        &format!("{}/chat/completions", server.url()),
        &chat_request(true),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(server.model_requests().len(), 3);
}

#[tokio::test]
async fn messages_errors_use_anthropic_shape() {
    let server = MockServer::start(Script::new([Reply::error(529, "Overloaded")]))
        .await
        .unwrap();
    let req =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "a"}]});
    let resp = post(&format!("{}/messages", server.url()), &req).await;
    assert_eq!(resp.status(), 529);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
}
