//! Keys out of reach of the processes the agent starts.
//!
//! At start, before any other thread exists, [`protect_process`]:
//! - Linux: marks the process not dumpable (`PR_SET_DUMPABLE` 0): other processes of the same
//!   user can no longer read its `/proc/<pid>/environ` or `/proc/<pid>/mem`, attach a debugger
//!   to it, or get a core dump of it. The keeper of each command (a fork) inherits this; the
//!   commands themselves (after `exec`) do not. The cost: no core dumps and no `gdb -p`/`strace
//!   -p` without root. macOS: `ptrace(PT_DENY_ATTACH)`, the nearest equivalent: no debugger
//!   (and so no `task_for_pid` through one) attaches to the agent. Windows has no equivalent
//!   for processes of the same user (see docs/sandbox.md);
//! - takes the key variables (the catalog's `*_API_KEY`s, `CODEX_API_KEY`, every `env_key` and
//!   `env_http_headers` variable named in config.toml or `-c`, and any `*_API_KEY`) out of the
//!   environment: their values are kept in memory for [`env_var`], overwritten in the original
//!   environment block (which `/proc/<pid>/environ` shows), and removed from the variables
//!   every child inherits;
//! - registers every configured key of every provider for redaction.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Key variables taken out of the environment at start.
static TAKEN: OnceLock<HashMap<String, String>> = OnceLock::new();

/// A variable as the process was started with it: the key variables from what
/// [`protect_process`] took, the others from the environment.
pub fn env_var(name: &str) -> Option<String> {
    if let Some(v) = TAKEN.get().and_then(|t| t.get(name)) {
        return Some(v.clone());
    }
    std::env::var(name).ok()
}

/// See the module comment. `keys` are every key the configuration holds
/// (`config::process_keys`).
///
/// # Safety
///
/// Must be called before the process starts any thread (first thing in `main`): it changes
/// the environment, which other threads could be reading.
pub unsafe fn protect_process(keys: &super::ConfiguredKeys) {
    deny_inspection();
    for (_, value) in &keys.values {
        super::register(value);
    }
    let mut taken = HashMap::new();
    for (name, value) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let key_var = keys.env_vars.iter().any(|v| v == name) || name.ends_with("_API_KEY");
        if !key_var {
            continue;
        }
        let value = value.to_string_lossy().into_owned();
        super::register(&value);
        super::register_env_var(name);
        // SAFETY: the caller guarantees no other thread exists yet.
        unsafe { scrub(name) };
        taken.insert(name.to_string(), value);
    }
    let _ = TAKEN.set(taken);
}

/// Other processes of the user cannot read our memory or attach to us (see the module comment).
fn deny_inspection() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments has no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    #[cfg(target_os = "macos")]
    // SAFETY: PT_DENY_ATTACH takes no address or data; it only sets a flag on this process.
    unsafe {
        libc::ptrace(libc::PT_DENY_ATTACH, 0, std::ptr::null_mut(), 0);
    }
}

/// The C runtime's environment array.
#[cfg(unix)]
fn environ() -> *mut *mut libc::c_char {
    #[cfg(target_os = "macos")]
    {
        // SAFETY: _NSGetEnviron returns the address of the process's `environ`, valid for the
        // process's life.
        unsafe { *libc::_NSGetEnviron() }
    }
    #[cfg(not(target_os = "macos"))]
    {
        unsafe extern "C" {
            static mut environ: *mut *mut libc::c_char;
        }
        // SAFETY: reading the pointer; the caller holds the single-thread promise.
        unsafe { environ }
    }
}

/// Overwrites the value of `name` in the environment block and removes the variable.
///
/// # Safety
/// No other thread may exist.
#[cfg(unix)]
unsafe fn scrub(name: &str) {
    let prefix = format!("{name}=");
    // SAFETY: single-threaded (the caller's promise); `environ` is the NULL-terminated array
    // of NUL-terminated strings the C runtime set up, and each string is writable (the
    // original block is on the stack, later ones on the heap). Only the bytes before each
    // string's NUL are written.
    unsafe {
        let mut entry = environ();
        while !entry.is_null() && !(*entry).is_null() {
            let s = *entry;
            let bytes = std::ffi::CStr::from_ptr(s).to_bytes();
            if bytes.starts_with(prefix.as_bytes()) {
                let value = s.add(prefix.len());
                std::ptr::write_bytes(value, 0, bytes.len() - prefix.len());
            }
            entry = entry.add(1);
        }
        std::env::remove_var(name);
    }
}

/// Removes the variable (Windows keeps the environment in the process's own block, which
/// `SetEnvironmentVariableW` edits in place).
///
/// # Safety
/// No other thread may exist.
#[cfg(not(unix))]
unsafe fn scrub(name: &str) {
    // SAFETY: the caller's promise: no other thread reads the environment.
    unsafe { std::env::remove_var(name) };
}
