//! ACP message framing and dispatch: arbitrary bytes as the agent's stdin, through the same
//! line transport and handler table as `interpreter acp` (`frontend::acp::serve_on` with
//! `transport::transport`, in process), then one probe request that must still be answered.
//!
//! The agent's home is a scratch folder whose provider is a closed loopback port, and
//! `mcpServers` are emptied from every line (fuzz input must not start programs); see
//! `interpreter_fuzz::strip_mcp_servers`.
#![no_main]

use futures::{SinkExt, StreamExt};
use interpreter_core::config::Overrides;
use interpreter_acp::{serve_on, transport};
use libfuzzer_sys::fuzz_target;

const PROBE: &[u8] = br#"{"jsonrpc":"2.0","id":"fuzz-probe","method":"session/list","params":{}}"#;

fuzz_target!(init: interpreter_fuzz::init_home(), |data: &[u8]| {
    let mut input = Vec::with_capacity(data.len() + PROBE.len() + 2);
    for line in data.split_inclusive(|&b| b == b'\n') {
        match interpreter_fuzz::strip_mcp_servers(line) {
            Some(stripped) => {
                input.extend_from_slice(&stripped);
                input.push(b'\n');
            }
            None => input.extend_from_slice(line),
        }
    }
    if !input.is_empty() && !input.ends_with(b"\n") {
        input.push(b'\n');
    }
    input.extend_from_slice(PROBE);
    input.push(b'\n');

    let (tx, rx) = futures::channel::mpsc::unbounded::<String>();
    let sink = tx.sink_map_err(|e| std::io::Error::other(e.to_string()));
    let rt = interpreter_fuzz::runtime();
    let (status, lines) = rt.block_on(async move {
        let status = serve_on(
            Overrides::default(),
            transport::transport(std::io::Cursor::new(input), sink),
        )
        .await;
        (status, rx.collect::<Vec<String>>().await)
    });
    interpreter_fuzz::reset_home();

    assert_eq!(status, 0, "the connection ended with an error");
    let answered = lines.iter().any(|line| {
        serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|v| v.get("id").and_then(|id| id.as_str()) == Some("fuzz-probe"))
    });
    assert!(answered, "the probe request after the input went unanswered");
});
