//! Class 3, "special files stop checkpoints": a FIFO blocked `git hash-object` (exec never
//! ended, even on a text-only turn), a character device hung the turn, and a leftover UNIX
//! socket failed every checkpoint ("git was not available"). Now checkpoints open files
//! without blocking, check their type with fstat, and name what they skipped.

use super::*;
use mock_llm::{Reply, Script};
use serde_json::json;
use std::process::Command;

#[test]
fn fifos_devices_and_sockets_never_stop_a_turn_or_its_undo() {
    let repo = TestRepo::new();
    repo.write("a.txt", "before\n");
    let root = repo.path();
    assert!(
        Command::new("mkfifo")
            .arg(root.join("pipe"))
            .status()
            .unwrap()
            .success()
    );
    let _socket = std::os::unix::net::UnixListener::bind(root.join("left.sock")).unwrap();
    // A character device where the system lets us make one (root): /dev/zero's numbers.
    let device = Command::new("mknod")
        .args([root.join("zero").to_str().unwrap(), "c", "1", "5"])
        .status()
        .is_ok_and(|s| s.success());
    let mock = MockServer::start_blocking(Script::new([
        Reply::text("hello"),
        Reply::tool_call(
            "c1",
            "shell",
            json!({"command": "echo after > a.txt && mkfifo pipe2"}),
        ),
        Reply::text("done"),
    ]))
    .unwrap();
    let args = exec_args(
        &mock,
        &["--json", "--dangerously-bypass-approvals-and-sandbox"],
    );
    // A text-only turn, then one that changes a file: both end.
    let id = thread_id(&repo.run(&args, "say hello"));
    let mut resume = args.clone();
    resume.extend(["resume".to_string(), id.clone()]);
    let out = repo.run(&resume, "change a.txt");
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("cannot be undone"), "{stderr}");
    assert_eq!(repo.read("a.txt"), "after\n");
    let said = ok(&repo.run(&exec_args(&mock, &["undo", &id]), ""));
    assert!(said.starts_with("Undid the last turn."), "{said}");
    assert!(said.contains("- restored `a.txt`"), "{said}");
    // The FIFO the turn made is named, and left alone.
    assert!(said.contains("`pipe2`"), "{said}");
    assert!(said.contains("not a file"), "{said}");
    assert!(root.join("pipe2").exists());
    assert_eq!(repo.read("a.txt"), "before\n");
    if device {
        assert!(root.join("zero").exists());
    }
}
