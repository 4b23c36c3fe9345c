use super::*;
use crate::model::{AssistantReply, Parts as _};

fn env() -> PromptEnv {
    crate::harness::test_env()
}

fn user(t: &str) -> HistoryItem {
    HistoryItem::User {
        text: t.into(),
        images: vec![],
        synthetic: false,
    }
}

fn said(t: &str, calls: Vec<ToolCall>) -> HistoryItem {
    HistoryItem::Assistant(AssistantReply::new(t, calls))
}

fn result(id: &str, out: &str) -> HistoryItem {
    HistoryItem::ToolResult {
        call_id: id.into(),
        output: out.into(),
        is_error: false,
    }
}

fn texts(h: &[HistoryItem]) -> Vec<(String, String)> {
    h.iter()
        .map(|i| match i {
            HistoryItem::User { text, .. } => ("user".into(), text.clone()),
            HistoryItem::Assistant(reply) => {
                assert!(!reply.has_calls(), "no calls on swe-agent's wire");
                ("assistant".into(), reply.text())
            }
            HistoryItem::ToolResult { .. } => panic!("results are observations"),
        })
        .collect()
}

#[test]
fn replies_become_calls_corrections_or_the_end() {
    let h = SweAgent;
    let tools = h.tools(&env()).spec_slice().to_vec();
    let TextReply::Calls(calls) = h.parse_reply("DISCUSSION\nlook\n\n```\nls\n```", &[], &tools)
    else {
        panic!()
    };
    assert_eq!(calls[0].name, "bash");
    assert!(calls[0].id.starts_with(CALL_ID_PREFIX));
    assert_eq!(calls[0].arguments, r#"{"command":"ls"}"#);
    assert_eq!(
        h.parse_reply("I think it works.", &[], &tools),
        TextReply::Correction(CORRECTION.into())
    );
    let TextReply::Calls(first) = h.parse_reply("```\nsubmit\n```", &[], &tools) else {
        panic!()
    };
    assert_eq!(first[0].name, "submit");
    let reviewed = [result("swe-agent-1", &format!("... {CONFIRM} ..."))];
    assert_eq!(
        h.parse_reply("```\nsubmit\n```", &reviewed, &tools),
        TextReply::Finish
    );
}

#[test]
fn history_renders_as_text_actions_and_observations() {
    let own = ToolCall {
        id: "swe-agent-a".into(),
        name: "bash".into(),
        arguments: r#"{"command":"ls"}"#.into(),
    };
    let foreign = ToolCall {
        id: "toolu_1".into(),
        name: "Edit".into(),
        arguments: r#"{"file_path":"calc.py","old_string":"a - b","new_string":"a + b"}"#.into(),
    };
    let read = ToolCall {
        id: "toolu_2".into(),
        name: "Read".into(),
        arguments: r#"{"file_path":"/repo/calc.py"}"#.into(),
    };
    let history = vec![
        HistoryItem::User {
            text: "<system-reminder>x</system-reminder>".into(),
            images: vec![],
            synthetic: true,
        },
        user("fix add"),
        said("Fixing.", vec![foreign, read]),
        result("toolu_1", "Replaced 1 occurrence in calc.py"),
        result("toolu_2", ""),
        said("no action", vec![]),
        HistoryItem::User {
            text: CORRECTION.into(),
            images: vec![],
            synthetic: true,
        },
        said("DISCUSSION\nlist\n```\nls\n```", vec![own]),
        result("swe-agent-a", "calc.py\n"),
    ];
    let out = texts(&SweAgent.render_history(&env(), &history, &[]));
    assert_eq!(out.len(), 7, "{out:#?}");
    assert!(
        out[0]
            .1
            .starts_with("<uploaded_files>\n/repo\n</uploaded_files>")
    );
    assert!(
        out[0]
            .1
            .contains("<pr_description>\nfix add\n</pr_description>")
    );
    assert_eq!(
        out[1],
        (
            "assistant".into(),
            "Fixing.\n\n```\nstr_replace_editor str_replace /repo/calc.py --old_str 'a - b' --new_str 'a + b'\n```".into()
        )
    );
    assert_eq!(out[2].1, "OBSERVATION:\nReplaced 1 occurrence in calc.py");
    assert_eq!(out[3].1, "```\nstr_replace_editor view /repo/calc.py\n```");
    assert_eq!(out[4].1, EMPTY_OUTPUT);
    // The retry pair is gone once a later reply exists.
    assert_eq!(out[5].1, "DISCUSSION\nlist\n```\nls\n```");
    assert_eq!(out[6].1, "OBSERVATION:\ncalc.py\n");
    // A pending correction stays.
    let pending = vec![
        user("x"),
        said("hm", vec![]),
        HistoryItem::User {
            text: CORRECTION.into(),
            images: vec![],
            synthetic: true,
        },
    ];
    let out = texts(&SweAgent.render_history(&env(), &pending, &[]));
    assert_eq!(out.last().unwrap().1, CORRECTION);
    assert_eq!(out.len(), 3);
}

#[test]
fn bash_lines_are_tidied_like_the_original() {
    assert_eq!(
        tidy("bash: line 1: foo: command not found\nok\n"),
        "bash: foo: command not found\nok\n"
    );
    assert_eq!(tidy("bash: linex: y"), "bash: linex: y");
}
