//! Issue 39's export, end to end: an exec session on the mock model (a prompt with an image
//! and hostile HTML, a command, an edit, token counts) exported by `interpreter export` as
//! Markdown and as HTML, a key the log holds redacted at export, and clear errors for a
//! session that is not there or a prefix of several.

use mock_llm::e2e::{TINY_PNG, TestRepo, jsonl, succeeded};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;
use std::process::Output;

/// Not key-shaped, so only a key registered at export time can redact it.
const KEY: &str = "plainvalue-e2e-export-7Q2x9";
const HOSTILE: &str = "</script><img src=x onerror=alert(1)>";
const PATCH: &str = "*** Begin Patch\n*** Update File: hello.py\n@@\n-print(\"hello\")\n+print(\"hello, world\")\n*** End Patch\n";

fn script() -> Script {
    Script::new([
        Reply::tool_call("c1", "shell", json!({"command": "cat notes.txt"}))
            .with_usage(1200, 40, 1000, 0),
        Reply::tool_call("c2", "apply_patch", json!({"input": PATCH}))
            .with_usage(1300, 60, 1200, 0),
        Reply::text("Fixed the **greeting**. <script>alert(2)</script>")
            .with_usage(1400, 20, 1300, 0),
    ])
}

/// Runs `interpreter <args>` in the repo without the key in its environment, or with it.
fn run(repo: &TestRepo, args: &[String], key: bool) -> Output {
    let mut cmd = repo.command(args);
    cmd.env_remove("OPENAI_API_KEY");
    if key {
        cmd.env("OPENAI_API_KEY", KEY);
    }
    let mut child = cmd.spawn().expect("spawn interpreter");
    // Closed stdin: exec reads it when piped.
    drop(child.stdin.take());
    mock_llm::e2e::wait_with_timeout(child, std::time::Duration::from_secs(60))
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// One exec session: its id.
fn session(repo: &TestRepo, mock: &MockServer) -> String {
    let mut args = mock_llm::e2e::exec_args(&mock.url(), &["--json", "--image", "shot.png"]);
    args.push(format!("Fix the greeting. My key is {KEY} {HOSTILE}"));
    let out = run(repo, &args, false);
    succeeded(&out);
    jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string()
}

fn setup() -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.write("hello.py", "print(\"hello\")\n");
    repo.write("notes.txt", &format!("the key: {KEY}\n"));
    std::fs::write(repo.path().join("shot.png"), TINY_PNG).unwrap();
    let mock = MockServer::start_blocking(script()).unwrap();
    let id = session(&repo, &mock);
    assert_eq!(repo.read("hello.py"), "print(\"hello, world\")\n");
    let log =
        std::fs::read_to_string(repo.home.path().join(format!("sessions/{id}.jsonl"))).unwrap();
    assert!(
        log.contains(KEY),
        "the log holds the key, so the export is what redacts it"
    );
    (repo, id)
}

#[test]
fn export_markdown_and_html_with_diffs_usage_redaction_and_images() {
    let (repo, id) = setup();
    // Markdown on stdout, the session named by the start of its id.
    let md = succeeded(&run(&repo, &strings(&["export", &id[..13]]), true));
    assert!(md.starts_with("# Fix the greeting."), "{md}");
    assert!(md.contains(&format!("- **Session:** {id}")), "{md}");
    assert!(md.contains("- **Model:** mock-model (mock)"), "{md}");
    assert!(
        md.contains("## Prompt 1\n\nFix the greeting. My key is [REDACTED]"),
        "{md}"
    );
    assert!(
        md.contains("#### Ran a command · shell\n\n```sh\ncat notes.txt\n```"),
        "{md}"
    );
    assert!(md.contains("the key: [REDACTED]"), "{md}");
    assert!(md.contains("#### Edit hello.py · apply_patch"), "{md}");
    assert!(
        md.contains("```diff\ndiff --git a/hello.py b/hello.py\n--- a/hello.py\n+++ b/hello.py\n@@ -1 +1 @@\n-print(\"hello\")\n+print(\"hello, world\")\n```"),
        "{md}"
    );
    assert!(
        md.contains("**Assistant:**\n\nFixed the **greeting**."),
        "{md}"
    );
    assert!(
        md.contains("*Tokens this turn: 3,900 input (3,500 cached) · 120 output*"),
        "{md}"
    );
    assert!(
        md.contains("*(image 1 attached; not included here)*"),
        "{md}"
    );
    assert!(!md.contains(KEY), "{md}");

    // HTML in a file, its image beside it.
    let out_dir = repo.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let page = out_dir.join("session.html");
    let said = run(
        &repo,
        &strings(&["export", &id, "--html", "-o", page.to_str().unwrap()]),
        true,
    );
    assert!(
        succeeded(&said).is_empty(),
        "a file export prints nothing on stdout"
    );
    let stderr = String::from_utf8_lossy(&said.stderr);
    assert!(
        stderr.contains("Exported session") && stderr.contains("1 image file"),
        "{stderr}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        std::fs::read(out_dir.join("session_files/1.png")).unwrap(),
        TINY_PNG
    );
    assert!(
        html.contains("<img src=\"session_files/1.png\" alt=\"image 1\">"),
        "{html}"
    );
    assert!(
        html.contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;script&gt;alert(2)&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        !html.contains("<script") && !html.contains("<img src=x"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"add\">+print(&quot;hello, world&quot;)</span>"),
        "{html}"
    );
    assert!(
        html.contains("<details><summary>Output (4 lines)</summary>"),
        "{html}"
    );
    assert!(html.contains("Tokens in all: 3,900 input"), "{html}");
    assert!(!html.contains(KEY), "{html}");

    // HTML on stdout keeps the image inline; the log file's path names the session too.
    let log = repo.home.path().join(format!("sessions/{id}.jsonl"));
    let inline = succeeded(&run(
        &repo,
        &strings(&["export", log.to_str().unwrap(), "--html"]),
        true,
    ));
    assert!(
        inline.contains("<img src=\"data:image/png;base64,"),
        "{inline}"
    );
    // `--last` is the newest session of this folder.
    let last = succeeded(&run(&repo, &strings(&["export", "--last"]), true));
    assert_eq!(last, md);
}

#[test]
fn export_errors_name_the_missing_or_ambiguous_session() {
    let (repo, first) = setup();
    let mock = MockServer::start_blocking(Script::new([Reply::text("hi")])).unwrap();
    let second = session(&repo, &mock);
    let out = run(&repo, &strings(&["export", "no-such-session"]), false);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no session `no-such-session`"), "{err}");
    assert!(out.stdout.is_empty());
    let common: String = first
        .chars()
        .zip(second.chars())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a)
        .collect();
    assert!(!common.is_empty(), "{first} {second}");
    let out = run(&repo, &strings(&["export", &common]), false);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is the start of 2 sessions' ids"), "{err}");
    assert!(err.contains(&first) && err.contains(&second), "{err}");
}

// The hostile-command tests' raw ACP client; not every helper is used here.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

/// `/export` over ACP: offered among the commands, it writes the file in the session's folder
/// and answers with where, as agent text, ending the prompt normally.
#[test]
fn acp_slash_export_writes_the_file_and_says_where() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "shell", json!({"command": "echo from-acp"})),
        Reply::text("Answered over ACP."),
    ]))
    .unwrap();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(&repo, &mock, &[], &[]);
    agent.initialize();
    let id = agent.new_session(&cwd, json!([]));
    agent.prompt(&id, "say something");
    let answer = agent.prompt(&id, "/export notes/acp.md");
    assert_eq!(answer["stopReason"], "end_turn", "{answer}");
    let updates = serde_json::to_string(agent.updates()).unwrap();
    assert!(updates.contains("\"name\":\"export\""), "{updates}");
    let file = cwd.join("notes/acp.md");
    assert!(
        updates.contains(&format!("Exported the session to {}", file.display())),
        "{updates}"
    );
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.contains("## Prompt 1\n\nsay something"), "{md}");
    assert!(md.contains("```sh\necho from-acp\n```"), "{md}");
    assert!(md.contains("Answered over ACP."), "{md}");
    assert!(!md.contains("/export"), "the command is no prompt: {md}");
    agent.exit();
}
