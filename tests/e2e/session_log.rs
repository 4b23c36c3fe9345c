//! Issue 22, rows 3 and 4, through the real binary and the mock model: one writer per session
//! (a second `exec resume`, or an ACP load and prompt, while another process writes it is
//! refused and told who has it), and a log that is durable or the turn fails (a full disk
//! fails the turn once; a torn last line never swallows the next record).

// The raw ACP client of the hostile-command tests; this file uses part of it.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

use mock_llm::e2e::{TestRepo, jsonl, wait_with_timeout};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

fn exec_args(url: &str, resume: Option<&str>) -> Vec<String> {
    let mut a = vec!["exec".to_string(), "--json".to_string()];
    a.extend(TestRepo::mock_config(url, "chat"));
    if let Some(id) = resume {
        a.extend(["resume".to_string(), id.to_string()]);
    }
    a
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs a first exec turn and returns the new session's id.
fn first_session(repo: &TestRepo, mock: &MockServer) -> String {
    let out = repo.run(&exec_args(&mock.url(), None), "first prompt");
    assert!(out.status.success(), "{}", stderr(&out));
    jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string()
}

fn log_path(home: &Path, id: &str) -> PathBuf {
    home.join("sessions").join(format!("{id}.jsonl"))
}

/// Every line of a log, parsed; panics on one that is not a whole JSON record.
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "the log ends mid-record: {text:?}");
    text.lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not a whole record ({e}): {l:?}"))
        })
        .collect()
}

/// The texts of the user's (not synthetic) messages in a log, in order.
fn user_texts(path: &Path) -> Vec<String> {
    records(path)
        .iter()
        .filter(|r| r["type"] == "item" && r["item"]["type"] == "user")
        .filter(|r| r["item"]["synthetic"] != true)
        .map(|r| r["item"]["text"].as_str().unwrap().to_string())
        .collect()
}

/// The user's messages a model request carried (not the harness's `<…>` context).
fn request_user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .filter(|t| !t.starts_with('<'))
        .collect()
}

/// Starts `exec resume id` whose model reply takes `delay_ms`, and waits until it is in the
/// middle of its turn (the mock has its request).
fn slow_resume(repo: &TestRepo, mock: &MockServer, id: &str, prompt: &str) -> Child {
    let before = mock.model_requests().len();
    let mut child = repo
        .command(&exec_args(&mock.url(), Some(id)))
        .spawn()
        .expect("spawn interpreter");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(prompt.as_bytes()).unwrap();
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(30);
    while mock.model_requests().len() == before {
        assert!(
            Instant::now() < deadline,
            "the slow resume never asked the model"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn a_second_exec_resume_while_one_runs_is_refused_and_names_the_holder() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("one"),
        Reply::text("two").with_delay(3000),
        Reply::text("three"),
    ]))
    .unwrap();
    let id = first_session(&repo, &mock);
    let holder = slow_resume(&repo, &mock, &id, "second prompt");
    let pid = holder.id();
    let out = repo.run(&exec_args(&mock.url(), Some(&id)), "intruding prompt");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "session `{id}` is open in another interpreter (pid {pid}, exec); close that one first"
        )),
        "{err}"
    );
    let first = wait_with_timeout(holder, Duration::from_secs(60));
    assert!(first.status.success(), "{}", stderr(&first));
    // The refused run wrote nothing: the log pairs each prompt with its answer.
    assert_eq!(
        user_texts(&log_path(repo.home.path(), &id)),
        ["first prompt", "second prompt"]
    );
    // Once the holder is gone, the session is free again.
    let out = repo.run(&exec_args(&mock.url(), Some(&id)), "third prompt");
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn an_acp_load_reads_but_its_prompt_is_refused_while_exec_writes_the_session() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("one"),
        Reply::text("two").with_delay(3000),
        Reply::text("from the editor"),
    ]))
    .unwrap();
    let id = first_session(&repo, &mock);
    let log = log_path(repo.home.path(), &id);
    let exec = slow_resume(&repo, &mock, &id, "second prompt");
    let pid = exec.id();

    let mut agent = acp::Agent::start(&repo, &mock, &[], &[]);
    agent.initialize();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let load = json!({"sessionId": id, "cwd": cwd, "mcpServers": []});
    let len = std::fs::metadata(&log).unwrap().len();
    agent
        .request("session/load", load.clone())
        .unwrap_or_else(|e| panic!("session/load failed: {e}\n{}", agent.log()));
    assert_eq!(
        std::fs::metadata(&log).unwrap().len(),
        len,
        "a load writes nothing"
    );
    let prompt = json!({"sessionId": id, "prompt": [{"type": "text", "text": "from zed"}]});
    let err = agent
        .request("session/prompt", prompt.clone())
        .expect_err("a prompt while exec writes the session");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!(
            "session `{id}` is open in another interpreter (pid {pid}, exec)"
        )),
        "{err}"
    );

    let out = wait_with_timeout(exec, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    // exec added a turn this copy does not have: it must load again.
    let err = agent
        .request("session/prompt", prompt.clone())
        .expect_err("a prompt on a stale copy");
    assert!(
        err["message"]
            .as_str()
            .unwrap_or_default()
            .contains("changed by another interpreter since it was loaded; load it again"),
        "{err}"
    );
    agent.request("session/load", load).unwrap();
    agent
        .request("session/prompt", prompt)
        .unwrap_or_else(|e| panic!("prompt after a fresh load: {e}\n{}", agent.log()));
    let last = mock.model_requests().last().unwrap().body.clone();
    assert_eq!(
        request_user_texts(&last),
        ["first prompt", "second prompt", "from zed"]
    );
    assert_eq!(
        user_texts(&log),
        ["first prompt", "second prompt", "from zed"]
    );
    agent.exit();
}

/// A tmpfs mounted for one test, unmounted when dropped. None where mounting is not
/// permitted (not root, or no CAP_SYS_ADMIN).
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(bytes: usize) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the disk to the last byte; the filler is removed to free it again.
    fn fill(&self) -> PathBuf {
        let filler = self.path().join("filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![b'x'; 512];
        while f.write_all(&block).is_ok() {}
        while f.write_all(b"x").is_ok() {}
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn a_full_disk_fails_the_turn_once_and_the_next_turn_keeps_every_record() {
    let Some(disk) = SmallDisk::mount(256 * 1024) else {
        // CI runs as root, where mounting works: a skip there would test nothing.
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
        assert!(
            !(root && std::env::var_os("CI").is_some()),
            "mounting a tmpfs failed as root in CI"
        );
        eprintln!("skipped: mounting a tmpfs is not permitted here");
        return;
    };
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ]))
    .unwrap();
    let run = |args: Vec<String>, prompt: &str| {
        let mut child = repo
            .command(&args)
            .env("OPENINTERPRETER_HOME", disk.path())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(prompt.as_bytes()).unwrap();
        drop(stdin);
        wait_with_timeout(child, Duration::from_secs(60))
    };
    let out = run(exec_args(&mock.url(), None), "first prompt");
    assert!(out.status.success(), "{}", stderr(&out));
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();

    let filler = disk.fill();
    // More than the slack of the log's last page, which a full tmpfs still takes.
    let big = format!("second prompt {}", "x".repeat(20_000));
    let out = run(exec_args(&mock.url(), Some(&id)), &big);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let events = jsonl(&out);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn.failed", "{events:?}");
    let message = last["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the session log could not be saved")
            && message.contains("No space left on device"),
        "{message}"
    );
    // Said once: no warning items before it, and no turn.completed.
    let mentions = String::from_utf8_lossy(&out.stdout)
        .matches("No space left on device")
        .count();
    assert_eq!(mentions, 1, "{events:?}");
    assert!(!events.iter().any(|e| e["type"] == "turn.completed"));

    std::fs::remove_file(filler).unwrap();
    let out = run(exec_args(&mock.url(), Some(&id)), "third prompt");
    assert!(out.status.success(), "{}", stderr(&out));
    let log = log_path(disk.path(), &id);
    let texts = user_texts(&log);
    assert_eq!(texts.first().map(String::as_str), Some("first prompt"));
    assert_eq!(texts.last().map(String::as_str), Some("third prompt"));
}

#[test]
fn a_torn_last_line_is_cut_and_the_next_record_survives() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ]))
    .unwrap();
    let id = first_session(&repo, &mock);
    let log = log_path(repo.home.path(), &id);
    // A crash in the middle of a write: half a record, no newline.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(br#"{"type":"item","item":{"type":"assistant","text":"half"#)
        .unwrap();
    drop(f);
    let out = repo.run(&exec_args(&mock.url(), Some(&id)), "second prompt");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = repo.run(&exec_args(&mock.url(), Some(&id)), "third prompt");
    assert!(out.status.success(), "{}", stderr(&out));
    // The record after the torn line is whole and reaches the model on the next resume.
    assert_eq!(
        user_texts(&log),
        ["first prompt", "second prompt", "third prompt"]
    );
    let last = mock.model_requests().last().unwrap().body.clone();
    assert_eq!(
        request_user_texts(&last),
        ["first prompt", "second prompt", "third prompt"]
    );
}
