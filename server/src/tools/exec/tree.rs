//! A command's whole process tree: spawned below a keeper (see `keeper`), in its own cgroup
//! where one can be made (see `cgroup`), counted and ended as one.

use std::time::Duration;

use super::cgroup::Cgroup;
use super::keeper;

/// A running command: the keeper process (tokio's child) and, if there is one, its cgroup.
/// Dropping it ends everything the command started.
#[derive(Debug)]
pub(super) struct ProcessTree {
    pub child: tokio::process::Child,
    keeper: Option<i32>,
    cgroup: Option<Cgroup>,
}

/// Spawns `cmd` below a keeper; `enter` runs in the command's process before exec (the
/// Landlock hook).
pub(super) fn spawn<F>(
    mut cmd: tokio::process::Command,
    enter: Option<F>,
) -> std::io::Result<ProcessTree>
where
    F: FnMut() -> std::io::Result<()> + Send + Sync + 'static,
{
    let cgroup = Cgroup::create();
    let parent = std::process::id() as libc::pid_t;
    let hook = keeper::hook(parent, cgroup.as_ref().map(Cgroup::procs_fd), enter);
    // SAFETY: the hook only makes async-signal-safe system calls (see keeper.rs); the cgroup
    // descriptor it writes to stays open in `cgroup` until after the spawn.
    unsafe {
        cmd.pre_exec(hook);
    }
    let child = spawn_from_keeper_thread(cmd)?;
    let keeper = child.id().and_then(|p| i32::try_from(p).ok());
    let cgroup = cgroup.filter(|c| keeper.is_some_and(|k| c.holds(k as u32)));
    Ok(ProcessTree {
        child,
        keeper,
        cgroup,
    })
}

/// Spawns on a thread that lives as long as the process: a keeper's parent-death signal fires
/// when the thread that forked it ends, and that must mean the agent ended, not that a tokio
/// worker was retired.
fn spawn_from_keeper_thread(
    cmd: tokio::process::Command,
) -> std::io::Result<tokio::process::Child> {
    use std::sync::mpsc;
    use std::sync::{Mutex, OnceLock};
    type Job = (
        tokio::process::Command,
        tokio::runtime::Handle,
        mpsc::Sender<std::io::Result<tokio::process::Child>>,
    );
    static JOBS: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let jobs = JOBS.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("interpreter-spawn".into())
            .spawn(move || {
                for (mut cmd, handle, reply) in rx {
                    let _runtime = handle.enter();
                    let _ = reply.send(cmd.spawn());
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("could not start the command spawner thread: {e}");
        }
        Mutex::new(tx)
    });
    let handle = tokio::runtime::Handle::current();
    let (reply, answer) = mpsc::channel();
    let sent = jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((cmd, handle, reply));
    if sent.is_err() {
        return Err(std::io::Error::other("the command spawner thread is gone"));
    }
    // Spawning waits for the exec, as `Command::spawn` itself does.
    answer
        .recv()
        .unwrap_or_else(|_| Err(std::io::Error::other("the command spawner thread is gone")))
}

/// What counting a tree's processes needs, to do it on a blocking thread.
#[derive(Debug, Clone)]
pub(super) struct Census {
    cgroup: Option<std::path::PathBuf>,
    keeper: Option<i32>,
}

impl Census {
    /// Processes the command has alive (zombies not yet reaped included), the keeper not
    /// counted. None where they cannot be counted.
    pub(super) fn count(&self) -> Option<usize> {
        let keeper = self.keeper? as u32;
        if let Some(dir) = &self.cgroup {
            let members = super::cgroup::members(dir)?;
            return Some(members.iter().filter(|p| **p != keeper).count());
        }
        descendants(keeper).map(|d| d.len())
    }
}

impl ProcessTree {
    pub(super) fn census(&self) -> Census {
        Census {
            cgroup: self.cgroup.as_ref().map(|c| c.dir().to_path_buf()),
            keeper: self.keeper,
        }
    }

    /// Ends every process of the command: the cgroup is killed, and the keeper is told to
    /// kill what is below it.
    pub(super) fn kill(&self) {
        if let Some(c) = &self.cgroup {
            c.kill();
        }
        if let Some(k) = self.keeper.filter(|k| *k > 1) {
            // SAFETY: kill has no memory effects; tokio has not reaped the keeper yet (we
            // hold its Child and have not seen it exit), so the pid is still ours.
            unsafe {
                libc::kill(k, libc::SIGTERM);
            }
        }
    }

    /// After the keeper exited: waits (bounded) until the cgroup is empty, killing stragglers.
    pub(super) async fn settle(&self) {
        let Some(c) = &self.cgroup else {
            return;
        };
        for _ in 0..100 {
            if c.members().is_none_or(|m| m.is_empty()) {
                return;
            }
            c.kill();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        // Dropped while running (the turn was abandoned): end it all. The keeper exits after
        // killing its tree; tokio reaps it.
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

/// Every process below `root` (not `root` itself), from the parents in `/proc/*/stat`.
pub(super) fn descendants(root: u32) -> Option<Vec<u32>> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command name, which may itself hold spaces and parentheses: state, ppid.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_ascii_whitespace().nth(1))
            .and_then(|p| p.parse().ok());
        if let Some(ppid) = ppid {
            parent_of.push((pid, ppid));
        }
    }
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    for (pid, ppid) in parent_of {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        if let Some(c) = children.get(&found[i]) {
            found.extend(c);
        }
        i += 1;
    }
    found.remove(0);
    Some(found)
}
