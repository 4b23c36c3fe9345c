//! A distinctive fake key never leaves the agent: not in the debug log, the session files,
//! stdout/stderr, or what the model is sent (outside the Authorization header), even when the
//! model makes commands print it, reads a file holding it, prints it itself, and the provider
//! echoes it back in a 401.

use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const KEY: &str = "sk-TEST-ABC123DISTINCT";
/// What must appear nowhere (a part of the key, so partial leaks count too).
const TELL: &str = "ABC123DISTINCT";

fn args(mock: &MockServer, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string()];
    a.extend(TestRepo::mock_config(&mock.url(), "chat"));
    a.extend([
        "-c".into(),
        "model_providers.mock.env_key=\"MOCK_KEY\"".into(),
        "--harness".into(),
        "native".into(),
    ]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn the_key_never_leaves_the_agent() {
    let repo = TestRepo::new();
    repo.write(".env", &format!("MOCK_KEY={KEY}\n"));
    let log = repo.home.path().join("agent.log");
    let log_s = log.display().to_string();
    let env = [
        ("MOCK_KEY", KEY),
        ("INTERPRETER_LOG", "debug"),
        ("INTERPRETER_LOG_FILE", log_s.as_str()),
    ];

    // Run 1: commands print the key (from the environment and from a file), a file read
    // returns it, and the model prints it itself, split across streamed chunks.
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call(
            "c1",
            "shell",
            json!({"command": "echo \"env: $MOCK_KEY\"; cat .env; echo \"Authorization: Bearer $(cut -d= -f2 .env)\""}),
        ),
        Reply::tool_call("c2", "read_file", json!({"path": ".env"})),
        Reply::default()
            .then_reasoning("The key is sk-TEST-ABC")
            .then_reasoning("123DISTINCT, noted.")
            .then_text("Your key is sk-TEST-AB")
            .then_text("C123DISTINCT and it works."),
    ]))
    .unwrap();
    let out1 = repo.run_with_env(&args(&mock, &["--json"]), "show me the key", &env);
    assert!(
        out1.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out1.stderr)
    );
    let reqs1 = mock.requests();
    assert_eq!(mock.model_requests().len(), 3);

    // The commands really ran and their output reached the model, redacted.
    let last = &mock.model_requests()[2].body;
    let tool_out: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(tool_out.len(), 2);
    assert!(
        tool_out[0].contains("MOCK_KEY=[REDACTED]")
            && tool_out[0].contains("Authorization: Bearer [REDACTED]"),
        "{}",
        tool_out[0]
    );
    // Commands do not even inherit the variable the key came from.
    assert!(tool_out[0].contains("env: \n"), "{}", tool_out[0]);
    assert!(
        tool_out[1].contains("MOCK_KEY=[REDACTED]"),
        "{}",
        tool_out[1]
    );
    let stdout1 = String::from_utf8_lossy(&out1.stdout);
    assert!(
        stdout1.contains("Your key is [REDACTED] and it works."),
        "{stdout1}"
    );

    // Run 2: the provider rejects the key and echoes it in the error body (human mode).
    let mock2 = MockServer::start_blocking(Script::new([Reply::error(
        401,
        format!("Incorrect API key provided: {KEY}. You can find your key at https://x"),
    )]))
    .unwrap();
    let out2 = repo.run_with_env(&args(&mock2, &[]), "hello", &env);
    assert!(!out2.status.success());
    let stderr2 = String::from_utf8_lossy(&out2.stderr);
    assert!(
        stderr2.contains("Incorrect API key provided: [REDACTED]"),
        "{stderr2}"
    );
    let reqs2 = mock2.requests();

    // Nowhere: stdout, stderr, the log, the session files, request bodies and other headers.
    let mut places: Vec<(String, String)> = vec![];
    for (n, o) in [("run 1", &out1), ("run 2", &out2)] {
        places.push((
            format!("{n} stdout"),
            String::from_utf8_lossy(&o.stdout).into(),
        ));
        places.push((
            format!("{n} stderr"),
            String::from_utf8_lossy(&o.stderr).into(),
        ));
    }
    let log_text = std::fs::read_to_string(&log).expect("the debug log was written");
    assert!(log_text.contains("DEBUG"), "the log is not at debug level");
    places.push(("log".into(), log_text));
    let sessions = files_under(&repo.home.path().join("sessions"));
    assert!(!sessions.is_empty(), "no session file was written");
    for f in &sessions {
        places.push((f.display().to_string(), std::fs::read_to_string(f).unwrap()));
        let mode = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", f.display());
    }
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the log file");
    for r in reqs1.iter().chain(&reqs2) {
        places.push((format!("request {} body", r.path), r.body.to_string()));
        for (name, value) in &r.headers {
            if name != "authorization" {
                places.push((format!("request header {name}"), value.clone()));
            }
        }
    }
    for (place, text) in &places {
        assert!(!text.contains(TELL), "the key leaked into {place}:\n{text}");
    }
    // The key was used where it belongs.
    assert_eq!(
        reqs1[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}
