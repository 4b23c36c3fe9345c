//! The keeper on macOS: the process between the agent and a command's shell, made in the child
//! between fork and exec, as on Linux (see `keeper.rs`). macOS has neither child subreapers
//! nor a parent-death signal, so:
//! - the shell runs in a process group of its own, which the keeper kills whole;
//! - every 200 ms the keeper records the processes below it (pid and start time), so one that
//!   left the group (`setsid`) is still killed at the end, unless it was started and orphaned
//!   within one such interval;
//! - a kqueue watches the agent (`EVFILT_PROC` / `NOTE_EXIT`): the agent ending, however it
//!   ends, ends the command.
//!
//! When the shell exits, when the agent sends SIGTERM, or when the agent is gone, the keeper
//! kills the group and every recorded process still alive, reaps its children and exits with
//! the shell's status (128 + signal for a signal).
//!
//! Everything here runs in a forked copy of a multi-threaded process: only async-signal-safe
//! system calls, no allocation, no locks, no Rust I/O.

use std::io;

use libc::{c_int, pid_t};

use super::keeper_wait::{exit_code, reap};

/// Signals the keeper waits for; blocked, and taken through the kqueue.
const WATCHED: [c_int; 5] = [
    libc::SIGCHLD,
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
];

/// How often the processes below the keeper are recorded, in milliseconds.
const TRACK_EVERY_MS: isize = 200;
/// Processes recorded at most; past it, the group kill still ends the rest of the group.
const MAX_TRACKED: usize = 1024;

/// The `pre_exec` hook: in the child, becomes the keeper, and returns only in the shell's
/// process. The sandbox on macOS is `sandbox-exec`, which the shell's process execs, so the
/// keeper itself stays outside it.
pub(super) fn hook(parent: pid_t) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
    move || {
        // SAFETY: runs in the child between fork and exec; `keep` makes only async-signal-safe
        // system calls and returns only in the grandchild, which goes on to exec.
        unsafe { keep(parent) }
    }
}

/// # Safety
/// Only between fork and exec (see the module comment).
unsafe fn keep(parent: pid_t) -> io::Result<()> {
    // SAFETY: plain system calls on integers and on stack memory owned here.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in WATCHED {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            libc::_exit(128 + libc::SIGTERM);
        }
        let shell = libc::fork();
        if shell < 0 {
            return Err(io::Error::last_os_error());
        }
        if shell == 0 {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            // A group of its own, which the keeper kills whole.
            libc::setpgid(0, 0);
            return Ok(());
        }
        // Also from this side, so the group exists before the keeper could kill it.
        libc::setpgid(shell, shell);
        keeper_loop(parent, shell)
    }
}

/// A process seen below the keeper: its pid and start time (so a reused pid is never killed).
#[derive(Clone, Copy)]
struct Seen {
    pid: pid_t,
    start: (u64, u64),
}

struct Tracked {
    seen: [Seen; MAX_TRACKED],
    len: usize,
}

/// # Safety
/// Only in the keeper (see the module comment).
unsafe fn keeper_loop(parent: pid_t, shell: pid_t) -> ! {
    // SAFETY: as above; `events` and `tracked` are stack memory owned here.
    unsafe {
        close_all_fds();
        let mut tracked = Tracked {
            seen: [Seen {
                pid: 0,
                start: (0, 0),
            }; MAX_TRACKED],
            len: 0,
        };
        let kq = libc::kqueue();
        if kq < 0 {
            end(shell, &mut tracked, 128 + libc::SIGTERM);
        }
        let mut changes: [libc::kevent; 8] = std::mem::zeroed();
        let mut n = 0;
        let mut add = |ident: usize, filter: i16, fflags: u32, data: isize| {
            changes[n] = libc::kevent {
                ident,
                filter,
                flags: libc::EV_ADD,
                fflags,
                data,
                udata: std::ptr::null_mut(),
            };
            n += 1;
        };
        add(parent as usize, libc::EVFILT_PROC, libc::NOTE_EXIT, 0);
        add(shell as usize, libc::EVFILT_PROC, libc::NOTE_EXIT, 0);
        for s in WATCHED {
            add(s as usize, libc::EVFILT_SIGNAL, 0, 0);
        }
        add(1, libc::EVFILT_TIMER, 0, TRACK_EVERY_MS);
        let registered = libc::kevent(
            kq,
            changes.as_ptr(),
            n as c_int,
            std::ptr::null_mut(),
            0,
            std::ptr::null(),
        );
        // The agent went away before the watch was in place (ESRCH), or is gone now.
        if registered < 0 || libc::getppid() != parent {
            end(shell, &mut tracked, 128 + libc::SIGTERM);
        }
        loop {
            let mut ev: libc::kevent = std::mem::zeroed();
            let got = libc::kevent(kq, std::ptr::null(), 0, &mut ev, 1, std::ptr::null());
            if got < 0 {
                if *libc::__error() == libc::EINTR {
                    continue;
                }
                end(shell, &mut tracked, 128 + libc::SIGTERM);
            }
            if got == 0 {
                continue;
            }
            match ev.filter {
                libc::EVFILT_PROC if ev.ident == shell as usize => {
                    let mut status = 0;
                    libc::waitpid(shell, &mut status, 0);
                    end(shell, &mut tracked, exit_code(status));
                }
                libc::EVFILT_PROC => end(shell, &mut tracked, 128 + libc::SIGTERM),
                libc::EVFILT_SIGNAL if ev.ident == libc::SIGCHLD as usize => {
                    if let Some(status) = reap(shell) {
                        end(shell, &mut tracked, exit_code(status));
                    }
                }
                libc::EVFILT_SIGNAL => end(shell, &mut tracked, 128 + ev.ident as c_int),
                libc::EVFILT_TIMER => track(&mut tracked),
                _ => {}
            }
        }
    }
}

/// The start time of `pid`, if it is alive and not a zombie.
unsafe fn started(pid: pid_t) -> Option<(u64, u64)> {
    // SAFETY: proc_pidinfo writes at most the size given into `info`.
    unsafe {
        let mut info: libc::proc_bsdinfo = std::mem::zeroed();
        let size = std::mem::size_of::<libc::proc_bsdinfo>() as c_int;
        let n = libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size);
        (n == size && info.pbi_status != libc::SZOMB)
            .then_some((info.pbi_start_tvsec, info.pbi_start_tvusec))
    }
}

/// Records the children of the keeper and of every recorded process.
unsafe fn track(t: &mut Tracked) {
    // SAFETY: as above.
    unsafe {
        let me = libc::getpid();
        let mut i = 0;
        let mut parent = me;
        loop {
            let mut kids = [0 as pid_t; 256];
            let got = libc::proc_listchildpids(
                parent,
                kids.as_mut_ptr().cast(),
                std::mem::size_of_val(&kids) as c_int,
            );
            // A count of pids (or of bytes on some releases): the unused tail stays zero.
            let got = if got > 0 { got as usize } else { 0 };
            for &pid in &kids[..got.min(kids.len())] {
                if pid <= 0 || t.len >= MAX_TRACKED || t.seen[..t.len].iter().any(|s| s.pid == pid)
                {
                    continue;
                }
                if let Some(start) = started(pid) {
                    t.seen[t.len] = Seen { pid, start };
                    t.len += 1;
                }
            }
            if i >= t.len {
                return;
            }
            parent = t.seen[i].pid;
            i += 1;
        }
    }
}

/// Kills the shell's group and every recorded process, until none is left, and exits.
unsafe fn end(shell: pid_t, t: &mut Tracked, code: c_int) -> ! {
    // SAFETY: as above; kill and killpg have no memory effects, and a recorded pid is only
    // signalled while its start time still matches.
    unsafe {
        for _ in 0..200 {
            track(t);
            let mut alive = libc::killpg(shell, libc::SIGKILL) == 0;
            for s in &t.seen[..t.len] {
                if started(s.pid) == Some(s.start) {
                    libc::kill(s.pid, libc::SIGKILL);
                    alive = true;
                }
            }
            while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
            if !alive {
                break;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 5_000_000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
        libc::_exit(code)
    }
}

/// Closes every descriptor: the keeper must not hold the command's pipes open (their readers
/// wait for the end of output) nor the spawn error pipe.
unsafe fn close_all_fds() {
    // SAFETY: getrlimit writes only `lim`; closing descriptors has no memory effects.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur.min(65_536) as c_int
        } else {
            4096
        };
        for fd in 0..max {
            libc::close(fd);
        }
    }
}
