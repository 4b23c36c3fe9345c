//! Helpers for end-to-end tests that run the real `interpreter` binary against the mock.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `interpreter` binary: `INTERPRETER_BIN`, else next to the running test in `target/`.
pub fn interpreter_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("INTERPRETER_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test>-<hash>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps");
    let bin = profile_dir.join(format!("interpreter{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} not found: run `cargo build -p interpreter` first (or set INTERPRETER_BIN)",
        bin.display()
    );
    bin
}

/// `git <args>` in `root` with a fixed identity; its stdout. Panics when git fails.
pub fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A temporary git repository plus an isolated home folder.
pub struct TestRepo {
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = tempfile::tempdir().expect("tempdir");
        let ok = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            // Without git on the machine a bare `.git` folder is what the trust check looks for.
            std::fs::create_dir_all(dir.path().join(".git")).expect("mkdir .git");
        }
        TestRepo { dir, home }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.dir.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, text).expect("write");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).expect("read")
    }

    /// `-c` arguments that point the agent at `mock_url` with the given wire API.
    pub fn mock_config(mock_url: &str, wire_api: &str) -> Vec<String> {
        vec![
            "-c".into(),
            "model_provider=\"mock\"".into(),
            "-c".into(),
            format!(
                "model_providers.mock={{name=\"mock\", base_url=\"{mock_url}\", wire_api=\"{wire_api}\", retry_base_delay_ms=10}}"
            ),
            "-c".into(),
            "model=\"mock-model\"".into(),
        ]
    }

    /// Runs `interpreter <args>` in the repo with `stdin`, an isolated home, and a timeout.
    pub fn run(&self, args: &[String], stdin: &str) -> Output {
        self.run_with_env(args, stdin, &[])
    }

    /// `interpreter <args>` in the repo with an isolated home and piped stdio, not started:
    /// for runs that overlap or need their own handling.
    pub fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(interpreter_bin());
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("OPENINTERPRETER_HOME", self.home.path())
            .env_remove("CODEX_HOME")
            // The user's own Claude Code settings would add their rules.
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("OPENINTERPRETER_MODEL")
            .env_remove("OPENINTERPRETER_PROVIDER")
            .env_remove("OPENINTERPRETER_HARNESS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    pub fn run_with_env(&self, args: &[String], stdin: &str, env: &[(&str, &str)]) -> Output {
        let mut cmd = self.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn interpreter");
        {
            let mut stdin_pipe = child.stdin.take().expect("stdin");
            let _ = stdin_pipe.write_all(stdin.as_bytes());
        }
        wait_with_timeout(child, std::time::Duration::from_secs(60))
    }
}

impl Default for TestRepo {
    fn default() -> Self {
        Self::new()
    }
}

/// Waits for `child` (its pipes drained meanwhile), killing it after `limit`.
pub fn wait_with_timeout(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    use std::io::Read;
    // Drain both pipes while waiting: a child that fills a pipe would otherwise block forever.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                let stdout = out.join().unwrap_or_default();
                let stderr = err.join().unwrap_or_default();
                let tail = |b: &[u8]| {
                    let s = String::from_utf8_lossy(b);
                    s.chars()
                        .rev()
                        .take(4000)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<String>()
                };
                panic!(
                    "interpreter did not exit within {limit:?}\nstdout (tail):\n{}\nstderr (tail):\n{}",
                    tail(&stdout),
                    tail(&stderr)
                );
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => panic!("waiting for interpreter: {e}"),
        }
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// `exec` on the mock's Chat wire at `mock_url`, then `extra`.
pub fn exec_args(mock_url: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["exec".to_string()];
    a.extend(TestRepo::mock_config(mock_url, "chat"));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Stdout of a run that must have succeeded; panics with its output otherwise.
pub fn succeeded(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stdout parsed as JSON Lines; panics on any line that is not a JSON object.
pub fn jsonl(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l:?}"));
            assert!(v.is_object(), "stdout line is not an object: {l}");
            v
        })
        .collect()
}

/// A scratch folder that the sandbox treats as "outside": not under the temp folders a
/// workspace-write command may write (`/tmp`, `$TMPDIR`, `/dev/shm`). `preferred` is used
/// unless it lies under one of them (a checkout in /tmp), then `/var/tmp`.
pub fn dir_outside_temp(preferred: &Path) -> tempfile::TempDir {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut temps = vec![canon(Path::new("/tmp")), canon(Path::new("/dev/shm"))];
    temps.push(canon(&std::env::temp_dir()));
    let base = canon(preferred);
    let base = if temps.iter().any(|t| base.starts_with(t)) {
        PathBuf::from("/var/tmp")
    } else {
        base
    };
    tempfile::tempdir_in(&base).unwrap_or_else(|e| panic!("scratch dir in {}: {e}", base.display()))
}

/// A 4x3 RGB PNG, for tests that show the model an image.
pub const TINY_PNG: [u8; 99] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 4, 0, 0, 0, 3, 8, 2, 0,
    0, 0, 59, 150, 57, 145, 0, 0, 0, 42, 73, 68, 65, 84, 120, 156, 13, 199, 49, 1, 0, 48, 12, 195,
    48, 3, 43, 136, 192, 233, 105, 40, 1, 81, 128, 155, 62, 1, 14, 46, 30, 66, 156, 184, 241, 242,
    83, 167, 110, 189, 250, 0, 227, 183, 13, 249, 108, 108, 203, 210, 0, 0, 0, 0, 73, 69, 78, 68,
    174, 66, 96, 130,
];

/// `interpreter exec --json` on the mock's `wire` with `harness`, `extra` flags and `prompt`,
/// in `repo` with HOME isolated too (no user-level skills leak in); panics unless it succeeded.
pub fn exec_with_harness(
    repo: &TestRepo,
    mock_url: &str,
    wire: &str,
    harness: &str,
    extra: &[&str],
    prompt: &str,
) -> Output {
    let mut args = vec!["exec".to_string(), "--json".to_string()];
    args.extend(TestRepo::mock_config(mock_url, wire));
    args.extend(["-c".into(), format!("harness=\"{harness}\"")]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(prompt.to_string());
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", home.as_str())]);
    succeeded(&out);
    out
}

/// A PDF of `pages` small pages, page N saying `Page N`, for tests that read PDF pages.
pub fn tiny_pdf(pages: usize) -> Vec<u8> {
    // Objects: 1 catalog, 2 page tree, 3 font, then a page and its content per page.
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {pages} >>",
            (0..pages)
                .map(|i| format!("{} 0 R", 4 + 2 * i))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into(),
    ];
    for i in 0..pages {
        let text = format!("BT /F1 24 Tf 20 60 Td (Page {}) Tj ET", i + 1);
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 120] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{text}\nendstream",
            text.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}
