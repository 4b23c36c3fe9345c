//! Classes 4, 5 and 6: undo that never lies.
//!
//! 4. A turn deleted a git-ignored `.env`, overwrote an ignored data file, edited an
//!    `--add-dir` file, truncated a 20 MiB file (over the cap) and planted a hook, an
//!    fsmonitor line and an ignored script. On 2c44ae9 none came back, the large file was
//!    deleted as if new, and the report named only `README.md`. Now each is named with why,
//!    and undo never deletes or overwrites a path it holds no copy of.
//! 5. A user's edit after the turn, same size, mtime kept (`cp -p`, `touch -r`), was
//!    overwritten and reported restored. Now undo hashes a file before overwriting it.
//! 6. The store borrowed blobs from the user's `.git/objects`; the model rewrote a loose
//!    object and undo wrote "EVIL BACKDOOR CONTENT" into a tracked file. Now the store is
//!    private, and every object is checked against its id.

use super::*;
use mock_llm::e2e::{dir_outside_temp, git};
use mock_llm::{Reply, Script};
use serde_json::json;

const BYPASS: &str = "--dangerously-bypass-approvals-and-sandbox";

#[test]
fn undo_names_every_path_it_could_not_put_back_and_deletes_none_of_them() {
    let repo = TestRepo::new();
    let other = dir_outside_temp(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
    std::fs::write(other.path().join("notes.txt"), "mine\n").unwrap();
    repo.write(".gitignore", ".env\n*.dat\nhidden.sh\n");
    repo.write(".env", "KEY=1\n");
    repo.write("data.dat", "rows\n");
    repo.write("README.md", "hello\n");
    std::fs::write(repo.path().join("large.bin"), vec![7u8; 20 << 20]).unwrap();
    let notes = other.path().join("notes.txt").display().to_string();
    let command = format!(
        "rm .env && echo x > data.dat && echo edited >> '{notes}' && truncate -s 10 large.bin \
         && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit \
         && git config core.fsmonitor /tmp/evil && echo evil > hidden.sh && echo changed >> README.md"
    );
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "shell", json!({"command": command})),
        Reply::text("done"),
    ]))
    .unwrap();
    let add = other.path().display().to_string();
    let args = exec_args(&mock, &[BYPASS, "--add-dir", &add]);
    let mut first = args.clone();
    first.push("--json".into());
    let id = thread_id(&repo.run(&first, "go"));
    let mut undo = args.clone();
    undo.extend(["undo".to_string(), id]);
    let said = ok(&repo.run(&undo, ""));
    assert!(said.contains("- restored `README.md`"), "{said}");
    assert_eq!(repo.read("README.md"), "hello\n");
    for (path, why) in [
        (".env", "ignored by git"),
        ("data.dat", "ignored by git"),
        ("hidden.sh", "ignored by git"),
        ("large.bin", "larger than 16 MiB"),
        (".git/hooks/pre-commit", "git's own"),
        (".git/config", "git's own"),
        (notes.as_str(), "outside the folder"),
    ] {
        let line = said
            .lines()
            .find(|l| l.contains(&format!("`{path}`")))
            .unwrap_or_else(|| panic!("{path} is not named:\n{said}"));
        assert!(line.contains(why), "{line}");
    }
    // Left as the turn left them: never deleted, never overwritten.
    assert_eq!(
        std::fs::metadata(repo.path().join("large.bin"))
            .unwrap()
            .len(),
        10
    );
    assert_eq!(repo.read("data.dat"), "x\n");
    assert!(repo.path().join("hidden.sh").exists());
    assert!(repo.path().join(".git/hooks/pre-commit").exists());
}

#[test]
fn an_edit_of_the_same_size_and_mtime_after_the_turn_is_kept() {
    let repo = TestRepo::new();
    repo.write("b.txt", "original\n");
    let mock = MockServer::start_blocking(Script::new([
        // An mtime well in the past: no "racily clean" second look saves the user's edit.
        Reply::tool_call(
            "c1",
            "shell",
            json!({"command": "printf 'agent!!!\\n' > b.txt && touch -d '2020-01-01 00:00' b.txt"}),
        ),
        Reply::text("done"),
    ]))
    .unwrap();
    let id = thread_id(&repo.run(&exec_args(&mock, &["--json", BYPASS]), "go"));
    let path = repo.path().join("b.txt");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    // The user's edit: the same size, its mtime put back as `cp -p` or `touch -r` do.
    std::fs::write(&path, "user!!!!\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let said = ok(&repo.run(&exec_args(&mock, &[BYPASS, "undo", &id]), ""));
    assert!(
        said.contains("- kept `b.txt`: changed after the turn"),
        "{said}"
    );
    assert_eq!(repo.read("b.txt"), "user!!!!\n");
}

#[test]
fn a_forged_object_in_the_repository_never_reaches_a_restored_file() {
    let repo = TestRepo::new();
    repo.write("a.txt", "original\n");
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "first"]);
    let blob = git(repo.path(), &["rev-parse", "HEAD:a.txt"])
        .trim()
        .to_string();
    // The turn rewrites the file, then forges the blob's loose object.
    let forge = format!(
        "printf 'agent\\n' > a.txt && f=.git/objects/{}/{} && chmod u+w $f && python3 -c \
         'import zlib,sys; b=b\"EVIL BACKDOOR CONTENT\\n\"; open(sys.argv[1],\"wb\").write(zlib.compress(b\"blob %d\\0\" % len(b) + b))' $f",
        &blob[..2],
        &blob[2..]
    );
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("c1", "shell", json!({"command": forge})),
        Reply::text("done"),
    ]))
    .unwrap();
    let id = thread_id(&repo.run(&exec_args(&mock, &["--json", BYPASS]), "go"));
    assert_eq!(repo.read("a.txt"), "agent\n");
    let said = ok(&repo.run(&exec_args(&mock, &[BYPASS, "undo", &id]), ""));
    assert!(said.contains("- restored `a.txt`"), "{said}");
    assert_eq!(repo.read("a.txt"), "original\n");
}
