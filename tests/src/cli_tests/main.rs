//! Black-box tests of the `mock-llm` binary.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn hello_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hello.json")
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mock-llm")
}

/// Reads the single `MOCK_LISTENING <url>` line and returns the URL.
fn listening_url(child: &mut Child) -> String {
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line
        .strip_prefix("MOCK_LISTENING ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .trim_end()
        .to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"),
        "{url}"
    );
    url
}

/// A blocking HTTP/1.1 request; returns the raw response text.
fn http(url: &str, method: &str, path: &str, body: &str) -> String {
    let hostport = url.strip_prefix("http://").unwrap().trim_end_matches("/v1");
    let mut s = std::net::TcpStream::connect(hostport).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nhost: {hostport}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mock-llm did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serves_records_and_exits_on_stdin_eof() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("rec.jsonl");
    let port_file = dir.path().join("url");
    let mut child = spawn(&[
        "--script",
        hello_script().to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
        "--port-file",
        port_file.to_str().unwrap(),
        "--exit-on-stdin-eof",
    ]);
    let url = listening_url(&mut child);
    assert_eq!(std::fs::read_to_string(&port_file).unwrap().trim_end(), url);

    let body =
        r#"{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}"#;
    let resp = http(&url, "POST", "/v1/chat/completions", body);
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("Hello "), "{resp}");
    assert!(resp.contains("data: [DONE]"));
    let resp = http(&url, "POST", "/v1/chat/completions", body);
    assert!(resp.starts_with("HTTP/1.1 500"), "{resp}");
    assert!(
        resp.contains("mock script exhausted after 1 requests"),
        "{resp}"
    );

    let requests = http(&url, "GET", "/_mock/requests", "");
    assert!(requests.contains("\"path\":\"/v1/chat/completions\""));

    let lines = std::fs::read_to_string(&record).unwrap();
    assert_eq!(lines.lines().count(), 2);
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["method"], "POST");
    assert_eq!(first["body"]["model"], "m");

    drop(child.stdin.take());
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains("POST /v1/chat/completions -> reply 1/1"),
        "{stderr}"
    );
    assert!(stderr.contains("script exhausted"), "{stderr}");
}

#[test]
fn exits_on_sigterm_and_keeps_running_without_stdin_flag() {
    let mut child = spawn(&["--script", hello_script().to_str().unwrap()]);
    let url = listening_url(&mut child);
    // Closing stdin does nothing without --exit-on-stdin-eof.
    drop(child.stdin.take());
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none());
    assert!(http(&url, "GET", "/v1/models", "").contains("mock-model"));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}");
}

#[test]
fn bad_script_fails_without_listening() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"replies\": [{\"events\": [{\"nope\": 1}]}]}").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .args(["--script", bad.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.json"));
}
