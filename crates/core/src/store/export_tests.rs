use super::*;
use crate::model::{AssistantReply, ToolCall};
use crate::store::SessionStore;
use interpreter_protocol::FileChangeKind;

fn user(text: &str) -> LogLine {
    LogLine::Item {
        item: HistoryItem::User {
            text: text.into(),
            images: vec![],
            synthetic: false,
        },
    }
}

fn call(id: &str, name: &str, args: Value) -> LogLine {
    LogLine::Item {
        item: HistoryItem::Assistant(AssistantReply::new(
            "",
            vec![ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: args.to_string(),
            }],
        )),
    }
}

fn result(id: &str, output: &str) -> LogLine {
    LogLine::Item {
        item: HistoryItem::ToolResult {
            call_id: id.into(),
            output: output.into(),
            is_error: false,
        },
    }
}

fn turn_end(id: &str, input: u64, output: u64) -> LogLine {
    LogLine::TurnEnd {
        turn_id: id.into(),
        reason: "Completed".into(),
        usage: Some(TokenUsage {
            input_tokens: input,
            output_tokens: output,
            ..Default::default()
        }),
    }
}

/// The log's lines after its header: a turn with a command and an edit, an undone turn, a
/// compaction.
fn turn_lines(key: &str, cwd: &Path) -> Vec<LogLine> {
    let change = FileChange {
        path: cwd.join("a.txt"),
        kind: FileChangeKind::Update,
        move_path: None,
        old_text: Some("one\n".into()),
        new_text: Some("two\n".into()),
    };
    vec![
        user(&format!("run it with {key}")),
        call("c1", "shell", serde_json::json!({"command": "echo hi"})),
        result("c1", &format!("hi {key}")),
        call(
            "c2",
            "apply_patch",
            serde_json::json!({"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch"}),
        ),
        result("c2", "Success"),
        LogLine::ToolDetail {
            call_id: "c2".into(),
            changes: vec![change],
            plan: Some(interpreter_protocol::Plan {
                explanation: None,
                items: vec![interpreter_protocol::PlanItem {
                    step: format!("rotate {key}"),
                    status: interpreter_protocol::PlanStatus::Pending,
                }],
            }),
        },
        turn_end("t1", 100, 7),
        LogLine::Checkpoint {
            turn_id: "t2".into(),
            history_start: 5,
            before: None,
            after: None,
            uncovered: vec![],
            quiet: true,
        },
        user("taken back"),
        turn_end("t2", 10, 1),
        LogLine::Undo {
            turn_ids: vec!["t2".into()],
        },
        LogLine::Replace { history: vec![] },
        user("after the summary"),
    ]
}

/// A log with a command, an edit, an undone turn and a compaction; a key the log holds in
/// clear (registered only after it was written) comes out redacted.
#[test]
fn export_describes_calls_diffs_usage_and_redacts() {
    let home = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(home.path()).unwrap();
    let store = SessionStore::new(&cwd);
    let meta = SessionMeta {
        id: "s1".into(),
        cwd: cwd.clone(),
        created_at: "2026-01-01T00:00:00Z".into(),
        provider: "p".into(),
        model: "m".into(),
        harness: "native".into(),
        additional_directories: vec![],
    };
    let key = "export-test-key-4f9a1c77e2";
    let mut log = store.create(&meta).unwrap();
    for line in turn_lines(key, &cwd) {
        log.append(&line).unwrap();
    }
    log.sync().unwrap();
    drop(log);
    crate::secrets::register(key);
    let e = read(&cwd.join("sessions/s1.jsonl")).unwrap();
    let json = serde_json::to_string(&e).unwrap();
    assert!(!json.contains(key), "{json}");
    assert!(json.contains("[REDACTED]"), "{json}");
    assert!(
        !json.contains("taken back"),
        "an undone turn is left out: {json}"
    );
    assert_eq!(
        e.total_usage.input_tokens, 110,
        "undone turns' tokens were spent"
    );
    let kinds: Vec<&str> = e
        .entries
        .iter()
        .map(|e| match e {
            ExportEntry::Prompt { .. } => "prompt",
            ExportEntry::ToolCall(_) => "call",
            ExportEntry::TurnEnded { .. } => "end",
            ExportEntry::Compacted => "compacted",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "prompt",
            "call",
            "call",
            "other",
            "end",
            "compacted",
            "prompt"
        ]
    );
    let ExportEntry::ToolCall(shell) = &e.entries[1] else {
        unreachable!()
    };
    assert_eq!(shell.command.as_deref(), Some("echo hi"));
    assert_eq!(shell.kind, ToolKind::Execute);
    let ExportEntry::ToolCall(edit) = &e.entries[2] else {
        unreachable!()
    };
    assert_eq!(edit.title, "Edit a.txt");
    assert!(
        edit.diffs[0].contains("--- a/a.txt\n+++ b/a.txt") && edit.diffs[0].contains("-one\n+two"),
        "{}",
        edit.diffs[0]
    );
}

#[test]
fn a_log_without_header_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "{\"type\":\"title\",\"title\":\"t\"}\n").unwrap();
    let err = read(&path).unwrap_err();
    assert!(format!("{err:#}").contains("no session header"), "{err:#}");
}

#[test]
fn find_takes_an_id_a_unique_start_or_a_path() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    for id in ["abc-1", "abc-2", "xyz"] {
        let meta = SessionMeta {
            id: id.into(),
            cwd: home.path().into(),
            created_at: "now".into(),
            provider: "p".into(),
            model: "m".into(),
            harness: "native".into(),
            additional_directories: vec![],
        };
        drop(store.create(&meta).unwrap());
    }
    let log = |id: &str| home.path().join(format!("sessions/{id}.jsonl"));
    assert_eq!(store.find("xyz").unwrap(), log("xyz"));
    assert_eq!(store.find("x").unwrap(), log("xyz"));
    assert_eq!(store.find("abc-2").unwrap(), log("abc-2"));
    let many = format!("{:#}", store.find("abc").unwrap_err());
    assert!(
        many.contains("start of 2 sessions' ids") && many.contains("abc-1"),
        "{many}"
    );
    let none = format!("{:#}", store.find("nope").unwrap_err());
    assert!(none.contains("no session `nope`"), "{none}");
    let path = log("abc-1");
    assert_eq!(store.find(path.to_str().unwrap()).unwrap(), path);
    assert!(store.find("missing.jsonl").is_err());
}

/// Every harness's table can be built from an export's facts alone, and its calls described.
#[test]
fn every_harness_describes_calls_for_an_export() {
    let dir = tempfile::tempdir().unwrap();
    let meta = SessionMeta {
        id: "s".into(),
        cwd: dir.path().into(),
        created_at: "now".into(),
        provider: "p".into(),
        model: "m".into(),
        harness: "native".into(),
        additional_directories: vec![],
    };
    let mut d = Describer::new(&meta);
    for h in harness::names() {
        let table = harness::by_name(h).unwrap().tools(&d.env);
        let first = table.names().into_iter().next().expect("a tool");
        let _ = d.describe(h, first, &serde_json::json!({}));
        let unknown = d.describe(h, "no_such_tool", &Value::Null);
        assert_eq!(unknown.title, "no_such_tool", "{h}");
    }
    let unknown = d.describe("no-such-harness", "shell", &Value::Null);
    assert_eq!(unknown.kind, ToolKind::Other);
}
