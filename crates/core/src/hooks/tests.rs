//! Hooks: loading the peers' files, matching, and reading answers.

use std::time::Duration;

use interpreter_protocol::{HookRunStatus, ToolKind};
use serde_json::json;

use super::matcher::{CallView, call_names, matches, tool_inputs};
use super::output::{Permission, Ran, parse};
use super::{Dialect, HookEvent, Sources, load};
use crate::config::{ProjectTrust, TrustLevel};

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn matchers_take_exact_names_regexes_and_everything() {
    assert!(matches(Some("Edit|Write"), &names(&["Write"])));
    assert!(!matches(Some("Edit|Write"), &names(&["NotebookEdit"])));
    assert!(matches(
        Some("mcp__.*"),
        &names(&["mcp__github__create_issue"])
    ));
    assert!(matches(None, &names(&["x"])) && matches(Some("*"), &names(&["x"])));
}

#[test]
fn a_native_patch_is_an_edit_to_claude_and_apply_patch_to_codex() {
    let call = CallView {
        name: "apply_patch".into(),
        kind: ToolKind::Edit,
        command: None,
        args: json!({"input": "…"}),
        paths: vec!["/w/a.rs".into(), "/w/b.rs".into()],
        subagent: false,
    };
    assert!(call_names(&call, Dialect::Claude).contains(&"Edit".to_string()));
    assert_eq!(call_names(&call, Dialect::Codex)[0], "apply_patch");
    let claude = tool_inputs(&call, Dialect::Claude);
    assert_eq!(claude.len(), 2);
    assert_eq!(claude[1].1["file_path"], "/w/b.rs");
    let shell = CallView {
        name: "exec_command".into(),
        kind: ToolKind::Execute,
        command: Some("ls".into()),
        args: json!({"cmd": "ls"}),
        paths: vec![],
        subagent: false,
    };
    assert_eq!(call_names(&shell, Dialect::Codex)[0], "Bash");
    assert_eq!(tool_inputs(&shell, Dialect::Codex)[0].1["command"], "ls");
}

fn exited(code: i32, stdout: &str, stderr: &str) -> Ran {
    Ran::Exited {
        code: Some(code),
        stdout: stdout.into(),
        stderr: stderr.into(),
    }
}

#[test]
fn answers_block_deny_add_context_and_fail() {
    let (v, status, _) = parse(HookEvent::PreToolUse, exited(2, "", "no"));
    assert_eq!(
        (v.block.as_deref(), status),
        (Some("no"), HookRunStatus::Blocked)
    );
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not here"}}"#;
    let (v, _, _) = parse(HookEvent::PreToolUse, exited(0, deny, ""));
    assert_eq!(v.permission, Some(Permission::Deny));
    assert_eq!(v.block.as_deref(), Some("not here"));
    let (v, _, _) = parse(HookEvent::UserPromptSubmit, exited(0, "rules\n", ""));
    assert_eq!(v.context, ["rules"]);
    // Plain stdout of a tool hook is not context.
    let (v, _, _) = parse(HookEvent::PostToolUse, exited(0, "formatted 3 files", ""));
    assert!(v.context.is_empty());
    let (_, status, entries) = parse(HookEvent::PostToolUse, exited(0, "{oops", ""));
    assert_eq!(status, HookRunStatus::Failed);
    assert!(entries[0].text.contains("invalid JSON"));
    // Exit 2 cannot block a SessionStart: the user hears it.
    let (v, status, _) = parse(HookEvent::SessionStart, exited(2, "", "hm"));
    assert_eq!((v.block, status), (None, HookRunStatus::Completed));
    let (v, status, _) = parse(
        HookEvent::Stop,
        exited(0, r#"{"continue": false, "stopReason": "enough"}"#, ""),
    );
    assert_eq!(
        (v.stop.as_deref(), status),
        (Some("enough"), HookRunStatus::Stopped)
    );
}

#[test]
fn every_source_loads_a_broken_file_alone_is_left_out_and_project_hooks_wait_for_trust() {
    let home = tempfile::tempdir().unwrap();
    let claude = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 5}]}]}}"#,
    )
    .unwrap();
    let user = "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"./check\"\n";
    std::fs::write(
        claude.path().join("settings.json"),
        "{\"hooks\": {\"Stop\": [}",
    )
    .unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        r#"{"hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt"}]}]}}"#,
    )
    .unwrap();
    let trust = ProjectTrust {
        root: project.path().to_path_buf(),
        level: Some(TrustLevel::Trusted),
        files: vec![],
        governed: vec![],
    };
    fn sources<'a>(
        home: &'a std::path::Path,
        claude: &std::path::Path,
        config: &'a str,
        project: &'a ProjectTrust,
    ) -> Sources<'a> {
        Sources {
            home,
            user_config: Some(config),
            claude_home: Some(claude.to_path_buf()),
            project: Some(project),
        }
    }
    let (hooks, warnings) = load(&sources(home.path(), claude.path(), user, &trust));
    assert_eq!(hooks.handlers.len(), 2, "{warnings:?}");
    assert_eq!(hooks.handlers[0].timeout, Duration::from_secs(5));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("settings.json") && w.contains("line")),
        "{warnings:?}"
    );
    assert_eq!(hooks.pending.len(), 1);
    let pending = &hooks.pending[0];
    // Trusting its exact hash lets it run.
    let approved = format!(
        "{user}[hooks.state.'{}']\ntrusted_hash = \"{}\"\n",
        pending.key, pending.hash
    );
    let (hooks, _) = load(&sources(home.path(), claude.path(), &approved, &trust));
    assert_eq!(hooks.handlers.len(), 3);
    assert!(hooks.pending.is_empty());
    // An untrusted project's hooks are not read at all.
    let untrusted = ProjectTrust {
        level: None,
        ..trust.clone()
    };
    let (hooks, _) = load(&sources(home.path(), claude.path(), user, &untrusted));
    assert!(hooks.pending.is_empty() && hooks.handlers.len() == 2);
}

#[test]
fn one_bad_entry_leaves_out_only_itself() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("hooks.json"),
        r#"{"hooks": {
            "Stop": {"hooks": [{"type": "command", "command": "x"}]},
            "PreToolUse": [
                {"matcher": "(", "hooks": [{"type": "command", "command": "bad-matcher"}]},
                "not a group",
                {"type": "command", "command": "a-handler-without-its-group"},
                {"matcher": "Bash", "hooks": [
                    {"type": "command"},
                    {"type": "prompt", "prompt": "is it safe?"},
                    {"type": "command", "command": "./kept.sh"}
                ]}
            ]
        }}"#,
    )
    .unwrap();
    let (hooks, warnings) = load(&Sources {
        home: home.path(),
        user_config: None,
        claude_home: None,
        project: None,
    });
    let commands: Vec<&str> = hooks.handlers.iter().map(|h| h.command.as_str()).collect();
    assert_eq!(commands, ["./kept.sh"], "{warnings:#?}");
    for part in [
        "Stop is not a list",
        "matcher `(`",
        "group 2 of PreToolUse",
        "group 3 of PreToolUse has no `hooks` list",
        "has no `command`",
        "`prompt` hook",
    ] {
        assert!(
            warnings.iter().any(|w| w.contains(part)),
            "{part}: {warnings:#?}"
        );
    }
}
