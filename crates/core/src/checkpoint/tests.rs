use super::*;
use mock_llm::e2e::git;
use proptest::prelude::*;

fn far() -> &'static Limit {
    static FAR: std::sync::OnceLock<Limit> = std::sync::OnceLock::new();
    FAR.get_or_init(|| {
        Limit::new(
            Instant::now() + Duration::from_secs(3600),
            Default::default(),
        )
    })
}

impl Checkpoints {
    /// A snapshot's id (the session `t`, no other roots).
    fn snap(&mut self) -> String {
        self.snapshot("t", &[], far()).unwrap().id
    }
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn read(root: &Path, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(root.join(rel)).ok()
}

#[cfg(unix)]
fn mode(root: &Path, rel: &str) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(root.join(rel))
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

#[cfg(unix)]
fn chmod(root: &Path, rel: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A turn's changes, then the user's, then undo: the turn's are gone, the user's stay.
fn turn_then_undo(root: &Path, home: &Path) {
    write(root, "crlf.txt", b"one\r\ntwo\r\n");
    write(root, "unrelated.txt", b"mine\n");
    write(root, "doomed.txt", b"delete me\n");
    write(root, "also-agents.txt", b"before\n");
    #[cfg(unix)]
    {
        write(root, "run.sh", b"#!/bin/sh\necho hi\n");
        chmod(root, "run.sh", 0o755);
        std::os::unix::fs::symlink("crlf.txt", root.join("link")).unwrap();
    }
    let mut cp = Checkpoints::open(home, root).unwrap();
    let before = cp.snap();
    // The turn: a patch, a new file, a command that creates, deletes and changes a mode.
    write(root, "crlf.txt", b"one\r\nTWO\r\n");
    write(root, "added.txt", b"new\n");
    write(root, "made-by-command.txt", b"out\n");
    std::fs::remove_file(root.join("doomed.txt")).unwrap();
    write(root, "also-agents.txt", b"agent\n");
    #[cfg(unix)]
    {
        chmod(root, "run.sh", 0o644);
        std::fs::remove_file(root.join("link")).unwrap();
        std::os::unix::fs::symlink("added.txt", root.join("link")).unwrap();
    }
    let after = cp.snap();
    // The user, after the turn: an unrelated file and one of the agent's.
    write(root, "unrelated.txt", b"mine, edited\n");
    write(root, "also-agents.txt", b"the user's\n");
    let report = cp.restore(&before, &after, &Default::default()).unwrap();
    assert_eq!(read(root, "crlf.txt").unwrap(), b"one\r\ntwo\r\n");
    assert_eq!(read(root, "doomed.txt").unwrap(), b"delete me\n");
    assert_eq!(read(root, "added.txt"), None);
    assert_eq!(read(root, "made-by-command.txt"), None);
    assert_eq!(read(root, "unrelated.txt").unwrap(), b"mine, edited\n");
    assert_eq!(read(root, "also-agents.txt").unwrap(), b"the user's\n");
    assert_eq!(
        report.skipped,
        [(
            "also-agents.txt".to_string(),
            "changed after the turn; kept".to_string()
        )]
    );
    assert!(
        report.removed.contains(&"added.txt".to_string()),
        "{report:?}"
    );
    assert!(
        report.restored.contains(&"doomed.txt".to_string()),
        "{report:?}"
    );
    #[cfg(unix)]
    {
        assert_eq!(mode(root, "run.sh"), 0o755);
        assert_eq!(
            std::fs::read_link(root.join("link")).unwrap(),
            PathBuf::from("crlf.txt")
        );
    }
}

#[test]
fn undo_restores_the_turn_and_keeps_the_users_edits_outside_git() {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    turn_then_undo(root.path(), home.path());
}

#[test]
fn undo_in_a_repository_leaves_its_index_head_and_refs_alone() {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let r = root.path();
    git(r, &["init", "-q"]);
    write(r, "tracked.txt", b"v1\n");
    write(r, ".gitignore", b"target/\n");
    git(r, &["add", "."]);
    git(r, &["commit", "-qm", "first"]);
    write(r, "tracked.txt", b"v2 staged\n");
    git(r, &["add", "tracked.txt"]);
    write(r, "target/big.o", b"ignored build output\n");
    let head = git(r, &["rev-parse", "HEAD"]);
    let index = std::fs::read(r.join(".git/index")).unwrap();
    let refs = git(r, &["for-each-ref"]);
    let objects_before = git(r, &["count-objects"]);
    turn_then_undo(r, home.path());
    assert_eq!(git(r, &["rev-parse", "HEAD"]), head);
    assert_eq!(std::fs::read(r.join(".git/index")).unwrap(), index);
    assert_eq!(git(r, &["for-each-ref"]), refs);
    assert_eq!(git(r, &["count-objects"]), objects_before);
    assert_eq!(
        git(r, &["diff", "--cached", "--name-only"]),
        "tracked.txt\n"
    );
    assert_eq!(read(r, "target/big.o").unwrap(), b"ignored build output\n");
}

/// A snapshot in a repository reads git's ignore rules in-process and runs nothing of the
/// repository's: a `core.fsmonitor` hook and a clean filter in its config never run, and a
/// restore is byte for byte (CRLF kept under `text=auto`). The root is a subfolder.
#[cfg(unix)]
#[test]
fn a_snapshot_in_a_repository_runs_none_of_its_programs() {
    let repo = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let top = repo.path();
    git(top, &["init", "-q"]);
    write(top, ".gitattributes", b"* text=auto filter=evil\n");
    write(top, ".gitignore", b"*.log\n");
    write(top, "sub/same.txt", b"committed\n");
    write(top, "sub/crlf.txt", b"one\r\ntwo\r\n");
    git(top, &["add", "."]);
    git(top, &["commit", "-qm", "first"]);
    let marker = top.join("RAN");
    let hook = format!("touch {}", marker.display());
    git(top, &["config", "core.fsmonitor", &hook]);
    git(
        top,
        &["config", "filter.evil.clean", &format!("{hook}; cat")],
    );
    write(top, "sub/new.txt", b"untracked\n");
    write(top, "sub/debug.log", b"ignored\n");
    let r = top.join("sub");
    let mut cp = Checkpoints::open(home.path(), &r).unwrap();
    let before = cp.snapshot("t", &[], far()).unwrap();
    assert!(
        matches!(
            before.unknown.get("debug.log").map(|u| &u.why),
            Some(Why::Ignored)
        ),
        "{:?}",
        before.unknown
    );
    for f in ["same.txt", "crlf.txt", "new.txt"] {
        write(&r, f, b"agent\n");
    }
    let after = cp.snap();
    cp.restore(&before.id, &after, &Default::default()).unwrap();
    assert_eq!(read(&r, "same.txt").unwrap(), b"committed\n");
    assert_eq!(read(&r, "crlf.txt").unwrap(), b"one\r\ntwo\r\n");
    assert_eq!(read(&r, "new.txt").unwrap(), b"untracked\n");
    assert!(!marker.exists(), "a program of the repository ran");
}

/// A folder the turn wrote into, replaced by a link out of the workspace before the undo:
/// nothing is written or removed through it.
#[cfg(unix)]
#[test]
fn undo_never_writes_through_a_link_out_of_the_workspace() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, "dir/kept.txt", b"before\n");
    write(outside.path(), "kept.txt", b"outside\n");
    write(outside.path(), "made.txt", b"outside too\n");
    let mut cp = Checkpoints::open(home.path(), r).unwrap();
    let before = cp.snap();
    write(r, "dir/kept.txt", b"agent\n");
    write(r, "dir/made.txt", b"agent\n");
    let after = cp.snap();
    std::fs::rename(r.join("dir"), r.join("moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), r.join("dir")).unwrap();
    let report = cp.restore(&before, &after, &Default::default()).unwrap();
    assert_eq!(read(outside.path(), "kept.txt").unwrap(), b"outside\n");
    assert_eq!(read(outside.path(), "made.txt").unwrap(), b"outside too\n");
    assert!(
        report.restored.is_empty() && report.removed.is_empty(),
        "{report:?}"
    );
}

/// The turns changed two files; one is open in an editor with unsaved text (`unsaved`, as
/// the session found it through the editor): that one is kept, the other goes back.
#[test]
fn a_file_with_unsaved_editor_changes_is_kept() {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, "open.txt", b"before\n");
    write(r, "closed.txt", b"before\n");
    let mut cp = Checkpoints::open(home.path(), r).unwrap();
    let before = cp.snap();
    write(r, "open.txt", b"agent\n");
    write(r, "closed.txt", b"agent\n");
    write(r, "made.txt", b"agent\n");
    let after = cp.snap();
    assert_eq!(
        cp.changed(&before, &after).unwrap(),
        ["closed.txt", "made.txt", "open.txt"]
    );
    let unsaved = std::collections::HashSet::from(["open.txt".to_string()]);
    let report = cp.restore(&before, &after, &unsaved).unwrap();
    assert_eq!(report.restored, ["closed.txt"]);
    assert_eq!(report.removed, ["made.txt"]);
    assert_eq!(
        report.skipped,
        [(
            "open.txt".to_string(),
            "unsaved changes in the editor; kept".to_string()
        )]
    );
    assert_eq!(read(r, "open.txt").unwrap(), b"agent\n");
    assert_eq!(read(r, "closed.txt").unwrap(), b"before\n");
}

/// A first snapshot of many files writes them as one pack, not a loose object each, and a
/// restore from it is byte for byte.
#[test]
fn many_files_go_into_one_pack_and_restore_exactly() {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let r = root.path();
    let n = 300;
    for i in 0..n {
        write(
            r,
            &format!("d{}/f{i}.txt", i % 7),
            format!("file {i}\r\n").as_bytes(),
        );
    }
    let mut cp = Checkpoints::open(home.path(), r).unwrap();
    let before = cp.snap();
    let packs = std::fs::read_dir(cp.store.dir().join("packs"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .count();
    assert_eq!(packs, 1);
    write(r, "d0/f0.txt", b"agent\n");
    std::fs::remove_file(r.join("d1/f1.txt")).unwrap();
    let after = cp.snap();
    let report = cp.restore(&before, &after, &Default::default()).unwrap();
    assert_eq!(report.restored, ["d0/f0.txt", "d1/f1.txt"]);
    assert_eq!(read(r, "d0/f0.txt").unwrap(), b"file 0\r\n");
    assert_eq!(read(r, "d1/f1.txt").unwrap(), b"file 1\r\n");
}

#[test]
fn a_file_over_the_limit_is_named_and_left_out() {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let big = std::fs::File::create(root.path().join("big.bin")).unwrap();
    big.set_len(MAX_FILE_BYTES + 1).unwrap();
    write(root.path(), "small.txt", b"x");
    let mut cp = Checkpoints::open(home.path(), root.path()).unwrap();
    let taken = cp.snapshot("t", &[], far()).unwrap();
    let names: Vec<&String> = taken.unknown.keys().collect();
    assert_eq!(names, ["big.bin"]);
    assert_eq!(
        taken.unknown["big.bin"].why,
        Why::TooLarge {
            bytes: MAX_FILE_BYTES + 1
        }
    );
}

#[derive(Debug, Clone)]
enum Change {
    Write(usize, Vec<u8>),
    Delete(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0..5usize, proptest::collection::vec(any::<u8>(), 0..12))
            .prop_map(|(f, b)| Change::Write(f, b)),
        (0..5usize).prop_map(Change::Delete),
    ]
}

fn apply(root: &Path, c: &Change) -> usize {
    match c {
        Change::Write(f, bytes) => {
            write(root, &format!("f{f}"), bytes);
            *f
        }
        Change::Delete(f) => {
            let _ = std::fs::remove_file(root.join(format!("f{f}")));
            *f
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the agent and then the user did, undo never loses a byte the user wrote, and
    /// every file only the agent touched is back as it was: after a walk, or after a turn
    /// whose writes the workspace names.
    #[test]
    fn undo_never_loses_a_users_byte(
        start in proptest::collection::vec(proptest::option::of(proptest::collection::vec(any::<u8>(), 0..12)), 5),
        agent in proptest::collection::vec(change(), 0..8),
        user in proptest::collection::vec(change(), 0..4),
        own_writes_only in any::<bool>(),
    ) {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let r = root.path();
        for (i, bytes) in start.iter().enumerate() {
            if let Some(b) = bytes {
                write(r, &format!("f{i}"), b);
            }
        }
        let mut cp = Checkpoints::open(home.path(), r).unwrap();
        let taken = cp.snapshot("t", &[], far()).unwrap();
        let before = taken.id.clone();
        let initial: Vec<Option<Vec<u8>>> = (0..5).map(|i| read(r, &format!("f{i}"))).collect();
        let mut agents = std::collections::BTreeSet::new();
        for c in &agent {
            agents.insert(apply(r, c));
        }
        // A turn that wrote only through the workspace: the snapshot after looks again at
        // those files only.
        let after = if own_writes_only {
            let paths: Vec<String> = agents.iter().map(|i| format!("f{i}")).collect();
            cp.snapshot_paths("t", &taken, &paths, far()).unwrap().id
        } else {
            cp.snap()
        };
        let agents_result: Vec<Option<Vec<u8>>> = (0..5).map(|i| read(r, &format!("f{i}"))).collect();
        // The user writes within the clock tick of the agent's writes: still seen. A change
        // that leaves a file as the agent left it is no edit.
        for c in &user {
            apply(r, c);
        }
        let users: std::collections::BTreeMap<usize, Option<Vec<u8>>> = (0..5)
            .map(|i| (i, read(r, &format!("f{i}"))))
            .filter(|(i, now)| *now != agents_result[*i])
            .collect();
        cp.restore(&before, &after, &Default::default()).unwrap();
        for (i, was) in initial.iter().enumerate() {
            let now = read(r, &format!("f{i}"));
            if let Some(theirs) = users.get(&i) {
                prop_assert_eq!(&now, theirs, "f{} was the user's", i);
            } else if agents.contains(&i) {
                prop_assert_eq!(&now, was, "f{} was only the agent's", i);
            }
        }
    }
}

/// Bytes that do not deflate, so they sit in the pack as they are.
fn incompressible(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn a_tampered_pack_is_named_and_none_of_it_written() {
    let (root, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (root, home) = (root.path(), home.path());
    let original = incompressible(7, 4096);
    write(root, "a.bin", &original);
    let mut cp = Checkpoints::open(home, root).unwrap();
    let before = cp.snap();
    write(root, "a.bin", b"the turn's\n");
    let after = cp.snap();
    // Someone rewrites the stored copy in place, same length.
    let mut forged = 0;
    for pack in walkdir_files(&home.join("checkpoints")) {
        let mut bytes = std::fs::read(&pack).unwrap();
        if let Some(at) = bytes.windows(original.len()).position(|w| w == original) {
            bytes[at..at + 4].copy_from_slice(b"EVIL");
            std::fs::write(&pack, bytes).unwrap();
            forged += 1;
        }
    }
    assert_eq!(forged, 1);
    let mut fresh = Checkpoints::open(home, root).unwrap();
    let report = fresh.restore(&before, &after, &Default::default()).unwrap();
    assert_eq!(read(root, "a.bin").unwrap(), b"the turn's\n");
    assert!(report.restored.is_empty(), "{report:?}");
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert!(
        report.skipped[0]
            .1
            .contains("no longer matches its checksum"),
        "{report:?}"
    );
}

fn walkdir_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        if e.file_type().unwrap().is_dir() {
            out.extend(walkdir_files(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn a_stopped_snapshot_is_no_failure_and_the_next_takes_the_whole_folder() {
    let (root, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (root, home) = (root.path(), home.path());
    for i in 0..50 {
        write(root, &format!("f{i}.txt"), format!("file {i}\n").as_bytes());
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let stopped = Limit::new(Instant::now() + Duration::from_secs(600), stop);
    let mut cp = Checkpoints::open(home, root).unwrap();
    let err = cp.snapshot("t", &[], &stopped).unwrap_err();
    assert!(err.is::<Stopped>(), "{err:#}");
    // The next snapshot, in another process, still takes the whole folder.
    let mut next = Checkpoints::open(home, root).unwrap();
    let id = next.snap();
    write(root, "f0.txt", b"changed\n");
    let later = next.snap();
    next.restore(&id, &later, &Default::default()).unwrap();
    assert_eq!(read(root, "f0.txt").unwrap(), b"file 0\n");
}
