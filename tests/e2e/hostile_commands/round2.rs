//! Issue 22, items 1 and 2, through the real binary and the mock model: "known read-only"
//! commands that wrote and ran code, and dangerous commands with abbreviated options or brace
//! and expansion forms. Each probe is the spelling, aimed at a victim folder outside
//! the workspace (or at the workspace's own files, its uncommitted work and its remote), and
//! each test looks at the outcome: the files are intact and the model was told it was asked
//! about or refused. Runs with `danger-full-access` too, where nothing but the rule stands
//! between the command and the files (no Landlock).

use super::{acp, exec_args, git, shell_script, tool_output, victim};
use mock_llm::MockServer;
use mock_llm::e2e::TestRepo;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The text the model gets for a command the user (here: exec, which cannot ask) rejected.
const REJECTED: &str = "The user rejected this tool call";

/// A workspace with committed files, uncommitted work and an `origin` outside it with a
/// `main` branch; a victim folder outside the workspace and the temp folders.
struct Setup {
    repo: TestRepo,
    victim: tempfile::TempDir,
    remote: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let repo = TestRepo::new();
        repo.write("a", "b\na\nb\n");
        repo.write("f", "one\ntwo\nfoo\n");
        repo.write("src/main.rs", "fn main() {}\n");
        repo.write("work.txt", "committed\n");
        assert!(git(repo.path(), &["add", "-A"]));
        assert!(git(repo.path(), &["commit", "-q", "-m", "one"]));
        repo.write("f", "one\ntwo\nfoo\nthree\n");
        assert!(git(repo.path(), &["commit", "-q", "-am", "two"]));
        // Uncommitted work that `git reset --hard` would discard.
        repo.write("work.txt", "uncommitted work\n");
        let victim = victim();
        for (rel, text) in [
            ("src/a.txt", "a\n"),
            ("junk/j.txt", "j\n"),
            ("dir/d.txt", "d\n"),
        ] {
            let p = victim.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let remote = victim.path().join("remote.git");
        assert!(git(victim.path(), &["init", "-q", "--bare", "remote.git"]));
        let remote_s = remote.display().to_string();
        assert!(git(repo.path(), &["remote", "add", "origin", &remote_s]));
        assert!(git(repo.path(), &["push", "-q", "origin", "HEAD:main"]));
        Setup {
            repo,
            victim,
            remote,
        }
    }

    fn v(&self) -> String {
        self.victim.path().display().to_string()
    }

    /// Item 1, the spellings; those that act on their folder run in the victim's.
    fn read_only_probes(&self) -> Vec<String> {
        let v = self.v();
        vec![
            format!("sort --outp={v}/keep.txt /dev/null"),
            format!(
                "cd {v} && printf 'touch PWN\\n%.0s' {{1..3000}} | sort --compress-prog=sh -S 8k"
            ),
            format!("cd {v} && /usr/bin/time -o notes.txt true"),
            format!("cd {v} && sort ${{U:--o}}keep.txt /dev/null"),
            format!("cd {v} && find src ${{U:--exec}} touch PWN \\;"),
            format!("cd {v} && find junk -{{delete,print}}"),
        ]
    }

    /// Item 2, the spellings (the last two act on the workspace itself).
    fn dangerous_probes(&self) -> Vec<String> {
        vec![
            format!("rm --recur -f {}/dir", self.v()),
            "git reset --har".into(),
            "git push --dele origin main".into(),
            "rm --recur -f ./*".into(),
            "find . -{delete,print}".into(),
        ]
    }

    fn assert_intact(&self) {
        let v = self.victim.path();
        assert_eq!(
            std::fs::read_to_string(v.join("keep.txt")).unwrap(),
            "keep\n",
            "the victim file was overwritten"
        );
        for gone in ["PWN", "notes.txt", "src/PWN"] {
            assert!(
                !v.join(gone).exists(),
                "{gone} was written in the victim folder"
            );
        }
        for kept in ["junk/j.txt", "dir/d.txt", "src/a.txt"] {
            assert!(v.join(kept).exists(), "{kept} was deleted");
        }
        assert_eq!(
            self.repo.read("work.txt"),
            "uncommitted work\n",
            "uncommitted work was discarded"
        );
        for kept in ["a", "f", "src/main.rs"] {
            assert!(self.repo.path().join(kept).exists(), "{kept} was deleted");
        }
        let remote = self.remote.display().to_string();
        assert!(
            git(
                self.repo.path(),
                &["--git-dir", &remote, "rev-parse", "--verify", "main"]
            ),
            "the remote's main branch was deleted"
        );
    }
}

/// The ordinary reading that must keep running unasked (with the workspace's files).
fn ordinary_reading(v: &Path) -> Vec<String> {
    let mut c: Vec<String> = [
        "rg foo",
        "git log -5",
        "cat a | sort | uniq -c",
        "find . -name '*.rs'",
        "ls -la",
        "git status",
        "git diff HEAD~1",
        "sed -n 1,20p f",
        "head -n 5 f",
        "wc -l f",
        "grep -rn foo .",
    ]
    .map(String::from)
    .to_vec();
    c.push(format!("cat {}/keep.txt", v.display()));
    c
}

fn exec_run(s: &Setup, commands: &[String], policy: &str, sandbox: &str) -> MockServer {
    let mock = MockServer::start_blocking(shell_script(commands)).unwrap();
    let approval = format!("approval_policy=\"{policy}\"");
    let out = s.repo.run(
        &exec_args(&mock, &["--sandbox", sandbox, "-c", &approval]),
        "run them",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    mock
}

#[test]
fn read_only_and_dangerous_probes_ask_under_untrusted() {
    for sandbox in ["danger-full-access", "workspace-write"] {
        let s = Setup::new();
        let ordinary = ordinary_reading(s.victim.path());
        let probes: Vec<String> = [s.read_only_probes(), s.dangerous_probes()].concat();
        let commands = [ordinary.clone(), probes.clone()].concat();
        let mock = exec_run(&s, &commands, "untrusted", sandbox);
        for (i, c) in commands.iter().enumerate() {
            let o = tool_output(&mock, &format!("c{i}"));
            if i < ordinary.len() {
                assert!(!o.contains(REJECTED), "`{c}` asked ({sandbox}): {o}");
            } else {
                assert!(o.contains(REJECTED), "`{c}` ran unasked ({sandbox}): {o}");
            }
        }
        // The ordinary commands really ran.
        assert!(tool_output(&mock, "c2").contains("2 b"), "uniq -c");
        assert!(tool_output(&mock, &format!("c{}", ordinary.len() - 1)).contains("keep"));
        s.assert_intact();
    }
}

#[test]
fn dangerous_probes_are_refused_under_never() {
    for sandbox in ["danger-full-access", "workspace-write"] {
        let s = Setup::new();
        let probes = s.dangerous_probes();
        let mock = exec_run(&s, &probes, "never", sandbox);
        for (i, c) in probes.iter().enumerate() {
            let o = tool_output(&mock, &format!("c{i}"));
            assert!(o.contains("Refused"), "`{c}` ran ({sandbox}): {o}");
        }
        s.assert_intact();
    }
}

#[test]
fn acp_auto_asks_before_each_probe_and_not_before_reading() {
    let s = Setup::new();
    let ordinary = ordinary_reading(s.victim.path());
    let probes: Vec<String> = [s.read_only_probes(), s.dangerous_probes()].concat();
    let commands = [ordinary.clone(), probes.clone()].concat();
    let mock = MockServer::start_blocking(shell_script(&commands)).unwrap();
    let mut agent = acp::Agent::start(&s.repo, &mock, &["-c", "harness=\"native\""], &[]);
    agent.initialize();
    let cwd = std::fs::canonicalize(s.repo.path()).unwrap();
    let r = agent
        .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
        .unwrap_or_else(|e| panic!("session/new failed: {e}\n{}", agent.log()));
    assert_eq!(r["modes"]["currentModeId"], "auto", "{r}");
    let session = r["sessionId"].as_str().unwrap().to_string();
    agent.prompt(&session, "run them");
    let asked: Vec<String> = agent
        .permissions
        .iter()
        .map(|p| {
            p["toolCall"]["rawInput"]["command"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(asked, probes, "asked about exactly the probes");
    for (i, c) in commands.iter().enumerate().skip(ordinary.len()) {
        let o = tool_output(&mock, &format!("c{i}"));
        assert!(o.contains(REJECTED), "`{c}` ran: {o}");
    }
    s.assert_intact();
    agent.exit();
}
