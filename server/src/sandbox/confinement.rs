//! What the process sandbox can enforce on this machine ([`Support`]), what one confined command
//! may do ([`Confinement`], pure data), and the prepared ruleset a child enters between fork
//! and exec ([`Prepared`]).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The process sandbox this machine offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Support {
    /// Linux Landlock with this ABI version (1 or more).
    Landlock { abi: u32 },
    /// No process sandbox, and why (for the user).
    Unavailable { reason: &'static str },
}

impl Support {
    /// Probes the kernel once per process.
    pub(crate) fn detect() -> Support {
        static SUPPORT: OnceLock<Support> = OnceLock::new();
        *SUPPORT.get_or_init(probe)
    }

    fn abi(self) -> u32 {
        match self {
            Support::Landlock { abi } => abi,
            Support::Unavailable { .. } => 0,
        }
    }

    /// Writes outside the allowed folders are refused (Landlock ABI 1).
    pub(crate) fn confines_files(self) -> bool {
        self.abi() >= 1
    }

    /// Truncating files outside the allowed folders is refused (ABI 3).
    pub(crate) fn confines_truncate(self) -> bool {
        self.abi() >= 3
    }

    /// TCP connect and bind can be refused (ABI 4).
    pub(crate) fn confines_network(self) -> bool {
        self.abi() >= 4
    }

    /// Signals and abstract UNIX sockets can be scoped to the sandbox (ABI 6).
    pub(crate) fn scopes_ipc(self) -> bool {
        self.abi() >= 6
    }

    /// One line for the user: "Landlock ABI 7" or why there is none.
    pub(crate) fn describe(self) -> String {
        match self {
            Support::Landlock { abi } => format!("Landlock ABI {abi}"),
            Support::Unavailable { reason } => reason.to_string(),
        }
    }
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    super::landlock::probe()
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Support {
    Support::Unavailable {
        reason: "process sandboxing needs Linux Landlock, which this platform does not have",
    }
}

/// What one confined command may do. Reads are allowed everywhere; writes only under
/// `writable` (plus `/dev/null`-like devices); network only when `network` is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Confinement {
    /// Folders where the command may create, change and delete files. Empty: read-only.
    pub writable: Vec<PathBuf>,
    /// TCP connect and bind allowed (abstract UNIX sockets outside the sandbox too).
    pub network: bool,
}

impl Confinement {
    /// `read-only`: no writes, no network.
    pub(crate) fn read_only() -> Confinement {
        Confinement {
            writable: Vec::new(),
            network: false,
        }
    }

    /// `workspace-write`: the workspace roots, the extra writable roots and the temp folders
    /// (`/tmp`, `$TMPDIR`, `/dev/shm`).
    pub(crate) fn workspace_write(
        roots: &[PathBuf],
        extra: &[PathBuf],
        network: bool,
    ) -> Confinement {
        let mut writable: Vec<PathBuf> = Vec::new();
        let mut add = |p: &Path| {
            // Symlinked folders are confined by their real path, which is what Landlock sees.
            let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            if !writable.contains(&real) {
                writable.push(real);
            }
        };
        for r in roots.iter().chain(extra) {
            add(r);
        }
        for t in temp_dirs() {
            add(&t);
        }
        Confinement { writable, network }
    }
}

/// `/tmp`, `$TMPDIR` and `/dev/shm`; a `$TMPDIR` of `/` or the home folder itself is ignored
/// (it would make everything writable).
fn temp_dirs() -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
    if let Some(t) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
        let t = std::fs::canonicalize(&t).unwrap_or_else(|_| PathBuf::from(t));
        let home = dirs::home_dir().and_then(|h| std::fs::canonicalize(h).ok());
        if t.is_absolute() && t.parent().is_some() && Some(&t) != home.as_ref() {
            out.push(t);
        }
    }
    out
}

/// A confinement turned into a kernel ruleset, ready for a child to enter. Built in the parent
/// (it allocates and opens files); the child only makes two system calls with it.
#[derive(Debug)]
pub(crate) struct Prepared {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
}

impl Prepared {
    /// Builds the ruleset. An error means the command must not run (never run unconfined by
    /// accident).
    pub(crate) fn new(c: &Confinement) -> std::io::Result<Prepared> {
        #[cfg(target_os = "linux")]
        {
            Ok(Prepared {
                fd: super::landlock::build_ruleset(c)?,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = c;
            Err(std::io::Error::other(
                "process sandboxing is not available on this platform",
            ))
        }
    }

    /// The hook for `Command::pre_exec`: restricts the calling (child) process. Only
    /// async-signal-safe system calls, no allocation, no locks.
    pub(crate) fn enter_hook(&self) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = self.fd.as_raw_fd();
            move || super::landlock::restrict_self(fd)
        }
        #[cfg(not(target_os = "linux"))]
        {
            || Err(std::io::Error::other("no process sandbox on this platform"))
        }
    }
}
