//! A scripted LSP client for end-to-end tests of `interpreter lsp`: spawns the binary,
//! frames JSON-RPC over its stdio, and fails the test on any byte on stdout that is not an
//! LSP frame. Shared by the `lsp*` test targets (`#[path]`-included).

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mock_llm::e2e::interpreter_bin;
use serde_json::{Value, json};

pub const TIMEOUT: Duration = Duration::from_secs(30);

pub struct LspClient {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Result<Value, String>>,
    /// Messages received but not consumed yet, in order.
    backlog: VecDeque<Value>,
    /// Every message received, for assertions and failure output.
    pub log: Vec<Value>,
    next_id: i64,
    stderr: Arc<Mutex<String>>,
}

impl LspClient {
    /// `interpreter lsp --stdio` in `cwd`, with an isolated home and extra env.
    pub fn spawn(cwd: &Path, home: &Path, env: &[(&str, &str)]) -> LspClient {
        let mut cmd = Command::new(interpreter_bin());
        cmd.args(["lsp", "--stdio"])
            .current_dir(cwd)
            .env("OPENINTERPRETER_HOME", home)
            // Explain/Ask answers are written under the temp folder: keep them in `home`,
            // which the test removes.
            .env("TMPDIR", home)
            .env("INTERPRETER_LOG", "info")
            .env_remove("CODEX_HOME")
            .env_remove("OPENINTERPRETER_MODEL")
            .env_remove("OPENINTERPRETER_PROVIDER")
            .env_remove("OPENINTERPRETER_HARNESS")
            .env_remove("MOONSHOT_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn interpreter lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let stderr_pipe = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                match read_frame(&mut r) {
                    Ok(Some(v)) => {
                        if tx.send(Ok(v)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        LspClient {
            child,
            stdin,
            rx,
            backlog: VecDeque::new(),
            log: Vec::new(),
            next_id: 1,
            stderr,
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn send(&mut self, msg: Value) {
        let body = serde_json::to_vec(&msg).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(&body).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Bytes as they are, framed or not (for broken input).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn respond(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Sends a request and waits for its response (the whole message).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.wait_for(&format!("response to {method}"), TIMEOUT, |m| {
            m.get("id") == Some(&json!(id)) && m.get("method").is_none()
        })
    }

    /// The first message (backlog first) matching `pred`; others stay queued.
    pub fn wait_for(
        &mut self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        match self.try_wait_for(timeout, pred) {
            Some(v) => v,
            None => panic!(
                "timed out after {timeout:?} waiting for {what}\nreceived:\n{}\nstderr:\n{}",
                self.log
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join("\n"),
                self.stderr()
            ),
        }
    }

    pub fn try_wait_for(
        &mut self,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Ok(v)) => {
                    self.log.push(v.clone());
                    if pred(&v) {
                        return Some(v);
                    }
                    self.backlog.push_back(v);
                }
                Ok(Err(e)) => panic!(
                    "bad output from the server: {e}\nstderr:\n{}",
                    self.stderr()
                ),
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// A server→client request with this method.
    pub fn wait_request(&mut self, method: &str) -> Value {
        self.wait_for(method, TIMEOUT, |m| {
            m["method"] == method && m.get("id").is_some()
        })
    }

    pub fn wait_notification(&mut self, method: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_for(method, TIMEOUT, |m| {
            m["method"] == method && m.get("id").is_none() && pred(&m["params"])
        })
    }

    /// `initialize` + `initialized`; returns the initialize result.
    pub fn initialize(&mut self, root: &Path, capabilities: Value, options: Value) -> Value {
        let root_uri = file_uri(root);
        let resp = self.call(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "repo"}],
                "capabilities": capabilities,
                "initializationOptions": options,
            }),
        );
        assert!(resp.get("error").is_none(), "initialize failed: {resp}");
        self.notify("initialized", json!({}));
        resp["result"].clone()
    }

    pub fn did_open(&mut self, uri: &str, language: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}}),
        );
    }

    pub fn did_change(&mut self, uri: &str, version: i32, changes: Value) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        );
    }

    /// `shutdown` + `exit`; asserts a clean exit.
    pub fn shutdown(mut self) {
        let resp = self.call("shutdown", Value::Null);
        assert!(resp.get("error").is_none(), "{resp}");
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "exit status {status}\nstderr:\n{}",
                    self.stderr()
                );
                // Anything still unread must be a well-formed frame too.
                while let Ok(m) = self.rx.recv_timeout(Duration::from_millis(200)) {
                    if let Err(e) = m {
                        panic!("bad output from the server: {e}");
                    }
                }
                return;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "the server did not exit after `exit`\nstderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one `Content-Length` frame; Err on anything else (a stray byte on stdout).
fn read_frame(r: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut len = None;
    loop {
        let mut line = String::new();
        let n = r
            .read_line(&mut line)
            .map_err(|e| format!("reading stdout: {e}"))?;
        if n == 0 {
            return if len.is_none() {
                Ok(None)
            } else {
                Err("stdout closed inside a frame header".into())
            };
        }
        if line == "\r\n" {
            break;
        }
        let Some(rest) = line.strip_suffix("\r\n") else {
            return Err(format!("not an LSP header line: {line:?}"));
        };
        let (name, value) = rest
            .split_once(": ")
            .ok_or_else(|| format!("not an LSP header line: {line:?}"))?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => {
                len = Some(
                    value
                        .parse::<usize>()
                        .map_err(|e| format!("{line:?}: {e}"))?,
                )
            }
            "content-type" => {}
            _ => return Err(format!("unexpected header: {line:?}")),
        }
    }
    let len = len.ok_or("frame without Content-Length")?;
    let mut body = vec![0; len];
    r.read_exact(&mut body)
        .map_err(|e| format!("reading a frame body: {e}"))?;
    serde_json::from_slice(&body).map_err(|e| format!("frame body is not JSON ({e})"))
}

pub fn file_uri(p: &Path) -> String {
    let mut s = String::from("file://");
    for b in p.to_str().expect("utf-8 path").bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                s.push(b as char)
            }
            _ => s.push_str(&format!("%{b:02X}")),
        }
    }
    s
}

/// Client capabilities like a full editor's, with switches for the optional parts.
pub fn capabilities(progress: bool, show_document: bool) -> Value {
    json!({
        "general": {"positionEncodings": ["utf-16"]},
        "window": {"workDoneProgress": progress, "showDocument": {"support": show_document}},
        "workspace": {
            "applyEdit": true,
            "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]},
            "didChangeConfiguration": {"dynamicRegistration": false}
        },
        "textDocument": {"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "refactor"]}}}}
    })
}

/// Settings pointing the agent at the mock.
pub fn mock_options(url: &str) -> Value {
    json!({"provider": "mock", "model": "mock-model", "baseUrl": url, "wireApi": "chat",
           "config": ["model_providers.mock.retry_base_delay_ms=10"]})
}

/// Applies LSP `TextEdit[]` (UTF-16 positions, all relative to `text`) like an editor.
pub fn apply_text_edits(text: &str, edits: &[Value]) -> String {
    let offset = |pos: &Value| -> usize {
        let line = pos["line"].as_u64().unwrap() as usize;
        let ch = pos["character"].as_u64().unwrap() as usize;
        let mut at = 0;
        for (i, l) in text.split_inclusive('\n').enumerate() {
            if i == line {
                let content = l.trim_end_matches(['\n', '\r']);
                let mut units = 0;
                for (b, c) in content.char_indices() {
                    if units >= ch {
                        return at + b;
                    }
                    units += c.len_utf16();
                }
                return at + content.len();
            }
            at += l.len();
        }
        text.len()
    };
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort_by_key(|s| (s.0, s.1));
    let mut out = String::new();
    let mut at = 0;
    for (s, e, t) in spans {
        assert!(s >= at, "overlapping edits: {edits:?}");
        out.push_str(&text[at..s]);
        out.push_str(&t);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

/// The code action with this title from a codeAction response.
pub fn action<'a>(resp: &'a Value, title: &str) -> &'a Value {
    resp["result"]
        .as_array()
        .unwrap_or_else(|| panic!("no actions: {resp}"))
        .iter()
        .find(|a| a["title"] == title)
        .unwrap_or_else(|| panic!("no action `{title}` in {resp}"))
}
