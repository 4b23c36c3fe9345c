//! What the fuzz targets share: an isolated home folder whose provider points at a closed
//! loopback port (no fuzz input can reach the network or the user's config), and one runtime.

use std::path::PathBuf;
use std::sync::OnceLock;

/// A port nothing listens on: a model request is refused at once.
pub const DEAD_BASE_URL: &str = "http://127.0.0.1:9/v1";

/// The scratch folder of this fuzzing process: `home/` (config.toml, sessions) and `ws/` (a
/// workspace the seeds use as `cwd`).
pub fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| std::env::temp_dir().join("interpreter-fuzz"))
}

/// Sets up the scratch home and points the process at it. Call once, from `init:`, before any
/// thread starts.
pub fn init_home() {
    let root = scratch();
    let home = root.join("home");
    let ws = root.join("ws");
    std::fs::create_dir_all(&home).expect("creating the fuzz home");
    std::fs::create_dir_all(&ws).expect("creating the fuzz workspace");
    std::fs::write(ws.join("hello.txt"), "hello\nworld\n").expect("writing the fuzz workspace");
    let config = format!(
        r#"model_provider = "fuzz"
model = "fuzz-model"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.fuzz]
name = "Fuzz"
base_url = "{DEAD_BASE_URL}"
api_key = "fuzz-not-a-key"
request_max_retries = 0
stream_max_retries = 0
connect_timeout_ms = 200
request_timeout_ms = 2000
stream_idle_timeout_ms = 2000
"#
    );
    std::fs::write(home.join("config.toml"), config).expect("writing the fuzz config");
    // SAFETY: called from libFuzzer's initializer, before the runtime or any thread exists.
    unsafe {
        std::env::set_var("OPENINTERPRETER_HOME", &home);
        std::env::remove_var("CODEX_HOME");
        // MCP servers are stripped from the input (see `strip_mcp_servers`); an empty PATH is
        // a second guard against a fuzz input naming a program to start.
        std::env::set_var("PATH", root.join("no-programs"));
        for var in [
            "OPENINTERPRETER_PROVIDER",
            "OPENINTERPRETER_MODEL",
            "OPENINTERPRETER_HARNESS",
        ] {
            std::env::remove_var(var);
        }
    }
}

/// Removes what one input left in the home folder (session logs), so every input starts from
/// the same state and a crash reproduces from its input alone.
pub fn reset_home() {
    let _ = std::fs::remove_dir_all(scratch().join("home").join("sessions"));
}

/// One runtime for every input: building a multi-thread runtime per input would dominate.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("building the fuzz runtime")
    })
}

/// Empties every `mcpServers` array in a JSON-RPC line, so a fuzz input cannot start a
/// program or open a connection through `session/new|load|resume`. A line that is not JSON
/// is passed as it is (the agent's parser sees it unchanged); a changed line is re-encoded.
pub fn strip_mcp_servers(line: &[u8]) -> Option<Vec<u8>> {
    let mut v: serde_json::Value = serde_json::from_slice(line).ok()?;
    if !strip_value(&mut v) {
        return None;
    }
    serde_json::to_vec(&v).ok()
}

fn strip_value(v: &mut serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(map) => {
            let mut changed = false;
            for (key, value) in map.iter_mut() {
                if key == "mcpServers" {
                    // Re-encode even when already empty: the raw text may repeat the key.
                    *value = serde_json::Value::Array(Vec::new());
                    changed = true;
                } else {
                    changed |= strip_value(value);
                }
            }
            changed
        }
        serde_json::Value::Array(items) => {
            let mut changed = false;
            for item in items {
                changed |= strip_value(item);
            }
            changed
        }
        _ => false,
    }
}
