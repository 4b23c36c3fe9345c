use super::*;

fn env() -> PromptEnv {
    crate::harness::test_env()
}

fn user_item(t: &str, synthetic: bool) -> HistoryItem {
    HistoryItem::User {
        text: t.into(),
        images: vec![],
        synthetic,
    }
}

fn result(id: &str, out: &str) -> HistoryItem {
    HistoryItem::ToolResult {
        call_id: id.into(),
        output: out.into(),
        is_error: false,
    }
}

const KEYS: &str =
    r#"{"analysis":"a","plan":"p","commands":[{"keystrokes":"ls\n","duration":0.1}]}"#;
const DONE: &str = r#"{"analysis":"a","plan":"p","commands":[],"task_complete":true}"#;

/// Parses `text` against `history` and, for calls, appends the reply and its result.
fn step(h: &Terminus2, history: &mut Vec<HistoryItem>, text: &str) -> TextReply {
    let reply = h.parse_reply(text, history, &[]);
    match &reply {
        TextReply::Calls(calls) => {
            history.push(HistoryItem::Assistant(AssistantReply::new(
                text,
                calls.clone(),
            )));
            history.push(result(&calls[0].id, "New Terminal Output:\nx"));
        }
        TextReply::Correction(c) => {
            history.push(HistoryItem::Assistant(AssistantReply::new(text, vec![])));
            history.push(user_item(c, true));
        }
        TextReply::Finish => {}
    }
    reply
}

fn args(reply: &TextReply) -> Value {
    let TextReply::Calls(calls) = reply else {
        panic!("not calls: {reply:?}")
    };
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "terminal");
    serde_json::from_str(&calls[0].arguments).unwrap()
}

#[test]
fn completion_needs_two_replies_in_a_row() {
    let h = Terminus2::default();
    let mut history = vec![user_item("task", false)];
    let a = args(&step(&h, &mut history, KEYS));
    assert_eq!(
        a,
        json!({"commands": [{"keystrokes": "ls\n", "duration": 0.1}]})
    );
    // The first "complete" is a call whose result asks to confirm.
    let a = args(&step(&h, &mut history, DONE));
    assert_eq!(a, json!({"commands": [], "task_complete": true}));
    assert!(!h.finished(&history));
    // A reply that did not parse leaves the question pending.
    assert!(matches!(
        step(&h, &mut history, "oops"),
        TextReply::Correction(_)
    ));
    assert_eq!(h.parse_reply(DONE, &history, &[]), TextReply::Finish);
    // "false" takes it back: the next "true" is asked about again.
    step(&h, &mut history, KEYS);
    assert!(args(&step(&h, &mut history, DONE))["confirmed"].is_null());
    // A confirmation with commands runs them, then the task is over.
    let with_keys =
        r#"{"analysis":"a","plan":"p","commands":[{"keystrokes":"exit\n"}],"task_complete":true}"#;
    let a = args(&step(&h, &mut history, with_keys));
    assert_eq!(a["confirmed"], true);
    assert!(h.finished(&history));
    // A new task from the user starts over.
    history.push(user_item("next task", false));
    assert!(args(&h.parse_reply(DONE, &history, &[]))["confirmed"].is_null());
}

#[test]
fn corrections_are_the_original_feedback() {
    let h = Terminus2::default();
    assert_eq!(
        h.parse_reply("I will run ls", &[], &[]),
        TextReply::Correction("Previous response had parsing errors:\nERROR: No valid JSON found in response\nWARNINGS: - No valid JSON object found\n\nPlease fix these issues and provide a proper JSON response.".into())
    );
    assert_eq!(
        h.parse_reply(r#"{"analysis":"a","plan":"p","commands":"ls"} thanks"#, &[], &[]),
        TextReply::Correction("Previous response had parsing errors:\nERROR: Field 'commands' must be an array\nWARNINGS: - Extra text detected after JSON object\n\nPlease fix these issues and provide a proper JSON response.".into())
    );
}

#[test]
fn history_is_the_originals_transcript() {
    let h = Terminus2::default();
    let mut history = vec![user_item("make out.txt", false)];
    step(&h, &mut history, "nope");
    step(&h, &mut history, KEYS);
    // A call another harness made before a switch.
    history.push(HistoryItem::Assistant(AssistantReply::new(
        "checking",
        vec![ToolCall {
            id: "call_1".into(),
            name: "bash".into(),
            arguments: r#"{"command":"cat out.txt"}"#.into(),
        }],
    )));
    history.push(result("call_1", "hi"));
    let out = h.render_history(&env(), &history, &[]);
    let texts: Vec<(bool, String)> = out
        .iter()
        .map(|i| match i {
            HistoryItem::User { text, .. } => (true, text.clone()),
            HistoryItem::Assistant(r) => {
                assert!(!r.has_calls(), "no calls on terminus-2's wire");
                (false, r.text())
            }
            HistoryItem::ToolResult { .. } => panic!("results are user messages"),
        })
        .collect();
    assert_eq!(texts.len(), 7, "{texts:#?}");
    assert!(
        texts[0].0
            && texts[0]
                .1
                .contains("Task Description:\nmake out.txt\n\nCurrent terminal state:\n")
    );
    assert!(texts[0].1.ends_with(&format!(
        ":/repo{}\n{}",
        if terminal_root() { '#' } else { '$' },
        "\n".repeat(39)
    )));
    assert_eq!(texts[1], (false, "nope".into()));
    assert!(
        texts[2]
            .1
            .starts_with("Previous response had parsing errors:")
    );
    assert_eq!(texts[3], (false, KEYS.into()));
    assert_eq!(texts[4], (true, "New Terminal Output:\nx".into()));
    let foreign: Value = serde_json::from_str(&texts[5].1).unwrap();
    assert_eq!(foreign["analysis"], "checking");
    assert_eq!(foreign["commands"][0]["keystrokes"], "cat out.txt\n");
    assert_eq!(texts[6], (true, "New Terminal Output:\nhi".into()));
}

fn terminal_root() -> bool {
    prompt::prompt_line(std::path::Path::new("/"))
        .1
        .ends_with('#')
}

#[test]
fn requests_carry_no_tools_and_the_originals_temperature() {
    let h = Terminus2::default();
    assert_eq!(h.request_shape().temperature, Some(0.7));
    assert!(h.system_prompt(&env()).is_empty());
    assert!(!h.text_actions().unwrap().tools_on_wire());
    assert_eq!(h.tools(&env()).names(), vec!["terminal"]);
}
