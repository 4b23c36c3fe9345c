//! The sandbox: the approval policy (sandbox mode × approval policy → allow, ask or deny, per
//! intent) and the process sandbox that holds shell commands to the mode.
//!
//! Linux confines commands with Landlock, macOS with Seatbelt (`sandbox-exec`); Windows has no
//! process sandbox yet and follows the no-sandbox rules.
//!
//! | mode | shell commands (Landlock, Seatbelt) | without a sandbox |
//! |---|---|---|
//! | `read-only` | read everywhere, write nothing but `/dev/null`-like devices, no network | only known read-only commands run; others ask (`never`: refused) |
//! | `workspace-write` | write under the workspace roots, `writable_roots`, `/tmp`, `$TMPDIR`, `/dev/shm`; network only with `network_access` | commands ask (`never`: they run unconfined) |
//! | `danger-full-access` | unconfined | unconfined |
//!
//! Dangerous commands (`rm -rf` outside the workspace, force pushes, `curl | sh`) ask in every
//! mode and are refused under `never`. See docs/architecture.md.

pub(crate) mod command;
mod confinement;
pub mod git;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod mountns;
mod policy;
mod prepared;
mod protect;
/// Pure, so its golden tests run on every platform; used by commands on macOS only.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod seatbelt;

pub(crate) use confinement::Confinement;
#[cfg(all(test, target_os = "linux"))]
pub(crate) use confinement::Support;
pub use policy::{Intent, Policy, Verdict, remember_key};
pub(crate) use prepared::Prepared;

/// `cmd` confined as a read-only, network-off command and in a process group of its own
/// (killed whole by its caller): for what the agent runs by itself on repository content
/// (git). Where this machine has no process sandbox it runs as it is; its caller turns off
/// what could run a program.
pub(crate) fn confine_own_run(
    cmd: std::process::Command,
) -> std::io::Result<std::process::Command> {
    confine_own(cmd, None).map(|(cmd, _)| cmd)
}

/// As [`confine_own_run`], but `cmd` may write under `writable` (network still off): for a
/// git run by the agent that changes the repository (creating a worktree), after the user
/// was asked. The returned guard holds the sandbox's resources: keep it until `cmd` started.
pub(crate) fn confine_own_write(
    cmd: std::process::Command,
    writable: Vec<std::path::PathBuf>,
) -> std::io::Result<(std::process::Command, Option<Prepared>)> {
    confine_own(
        cmd,
        Some(Confinement {
            writable,
            network: false,
            protected: Vec::new(),
        }),
    )
}

#[cfg_attr(
    not(any(target_os = "linux", target_os = "macos")),
    allow(unused_variables, clippy::unnecessary_wraps)
)]
fn confine_own(
    cmd: std::process::Command,
    writing: Option<Confinement>,
) -> std::io::Result<(std::process::Command, Option<Prepared>)> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        static READ_ONLY: std::sync::OnceLock<Option<Prepared>> = std::sync::OnceLock::new();
        let confines = prepared::detect().confines_files();
        let (fresh, shared) = match &writing {
            None => (
                None,
                READ_ONLY
                    .get_or_init(|| {
                        confines
                            .then(|| Prepared::new(&Confinement::read_only()).ok())
                            .flatten()
                    })
                    .as_ref(),
            ),
            Some(c) => (confines.then(|| Prepared::new(c)).transpose()?, None),
        };
        let mut cmd = cmd;
        cmd.process_group(0);
        if let Some(p) = fresh.as_ref().or(shared) {
            let hook = p.enter_hook();
            // SAFETY: the hook makes only async-signal-safe system calls (landlock.rs).
            unsafe {
                cmd.pre_exec(hook);
            }
        }
        Ok((cmd, fresh))
    }
    #[cfg(target_os = "macos")]
    {
        use std::os::unix::process::CommandExt;
        if !prepared::detect().confines_files() {
            let mut cmd = cmd;
            cmd.process_group(0);
            return Ok((cmd, None));
        }
        let prepared = Prepared::new(&writing.unwrap_or_else(Confinement::read_only))?;
        let argv: Vec<std::ffi::OsString> = std::iter::once(cmd.get_program().to_os_string())
            .chain(cmd.get_args().map(|a| a.to_os_string()))
            .collect();
        let wrapped = prepared.wrap(argv);
        let mut out = std::process::Command::new(&wrapped[0]);
        out.args(&wrapped[1..]).process_group(0);
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => out.env(k, v),
                None => out.env_remove(k),
            };
        }
        if let Some(dir) = cmd.get_current_dir() {
            out.current_dir(dir);
        }
        Ok((out, Some(prepared)))
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Ok((cmd, None))
    }
}

/// What a new session must tell the user about its protection: a missing or partial process
/// sandbox, a config file others can read while it holds a key. Each is also logged, once
/// per process.
pub(crate) fn session_warnings(policy: &Policy, home: &std::path::Path) -> Vec<String> {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static LOGGED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    protect::protect_home(home);
    let warnings: Vec<String> = policy
        .sandbox_warning()
        .into_iter()
        .chain(crate::config::config_permission_warning(home))
        .collect();
    let mut logged = LOGGED.lock().unwrap_or_else(|e| e.into_inner());
    let logged = logged.get_or_insert_with(HashSet::new);
    for w in &warnings {
        if logged.insert(w.clone()) {
            tracing::warn!("{w}");
        }
    }
    warnings
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod landlock_tests;
