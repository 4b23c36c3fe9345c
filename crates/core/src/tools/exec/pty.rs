//! A pseudo-terminal for a command that asks for one (`exec_command`'s `tty`): REPLs and
//! prompts that only behave on a terminal. The command's stdin, stdout and stderr are the
//! terminal's slave side; the agent reads and writes the master. The shell becomes the leader
//! of a session of its own with the terminal as its controlling terminal (a hook that runs
//! after the keeper's, in the shell's process), so job control and `isatty` work.

use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::FromRawFd as _;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The terminal's size, as a wide terminal window.
const ROWS: u16 = 40;
const COLS: u16 = 120;

/// Both ends of a new pseudo-terminal.
pub(crate) struct Pty {
    pub(crate) master: File,
    pub(crate) slave: File,
}

/// Opens a pseudo-terminal; both ends close on exec (the command gets the slave as its stdio).
pub(crate) fn open() -> io::Result<Pty> {
    let (mut master, mut slave) = (0, 0);
    let mut size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: out-pointers to locals; no name buffer; default terminal settings.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::addr_of_mut!(size),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    for fd in [master, slave] {
        // SAFETY: both descriptors were just opened here.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: openpty gave us both descriptors; each is owned once, here.
    Ok(unsafe {
        Pty {
            master: File::from_raw_fd(master),
            slave: File::from_raw_fd(slave),
        }
    })
}

/// The `pre_exec` hook, registered after the keeper's so it runs in the shell's process: a
/// session of its own, with its stdin (the slave) as the controlling terminal.
pub(crate) fn session_hook() -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
    || {
        // SAFETY: async-signal-safe system calls between fork and exec.
        unsafe {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Reads the master into chunks until the terminal closes (every slave gone: EIO).
pub(crate) fn read_master(mut master: File, buf_size: usize) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; buf_size];
        loop {
            match master.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.blocking_send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

/// Types what comes on `input` into the terminal, until the input ends or `done`.
pub(crate) fn write_master(
    master: File,
    mut input: mpsc::UnboundedReceiver<Vec<u8>>,
    done: CancellationToken,
) {
    let master = std::sync::Arc::new(std::sync::Mutex::new(master));
    tokio::spawn(async move {
        loop {
            let bytes = tokio::select! {
                b = input.recv() => match b { Some(b) => b, None => return },
                _ = done.cancelled() => return,
            };
            let m = master.clone();
            let wrote = tokio::task::spawn_blocking(move || {
                let mut m = m.lock().unwrap_or_else(|e| e.into_inner());
                m.write_all(&bytes).and_then(|()| m.flush())
            })
            .await;
            if !matches!(wrote, Ok(Ok(()))) {
                return;
            }
        }
    });
}
