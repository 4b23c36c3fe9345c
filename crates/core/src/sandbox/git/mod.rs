//! The git the agent runs by itself on a user's repository (`exec --diff`'s status and
//! contents; checkpoints run none), never a program of the repository's. A repository's
//! config can name programs that a read-only git command runs: `core.fsmonitor` (every
//! status), clean filters (`filter.<driver>.clean`/`process`, for a file whose stat data
//! changed), diff drivers. A confined command can write that config, and a cloned repository
//! can come with it. So every run here:
//!
//! - is confined like a read-only, network-off command (Landlock with the seccomp network
//!   filter on Linux, Seatbelt on macOS): whatever runs can read, not write or connect;
//! - gets `-c` options that turn every such key off (`core.fsmonitor=false`, each driver the
//!   config names emptied), so on Windows, which has no sandbox, nothing runs either;
//! - runs in a process group of its own that is killed when git ends, and has a deadline.
//!
//! [`run`] is how a face runs it too (exec's `--diff`).

use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one git run may take.
pub(crate) const GIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Keys that make git run a program, each turned off (`-c key=value`) for every run.
const OFF: &[&str] = &[
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.pager=cat",
    "core.askPass=",
    "core.sshCommand=",
    "credential.helper=",
    "diff.external=",
    "protocol.allow=never",
    "uploadpack.packObjectsHook=",
];

/// `git -C dir` with the keys that run programs turned off, and the named drivers emptied
/// (filters, diff and merge drivers: the repository's config names them).
pub(crate) fn command(dir: &Path) -> Command {
    let mut cmd = bare(dir);
    for driver in drivers(dir) {
        for key in driver_keys(&driver) {
            cmd.arg("-c").arg(key);
        }
    }
    cmd
}

/// The words after `git` that turn off, for `dir`, every key that runs a program (for a git
/// run as a command, such as a harness's git tools).
pub(crate) fn neutral_words(dir: &Path) -> Vec<String> {
    let mut words = Vec::new();
    let keys = OFF
        .iter()
        .map(|k| k.to_string())
        .chain([format!("core.hooksPath={}", null_device())])
        .chain(drivers(dir).into_iter().flat_map(|d| driver_keys(&d)));
    for key in keys {
        words.push("-c".to_string());
        words.push(key);
    }
    words
}

/// `git -C dir` with the fixed keys off, without looking up the drivers.
fn bare(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir);
    for key in OFF {
        cmd.arg("-c").arg(key);
    }
    cmd.arg("-c")
        .arg(format!("core.hooksPath={}", null_device()))
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_PAGER");
    cmd
}

fn null_device() -> &'static str {
    if cfg!(windows) { "NUL" } else { "/dev/null" }
}

/// The `-c` options that empty one driver (`filter.lfs`, `diff.x`, `merge.y`).
fn driver_keys(driver: &str) -> Vec<String> {
    let kind = driver.split('.').next().unwrap_or_default();
    let keys: &[&str] = match kind {
        "filter" => &["clean=", "smudge=", "process=", "required=false"],
        "diff" => &["command=", "textconv="],
        "merge" => &["driver="],
        _ => &[],
    };
    keys.iter().map(|k| format!("{driver}.{k}")).collect()
}

/// The filter, diff and merge drivers git's config names for `dir` (`filter.lfs`, …),
/// read with git itself (reading config runs nothing).
fn drivers(dir: &Path) -> Vec<String> {
    let mut cmd = bare(dir);
    cmd.args([
        "config",
        "--name-only",
        "--get-regexp",
        r"^(filter|diff|merge)\..*\.(clean|smudge|process|command|textconv|driver)$",
    ]);
    let Ok(out) = output(cmd, None, GIT_TIMEOUT) else {
        return Vec::new();
    };
    let mut found: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.rsplit_once('.').map(|(driver, _)| driver.to_string()))
        .filter(|d| !d.contains(char::is_whitespace) && !d.contains('='))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Runs `cmd` (a git from [`command`], or another program the agent runs by itself on
/// workspace content) confined, with `input` on stdin, until `timeout`; its output. Whatever
/// it started is killed when it ends.
pub(crate) fn output(cmd: Command, input: Option<&[u8]>, timeout: Duration) -> io::Result<Output> {
    output_in(cmd, input, timeout, None)
}

/// [`output`], able to write under `writable` when that is given.
fn output_in(
    mut cmd: Command,
    input: Option<&[u8]>,
    timeout: Duration,
    writable: Option<Vec<std::path::PathBuf>>,
) -> io::Result<Output> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let program = cmd.get_program().to_string_lossy().into_owned();
    // The sandbox's resources live until the child started.
    let (mut cmd, _guard) = match writable {
        None => (super::confine_own_run(cmd)?, None),
        Some(w) => super::confine_own_write(cmd, w)?,
    };
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut pipe)) => {
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_micros(200);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            kill_group(pid);
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{program} took longer than {} s and was stopped",
                    timeout.as_secs()
                ),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    };
    // A program git started and left behind (a filter's daemon) ends with it.
    kill_group(pid);
    if let Some(w) = writer {
        let _ = w.join();
    }
    Ok(Output {
        status,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
    })
}

/// Reads a pipe to its end on a thread; a pipe held open by an escaped process is given up
/// after a moment rather than waited for.
struct Reader(std::sync::mpsc::Receiver<Vec<u8>>);

fn reader(pipe: Option<impl Read + Send + 'static>) -> Reader {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = pipe.read_to_end(&mut out);
            let _ = tx.send(out);
        });
    }
    Reader(rx)
}

impl Reader {
    fn finish(self) -> Vec<u8> {
        self.0
            .recv_timeout(Duration::from_secs(2))
            .unwrap_or_default()
    }
}

#[cfg(unix)]
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: a signal to the process group git led (its own, made before exec).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

/// Runs `git <args>` in `dir` as [`output`] does; stdout, or an error naming the command
/// and what git said.
pub fn run(dir: &Path, args: &[&str], input: Option<&[u8]>) -> io::Result<Vec<u8>> {
    run_in(dir, args, input, None)
}

/// [`run`] for a git that changes the repository (a worktree the agent makes or removes,
/// once the user was asked): it may write under `writable` and nowhere else; the
/// repository's programs stay off (hooks, filters, fsmonitor).
pub(crate) fn run_writing(
    dir: &Path,
    args: &[&str],
    writable: Vec<std::path::PathBuf>,
) -> io::Result<Vec<u8>> {
    run_in(dir, args, None, Some(writable))
}

fn run_in(
    dir: &Path,
    args: &[&str],
    input: Option<&[u8]>,
    writable: Option<Vec<std::path::PathBuf>>,
) -> io::Result<Vec<u8>> {
    let mut cmd = command(dir);
    cmd.args(args);
    let out = output_in(cmd, input, GIT_TIMEOUT, writable)?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "git {} failed ({}): {}",
            args.first().copied().unwrap_or_default(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests;
