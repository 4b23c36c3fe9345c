//! macOS Seatbelt profiles for shell commands, generated from the same [`Confinement`] as
//! Landlock's ruleset: reads everywhere, writes only under the writable folders (and to
//! `/dev/null`-like devices and terminals), the network only when the mode allows it.
//!
//! Pure: the profile text is fixed for a mode, and the folders are parameters
//! (`-DWRITABLE_ROOT_0=/path`), so a path never has to be quoted into the policy language.
//! Commands run as `/usr/bin/sandbox-exec -p <profile> -D… -- <shell> -c <command>`.

use std::ffi::OsString;
use std::path::PathBuf;

use super::confinement::Confinement;

/// Only the system's own `sandbox-exec`, never one found on `PATH`.
pub(crate) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

const BASE_POLICY: &str = include_str!("seatbelt_base.sbpl");
const NETWORK_POLICY: &str = include_str!("seatbelt_network.sbpl");

/// A profile and the folder parameters it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Profile {
    pub text: String,
    /// `(name, folder)`, passed as `-Dname=folder`.
    pub params: Vec<(String, PathBuf)>,
}

/// The Seatbelt profile for `c`.
pub(crate) fn profile(c: &Confinement) -> Profile {
    let mut text = String::from(BASE_POLICY);
    text.push_str("\n; Reads are allowed everywhere, as under Landlock.\n(allow file-read*)\n");
    let mut params = Vec::new();
    if !c.writable.is_empty() {
        text.push_str("\n; The writable folders: the workspace roots, writable_roots, the temp folders.\n(allow file-write*");
        for (i, dir) in c.writable.iter().enumerate() {
            let name = format!("WRITABLE_ROOT_{i}");
            text.push_str(&format!("\n  (subpath (param \"{name}\"))"));
            params.push((name, dir.clone()));
        }
        text.push_str(")\n");
    }
    if !c.protected.is_empty() {
        text.push_str("\n; What the agent trusts stays read-only inside them: .git folders, the agent's home.\n(deny file-write*");
        for (i, dir) in c.protected.iter().enumerate() {
            let name = format!("PROTECTED_{i}");
            text.push_str(&format!("\n  (subpath (param \"{name}\"))"));
            params.push((name, dir.clone()));
        }
        text.push_str(")\n");
    }
    if c.network {
        text.push('\n');
        text.push_str(NETWORK_POLICY);
    } else {
        text.push_str("\n; No network: `deny default` refuses every socket connect and bind.\n");
    }
    Profile { text, params }
}

/// `sandbox-exec`'s arguments that run `argv` under `c`'s profile.
pub(crate) fn command_args(c: &Confinement, argv: &[OsString]) -> Vec<OsString> {
    let Profile { text, params } = profile(c);
    let mut args: Vec<OsString> = vec!["-p".into(), text.into()];
    for (name, dir) in params {
        let mut d = OsString::from(format!("-D{name}="));
        d.push(dir.as_os_str());
        args.push(d);
    }
    args.push("--".into());
    args.extend(argv.iter().cloned());
    args
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
