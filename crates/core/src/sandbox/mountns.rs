//! Linux: the protected paths (`protect.rs`) bind-mounted read-only in a mount namespace of
//! the command's own, entered between fork and exec before Landlock. An unprivileged user gets
//! a user namespace that maps only itself (as bubblewrap does for Codex). Where namespaces are
//! refused (a container, Ubuntu's AppArmor rule on unprivileged namespaces), [`MountPlan::new`] is
//! None and Landlock grants around the protected paths instead.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Everything the child needs, prepared in the parent: the child only makes system calls.
#[derive(Debug)]
pub(super) struct MountPlan {
    user_ns: bool,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Each protected path and the flags its read-only remount keeps (a user namespace may
    /// not drop `nosuid`, `nodev`, `noexec` or the atime flags of the mount it copies).
    paths: Vec<(CString, libc::c_ulong)>,
}

/// How this process can make a mount namespace: as root without a user namespace, or with
/// one; None: not at all (or `INTERPRETER_NO_MOUNT_NS` is set, which tests the fallback).
fn mode() -> Option<bool> {
    static MODE: OnceLock<Option<bool>> = OnceLock::new();
    *MODE.get_or_init(|| {
        if std::env::var_os("INTERPRETER_NO_MOUNT_NS").is_some_and(|v| !v.is_empty()) {
            return None;
        }
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let modes: &[bool] = if root { &[false, true] } else { &[true] };
        modes.iter().copied().find(|&user_ns| probe(user_ns))
    })
}

/// Makes a namespace with one read-only bind mount in a child running `sh -c :`.
fn probe(user_ns: bool) -> bool {
    let dir = std::env::temp_dir().join(format!("interpreter-mountns-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return false;
    }
    let plan = MountPlan::with_mode(std::slice::from_ref(&dir), user_ns);
    let ok = plan.is_ok_and(spawn_in);
    let _ = std::fs::remove_dir(&dir);
    if !ok {
        tracing::info!(
            "sandbox: no mount namespace{}; .git and the agent's home are protected by Landlock grants",
            if user_ns {
                " (user namespaces refused)"
            } else {
                ""
            }
        );
    }
    ok
}

fn spawn_in(plan: MountPlan) -> bool {
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.args(["-c", ":"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    use std::os::unix::process::CommandExt;
    // SAFETY: `enter` makes only async-signal-safe system calls on prepared memory.
    unsafe {
        cmd.pre_exec(move || plan.enter());
    }
    cmd.status().is_ok_and(|s| s.success())
}

impl MountPlan {
    /// The plan for `paths`, or None when this system makes no mount namespace.
    pub(super) fn new(paths: &[PathBuf]) -> io::Result<Option<MountPlan>> {
        match mode() {
            Some(user_ns) => MountPlan::with_mode(paths, user_ns).map(Some),
            None => Ok(None),
        }
    }

    fn with_mode(paths: &[PathBuf], user_ns: bool) -> io::Result<MountPlan> {
        // SAFETY: getuid and getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let paths = paths
            .iter()
            .map(|p| Ok((c_path(p)?, kept_flags(p)?)))
            .collect::<io::Result<_>>()?;
        Ok(MountPlan {
            user_ns,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            paths,
        })
    }

    /// Runs in the child between fork and exec: system calls only, no allocation.
    pub(super) fn enter(&self) -> io::Result<()> {
        // SAFETY: every pointer is to a NUL-terminated string or buffer this plan owns, alive
        // until exec (the parent keeps the plan).
        unsafe {
            let flags = if self.user_ns {
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS
            } else {
                libc::CLONE_NEWNS
            };
            check(libc::unshare(flags))?;
            if self.user_ns {
                write_file(c"/proc/self/setgroups", b"deny")?;
                write_file(c"/proc/self/uid_map", &self.uid_map)?;
                write_file(c"/proc/self/gid_map", &self.gid_map)?;
            }
            // Nothing done here reaches the mounts outside.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for (path, kept) in &self.paths {
                check(libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
                check(libc::mount(
                    std::ptr::null(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept,
                    std::ptr::null(),
                ))?;
            }
        }
        Ok(())
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// open, write, close: async-signal-safe.
unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: the caller's; `path` is NUL-terminated and `bytes` valid for its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}

fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other)
}

/// The flags of the mount holding `p` that a read-only remount must keep.
fn kept_flags(p: &Path) -> io::Result<libc::c_ulong> {
    let c = c_path(p)?;
    // SAFETY: statvfs is plain data; all zeroes is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated; `st` is a valid out-pointer.
    check(unsafe { libc::statvfs(c.as_ptr(), &mut st) })?;
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | ms))
}
