//! What differs between Unix and Windows outside the process sandbox and commands' process
//! trees: owner-only file modes, the signals that stop a face, whether a process is alive.
//!
//! On Windows, files created in the user's profile inherit its owner-only ACL, so the Unix
//! modes asked for here have no counterpart to set; a mode cannot be read either, so "others
//! can read it" is never claimed.

use std::fs::{Metadata, OpenOptions};

/// `o` creates files with `mode` (Unix); on Windows the folder's ACL decides.
pub fn create_mode(o: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = mode;
        o
    }
}

/// Opens `path` for reading without blocking (a FIFO or a device opens at once, and is told
/// by the metadata, which is the open file's own) and, unless `follow`, without following a
/// link at the last step. Callers read only what the metadata says is a regular file.
pub fn open_nonblocking(
    path: &std::path::Path,
    follow: bool,
) -> std::io::Result<(std::fs::File, Metadata)> {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        o.custom_flags(nofollow | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    // Windows has no FIFOs in the file system; a link at the last step is checked here.
    #[cfg(windows)]
    if !follow && std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(std::io::Error::other(format!(
            "{} is a link",
            path.display()
        )));
    }
    let file = o.open(path)?;
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// The permission bits of a file (Unix); None where there are none.
pub(crate) fn mode(meta: &Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Whether process `pid` still exists.
pub fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
        use windows_sys::Win32::System::Threading::{
            GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
        };
        // SAFETY: opens, queries and closes a process handle; no memory but `code` written.
        unsafe {
            let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
            if h.is_null() {
                return false;
            }
            let mut code = 0u32;
            let ok = GetExitCodeProcess(h, &mut code) != 0;
            CloseHandle(h);
            ok && code == STILL_ACTIVE as u32
        }
    }
}

/// A name for this user in shared folders (the uid on Unix, the user name on Windows).
pub fn user_tag() -> String {
    #[cfg(unix)]
    {
        // SAFETY: getuid has no preconditions and cannot fail.
        unsafe { libc::getuid() }.to_string()
    }
    #[cfg(not(unix))]
    {
        std::env::var("USERNAME").unwrap_or_else(|_| "user".into())
    }
}

/// Why a face was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGTERM; on Windows the console closing, a log-off or a shutdown.
    Terminate,
    /// SIGHUP (the terminal went away).
    #[cfg_attr(windows, allow(dead_code))]
    Hangup,
    /// SIGINT / Ctrl+C.
    Interrupt,
}

/// The stop signals a face listens for, registered once.
pub struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(windows)]
    close: tokio::signal::windows::CtrlClose,
    #[cfg(windows)]
    int: tokio::signal::windows::CtrlC,
    #[cfg(windows)]
    brk: tokio::signal::windows::CtrlBreak,
}

impl StopSignals {
    /// Registers for SIGTERM, SIGHUP and SIGINT (Windows: console close, Ctrl+Break, Ctrl+C);
    /// an error when one cannot be registered.
    pub fn new() -> std::io::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                term: signal(SignalKind::terminate())?,
                hup: signal(SignalKind::hangup())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(windows)]
        {
            use tokio::signal::windows;
            Ok(StopSignals {
                close: windows::ctrl_close()?,
                int: windows::ctrl_c()?,
                brk: windows::ctrl_break()?,
            })
        }
    }

    /// The next stop signal.
    pub async fn recv(&mut self) -> Stop {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => Stop::Terminate,
                _ = self.hup.recv() => Stop::Hangup,
                _ = self.int.recv() => Stop::Interrupt,
            }
        }
        #[cfg(windows)]
        {
            tokio::select! {
                _ = self.close.recv() => Stop::Terminate,
                _ = self.brk.recv() => Stop::Terminate,
                _ = self.int.recv() => Stop::Interrupt,
            }
        }
    }
}
