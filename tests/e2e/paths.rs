//! Path confinement end to end: hostile paths (traversal, absolute paths, symlinks out of the
//! workspace, NUL bytes, Unicode lookalikes…) given to every file tool of the native,
//! kimi-code, claude-code, kimi-cli, qwen-code and deepseek-tui harnesses are refused with a
//! tool error, nothing outside the workspace changes, and nothing from outside reaches the
//! model. (swe-agent's editor resolves paths through the same workspace; its unit tests and
//! e2e cover it.)

use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

const SECRET: &str = "SENTINEL-CONTENT-7f3a";

/// A folder next to the repository, with a file the model must never read or change.
struct Setup {
    repo: TestRepo,
    sentinel: tempfile::TempDir,
}

fn setup() -> Setup {
    let repo = TestRepo::new();
    let parent = repo.path().parent().unwrap().to_path_buf();
    let sentinel = tempfile::tempdir_in(&parent).unwrap();
    std::fs::write(sentinel.path().join("secret.txt"), format!("{SECRET}\n")).unwrap();
    repo.write("inside.txt", "hello\n");
    repo.write("sub/code.rs", "fn main() {}\n");
    let link = |target: &Path, name: &str| {
        std::os::unix::fs::symlink(target, repo.path().join(name)).unwrap();
    };
    link(sentinel.path(), "out");
    link(&sentinel.path().join("secret.txt"), "outfile");
    link(&sentinel.path().join("new.txt"), "dangling");
    link(&sentinel.path().join("deep/er"), "dangling_dir");
    Setup { repo, sentinel }
}

fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        let ft = e.file_type().unwrap();
        let content = if ft.is_symlink() {
            format!("link {:?}", std::fs::read_link(e.path()).unwrap())
        } else if ft.is_dir() {
            format!("dir {:?}", snapshot(&e.path()))
        } else {
            std::fs::read_to_string(e.path()).unwrap_or_default()
        };
        out.insert(name, content);
    }
    out
}

/// The hostile paths: 26 of them.
fn hostile(s: &Setup) -> Vec<String> {
    let name = s.sentinel.path().file_name().unwrap().to_string_lossy();
    let abs = s.sentinel.path().display().to_string();
    let repo = s.repo.path().display().to_string();
    vec![
        format!("../{name}/secret.txt"),
        format!("sub/../../{name}/secret.txt"),
        "./../../../../../../../etc/passwd".into(),
        format!("{abs}/secret.txt"),
        abs.clone(),
        format!("{repo}/../{name}/secret.txt"),
        "/etc/passwd".into(),
        "/".into(),
        "/proc/self/root/etc/passwd".into(),
        format!("/proc/self/cwd/../{name}/secret.txt"),
        "out/secret.txt".into(),
        "out".into(),
        "outfile".into(),
        "dangling".into(),
        "dangling_dir/x.txt".into(),
        "out/../out/secret.txt".into(),
        "inside.txt\0.rs".into(),
        "sub\0/../../x".into(),
        format!("..\u{2215}{name}\u{2215}secret.txt"),
        format!("\u{FF0E}\u{FF0E}/{name}/secret.txt"),
        format!("..\u{2024}/{name}/secret.txt"),
        format!("\u{2025}/{name}/secret.txt"),
        format!("..\u{FF0F}{name}\u{FF0F}secret.txt"),
        format!("..\\{name}\\secret.txt"),
        "~/.bashrc".into(),
        "sub/\u{202E}txt.exe".into(),
    ]
}

/// `p` as an absolute path under the repository (unless it is one already).
fn absolute(repo: &str, p: &str) -> String {
    if p.starts_with('/') {
        p.to_string()
    } else {
        format!("{repo}/{p}")
    }
}

/// One tool call per (tool, path) for a harness.
fn calls(harness: &str, paths: &[String], repo: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for p in paths {
        let patch =
            |body: String| json!({"input": format!("*** Begin Patch\n{body}*** End Patch\n")});
        let mut add = |tool: &str, args: Value| out.push((tool.to_string(), args));
        match harness {
            "native" => {
                add("read_file", json!({"path": p}));
                add("list_dir", json!({"path": p}));
                add("grep_files", json!({"pattern": "SENTINEL", "path": p}));
                add("glob", json!({"pattern": "*", "path": p}));
                add("apply_patch", patch(format!("*** Add File: {p}\n+pwned\n")));
                add(
                    "apply_patch",
                    patch(format!(
                        "*** Update File: {p}\n@@\n-{}\n+pwned\n",
                        &SECRET[..16]
                    )),
                );
                add(
                    "apply_patch",
                    patch(format!(
                        "*** Update File: inside.txt\n*** Move to: {p}\n@@\n-hello\n+pwned\n"
                    )),
                );
                add("apply_patch", patch(format!("*** Delete File: {p}\n")));
                add(
                    "shell",
                    json!({"command": "echo pwned > pwned.txt", "workdir": p}),
                );
                // A patch sent through the shell goes to the same machinery.
                if !p.contains(['\0', '\'', '\n']) {
                    add(
                        "shell",
                        json!({"command": format!(
                            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {p}\n+pwned\n*** End Patch\nEOF"
                        )}),
                    );
                    add(
                        "shell",
                        json!({"command": format!(
                            "cd '{p}' && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: pwned.txt\n+pwned\n*** End Patch\nEOF"
                        )}),
                    );
                }
            }
            // Claude Code's Bash has no working-directory parameter: nothing to aim.
            "claude-code" | "claude-code-bare" => {
                add("Read", json!({"file_path": p}));
                add(
                    "Edit",
                    json!({"file_path": p, "old_string": &SECRET[..16], "new_string": "pwned"}),
                );
                if harness == "claude-code" {
                    add("Write", json!({"file_path": p, "content": "pwned"}));
                    add("Glob", json!({"pattern": "*", "path": p}));
                    add("Grep", json!({"pattern": "SENTINEL", "path": p}));
                }
            }
            "kimi-cli" => {
                add("ReadFile", json!({"path": p}));
                add("WriteFile", json!({"path": p, "content": "pwned"}));
                add(
                    "WriteFile",
                    json!({"path": p, "content": "pwned", "mode": "append"}),
                );
                add(
                    "StrReplaceFile",
                    json!({"path": p, "edit": {"old": &SECRET[..16], "new": "pwned"}}),
                );
                add("Glob", json!({"pattern": "*", "directory": p}));
                add("Grep", json!({"pattern": "SENTINEL", "path": p}));
            }
            // Qwen Code's file tools take absolute paths only: aim them through the repo.
            // (`~/x` under the repository is an ordinary name there, not the home folder.)
            "qwen-code" if p.starts_with('~') => {}
            "qwen-code" => {
                let a = absolute(repo, p);
                add("read_file", json!({"file_path": a}));
                add("write_file", json!({"file_path": a, "content": "pwned"}));
                add(
                    "edit",
                    json!({"file_path": a, "old_string": &SECRET[..16], "new_string": "pwned"}),
                );
                add(
                    "edit",
                    json!({"file_path": a, "old_string": "", "new_string": "pwned"}),
                );
                add("list_directory", json!({"path": a}));
                add("glob", json!({"pattern": "*", "path": p}));
                add("grep_search", json!({"pattern": "SENTINEL", "path": p}));
                add(
                    "run_shell_command",
                    json!({"command": "echo pwned > pwned.txt", "directory": p}),
                );
            }
            "deepseek-tui" => {
                add("read_file", json!({"path": p}));
                add("write_file", json!({"path": p, "content": "pwned"}));
                add(
                    "edit_file",
                    json!({"path": p, "search": &SECRET[..16], "replace": "pwned"}),
                );
                add("list_dir", json!({"path": p}));
                add("grep_files", json!({"pattern": "SENTINEL", "path": p}));
                add("file_search", json!({"query": "secret", "path": p}));
                add("git_diff", json!({"path": p}));
                add("git_blame", json!({"path": p}));
                add(
                    "exec_shell",
                    json!({"command": "echo pwned > pwned.txt", "cwd": p}),
                );
            }
            _ => {
                add("Read", json!({"path": p}));
                add("Write", json!({"path": p, "content": "pwned"}));
                add(
                    "Write",
                    json!({"path": p, "content": "pwned", "mode": "append"}),
                );
                add(
                    "Edit",
                    json!({"path": p, "old_string": &SECRET[..16], "new_string": "pwned"}),
                );
                add("Glob", json!({"pattern": "*", "path": p}));
                add("Grep", json!({"pattern": "SENTINEL", "path": p}));
                add(
                    "Bash",
                    json!({"command": "echo pwned > pwned.txt", "cwd": p}),
                );
            }
        }
    }
    out
}

fn run(harness: &str) {
    let s = setup();
    let paths = hostile(&s);
    assert!(paths.len() >= 20);
    let repo = s.repo.path().display().to_string();
    let calls = calls(harness, &paths, &repo);
    let mut reply = Reply::default();
    for (i, (tool, args)) in calls.iter().enumerate() {
        reply = reply.then_tool_call(format!("c{i}"), tool.clone(), args.clone());
    }
    let mock = MockServer::start_blocking(Script::new([reply, Reply::text("done")])).unwrap();
    let before_outside = snapshot(s.sentinel.path());
    let before_repo = snapshot(s.repo.path());
    let mut args = vec!["exec".to_string(), "--json".into()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(["--harness".into(), harness.to_string()]);
    let out = s.repo.run(&args, "try the paths");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 2);
    let messages = reqs[1].body["messages"].as_array().unwrap().clone();
    let results: BTreeMap<String, String> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(results.len(), calls.len());
    let refusals = [
        "outside the workspace roots",
        "is refused: it contains",
        "contains a NUL byte",
    ];
    for (i, (tool, args)) in calls.iter().enumerate() {
        let r = &results[&format!("c{i}")];
        assert!(
            refusals.iter().any(|m| r.contains(m)),
            "{harness} {tool} {args} was not refused: {r}"
        );
        assert!(!r.contains(SECRET), "{tool} {args} leaked: {r}");
    }
    // Nothing from outside reached the model (the calls only name part of the secret),
    // nothing outside changed, nothing was created.
    let body = serde_json::to_string(&reqs[1].body).unwrap();
    assert!(!body.contains(SECRET));
    assert_eq!(snapshot(s.sentinel.path()), before_outside);
    assert_eq!(snapshot(s.repo.path()), before_repo);
    assert!(!s.sentinel.path().join("new.txt").exists());
    eprintln!(
        "{harness}: {} hostile paths × {} tool calls all refused",
        paths.len(),
        calls.len()
    );
}

#[test]
fn native_tools_refuse_every_hostile_path() {
    run("native");
}

#[test]
fn kimi_code_tools_refuse_every_hostile_path() {
    run("kimi-code");
}

#[test]
fn claude_code_tools_refuse_every_hostile_path() {
    run("claude-code");
    run("claude-code-bare");
}

#[test]
fn kimi_cli_qwen_code_and_deepseek_tui_tools_refuse_every_hostile_path() {
    run("kimi-cli");
    run("qwen-code");
    run("deepseek-tui");
}
