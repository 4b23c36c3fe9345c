//! MCP servers (config or ACP) run in a process tree of their own, as commands do: what they
//! start ends with them, with the session and with the agent, even when it left their process
//! group and session.

use super::*;

/// A grandchild that left the server's process group and session (`setsid sleep`) is still
/// in the server's process tree: it ends when `exec` ends.
#[cfg(target_os = "linux")]
#[test]
fn an_mcp_servers_setsid_grandchild_does_not_outlive_exec() {
    let repo = TestRepo::new();
    let escaped = repo.home.path().join("escaped.pid");
    std::fs::write(
        repo.home.path().join("config.toml"),
        format!(
            "[mcp_servers.echo]\ncommand = '{ECHO}'\nargs = ['--setsid-child-pid-file', '{}']\nstartup_timeout_sec = 20\n",
            escaped.display()
        ),
    )
    .unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("done")])).unwrap();
    let out = repo.run(&exec_args(&mock, "mock-model"), "hi");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        tool_names(&mock.model_requests()[0].body).contains(&"echo__say".to_string()),
        "the server was not connected"
    );
    assert_gone(
        read_pid(&escaped),
        "the setsid grandchild of exec's MCP server",
    );
}

/// The same for ACP when its stdin closes, for a server that exits on EOF and for one that
/// ignores it.
#[cfg(target_os = "linux")]
#[test]
fn an_mcp_servers_setsid_grandchild_does_not_outlive_acp() {
    let repo = TestRepo::new();
    let mock =
        MockServer::start_blocking(Script::new([Reply::text("ok"), Reply::text("ok")])).unwrap();
    let mut agent = Agent::start(&repo, &mock, "workspace-write");
    agent.initialize();
    let cwd = canonical(repo.path());
    let polite = repo.home.path().join("polite.pid");
    let stubborn = repo.home.path().join("stubborn.pid");
    let servers = json!([
        stdio_server(
            "polite",
            &[
                "--setsid-child-pid-file".into(),
                polite.display().to_string()
            ],
            &[]
        ),
        stdio_server(
            "stubborn",
            &[
                "--setsid-child-pid-file".into(),
                stubborn.display().to_string(),
                "--linger".into()
            ],
            &[]
        ),
    ]);
    let sid = agent.new_session(&cwd, servers);
    assert_eq!(agent.prompt(&sid, "hi")["stopReason"], "end_turn");
    let (polite, stubborn) = (read_pid(&polite), read_pid(&stubborn));
    assert!(alive(polite) && alive(stubborn));
    agent.exit();
    assert_gone(
        polite,
        "the setsid grandchild of an MCP server that exits on EOF",
    );
    assert_gone(
        stubborn,
        "the setsid grandchild of an MCP server that ignores EOF",
    );
}
