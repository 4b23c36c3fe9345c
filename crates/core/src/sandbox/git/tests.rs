//! The agent's own git never runs a program of the repository's.

use super::*;
use mock_llm::e2e::git;

/// A repository whose config names an fsmonitor hook, a clean filter on every file and a
/// diff driver; a tracked file whose stat data changed makes status compare its bytes, which
/// runs the clean filter in a plain `git status`.
#[cfg(unix)]
fn hostile_repo() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    git(r, &["init", "-q"]);
    std::fs::write(r.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    std::fs::write(r.join("a.txt"), "a\n").unwrap();
    git(r, &["add", "."]);
    git(r, &["commit", "-qm", "first"]);
    let marker = r.join("RAN");
    let hook = format!("sh -c 'touch {}'", marker.display());
    git(r, &["config", "core.fsmonitor", &hook]);
    git(
        r,
        &[
            "config",
            "filter.evil.clean",
            &format!("sh -c 'touch {}; cat'", marker.display()),
        ],
    );
    git(r, &["config", "filter.evil.required", "true"]);
    git(r, &["config", "diff.evil.command", &hook]);
    // Same bytes, new stat data: status must look at the content.
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(r.join("a.txt"), "a\n").unwrap();
    (dir, marker)
}

#[cfg(unix)]
#[test]
fn a_hostile_repository_s_programs_never_run() {
    let (dir, marker) = hostile_repo();
    let r = dir.path();
    // The plain git runs them: the attack is real.
    let plain = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(r)
        .output()
        .unwrap();
    assert!(plain.status.success());
    assert!(
        marker.exists(),
        "the fixture should run its hook under a plain git"
    );
    std::fs::remove_file(&marker).unwrap();
    let out = run(r, &["status", "--porcelain=v1", "-z"], None).unwrap();
    assert!(
        !marker.exists(),
        "the agent's git ran a program of the repository"
    );
    assert!(String::from_utf8_lossy(&out).is_empty() || !out.is_empty());
}

#[test]
fn drivers_are_found_and_emptied() {
    assert_eq!(
        driver_keys("filter.lfs"),
        [
            "filter.lfs.clean=",
            "filter.lfs.smudge=",
            "filter.lfs.process=",
            "filter.lfs.required=false"
        ]
    );
    assert_eq!(
        driver_keys("diff.x"),
        ["diff.x.command=", "diff.x.textconv="]
    );
}
