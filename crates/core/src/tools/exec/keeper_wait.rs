//! What both keepers (Linux and macOS) do when children end: reap them all, and turn the
//! shell's wait status into an exit code. Async-signal-safe, as the keepers must be.

use libc::{c_int, pid_t};

/// The exit code for a wait status: the code, or 128 + the signal.
pub(super) fn exit_code(status: c_int) -> c_int {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

/// Reaps every child that has ended; the shell's wait status if it was one of them.
///
/// # Safety
/// Only in the keeper, which owns every child it may reap.
pub(super) unsafe fn reap(shell: pid_t) -> Option<c_int> {
    let mut shell_status = None;
    loop {
        let mut status = 0;
        // SAFETY: writes only `status`.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r <= 0 {
            return shell_status;
        }
        if r == shell {
            shell_status = Some(status);
        }
    }
}
