//! Class 10, "network off has a hole": an MPTCP socket (`IPPROTO_MPTCP`, as `curl --mptcp`
//! makes) connected to a 127.0.0.1 listener in workspace-write and read-only, past Landlock's
//! TCP rules. Now a seccomp filter refuses every socket but a UNIX one when the network is off.

use super::*;
use mock_llm::{Reply, Script};
use serde_json::json;

#[test]
fn an_mptcp_socket_is_refused_when_the_network_is_off() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = format!(
        "python3 -c 'import socket\ntry:\n s = socket.socket(2, 1, 262); s.connect((\"127.0.0.1\", {port})); print(\"connected\")\nexcept OSError as e:\n print(\"refused\", e.errno)'"
    );
    for sandbox in ["read-only", "workspace-write"] {
        let repo = TestRepo::new();
        let mock = MockServer::start_blocking(Script::new([
            Reply::tool_call("c1", "shell", json!({"command": probe})),
            Reply::text("done"),
        ]))
        .unwrap();
        let out = repo.run(&exec_args(&mock, &["--json", "-s", sandbox]), "connect");
        let said = command_outputs(&out);
        assert!(said.contains("refused 1"), "{sandbox}: {said}");
        assert!(
            listener.accept().is_err(),
            "{sandbox}: a connection reached the listener"
        );
    }
}
