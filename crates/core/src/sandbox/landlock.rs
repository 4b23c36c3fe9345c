//! Linux Landlock for shell commands: the kernel probe, the ruleset built in the parent, and
//! the two system calls the child makes between fork and exec.
//!
//! Rights are requested for fixed ABIs (file system: v5, network: v4, scopes: v6) in best-effort
//! mode, so an older kernel enforces the subset it knows; [`super::Support`] says which subset
//! that is, and the session tells the user what is missing.

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use std::io;
use std::os::fd::{OwnedFd, RawFd};

use super::confinement::{Confinement, Support};

/// The file-system rights we handle: every right up to ABI v5 (truncate, ioctl on devices).
const FS_ABI: ABI = ABI::V5;
/// TCP bind and connect.
const NET_ABI: ABI = ABI::V4;
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

/// Character devices ordinary tools write to whatever the mode (`> /dev/null`, a tty).
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];
/// Terminals: writable, but no device ioctl on the controlling tty (no TIOCSTI injection).
const TERMINALS: &[&str] = &["/dev/tty"];
/// Pseudo-terminals a command opens for itself (`script`, test harnesses).
const PTYS: &[&str] = &["/dev/ptmx", "/dev/pts"];

pub(super) fn probe() -> Support {
    // SAFETY: the version query reads no memory (NULL attribute, size 0).
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v >= 1 {
        return Support::Landlock { abi: v as u32 };
    }
    let reason = match io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built into this kernel but disabled (add `landlock` to the `lsm=` boot parameter)"
        }
        Some(libc::ENOSYS) => {
            "this kernel has no Landlock (it needs Linux 5.13 or newer built with it)"
        }
        Some(libc::EPERM) => {
            "Landlock system calls are blocked here (a seccomp filter, e.g. a container's)"
        }
        _ => "Landlock is not usable on this system",
    };
    Support::Unavailable { reason }
}

fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("building the Landlock sandbox: {e}"))
}

/// The ruleset for `c`, as a file descriptor (close-on-exec) the child hands to
/// `landlock_restrict_self`.
pub(super) fn build_ruleset(c: &Confinement, support: Support) -> io::Result<OwnedFd> {
    let all = AccessFs::from_all(FS_ABI);
    let read = AccessFs::from_read(FS_ABI);
    let file = AccessFs::from_file(FS_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(err)?;
    if !c.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(NET_ABI))
            .map_err(err)?;
    }
    if support.scopes_ipc() {
        // Signals to processes outside the sandbox (the agent, the editor) are refused;
        // abstract UNIX sockets (D-Bus, X11) only when the network is off.
        ruleset = ruleset.scope(Scope::Signal).map_err(err)?;
        if !c.network {
            ruleset = ruleset.scope(Scope::AbstractUnixSocket).map_err(err)?;
        }
    }
    let created = ruleset
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(["/"], read))
        .map_err(err)?
        .add_rules(path_beneath_rules(DEVICES, file))
        .map_err(err)?
        .add_rules(path_beneath_rules(TERMINALS, file & !AccessFs::IoctlDev))
        .map_err(err)?
        .add_rules(path_beneath_rules(PTYS, file))
        .map_err(err)?
        .add_rules(path_beneath_rules(&c.writable, all))
        .map_err(err)?;
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| err(support.describe()))
}

/// The seccomp filter of a confinement without network, as Codex's Linux sandbox has it:
/// Landlock covers TCP only, so every socket but a UNIX one is refused (`EPERM`): UDP, raw,
/// MPTCP (`curl --mptcp`), SCTP, netlink. io_uring, which can open sockets of its own, is
/// refused too. A system call of another architecture (32-bit on x86-64) kills the process.
/// None where seccompiler has no architecture (the session then says so).
pub(super) fn network_filter() -> io::Result<Option<seccompiler::BpfProgram>> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let Ok(arch) = TargetArch::try_from(std::env::consts::ARCH) else {
        return Ok(None);
    };
    let filter_err = |e: seccompiler::BackendError| err(format!("seccomp: {e}"));
    let not_unix = || -> io::Result<Vec<SeccompRule>> {
        let domain = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(filter_err)?;
        Ok(vec![SeccompRule::new(vec![domain]).map_err(filter_err)?])
    };
    let rules = [
        (libc::SYS_socket, not_unix()?),
        (libc::SYS_socketpair, not_unix()?),
        (libc::SYS_io_uring_setup, Vec::new()),
        (libc::SYS_io_uring_enter, Vec::new()),
        (libc::SYS_io_uring_register, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(filter_err)?;
    seccompiler::BpfProgram::try_from(filter)
        .map(Some)
        .map_err(filter_err)
}

/// Runs in the child between fork and exec: only async-signal-safe system calls, no
/// allocation (an `io::Error` from an errno does not allocate). `filter`: the seccomp
/// program built in the parent, entered after the ruleset.
pub(super) fn restrict_self(
    ruleset: RawFd,
    filter: Option<&[seccompiler::sock_filter]>,
) -> io::Result<()> {
    // SAFETY: prctl and landlock_restrict_self take plain integers; `ruleset` is a descriptor
    // the parent keeps open until the child has been spawned. seccomp copies the program,
    // which the parent keeps alive (the hook owns it) until exec.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(filter) = filter {
            let prog = libc::sock_fprog {
                len: filter.len() as libc::c_ushort,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            if libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &prog as *const libc::sock_fprog,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}
