//! What the sandbox does on this machine: the probe of what it can enforce ([`detect`]), and a
//! confinement turned into the ruleset a child enters between fork and exec ([`Prepared`]).

#[cfg(target_os = "macos")]
use std::path::Path;
use std::sync::OnceLock;

use super::confinement::{Confinement, Support};

/// The process sandbox this machine offers, probed once per process.
pub(crate) fn detect() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(probe)
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
                super::landlock::build_ruleset(&around, detect())?
            } else {
                super::landlock::build_ruleset(c, detect())?
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
