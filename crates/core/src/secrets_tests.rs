use super::*;
use crate::model::{HistoryItem, Parts as _};
use interpreter_protocol::ToolStatus;

#[test]
fn registered_values_and_key_formats_are_redacted() {
    register("unit-test-secret-Zq81");
    let cases = [
        ("key is unit-test-secret-Zq81!", "key is [REDACTED]!"),
        (
            "export OPENAI_API_KEY=sk-proj-abcDEF123456789012345",
            "export OPENAI_API_KEY=[REDACTED]",
        ),
        ("sk-kimi-AbCdEf0123456789AbCdEf0123456789", "[REDACTED]"),
        (
            "Authorization: Bearer eyJhbGciOi.J9abc123.def",
            "Authorization: Bearer [REDACTED]",
        ),
        ("id AKIAIOSFODNN7EXAMPLE ok", "id [REDACTED] ok"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [REDACTED]",
        ),
        (
            "token ghp_0123456789abcdefghijABCDEFGHIJ012345 end",
            "token [REDACTED] end",
        ),
        (
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "[REDACTED]",
        ),
        ("xoxb-1234567890-abcdefghij", "[REDACTED]"),
        ("key=sk_live_0123456789abcdef", "key=[REDACTED]"),
        ("AIzaSyA0123456789abcdefghijklmnopqrstuv", "[REDACTED]"),
        (
            "AUTHORIZATION: BEARER abc123def456ghi",
            "AUTHORIZATION: BEARER [REDACTED]",
        ),
        (
            "AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_SECRET_ACCESS_KEY: [REDACTED]",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(redact(input), want, "{input}");
        assert!(contains_secret(input), "{input}");
    }
}

/// The prefilter never hides a match: a sample of each key format (in table order) matches
/// its regex and passes the prefilter. A new format without a sample fails here.
#[test]
fn prefilter_passes_every_key_format() {
    let samples = [
        "sk-proj-abcDEF123456789012345",
        "sk_test_0123456789abcdef",
        "bEaReR abc123def456ghi",
        "AKIAIOSFODNN7EXAMPLE",
        "Aws_Secret_Access_Key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghs_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "xoxp-1234567890-abcdefghij",
        "AIzaSyA0123456789abcdefghijklmnopqrstuv",
    ];
    assert_eq!(samples.len(), KEY_FORMATS.len());
    for (f, sample) in KEY_FORMATS.iter().zip(samples) {
        assert!(
            Regex::new(f.re).unwrap().is_match(sample),
            "{sample} vs {}",
            f.re
        );
        assert!(may_hold_key_format(sample), "{sample}");
    }
    assert!(!may_hold_key_format(
        "plain words, paths/like/this and numbers 12345"
    ));
}

#[test]
fn ordinary_text_is_left_alone() {
    for s in [
        "scikit-learn and sk-learn-style-helpers are fine",
        "Bearer authentication is described in RFC 6750",
        "task-0123456789abcdefghij is a task id",
        "risk-assessment-framework-2024",
        "short sk-1",
        "",
    ] {
        assert!(matches!(redact(s), Cow::Borrowed(_)), "{s} was changed");
    }
}

#[test]
fn short_values_are_not_registered() {
    register("abc");
    assert_eq!(redact("abc abc"), "abc abc");
}

#[test]
fn a_key_split_across_chunks_never_leaks() {
    register("sk-SPLIT-0123456789-abcdef");
    let text =
        "before sk-SPLIT-0123456789-abcdef after\nAuthorization: Bearer tok3n-abcdefghijk done";
    // Every way of cutting the text in two, and one char at a time.
    for cut in 1..text.len() {
        if !text.is_char_boundary(cut) {
            continue;
        }
        let mut r = StreamRedactor::default();
        let mut out = r.push(&text[..cut]).concat();
        out.push_str(&r.push(&text[cut..]).concat());
        out.push_str(&r.finish().concat());
        assert_eq!(
            out, "before [REDACTED] after\nAuthorization: Bearer [REDACTED] done",
            "cut at {cut}"
        );
    }
    let mut r = StreamRedactor::default();
    let mut out = String::new();
    for c in text.chars() {
        let piece = r.push(&c.to_string()).concat();
        assert!(!piece.contains("0123456789"), "{piece}");
        out.push_str(&piece);
    }
    out.push_str(&r.finish().concat());
    assert!(!out.contains("SPLIT") && !out.contains("tok3n"), "{out}");
}

#[test]
fn streaming_releases_the_chunks_as_they_came_once_their_words_complete() {
    let mut r = StreamRedactor::default();
    assert!(r.push("hello wor").is_empty());
    assert_eq!(r.push("ld and"), ["hello wor"]);
    assert_eq!(r.finish(), ["ld and"]);
    // Chunks without a break between them are never merged.
    let mut r = StreamRedactor::default();
    let mut out = Vec::new();
    for chunk in ["ab", "cd", "ef", "gh"] {
        out.extend(r.push(chunk));
    }
    out.extend(r.finish());
    assert_eq!(out, ["ab", "cd", "ef", "gh"]);
    // A chunk that held a key comes out redacted, merged with what shared its words.
    register("sk-CHUNK-0123456789abcdef");
    let mut r = StreamRedactor::default();
    let mut out = Vec::new();
    for chunk in ["one ", "sk-CHUNK-01234", "56789abcdef", " two", " three"] {
        out.extend(r.push(chunk));
    }
    out.extend(r.finish());
    assert_eq!(out, ["one ", "[REDACTED] ", "two", " three"]);
    // A long run without whitespace is not held forever.
    let mut r = StreamRedactor::default();
    let long = "x".repeat(MAX_HELD + 10);
    assert_eq!(r.push(&long).concat().len(), MAX_HELD + 10 - HELD_TAIL);
}

#[test]
fn events_are_redacted_and_held_text_keeps_its_order() {
    register("sk-EVENT-0123456789abcdef");
    let ev = EventRedactor::default();
    let mut out = Vec::new();
    let delta = |d: &str| Event::AgentMessageDelta {
        message_id: "m".into(),
        delta: d.into(),
    };
    out.extend(ev.redact(Event::ReasoningDelta {
        message_id: "m".into(),
        delta: "thinking hard".into(),
    }));
    out.extend(ev.redact(delta("the key is sk-EVENT-0123")));
    out.extend(ev.redact(delta("456789abcdef ok")));
    out.extend(ev.redact(Event::AgentMessage {
        message_id: "m".into(),
        text: "the key is sk-EVENT-0123456789abcdef ok".into(),
        phase: None,
    }));
    out.extend(ev.redact(Event::ToolCallOutputDelta {
        call_id: "c".into(),
        chunk: "out sk-EVENT-0123456789abcdef".into(),
    }));
    out.extend(
        ev.redact(Event::ToolCallEnd(interpreter_protocol::ToolCallEnd {
            call_id: "c".into(),
            status: ToolStatus::Completed,
            output: "out sk-EVENT-0123456789abcdef".into(),
            exit_code: Some(0),
            changes: vec![],
        })),
    );
    out.extend(ev.redact(Event::TurnEnded(TurnEnded {
        turn_id: "t".into(),
        reason: TurnEndReason::Failed {
            message: "HTTP 401: bad key sk-EVENT-0123456789abcdef".into(),
        },
    })));
    let text = serde_json::to_string(&out).unwrap();
    assert!(!text.contains("0123456789abcdef"), "{text}");
    let kinds: Vec<String> = out
        .iter()
        .map(|e| match e {
            Event::ReasoningDelta { delta, .. } => format!("r:{delta}"),
            Event::AgentMessageDelta { delta, .. } => format!("m:{delta}"),
            Event::AgentMessage { text, .. } => format!("M:{text}"),
            Event::ToolCallOutputDelta { chunk, .. } => format!("o:{chunk}"),
            Event::ToolCallEnd(e) => format!("E:{}", e.output),
            Event::TurnEnded(_) => "T".into(),
            _ => "?".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            // The reasoning's held chunk is released before the message starts.
            "r:thinking hard",
            // A chunk that held a key goes out merged with the word it shared, redacted.
            "m:the key is [REDACTED] ",
            "m:ok",
            "M:the key is [REDACTED] ok",
            "o:out [REDACTED]",
            "E:out [REDACTED]",
            "T",
        ]
    );
}

#[test]
fn history_items_and_log_lines_are_redacted_structurally() {
    register("sk-HIST-0123456789abcdef");
    let mut item = HistoryItem::Assistant(crate::model::AssistantReply {
        reasoning: Some("line\nsk-HIST-0123456789abcdef".into()),
        ..crate::model::AssistantReply::new(
            "using sk-HIST-0123456789abcdef",
            vec![crate::model::ToolCall {
                id: "c".into(),
                name: "shell".into(),
                arguments: r#"{"command":"echo sk-HIST-0123456789abcdef"}"#.into(),
            }],
        )
    });
    crate::model::redact_history_item(&mut item);
    let text = serde_json::to_string(&item).unwrap();
    assert!(!text.contains("HIST"), "{text}");
    let HistoryItem::Assistant(reply) = &item else {
        unreachable!()
    };
    let call = reply.calls().next().unwrap();
    assert_eq!(call.arguments, r#"{"command":"echo [REDACTED]"}"#);

    // A key right after an escaped newline (no word boundary in the JSON text).
    let line = serde_json::json!({"output": "a\nsk-proj-zz0123456789abcdefgh"});
    let json = to_redacted_json(&line).unwrap();
    assert_eq!(json, r#"{"output":"a\n[REDACTED]"}"#);
    let clean = serde_json::json!({"b": 1, "a": "x"});
    assert_eq!(
        to_redacted_json(&clean).unwrap(),
        serde_json::to_string(&clean).unwrap()
    );
}

#[test]
fn provider_secrets_are_registered() {
    let mut p = crate::config::Config::from_layers(
        std::path::PathBuf::from("/h"),
        None,
        None,
        &[],
        &Default::default(),
    )
    .unwrap()
    .provider;
    p.env_key = Some("UNIT_TEST_PROVIDER_KEY_VAR".into());
    p.http_headers
        .insert("X-Api-Key".into(), "hdr-secret-value-77".into());
    p.http_headers
        .insert("X-Title".into(), "my-public-app-name".into());
    p.register_secrets(Some("provider-key-value-88"));
    assert_eq!(
        redact("hdr-secret-value-77 provider-key-value-88 my-public-app-name"),
        "[REDACTED] [REDACTED] my-public-app-name"
    );
    assert!(secret_env_vars().contains(&"UNIT_TEST_PROVIDER_KEY_VAR".to_string()));
}

#[test]
fn log_writer_redacts() {
    use std::io::Write;
    register("sk-LOG-0123456789abcdef");
    let mut buf = Vec::new();
    RedactingWriter(&mut buf)
        .write_all(b"DEBUG request failed: key sk-LOG-0123456789abcdef\n")
        .unwrap();
    assert_eq!(
        String::from_utf8(buf).unwrap(),
        "DEBUG request failed: key [REDACTED]\n"
    );
}

#[cfg(unix)]
#[test]
fn world_readable_config_with_a_key_draws_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.toml");
    std::fs::write(&path, "[model_providers.kimi]\napi_key = \"sk-x\"\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let w = crate::config::config_permission_warning(home.path()).unwrap();
    assert!(w.contains("chmod 600") && w.contains("644"), "{w}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(crate::config::config_permission_warning(home.path()), None);
    std::fs::write(&path, "model = \"kimi-k3\"\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(crate::config::config_permission_warning(home.path()), None);
}
