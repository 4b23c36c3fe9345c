use super::*;
use crate::model::catalog::model_info;
use crate::model::sse::SseDecoder;
use crate::model::types::{AssistantReply, Parts as _, ToolCall, ToolSpec};

/// Feeds `stream` in `chunk`-byte pieces through the SSE decoder and the accumulator.
fn run_chunked(
    stream: &str,
    chunk: usize,
) -> (Vec<StreamDelta>, Result<ModelResponse, ModelError>) {
    let mut dec = SseDecoder::new();
    let mut acc = MessagesStream::new("mock");
    let mut deltas = Vec::new();
    let mut events: Vec<_> = Vec::new();
    for piece in stream.as_bytes().chunks(chunk) {
        events.extend(dec.feed(piece));
    }
    events.extend(dec.finish());
    for ev in events {
        match acc.handle(ev.event.as_deref(), &ev.data) {
            Ok(d) => deltas.extend(d),
            Err(e) => return (deltas, Err(e)),
        }
    }
    (deltas, acc.finish())
}

fn ev(kind: &str, data: Value) -> String {
    let mut data = data;
    data["type"] = json!(kind);
    format!("event: {kind}\ndata: {data}\n\n")
}

fn start(input: u64, cached: u64) -> String {
    ev(
        "message_start",
        json!({"message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
               "model": "m", "stop_reason": null,
               "usage": {"input_tokens": input, "cache_read_input_tokens": cached,
                         "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
    )
}

fn stop(reason: &str, output: u64) -> String {
    [
        ev(
            "message_delta",
            json!({"delta": {"stop_reason": reason, "stop_sequence": null},
                   "usage": {"output_tokens": output}}),
        ),
        ev("message_stop", json!({})),
    ]
    .concat()
}

fn thinking_then_tool_use() -> String {
    [
        start(10, 90),
        ev("ping", json!({})),
        ev(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "thinking_delta", "thinking": "Read it "}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "thinking_delta", "thinking": "first."}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "signature_delta", "signature": "sig-abc"}}),
        ),
        ev("content_block_stop", json!({"index": 0})),
        ev(
            "content_block_start",
            json!({"index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 1, "delta": {"type": "text_delta", "text": "Reading."}}),
        ),
        ev("content_block_stop", json!({"index": 1})),
        ev(
            "content_block_start",
            json!({"index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"file_pa"}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 2, "delta": {"type": "input_json_delta", "partial_json": "th\": \"a.py\"}"}}),
        ),
        ev("content_block_stop", json!({"index": 2})),
        stop("tool_use", 42),
    ]
    .concat()
}

#[test]
fn thinking_signature_text_and_tool_use_survive_any_chunking() {
    let s = thinking_then_tool_use();
    for size in [1, 3, 7, 64, s.len()] {
        let (deltas, r) = run_chunked(&s, size);
        let r = r.unwrap();
        assert_eq!(r.text(), "Reading.", "chunk {size}");
        assert_eq!(r.reasoning.as_deref(), Some("Read it first."));
        assert_eq!(
            r.signed_reasoning,
            vec![SignedReasoning {
                text: "Read it first.".into(),
                signature: "sig-abc".into(),
                redacted: false
            }]
        );
        assert_eq!(r.tool_calls().len(), 1);
        assert_eq!(r.tool_calls()[0].id, "toolu_1");
        assert_eq!(r.tool_calls()[0].arguments, "{\"file_path\": \"a.py\"}");
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        let u = r.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cached_input_tokens, u.output_tokens),
            (100, 90, 42)
        );
        assert_eq!(
            deltas,
            vec![
                StreamDelta::Reasoning("Read it ".into()),
                StreamDelta::Reasoning("first.".into()),
                StreamDelta::Text {
                    message: 0,
                    text: "Reading.".into()
                },
                StreamDelta::MessageDone {
                    message: 0,
                    text: "Reading.".into(),
                    phase: None
                }
            ]
        );
    }
}

#[test]
fn tool_use_without_deltas_keeps_its_start_input_and_redacted_thinking_is_kept() {
    let s = [
        start(5, 0),
        ev(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "redacted_thinking", "data": "opaque"}}),
        ),
        ev(
            "content_block_start",
            json!({"index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}}),
        ),
        stop("tool_use", 3),
    ]
    .concat();
    let r = run_chunked(&s, 5).1.unwrap();
    assert_eq!(r.tool_calls()[0].arguments, "{\"command\":\"ls\"}");
    assert!(r.signed_reasoning[0].redacted);
    assert_eq!(r.signed_reasoning[0].signature, "opaque");
    assert_eq!(r.reasoning, None);
}

#[test]
fn stop_reasons_map() {
    for (reason, want) in [
        ("end_turn", FinishReason::Stop),
        ("max_tokens", FinishReason::Length),
        ("refusal", FinishReason::ContentFilter),
        ("stop_sequence", FinishReason::Stop),
    ] {
        let s = [start(1, 0), stop(reason, 1)].concat();
        assert_eq!(
            run_chunked(&s, 9).1.unwrap().finish_reason,
            want,
            "{reason}"
        );
    }
}

#[test]
fn error_event_mid_stream_is_a_stream_error() {
    let s = [
        start(1, 0),
        ev(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        ev(
            "error",
            json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ]
    .concat();
    let err = run_chunked(&s, 4).1.unwrap_err();
    assert!(matches!(err, ModelError::StreamError { .. }), "{err:?}");
    assert!(err.to_string().contains("Overloaded"), "{err}");
    assert!(err.is_retryable());
}

#[test]
fn a_cut_stream_names_the_tool_call_it_was_in() {
    let s = [
        start(1, 0),
        ev(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "Edit", "input": {}}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"fi"}}),
        ),
    ]
    .concat();
    let err = run_chunked(&s, 11).1.unwrap_err();
    assert!(matches!(err, ModelError::StreamDisconnected(_)));
    assert!(err.to_string().contains("Edit"), "{err}");
}

#[test]
fn garbage_is_skipped() {
    let s = [
        "data: {not json\n\n".to_string(),
        ": comment\n\n".into(),
        start(1, 0),
        stop("end_turn", 1),
    ]
    .concat();
    assert!(run_chunked(&s, 3).1.is_ok());
}

fn user(text: &str) -> HistoryItem {
    HistoryItem::User {
        text: text.into(),
        images: vec![],
        synthetic: false,
    }
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: "{\"command\":\"ls\"}".into(),
    }
}

fn result(id: &str, out: &str, is_error: bool) -> HistoryItem {
    HistoryItem::ToolResult {
        call_id: id.into(),
        output: out.into(),
        is_error,
    }
}

fn history() -> Vec<HistoryItem> {
    vec![
        user("fix it"),
        user("<system-reminder>\ndate\n</system-reminder>"),
        HistoryItem::Assistant(AssistantReply {
            reasoning: Some("hmm".into()),
            signed_reasoning: vec![SignedReasoning {
                text: "hmm".into(),
                signature: "sig".into(),
                redacted: false,
            }],
            ..AssistantReply::new(
                "",
                vec![call("functions.Bash:0", "Bash"), call("toolu_2", "Bash")],
            )
        }),
        result("functions.Bash:0", "a.txt", false),
        result("toolu_2", "", true),
        user("also this"),
        // An empty assistant message carries nothing and is left out.
        HistoryItem::Assistant(AssistantReply::default()),
        user("and an image"),
    ]
}

fn request<'a>(history: &'a [HistoryItem], tools: &'a [ToolSpec]) -> ModelRequest<'a> {
    ModelRequest {
        model: "claude-sonnet-4-6",
        system: "sys",
        history,
        tools,
        prompt_cache_key: "k",
        max_output_tokens: 32_000,
        reasoning_effort: Some("high"),
        output_schema: None,
        hosted_search: None,
        temperature: None,
    }
}

fn tools() -> Vec<ToolSpec> {
    ["Bash", "Read"]
        .iter()
        .map(|n| ToolSpec {
            name: n.to_string(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        })
        .collect()
}

#[test]
fn body_alternates_roles_and_pairs_results_with_calls() {
    let h = history();
    let t = tools();
    let body = build_body(&request(&h, &t), model_info("claude-sonnet-4-6"));
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["user", "assistant", "user"]);
    // The user's message and the reminder merge into one message of two blocks.
    assert_eq!(msgs[0]["content"].as_array().unwrap().len(), 2);
    let a = msgs[1]["content"].as_array().unwrap();
    assert_eq!(a[0]["type"], "thinking");
    assert_eq!(a[0]["signature"], "sig");
    let id = a[1]["id"].as_str().unwrap();
    assert!(id.starts_with("functions_Bash_0_"), "{id}");
    assert_eq!(a[2]["id"], "toolu_2");
    assert_eq!(a[1]["input"]["command"], "ls");
    // Results first, then the later user text, in one message.
    let u = msgs[2]["content"].as_array().unwrap();
    assert_eq!(u[0]["type"], "tool_result");
    assert_eq!(u[0]["tool_use_id"], id);
    assert_eq!(u[0]["content"], "a.txt");
    assert!(u[0].get("is_error").is_none());
    assert!(u[1].get("content").is_none(), "empty output is left out");
    assert_eq!(u[1]["is_error"], true);
    assert_eq!(u[2]["text"], "also this");
    assert_eq!(u[3]["text"], "and an image");
    assert_eq!(body["thinking"]["budget_tokens"], 20_000);
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 32_000);
}

#[test]
fn cache_breakpoints_cover_tools_system_and_the_last_two_user_turns() {
    let h = history();
    let t = tools();
    let body = build_body(&request(&h, &t), model_info("claude-sonnet-4-6"));
    let text = body.to_string();
    assert_eq!(text.matches("cache_control").count(), 4, "{text}");
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(body["tools"][1]["cache_control"]["type"], "ephemeral");
    let msgs = body["messages"].as_array().unwrap();
    let last_user = msgs[2]["content"].as_array().unwrap();
    assert!(last_user.last().unwrap().get("cache_control").is_some());
    let first_user = msgs[0]["content"].as_array().unwrap();
    assert!(first_user.last().unwrap().get("cache_control").is_some());
    // Byte-identical on a second build.
    assert_eq!(
        text,
        build_body(&request(&h, &t), model_info("claude-sonnet-4-6")).to_string()
    );
    // The next request reads this one's prefix: the breakpoint this request put on its last
    // block is still there on the user message before the new last one.
    let mut next = h.clone();
    next.push(HistoryItem::Assistant(AssistantReply::new("done", vec![])));
    next.push(user("thanks"));
    let body2 = build_body(&request(&next, &t), model_info("claude-sonnet-4-6"));
    let m2 = body2["messages"].as_array().unwrap();
    assert_eq!(
        m2[2], msgs[2],
        "the previous last user message is unchanged"
    );
}

#[test]
fn images_effort_and_models_without_budgets() {
    let h = vec![HistoryItem::User {
        text: "look".into(),
        images: vec![
            "data:image/png;base64,AAAA".into(),
            "https://example.invalid/a.png".into(),
        ],
        synthetic: false,
    }];
    let mut req = request(&h, &[]);
    req.system = "";
    req.reasoning_effort = None;
    let body = build_body(&req, model_info("claude-sonnet-4-6"));
    let blocks = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["source"]["media_type"], "image/png");
    assert_eq!(blocks[0]["source"]["data"], "AAAA");
    assert_eq!(blocks[1]["source"]["type"], "url");
    assert_eq!(blocks[2]["text"], "look");
    assert!(body.get("system").is_none() && body.get("tools").is_none());
    assert!(
        body.get("thinking").is_none(),
        "no effort: provider default"
    );
    req.reasoning_effort = Some("max");
    req.max_output_tokens = 8_000;
    let body = build_body(&req, model_info("claude-sonnet-4-6"));
    assert_eq!(body["thinking"]["budget_tokens"], 7_999);
    // Kimi K3 always reasons and takes no budget.
    assert!(
        build_body(&req, model_info("kimi-k3"))
            .get("thinking")
            .is_none()
    );
    req.max_output_tokens = 1_000;
    assert!(
        build_body(&req, model_info("claude-sonnet-4-6"))
            .get("thinking")
            .is_none()
    );
}

#[test]
fn tool_ids_keep_valid_ones_and_rewrite_others_stably() {
    assert_eq!(tool_id("toolu_01AbC-x"), "toolu_01AbC-x");
    let a = tool_id("functions.Read:1");
    assert_eq!(a, tool_id("functions.Read:1"));
    assert_ne!(a, tool_id("functions_Read_1"));
    assert!(a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    assert!(!tool_id("").is_empty());
}

/// Text, a call, text and a call, as one streamed reply.
fn text_call_text_call() -> String {
    let text = |index: u64, t: &str| {
        [
            ev(
                "content_block_start",
                json!({"index": index, "content_block": {"type": "text", "text": ""}}),
            ),
            ev(
                "content_block_delta",
                json!({"index": index, "delta": {"type": "text_delta", "text": t}}),
            ),
            ev("content_block_stop", json!({"index": index})),
        ]
        .concat()
    };
    let tool = |index: u64, id: &str| {
        [
            ev(
                "content_block_start",
                json!({"index": index, "content_block": {"type": "tool_use", "id": id,
                       "name": "Bash", "input": {}}}),
            ),
            ev(
                "content_block_delta",
                json!({"index": index, "delta": {"type": "input_json_delta",
                       "partial_json": "{\"command\":\"ls\"}"}}),
            ),
            ev("content_block_stop", json!({"index": index})),
        ]
        .concat()
    };
    [
        start(10, 0),
        text(0, "First I list."),
        tool(1, "toolu_a"),
        text(2, "Then again."),
        tool(3, "toolu_b"),
        stop("tool_use", 9),
    ]
    .concat()
}

#[test]
fn text_between_two_tool_calls_keeps_its_place_into_history_and_back() {
    let (deltas, r) = run_chunked(&text_call_text_call(), 5);
    let r = r.unwrap();
    let texts: Vec<&str> = r.messages().map(|m| m.text()).collect();
    assert_eq!(texts, ["First I list.", "Then again."]);
    let done: Vec<usize> = deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::MessageDone { message, .. } => Some(*message),
            _ => None,
        })
        .collect();
    assert_eq!(done, [0, 1]);
    // Into history and back out in the next request, in the order it came.
    let mut h = vec![user("go")];
    h.push(r.into_history());
    h.push(result("toolu_a", "a", false));
    h.push(result("toolu_b", "b", false));
    let t = tools();
    let body = build_body(&request(&h, &t), model_info("claude-sonnet-4-6"));
    let blocks: Vec<String> = body["messages"][1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| match b["type"].as_str().unwrap() {
            "text" => format!("text:{}", b["text"].as_str().unwrap()),
            kind => format!("{kind}:{}", b["id"].as_str().unwrap_or("")),
        })
        .collect();
    assert_eq!(
        blocks,
        [
            "text:First I list.",
            "tool_use:toolu_a",
            "text:Then again.",
            "tool_use:toolu_b"
        ]
    );
    // The log keeps that order too.
    let stored = serde_json::to_string(&h[1]).unwrap();
    let back: HistoryItem = serde_json::from_str(&stored).unwrap();
    assert_eq!(back, h[1]);
}

#[test]
fn session_logs_without_signed_reasoning_still_load() {
    let old: HistoryItem =
        serde_json::from_str(r#"{"type":"assistant","text":"hi","reasoning":"r"}"#).unwrap();
    let HistoryItem::Assistant(reply) = &old else {
        panic!("{old:?}")
    };
    assert!(reply.signed_reasoning.is_empty());
    assert_eq!(reply.text(), "hi");
    assert_eq!(reply.reasoning(), Some("r"));
    // And nothing new is written for items without it.
    assert!(!serde_json::to_string(&old).unwrap().contains("signed"));
}
