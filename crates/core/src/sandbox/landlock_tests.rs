//! Landlock on the running kernel, through the real command runner. Skipped (with the reason
//! printed) where the kernel has no Landlock, unless `INTERPRETER_REQUIRE_LANDLOCK=1` (set by
//! CI when the kernel reports a Landlock ABI) turns every skip into a failure.

use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use super::{Confinement, Support};
use crate::tools::exec::{ExecResult, run_command_confined};

fn landlock_or_skip(test: &str) -> Option<u32> {
    match super::prepared::detect() {
        Support::Landlock { abi } => Some(abi),
        Support::Unavailable { reason } => {
            skip(test, reason);
            None
        }
        Support::Seatbelt => unreachable!("Seatbelt is macOS's"),
    }
}

/// Prints why `test` is skipped, or fails it when skipping is not allowed.
fn skip(test: &str, reason: &str) {
    if std::env::var_os("INTERPRETER_REQUIRE_LANDLOCK").is_some_and(|v| v == "1") {
        panic!("{test} would be skipped ({reason}), but INTERPRETER_REQUIRE_LANDLOCK=1");
    }
    eprintln!("skipping {test}: {reason}");
}

/// Folders outside `/tmp` (which workspace-write may write): under the build's target dir.
/// Next to the test binary, unless that is under a temp folder the sandbox allows (a
/// checkout in /tmp): then /var/tmp.
fn scratch() -> tempfile::TempDir {
    let exe = std::env::current_exe().expect("current_exe");
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let near = canon(exe.parent().expect("test binary folder"));
    let temps = [
        canon(Path::new("/tmp")),
        canon(Path::new("/dev/shm")),
        canon(&std::env::temp_dir()),
    ];
    let base = if temps.iter().any(|t| near.starts_with(t)) {
        std::path::PathBuf::from("/var/tmp")
    } else {
        near
    };
    tempfile::tempdir_in(&base).expect("scratch dir")
}

async fn run(c: Option<&Confinement>, cwd: &Path, command: &str) -> ExecResult {
    run_command_confined(
        command,
        cwd,
        Duration::from_secs(20),
        &CancellationToken::new(),
        c,
        crate::config::DEFAULT_MAX_PROCESSES,
        |_| {},
    )
    .await
    .expect("the command starts")
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap()
}

#[tokio::test]
async fn workspace_write_confines_writes_to_the_roots_and_temp() {
    let Some(abi) = landlock_or_skip("workspace_write_confines_writes_to_the_roots_and_temp")
    else {
        return;
    };
    let base = scratch();
    let ws = base.path().join("ws");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "original\n").unwrap();
    let c = Confinement::workspace_write(&[canon(&ws)], &[], false);

    let r = run(
        Some(&c),
        &ws,
        "echo in > inside.txt && mkdir -p sub && echo deep > sub/f && mv sub/f moved && echo ok",
    )
    .await;
    assert_eq!(r.exit_code, Some(0), "{}", r.output);
    assert_eq!(
        std::fs::read_to_string(ws.join("inside.txt")).unwrap(),
        "in\n"
    );
    assert_eq!(std::fs::read_to_string(ws.join("moved")).unwrap(), "deep\n");

    let target = outside.join("escape.txt");
    let r = run(Some(&c), &ws, &format!("echo x > {}", target.display())).await;
    assert_ne!(r.exit_code, Some(0));
    assert!(r.output.contains("Permission denied"), "{}", r.output);
    assert!(!target.exists());
    // Existing files outside: no overwrite, truncate, append, delete or rename.
    let keep = outside.join("keep.txt");
    let mut attempts = vec![
        format!("echo x > {}", keep.display()),
        format!("echo x >> {}", keep.display()),
        format!("rm -f {}", keep.display()),
        format!("mv {} {}/stolen", keep.display(), ws.display()),
        format!("ln -s /etc/passwd {}/link", outside.display()),
        format!("mkdir {}/newdir", outside.display()),
    ];
    if abi >= 3 {
        attempts.push(format!("truncate -s 0 {}", keep.display()));
    }
    for cmd in attempts {
        let r = run(Some(&c), &ws, &cmd).await;
        assert_ne!(r.exit_code, Some(0), "{cmd} succeeded: {}", r.output);
    }
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "original\n");
    let mut names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["keep.txt"]);

    // Temp folders, devices and reading everywhere still work.
    let r = run(
        Some(&c),
        &ws,
        "t=$(mktemp) && echo tmp > $t && cat $t && rm $t && echo quiet > /dev/null && \
         echo out > /dev/stdout && echo err > /dev/stderr && head -c 4 /dev/zero | wc -c && \
         cat /etc/hostname > /dev/null && ls / > /dev/null && echo done",
    )
    .await;
    assert_eq!(r.exit_code, Some(0), "{}", r.output);
    assert!(
        r.output.contains("tmp") && r.output.contains("done"),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn read_only_blocks_every_write() {
    if landlock_or_skip("read_only_blocks_every_write").is_none() {
        return;
    }
    let base = scratch();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    let c = Confinement::read_only();
    let tmp_target = std::env::temp_dir().join(format!("ro-probe-{}", std::process::id()));
    for cmd in [
        "echo x > new.txt".to_string(),
        "echo x >> a.txt".to_string(),
        "rm a.txt".to_string(),
        "mkdir d".to_string(),
        // (Timestamps and modes of existing files are not something Landlock restricts.)
        "touch b.txt".to_string(),
        "ln -s a.txt c.txt".to_string(),
        format!("echo x > {}", tmp_target.display()),
    ] {
        let r = run(Some(&c), &ws, &cmd).await;
        assert_ne!(r.exit_code, Some(0), "{cmd} succeeded: {}", r.output);
    }
    assert!(!tmp_target.exists());
    let mut names: Vec<_> = std::fs::read_dir(&ws)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["a.txt"]);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "a\n");
    let r = run(
        Some(&c),
        &ws,
        "cat a.txt && ls && echo x > /dev/null && git --version > /dev/null; echo end",
    )
    .await;
    assert!(
        r.output.contains("a\n") && r.output.contains("end"),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn network_is_off_unless_enabled() {
    let Some(abi) = landlock_or_skip("network_is_off_unless_enabled") else {
        return;
    };
    if abi < 4 {
        skip(
            "network_is_off_unless_enabled",
            &format!("Landlock ABI {abi} cannot restrict TCP"),
        );
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = scratch();
    let ws = canon(base.path());
    let probe = format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo connected");
    for c in [
        Confinement::read_only(),
        Confinement::workspace_write(std::slice::from_ref(&ws), &[], false),
    ] {
        let r = run(Some(&c), &ws, &probe).await;
        assert!(!r.output.contains("connected"), "{:?}: {}", c, r.output);
    }
    let open = Confinement::workspace_write(std::slice::from_ref(&ws), &[], true);
    let r = run(Some(&open), &ws, &probe).await;
    assert!(r.output.contains("connected"), "{}", r.output);
    let r = run(None, &ws, &probe).await;
    assert!(r.output.contains("connected"), "{}", r.output);
}

/// Landlock covers TCP only: with the network off, the seccomp filter refuses every socket
/// but a UNIX one (MPTCP as `curl --mptcp` makes, UDP, raw) and io_uring.
#[tokio::test]
async fn network_off_refuses_every_socket_but_unix() {
    if landlock_or_skip("network_off_refuses_every_socket_but_unix").is_none() {
        return;
    }
    let base = scratch();
    let ws = canon(base.path());
    // IPPROTO_MPTCP is 262; each line says whether the socket could be made.
    let probe = r#"python3 -c '
import socket
for name, args in [("mptcp", (2, 1, 262)), ("udp", (2, 2, 0)), ("tcp6", (10, 1, 0)), ("netlink", (16, 3, 0)), ("unix", (1, 1, 0))]:
    try:
        socket.socket(*args).close(); print(name, "made")
    except OSError as e:
        print(name, "refused", e.errno)
'"#;
    let closed = [
        Confinement::read_only(),
        Confinement::workspace_write(std::slice::from_ref(&ws), &[], false),
    ];
    for c in &closed {
        let r = run(Some(c), &ws, probe).await;
        for name in ["mptcp", "udp", "tcp6", "netlink"] {
            assert!(
                r.output.contains(&format!("{name} refused 1")),
                "{c:?}: {}",
                r.output
            );
        }
        assert!(r.output.contains("unix made"), "{c:?}: {}", r.output);
    }
    let open = Confinement::workspace_write(std::slice::from_ref(&ws), &[], true);
    let r = run(Some(&open), &ws, probe).await;
    assert!(r.output.contains("udp made"), "{}", r.output);
}

#[tokio::test]
async fn commands_cannot_signal_the_agent() {
    let Some(abi) = landlock_or_skip("commands_cannot_signal_the_agent") else {
        return;
    };
    if abi < 6 {
        skip(
            "commands_cannot_signal_the_agent",
            &format!("Landlock ABI {abi} has no scopes"),
        );
        return;
    }
    let base = scratch();
    let ws = canon(base.path());
    let c = Confinement::workspace_write(std::slice::from_ref(&ws), &[], false);
    // Signal 0 only checks permission: it would succeed on our own process unconfined.
    let cmd = format!("kill -0 {} && echo reached", std::process::id());
    let r = run(Some(&c), &ws, &cmd).await;
    assert!(!r.output.contains("reached"), "{}", r.output);
    let r = run(None, &ws, &cmd).await;
    assert!(r.output.contains("reached"), "{}", r.output);
    // Nor its keeper, which stays outside the sandbox to end the command's tree.
    let r = run(Some(&c), &ws, "kill -0 $PPID && echo reached").await;
    assert!(!r.output.contains("reached"), "{}", r.output);
    // Its own children are inside the sandbox and can be signalled.
    let r = run(Some(&c), &ws, "sleep 5 & kill $! && echo killed").await;
    assert!(r.output.contains("killed"), "{}", r.output);
}

/// A confined command reads `.git` and the agent's home inside the workspace but writes
/// neither; the rest of the workspace, its root included, stays writable.
#[tokio::test]
async fn git_folders_and_the_agent_home_are_read_only_inside_the_workspace() {
    if landlock_or_skip("git_folders_and_the_agent_home_are_read_only_inside_the_workspace")
        .is_none()
    {
        return;
    }
    let base = scratch();
    let ws = canon(base.path());
    for d in [".git/hooks", ".openinterpreter", "src"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join(".openinterpreter/config.toml"), "").unwrap();
    super::protect::protect_home(&ws.join(".openinterpreter"));
    let c = Confinement::workspace_write(std::slice::from_ref(&ws), &[], false);
    let probe = "for f in .git/config .git/hooks/pre-commit .openinterpreter/config.toml src/a top; do \
                 if echo x >> $f 2>/dev/null; then echo \"$f written\"; else echo \"$f refused\"; fi; done; \
                 cat .git/config >/dev/null && echo read";
    let r = run(Some(&c), &ws, probe).await;
    for f in [
        ".git/config",
        ".git/hooks/pre-commit",
        ".openinterpreter/config.toml",
    ] {
        assert!(r.output.contains(&format!("{f} refused")), "{}", r.output);
    }
    assert!(r.output.contains("src/a written"), "{}", r.output);
    assert!(r.output.contains("read"), "{}", r.output);
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    // The workspace root itself keeps its rights where a mount namespace can be made.
    if super::mountns::MountPlan::new(&[]).unwrap().is_some() {
        assert!(r.output.contains("top written"), "{}", r.output);
    }
}
