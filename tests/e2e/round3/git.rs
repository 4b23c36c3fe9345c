//! Class 1, "the agent runs git on repository content, outside the sandbox": a cloned
//! repository whose `.git/config` names an fsmonitor program and a clean filter. The model
//! only reads; exec runs read-only with `--diff`. On 2c44ae9 the checkpoints' git
//! (`ls-files`, `diff-files`, `hash-object`) and `--diff`'s `git status` ran both programs
//! unconfined. Now checkpoints run no git, and the agent's own git turns those keys off and
//! is confined read-only.

use super::*;
use mock_llm::e2e::git;
use mock_llm::{Reply, Script};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_repositorys_fsmonitor_and_filters_never_run_for_the_agent() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.write(".gitattributes", "*.txt filter=evil diff=evil\n");
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "first"]);
    let marker = repo.home.path().join("ran");
    let program = repo.path().join(".git/evil.sh");
    std::fs::write(
        &program,
        format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = program.display().to_string();
    git(repo.path(), &["config", "core.fsmonitor", &p]);
    git(repo.path(), &["config", "filter.evil.clean", &p]);
    git(repo.path(), &["config", "diff.evil.textconv", &p]);
    // A stat-dirty tracked file: status would run the clean filter on it.
    repo.write("a.txt", "two\n");
    for (sandbox, extra) in [("read-only", vec![]), ("workspace-write", vec!["--diff"])] {
        let mock = MockServer::start_blocking(Script::new([
            Reply::tool_call("c1", "shell", json!({"command": "cat a.txt"})),
            Reply::text("hello"),
        ]))
        .unwrap();
        let mut args = vec!["--json", "-s", sandbox];
        args.extend(extra);
        ok(&repo.run(&exec_args(&mock, &args), "say hello"));
        assert!(
            !marker.exists(),
            "the repository's program ran under {sandbox}: {}",
            std::fs::read_to_string(&marker).unwrap_or_default()
        );
    }
}
