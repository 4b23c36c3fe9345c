//! The process sandbox end to end: `interpreter exec` runs the mock model's shell commands
//! under Landlock, and each case is proved by looking at the file system afterwards. Skipped,
//! with the reason printed, where the kernel has no Landlock (the session's warning says so),
//! unless `INTERPRETER_REQUIRE_LANDLOCK=1` makes a skip a failure.

use mock_llm::e2e::{TestRepo, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// A folder outside the workspace and outside `/tmp` (which workspace-write may write).
fn sentinel() -> tempfile::TempDir {
    let d = mock_llm::e2e::dir_outside_temp(Path::new(env!("CARGO_TARGET_TMPDIR")));
    std::fs::write(d.path().join("keep.txt"), "original\n").unwrap();
    d
}

fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        let content = if e.file_type().unwrap().is_dir() {
            format!("dir {:?}", snapshot(&e.path()))
        } else {
            std::fs::read_to_string(e.path()).unwrap_or_else(|_| "<binary>".into())
        };
        out.insert(name, content);
    }
    out
}

/// Runs one exec turn whose model calls `shell` with each command in turn, then answers.
/// Returns the JSONL events and each call's output as the model saw it; None (after printing
/// why) when the kernel has no Landlock.
fn run_commands(
    repo: &TestRepo,
    commands: &[String],
    flags: &[&str],
) -> Option<(Vec<Value>, Vec<String>)> {
    let mut replies: Vec<Reply> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| Reply::tool_call(format!("c{i}"), "shell", json!({"command": c})))
        .collect();
    replies.push(Reply::text("ok"));
    let mock = MockServer::start_blocking(Script::new(replies)).unwrap();
    let mut args = vec!["exec".to_string(), "--json".into()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(["--harness".into(), "native".into()]);
    args.extend(flags.iter().map(|s| s.to_string()));
    let out = repo.run(&args, "run the commands");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "stderr: {stderr}");
    let events = jsonl(&out);
    if let Some(w) = events
        .iter()
        .filter(|e| e["type"] == "error")
        .filter_map(|e| e["message"].as_str())
        .find(|m| m.contains("No process sandbox"))
    {
        skip(&format!("the kernel has no Landlock ({w})"));
        return None;
    }
    let reqs = mock.model_requests();
    let last = &reqs.last().unwrap().body;
    let outputs = (0..commands.len())
        .map(|i| {
            last["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "tool" && m["tool_call_id"] == format!("c{i}"))
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    Some((events, outputs))
}

/// Prints why a test is skipped, or fails it under `INTERPRETER_REQUIRE_LANDLOCK=1` (CI sets
/// it when the kernel reports a Landlock ABI).
fn skip(reason: &str) {
    if std::env::var_os("INTERPRETER_REQUIRE_LANDLOCK").is_some_and(|v| v == "1") {
        panic!("would skip ({reason}), but INTERPRETER_REQUIRE_LANDLOCK=1");
    }
    eprintln!("skipping: {reason}");
}

fn warnings(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "error")
        .filter_map(|e| e["message"].as_str().map(String::from))
        .collect()
}

#[test]
fn workspace_write_allows_the_workspace_and_refuses_outside() {
    let repo = TestRepo::new();
    let outside = sentinel();
    let before = snapshot(outside.path());
    let o = outside.path().display();
    let commands = [
        "echo inside > inside.txt && mkdir -p out && echo deep > out/deep.txt".to_string(),
        format!("echo escaped > {o}/escape.txt"),
        format!("echo more >> {o}/keep.txt"),
        format!("rm -f {o}/keep.txt"),
        format!("mkdir {o}/newdir"),
        format!("cp inside.txt {o}/copy.txt"),
    ];
    let Some((events, outputs)) = run_commands(&repo, &commands, &["--sandbox", "workspace-write"])
    else {
        return;
    };
    assert!(
        outputs[0].contains("Exit code: 0"),
        "inside write failed: {}",
        outputs[0]
    );
    assert_eq!(repo.read("inside.txt"), "inside\n");
    assert_eq!(repo.read("out/deep.txt"), "deep\n");
    for (c, o) in commands.iter().zip(&outputs).skip(1) {
        assert!(!o.contains("Exit code: 0"), "`{c}` succeeded: {o}");
    }
    assert!(outputs[1].contains("Permission denied"), "{}", outputs[1]);
    assert_eq!(
        snapshot(outside.path()),
        before,
        "the folder outside changed"
    );
    // The sandbox was there: no warning about missing protection (a partial one, on old
    // kernels, is about the network only).
    let w = warnings(&events);
    assert!(
        w.iter().all(|w| w.contains("network")),
        "unexpected warnings: {w:?}"
    );
}

#[test]
fn read_only_blocks_every_write() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let outside = sentinel();
    let before_outside = snapshot(outside.path());
    let before_repo = snapshot(repo.path());
    let tmp_probe = std::env::temp_dir().join(format!("interpreter-ro-{}", std::process::id()));
    let commands = [
        "echo x > new.txt".to_string(),
        "echo x >> a.txt".to_string(),
        "rm a.txt".to_string(),
        "mkdir sub".to_string(),
        format!("echo x > {}", tmp_probe.display()),
        format!("echo x > {}/keep.txt", outside.path().display()),
        "cat a.txt && echo quiet > /dev/null && echo read-ok".to_string(),
    ];
    let Some((_, outputs)) = run_commands(&repo, &commands, &["--sandbox", "read-only"]) else {
        return;
    };
    for (c, o) in commands.iter().zip(&outputs).take(6) {
        assert!(!o.contains("Exit code: 0"), "`{c}` succeeded: {o}");
    }
    assert!(
        outputs[6].contains("read-ok") && outputs[6].contains("Exit code: 0"),
        "{}",
        outputs[6]
    );
    assert!(!tmp_probe.exists());
    assert_eq!(snapshot(repo.path()), before_repo, "the workspace changed");
    assert_eq!(snapshot(outside.path()), before_outside);
}

#[test]
fn full_access_is_unconfined() {
    // The control for the tests above: the same write outside succeeds without the sandbox,
    // so their failures are the sandbox's doing.
    let repo = TestRepo::new();
    let outside = sentinel();
    let target = outside.path().join("escape.txt");
    let commands = [format!("echo escaped > {}", target.display())];
    let Some((_, outputs)) = run_commands(&repo, &commands, &["--sandbox", "danger-full-access"])
    else {
        return;
    };
    assert!(outputs[0].contains("Exit code: 0"), "{}", outputs[0]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "escaped\n");
}

#[test]
fn network_is_off_in_workspace_write_unless_enabled() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo connected");
    let repo = TestRepo::new();
    let Some((events, outputs)) = run_commands(
        &repo,
        std::slice::from_ref(&probe),
        &["--sandbox", "workspace-write"],
    ) else {
        return;
    };
    if let Some(w) = warnings(&events).iter().find(|w| w.contains("network")) {
        skip(&format!("this kernel's Landlock cannot restrict TCP ({w})"));
        return;
    }
    assert!(!outputs[0].contains("connected"), "{}", outputs[0]);
    let Some((_, outputs)) = run_commands(
        &repo,
        std::slice::from_ref(&probe),
        &[
            "--sandbox",
            "workspace-write",
            "-c",
            "sandbox_workspace_write.network_access=true",
        ],
    ) else {
        return;
    };
    assert!(outputs[0].contains("connected"), "{}", outputs[0]);
}

#[test]
fn dangerous_commands_are_refused_under_never_even_with_full_access() {
    let repo = TestRepo::new();
    let outside = sentinel();
    let before = snapshot(outside.path());
    let commands = [format!("rm -rf {}", outside.path().display())];
    for flags in [
        &["--sandbox", "workspace-write"][..],
        &["--dangerously-bypass-approvals-and-sandbox"][..],
    ] {
        let Some((events, outputs)) = run_commands(&repo, &commands, flags) else {
            return;
        };
        assert!(
            outputs[0].contains("Refused") && outputs[0].contains("recursive delete"),
            "{}",
            outputs[0]
        );
        let declined = events
            .iter()
            .any(|e| e["item"]["type"] == "command_execution" && e["item"]["status"] == "declined");
        assert!(declined, "{events:?}");
        assert_eq!(snapshot(outside.path()), before);
    }
}
