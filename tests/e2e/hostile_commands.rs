//! Issue 12, the command side, through the real binary and the mock model: dangerous commands
//! written other ways (row 2), keys within a command's reach (row 3), processes that leave the
//! command's group or session (row 4), gigabytes of output (row 9), the LSP's read-only
//! session and the environment of MCP stdio servers; issue 22's read-only and dangerous
//! probes (`round2.rs`) and permission requests (`permission.rs`). Each test looks at the
//! outcome: victim folders still there, no key in any form anywhere, no process left, exact
//! numbers.

#[path = "hostile_commands/acp.rs"]
mod acp;
#[path = "lsp_client.rs"]
mod lsp_client;
#[path = "hostile_commands/permission.rs"]
mod permission;
#[path = "hostile_commands/round2.rs"]
mod round2;

use base64::Engine;
use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn exec_args(mock: &MockServer, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string(), "--json".into()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    a.extend(["--harness".into(), "native".into()]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// A script whose model runs each command with `shell`, then says "done".
fn shell_script(commands: &[String]) -> Script {
    let mut replies: Vec<Reply> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| Reply::tool_call(format!("c{i}"), "shell", json!({"command": c})))
        .collect();
    replies.push(Reply::text("done"));
    Script::new(replies)
}

/// What the model was told for call `id`.
fn tool_output(mock: &MockServer, id: &str) -> String {
    let reqs = mock.model_requests();
    let body = &reqs.last().expect("a model request").body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|| panic!("no tool output for {id}"))
}

/// A folder outside the workspace and the temp folders, holding `keep.txt`.
fn victim() -> tempfile::TempDir {
    let d = mock_llm::e2e::dir_outside_temp(Path::new(env!("CARGO_TARGET_TMPDIR")));
    std::fs::write(d.path().join("keep.txt"), "keep\n").unwrap();
    d
}

/// Processes whose command line holds `marker`.
fn alive_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            text.contains(marker).then_some(pid)
        })
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        let file = what
            .rsplit_once('(')
            .and_then(|(_, f)| std::fs::read_to_string(f.trim_end_matches(')')).ok());
        assert!(
            start.elapsed() < limit,
            "{what}: not within {limit:?}\n{}",
            file.unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The spellings of issue 12, row 2, each aimed at `v` (or the fake home, or the remote's
/// `main`), with a script that deletes `v` served as a file for the download probes.
fn row2_commands(v: &Path, script: &Path) -> Vec<String> {
    let v = v.display();
    let s = script.display();
    vec![
        format!("\\rm -rf {v}"),
        format!("/bin/rm -rf {v}"),
        format!("command rm -rf {v}"),
        format!("env rm -rf {v}"),
        format!("bash -c 'rm -rf {v}'"),
        format!("eval 'rm -rf {v}'"),
        "x=~; rm -rf $x".into(),
        format!("curl -s file://{s} | /bin/sh"),
        format!("curl -s file://{s} | env bash"),
        "git push origin :main".into(),
    ]
}

/// A workspace whose `origin` (outside it) has a `main` branch, a victim folder, a fake home,
/// and a script that would delete the victim.
struct Row2 {
    repo: TestRepo,
    victim: tempfile::TempDir,
    home: tempfile::TempDir,
    remote: PathBuf,
    script: PathBuf,
}

impl Row2 {
    fn new() -> Row2 {
        let repo = TestRepo::new();
        let victim = victim();
        let home = victim_home();
        let remote = victim.path().join("remote.git");
        assert!(git(victim.path(), &["init", "-q", "--bare", "remote.git"]));
        assert!(git(
            repo.path(),
            &["commit", "-q", "--allow-empty", "-m", "x"]
        ));
        let remote_s = remote.display().to_string();
        assert!(git(repo.path(), &["remote", "add", "origin", &remote_s]));
        assert!(git(repo.path(), &["push", "-q", "origin", "HEAD:main"]));
        let script = victim.path().join("payload.sh");
        std::fs::write(
            &script,
            format!("rm -rf {}\n", victim.path().join("keep.txt").display()),
        )
        .unwrap();
        Row2 {
            repo,
            victim,
            home,
            remote,
            script,
        }
    }

    fn commands(&self) -> Vec<String> {
        row2_commands(&self.victim.path().join("keep.txt"), &self.script)
    }

    fn assert_untouched(&self) {
        assert!(
            self.victim.path().join("keep.txt").exists(),
            "victim deleted"
        );
        assert!(self.home.path().join("keep.txt").exists(), "home deleted");
        let remote = self.remote.display().to_string();
        assert!(
            git(
                self.repo.path(),
                &["--git-dir", &remote, "rev-parse", "main"]
            ),
            "the remote's main branch was deleted"
        );
    }
}

/// A fake `$HOME` with a file in it (for `x=~; rm -rf $x`).
fn victim_home() -> tempfile::TempDir {
    let h = victim();
    std::fs::create_dir_all(h.path().join(".openinterpreter")).unwrap();
    h
}

#[test]
fn dangerous_spellings_are_refused_where_nobody_can_ask() {
    for flags in [
        &["--sandbox", "danger-full-access"][..],
        &["--dangerously-bypass-approvals-and-sandbox"][..],
    ] {
        let r = Row2::new();
        let commands = r.commands();
        let mock = MockServer::start_blocking(shell_script(&commands)).unwrap();
        let home = r.home.path().display().to_string();
        let out = r.repo.run_with_env(
            &exec_args(&mock, flags),
            "run them",
            &[("HOME", home.as_str())],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (i, c) in commands.iter().enumerate() {
            let o = tool_output(&mock, &format!("c{i}"));
            assert!(o.contains("Refused"), "`{c}` ran ({flags:?}): {o}");
        }
        r.assert_untouched();
    }
}

#[test]
fn acp_full_access_asks_before_each_dangerous_spelling() {
    let r = Row2::new();
    let mut commands = r.commands();
    // The control: an ordinary command runs without asking in full access.
    commands.push("echo ordinary".into());
    let mock = MockServer::start_blocking(shell_script(&commands)).unwrap();
    let home = r.home.path().display().to_string();
    let mut agent = acp::Agent::start(
        &r.repo,
        &mock,
        &[
            "-c",
            "sandbox_mode=\"danger-full-access\"",
            "-c",
            "harness=\"native\"",
        ],
        &[("HOME", home.as_str())],
    );
    agent.initialize();
    let cwd = std::fs::canonicalize(r.repo.path()).unwrap();
    let session = agent.new_session(&cwd, json!([]));
    agent.prompt(&session, "run them");
    let asked: Vec<String> = agent
        .permissions
        .iter()
        .map(|p| p["toolCall"].to_string())
        .collect();
    assert_eq!(asked.len(), commands.len() - 1, "{asked:#?}");
    assert!(tool_output(&mock, &format!("c{}", commands.len() - 1)).contains("ordinary"));
    r.assert_untouched();
    agent.exit();
}

const KEY: &str = "sk-HOSTILE-Key1234567890abcdefXYZ";
const OTHER_KEY: &str = "sk-other-provider-0987654321qwerty";

/// Every form of `key` that must appear nowhere: as is, reversed, hex, and base64 (standard
/// and URL-safe) at each alignment in a longer stream.
fn forms(key: &str) -> Vec<String> {
    let mut out = vec![
        key.to_string(),
        key.chars().rev().collect(),
        key.bytes().map(|b| format!("{b:02x}")).collect(),
        key.bytes().map(|b| format!("{b:02X}")).collect(),
    ];
    for engine in [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::URL_SAFE,
    ] {
        for offset in 0..3 {
            let mut bytes = vec![b'='; offset];
            bytes.extend_from_slice(key.as_bytes());
            let encoded = engine.encode(&bytes);
            let first = (8 * offset).div_ceil(6);
            let last = 8 * bytes.len() / 6;
            out.push(encoded[first..last].to_string());
        }
    }
    out
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Reads the agent's memory (the parent of the keeper, `$PPID`) and prints the key if found.
const MEM_SCAN: &str = r#"
import os, re, sys, base64
pid = int(open(f"/proc/{os.getppid()}/stat").read().rsplit(")", 1)[1].split()[1])
found = set()
for target in (pid, os.getppid()):
    try:
        maps = open(f"/proc/{target}/maps").read().splitlines()
        mem = open(f"/proc/{target}/mem", "rb")
    except OSError as e:
        print("no access:", e.__class__.__name__)
        continue
    for line in maps:
        addr, perms = line.split()[:2]
        if "r" not in perms:
            continue
        lo, hi = (int(x, 16) for x in addr.split("-"))
        try:
            mem.seek(lo)
            chunk = mem.read(min(hi - lo, 64 << 20))
        except OSError:
            continue
        for m in re.finditer(rb"sk-(HOSTILE|other)-[A-Za-z0-9-]+", chunk):
            found.add(m.group(0))
for k in found:
    print("found", base64.b64encode(k).decode())
print("scanned")
"#;

#[test]
fn keys_stay_out_of_reach_of_commands() {
    for mode in ["workspace-write", "danger-full-access"] {
        let repo = TestRepo::new();
        repo.write("scan.py", MEM_SCAN);
        let config = repo.home.path().join("config.toml");
        std::fs::write(
            &config,
            format!("[model_providers.other]\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key = \"{OTHER_KEY}\"\n"),
        )
        .unwrap();
        let cfg = config.display();
        let agent = "$(awk '{print $4}' /proc/$PPID/stat)";
        let mut commands = vec![
            "echo \"env: $MOCK_API_KEY $MOCK_KEY\"; env | grep -c KEY; true".to_string(),
            format!(
                "for p in $PPID {agent}; do base64 /proc/$p/environ; rev /proc/$p/environ; xxd -p /proc/$p/environ; tr '\\0' '\\n' < /proc/$p/environ | grep -a KEY; done 2>&1; true"
            ),
            format!("cat {cfg}; base64 {cfg}; base64 -w0 {cfg}; rev {cfg}; xxd -p {cfg}; true"),
            format!("head -c 200 /proc/{agent}/mem | base64; true"),
        ];
        // Reading another process's memory is what Landlock forbids; without the sandbox a
        // command of the same (here: root) user can read it, as docs/sandbox.md says.
        if mode == "workspace-write" {
            commands.push("python3 scan.py 2>&1; true".into());
        }
        let mock = MockServer::start_blocking(shell_script(&commands)).unwrap();
        let log = repo.home.path().join("agent.log");
        let log_s = log.display().to_string();
        let mut args = exec_args(&mock, &["--sandbox", mode]);
        args.extend([
            "-c".into(),
            "model_providers.mock.env_key=\"MOCK_API_KEY\"".into(),
        ]);
        let env = [
            ("MOCK_API_KEY", KEY),
            ("INTERPRETER_LOG", "debug"),
            ("INTERPRETER_LOG_FILE", log_s.as_str()),
        ];
        let out = repo.run_with_env(&args, "find the key", &env);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The commands ran and printed what they could reach.
        let outputs: Vec<String> = (0..commands.len())
            .map(|i| tool_output(&mock, &format!("c{i}")))
            .collect();
        assert!(outputs[0].contains("env:  \n"), "{}", outputs[0]);
        assert!(
            outputs[2].contains("[model_providers.other]"),
            "{}",
            outputs[2]
        );
        if let Some(scan) = outputs.get(4) {
            assert!(
                scan.contains("no access") || !scan.contains("found"),
                "{scan}"
            );
        }
        let mut places: Vec<(String, String)> = vec![
            ("stdout".into(), String::from_utf8_lossy(&out.stdout).into()),
            ("stderr".into(), String::from_utf8_lossy(&out.stderr).into()),
            (
                "log".into(),
                std::fs::read_to_string(&log).unwrap_or_default(),
            ),
        ];
        for f in files_under(&repo.home.path().join("sessions")) {
            places.push((
                f.display().to_string(),
                std::fs::read_to_string(&f).unwrap(),
            ));
        }
        for r in mock.requests() {
            places.push((format!("request {}", r.path), r.body.to_string()));
            for (name, value) in &r.headers {
                if name != "authorization" {
                    places.push((format!("header {name}"), value.clone()));
                }
            }
        }
        for (place, text) in &places {
            let flat = text.replace("\\n", "").replace('\n', "");
            for key in [KEY, OTHER_KEY] {
                for f in forms(key) {
                    assert!(
                        !flat.contains(&f),
                        "{mode}: a form of a key ({f}) is in {place}"
                    );
                }
            }
        }
    }
}

/// `interpreter exec` started in the background (the caller ends it).
fn spawn_exec(repo: &TestRepo, args: &[String]) -> Child {
    let mut child = Command::new(mock_llm::e2e::interpreter_bin())
        .args(args)
        .current_dir(repo.path())
        .env("OPENINTERPRETER_HOME", repo.home.path())
        .env_remove("CODEX_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(repo.home.path().join("stderr.txt")).unwrap())
        .spawn()
        .expect("spawn interpreter");
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"go");
    child
}

/// 300 children each under `set -m`, `setpgid` and `setsid` (issue 12, row 4).
fn escapees(marker: &str) -> String {
    format!(
        "for i in $(seq 1 300); do (set -m; sleep {marker} &); setsid sleep {marker} & perl -e 'setpgrp(0,0); exec \"sleep\", \"{marker}\"' & done"
    )
}

#[test]
fn escaped_processes_are_counted_and_none_outlives_its_command() {
    let repo = TestRepo::new();
    let over = "301.11";
    let under = "302.22";
    let commands = [
        format!("{}; wait; echo never", escapees(over)),
        format!("{}; sleep 3; echo started", escapees(under)),
    ];
    let mock = MockServer::start_blocking(shell_script(&commands)).unwrap();
    let out = repo.run(
        &exec_args(&mock, &["-c", "max_processes=200"]),
        "spawn them",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c0 = tool_output(&mock, "c0");
    assert!(c0.contains("over the limit of 200 (max_processes)"), "{c0}");
    assert!(!c0.contains("never"));
    // Under the limit the command ends by itself; what it left running ends with it.
    let c1 = tool_output(&mock, "c1");
    assert!(
        c1.contains("over the limit") || c1.contains("started"),
        "{c1}"
    );
    assert_eq!(
        alive_with(over),
        Vec::<u32>::new(),
        "survivors of the killed command"
    );
    assert_eq!(
        alive_with(under),
        Vec::<u32>::new(),
        "survivors of the ended command"
    );
}

#[test]
fn nothing_survives_the_agent() {
    for (signal, marker) in [(libc::SIGTERM, "303.33"), (libc::SIGKILL, "304.44")] {
        let repo = TestRepo::new();
        let command = format!(
            "setsid sleep {marker} & (set -m; sleep {marker} &); nohup sleep {marker} >/dev/null 2>&1 & sleep {marker}"
        );
        let mock = MockServer::start_blocking(shell_script(&[command])).unwrap();
        let mut child = spawn_exec(&repo, &exec_args(&mock, &[]));
        let stderr = repo.home.path().join("stderr.txt");
        let what = format!("the command's processes start ({})", stderr.display());
        wait_until(&what, Duration::from_secs(30), || {
            alive_with(marker).len() >= 4
        });
        // SAFETY: kill has no memory effects.
        unsafe {
            libc::kill(child.id() as i32, signal);
        }
        let _ = child.wait();
        wait_until("every process ends", Duration::from_secs(5), || {
            alive_with(marker).is_empty()
        });
    }
    // ACP: the client closes stdin while a command runs.
    let repo = TestRepo::new();
    let marker = "305.55";
    let command = format!("setsid sleep {marker} & (set -m; sleep {marker} &); sleep {marker}");
    let mock = MockServer::start_blocking(shell_script(&[command])).unwrap();
    let mut agent = acp::Agent::start(&repo, &mock, &["-c", "harness=\"native\""], &[]);
    agent.answer = "allow_once";
    agent.initialize();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let session = agent.new_session(&cwd, json!([]));
    agent.send(
        json!({"jsonrpc": "2.0", "id": 999, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}}),
    );
    let start = Instant::now();
    while alive_with(marker).len() < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no command\n{}",
            agent.log()
        );
        agent.pump(Duration::from_millis(100));
    }
    // The client goes away: stdin closes, the agent exits.
    drop(agent.stdin.take());
    let _ = agent.child.wait();
    wait_until("every process ends", Duration::from_secs(5), || {
        alive_with(marker).is_empty()
    });
}

#[test]
fn the_model_hears_exactly_how_much_output_was_dropped() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(shell_script(&["yes | head -c 2G".to_string()])).unwrap();
    let start = Instant::now();
    let out = repo.run(&exec_args(&mock, &[]), "print a lot");
    eprintln!(
        "2 GiB of output took {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o = tool_output(&mock, "c0");
    let body = o.split_once("Output:\n").expect("an Output section").1;
    assert!(
        body.starts_with("Total output lines: 1073741824\nTotal output bytes: 2147483648\n\n"),
        "{}",
        &body[..body.len().min(300)]
    );
    let shown = body.split_once("\n\n").unwrap().1;
    let (head, rest) = shown.split_once('…').unwrap();
    let (counts, tail) = rest.split_once('…').unwrap();
    let bytes: u64 = counts.split(' ').next().unwrap().parse().unwrap();
    eprintln!(
        "the model was told: {:?} … {counts} …",
        body.split("\n\n").next().unwrap_or_default()
    );
    assert_eq!(head.len() as u64 + bytes + tail.len() as u64, 2 << 30);
    assert_eq!(
        counts,
        format!("{bytes} bytes ({} lines) truncated", bytes / 2)
    );
    assert!(o.len() < 50_000, "{} bytes", o.len());
}

#[test]
fn mcp_servers_do_not_inherit_key_variables() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    let env_file = repo.home.path().join("mcp-env.txt");
    let mut agent = acp::Agent::start(
        &repo,
        &mock,
        &["-c", "model_providers.mock.env_key=\"MOCK_API_KEY\""],
        &[("MOCK_API_KEY", KEY), ("CUSTOM_SERVICE_API_KEY", OTHER_KEY)],
    );
    agent.initialize();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let server = json!({
        "name": "envdump",
        "command": "/bin/sh",
        "args": ["-c", format!("env > {}; exec {}", env_file.display(), env!("CARGO_BIN_EXE_mcp-echo"))],
        "env": [{"name": "EXPLICIT_SETTING", "value": "kept"}],
    });
    let session = agent.new_session(&cwd, json!([server]));
    agent.prompt(&session, "hi");
    let env = std::fs::read_to_string(&env_file).expect("the MCP server started");
    assert!(env.contains("EXPLICIT_SETTING=kept"), "{env}");
    for (name, key) in [("MOCK_API_KEY", KEY), ("CUSTOM_SERVICE_API_KEY", OTHER_KEY)] {
        assert!(
            !env.contains(name) && !env.contains(key),
            "{name} reached the MCP server"
        );
    }
    agent.exit();
}

#[test]
fn the_lsp_read_only_session_runs_no_command_that_writes() {
    use lsp_client::{LspClient, TIMEOUT, action, capabilities, file_uri, mock_options};

    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.write("in.txt", "a\na\nb\n");
    assert!(git(
        repo.path(),
        &["commit", "-q", "--allow-empty", "-m", "x"]
    ));
    let commands = [
        "uniq in.txt out.txt".to_string(),
        "tree -o tree.txt".to_string(),
        "git branch made-by-the-agent".to_string(),
        "sort -o sorted.txt in.txt".to_string(),
    ];
    let mock = MockServer::start_blocking(shell_script(&commands)).unwrap();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let mut client = LspClient::spawn(&root, repo.home.path(), &[]);
    client.initialize(&root, capabilities(false, false), mock_options(&mock.url()));
    let uri = file_uri(&root.join("calc.py"));
    client.did_open(&uri, "python", 1, "def add(a, b):\n    return a - b\n");
    let resp = client.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}},
               "context": {"diagnostics": []}}),
    );
    let command = action(&resp, "Explain with interpreter")["command"].clone();
    client.call(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    let deadline = Instant::now() + TIMEOUT;
    while mock.model_requests().len() < commands.len() + 1 {
        assert!(Instant::now() < deadline, "the turn did not finish");
        std::thread::sleep(Duration::from_millis(50));
    }
    for f in ["out.txt", "tree.txt", "sorted.txt"] {
        assert!(!repo.path().join(f).exists(), "{f} was written");
    }
    assert!(!git(
        repo.path(),
        &["rev-parse", "--verify", "made-by-the-agent"]
    ));
    for i in 0..commands.len() {
        let o: Value = json!(tool_output(&mock, &format!("c{i}")));
        assert!(!o.to_string().contains("Exit code: 0"), "{o}");
    }
    client.shutdown();
}

/// A `gh` in a folder of its own that logs each call's arguments (one per line, then `--`)
/// to `log`, and answers `issue view` like gh. Returns the PATH that finds it first.
#[cfg(unix)]
fn fake_gh(bin: &Path, log: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{}'; done\necho -- >> '{}'\n\
         case \"$1 $2\" in 'issue view') echo '{{\"number\":3,\"title\":\"add is wrong\",\"state\":\"OPEN\"}}';; esac\n",
        log.display(),
        log.display()
    );
    let gh = bin.join("gh");
    std::fs::write(&gh, script).unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn close_issue_call(id: &str) -> Reply {
    Reply::tool_call(
        id,
        "github_close_issue",
        json!({"number": 3, "acceptance_criteria": ["add adds"], "comment": "Fixed.",
               "evidence": {"files_changed": ["calc.py"], "tests_run": ["pytest"], "final_status": "fixed"}}),
    )
}

#[cfg(unix)]
#[test]
fn deepseek_tui_github_writes_ask_in_acp_and_post_what_was_approved() {
    let repo = TestRepo::new();
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("gh.log");
    let path = fake_gh(bin.path(), &log);
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("g1", "github_issue_context", json!({"number": 3})),
        Reply::tool_call(
            "g2",
            "github_comment",
            json!({"target": "pr", "number": 4, "body": "Blocked on CI.", "evidence": {}, "dry_run": true}),
        ),
        Reply::tool_call(
            "g3",
            "github_comment",
            json!({"target": "issue", "number": 3, "body": "It's fixed; see $(HEAD).",
                   "evidence": {"tests_run": ["pytest"]}}),
        ),
        close_issue_call("g4"),
        Reply::text("done"),
    ]))
    .unwrap();
    let home = repo.home.path().display().to_string();
    let mut agent = acp::Agent::start(
        &repo,
        &mock,
        &[
            "-c",
            "sandbox_mode=\"danger-full-access\"",
            "-c",
            "harness=\"deepseek-tui\"",
        ],
        &[("HOME", home.as_str()), ("PATH", path.as_str())],
    );
    agent.answer = "allow_once";
    agent.initialize();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let session = agent.new_session(&cwd, json!([]));
    agent.prompt(&session, "close issue 3");
    // Reading runs without a question in full access; each write asks, even there.
    let asked: Vec<String> = agent
        .permissions
        .iter()
        .map(|p| {
            p["toolCall"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(asked.len(), 2, "{asked:#?}");
    assert!(tool_output(&mock, "g1").contains("add is wrong"));
    let dry = tool_output(&mock, "g2");
    assert!(dry.starts_with("Dry run: nothing was posted."), "{dry}");
    let commented = tool_output(&mock, "g3");
    assert!(
        commented.starts_with("Commented on issue #3."),
        "{commented}"
    );
    assert!(tool_output(&mock, "g4").starts_with("Closed issue #3."));
    let calls = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.split("--\n").filter(|c| !c.is_empty()).collect();
    assert_eq!(calls.len(), 3, "{calls:#?}");
    assert!(calls[0].starts_with("issue\nview\n3\n"), "{}", calls[0]);
    // The body reaches gh as one argument, the shell's `$(…)` unexpanded.
    assert_eq!(
        calls[1],
        "issue\ncomment\n3\n--body\nIt's fixed; see $(HEAD).\n\n**Evidence**\n- tests run: pytest\n"
    );
    assert!(
        calls[2].starts_with(
            "issue\nclose\n3\n--comment\nFixed.\n\n**Acceptance criteria**\n- add adds\n"
        ),
        "{}",
        calls[2]
    );
    agent.exit();
}

#[cfg(unix)]
#[test]
fn deepseek_tui_github_writes_are_refused_where_nobody_can_ask_and_on_a_dirty_tree() {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a + b\n");
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("gh.log");
    let path = fake_gh(bin.path(), &log);
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "w1",
            "github_comment",
            json!({"target": "issue", "number": 3, "body": "Fixed.", "evidence": {}}),
        ),
        close_issue_call("w2"),
        Reply::text("done"),
    ]))
    .unwrap();
    let mut args = mock_llm::e2e::exec_args(
        &mock.url(),
        &[
            "--harness",
            "deepseek-tui",
            "--dangerously-bypass-approvals-and-sandbox",
        ],
    );
    args.push("close issue 3".into());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(
        &args,
        "",
        &[("HOME", home.as_str()), ("PATH", path.as_str())],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let refused = tool_output(&mock, "w1");
    assert!(refused.contains("acts on GitHub in your name"), "{refused}");
    let dirty = tool_output(&mock, "w2");
    assert!(
        dirty.contains("uncommitted changes (calc.py)") && dirty.contains("allow_dirty"),
        "{dirty}"
    );
    assert!(!log.exists(), "gh ran: {:?}", std::fs::read_to_string(&log));
}
