//! A command's whole process tree (Unix): spawned below a keeper (see `keeper`), on Linux in
//! its own cgroup where one can be made (see `cgroup`), counted and ended as one. Windows has
//! its own, `job.rs`.

#[cfg(target_os = "linux")]
use std::time::Duration;

#[cfg(target_os = "linux")]
use super::cgroup::Cgroup;
use super::keeper;

/// A running command: the keeper process (tokio's child) and, if there is one, its cgroup.
/// Dropping it ends everything the command started.
#[derive(Debug)]
pub(super) struct ProcessTree {
    pub child: tokio::process::Child,
    keeper: Option<i32>,
    #[cfg(target_os = "linux")]
    cgroup: Option<Cgroup>,
}

/// Spawns `cmd` below a keeper; on Linux the sandbox's hook runs in the command's process
/// before exec (Landlock; on macOS `cmd` already runs under `sandbox-exec`).
pub(super) fn spawn(
    cmd: tokio::process::Command,
    sandbox: Option<&crate::sandbox::Prepared>,
    tty: bool,
) -> std::io::Result<ProcessTree> {
    let (child, keeper) = spawn_kept(cmd, sandbox, move |mut cmd| {
        if tty {
            // After the keeper's hook: it runs in the shell's process only.
            // SAFETY: the hook makes only async-signal-safe system calls (pty.rs).
            unsafe {
                cmd.pre_exec(super::pty::session_hook());
            }
        }
        let child = cmd.spawn()?;
        let pid = child.id();
        Ok((child, pid))
    })?;
    Ok(ProcessTree {
        child,
        keeper: keeper.pid,
        #[cfg(target_os = "linux")]
        cgroup: keeper.cgroup,
    })
}

/// A keeper and, on Linux, the cgroup of its tree.
struct Kept {
    pid: Option<i32>,
    #[cfg(target_os = "linux")]
    cgroup: Option<Cgroup>,
}

/// Installs the keeper in `cmd` and runs `spawn` on the spawner thread; `spawn` returns what
/// it made and the pid of the process it started (the keeper).
fn spawn_kept<T: Send + 'static>(
    mut cmd: tokio::process::Command,
    sandbox: Option<&crate::sandbox::Prepared>,
    spawn: impl FnOnce(tokio::process::Command) -> std::io::Result<(T, Option<u32>)> + Send + 'static,
) -> std::io::Result<(T, Kept)> {
    let parent = std::process::id() as libc::pid_t;
    #[cfg(target_os = "linux")]
    let cgroup = Cgroup::create();
    #[cfg(target_os = "linux")]
    let hook = keeper::hook(
        parent,
        cgroup.as_ref().map(Cgroup::procs_fd),
        sandbox.map(|s| s.enter_hook()),
    );
    #[cfg(not(target_os = "linux"))]
    let hook = {
        let _ = sandbox;
        keeper::hook(parent)
    };
    // SAFETY: the hook only makes async-signal-safe system calls (see keeper.rs); the cgroup
    // descriptor it writes to stays open in `cgroup` until after the spawn.
    unsafe {
        cmd.pre_exec(hook);
    }
    let (made, pid) = on_spawner_thread(move || spawn(cmd))??;
    let pid = pid.and_then(|p| i32::try_from(p).ok());
    #[cfg(target_os = "linux")]
    let cgroup = cgroup.filter(|c| pid.is_some_and(|k| c.holds(k as u32)));
    Ok((
        made,
        Kept {
            pid,
            #[cfg(target_os = "linux")]
            cgroup,
        },
    ))
}

/// Runs `f` (a spawn) on a thread that lives as long as the process, inside the caller's
/// runtime: a keeper's parent-death signal fires when the thread that forked it ends, and that
/// must mean the agent ended, not that a tokio worker was retired.
fn on_spawner_thread<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<T> {
    use std::sync::mpsc;
    use std::sync::{Mutex, OnceLock};
    type Job = (Box<dyn FnOnce() + Send>, tokio::runtime::Handle);
    static JOBS: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let jobs = JOBS.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("interpreter-spawn".into())
            .spawn(move || {
                for (job, handle) in rx {
                    let _runtime = handle.enter();
                    job();
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("could not start the command spawner thread: {e}");
        }
        Mutex::new(tx)
    });
    let gone = || std::io::Error::other("the command spawner thread is gone");
    let handle = tokio::runtime::Handle::current();
    let (reply, answer) = mpsc::channel();
    let job: Box<dyn FnOnce() + Send> = Box::new(move || {
        let _ = reply.send(f());
    });
    let sent = jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((job, handle));
    if sent.is_err() {
        return Err(gone());
    }
    // Spawning waits for the exec, as `Command::spawn` itself does.
    answer.recv().map_err(|_| gone())
}

/// The tree of a long-lived child that is not a command (an MCP stdio server): the keeper
/// above it ends everything below when the child exits, when this guard is dropped, and when
/// the agent dies.
#[derive(Debug)]
pub(crate) struct ServerTree {
    keeper: Option<i32>,
    #[cfg(target_os = "linux")]
    cgroup: Option<Cgroup>,
}

/// Spawns a long-lived child below a keeper (see [`ServerTree`]); `spawn` returns what it made
/// and the pid of the process it started.
pub(super) fn spawn_server<T: Send + 'static>(
    cmd: tokio::process::Command,
    spawn: impl FnOnce(tokio::process::Command) -> std::io::Result<(T, Option<u32>)> + Send + 'static,
) -> std::io::Result<(T, ServerTree)> {
    let (made, kept) = spawn_kept(cmd, None, spawn)?;
    Ok((
        made,
        ServerTree {
            keeper: kept.pid,
            #[cfg(target_os = "linux")]
            cgroup: kept.cgroup,
        },
    ))
}

impl Drop for ServerTree {
    fn drop(&mut self) {
        if let Some(k) = self.keeper.filter(|k| *k > 1) {
            // SAFETY: kill has no memory effects. The keeper is our child and is reaped only
            // by its owner's wait, so until then the pid cannot be reused.
            unsafe {
                libc::kill(k, libc::SIGTERM);
            }
            // Give the keeper the moment it needs to kill and reap its tree, before whoever
            // holds its Child kills it outright (a SIGKILLed keeper cannot clean up).
            for _ in 0..200 {
                if exited(k) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        #[cfg(target_os = "linux")]
        if let Some(c) = &self.cgroup {
            c.kill();
        }
    }
}

/// Whether our child `pid` has exited (without reaping it).
fn exited(pid: i32) -> bool {
    // SAFETY: waitid writes only `info`; WNOWAIT leaves the child to be reaped by its owner.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        // Gone (reaped already: ECHILD) or exited (a pid in `info`).
        r != 0 || info.si_pid() != 0
    }
}

/// What counting a tree's processes needs, to do it on a blocking thread.
#[derive(Debug, Clone)]
pub(super) struct Census {
    #[cfg(target_os = "linux")]
    cgroup: Option<std::path::PathBuf>,
    keeper: Option<i32>,
}

impl Census {
    /// Processes the command has alive (zombies not yet reaped included), the keeper not
    /// counted. None where they cannot be counted.
    pub(super) fn count(&self) -> Option<usize> {
        let keeper = self.keeper? as u32;
        #[cfg(target_os = "linux")]
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
            #[cfg(target_os = "linux")]
            cgroup: self.cgroup.as_ref().map(|c| c.dir().to_path_buf()),
            keeper: self.keeper,
        }
    }

    /// Ends every process of the command: the cgroup is killed, and the keeper is told to
    /// kill what is below it.
    pub(super) fn kill(&self) {
        #[cfg(target_os = "linux")]
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
        // On macOS the keeper's end killed the group and what it recorded before it exited.
        #[cfg(target_os = "linux")]
        if let Some(c) = &self.cgroup {
            for _ in 0..100 {
                if c.members().is_none_or(|m| m.is_empty()) {
                    return;
                }
                c.kill();
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
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

/// Every process below `root` (not `root` itself), from the kernel's lists of children.
#[cfg(target_os = "macos")]
pub(super) fn descendants(root: u32) -> Option<Vec<u32>> {
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() && found.len() < 100_000 {
        let mut kids = vec![0 as libc::pid_t; 4096];
        // SAFETY: writes at most the buffer's size in bytes into `kids`.
        let got = unsafe {
            libc::proc_listchildpids(
                found[i] as libc::pid_t,
                kids.as_mut_ptr().cast(),
                (kids.len() * std::mem::size_of::<libc::pid_t>()) as libc::c_int,
            )
        };
        // A count of pids (or of bytes on some releases): the unused tail stays zero.
        let got = usize::try_from(got).unwrap_or(0).min(kids.len());
        found.extend(kids[..got].iter().filter(|p| **p > 0).map(|p| *p as u32));
        i += 1;
    }
    found.remove(0);
    Some(found)
}

/// Every process below `root` (not `root` itself), from the parents in `/proc/*/stat`.
#[cfg(target_os = "linux")]
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
