use super::*;

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    f.extend_from_slice(body);
    f
}

fn feed_in(r: &mut Reframer, input: &[u8], piece: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for p in input.chunks(piece) {
        r.feed(p, &mut out);
    }
    out
}

/// One byte at a time: frames split anywhere.
fn reframe(input: &[u8]) -> (Vec<u8>, u64) {
    let mut r = Reframer::new();
    let out = feed_in(&mut r, input, 1);
    (out, r.dropped)
}

/// The bodies of the frames in `out`, parsed.
fn messages(out: &[u8]) -> Vec<Value> {
    let mut rest = out;
    let mut v = Vec::new();
    while !rest.is_empty() {
        let end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let header = std::str::from_utf8(&rest[..end]).unwrap();
        let len: usize = header
            .strip_prefix("Content-Length: ")
            .unwrap()
            .parse()
            .unwrap();
        v.push(serde_json::from_slice(&rest[end + 4..end + 4 + len]).unwrap());
        rest = &rest[end + 4 + len..];
    }
    v
}

fn rejected(m: &Value) -> Option<&Value> {
    (m["method"] == REJECTED).then(|| &m["params"])
}

#[test]
fn valid_frames_pass_and_undecodable_ones_are_answered() {
    // Already in the order tower-lsp-server serializes (re-encoding keeps the text).
    let good = br#"{"jsonrpc":"2.0","method":"shutdown","id":1}"#;
    let mut input = frame(good);
    input.extend(frame(b"{\"jsonrpc\":\"2.0\", \"id\": 3, broken"));
    input.extend(b"X-Nothing: 1\r\n\r\n".iter()); // a header without Content-Length
    input.extend(b"Content-Length: 2\r\nContent-Type: application/json; charset=latin1\r\n\r\n[]");
    input.extend(frame(&[0xff, 0xfe]));
    input.extend(frame(good));
    let (out, dropped) = reframe(&input);
    assert_eq!(dropped, 4);
    let m = messages(&out);
    assert_eq!(m.len(), 6, "{m:?}");
    assert_eq!(m[0]["id"], 1);
    assert_eq!(m[5]["id"], 1);
    let r: Vec<&Value> = m[1..5].iter().map(|m| rejected(m).unwrap()).collect();
    assert_eq!(
        (r[0]["id"].clone(), r[0]["code"].clone()),
        (json!(3), json!(-32700))
    );
    assert!(
        r[0]["message"]
            .as_str()
            .unwrap()
            .contains("not a JSON-RPC message")
    );
    assert_eq!(r[1]["id"], Value::Null);
    assert!(
        r[1]["message"]
            .as_str()
            .unwrap()
            .contains("without Content-Length")
    );
    assert_eq!(r[2]["code"], -32600, "valid JSON, not JSON-RPC");
    assert!(r[3]["message"].as_str().unwrap().contains("not UTF-8"));
}

#[test]
fn lf_only_headers_and_extra_headers_are_accepted() {
    let good = br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
    let mut input = format!(
        "content-length: {}\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n",
        good.len()
    )
    .into_bytes();
    input.extend_from_slice(good);
    let (out, dropped) = reframe(&input);
    assert_eq!(out, frame(good));
    assert_eq!(dropped, 0);
}

/// Regression (the LSP server went deaf): a frame whose header promised a body that never
/// came swallowed every later frame. The header inside it starts the next frame.
#[test]
fn a_header_inside_a_short_body_starts_the_next_frame() {
    let action = br#"{"jsonrpc":"2.0","id":2,"method":"textDocument/codeAction","params":{}}"#;
    let shutdown = br#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#;
    // The cut body names its id: it gets its error.
    let mut input = b"Content-Length: 5000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\",\"params\":{\"te".to_vec();
    input.extend(frame(action));
    input.extend(frame(shutdown));
    let (out, dropped) = reframe(&input);
    assert_eq!(dropped, 1);
    let m = messages(&out);
    assert_eq!(m.len(), 3, "{m:?}");
    let r = rejected(&m[0]).unwrap();
    assert_eq!(r["id"], 9);
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("promised 5000 bytes"),
        "{r}"
    );
    assert_eq!(m[1]["id"], 2);
    assert_eq!(m[2]["id"], 3);

    // A whole message with a wrong length is used as it is.
    let mut input = b"Content-Length: 900\r\n\r\n".to_vec();
    input.extend_from_slice(action);
    input.extend(b"\r\n");
    input.extend(frame(shutdown));
    let (out, dropped) = reframe(&input);
    assert_eq!(dropped, 0);
    let m = messages(&out);
    assert_eq!(
        (m[0]["id"].clone(), m[1]["id"].clone()),
        (json!(2), json!(3))
    );
}

#[test]
fn junk_before_a_header_does_not_hide_it() {
    let good = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
    let mut input = format!("}}garbage Content-Length: {}\r\n\r\n", good.len()).into_bytes();
    input.extend_from_slice(good);
    let (out, _) = reframe(&input);
    let m = messages(&out);
    assert_eq!(m.last().unwrap()["id"], 1, "{m:?}");
}

#[test]
fn a_body_over_the_limit_is_discarded_as_it_streams_and_answered() {
    let mut r = Reframer::with_limit(1024);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":"big-1","method":"textDocument/didOpen","params":{{"text":"{}"}}}}"#,
        "x".repeat(100_000)
    );
    let mut input = frame(big.as_bytes());
    input.extend(frame(br#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#));
    let mut out = Vec::new();
    let mut most = 0;
    for p in input.chunks(4096) {
        r.feed(p, &mut out);
        most = most.max(r.buf.capacity());
    }
    assert!(most < 16 * 1024, "buffered {most} bytes");
    let m = messages(&out);
    assert_eq!(m.len(), 2, "{m:?}");
    let rej = rejected(&m[0]).unwrap();
    assert_eq!(rej["id"], "big-1");
    assert_eq!(rej["code"], -32600);
    let msg = rej["message"].as_str().unwrap();
    assert!(msg.contains("over the limit of 1024 bytes"), "{msg}");
    assert!(msg.len() < 600, "{} bytes: {msg}", msg.len());
    assert_eq!(m[1]["id"], 2);

    // A huge length followed by real frames: the header inside resynchronises too.
    let mut input = b"Content-Length: 999999999\r\n\r\nnot json\r\n".to_vec();
    input.extend(frame(br#"{"jsonrpc":"2.0","id":5,"method":"shutdown"}"#));
    let out = feed_in(&mut Reframer::with_limit(1024), &input, 3);
    let m = messages(&out);
    assert_eq!(m.len(), 2, "{m:?}");
    assert_eq!(rejected(&m[0]).unwrap()["id"], Value::Null);
    assert_eq!(m[1]["id"], 5);
}

#[test]
fn output_does_not_depend_on_how_the_input_was_cut() {
    let mut input = b"Content-Length: 300\r\n\r\n{\"id\":1,".to_vec();
    input.extend(frame(br#"{"jsonrpc":"2.0","id":2,"method":"a"}"#));
    input.extend(b"Content-Length: 99999\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":3");
    input.extend(frame(br#"{"jsonrpc":"2.0","id":4,"method":"b"}"#));
    input.extend(frame(b"[1,2]"));
    input.extend(b"x\r\nContent-Length: 3\r\n\r\n{}");
    let whole = feed_in(&mut Reframer::with_limit(2048), &input, input.len());
    for piece in [1, 2, 3, 7, 64] {
        assert_eq!(
            feed_in(&mut Reframer::with_limit(2048), &input, piece),
            whole,
            "pieces of {piece}"
        );
    }
}

#[test]
fn request_ids_are_read_at_the_top_level_only() {
    let id = |s: &str| request_id(s.as_bytes());
    assert_eq!(
        id(r#"{"jsonrpc":"2.0","id":12,"method":"x"}"#),
        Some(json!(12))
    );
    assert_eq!(
        id(r#"{"method":"x","params":{"id":3,"a":[1,{"id":4}]},"id":"s","#),
        Some(json!("s"))
    );
    assert_eq!(id(r#"{"params":{"id":3},"te"#), None);
    assert_eq!(
        id(r#"{"text":"a \"id\": 5","id":6"#),
        None,
        "a number may be cut"
    );
    assert_eq!(id(r#"{"text":"a \"id\": 5","id":6,"#), Some(json!(6)));
    assert_eq!(id(r#"{"id":{"x":1}}"#), None);
    assert_eq!(id("not json"), None);
    assert_eq!(id(r#"["id",1]"#), None);
}

/// Regression: a frame whose body is not a JSON-RPC message used to end the server, so the
/// next request (here `shutdown`) went unanswered.
#[tokio::test]
async fn the_server_keeps_serving_after_an_undecodable_frame() {
    let mut input = frame(br#"{"jsonrpc":"2.0", broken"#);
    input.extend(frame(br#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#));
    input.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
    let written = serve(input).await;
    assert!(
        written.contains(r#""id":7"#),
        "no answer to the request after the bad frame: {written}"
    );
    assert!(
        written.contains(r#""id":null"#),
        "the bad frame got no error: {written}"
    );
}

/// The truncated frame gets its error and the requests after it are answered.
#[tokio::test]
async fn the_server_answers_after_a_truncated_frame() {
    let mut input = b"Content-Length: 2000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"par".to_vec();
    input.extend(frame(br#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#));
    input.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
    let written = serve(input).await;
    assert!(
        written.contains(r#""id":5"#) && written.contains("promised 2000 bytes"),
        "{written}"
    );
    assert!(written.contains(r#""id":7"#), "{written}");
}

async fn serve(input: Vec<u8>) -> String {
    let (mut ours, theirs) = tokio::io::duplex(1 << 20);
    super::super::serve_on(Default::default(), std::io::Cursor::new(input), theirs).await;
    let mut written = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut ours, &mut written)
        .await
        .unwrap();
    String::from_utf8_lossy(&written).into_owned()
}
