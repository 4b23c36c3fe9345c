//! Running a shell command: its own process group, streamed output, bounded memory, a timeout,
//! and cancellation that kills the whole group.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::truncate::HeadTailBuffer;

/// Output kept in memory per command; the middle of anything longer is dropped.
pub const MAX_CAPTURE_BYTES: usize = 1024 * 1024;

/// Processes a command may have alive at once by default (`max_processes`).
pub const DEFAULT_MAX_PROCESSES: usize = 256;
/// How often a running command's processes are counted.
const CENSUS_EVERY: Duration = Duration::from_millis(200);

#[derive(Debug, Clone)]
pub struct ExecResult {
    pub exit_code: Option<i32>,
    /// stdout and stderr interleaved as they arrived.
    pub output: String,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration: Duration,
}

/// Runs `command` with `/bin/bash -c` (or `/bin/sh`), under the process sandbox when
/// `confinement` is given: the Landlock ruleset is built here, before the fork, and entered by
/// the child before `exec`. If it cannot be built or entered, the command does not run. A
/// command whose process group grows past `max_processes` is killed, group and all.
pub async fn run_command_confined(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
    confinement: Option<&crate::sandbox::Confinement>,
    max_processes: usize,
    mut on_chunk: impl FnMut(&str) + Send,
) -> std::io::Result<ExecResult> {
    let start = Instant::now();
    let sandbox = confinement.map(crate::sandbox::Prepared::new).transpose()?;
    let shell = if Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "/bin/sh"
    };
    let mut cmd = tokio::process::Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .process_group(0)
        .kill_on_drop(true);
    // Keys we were given stay ours: commands do not inherit the variables they came from.
    for var in crate::secrets::secret_env_vars() {
        cmd.env_remove(var);
    }
    if let Some(sandbox) = &sandbox {
        // SAFETY: the hook only makes two system calls (prctl, landlock_restrict_self), which
        // are async-signal-safe; it allocates nothing and takes no locks. The ruleset
        // descriptor it uses stays open in `sandbox` until after the spawn.
        unsafe {
            cmd.pre_exec(sandbox.enter_hook());
        }
    }
    let spawned = cmd.spawn();
    drop(sandbox);
    let mut child = spawned.map_err(|e| {
        let what = if confinement.is_some() {
            " in the sandbox"
        } else {
            ""
        };
        std::io::Error::new(
            e.kind(),
            format!("starting `{shell} -c`{what} in {}: {e}", cwd.display()),
        )
    })?;
    let pgid = child.id().map(|p| p as i32);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    for pipe in [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut pipe = pipe;
            let mut buf = vec![0u8; 8192];
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
    drop(tx);

    let mut captured = HeadTailBuffer::new(MAX_CAPTURE_BYTES);
    let mut pending_utf8: Vec<u8> = Vec::new();
    let mut emit =
        |bytes: Vec<u8>, captured: &mut HeadTailBuffer, on_chunk: &mut dyn FnMut(&str)| {
            captured.push(&bytes);
            pending_utf8.extend_from_slice(&bytes);
            let valid = match std::str::from_utf8(&pending_utf8) {
                Ok(_) => pending_utf8.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => pending_utf8.len(),
            };
            if valid > 0 {
                let chunk: Vec<u8> = pending_utf8.drain(..valid).collect();
                on_chunk(&String::from_utf8_lossy(&chunk));
            }
        };

    let deadline = tokio::time::Instant::now() + timeout;
    let mut timed_out = false;
    let mut cancelled = false;
    let mut too_many = None;
    let mut status = None;
    let mut output_open = true;
    let mut census =
        tokio::time::interval_at(tokio::time::Instant::now() + CENSUS_EVERY, CENSUS_EVERY);
    census.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while status.is_none() {
        tokio::select! {
            s = child.wait() => { status = Some(s?); }
            chunk = rx.recv(), if output_open => match chunk {
                Some(bytes) => emit(bytes, &mut captured, &mut on_chunk),
                None => output_open = false,
            },
            _ = tokio::time::sleep_until(deadline) => { timed_out = true; break; }
            _ = cancel.cancelled() => { cancelled = true; break; }
            _ = census.tick(), if pgid.is_some() => {
                let group = pgid.unwrap_or_default();
                let alive = tokio::task::spawn_blocking(move || group_size(group)).await.ok().flatten();
                if let Some(n) = alive.filter(|n| *n > max_processes) {
                    too_many = Some(n);
                    break;
                }
            }
        }
    }
    if timed_out || cancelled || too_many.is_some() {
        kill_group(pgid);
        status = child.wait().await.ok();
    }
    if let Some(n) = too_many {
        let note = format!(
            "\n[stopped: the command had {n} processes alive, over the limit of {max_processes} (max_processes); all were killed]\n"
        );
        emit(note.into_bytes(), &mut captured, &mut on_chunk);
    }
    // Drain what is left; background children that keep the pipes open are not waited for.
    let drain_until = tokio::time::Instant::now() + Duration::from_millis(200);
    while output_open {
        tokio::select! {
            chunk = rx.recv() => match chunk {
                Some(bytes) => emit(bytes, &mut captured, &mut on_chunk),
                None => output_open = false,
            },
            _ = tokio::time::sleep_until(drain_until) => break,
        }
    }
    // Nothing the command started outlives it.
    kill_group(pgid);
    let exit_code = status.and_then(|s| {
        use std::os::unix::process::ExitStatusExt;
        s.code().or_else(|| s.signal().map(|sig| 128 + sig))
    });
    Ok(ExecResult {
        exit_code,
        output: captured.into_string(),
        timed_out,
        cancelled,
        duration: start.elapsed(),
    })
}

/// Processes (zombies included) in process group `pgid`, counted from /proc; None where /proc
/// cannot be read.
fn group_size(pgid: i32) -> Option<usize> {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command name, which may itself hold spaces and parentheses:
        // state, ppid, pgrp, ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if rest
            .split_ascii_whitespace()
            .nth(2)
            .and_then(|g| g.parse().ok())
            == Some(pgid)
        {
            n += 1;
        }
    }
    Some(n)
}

fn kill_group(pgid: Option<i32>) {
    if let Some(pgid) = pgid.filter(|p| *p > 0) {
        // SAFETY: killpg has no memory-safety preconditions; a stale group id just fails.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
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
            DEFAULT_MAX_PROCESSES,
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
        let left = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .filter(|c| c.ends_with(format!("sleep\0{marker}\0").as_bytes()))
            .count();
        assert_eq!(left, 0, "sleeps outlived the command");
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
