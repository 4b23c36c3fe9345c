//! Running a shell command: its whole process tree kept below a keeper (and in its own cgroup
//! where one can be made), streamed output, bounded memory, a timeout, and cancellation that
//! ends everything the command started.
//!
//! Nothing a command starts outlives it: when its shell exits, when it times out, is cancelled
//! or goes over `max_processes`, and when the agent exits (however it exits, SIGKILL included:
//! the keeper's parent-death signal), every process below the keeper is killed, including those
//! that left the command's process group or session (`setsid`, `setpgid`, `set -m`). There is
//! no way to leave a process running in the background on purpose.
//!
//! Per platform: Linux keeps the tree below a subreaper keeper (and in a cgroup); macOS below
//! a keeper that kills the shell's process group and what it saw below it (`keeper_macos.rs`);
//! Windows in a Job Object (`job.rs`). The shell is bash (else sh) on Unix and PowerShell on
//! Windows (`shell.rs`).

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod keeper;
#[cfg(target_os = "macos")]
#[path = "exec/keeper_macos.rs"]
mod keeper;
#[cfg(any(target_os = "linux", target_os = "macos"))]
mod keeper_wait;
#[cfg(unix)]
mod pty;
pub(crate) mod shell;
#[cfg(unix)]
mod tree;
#[cfg(windows)]
#[path = "exec/job.rs"]
mod tree;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::truncate::HeadTailBuffer;
use tree::ProcessTree;
pub(crate) use tree::ServerTree;

/// Spawns a long-lived child that is not a command (an MCP stdio server) in a process tree of
/// its own, as commands are: nothing it starts outlives it, the guard, or the agent (Linux and
/// macOS: a keeper above it, and a cgroup on Linux where one can be made; Windows: a Job
/// Object). `spawn` starts `cmd` and returns what it made and the started process's pid.
pub(crate) fn spawn_server<T: Send + 'static>(
    cmd: tokio::process::Command,
    spawn: impl FnOnce(tokio::process::Command) -> std::io::Result<(T, Option<u32>)> + Send + 'static,
) -> std::io::Result<(T, ServerTree)> {
    tree::spawn_server(cmd, spawn)
}

/// Output kept in memory per command; the middle of anything longer is dropped (and counted).
pub(crate) const MAX_CAPTURE_BYTES: usize = 1024 * 1024;

/// How often a running command's processes are counted.
const CENSUS_EVERY: Duration = Duration::from_millis(200);
/// Bytes read from a pipe at a time.
const READ_CHUNK: usize = 64 * 1024;
/// Output streamed live (to the editor, the terminal); past it only the end result, with its
/// exact counts, tells the rest. Gigabytes of deltas would help no one.
const MAX_STREAMED_BYTES: usize = 4 * 1024 * 1024;

/// How a shell command ended, and what it printed.
#[derive(Debug, Clone)]
pub struct ExecResult {
    /// The shell's exit code (128 + the signal that ended it, on Unix); None when no exit
    /// status could be read.
    pub exit_code: Option<i32>,
    /// stdout and stderr interleaved as they arrived; past [`MAX_CAPTURE_BYTES`], the middle
    /// is replaced by a marker with the exact bytes and lines dropped.
    pub output: String,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
    /// Cancellation came while it ran, and it was killed.
    pub cancelled: bool,
    /// Wall-clock time from its start to its result.
    pub duration: Duration,
}

impl ExecResult {
    /// The command ran to its end, in time and uncancelled, and exited 0.
    pub(crate) fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled
    }
}

/// Runs `command` with `/bin/bash -c` (or `/bin/sh`; PowerShell on Windows), under the process
/// sandbox when `confinement` is given: the Landlock ruleset is built here, before the fork,
/// and entered by the command's process before `exec` (macOS: the shell runs under
/// `sandbox-exec` with the profile). If it cannot be built or entered, the command does not
/// run. A command whose process tree grows past `max_processes` is killed, tree and all.
pub(crate) async fn run_command_confined(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
    confinement: Option<&crate::sandbox::Confinement>,
    max_processes: usize,
    on_chunk: impl FnMut(&str) + Send,
) -> std::io::Result<ExecResult> {
    run_command_with_input(
        command,
        cwd,
        timeout,
        cancel,
        confinement,
        max_processes,
        None,
        on_chunk,
    )
    .await
}

/// What an interactive command reads: bytes as they come, through a pipe or a terminal.
pub struct Input {
    /// What to type, as it comes; the input ends when the sender goes.
    pub bytes: mpsc::UnboundedReceiver<Vec<u8>>,
    /// A pseudo-terminal for stdin, stdout and stderr (Unix; elsewhere pipes).
    pub tty: bool,
}

/// How the command's stdio is made.
enum Io {
    Closed,
    Piped,
    /// The slave side of a pseudo-terminal.
    #[cfg(unix)]
    Tty(std::fs::File),
}

/// Like [`run_command_confined`], with `input` (when given) written to the command's stdin
/// as it comes; stdin closes when `input` does. Without it stdin is closed from the start.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_command_with_input(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
    confinement: Option<&crate::sandbox::Confinement>,
    max_processes: usize,
    input: Option<Input>,
    mut on_chunk: impl FnMut(&str) + Send,
) -> std::io::Result<ExecResult> {
    let start = Instant::now();
    let done = CancellationToken::new();
    let _done = done.clone().drop_guard();
    #[cfg(unix)]
    if let Some(Input { bytes, tty: true }) = input {
        let pty = pty::open()?;
        let mut tree = start_command(command, cwd, confinement, Io::Tty(pty.slave), &[])?;
        let output = pty::read_master(pty.master.try_clone()?, READ_CHUNK);
        pty::write_master(pty.master, bytes, done);
        let limits = Limits {
            deadline: tokio::time::Instant::now() + timeout,
            cancel,
            max_processes,
        };
        return run_to_end(&mut tree, output, &limits, &mut on_chunk, start).await;
    }
    let io = match &input {
        Some(_) => Io::Piped,
        None => Io::Closed,
    };
    let mut tree = start_command(command, cwd, confinement, io, &[])?;
    if let (Some(Input { mut bytes, .. }), Some(mut stdin)) = (input, tree.child.stdin.take()) {
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt as _;
            while let Some(chunk) = bytes.recv().await {
                if stdin.write_all(&chunk).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
    }
    let output = read_output(&mut tree.child);
    let limits = Limits {
        deadline: tokio::time::Instant::now() + timeout,
        cancel,
        max_processes,
    };
    run_to_end(&mut tree, output, &limits, &mut on_chunk, start).await
}

/// How a program the agent runs by itself (a hook) ended: its streams apart, each bounded.
#[derive(Debug)]
pub(crate) struct ProgramRun {
    pub(crate) exit_code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) timed_out: bool,
    pub(crate) cancelled: bool,
}

/// Runs `command` as a command of the session is run (shell, sandbox, process tree, no keys),
/// with `stdin` written to it and `env` added, keeping stdout and stderr apart. Each is kept
/// to [`MAX_CAPTURE_BYTES`] (head and tail); the rest is read and dropped, so a program that
/// prints without end neither blocks nor fills memory.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_program(
    command: &str,
    cwd: &Path,
    stdin: Vec<u8>,
    env: &[(&str, String)],
    timeout: Duration,
    cancel: &CancellationToken,
    confinement: Option<&crate::sandbox::Confinement>,
    max_processes: usize,
) -> std::io::Result<ProgramRun> {
    let mut tree = start_command(command, cwd, confinement, Io::Piped, env)?;
    if let Some(mut pipe) = tree.child.stdin.take() {
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt as _;
            // A program that does not read its input must not hold up its own run.
            let _ = pipe.write_all(&stdin).await;
            let _ = pipe.shutdown().await;
        });
    }
    let out = keep_bounded(tree.child.stdout.take());
    let err = keep_bounded(tree.child.stderr.take());
    let limits = Limits {
        deadline: tokio::time::Instant::now() + timeout,
        cancel,
        max_processes,
    };
    let (_tx, mut none) = mpsc::channel::<Vec<u8>>(1);
    let mut ignore = |_: &str| {};
    let mut capture = Capture::new(&mut ignore);
    let ended = supervise(&mut tree, &mut none, &mut capture, &limits).await?;
    let status = end_tree(&mut tree, &ended).await;
    let text = |h: tokio::task::JoinHandle<HeadTailBuffer>| async move {
        match tokio::time::timeout(Duration::from_millis(500), h).await {
            Ok(Ok(b)) => b.into_string(),
            _ => String::new(),
        }
    };
    Ok(ProgramRun {
        exit_code: status.and_then(exit_code),
        stdout: text(out).await,
        stderr: text(err).await,
        timed_out: ended.timed_out,
        cancelled: ended.cancelled,
    })
}

/// Reads a pipe to its end, keeping its head and tail.
fn keep_bounded(
    pipe: Option<impl tokio::io::AsyncRead + Unpin + Send + 'static>,
) -> tokio::task::JoinHandle<HeadTailBuffer> {
    tokio::spawn(async move {
        let mut kept = HeadTailBuffer::new(MAX_CAPTURE_BYTES);
        if let Some(mut pipe) = pipe {
            let mut buf = vec![0u8; READ_CHUNK];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                kept.push(&buf[..n]);
            }
        }
        kept
    })
}

/// Streams the command's `output` until it ends or `limits` end it, then ends its tree.
async fn run_to_end(
    tree: &mut ProcessTree,
    mut output: mpsc::Receiver<Vec<u8>>,
    limits: &Limits<'_>,
    on_chunk: &mut (dyn FnMut(&str) + Send),
    start: Instant,
) -> std::io::Result<ExecResult> {
    let mut capture = Capture::new(on_chunk);
    let ended = supervise(tree, &mut output, &mut capture, limits).await?;
    let status = end_tree(tree, &ended).await;
    if let Some(n) = ended.too_many {
        capture.push(format!(
            "\n[stopped: the command had {n} processes alive, over the limit of {} (max_processes); all were killed]\n",
            limits.max_processes
        ).into_bytes());
    }
    drain(&mut output, &mut capture).await;
    let exit_code = status.and_then(exit_code);
    Ok(ExecResult {
        exit_code,
        output: capture.finish(),
        timed_out: ended.timed_out,
        cancelled: ended.cancelled,
        duration: start.elapsed(),
    })
}

/// The exit code, or 128 + the signal that ended the shell (Unix).
fn exit_code(s: std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        s.code().or_else(|| s.signal().map(|sig| 128 + sig))
    }
    #[cfg(not(unix))]
    {
        s.code()
    }
}

/// Builds the shell command and spawns it as one process tree, confined when asked.
fn start_command(
    command: &str,
    cwd: &Path,
    confinement: Option<&crate::sandbox::Confinement>,
    io: Io,
    env: &[(&str, String)],
) -> std::io::Result<ProcessTree> {
    let sandbox = confinement.map(crate::sandbox::Prepared::new).transpose()?;
    let shell = shell::Shell::detect();
    let mut argv = shell.argv(command);
    if let Some(s) = &sandbox {
        argv = s.wrap(argv);
    }
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("NO_COLOR", "1")
        .env("TERM", "dumb");
    for (k, v) in env {
        cmd.env(k, v);
    }
    #[cfg(unix)]
    let tty = matches!(io, Io::Tty(_));
    #[cfg(not(unix))]
    let tty = false;
    match io {
        Io::Closed | Io::Piped => {
            let stdin = matches!(io, Io::Piped);
            cmd.stdin(if stdin { Stdio::piped() } else { Stdio::null() })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
        }
        #[cfg(unix)]
        Io::Tty(slave) => {
            cmd.stdin(Stdio::from(slave.try_clone()?))
                .stdout(Stdio::from(slave.try_clone()?))
                .stderr(Stdio::from(slave))
                .env("TERM", "xterm-256color");
        }
    }
    #[cfg(unix)]
    cmd.process_group(0);
    // Keys we were given stay ours: commands do not inherit the variables they came from.
    for var in crate::secrets::secret_env_vars() {
        cmd.env_remove(var);
    }
    let spawned = tree::spawn(cmd, sandbox.as_ref(), tty);
    // The ruleset descriptor the hook uses stays open until the spawn is done.
    #[cfg(target_os = "linux")]
    drop(sandbox);
    spawned.map_err(|e| {
        let what = if confinement.is_some() {
            " in the sandbox"
        } else {
            ""
        };
        std::io::Error::new(
            e.kind(),
            format!(
                "starting `{}`{what} in {}: {e}",
                shell.describe(),
                cwd.display()
            ),
        )
    })
}

/// Reads stdout and stderr into one channel of chunks, as they arrive.
fn read_output(child: &mut tokio::process::Child) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let pipes = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    ];
    for mut pipe in pipes.into_iter().flatten() {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; READ_CHUNK];
            loop {
                match pipe.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
    }
    rx
}

/// The bounded capture of a command's output, and the callback that streams it as text.
struct Capture<'a> {
    buffer: HeadTailBuffer,
    /// Bytes of a UTF-8 character split across chunks.
    pending_utf8: Vec<u8>,
    on_chunk: &'a mut (dyn FnMut(&str) + Send),
    streamed: usize,
}

impl<'a> Capture<'a> {
    fn new(on_chunk: &'a mut (dyn FnMut(&str) + Send)) -> Self {
        Capture {
            buffer: HeadTailBuffer::new(MAX_CAPTURE_BYTES),
            pending_utf8: Vec::new(),
            on_chunk,
            streamed: 0,
        }
    }

    fn push(&mut self, bytes: Vec<u8>) {
        self.buffer.push(&bytes);
        if self.streamed >= MAX_STREAMED_BYTES {
            return;
        }
        self.streamed += bytes.len();
        if self.streamed >= MAX_STREAMED_BYTES {
            (self.on_chunk)(
                "\n[… live output stops here; the command's output is summarized when it ends …]\n",
            );
            return;
        }
        self.pending_utf8.extend_from_slice(&bytes);
        let valid = match std::str::from_utf8(&self.pending_utf8) {
            Ok(_) => self.pending_utf8.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending_utf8.len(),
        };
        if valid > 0 {
            let chunk: Vec<u8> = self.pending_utf8.drain(..valid).collect();
            (self.on_chunk)(&String::from_utf8_lossy(&chunk));
        }
    }

    fn finish(self) -> String {
        self.buffer.into_string()
    }
}

struct Limits<'a> {
    deadline: tokio::time::Instant,
    cancel: &'a CancellationToken,
    max_processes: usize,
}

/// How the command's run ended.
#[derive(Default)]
struct Ended {
    status: Option<std::process::ExitStatus>,
    timed_out: bool,
    cancelled: bool,
    /// Processes alive when the count went over `max_processes`.
    too_many: Option<usize>,
}

/// Streams output until the keeper exits (the shell ended and the keeper killed the rest), the
/// deadline passes, the run is cancelled, or the tree grows too large.
async fn supervise(
    tree: &mut ProcessTree,
    output: &mut mpsc::Receiver<Vec<u8>>,
    capture: &mut Capture<'_>,
    limits: &Limits<'_>,
) -> std::io::Result<Ended> {
    let mut ended = Ended::default();
    let mut output_open = true;
    let mut census =
        tokio::time::interval_at(tokio::time::Instant::now() + CENSUS_EVERY, CENSUS_EVERY);
    census.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            s = tree.child.wait() => {
                ended.status = Some(s?);
                return Ok(ended);
            }
            chunk = output.recv(), if output_open => match chunk {
                Some(bytes) => capture.push(bytes),
                None => output_open = false,
            },
            _ = tokio::time::sleep_until(limits.deadline) => {
                ended.timed_out = true;
                return Ok(ended);
            }
            _ = limits.cancel.cancelled() => {
                ended.cancelled = true;
                return Ok(ended);
            }
            _ = census.tick() => {
                if let Some(n) = count(tree).await.filter(|n| *n > limits.max_processes) {
                    ended.too_many = Some(n);
                    return Ok(ended);
                }
            }
        }
    }
}

/// The command's processes, counted off the async threads (it reads /proc or the cgroup).
async fn count(tree: &ProcessTree) -> Option<usize> {
    let census = tree.census();
    tokio::task::spawn_blocking(move || census.count())
        .await
        .ok()
        .flatten()
}

/// Ends whatever is left of the tree and waits for the keeper: the exit status.
async fn end_tree(tree: &mut ProcessTree, ended: &Ended) -> Option<std::process::ExitStatus> {
    let mut status = ended.status;
    if status.is_none() {
        tree.kill();
        status = match tokio::time::timeout(Duration::from_secs(10), tree.child.wait()).await {
            Ok(s) => s.ok(),
            Err(_) => {
                // A keeper that does not finish (a process stuck in the kernel): last resort.
                let _ = tree.child.start_kill();
                tree.child.wait().await.ok()
            }
        };
    }
    tree.settle().await;
    status
}

/// Takes the output still in the pipes: the keeper killed every writer, so this ends at once
/// unless a process escaped to where we cannot reach it; bounded in that case.
async fn drain(output: &mut mpsc::Receiver<Vec<u8>>, capture: &mut Capture<'_>) {
    let until = tokio::time::Instant::now() + Duration::from_millis(500);
    loop {
        tokio::select! {
            chunk = output.recv() => match chunk {
                Some(bytes) => capture.push(bytes),
                None => return,
            },
            _ = tokio::time::sleep_until(until) => return,
        }
    }
}

// The commands are bash; Windows has its own tests in job.rs and shell.rs.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    async fn run_command(
        command: &str,
        cwd: &Path,
        timeout: Duration,
        cancel: &CancellationToken,
        on_chunk: impl FnMut(&str) + Send,
    ) -> std::io::Result<ExecResult> {
        run_command_confined(
            command,
            cwd,
            timeout,
            cancel,
            None,
            crate::config::DEFAULT_MAX_PROCESSES,
            on_chunk,
        )
        .await
    }

    #[tokio::test]
    async fn captures_both_streams_and_exit_code() {
        let dir = std::env::temp_dir();
        let mut chunks = String::new();
        let r = run_command(
            "echo out; echo err >&2; exit 3",
            &dir,
            Duration::from_secs(10),
            &CancellationToken::new(),
            |c| chunks.push_str(c),
        )
        .await
        .unwrap();
        assert_eq!(r.exit_code, Some(3));
        assert!(r.output.contains("out") && r.output.contains("err"));
        assert_eq!(chunks, r.output);
    }

    #[tokio::test]
    async fn timeout_kills_the_group() {
        let r = run_command(
            "sleep 30 & sleep 30; echo never",
            &std::env::temp_dir(),
            Duration::from_millis(200),
            &CancellationToken::new(),
            |_| {},
        )
        .await
        .unwrap();
        assert!(r.timed_out);
        assert!(r.duration < Duration::from_secs(5));
        assert!(!r.output.contains("never"));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_command_over_the_process_limit_is_killed_whole() {
        let marker = "31.4159";
        let r = run_command_confined(
            &format!("for i in $(seq 1 40); do sleep {marker} & done; wait; echo never"),
            &std::env::temp_dir(),
            Duration::from_secs(20),
            &CancellationToken::new(),
            None,
            10,
            |_| {},
        )
        .await
        .unwrap();
        assert!(
            r.output.contains("over the limit of 10 (max_processes)"),
            "{}",
            r.output
        );
        assert!(!r.output.contains("never"));
        assert!(r.duration < Duration::from_secs(10));
        assert_eq!(alive_with(marker), 0, "sleeps outlived the command");
    }

    /// Processes with `marker` (a sleep duration) in their command line.
    #[cfg(not(target_os = "linux"))]
    fn alive_with(marker: &str) -> usize {
        let out = std::process::Command::new("ps")
            .args(["-A", "-o", "command="])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.trim_end().ends_with(&format!("sleep {marker}")))
            .count()
    }

    /// A command that ends leaves nothing behind on macOS either: not a background job of
    /// its group, not a process that made its own session (perl's setsid; macOS has no
    /// `setsid` command) and was orphaned once the keeper had seen it (its parent lives 1 s,
    /// past the keeper's 200 ms census).
    #[cfg(target_os = "macos")]
    #[tokio::test]
    async fn nothing_outlives_a_finished_command_on_macos() {
        let marker = "45.4142";
        let command = format!(
            "sleep {marker} & (sleep {marker} &); perl -MPOSIX -e 'if (fork) {{ sleep 1; exit }} POSIX::setsid(); exec \"sleep\", \"{marker}\"'; echo done"
        );
        let r = run_command(
            &command,
            &std::env::temp_dir(),
            Duration::from_secs(20),
            &CancellationToken::new(),
            |_| {},
        )
        .await
        .unwrap();
        assert_eq!(r.exit_code, Some(0), "{}", r.output);
        assert!(r.output.contains("done"));
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(alive_with(marker), 0, "processes outlived the command");
    }

    /// Processes with `marker` (a sleep duration) in their command line.
    #[cfg(target_os = "linux")]
    fn alive_with(marker: &str) -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .filter(|c| c.ends_with(format!("sleep\0{marker}\0").as_bytes()))
            .count()
    }

    /// Processes that leave the command's process group and session (`setsid`, `set -m`,
    /// double forks) are still the command's: counted, and killed with it.
    #[cfg(target_os = "linux")]
    async fn escapees_are_counted_and_killed(marker: &str) {
        let command = format!(
            "for i in $(seq 1 8); do setsid sleep {marker} & (set -m; sleep {marker} &); sh -c 'sleep {marker} &'; done; sleep 5; echo never"
        );
        let r = run_command_confined(
            &command,
            &std::env::temp_dir(),
            Duration::from_secs(20),
            &CancellationToken::new(),
            None,
            12,
            |_| {},
        )
        .await
        .unwrap();
        assert!(
            r.output.contains("over the limit of 12 (max_processes)"),
            "{}",
            r.output
        );
        assert!(!r.output.contains("never"));
        assert_eq!(alive_with(marker), 0, "processes outlived the command");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn escapees_are_counted_and_killed_in_a_cgroup() {
        escapees_are_counted_and_killed("41.4142").await;
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn escapees_are_counted_and_killed_by_the_keeper_alone() {
        cgroup::DISABLED.with(|d| d.set(true));
        escapees_are_counted_and_killed("42.4142").await;
    }

    /// A command that ends leaves nothing behind: not `setsid -f`, not `nohup … &`, not a
    /// double fork.
    #[cfg(target_os = "linux")]
    async fn nothing_outlives_a_finished_command(marker: &str) {
        let command = format!(
            "setsid -f sleep {marker}; (set -m; sleep {marker} &); nohup sleep {marker} >/dev/null 2>&1 & disown; sh -c 'sleep {marker} &'; echo done"
        );
        let r = run_command_confined(
            &command,
            &std::env::temp_dir(),
            Duration::from_secs(20),
            &CancellationToken::new(),
            None,
            crate::config::DEFAULT_MAX_PROCESSES,
            |_| {},
        )
        .await
        .unwrap();
        assert_eq!(r.exit_code, Some(0), "{}", r.output);
        assert!(r.output.contains("done"));
        assert!(r.duration < Duration::from_secs(5), "{:?}", r.duration);
        assert_eq!(alive_with(marker), 0, "processes outlived the command");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn nothing_outlives_a_finished_command_in_a_cgroup() {
        nothing_outlives_a_finished_command("43.4142").await;
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn nothing_outlives_a_finished_command_with_the_keeper_alone() {
        cgroup::DISABLED.with(|d| d.set(true));
        nothing_outlives_a_finished_command("44.4142").await;
    }

    #[tokio::test]
    async fn exit_codes_and_signals_come_through_the_keeper() {
        for (cmd, code) in [("exit 7", 7), ("kill -9 $$", 137), ("true", 0)] {
            let r = run_command(
                cmd,
                &std::env::temp_dir(),
                Duration::from_secs(10),
                &CancellationToken::new(),
                |_| {},
            )
            .await
            .unwrap();
            assert_eq!(r.exit_code, Some(code), "{cmd}");
        }
    }

    #[tokio::test]
    async fn cancel_is_prompt() {
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c2.cancel();
        });
        let r = run_command(
            "sleep 30",
            &std::env::temp_dir(),
            Duration::from_secs(60),
            &cancel,
            |_| {},
        )
        .await
        .unwrap();
        assert!(r.cancelled);
        assert!(r.duration < Duration::from_secs(2));
    }
}
