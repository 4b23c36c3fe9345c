//! The keeper: the process between the agent and a command's shell, made in the child between
//! fork and exec. It is a child subreaper, so every process the command starts stays below it
//! whatever it does (`setsid`, `setpgid`, double forks): orphans are re-parented to it, not to
//! init. When the shell exits, or the keeper is told to stop (SIGTERM from the agent, or the
//! agent dying: its parent-death signal), it kills everything below it, reaps it all and exits
//! with the shell's status (128 + signal for a signal).
//!
//! Everything here runs in a forked copy of a multi-threaded process: only async-signal-safe
//! system calls, no allocation, no locks, no Rust I/O.

use std::io;
use std::os::fd::RawFd;

use libc::{c_int, pid_t};

use super::keeper_wait::{exit_code, reap};

/// Signals the keeper waits for; blocked so it can take them with `sigwaitinfo`.
const WATCHED: [c_int; 5] = [
    libc::SIGCHLD,
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
];

/// The `pre_exec` hook: in the child, joins the command's cgroup (if `cgroup_procs` is an
/// open `cgroup.procs`), becomes the keeper, and returns only in the shell's process, after
/// running `enter` there (the Landlock ruleset: the keeper itself stays outside it, so a
/// confined command cannot signal it on kernels that scope signals).
pub(super) fn hook<F>(
    parent: pid_t,
    cgroup_procs: Option<RawFd>,
    mut enter: Option<F>,
) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static
where
    F: FnMut() -> io::Result<()> + Send + Sync + 'static,
{
    move || {
        // SAFETY: runs in the child between fork and exec; `keep` makes only async-signal-safe
        // system calls and returns only in the grandchild, which goes on to exec.
        unsafe { keep(parent, cgroup_procs)? };
        if let Some(enter) = enter.as_mut() {
            enter()?;
        }
        Ok(())
    }
}

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

/// # Safety
/// Only between fork and exec (see the module comment).
unsafe fn keep(parent: pid_t, cgroup_procs: Option<RawFd>) -> io::Result<()> {
    // SAFETY: plain system calls on integers and on stack memory owned here.
    unsafe {
        if let Some(fd) = cgroup_procs {
            // "0" moves the writing process. A failure is seen by the agent (the keeper is
            // not in the cgroup) and the command runs with the keeper alone.
            let _ = libc::write(fd, b"0".as_ptr().cast(), 1);
        }
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(last_error());
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in WATCHED {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
            return Err(last_error());
        }
        // The agent going away, however it goes, ends the command.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0) != 0 {
            return Err(last_error());
        }
        if libc::getppid() != parent {
            libc::_exit(128 + libc::SIGTERM);
        }
        let shell = libc::fork();
        if shell < 0 {
            return Err(last_error());
        }
        if shell == 0 {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            // The shell dies with its keeper.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            return Ok(());
        }
        keeper_loop(shell, &set)
    }
}

/// # Safety
/// Only in the keeper (see the module comment).
unsafe fn keeper_loop(shell: pid_t, set: &libc::sigset_t) -> ! {
    // SAFETY: as above.
    unsafe {
        close_all_fds();
        loop {
            let sig = libc::sigwaitinfo(set, std::ptr::null_mut());
            match sig {
                libc::SIGCHLD => {
                    if let Some(status) = reap(shell) {
                        end(exit_code(status));
                    }
                }
                libc::SIGTERM | libc::SIGINT | libc::SIGHUP | libc::SIGQUIT => end(128 + sig),
                _ => {}
            }
        }
    }
}

/// Kills everything below the keeper and exits with `code`.
unsafe fn end(code: c_int) -> ! {
    // SAFETY: as above.
    unsafe {
        kill_descendants();
        libc::_exit(code)
    }
}

/// Kills the keeper's children until it has none: each killed process's own children are
/// re-parented to the keeper (a subreaper) and killed in the next round.
unsafe fn kill_descendants() {
    // SAFETY: as above.
    unsafe {
        loop {
            signal_children(libc::SIGKILL);
            let mut status = 0;
            let r = libc::waitpid(-1, &mut status, 0);
            if r < 0 && *libc::__errno_location() == libc::ECHILD {
                return;
            }
            while libc::waitpid(-1, &mut status, libc::WNOHANG) > 0 {}
        }
    }
}

/// Sends `sig` to every child of the calling (single-threaded) process.
unsafe fn signal_children(sig: c_int) {
    // SAFETY: as above; the path is a NUL-terminated constant.
    unsafe {
        let fd = libc::open(
            c"/proc/thread-self/children".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            signal_children_by_scan(sig);
            return;
        }
        let mut buf = [0u8; 4096];
        let mut pid: pid_t = 0;
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            for &b in &buf[..n as usize] {
                if b.is_ascii_digit() {
                    pid = pid.saturating_mul(10).saturating_add(pid_t::from(b - b'0'));
                } else {
                    if pid > 0 {
                        libc::kill(pid, sig);
                    }
                    pid = 0;
                }
            }
        }
        if pid > 0 {
            libc::kill(pid, sig);
        }
        libc::close(fd);
    }
}

/// Without `/proc/<pid>/task/<tid>/children` (a kernel built without it): every process in
/// `/proc` whose parent is the caller.
unsafe fn signal_children_by_scan(sig: c_int) {
    // SAFETY: as above; getdents64 writes at most `buf.len()` bytes into `buf`.
    unsafe {
        let me = libc::getpid();
        let dir = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return;
        }
        let mut buf = [0u8; 8192];
        loop {
            let n = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len());
            if n <= 0 {
                break;
            }
            let mut off = 0usize;
            while off + 19 < n as usize {
                // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name.
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                if reclen == 0 {
                    break;
                }
                let name = &buf[off + 19..(off + reclen).min(n as usize)];
                if let Some(pid) = parse_pid(name)
                    && parent_of(pid) == Some(me)
                {
                    libc::kill(pid, sig);
                }
                off += reclen;
            }
        }
        libc::close(dir);
    }
}

/// A NUL-terminated decimal name.
fn parse_pid(name: &[u8]) -> Option<pid_t> {
    let mut pid: pid_t = 0;
    let mut any = false;
    for &b in name {
        if b == 0 {
            break;
        }
        if !b.is_ascii_digit() {
            return None;
        }
        pid = pid.checked_mul(10)?.checked_add(pid_t::from(b - b'0'))?;
        any = true;
    }
    any.then_some(pid)
}

/// The parent of `pid`, from `/proc/<pid>/stat` (after the name in parentheses: state, ppid).
unsafe fn parent_of(pid: pid_t) -> Option<pid_t> {
    let mut path = [0u8; 32];
    let prefix = b"/proc/";
    path[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 12];
    let mut d = 0;
    let mut v = pid;
    loop {
        digits[d] = b'0' + (v % 10) as u8;
        d += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut at = prefix.len();
    for k in (0..d).rev() {
        path[at] = digits[k];
        at += 1;
    }
    path[at..at + 5].copy_from_slice(b"/stat");
    // SAFETY: `path` is NUL-terminated (zero-filled past the text); reads into `buf` only.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut buf = [0u8; 512];
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        if n <= 0 {
            return None;
        }
        let stat = &buf[..n as usize];
        let close = stat.iter().rposition(|&b| b == b')')?;
        // ") S 1234 "
        let rest = stat.get(close + 4..)?;
        let mut ppid: pid_t = 0;
        for &b in rest {
            if !b.is_ascii_digit() {
                break;
            }
            ppid = ppid.checked_mul(10)?.checked_add(pid_t::from(b - b'0'))?;
        }
        Some(ppid)
    }
}

/// Closes every descriptor: the keeper must not hold the command's pipes open (their readers
/// wait for the end of output) nor the spawn error pipe.
unsafe fn close_all_fds() {
    // SAFETY: closing descriptors has no memory effects.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..4096 {
                libc::close(fd);
            }
        }
    }
}
