//! Issue 34, class 11: "The ChatGPT token reaches a third party". After the app-server's
//! `account/login/start` with `chatgptAuthTokens`, a thread on another provider sent
//! `Authorization: Bearer <ChatGPT token>` in place of that provider's own key. The rule that
//! holds now: a login token belongs to its provider. It goes only to a provider that requires
//! OpenAI auth (Codex's `requires_openai_auth`: the built-in `openai`, or a table that says
//! so); any other uses its own key, or fails for want of one.
//!
//! Driven through `interpreter app-server` over stdio, with a small JSON-RPC line client.

use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

const TOKEN: &str = "chatgpt-token-XYZ";
const OTHER_KEY: &str = "other-provider-key-456";

/// `interpreter app-server` on stdio: requests out, each stdout line in as JSON.
struct AppServer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
}

impl AppServer {
    fn start(repo: &TestRepo, args: &[String], env: &[(&str, &str)], unset: &[&str]) -> Self {
        let mut cmd = repo.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        for k in unset {
            cmd.env_remove(k);
        }
        let mut child = cmd.spawn().expect("spawn interpreter app-server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        AppServer {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").expect("write to app-server");
        self.stdin.flush().expect("flush");
    }

    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the app-server said nothing for 60 s")
    }

    /// Sends a request and waits for its answer: Ok(result) or Err(error).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"id": id, "method": method, "params": params}));
        loop {
            let msg = self.next();
            if msg["id"] == id && msg.get("method").is_none() {
                return match msg.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(msg["result"].clone()),
                };
            }
        }
    }

    /// Waits for the notification `method` about `thread`.
    fn notification(&self, method: &str, thread: &str) -> Value {
        loop {
            let msg = self.next();
            if msg["method"] == method && msg["params"]["threadId"] == thread {
                return msg["params"].clone();
            }
        }
    }

    /// Starts a thread on `provider` and runs one turn; the completed turn.
    fn run_turn(&mut self, provider: &str) -> Value {
        let thread = self
            .request(
                "thread/start",
                json!({"modelProvider": provider, "model": "mock-model"}),
            )
            .unwrap_or_else(|e| panic!("thread/start on {provider}: {e}"));
        let id = thread["thread"]["id"].as_str().unwrap().to_string();
        self.request(
            "turn/start",
            json!({"threadId": id, "input": [{"type": "text", "text": "hello"}]}),
        )
        .unwrap_or_else(|e| panic!("turn/start on {provider}: {e}"));
        self.notification("turn/completed", &id)["turn"].clone()
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_chatgpt_token_goes_only_to_the_provider_it_was_given_for() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("Answered with the other provider's key."),
        Reply::text("Answered with the ChatGPT login."),
    ]))
    .unwrap();
    let url = mock.url();
    let args: Vec<String> = [
        "app-server".to_string(),
        "-c".into(),
        "model_provider=\"other\"".into(),
        "-c".into(),
        "model=\"mock-model\"".into(),
        // A second provider with its own key in the environment.
        "-c".into(),
        format!(
            "model_providers.other={{name=\"other\", base_url=\"{url}\", wire_api=\"chat\", env_key=\"ROUND3_OTHER_KEY\", retry_base_delay_ms=10}}"
        ),
        // The built-in openai provider (it requires OpenAI auth), at the mock.
        "-c".into(),
        format!("model_providers.openai={{base_url=\"{url}\", retry_base_delay_ms=10}}"),
        // A provider whose key nobody set.
        "-c".into(),
        format!(
            "model_providers.nokey={{name=\"nokey\", base_url=\"{url}\", wire_api=\"chat\", env_key=\"ROUND3_UNSET_KEY\", retry_base_delay_ms=10}}"
        ),
    ]
    .into();
    let mut server = AppServer::start(
        &repo,
        &args,
        &[("ROUND3_OTHER_KEY", OTHER_KEY)],
        &["OPENAI_API_KEY", "CODEX_API_KEY", "ROUND3_UNSET_KEY"],
    );
    server
        .request(
            "initialize",
            json!({"clientInfo": {"name": "round3", "version": "0"}}),
        )
        .expect("initialize");
    server.send(json!({"method": "initialized"}));
    server
        .request(
            "account/login/start",
            json!({"type": "chatgptAuthTokens", "accessToken": TOKEN, "chatgptAccountId": "acct-1"}),
        )
        .expect("login");
    let account = server.request("account/read", json!({})).unwrap();

    // A thread on the other provider: its own key.
    let turn = server.run_turn("other");
    assert_eq!(turn["status"], "completed", "{turn}");
    let sent = mock.model_requests()[0]
        .header("authorization")
        .map(String::from);
    assert_eq!(
        sent,
        Some(format!("Bearer {OTHER_KEY}")),
        "the other provider's request carried the wrong credential"
    );
    // A thread on the provider the token was given for: the token.
    let turn = server.run_turn("openai");
    assert_eq!(turn["status"], "completed", "{turn}");
    // A provider without a key: the missing-key error, never the token.
    let err = server
        .request(
            "thread/start",
            json!({"modelProvider": "nokey", "model": "mock-model"}),
        )
        .expect_err("a thread on a provider without a key opened");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("missing API key") && message.contains("ROUND3_UNSET_KEY"),
        "{err}"
    );
    drop(server);

    let reqs = mock.model_requests();
    let auth: Vec<(&str, Option<&str>)> = reqs
        .iter()
        .map(|r| (r.path.as_str(), r.header("authorization")))
        .collect();
    assert_eq!(
        auth,
        [
            (
                "/v1/chat/completions",
                Some(format!("Bearer {OTHER_KEY}").as_str())
            ),
            ("/v1/responses", Some(format!("Bearer {TOKEN}").as_str())),
        ],
        "each provider gets its own credential"
    );
    // The configured provider is `other`: the account it uses is its key, not the login.
    assert_eq!(account["account"]["type"], "apiKey", "{account}");
    // The token is in no header of any request but the openai provider's.
    for r in &mock.requests() {
        if r.path.ends_with("/responses") {
            continue;
        }
        for (name, value) in &r.headers {
            assert!(
                !value.contains(TOKEN),
                "{} carried the token in {name}",
                r.path
            );
        }
    }
}
