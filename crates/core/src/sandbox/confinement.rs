//! What the process sandbox can enforce on this machine ([`Support`]), what one confined command
//! may do ([`Confinement`], pure data), and the prepared ruleset a child enters between fork
//! and exec ([`Prepared`]).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The process sandbox this machine offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Support {
    /// Linux Landlock with this ABI version (1 or more).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Landlock { abi: u32 },
    /// macOS Seatbelt: commands run under `/usr/bin/sandbox-exec` with a generated profile,
    /// which holds files, the network and signals (see `seatbelt.rs`).
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    Seatbelt,
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
            // Seatbelt enforces every right the Landlock ABIs name.
            Support::Seatbelt => u32::MAX,
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
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn scopes_ipc(self) -> bool {
        self.abi() >= 6
    }

    /// One line for the user: "Landlock ABI 7" or why there is none.
    pub(crate) fn describe(self) -> String {
        match self {
            Support::Landlock { abi } => format!("Landlock ABI {abi}"),
            Support::Seatbelt => "Seatbelt (sandbox-exec)".to_string(),
            Support::Unavailable { reason } => reason.to_string(),
        }
    }
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    super::landlock::probe()
}

#[cfg(target_os = "macos")]
fn probe() -> Support {
    if Path::new(super::seatbelt::SANDBOX_EXEC).exists() {
        Support::Seatbelt
    } else {
        Support::Unavailable {
            reason: "this macOS has no /usr/bin/sandbox-exec",
        }
    }
}

#[cfg(windows)]
fn probe() -> Support {
    Support::Unavailable {
        reason: "Windows has no process sandbox for commands yet (each command's processes live in a Job Object, which ends them, but does not confine them)",
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
fn probe() -> Support {
    Support::Unavailable {
        reason: "process sandboxing needs Linux Landlock or macOS Seatbelt, which this platform does not have",
    }
}

/// What one confined command may do. Reads are allowed everywhere; writes only under
/// `writable` (plus `/dev/null`-like devices); network only when `network` is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Folders where the command may create, change and delete files. Empty: read-only.
    pub writable: Vec<PathBuf>,
    /// TCP connect and bind allowed (abstract UNIX sockets outside the sandbox too).
    pub network: bool,
    /// Paths under `writable` that stay read-only: `.git` folders and the agent's home
    /// (`protect.rs`).
    pub protected: Vec<PathBuf>,
}

impl Confinement {
    /// `read-only`: no writes, no network.
    pub(crate) fn read_only() -> Confinement {
        Confinement {
            writable: Vec::new(),
            network: false,
            protected: Vec::new(),
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
        let protected = super::protect::protected_under(&writable);
        Confinement {
            writable,
            network,
            protected,
        }
    }
}

/// `/tmp`, `$TMPDIR` and `/dev/shm` (macOS: `/tmp` and `$TMPDIR`); a `$TMPDIR` of `/` or the
/// home folder itself is ignored (it would make everything writable).
fn temp_dirs() -> Vec<PathBuf> {
    #[cfg(target_os = "macos")]
    let mut out = vec![PathBuf::from("/tmp")];
    #[cfg(not(target_os = "macos"))]
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

/// A confinement turned into what the child needs to enter it. Built in the parent (it
/// allocates and opens files). Linux: a Landlock ruleset the child enters with two system
/// calls between fork and exec. macOS: the `sandbox-exec` command line the shell runs under.
#[derive(Debug)]
pub(crate) struct Prepared {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    /// The seccomp program when the network is off.
    #[cfg(target_os = "linux")]
    filter: Option<std::sync::Arc<seccompiler::BpfProgram>>,
    /// The read-only bind mounts of the protected paths, where namespaces work.
    #[cfg(target_os = "linux")]
    mounts: Option<std::sync::Arc<super::mountns::MountPlan>>,
    #[cfg(target_os = "macos")]
    confinement: Confinement,
}

impl Prepared {
    /// Builds the ruleset or profile. An error means the command must not run (never run
    /// unconfined by accident).
    pub(crate) fn new(c: &Confinement) -> std::io::Result<Prepared> {
        #[cfg(target_os = "linux")]
        {
            let filter = if c.network {
                None
            } else {
                super::landlock::network_filter()?.map(std::sync::Arc::new)
            };
            let mounts = if c.protected.is_empty() {
                None
            } else {
                super::mountns::MountPlan::new(&c.protected)?
            };
            let fd = if mounts.is_none() && !c.protected.is_empty() {
                // No namespace: rights go to everything beside the protected paths.
                let around = Confinement {
                    writable: super::protect::grants(&c.writable, &c.protected),
                    ..c.clone()
                };
                super::landlock::build_ruleset(&around)?
            } else {
                super::landlock::build_ruleset(c)?
            };
            Ok(Prepared {
                fd,
                filter,
                mounts: mounts.map(std::sync::Arc::new),
            })
        }
        #[cfg(target_os = "macos")]
        {
            if !Path::new(super::seatbelt::SANDBOX_EXEC).exists() {
                return Err(std::io::Error::other(format!(
                    "{} is missing: the command cannot be sandboxed",
                    super::seatbelt::SANDBOX_EXEC
                )));
            }
            Ok(Prepared {
                confinement: c.clone(),
            })
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            let _ = c;
            Err(std::io::Error::other(
                "process sandboxing is not available on this platform",
            ))
        }
    }

    /// The program and arguments that run `argv` confined: `argv` itself where the child
    /// confines itself (Linux), `sandbox-exec` with the profile on macOS.
    pub(crate) fn wrap(&self, argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
        #[cfg(target_os = "macos")]
        {
            let mut out = vec![std::ffi::OsString::from(super::seatbelt::SANDBOX_EXEC)];
            out.extend(super::seatbelt::command_args(&self.confinement, &argv));
            out
        }
        #[cfg(not(target_os = "macos"))]
        {
            argv
        }
    }

    /// The hook for `Command::pre_exec` (Linux): restricts the calling (child) process. Only
    /// async-signal-safe system calls, no allocation, no locks.
    #[cfg(target_os = "linux")]
    pub(crate) fn enter_hook(&self) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
        use std::os::fd::AsRawFd;
        let fd = self.fd.as_raw_fd();
        let filter = self.filter.clone();
        let mounts = self.mounts.clone();
        move || {
            if let Some(m) = &mounts {
                m.enter()?;
            }
            super::landlock::restrict_self(fd, filter.as_deref().map(Vec::as_slice))
        }
    }
}
