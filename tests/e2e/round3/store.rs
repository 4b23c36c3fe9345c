//! Class 7, "the checkpoint store is neither bounded nor private": with `undo_turns = 1` it
//! held 24.8 MB after six turns on a 4.1 MB workspace, and a 0600 `secrets.env` became a 0444
//! object in a 755 home. Now a ref names each undoable turn's snapshots, what none needs is
//! collected, and the home, the store's folders (0700) and its files (0600) are private.

use super::*;
use mock_llm::{Reply, Script};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn size_and_modes(dir: &Path, total: &mut u64, loose: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let meta = e.metadata().unwrap();
        let mode = meta.permissions().mode() & 0o777;
        if meta.is_dir() {
            if mode != 0o700 {
                loose.push(format!("{} {mode:o}", e.path().display()));
            }
            size_and_modes(&e.path(), total, loose);
        } else {
            *total += meta.len();
            if mode & 0o077 != 0 {
                loose.push(format!("{} {mode:o}", e.path().display()));
            }
        }
    }
}

#[test]
fn six_turns_with_one_undoable_keep_the_store_small_and_private() {
    let repo = TestRepo::new();
    std::fs::set_permissions(repo.home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut random = Vec::new();
    for i in 0..4u64 {
        // Incompressible megabytes.
        let mut x = 0x9e3779b97f4a7c15u64.wrapping_mul(i + 1);
        let bytes: Vec<u8> = (0..1 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        std::fs::write(repo.path().join(format!("f{i}.bin")), &bytes).unwrap();
        random.push(bytes);
    }
    repo.write("secrets.env", "TOKEN=hunter2\n");
    std::fs::set_permissions(
        repo.path().join("secrets.env"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let mut replies = Vec::new();
    for turn in 0..6 {
        // Each turn rewrites one megabyte with new random bytes.
        let cmd = format!("head -c 1048576 /dev/urandom > f{}.bin", turn % 4);
        replies.push(Reply::tool_call("c1", "shell", json!({"command": cmd})));
        replies.push(Reply::text("done"));
    }
    let mock = MockServer::start_blocking(Script::new(replies)).unwrap();
    let args = exec_args(
        &mock,
        &[
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "-c",
            "undo_turns=1",
        ],
    );
    let id = thread_id(&repo.run(&args, "turn 0"));
    for turn in 1..6 {
        let mut resume = args.clone();
        resume.extend(["resume".to_string(), id.clone()]);
        ok(&repo.run(&resume, &format!("turn {turn}")));
    }
    let store = repo.home.path().join("checkpoints");
    let (mut total, mut loose) = (0, Vec::new());
    size_and_modes(&store, &mut total, &mut loose);
    let workspace: u64 = 4 << 20;
    assert!(
        total < 3 * workspace,
        "the store holds {total} bytes for a {workspace}-byte workspace"
    );
    assert!(loose.is_empty(), "readable by others: {loose:?}");
    let home_mode = std::fs::metadata(repo.home.path())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(home_mode, 0o700);
    let store_mode = std::fs::metadata(&store).unwrap().permissions().mode() & 0o777;
    assert_eq!(store_mode, 0o700);
}
