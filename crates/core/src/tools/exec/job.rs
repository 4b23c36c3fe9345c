//! Windows: a command's whole process tree in one Job Object. The shell starts suspended, joins
//! the job, then runs, so every process it starts is in the job from its first instruction
//! (child processes join their parent's job). The job is made with
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` and only the agent holds its handle: when the command
//! ends, times out or is cancelled the job is terminated, and when the agent exits in any way
//! the system closes the handle, which ends every process in it.

use std::sync::Arc;
use std::time::Duration;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

/// A job handle. Closing it (drop) ends every process still in the job.
#[derive(Debug)]
struct Job(HANDLE);

// SAFETY: a job handle is a kernel object reference, usable from any thread.
unsafe impl Send for Job {}
// SAFETY: as above; the calls made with it are thread-safe kernel calls.
unsafe impl Sync for Job {}

impl Job {
    fn new() -> std::io::Result<Job> {
        // SAFETY: no security attributes, no name: a new anonymous job.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        let job = Job(handle);
        // SAFETY: the struct is plain data; zero is "no limit" for every field.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags =
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
        // SAFETY: `limits` is the struct this information class takes, with its size.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Processes alive in the job.
    fn active(&self) -> Option<usize> {
        // SAFETY: plain data, filled by the call.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is the struct this information class fills, with its size.
        let ok = unsafe {
            QueryInformationJobObject(
                self.0,
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast(),
                std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        (ok != 0).then_some(info.ActiveProcesses as usize)
    }

    fn terminate(&self) {
        // SAFETY: ends the job's processes; no memory effects here.
        unsafe {
            TerminateJobObject(self.0, 1);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// A running command: the shell (tokio's child) and the job holding it and its descendants.
/// Dropping it ends everything the command started.
#[derive(Debug)]
pub(super) struct ProcessTree {
    pub child: tokio::process::Child,
    job: Arc<Job>,
}

/// Spawns `cmd` in a new job. Windows has no process sandbox here, so `sandbox` is always
/// None (a confinement cannot be prepared on Windows, and the command is refused before).
pub(super) fn spawn(
    mut cmd: tokio::process::Command,
    sandbox: Option<&crate::sandbox::Prepared>,
    // No pseudo-terminal here: callers never ask for one on Windows.
    _tty: bool,
) -> std::io::Result<ProcessTree> {
    if sandbox.is_some() {
        return Err(std::io::Error::other("no process sandbox on this platform"));
    }
    let job = Arc::new(Job::new()?);
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP);
    let mut child = cmd.spawn()?;
    let (Some(handle), Some(pid)) = (child.raw_handle(), child.id()) else {
        return Err(std::io::Error::other("the shell exited at once"));
    };
    // SAFETY: both handles are open: the job is ours, the process handle is the child's.
    if unsafe { AssignProcessToJobObject(job.0, handle as HANDLE) } == 0 {
        let e = std::io::Error::last_os_error();
        let _ = child.start_kill();
        return Err(std::io::Error::new(
            e.kind(),
            format!("putting the command in a Job Object: {e}"),
        ));
    }
    if let Err(e) = resume(pid) {
        job.terminate();
        return Err(e);
    }
    Ok(ProcessTree { child, job })
}

/// The tree of a long-lived child that is not a command (an MCP stdio server): its job, which
/// ends everything in it when this guard is dropped and when the agent dies.
#[derive(Debug)]
pub(crate) struct ServerTree {
    job: Job,
}

impl Drop for ServerTree {
    fn drop(&mut self) {
        self.job.terminate();
    }
}

/// Spawns a long-lived child in a job of its own; `spawn` returns what it made and the pid of
/// the process it started (suspended, so it joins the job before it runs).
pub(super) fn spawn_server<T: Send + 'static>(
    mut cmd: tokio::process::Command,
    spawn: impl FnOnce(tokio::process::Command) -> std::io::Result<(T, Option<u32>)> + Send + 'static,
) -> std::io::Result<(T, ServerTree)> {
    use windows_sys::Win32::System::Threading::{
        OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE,
    };
    let job = Job::new()?;
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP);
    let (made, pid) = spawn(cmd)?;
    let pid = pid.ok_or_else(|| std::io::Error::other("the server exited at once"))?;
    // SAFETY: opens our own child by pid; the handle is closed below.
    let process = unsafe { OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid) };
    if process.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both handles are open.
    let assigned = unsafe { AssignProcessToJobObject(job.0, process) } != 0;
    let error = std::io::Error::last_os_error();
    // SAFETY: the process handle is ours.
    unsafe {
        CloseHandle(process);
    }
    if !assigned {
        return Err(std::io::Error::new(
            error.kind(),
            format!("putting the server in a Job Object: {error}"),
        ));
    }
    resume(pid)?;
    Ok((made, ServerTree { job }))
}

/// Resumes the threads of a process started suspended (its main thread).
fn resume(pid: u32) -> std::io::Result<()> {
    // SAFETY: a snapshot of the system's threads; closed below.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snap == INVALID_HANDLE_VALUE {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: plain data; dwSize is set as the API requires.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: `entry` is a THREADENTRY32 with its size set; `snap` is open.
    let mut more = unsafe { Thread32First(snap, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opens, resumes and closes one thread of our child.
            unsafe {
                let thread = OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID);
                if !thread.is_null() {
                    if ResumeThread(thread) != u32::MAX {
                        resumed += 1;
                    }
                    CloseHandle(thread);
                }
            }
        }
        // SAFETY: as above.
        more = unsafe { Thread32Next(snap, &mut entry) } != 0;
    }
    // SAFETY: the snapshot handle is ours.
    unsafe {
        CloseHandle(snap);
    }
    if resumed == 0 {
        return Err(std::io::Error::other(
            "could not resume the command's shell after putting it in its Job Object",
        ));
    }
    Ok(())
}

/// What counting a tree's processes needs, to do it on a blocking thread.
#[derive(Debug, Clone)]
pub(super) struct Census {
    job: Arc<Job>,
}

impl Census {
    /// Processes the command has alive, the shell included.
    pub(super) fn count(&self) -> Option<usize> {
        self.job.active()
    }
}

impl ProcessTree {
    pub(super) fn census(&self) -> Census {
        Census {
            job: Arc::clone(&self.job),
        }
    }

    /// Ends every process of the command.
    pub(super) fn kill(&self) {
        self.job.terminate();
    }

    /// After the shell exited: ends what it left running (nothing outlives a command) and
    /// waits, bounded, until the job is empty.
    pub(super) async fn settle(&self) {
        self.job.terminate();
        for _ in 0..100 {
            if self.job.active().is_none_or(|n| n == 0) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        // Dropped while running (the turn was abandoned): end it all.
        self.job.terminate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shell runs in its job (resumed after joining), is counted there, and terminating
    /// the job ends it and empties the job.
    #[tokio::test]
    async fn the_shell_runs_in_its_job_and_ends_with_it() {
        let mut cmd = tokio::process::Command::new("cmd.exe");
        cmd.args(["/C", "ping -n 30 127.0.0.1 > NUL"]);
        let mut tree = spawn(cmd, None, false).expect("spawn in a job");
        let alive = tree.census().count().expect("the job's count");
        assert!(alive >= 1, "{alive} processes in the job");
        tree.kill();
        let status = tokio::time::timeout(Duration::from_secs(10), tree.child.wait())
            .await
            .expect("the shell ends with its job")
            .expect("wait");
        assert!(!status.success());
        tree.settle().await;
        assert_eq!(tree.census().count(), Some(0));
    }
}
