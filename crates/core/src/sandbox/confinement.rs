//! What a process sandbox can enforce ([`Support`]) and what one confined command may do
//! ([`Confinement`]): pure data. `prepared.rs` probes the machine and builds the rules.

use std::path::{Path, PathBuf};

/// The process sandbox this machine offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Support {
    /// Linux Landlock with this ABI version (1 or more).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Landlock { abi: u32 },
    /// macOS Seatbelt: commands run under `/usr/bin/sandbox-exec` with a generated profile,
    /// which holds files, the network and signals (see `seatbelt.rs`).
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    Seatbelt,
    /// No process sandbox, and why (for the user).
    Unavailable { reason: &'static str },
}

impl Support {
    fn abi(self) -> u32 {
        match self {
            Support::Landlock { abi } => abi,
            // Seatbelt enforces every right the Landlock ABIs name.
            Support::Seatbelt => u32::MAX,
            Support::Unavailable { .. } => 0,
        }
    }

    /// Writes outside the allowed folders are refused (Landlock ABI 1).
    pub(crate) fn confines_files(self) -> bool {
        self.abi() >= 1
    }

    /// Truncating files outside the allowed folders is refused (ABI 3).
    pub(crate) fn confines_truncate(self) -> bool {
        self.abi() >= 3
    }

    /// TCP connect and bind can be refused (ABI 4).
    pub(crate) fn confines_network(self) -> bool {
        self.abi() >= 4
    }

    /// Signals and abstract UNIX sockets can be scoped to the sandbox (ABI 6).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn scopes_ipc(self) -> bool {
        self.abi() >= 6
    }

    /// One line for the user: "Landlock ABI 7" or why there is none.
    pub(crate) fn describe(self) -> String {
        match self {
            Support::Landlock { abi } => format!("Landlock ABI {abi}"),
            Support::Seatbelt => "Seatbelt (sandbox-exec)".to_string(),
            Support::Unavailable { reason } => reason.to_string(),
        }
    }
}

/// What one confined command may do. Reads are allowed everywhere; writes only under
/// `writable` (plus `/dev/null`-like devices); network only when `network` is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Folders where the command may create, change and delete files. Empty: read-only.
    pub writable: Vec<PathBuf>,
    /// TCP connect and bind allowed (abstract UNIX sockets outside the sandbox too).
    pub network: bool,
    /// Paths under `writable` that stay read-only: `.git` folders and the agent's home
    /// (`protect.rs`).
    pub protected: Vec<PathBuf>,
}

impl Confinement {
    /// `read-only`: no writes, no network.
    pub(crate) fn read_only() -> Confinement {
        Confinement {
            writable: Vec::new(),
            network: false,
            protected: Vec::new(),
        }
    }

    /// `workspace-write`: the workspace roots, the extra writable roots and the temp folders
    /// (`/tmp`, `$TMPDIR`, `/dev/shm`).
    pub(crate) fn workspace_write(
        roots: &[PathBuf],
        extra: &[PathBuf],
        network: bool,
    ) -> Confinement {
        let mut writable: Vec<PathBuf> = Vec::new();
        let mut add = |p: &Path| {
            // Symlinked folders are confined by their real path, which is what Landlock sees.
            let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            if !writable.contains(&real) {
                writable.push(real);
            }
        };
        for r in roots.iter().chain(extra) {
            add(r);
        }
        for t in temp_dirs() {
            add(&t);
        }
        let protected = super::protect::protected_under(&writable);
        Confinement {
            writable,
            network,
            protected,
        }
    }

    /// The same, and writable under `dir` too (a user's own hook keeps its logs beside the
    /// file that defines it); what stays read-only is worked out again.
    pub(crate) fn also_writable(mut self, dir: &Path) -> Confinement {
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if !self.writable.contains(&real) {
            self.writable.push(real);
        }
        self.protected = super::protect::protected_under(&self.writable);
        self
    }
}

/// `/tmp`, `$TMPDIR` and `/dev/shm` (macOS: `/tmp` and `$TMPDIR`); a `$TMPDIR` of `/` or the
/// home folder itself is ignored (it would make everything writable).
fn temp_dirs() -> Vec<PathBuf> {
    #[cfg(target_os = "macos")]
    let mut out = vec![PathBuf::from("/tmp")];
    #[cfg(not(target_os = "macos"))]
    let mut out = vec![PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
    if let Some(t) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
        let t = std::fs::canonicalize(&t).unwrap_or_else(|_| PathBuf::from(t));
        let home = dirs::home_dir().and_then(|h| std::fs::canonicalize(h).ok());
        if t.is_absolute() && t.parent().is_some() && Some(&t) != home.as_ref() {
            out.push(t);
        }
    }
    out
}
