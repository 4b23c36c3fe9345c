//! One cgroup v2 per command, where the agent may make one below its own (root, or a
//! delegated subtree such as systemd's user session): membership does not depend on who is
//! whose parent, so it is the exact count of a command's processes and `cgroup.kill` ends them
//! all at once. Where none can be made, the keeper alone does both (see `keeper`).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Set when joining a cgroup failed once: later commands do not try again.
static UNUSABLE: AtomicBool = AtomicBool::new(false);

/// The folder new command cgroups go in: the agent's own cgroup v2, if it can hold children.
fn parent_dir() -> Option<&'static Path> {
    static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
    PARENT.get_or_init(probe).as_deref()
}

fn probe() -> Option<PathBuf> {
    if std::env::var_os("INTERPRETER_NO_CGROUP").is_some() {
        return None;
    }
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // "... <mount point> <options> - cgroup2 <source> <super options>"
    let mount = mountinfo.lines().find_map(|l| {
        let (before, after) = l.split_once(" - ")?;
        after
            .starts_with("cgroup2 ")
            .then(|| before.split(' ').nth(4).map(PathBuf::from))?
    })?;
    let dir = mount.join(rel.trim_start_matches('/'));
    let test = dir.join(format!("interpreter-{}-probe", std::process::id()));
    std::fs::create_dir(&test).ok()?;
    let _ = std::fs::remove_dir(&test);
    remove_stale(&dir);
    Some(dir)
}

/// Removes the empty cgroups of agents that are gone (killed before they could).
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("interpreter-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            kill_all(&e.path());
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Tests of the keeper alone turn cgroups off for the commands their thread starts.
    pub(super) static DISABLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn disabled_here() -> bool {
    #[cfg(test)]
    {
        DISABLED.with(|d| d.get())
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// A command's cgroup. Dropping it kills what is left in it and removes it.
#[derive(Debug)]
pub(super) struct Cgroup {
    dir: PathBuf,
    /// `cgroup.procs`, open for the keeper to join with.
    procs: OwnedFd,
}

impl Cgroup {
    /// A new cgroup, or None where none can be made.
    pub(super) fn create() -> Option<Cgroup> {
        if UNUSABLE.load(Ordering::Relaxed) || disabled_here() {
            return None;
        }
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let parent = parent_dir()?;
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("interpreter-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"));
        match procs {
            Ok(f) => Some(Cgroup {
                dir,
                procs: f.into(),
            }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(super) fn procs_fd(&self) -> std::os::fd::RawFd {
        self.procs.as_raw_fd()
    }

    /// Whether `pid` joined (the keeper writes itself in): if not, later commands do without.
    pub(super) fn holds(&self, pid: u32) -> bool {
        let joined = members(&self.dir).is_some_and(|m| m.contains(&pid));
        if !joined {
            UNUSABLE.store(true, Ordering::Relaxed);
            tracing::info!(
                "cannot move commands into a cgroup under {}; counting their processes through the keeper",
                self.dir.display()
            );
        }
        joined
    }

    /// Processes in the cgroup.
    pub(super) fn members(&self) -> Option<Vec<u32>> {
        members(&self.dir)
    }

    /// Kills every process in it.
    pub(super) fn kill(&self) {
        kill_all(&self.dir);
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Killed processes leave the cgroup when they exit; the command's end waited for
        // that already, so this is the backstop for a run that was dropped.
        for _ in 0..10 {
            if members(&self.dir).is_none_or(|m| m.is_empty()) {
                break;
            }
            kill_all(&self.dir);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            tracing::debug!("removing {}: {e}", self.dir.display());
        }
    }
}

pub(super) fn members(dir: &Path) -> Option<Vec<u32>> {
    let text = std::fs::read_to_string(dir.join("cgroup.procs")).ok()?;
    Some(text.lines().filter_map(|l| l.trim().parse().ok()).collect())
}

/// `cgroup.kill` (Linux 5.14+), else SIGKILL to each member until none is left.
fn kill_all(dir: &Path) {
    if std::fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    for _ in 0..100 {
        let Some(pids) = members(dir).filter(|m| !m.is_empty()) else {
            return;
        };
        for pid in pids {
            if let Ok(pid) = i32::try_from(pid) {
                // SAFETY: kill has no memory effects.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}
