//! `interpreter` (the interactive terminal session) end to end: the real binary in a real
//! terminal (tmux, 120×40), driven with `send-keys` and read with `capture-pane`, in a temp
//! git repository against the mock model. Skipped, with a message, where tmux is missing
//! (`.ci/run` installs it, so CI never skips).

use mock_llm::e2e::{TestRepo, interpreter_bin};
use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const PATCH: &str = "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n";

/// A tmux server of its own (its own socket) with one 120×40 pane running bash.
struct Tmux {
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmux {
    /// None (after saying why) when tmux is not installed.
    fn start(repo: &TestRepo, env: &[(&str, &str)]) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            assert!(
                std::env::var_os("CI").is_none(),
                "tmux is missing in CI: scripts/test.sh installs it (Debian package tmux)"
            );
            eprintln!(
                "SKIPPED: tmux is not installed (apt-get install tmux); the terminal UI test needs it"
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let socket = dir.path().join("sock");
        let mut cmd = Command::new("tmux");
        cmd.arg("-S")
            .arg(&socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "120",
                "-y",
                "40",
                "-s",
                "t",
                "-c",
            ])
            .arg(repo.path())
            .arg("bash --norc --noprofile")
            .env("OPENINTERPRETER_HOME", repo.home.path())
            .env("PS1", "$ ")
            .env("TERM", "xterm-256color")
            .env_remove("NO_COLOR")
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("OPENINTERPRETER_MODEL")
            .env_remove("OPENINTERPRETER_PROVIDER")
            .env_remove("OPENINTERPRETER_HARNESS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let ok = cmd.status().map(|s| s.success()).unwrap_or(false);
        assert!(ok, "tmux new-session failed");
        let t = Tmux { socket, _dir: dir };
        t.wait_for("the shell", Duration::from_secs(10), |s| {
            !s.trim().is_empty()
        });
        t.line("export PS1='$ '; clear");
        t.wait_for("the shell prompt", Duration::from_secs(10), |s| {
            s.trim() == "$"
        });
        Some(t)
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `text` literally.
    fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Presses keys by tmux name (`Enter`, `C-c`, `Escape`).
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend(keys);
        self.tmux(&args);
    }

    /// Types a line and presses Enter.
    fn line(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Enter"]);
    }

    /// The scrollback and the screen.
    fn history(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-S", "-", "-t", "t"])
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    /// The screen with its colours and attributes as escape sequences.
    fn screen_ansi(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e", "-t", "t"])
    }

    fn display(&self, format: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", "t", format])
            .trim()
            .to_string()
    }

    /// Waits until the screen satisfies `ok`; the screen then.
    fn wait_for(&self, what: &str, limit: Duration, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            if start.elapsed() > limit {
                panic!("timed out waiting for {what}; the screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .status();
    }
}

/// No turn runs: the indicator is gone and the hint (the status line, drawn last in a frame)
/// is the idle one, so a frame half drawn by the terminal never reads as idle.
fn idle(screen: &str) -> bool {
    !screen.contains("Working") && screen.contains("/ commands · @ files")
}

fn mock_config(repo: &TestRepo, mock: &MockServer) {
    mock_config_on(repo, mock, "chat");
}

/// A mock serving `replies` on `wire` and the terminal session in tmux, at its composer;
/// None where tmux is missing (see [`Tmux::start`]).
fn session_at_composer(repo: &TestRepo, replies: Value, wire: &str) -> Option<(MockServer, Tmux)> {
    let script = Script::from_json(&json!({ "replies": replies }).to_string()).expect("script");
    let mock = MockServer::start_blocking(script).expect("mock");
    mock_config_on(repo, &mock, wire);
    let t = Tmux::start(repo, &[])?;
    t.line(&format!("clear; {}", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    Some((mock, t))
}

fn mock_config_on(repo: &TestRepo, mock: &MockServer, wire: &str) {
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}\"\nwire_api = \"{wire}\"\nretry_base_delay_ms = 10\n",
            mock.url()
        ),
    )
    .expect("config.toml");
}

/// `interpreter acp` asked to `session/load` `id`: every line it wrote up to the answer.
fn acp_load(repo: &TestRepo, id: &str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(interpreter_bin())
        .arg("acp")
        .current_dir(repo.path())
        .env("OPENINTERPRETER_HOME", repo.home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn interpreter acp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut ask = |id: u32, method: &str, params: Value| -> Vec<String> {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{msg}").expect("write to acp");
        let mut seen = Vec::new();
        for line in lines.by_ref() {
            let line = line.expect("read from acp");
            let answered = serde_json::from_str::<Value>(&line)
                .is_ok_and(|v| v["id"] == json!(id) && v.get("method").is_none());
            seen.push(line);
            if answered {
                return seen;
            }
        }
        panic!("acp closed before answering {method}: {seen:?}");
    };
    ask(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let cwd = repo.path().display().to_string();
    let seen = ask(
        2,
        "session/load",
        json!({"sessionId": id, "cwd": cwd, "mcpServers": []}),
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.last().is_some_and(|l| l.contains("\"result\"")),
        "session/load failed: {seen:?}"
    );
    seen.join("\n")
}

fn bin() -> String {
    interpreter_bin().display().to_string()
}

fn tool(id: &str, name: &str, args: Value) -> Value {
    json!({"events": [{"tool_call": {"id": id, "name": name, "arguments": args}}]})
}

fn text(t: &str) -> Value {
    json!({"events": [{"text": t}]})
}

fn main_script() -> Script {
    let replies = vec![
        json!({"events": [
            {"reasoning": "The user greets me."},
            {"text": "Hello from the "}, {"delay_ms": 150},
            {"text": "**mock** model.\n\n```sh\necho streamed\n"}, {"delay_ms": 150},
            {"text": "```\n\nAnything else?"}
        ]}),
        tool("c1", "shell", json!({"command": "touch approved.txt"})),
        text("Made approved.txt."),
        tool("c2", "shell", json!({"command": "touch refused.txt"})),
        text("Skipped refused.txt."),
        tool("c3", "apply_patch", json!({"input": PATCH})),
        text("Fixed add."),
        text("Now with Kimi Code tools."),
        text("Answered from exec."),
        text("Continued the old session."),
    ];
    Script::from_json(&json!({"replies": replies}).to_string()).expect("script")
}

/// The colours a `capture-pane -e` screen uses: tmux writes every colour as `38;5;N` /
/// `48;5;N` (and true colour as `38;2;…`, counted as 256 here).
fn colour_indices(ansi: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for prefix in ["38;5;", "48;5;"] {
        for (i, _) in ansi.match_indices(prefix) {
            let digits: String = ansi[i + prefix.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            out.extend(digits.parse::<u32>().ok());
        }
    }
    if ansi.contains("38;2;") || ansi.contains("48;2;") {
        out.push(256);
    }
    out
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn wait_requests(mock: &MockServer, n: usize) {
    let start = Instant::now();
    while mock.model_requests().len() < n {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the mock got {} requests, not {n}",
            mock.model_requests().len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `stty -a` in the pane after the TUI left: the terminal is cooked again.
fn assert_terminal_restored(t: &Tmux, marker: &str) {
    t.line(&format!("stty -a; echo {marker}"));
    let s = t.wait_for("stty output", Duration::from_secs(10), |s| {
        s.lines().any(|l| l.trim() == marker)
    });
    let words: Vec<&str> = s.split_whitespace().collect();
    for flag in ["icanon", "echo", "isig", "icrnl"] {
        assert!(words.contains(&flag), "`{flag}` not set after exit:\n{s}");
        assert!(
            !words.contains(&format!("-{flag}").as_str()),
            "-{flag} after exit:\n{s}"
        );
    }
    assert_eq!(
        t.display("#{alternate_on}"),
        "0",
        "the alternate screen was left on"
    );
    assert_eq!(
        t.display("#{cursor_flag}"),
        "1",
        "the cursor was left hidden"
    );
    assert_eq!(t.display("#{pane_in_mode}"), "0");
}

#[test]
fn a_session_in_tmux_streams_asks_edits_switches_quits_and_resumes() {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    let mock = MockServer::start_blocking(main_script()).expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {}", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything") && s.contains("mock-model")
    });

    // A prompt gets a streamed answer, rendered as Markdown.
    t.line("hello");
    let s = t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("Anything else?")
    });
    assert!(s.contains("› hello"), "{s}");
    assert!(
        s.contains("• Hello from the mock model."),
        "bold markers are not shown:\n{s}"
    );
    assert!(s.contains("```sh") && s.contains("echo streamed"), "{s}");
    let colours = colour_indices(&t.screen_ansi());
    assert!(!colours.is_empty(), "no colour at all");
    assert!(
        colours.iter().all(|c| *c < 16),
        "only the 16 basic colours are used: {colours:?}"
    );

    // A command that needs approval runs after `y`...
    t.line("make a file");
    let s = t.wait_for("the approval prompt", Duration::from_secs(10), |s| {
        s.contains("Run this command?")
    });
    assert!(
        s.contains("$ touch approved.txt") && s.contains("y yes"),
        "{s}"
    );
    assert!(
        !repo.path().join("approved.txt").exists(),
        "it ran before it was approved"
    );
    t.keys(&["y"]);
    t.wait_for("the command's cell", Duration::from_secs(10), |s| {
        s.contains("Made approved.txt.")
    });
    assert!(repo.path().join("approved.txt").exists());
    // ...and not after `n`.
    t.line("make another");
    t.wait_for("the approval prompt", Duration::from_secs(10), |s| {
        s.contains("$ touch refused.txt")
    });
    t.keys(&["n"]);
    let s = t.wait_for("the refusal", Duration::from_secs(10), |s| {
        s.contains("Skipped refused.txt.")
    });
    assert!(s.contains("declined"), "{s}");
    assert!(
        !repo.path().join("refused.txt").exists(),
        "it ran though it was refused"
    );

    // An edit shows its diff and changes the file.
    t.line("fix calc.py");
    let s = t.wait_for("the edit", Duration::from_secs(10), |s| {
        s.contains("Fixed add.")
    });
    assert!(s.contains("Edited calc.py (+1 -1)"), "{s}");
    assert!(
        s.contains("-    return a - b") && s.contains("+    return a + b"),
        "{s}"
    );
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");
    if let Some(dir) = std::env::var_os("TUI_SCREENSHOT_DIR") {
        std::fs::write(Path::new(&dir).join("tui.ansi"), t.screen_ansi()).expect("screenshot");
    }

    // `/harness kimi-code` switches the harness: the next request carries its tools.
    t.line("/harness kimi-code");
    t.wait_for("the switch", Duration::from_secs(10), |s| {
        s.contains("harness: kimi-code")
    });
    t.line("go on");
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("Now with Kimi Code tools.")
    });
    let reqs = mock.model_requests();
    let before = tool_names(&reqs[6].body);
    let after = tool_names(&reqs[7].body);
    assert!(before.iter().any(|n| n == "exec_command"), "{before:?}");
    for name in ["Bash", "Read", "Edit", "Write"] {
        assert!(after.iter().any(|n| n == name), "no {name} in {after:?}");
    }

    // `/quit` leaves the terminal as it was.
    t.line("/quit");
    let s = t.wait_for("the exit", Duration::from_secs(10), |s| {
        s.contains("interpreter resume")
    });
    assert!(
        !s.contains("Ask anything"),
        "the composer was left on the screen:\n{s}"
    );
    assert_terminal_restored(&t, "RESTORED-1");

    // The same store as exec: the terminal's session continues there, and back.
    let id = s
        .split("interpreter resume ")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .expect("the session id")
        .trim()
        .to_string();
    let out = repo.run(
        &[
            "exec".into(),
            "resume".into(),
            id.clone(),
            "from exec".into(),
        ],
        "",
    );
    assert!(
        out.status.success(),
        "exec resume: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Answered from exec."));
    let exec_req = mock.model_requests()[8].body.to_string();
    assert!(
        exec_req.contains("fix calc.py"),
        "exec did not get the terminal's history"
    );

    // ... and loads in an ACP client (Zed's agent panel) with the whole transcript replayed.
    let replay = acp_load(&repo, &id);
    assert!(
        replay.contains("Fixed add.") && replay.contains("Answered from exec."),
        "session/load did not replay the terminal's session:\n{replay}"
    );

    // `interpreter resume --last` shows the earlier transcript and continues it (without
    // colour: NO_COLOR is honoured).
    t.line(&format!("clear; NO_COLOR=1 {} resume --last", bin()));
    let s = t.wait_for("the replayed transcript", Duration::from_secs(10), |s| {
        s.contains("end of the earlier conversation") && s.contains("Ask anything")
    });
    let all = t.history();
    let resumed = &all[all
        .rfind("resumed")
        .unwrap_or_else(|| panic!("no resume banner:\n{all}"))..];
    assert!(
        resumed.contains("› make a file") && resumed.contains("Fixed add."),
        "{s}"
    );
    assert!(
        resumed.contains("› from exec") && resumed.contains("Answered from exec."),
        "{s}"
    );
    let ansi = t.screen_ansi();
    assert!(
        colour_indices(&ansi).is_empty(),
        "colours with NO_COLOR set:\n{ansi}"
    );
    t.line("and now?");
    t.wait_for("the continued answer", Duration::from_secs(10), |s| {
        s.contains("Continued the old session.")
    });
    wait_requests(&mock, 10);
    let last = mock.model_requests()[9].body.to_string();
    assert!(
        last.contains("make a file") && last.contains("Fixed add."),
        "the history was not sent: {last}"
    );
    t.keys(&["C-d"]);
    t.wait_for("the exit", Duration::from_secs(10), |s| {
        s.contains("interpreter resume")
    });
    assert_terminal_restored(&t, "RESTORED-2");
}

#[test]
fn ctrl_c_ends_a_running_command_within_a_second() {
    let repo = TestRepo::new();
    let pidfile = repo.path().join("sleeper.pid");
    let script = json!({"replies": [
        tool("c1", "shell", json!({"command": format!("echo $$ > {}; exec sleep 30", pidfile.display())})),
        text("Still here."),
    ]});
    let mock = MockServer::start_blocking(Script::from_json(&script.to_string()).expect("script"))
        .expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {} -s danger-full-access", bin()));
    // The status line may show the mode before the composer takes keys: wait for both.
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("full-access") && s.contains("Ask anything")
    });
    t.line("sleep a while");
    let start = Instant::now();
    while !pidfile.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let sleeper: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    t.wait_for("the running cell", Duration::from_secs(10), |s| {
        s.contains("Running echo")
    });
    let pressed = Instant::now();
    t.keys(&["C-c"]);
    let s = t.wait_for("the interruption", Duration::from_secs(5), |s| {
        s.contains("interrupted")
    });
    let took = pressed.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "the turn took {took:?} to end:\n{s}"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        gone(sleeper),
        "sleep ({sleeper}) outlived the interrupted turn"
    );
    // The session goes on: the next prompt is answered.
    t.line("still there?");
    // The turn has ended when the working line is gone: a Ctrl+C before that interrupts.
    t.wait_for("the next answer", Duration::from_secs(10), |s| {
        s.contains("Still here.") && idle(s)
    });
    // One Ctrl+C on an empty prompt only arms; the second quits.
    t.keys(&["C-c"]);
    t.wait_for("the hint", Duration::from_secs(5), |s| {
        s.contains("Ctrl+C again to quit")
    });
    t.keys(&["C-c"]);
    t.wait_for("the exit", Duration::from_secs(10), |s| {
        s.contains("interpreter resume")
    });
    assert_terminal_restored(&t, "RESTORED");
}

fn gone(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains(") Z "))
        .unwrap_or(true)
}

#[test]
fn sigterm_restores_the_terminal() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([])).expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!(
        "clear; {} & sleep 1; kill -TERM %1; wait; echo EXITED $?",
        bin()
    ));
    let s = t.wait_for("the exit", Duration::from_secs(10), |s| {
        s.contains("EXITED")
    });
    assert!(
        !s.contains("Ask anything"),
        "the viewport was left behind:\n{s}"
    );
    assert_terminal_restored(&t, "RESTORED");
}

#[test]
fn without_a_terminal_it_points_to_exec_also_as_i() {
    let repo = TestRepo::new();
    let out = repo.run(&[], "");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interpreter exec"), "{err}");
    assert!(out.stdout.is_empty());
    // Installed as `i` it is the same program.
    let dir = tempfile::tempdir().unwrap();
    let alias = dir.path().join("i");
    std::os::unix::fs::symlink(interpreter_bin(), &alias).unwrap();
    let out = Command::new(&alias)
        .arg("resume")
        .arg("--last")
        .current_dir(repo.path())
        .env("OPENINTERPRETER_HOME", repo.home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interpreter exec"));
    let help = Command::new(&alias).arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("resume"));
}

/// Issue 22, item 7: resizing the terminal over and over (narrower, wider, down to a row or
/// a column) while a 100 000-line answer streams, and again once it has ended, neither panics
/// nor loses the turn; the session answers the next prompt and the terminal is restored on
/// quit. (Before the fix it died with exit 101 in 7 runs of 7: a narrowing resize followed by
/// a frame that wrote no history indexed outside ratatui's buffer.)
#[test]
fn a_resize_storm_while_a_long_answer_streams() {
    const CHUNKS: usize = 400;
    const LINES_PER_CHUNK: usize = 250;
    const RESIZES: usize = 300;
    let repo = TestRepo::new();
    let mut events = Vec::new();
    for c in 0..CHUNKS {
        let mut chunk = String::new();
        for l in 0..LINES_PER_CHUNK {
            chunk.push_str(&format!(
                "line {} of the long answer\n",
                c * LINES_PER_CHUNK + l
            ));
        }
        // A blank line ends a block, so what streamed goes to the scrollback as it comes.
        chunk.push('\n');
        events.push(json!({"text": chunk}));
        events.push(json!({"delay_ms": 20}));
    }
    events.push(json!({"text": "END-OF-THE-LONG-ANSWER"}));
    let script = json!({"replies": [{"events": events}, text("Still answering.")]});
    let mock = MockServer::start_blocking(Script::from_json(&script.to_string()).expect("script"))
        .expect("mock");
    mock_config(&repo, &mock);
    // 2.7 MB of answer: past the output bound of the default 32k output tokens (16 bytes a
    // token, model/limits.rs), so this session allows 256k.
    let config = repo.home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).expect("config.toml");
    std::fs::write(&config, format!("model_max_output_tokens = 262144\n{text}"))
        .expect("config.toml");
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {}; echo EXITED $?", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("write a very long answer");
    wait_requests(&mock, 1);
    // The mock takes CHUNKS × 20 ms (8 s) to send the answer: the storm is inside it.
    let sizes: [(u16, u16); 10] = [
        (60, 20),
        (120, 40),
        (30, 2),
        (200, 50),
        (1, 1),
        (80, 3),
        (2, 30),
        (119, 39),
        (40, 1),
        (90, 12),
    ];
    let storm = Instant::now();
    storm_resizes(&t, &sizes, RESIZES, Duration::from_millis(3));
    let stormed = storm.elapsed();
    t.tmux(&["resize-window", "-t", "t", "-x", "120", "-y", "40"]);
    let pid = t.display("#{pane_pid}");
    // The turn is over when the working indicator is gone from a full-width viewport. (The
    // answer's last rows may be beyond tmux's history: drawn one column wide, 100 000 lines
    // are millions of rows.)
    let s = t.wait_for("the end of the turn", Duration::from_secs(240), |s| {
        s.contains("Ask anything · / for commands · @ for files") && idle(s) || s.contains("EXITED")
    });
    let all = t.history();
    assert!(
        !all.contains("panicked") && !s.contains("EXITED"),
        "the terminal UI died in the resize storm ({RESIZES} resizes in {stormed:?}):\n{}",
        panic_report(&all)
    );
    assert!(
        !all.contains("could not be drawn"),
        "a frame failed to draw during the storm:\n{s}"
    );
    // And when nothing streams (no history is written between frames), slower, so each
    // size gets frames of its own.
    storm_resizes(&t, &sizes, 30, Duration::from_millis(30));
    t.tmux(&["resize-window", "-t", "t", "-x", "120", "-y", "40"]);
    let s = t.wait_for("the composer", Duration::from_secs(20), |s| {
        s.contains("Ask anything · / for commands · @ for files") || s.contains("EXITED")
    });
    let all = t.history();
    assert!(
        !all.contains("panicked") && !s.contains("EXITED"),
        "the terminal UI died in the resize storm after the answer:\n{}",
        panic_report(&all)
    );
    assert!(
        !all.contains("could not be drawn"),
        "a frame failed to draw during the storm:\n{s}"
    );
    assert_eq!(t.display("#{pane_pid}"), pid);
    // The session goes on, and the whole answer is in its history.
    t.line("still there?");
    t.wait_for("the next answer", Duration::from_secs(20), |s| {
        s.contains("Still answering.")
    });
    let next = mock.model_requests()[1].body.to_string();
    let last_line = format!("line {} of the long answer", CHUNKS * LINES_PER_CHUNK - 1);
    assert!(
        next.contains(&last_line) && next.contains("END-OF-THE-LONG-ANSWER"),
        "the long answer is not whole in the session's history"
    );
    t.line("/quit");
    let s = t.wait_for("the exit", Duration::from_secs(10), |s| {
        s.contains("EXITED")
    });
    assert!(s.contains("EXITED 0"), "{s}");
    assert_terminal_restored(&t, "RESTORED");
}

/// `count` resizes of the tmux window through `sizes`, `pause` after each.
fn storm_resizes(t: &Tmux, sizes: &[(u16, u16)], count: usize, pause: Duration) {
    for i in 0..count {
        let (w, h) = sizes[i % sizes.len()];
        let (w, h) = (w.to_string(), h.to_string());
        t.tmux(&["resize-window", "-t", "t", "-x", &w, "-y", &h]);
        std::thread::sleep(pause);
    }
}

/// The panic message and the first frames of its backtrace, from the pane's history.
fn panic_report(history: &str) -> String {
    let lines: Vec<&str> = history.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("panicked"))
        .unwrap_or(lines.len().saturating_sub(30));
    lines[start..lines.len().min(start + 30)].join("\n")
}

/// The text of the tool result for `id` in a Chat request.
fn tool_result(body: &Value, id: &str) -> String {
    let m = body["messages"]
        .as_array()
        .and_then(|m| {
            m.iter()
                .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        })
        .unwrap_or_else(|| panic!("no result for {id} in {body}"));
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.to_string(),
    }
}

#[test]
fn questions_are_an_inline_picker_and_the_picks_reach_the_model() {
    let repo = TestRepo::new();
    let options = json!([{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]);
    let replies = vec![
        tool(
            "q1",
            "AskUserQuestion",
            json!({"questions": [
                {"question": "Which database?", "header": "DB", "multiSelect": false, "options": options},
                {"question": "Which extras?", "header": "Extras", "multiSelect": true,
                 "options": [{"label": "Auth", "description": "logins"}, {"label": "Cache", "description": "speed"}]}
            ]}),
        ),
        text("Postgres with auth and cache."),
        tool(
            "q2",
            "request_user_input",
            json!({"questions": [{"id": "db", "header": "DB", "question": "Which database?", "options": options}]}),
        ),
        text("MariaDB, then."),
        tool(
            "q3",
            "AskUserQuestion",
            json!({"questions": [{"question": "Which database?", "header": "DB", "multiSelect": false, "options": options}]}),
        ),
        text("never sent"),
    ];
    let mock = MockServer::start_blocking(
        Script::from_json(&json!({"replies": replies}).to_string()).expect("script"),
    )
    .expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {} -c harness=\\\"claude-code\\\"", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("set up a database");
    let s = t.wait_for("the first question", Duration::from_secs(10), |s| {
        s.contains("DB: Which database?")
    });
    assert!(
        s.contains("1. SQLite — a file") && s.contains("› 1."),
        "{s}"
    );
    assert!(
        s.contains("3. Other (type your own answer)") && s.contains("(1 of 2)"),
        "{s}"
    );
    t.keys(&["Down", "Enter"]);
    let s = t.wait_for("the second question", Duration::from_secs(10), |s| {
        s.contains("Extras: Which extras?")
    });
    assert!(s.contains("[ ] Auth") && s.contains("Space toggle"), "{s}");
    t.keys(&["Space", "Down", "Space", "Enter"]);
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("Postgres with auth and cache.")
    });
    let reqs = mock.model_requests();
    assert_eq!(
        tool_result(&reqs[1].body, "q1"),
        "User has answered your questions: \"Which database?\"=\"Postgres\", \"Which extras?\"=\"Auth, Cache\". You can now continue with the user's answers in mind."
    );

    // Codex's tool in the native harness, answered in the user's own words.
    t.line("/harness native");
    t.line("again");
    t.wait_for(
        "request_user_input's question",
        Duration::from_secs(10),
        |s| s.contains("DB: Which database?") && !s.contains("(1 of 2)"),
    );
    t.keys(&["3"]);
    t.type_text("MariaDB");
    t.keys(&["Enter"]);
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("MariaDB, then.")
    });
    let reqs = mock.model_requests();
    assert!(tool_names(&reqs[2].body).contains(&"request_user_input".to_string()));
    assert_eq!(
        tool_result(&reqs[3].body, "q2"),
        r#"{"answers":{"db":{"answers":["MariaDB"]}}}"#
    );

    // Esc cancels the question and ends the turn.
    t.line("/harness claude-code");
    t.line("once more");
    t.wait_for("the third question", Duration::from_secs(10), |s| {
        s.contains("DB: Which database?")
    });
    t.keys(&["Escape"]);
    t.wait_for("the interruption", Duration::from_secs(10), |s| {
        s.contains("interrupted")
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        mock.model_requests().len(),
        5,
        "no request after the cancelled question"
    );
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// A mock serving `replies` and the terminal session (started with `args`) in a tmux window
/// of 120 columns and `rows` rows, at its composer; None where tmux is missing.
fn session_in_rows(
    repo: &TestRepo,
    replies: Value,
    rows: u16,
    args: &str,
) -> Option<(MockServer, Tmux)> {
    let script = Script::from_json(&json!({ "replies": replies }).to_string()).expect("script");
    let mock = MockServer::start_blocking(script).expect("mock");
    mock_config(repo, &mock);
    let t = Tmux::start(repo, &[])?;
    t.tmux(&[
        "resize-window",
        "-t",
        "t",
        "-x",
        "120",
        "-y",
        &rows.to_string(),
    ]);
    t.line(&format!("clear; {} {args}", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    Some((mock, t))
}

/// Issue 34: a command of sixty newlines, then `rm -rf`, filled the approval prompt with
/// empty rows: the `rm -rf`, the reason and the keys never reached the screen. Now the empty
/// lines fold into one row, and the dangerous line, the reason and the keys are shown, on a
/// screen of 40 rows and on one of 10; `n` refuses the command.
#[test]
fn a_dangerous_command_after_sixty_blank_lines_shows_its_rm_its_reason_and_the_keys() {
    for rows in [40, 10] {
        let repo = TestRepo::new();
        let victim = tempfile::Builder::new()
            .prefix("x-something")
            .tempdir()
            .expect("tempdir");
        std::fs::write(victim.path().join("keep.txt"), "keep\n").expect("keep.txt");
        let rm = format!("rm -rf {}", victim.path().display());
        let command = format!("{}{rm}", "\n".repeat(60));
        let replies = json!([
            tool("c1", "shell", json!({ "command": command })),
            text("Left it alone."),
        ]);
        let Some((mock, t)) = session_in_rows(&repo, replies, rows, "") else {
            return;
        };
        t.line("clean up");
        let s = t.wait_for(
            "the rm, its reason and the keys",
            Duration::from_secs(10),
            |s| {
                s.contains(&format!("> {rm}"))
                    && s.contains("dangerous: recursive delete outside the workspace")
                    && s.contains("y yes")
                    && s.contains("n no")
                    && s.contains("Esc cancel the turn")
            },
        );
        assert!(s.contains("$ … 60 empty lines …"), "{rows} rows:\n{s}");
        t.keys(&["n"]);
        t.wait_for("the answer", Duration::from_secs(10), |s| {
            s.contains("Left it alone.")
        });
        assert!(
            victim.path().join("keep.txt").exists(),
            "it ran though it was refused"
        );
        let result = tool_result(&mock.model_requests()[1].body, "c1");
        assert!(
            result.contains("The user rejected this tool call"),
            "{result}"
        );
        t.keys(&["C-c"]);
        t.keys(&["C-c"]);
    }
}

/// Issue 34: a question of 500 options on a screen of 24 rows: after 30 presses of Down the
/// highlighted option had scrolled off, and Enter chose option 31 blind. Now the list
/// scrolls with the highlight, under the question and above the keys, and Enter sends the
/// option shown.
#[test]
fn a_question_of_500_options_scrolls_with_the_highlight_and_answers_the_one_shown() {
    let repo = TestRepo::new();
    let options: Vec<Value> = (1..=500)
        .map(|i| json!({ "label": format!("Option {i}") }))
        .collect();
    let question = json!({"id": "pick", "header": "Pick", "question": "Which option do you want?", "options": options});
    let replies = json!([
        tool(
            "q1",
            "request_user_input",
            json!({ "questions": [question] })
        ),
        text("Option 31 it is."),
    ]);
    let Some((mock, t)) = session_in_rows(&repo, replies, 24, "-c harness=\\\"native\\\"") else {
        return;
    };
    t.line("pick one");
    t.wait_for("the question", Duration::from_secs(10), |s| {
        s.contains("Pick: Which option do you want?") && s.contains("› 1. Option 1")
    });
    t.keys(&["Down"; 30]);
    let s = t.wait_for("option 31 highlighted", Duration::from_secs(10), |s| {
        s.contains("› 31. Option 31")
    });
    assert!(s.contains("Pick: Which option do you want?"), "{s}");
    assert!(
        s.contains("↑↓ move") && s.contains("Enter choose") && s.contains("Esc cancel the turn"),
        "{s}"
    );
    assert!(s.contains("more options"), "{s}");
    t.keys(&["Enter"]);
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("Option 31 it is.")
    });
    assert_eq!(
        tool_result(&mock.model_requests()[1].body, "q1"),
        r#"{"answers":{"pick":{"answers":["Option 31"]}}}"#
    );
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

#[test]
fn a_subagent_is_a_nested_cell_with_live_status_and_a_summary() {
    let repo = TestRepo::new();
    repo.write("notes.txt", "the answer is 42\n");
    let notes = std::fs::canonicalize(repo.path())
        .unwrap()
        .join("notes.txt");
    let replies = vec![
        tool(
            "a1",
            "Agent",
            json!({"description": "find the answer", "prompt": "Read notes.txt.", "subagent_type": "Explore"}),
        ),
        tool("r1", "Read", json!({"file_path": notes})),
        json!({"events": [{"delay_ms": 1500}, {"text": "The answer is 42."}]}),
        text("The subagent says 42."),
    ];
    let mock = MockServer::start_blocking(
        Script::from_json(&json!({"replies": replies}).to_string()).expect("script"),
    )
    .expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {} -c harness=\\\"claude-code\\\"", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("what is the answer?");
    // The call counts when it starts and shows ✓ when it ends: wait for both while the
    // child's next reply is held back (1.5 s), so the status is still "running".
    t.wait_for(
        "the running subagent with its finished call nested",
        Duration::from_secs(10),
        |s| {
            s.contains("↳ Explore find the answer · running · 1 tool calls") && s.contains("✓ Read")
        },
    );
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("The subagent says 42.")
    });
    let s = t.history();
    assert!(
        s.contains("↳ Explore find the answer · done · 1 tool calls"),
        "{s}"
    );
    assert!(s.contains("└ The answer is 42."), "the summary:\n{s}");
    if let Some(path) = std::env::var_os("TUI_SUBAGENT_CAPTURE") {
        std::fs::write(path, t.screen_ansi()).ok();
    }
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 27 in the terminal: `/undo` after a turn that patched a CRLF file, added one, and ran
/// a command that made a file, deleted one and cleared an exec bit puts all of it back, keeps
/// the file the user changed since (said in a cell) and the unrelated one they edited, and the
/// next request no longer holds the turn.
#[test]
fn slash_undo_takes_the_turn_back_and_keeps_the_users_edit() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("crlf.txt"), b"one\r\ntwo\r\n").unwrap();
    repo.write("also.txt", "before\n");
    repo.write("doomed.txt", "delete me\n");
    repo.write("run.sh", "#!/bin/sh\necho hi\n");
    repo.write("unrelated.txt", "untouched\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let p = repo.path().join("run.sh");
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let patch = "*** Begin Patch\n*** Update File: crlf.txt\n@@\n one\n-two\n+TWO\n*** Update File: also.txt\n@@\n-before\n+agent\n*** Add File: added.txt\n+new\n*** End Patch\n";
    let command = "echo out > made.txt && rm doomed.txt && chmod a-x run.sh";
    let mock = MockServer::start_blocking(
        Script::from_json(
            &json!({"replies": [
                tool("p1", "apply_patch", json!({"input": patch})),
                tool("c1", "shell", json!({"command": command})),
                text("Patched."),
                text("Here.")
            ]})
            .to_string(),
        )
        .expect("script"),
    )
    .expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {} -s danger-full-access", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("patch the files");
    // The turn ends (its checkpoint taken) after the answer shows: the user edits after that.
    t.wait_for("the end of the turn", Duration::from_secs(10), |s| {
        s.contains("Patched.") && idle(s)
    });
    assert_eq!(repo.read("added.txt"), "new\n");
    assert_eq!(repo.read("made.txt"), "out\n");
    repo.write("also.txt", "the user's\n");
    repo.write("unrelated.txt", "the user's own\n");
    t.line("/undo");
    let s = t.wait_for("the undo's report", Duration::from_secs(10), |s| {
        s.contains("Undid the last turn.")
    });
    assert!(
        s.contains("kept `also.txt`: changed after the turn; kept"),
        "{s}"
    );
    assert_eq!(
        std::fs::read(repo.path().join("crlf.txt")).unwrap(),
        b"one\r\ntwo\r\n"
    );
    assert!(!repo.path().join("added.txt").exists());
    assert!(!repo.path().join("made.txt").exists());
    assert_eq!(repo.read("doomed.txt"), "delete me\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(repo.path().join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    assert_eq!(repo.read("also.txt"), "the user's\n");
    assert_eq!(repo.read("unrelated.txt"), "the user's own\n");
    // The next request holds no trace of the undone turn.
    t.line("what now?");
    t.wait_for("the next answer", Duration::from_secs(10), |s| {
        s.contains("Here.")
    });
    let body = mock.model_requests().last().unwrap().body.to_string();
    assert!(
        body.contains("what now?") && !body.contains("patch the files"),
        "{body}"
    );
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 27 in the terminal: Esc Esc on an empty prompt opens the rewind picker, newest prompt
/// first; picking it and "Code and conversation" takes the turn back (its file removed) and
/// puts its prompt in the composer, and sending it again leaves one copy in the request.
#[test]
fn esc_esc_rewinds_to_an_earlier_prompt_and_puts_it_back() {
    let repo = TestRepo::new();
    let add = |name: &str| json!({"input": format!("*** Begin Patch\n*** Add File: {name}\n+{name}\n*** End Patch\n")});
    let Some((mock, t)) = session_at_composer(
        &repo,
        json!([
            tool("p1", "apply_patch", add("one.txt")),
            text("One."),
            tool("p2", "apply_patch", add("two.txt")),
            text("Two."),
            text("Again.")
        ]),
        "chat",
    ) else {
        return;
    };
    t.line("alpha first");
    t.wait_for("the first turn", Duration::from_secs(10), |s| {
        s.contains("One.") && idle(s)
    });
    t.line("bravo second");
    t.wait_for("the second turn", Duration::from_secs(10), |s| {
        s.contains("Two.") && idle(s)
    });
    assert!(repo.path().join("two.txt").exists());
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(150));
    t.keys(&["Escape"]);
    let s = t.wait_for("the picker", Duration::from_secs(10), |s| {
        s.contains("Rewind to before a prompt")
    });
    let rows: Vec<&str> = s.lines().map(str::trim).collect();
    let newest = rows.iter().rposition(|l| l.ends_with("bravo second"));
    let oldest = rows.iter().rposition(|l| l.ends_with("alpha first"));
    assert!(
        matches!((newest, oldest), (Some(a), Some(b)) if a < b),
        "newest first:\n{s}"
    );
    t.keys(&["Enter"]);
    t.wait_for("what goes back", Duration::from_secs(10), |s| {
        s.contains("what goes back?") && s.contains("Code and conversation")
    });
    t.keys(&["Enter"]);
    let s = t.wait_for("the rewind's report", Duration::from_secs(10), |s| {
        s.contains("Undid the last turn.")
    });
    assert!(s.contains("removed `two.txt`"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.trim_start().starts_with("› bravo second")),
        "the prompt is back in the composer:\n{s}"
    );
    assert!(!repo.path().join("two.txt").exists());
    assert!(repo.path().join("one.txt").exists());
    t.keys(&["Enter"]);
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("Again.")
    });
    let last = mock.model_requests().last().unwrap().body.to_string();
    assert_eq!(last.matches("bravo second").count(), 1, "{last}");
    assert!(last.contains("alpha first"), "{last}");
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 26 in the terminal: a response of two messages (commentary, then the answer, on the
/// Responses wire) is two cells, each with its own bullet, in order.
#[test]
fn two_messages_of_one_response_are_two_cells() {
    let repo = TestRepo::new();
    let Some((_mock, t)) = session_at_composer(
        &repo,
        json!([{"events": [
            {"message": {"deltas": ["Looking ", "first."], "phase": "commentary"}},
            {"message": {"deltas": ["All ", "done."], "phase": "final_answer"}}
        ]}]),
        "responses",
    ) else {
        return;
    };
    t.line("answer me");
    let s = t.wait_for("the end of the turn", Duration::from_secs(10), |s| {
        s.contains("All done.") && idle(s)
    });
    let lines: Vec<&str> = s.lines().map(str::trim).collect();
    let first = lines.iter().position(|l| *l == "• Looking first.");
    let second = lines.iter().position(|l| *l == "• All done.");
    assert!(
        matches!((first, second), (Some(a), Some(b)) if a < b),
        "two cells, in order:\n{s}"
    );
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 26 in the terminal: `/goal <objective>` runs turns until the model marks the goal
/// complete; the status line shows it, notes say what changed.
#[test]
fn slash_goal_runs_turns_until_the_model_marks_it_complete() {
    let repo = TestRepo::new();
    let Some((mock, t)) = session_at_composer(
        &repo,
        json!([
            text("Step one is in."),
            tool("g1", "update_goal", json!({"status": "complete"})),
            text("Both steps are in.")
        ]),
        "chat",
    ) else {
        return;
    };
    t.line("/goal Add both steps");
    let s = t.wait_for("the goal's end", Duration::from_secs(20), |s| {
        s.contains("Both steps are in.") && s.contains("goal complete") && idle(s)
    });
    assert!(s.contains("Goal active: Add both steps"), "{s}");
    assert!(s.contains("Goal complete: Add both steps"), "{s}");
    assert!(s.contains("Step one is in."), "{s}");
    assert_eq!(mock.model_requests().len(), 3);
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 26 in the terminal: a prompt typed while the answer streams steers the turn: the
/// answer in flight finishes and stays, and the prompt joins the turn's next request.
#[test]
fn a_prompt_typed_while_the_answer_streams_steers_the_turn() {
    let repo = TestRepo::new();
    let Some((mock, t)) = session_at_composer(
        &repo,
        json!([
            {"events": [{"text": "Working "}, {"delay_ms": 1500}, {"text": "on it."}]},
            text("Steered answer.")
        ]),
        "chat",
    ) else {
        return;
    };
    t.line("start the work");
    t.wait_for("the answer streaming", Duration::from_secs(10), |s| {
        s.contains("Working")
    });
    t.line("also say it was steered");
    let s = t.wait_for("the steered answer", Duration::from_secs(15), |s| {
        s.contains("Steered answer.") && !s.contains("Working ·")
    });
    assert!(s.contains("on it."), "the answer in flight stays:\n{s}");
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 2, "one turn, two requests");
    let second = reqs[1].body.to_string();
    assert!(
        second.contains("Working on it.") && second.contains("also say it was steered"),
        "{second}"
    );
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 36 in the terminal: a background task gets a line when it starts and ends, the status
/// line counts it while it runs, and a scheduled prompt runs as a turn of its own after its
/// line.
#[test]
fn background_tasks_and_scheduled_prompts_show_in_the_terminal() {
    let repo = TestRepo::new();
    let replies = vec![
        tool(
            "c1",
            "Bash",
            json!({"command": "sleep 3; echo bg-done", "run_in_background": true, "description": "slow job"}),
        ),
        text("Started it."),
        tool(
            "c2",
            "CronCreate",
            json!({"cron": "* * * * * *", "prompt": "ping from cron", "recurring": false}),
        ),
        text("Scheduled."),
        text("Pong from the schedule."),
    ];
    let mock = MockServer::start_blocking(
        Script::from_json(&json!({"replies": replies}).to_string()).expect("script"),
    )
    .expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!(
        "clear; {} -c harness=\\\"kimi-code\\\" -c model=\\\"kimi-k3\\\"",
        bin()
    ));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("start the job");
    // Approved like any command.
    t.wait_for("the approval", Duration::from_secs(10), |s| {
        s.contains("Run this command?")
    });
    t.keys(&["y"]);
    t.wait_for(
        "the task's start line and the status line's count",
        Duration::from_secs(10),
        |s| {
            s.contains("Background task b1 started: sleep 3; echo bg-done")
                && s.contains("1 background task running")
                && s.contains("Started it.")
        },
    );
    t.wait_for("the task's end line", Duration::from_secs(15), |s| {
        s.contains("Background task b1 completed") && !s.contains("background task running")
    });
    t.line("schedule a ping");
    t.wait_for("the scheduled turn", Duration::from_secs(15), |s| {
        s.contains("Scheduled prompt") && s.contains("Pong from the schedule.")
    });
    let s = t.history();
    assert!(s.contains("ping from cron"), "{s}");
    let fired = mock.model_requests()[4].body.to_string();
    assert!(fired.contains("<cron-fire jobId="), "{fired}");
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 36 in the terminal: a fetch is a Fetched cell, and an image read goes to the model.
#[test]
fn a_fetch_and_an_image_read_show_in_the_terminal() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("shot.png"), mock_llm::e2e::TINY_PNG).unwrap();
    let mock = MockServer::start_blocking(Script::from_json(r#"{"replies": []}"#).expect("script"))
        .expect("mock");
    let web = format!("http://{}", mock.addr());
    let replies = vec![
        json!({"events": [
            {"tool_call": {"id": "f1", "name": "FetchURL", "arguments": {"url": format!("{web}/web/docs")}}},
            {"tool_call": {"id": "m1", "name": "ReadMediaFile", "arguments": {"path": "shot.png"}}}
        ]}),
        text("Both read."),
    ];
    mock.set_script(Script::from_json(&json!({"replies": replies}).to_string()).expect("script"));
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!(
        "clear; {} -c harness=\\\"kimi-code\\\" -c model=\\\"kimi-k3\\\" -c web.allow_private=true",
        bin()
    ));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("read the docs and the screenshot");
    t.wait_for("the answer", Duration::from_secs(15), |s| {
        s.contains("Both read.")
    });
    let s = t.history();
    assert!(s.contains("Fetched") && s.contains("/web/docs"), "{s}");
    let second = mock.model_requests()[1].body.to_string();
    assert!(second.contains("Fetched [Mock page: docs]"), "{second}");
    assert!(second.contains("data:image/png;base64,"), "{second}");
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Two slow fetches of one response run together: both show as running at the same moment
/// (one at a time, the first would read "Fetched" before the second began).
#[test]
fn the_reads_of_one_response_run_together_in_the_terminal() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::from_json(r#"{"replies": []}"#).expect("script"))
        .expect("mock");
    let web = format!("http://{}", mock.addr());
    let replies = vec![
        json!({"events": [
            {"tool_call": {"id": "f1", "name": "FetchURL", "arguments": {"url": format!("{web}/web/slow/2500/alpha")}}},
            {"tool_call": {"id": "f2", "name": "FetchURL", "arguments": {"url": format!("{web}/web/slow/2500/beta")}}},
            {"tool_call": {"id": "s1", "name": "WebSearch", "arguments": {"query": "gamma"}}}
        ]}),
        text("All three read."),
    ];
    mock.set_script(Script::from_json(&json!({"replies": replies}).to_string()).expect("script"));
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!(
        "clear; {} -c harness=\\\"kimi-code\\\" -c web.allow_private=true -c web.search_url=\\\"{web}/search\\\"",
        bin()
    ));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("read both pages");
    t.wait_for(
        "both fetches running at once",
        Duration::from_secs(15),
        |s| {
            s.contains("Fetching")
                && s.contains("slow/2500/alpha")
                && s.contains("slow/2500/beta")
                && s.matches("Fetching").count() >= 2
        },
    );
    t.wait_for("the answer", Duration::from_secs(15), |s| {
        s.contains("All three read.")
    });
    let s = t.history();
    assert!(
        s.contains("Fetched") && s.contains("Searched the web for gamma"),
        "{s}"
    );
    assert!(
        !s.contains("Fetched Fetch "),
        "the verb is not repeated: {s}"
    );
    let second = mock.model_requests()[1].body.to_string();
    assert!(
        second.contains("Mock page: alpha") && second.contains("Mock page: beta"),
        "{second}"
    );
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Ctrl+V takes the clipboard's image (here from a stand-in `xclip` on PATH, as on X11) into the
/// composer as a chip, and the message carries it; with no image it says so and sends nothing.
#[test]
#[cfg(all(unix, not(target_os = "macos")))]
fn ctrl_v_pastes_the_clipboards_image_as_a_chip() {
    use std::os::unix::fs::PermissionsExt as _;
    let repo = TestRepo::new();
    let bin_dir = repo.home.path().join("fakebin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let png = repo.home.path().join("clip.png");
    std::fs::write(&png, mock_llm::e2e::TINY_PNG).unwrap();
    let xclip = bin_dir.join("xclip");
    // Answers like xclip: the PNG when asked for image/png and there is one, else exit 1.
    std::fs::write(
        &xclip,
        format!(
            "#!/bin/sh\ncase \"$*\" in *image/png*) [ -f '{p}' ] && exec cat '{p}';; esac\nexit 1\n",
            p = png.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&xclip, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mock = MockServer::start_blocking(
        Script::from_json(&json!({"replies": [text("A tiny image.")]}).to_string())
            .expect("script"),
    )
    .expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!(
        "clear; unset WAYLAND_DISPLAY; DISPLAY=:99 PATH={}:$PATH {} -c model=\\\"kimi-k3\\\"",
        bin_dir.display(),
        bin()
    ));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.type_text("what is in ");
    t.keys(&["C-v"]);
    t.wait_for("the chip", Duration::from_secs(10), |s| {
        s.contains("what is in [Image #1]")
    });
    t.keys(&["Enter"]);
    t.wait_for("the answer", Duration::from_secs(15), |s| {
        s.contains("A tiny image.")
    });
    let body = mock.model_requests()[0].body.to_string();
    assert!(body.contains("data:image/png;base64,"), "{body}");
    assert!(body.contains("what is in"), "{body}");
    // The saved copy is private, under the agent's home.
    let saved: Vec<_> = std::fs::read_dir(repo.home.path().join("clipboard"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(saved.len(), 1);
    let mode = saved[0].metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // No image on the clipboard: a note, and the composer stays as it was.
    std::fs::remove_file(&png).unwrap();
    t.keys(&["C-v"]);
    t.wait_for("the note", Duration::from_secs(10), |s| {
        s.contains("Nothing pasted: there is no image in the clipboard.")
    });
    assert_eq!(mock.model_requests().len(), 1);
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 38: on first open of a project with config of its own, the terminal asks whether to
/// trust it, saves the answer in config.toml, and loads the project's config once trusted.
#[test]
fn the_terminal_asks_to_trust_a_project_with_its_own_config_once() {
    let repo = TestRepo::new();
    repo.write(".codex/config.toml", "harness = \"pi\"\n");
    let script = Script::from_json(&json!({ "replies": [text("hello")] }).to_string()).unwrap();
    let mock = MockServer::start_blocking(script).expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {}", bin()));
    let top = std::fs::canonicalize(repo.path()).unwrap();
    let asked = t.wait_for("the trust question", Duration::from_secs(10), |s| {
        s.contains("Do you trust")
    });
    assert!(asked.contains(".codex/config.toml"), "{asked}");
    t.line("y");
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("hi");
    wait_requests(&mock, 1);
    assert_eq!(
        tool_names(&mock.model_requests()[0].body),
        ["read", "bash", "edit", "write"]
    );
    let user = std::fs::read_to_string(repo.home.path().join("config.toml")).unwrap();
    assert!(
        user.contains(&format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"",
            top.display()
        )),
        "{user}"
    );
    // The answer holds: the next start asks nothing.
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
    t.wait_for("the shell", Duration::from_secs(10), |s| {
        s.trim_end().ends_with('$')
    });
    t.line(&format!("clear; {}", bin()));
    let screen = t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    assert!(!screen.contains("Do you trust"), "{screen}");
}

/// Issue 38: a project's Claude Code settings with a hook: the terminal asks about the
/// project, then about its hook; once approved the hook runs and its line shows.
#[test]
fn the_terminal_asks_about_a_projects_hooks_and_runs_them_once_approved() {
    let repo = TestRepo::new();
    repo.write(
        ".claude/settings.json",
        &json!({
            "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": "echo 'Use the team style guide'"}]}]}
        })
        .to_string(),
    );
    let script = Script::from_json(&json!({ "replies": [text("hello")] }).to_string()).unwrap();
    let mock = MockServer::start_blocking(script).expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {}", bin()));
    let asked = t.wait_for("the trust question", Duration::from_secs(10), |s| {
        s.contains("Do you trust")
    });
    assert!(asked.contains(".claude/settings.json"), "{asked}");
    t.line("y");
    let hooks = t.wait_for("the hooks question", Duration::from_secs(10), |s| {
        s.contains("Run them?")
    });
    assert!(
        hooks.contains("UserPromptSubmit: echo 'Use the team style guide'"),
        "{hooks}"
    );
    t.line("y");
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.line("hi");
    wait_requests(&mock, 1);
    let body = mock.model_requests()[0].body.to_string();
    assert!(
        body.contains("UserPromptSubmit hook additional context: Use the team style guide"),
        "{body}"
    );
    t.wait_for("the hook's line", Duration::from_secs(10), |s| {
        s.contains("UserPromptSubmit hook")
    });
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 38: a custom agent of the user's own folder is a subagent type in the terminal: the
/// model starts it, it runs with its file's prompt and only its tools, and its answer comes back.
#[test]
fn the_terminal_runs_a_custom_agent_from_the_users_folder() {
    let repo = TestRepo::new();
    let agents = repo.home.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code, read-only\ntools: Read, Grep\n---\nYou review code and report findings.\n",
    )
    .unwrap();
    let replies = json!([
        tool(
            "a1",
            "Agent",
            json!({"description": "review", "prompt": "Review src.", "subagent_type": "reviewer"})
        ),
        text("No findings."),
        text("The reviewer found nothing."),
    ]);
    let Some((mock, t)) = session_at_composer(&repo, replies, "chat") else {
        return;
    };
    t.line("/harness claude-code");
    t.line("review the code");
    t.wait_for("the answer", Duration::from_secs(15), |s| {
        s.contains("The reviewer found nothing.")
    });
    let reqs = mock.model_requests();
    let agent_tool = reqs[0].body.to_string();
    assert!(
        agent_tool.contains("- reviewer: Reviews code, read-only"),
        "{agent_tool}"
    );
    let child = &reqs[1].body;
    assert_eq!(
        child["messages"][0]["content"],
        "You review code and report findings."
    );
    let mut names: Vec<String> = child["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(names, ["Grep", "Read"]);
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 38: a turn that completes while the terminal is not focused sends a desktop
/// notification (OSC 9) in a terminal that shows one.
#[test]
fn a_turn_that_ends_while_the_terminal_is_unfocused_sends_a_notification() {
    let repo = TestRepo::new();
    let script = Script::from_json(&json!({ "replies": [text("hello")] }).to_string()).unwrap();
    let mock = MockServer::start_blocking(script).expect("mock");
    mock_config(&repo, &mock);
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    let raw = repo.home.path().join("pane.raw");
    t.tmux(&[
        "pipe-pane",
        "-t",
        "t",
        "-o",
        &format!("cat >> '{}'", raw.display()),
    ]);
    // A terminal that shows OSC 9 (tmux names itself in TERM_PROGRAM: set it after).
    t.line(&format!("export TERM_PROGRAM=WezTerm; clear; {}", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    // The terminal reports that it lost the focus (CSI O, as with focus events on).
    t.tmux(&["send-keys", "-t", "t", "-H", "1b", "5b", "4f"]);
    t.line("hi");
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("hello")
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let bytes = loop {
        let bytes = std::fs::read(&raw).unwrap_or_default();
        if bytes.windows(5).any(|w| w == b"\x1b]9;i") || std::time::Instant::now() > deadline {
            break bytes;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains("\x1b]9;interpreter: Turn complete\x07"),
        "no notification in the pane's output: {:?}",
        &text[text.len().saturating_sub(600)..]
    );
}

/// Issue 38: a custom command from the user's folder is offered by `/` completion with its
/// argument hint, and `/name args` sends its prompt, expanded.
#[test]
fn a_custom_command_is_completed_with_its_hint_and_sends_its_prompt() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.home.path().join("commands")).unwrap();
    std::fs::write(
        repo.home.path().join("commands/greet.md"),
        "---\ndescription: Greets someone\nargument-hint: [who]\n---\nSay hello to $1.\n",
    )
    .unwrap();
    let script =
        Script::from_json(&json!({ "replies": [text("Greeted.")] }).to_string()).expect("script");
    let mock = MockServer::start_blocking(script).expect("mock");
    mock_config(&repo, &mock);
    let home = repo.home.path().display().to_string();
    let Some(t) = Tmux::start(&repo, &[("HOME", home.as_str())]) else {
        return;
    };
    t.line(&format!("clear; {}", bin()));
    t.wait_for("the composer", Duration::from_secs(10), |s| {
        s.contains("Ask anything")
    });
    t.type_text("/gre");
    t.wait_for("the command in the popup", Duration::from_secs(10), |s| {
        s.contains("/greet [who]") && s.contains("Greets someone")
    });
    t.type_text("et Ada");
    t.keys(&["Enter"]);
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("Greeted.") && idle(s)
    });
    let body = mock.model_requests()[0].body.to_string();
    assert!(body.contains("Say hello to Ada."), "{body}");
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 38: the approval prompt offers `s` "always, and save" for a command's prefix; the
/// answer writes `rules/default.rules`, and the next command with that prefix runs unasked
/// under the `untrusted` policy, where it would otherwise ask.
#[test]
fn always_and_save_writes_a_rule_and_the_next_matching_command_runs_unasked() {
    let repo = TestRepo::new();
    let replies = json!([
        tool("c1", "shell", json!({ "command": "touch saved.txt" })),
        text("Made one."),
        tool(
            "c2",
            "shell",
            json!({ "command": "touch saved.txt again.txt" })
        ),
        text("Made two."),
    ]);
    let args = "-c 'approval_policy=\"untrusted\"'";
    let Some((_mock, t)) = session_in_rows(&repo, replies, 40, args) else {
        return;
    };
    t.line("make one");
    t.wait_for("the approval prompt", Duration::from_secs(10), |s| {
        s.contains("$ touch saved.txt") && s.contains("s always, and save")
    });
    t.keys(&["s"]);
    let s = t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("Made one.")
    });
    assert!(s.contains("saved as a rule"), "{s}");
    let saved = std::fs::read_to_string(repo.home.path().join("rules/default.rules")).unwrap();
    assert_eq!(
        saved,
        "prefix_rule(pattern=[\"touch\", \"saved.txt\"], decision=\"allow\")\n"
    );
    t.line("make two");
    t.wait_for("the second answer, unasked", Duration::from_secs(10), |s| {
        s.contains("Made two.")
    });
    assert!(repo.path().join("again.txt").exists());
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// Issue 41 in the terminal: an unset token variable, a missing command and a hanging server
/// are three warnings, the turn runs, and `/mcp` says why each failed, next to a ready server
/// with its tools and a disabled one.
#[test]
fn three_broken_mcp_servers_are_warnings_and_slash_mcp_says_why() {
    let repo = TestRepo::new();
    let script = Script::from_json(&json!({ "replies": [text("Ran anyway.")] }).to_string())
        .expect("script");
    let mock = MockServer::start_blocking(script).expect("mock");
    mock_config_on(&repo, &mock, "chat");
    let config = repo.home.path().join("config.toml");
    let mut text_now = std::fs::read_to_string(&config).unwrap();
    text_now.push_str(&format!(
        "\n[mcp_servers.echo]\ncommand = '{}'\n\n\
         [mcp_servers.github]\nurl = \"https://tracker.example/mcp\"\nbearer_token_env_var = \"INTERPRETER_TEST_UNSET_TOKEN\"\n\n\
         [mcp_servers.gone]\ncommand = '/nonexistent/mcp-server'\n\n\
         [mcp_servers.hangs]\ncommand = 'sleep'\nargs = ['30']\nstartup_timeout_sec = 0.5\n\n\
         [mcp_servers.off]\ncommand = 'true'\nenabled = false\n",
        env!("CARGO_BIN_EXE_mcp-echo")
    ));
    std::fs::write(&config, text_now).unwrap();
    let Some(t) = Tmux::start(&repo, &[]) else {
        return;
    };
    t.line(&format!("clear; {}", bin()));
    t.wait_for("the three warnings", Duration::from_secs(15), |s| {
        s.contains("`github` was left out")
            && s.contains("`gone` failed to start")
            && s.contains("`hangs` failed to start")
    });
    t.line("hi");
    t.wait_for("the answer", Duration::from_secs(15), |s| {
        s.contains("Ran anyway.") && idle(s)
    });
    t.line("/mcp");
    let s = t.wait_for("the servers", Duration::from_secs(10), |s| {
        s.contains("`off`: disabled")
    });
    assert!(s.contains("MCP servers:"), "{s}");
    assert!(s.contains("- `echo`: ready (auth: unsupported)"), "{s}");
    assert!(s.contains("- `say`: Repeats the text."), "{s}");
    assert!(
        s.contains("- `github`: failed: mcp_servers.github.bearer_token_env_var: the variable INTERPRETER_TEST_UNSET_TOKEN"),
        "{s}"
    );
    assert!(
        s.contains("- `gone`: failed: could not run `/nonexistent/mcp-server`"),
        "{s}"
    );
    assert!(
        s.contains("- `hangs`: failed: no answer to the MCP handshake within 0.5 s"),
        "{s}"
    );
    assert_eq!(mock.model_requests().len(), 1);
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
}

/// `/export` writes `<session-id>.md` in the folder, `/export NAME.html` one HTML page, and
/// says where; the files hold the turn's prompt, command and answer.
#[test]
fn slash_export_writes_markdown_and_html_beside_the_session() {
    let repo = TestRepo::new();
    let Some((_mock, t)) = session_at_composer(
        &repo,
        json!([
            tool("c1", "shell", json!({"command": "echo exported-output"})),
            text("All <done>.")
        ]),
        "chat",
    ) else {
        return;
    };
    t.line("run the echo");
    t.wait_for("the turn", Duration::from_secs(10), |s| {
        s.contains("All <done>.") && idle(s)
    });
    t.line("/export");
    let s = t.wait_for("the export's report", Duration::from_secs(10), |s| {
        s.contains("Exported the session to")
    });
    let sessions = std::fs::read_dir(repo.home.path().join("sessions")).unwrap();
    let id = sessions
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".jsonl")
                .map(String::from)
        })
        .next()
        .expect("a session log");
    assert!(s.contains(&format!("{id}.md")), "{s}");
    let md = std::fs::read_to_string(repo.path().join(format!("{id}.md"))).unwrap();
    assert!(md.contains("## Prompt 1\n\nrun the echo"), "{md}");
    assert!(md.contains("```sh\necho exported-output\n```"), "{md}");
    assert!(md.contains("All <done>."), "{md}");
    t.line("/export page.html");
    t.wait_for("the second report", Duration::from_secs(10), |s| {
        s.contains("page.html")
    });
    let html = std::fs::read_to_string(repo.path().join("page.html")).unwrap();
    assert!(
        html.starts_with("<!doctype html>") && html.contains("All &lt;done&gt;."),
        "{html}"
    );
}

/// `/review base main` sends the branch's diff to the model and shows its answer; a branch
/// that is not there is an error on screen and no model request.
#[test]
fn slash_review_base_sends_the_branch_diff() {
    use mock_llm::e2e::git;
    let repo = TestRepo::new();
    git(repo.path(), &["checkout", "-q", "-b", "main"]);
    repo.write("lib.rs", "fn a() {}\n");
    git(repo.path(), &["add", "lib.rs"]);
    git(repo.path(), &["commit", "-q", "-m", "first"]);
    git(repo.path(), &["checkout", "-q", "-b", "feature"]);
    repo.write("lib.rs", "fn a() {}\n// MARKER_COMMIT\n");
    git(repo.path(), &["commit", "-q", "-am", "second"]);
    let Some((mock, t)) =
        session_at_composer(&repo, json!([text("Verdict: patch is correct.")]), "chat")
    else {
        return;
    };
    t.line("/review base nope");
    t.wait_for("the error", Duration::from_secs(10), |s| {
        s.contains("/review: base branch `nope` not found")
    });
    t.line("/review base main");
    t.wait_for("the answer", Duration::from_secs(10), |s| {
        s.contains("Verdict: patch is correct.") && idle(s)
    });
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 1, "the bad target asked no model");
    let body = reqs[0].body.to_string();
    assert!(body.contains("+// MARKER_COMMIT"), "{body}");
}
