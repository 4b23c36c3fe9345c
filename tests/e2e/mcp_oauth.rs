//! Issue 41's OAuth sign-in through the real binary, against the official MCP Python SDK
//! serving streamable HTTP behind its own OAuth authorization server
//! (`tests/mcp-python/oauth_server.py`): `mcp add --url`, `mcp login` with `$BROWSER` set to a
//! script that follows the redirects, a turn that calls the server's tool, a refresh, then
//! `mcp logout`, with `mcp list --json` at each step. And the sign-ins that must fail and save
//! nothing: a callback with the wrong `state`, a token endpoint that hangs.
//!
//! Needs the SDK in `.venv-mcp` (or `MCP_PYTHON`): ignored by default, scripts/test.sh installs
//! it and runs these with `--ignored`, and then a missing SDK is a failure.

use mock_llm::e2e::{TestRepo, exec_args, jsonl};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("MCP_PYTHON") {
        return PathBuf::from(p);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let p = if cfg!(windows) {
        root.join(".venv-mcp/Scripts/python.exe")
    } else {
        root.join(".venv-mcp/bin/python")
    };
    assert!(
        p.exists(),
        "the MCP Python SDK is not installed: python3 -m venv .venv-mcp && .venv-mcp/bin/pip install -r tests/mcp-python/requirements.txt (or set MCP_PYTHON)"
    );
    p
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("mcp-python")
        .join(name)
}

/// The SDK's server, killed when dropped.
struct OAuthServer {
    child: Child,
    url: String,
    log: PathBuf,
}

impl OAuthServer {
    fn start(dir: &Path, extra: &[&str]) -> OAuthServer {
        let port_file = dir.join("port");
        let log = dir.join("oauth.log");
        let child = Command::new(python())
            .arg(script("oauth_server.py"))
            .arg(&port_file)
            .arg(&log)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the MCP SDK server");
        let mut server = OAuthServer {
            child,
            url: String::new(),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !port_file.exists() {
            assert!(Instant::now() < deadline, "the SDK server did not start");
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("the SDK server exited: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let port = std::fs::read_to_string(&port_file).unwrap();
        server.url = format!("http://127.0.0.1:{}/mcp", port.trim());
        server
    }

    /// The OAuth events the server saw, in order.
    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `$BROWSER` that follows the redirects of the authorization URL (`follow`), or one that
/// sends the callback back with another `state` (`forge`).
fn browser(dir: &Path, mode: &str) -> PathBuf {
    let path = dir.join(format!("browser-{mode}"));
    let text = format!(
        "#!/bin/sh\nexec '{}' '{}' {mode} \"$1\"\n",
        python().display(),
        script("browser.py").display()
    );
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

fn run(repo: &TestRepo, args: &[String], browser: Option<&Path>) -> Output {
    let home = repo.home.path().display().to_string();
    let b = browser.map(|b| b.display().to_string()).unwrap_or_default();
    repo.run_with_env(
        args,
        "",
        &[("HOME", home.as_str()), ("BROWSER", b.as_str())],
    )
}

fn mcp(repo: &TestRepo, args: &[&str], browser: Option<&Path>) -> Output {
    let mut all = vec!["mcp".to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    run(repo, &all, browser)
}

fn auth_status(repo: &TestRepo) -> String {
    let out = mcp(repo, &["list", "--json"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    all[0]["auth_status"].as_str().unwrap().to_string()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// One exec turn that calls `docs__lookup`, then answers.
fn turn(repo: &TestRepo) -> (Output, MockServer) {
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "docs__lookup", json!({"topic": "rust"})),
        Reply::text("done"),
    ]))
    .unwrap();
    let mut args = exec_args(&mock.url(), &["--json", "-s", "danger-full-access"]);
    args.push("look it up".into());
    (run(repo, &args, None), mock)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn access_token(repo: &TestRepo) -> String {
    let text = std::fs::read_to_string(repo.home.path().join(".credentials.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    let (_, entry) = all.as_object().unwrap().iter().next().unwrap();
    entry["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
#[ignore = "needs the MCP Python SDK; scripts/test.sh runs it with --ignored"]
fn add_login_call_refresh_and_logout_against_the_sdks_oauth_server() {
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().unwrap();
    // Four-second tokens: the second turn, five seconds later, must refresh.
    let server = OAuthServer::start(dir.path(), &["--token-ttl", "4"]);
    std::fs::write(
        repo.home.path().join("config.toml"),
        "# my settings\nmcp_oauth_credentials_store = \"file\"\n",
    )
    .unwrap();

    let out = mcp(&repo, &["add", "docs", "--url", &server.url], None);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(auth_status(&repo), "not_logged_in");

    // Before the sign-in the server answers 401: the session starts without it.
    let (out, _) = turn(&repo);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("`docs` needs a login: run `interpreter mcp login docs`"),
        "{}",
        text(&out)
    );

    let follow = browser(dir.path(), "follow");
    let out = mcp(&repo, &["login", "docs"], Some(&follow));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("/authorize?"), "the URL is printed: {said}");
    assert!(said.contains("Successfully logged in"), "{said}");
    assert_eq!(auth_status(&repo), "o_auth");
    let events = server.events();
    let authorize = events.iter().find(|e| e["event"] == "authorize").unwrap();
    assert_eq!(
        authorize["resource"],
        server.url.as_str(),
        "RFC 8707 resource"
    );
    assert!(events.iter().any(|e| e["event"] == "register"));
    let first_token = access_token(&repo);

    let (out, mock) = turn(&repo);
    assert!(out.status.success(), "{}", text(&out));
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 2, "{}", text(&out));
    assert!(
        reqs[1].body.to_string().contains("docs on rust: signed in"),
        "the tool's answer reached the model: {}",
        reqs[1].body
    );

    // Past the token's life: the session refreshes it, and saves the new one.
    std::thread::sleep(Duration::from_secs(5));
    let (out, mock) = turn(&repo);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        mock.model_requests()[1]
            .body
            .to_string()
            .contains("docs on rust: signed in"),
        "{}",
        text(&out)
    );
    assert!(
        server
            .events()
            .iter()
            .any(|e| e["event"] == "token" && e["grant"] == "refresh_token"),
        "{:?}",
        server.events()
    );
    let refreshed = access_token(&repo);
    assert_ne!(refreshed, first_token);

    // No token anywhere but the credentials file: not config.toml, a session, or the output.
    for path in files_under(repo.home.path()) {
        if path.file_name().is_some_and(|n| n == ".credentials.json") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let content = String::from_utf8_lossy(&bytes);
        for token in [&first_token, &refreshed] {
            assert!(
                !content.contains(token.as_str()),
                "a token in {}",
                path.display()
            );
        }
    }
    assert!(!text(&out).contains(&refreshed));
    let config = std::fs::read_to_string(repo.home.path().join("config.toml")).unwrap();
    assert!(config.starts_with("# my settings\n"), "{config}");

    let out = mcp(&repo, &["logout", "docs"], None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("Removed OAuth credentials"),
        "{}",
        text(&out)
    );
    assert_eq!(auth_status(&repo), "not_logged_in");
    let out = mcp(&repo, &["logout", "docs"], None);
    assert!(
        text(&out).contains("No OAuth credentials"),
        "{}",
        text(&out)
    );

    let (out, _) = turn(&repo);
    assert!(out.status.success(), "{}", text(&out));
    let errors: Vec<Value> = jsonl(&out)
        .into_iter()
        .filter(|e| e["type"] == "error")
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e["message"].as_str().unwrap().contains("needs a login")),
        "{errors:?}"
    );
}

#[test]
#[ignore = "needs the MCP Python SDK; scripts/test.sh runs it with --ignored"]
fn a_forged_callback_or_a_hanging_token_endpoint_saves_nothing() {
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.home.path().join("config.toml"),
        "mcp_oauth_credentials_store = \"file\"\n",
    )
    .unwrap();
    let server = OAuthServer::start(dir.path(), &[]);
    let out = mcp(&repo, &["add", "docs", "--url", &server.url], None);
    assert!(out.status.success(), "{}", text(&out));

    let forge = browser(dir.path(), "forge");
    let out = mcp(&repo, &["login", "docs"], Some(&forge));
    assert!(!out.status.success());
    assert!(
        text(&out).contains("a sign-in this login did not start"),
        "{}",
        text(&out)
    );
    assert!(!repo.home.path().join(".credentials.json").exists());
    assert_eq!(auth_status(&repo), "not_logged_in");
    drop(server);

    let hang_dir = tempfile::tempdir().unwrap();
    let server = OAuthServer::start(hang_dir.path(), &["--hang-token"]);
    let out = mcp(
        &repo,
        &["add", "docs", "--url", &server.url, "--force"],
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    let follow = browser(dir.path(), "follow");
    let started = Instant::now();
    let out = mcp(&repo, &["login", "docs"], Some(&follow));
    assert!(!out.status.success());
    assert!(text(&out).contains("signing in to"), "{}", text(&out));
    assert!(
        server.events().iter().any(|e| e["event"] == "token-hang"),
        "{:?}",
        server.events()
    );
    assert!(started.elapsed() < Duration::from_secs(120));
    assert!(!repo.home.path().join(".credentials.json").exists());
    assert_eq!(auth_status(&repo), "not_logged_in");
    drop(server);

    // Metadata that redirects to another origin (here another port) is not followed.
    let elsewhere = OAuthServer::start(tempfile::tempdir().unwrap().path(), &[]);
    let origin = elsewhere.url.trim_end_matches("/mcp").to_string();
    let redirect_dir = tempfile::tempdir().unwrap();
    let server = OAuthServer::start(
        redirect_dir.path(),
        &["--redirect-metadata-to", origin.as_str()],
    );
    let out = mcp(
        &repo,
        &["add", "docs", "--url", &server.url, "--force"],
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = mcp(&repo, &["login", "docs"], Some(&follow));
    assert!(!out.status.success());
    assert!(
        server
            .events()
            .iter()
            .any(|e| e["event"] == "metadata-redirect"),
        "{:?}",
        server.events()
    );
    assert!(elsewhere.events().is_empty(), "{:?}", elsewhere.events());
    assert!(text(&out).contains("discovery failed"), "{}", text(&out));
    assert!(!repo.home.path().join(".credentials.json").exists());
}

#[test]
#[ignore = "needs the MCP Python SDK; scripts/test.sh runs it with --ignored"]
fn add_in_a_terminal_signs_in_at_once_as_codex_does() {
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().unwrap();
    // The default store, `auto`, with no Secret Service to answer: the tokens go to the file.
    let server = OAuthServer::start(dir.path(), &[]);
    let follow = browser(dir.path(), "follow");
    // `script` gives the command a terminal, as a user's shell would.
    let line = format!(
        "'{}' mcp add docs --url '{}'",
        mock_llm::e2e::interpreter_bin().display(),
        server.url
    );
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(repo.path())
        .env("OPENINTERPRETER_HOME", repo.home.path())
        .env("HOME", repo.home.path())
        .env("BROWSER", &follow)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .stdin(Stdio::null())
        .output()
        .expect("run script(1)");
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Detected OAuth support"), "{said}");
    assert!(said.contains("Successfully logged in"), "{said}");
    assert_eq!(auth_status(&repo), "o_auth");
    #[cfg(target_os = "linux")]
    assert!(repo.home.path().join(".credentials.json").exists());

    // Without a terminal (a script, CI) it only adds.
    let out = mcp(
        &repo,
        &["add", "other", "--url", &server.url],
        Some(&follow),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("OAuth"), "{}", text(&out));
}
