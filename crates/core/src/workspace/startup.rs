//! What a session reads on its own when it starts, before any tool call: AGENTS.md files,
//! skills, the listing of the working directory. A repository is not trusted more because
//! the agent reads it unasked, so these reads pass the same confinement as the file tools'
//! paths ([`super::paths::confine_path`]): a symlink that leaves the workspace is not
//! followed, it is skipped and named in a warning. Only regular files are read (a FIFO named
//! AGENTS.md does not hang the session) and at most a given number of bytes of each.
//!
//! Files in the user's own configuration (`<home>/AGENTS.md`, `~/.agents/skills`) are the
//! user's, not the workspace's: [`Scope::User`] reads them where their symlinks lead.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::paths::confine_path;

/// Whose file a read is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// A file of the project found in `folder` (the cwd, or a folder between the git root and
    /// the cwd, which AGENTS.md and skills are also read from): it must resolve inside the
    /// workspace roots or inside `folder`.
    Project { folder: &'a Path },
    /// The user's own configuration: not confined.
    User,
}

/// A file's text, cut at the byte limit of the read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text {
    pub text: String,
    /// The file was longer than the limit.
    pub truncated: bool,
}

/// One entry of a listed folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    /// Where it was found (inside the listed folder).
    pub path: PathBuf,
    /// A folder, or a symlink to a folder inside the workspace.
    pub is_dir: bool,
}

/// The session's own reads, and the warnings about what they skipped.
#[derive(Debug, Default)]
pub(crate) struct StartupReads {
    roots: Vec<PathBuf>,
    warnings: Vec<String>,
}

impl StartupReads {
    /// Reads confined to the workspace `roots` (canonical, as `Workspace::roots` gives them).
    pub(crate) fn new(roots: &[PathBuf]) -> Self {
        StartupReads {
            roots: roots.to_vec(),
            warnings: Vec::new(),
        }
    }

    /// What was skipped and why, one sentence each, in the order it happened.
    pub(crate) fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Where `path` really is, if this scope may read it (a warning when not).
    fn allowed(&mut self, path: &Path, scope: Scope<'_>) -> Option<PathBuf> {
        // Most candidates (AGENTS.override.md, skill folders) do not exist, and one lstat
        // says so without resolving every component of the path twice.
        if std::fs::symlink_metadata(path).is_err() {
            return None;
        }
        let Scope::Project { folder } = scope else {
            return Some(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
        };
        let mut roots = self.roots.clone();
        roots.push(std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf()));
        match confine_path(&roots, path) {
            Ok(p) => Some(p),
            Err(e) => {
                let w = format!(
                    "skipped {}: it leads outside the workspace ({e})",
                    path.display()
                );
                tracing::warn!("{w}");
                self.warnings.push(w);
                None
            }
        }
    }

    /// The text of the regular file at `path`, at most `max` bytes (invalid UTF-8 replaced).
    /// None when it does not exist, is not a regular file, or may not be read here.
    pub(crate) fn read_text(&mut self, path: &Path, max: usize, scope: Scope<'_>) -> Option<Text> {
        let real = self.allowed(path, scope)?;
        let meta = std::fs::metadata(&real).ok()?;
        if !meta.is_file() {
            if !meta.is_dir() {
                let w = format!("skipped {}: it is not a regular file", path.display());
                tracing::warn!("{w}");
                self.warnings.push(w);
            }
            return None;
        }
        let mut file = open_regular(&real)?;
        let mut bytes = Vec::with_capacity(max.min(meta.len() as usize) + 1);
        (&mut file)
            .take(max as u64 + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        let truncated = bytes.len() > max;
        bytes.truncate(max);
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        Some(Text { text, truncated })
    }

    /// The entries of the folder `dir`, sorted by name. Symlinks that lead outside the
    /// workspace are left out (with a warning); one to a folder inside counts as a folder.
    pub(crate) fn list_dir(&mut self, dir: &Path, scope: Scope<'_>) -> Vec<Entry> {
        let Some(real) = self.allowed(dir, scope) else {
            return Vec::new();
        };
        let Ok(rd) = std::fs::read_dir(&real) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = dir.join(e.file_name());
            let Ok(ft) = e.file_type() else { continue };
            let is_dir = if ft.is_symlink() {
                let Some(target) = self.allowed(&path, scope) else {
                    continue;
                };
                std::fs::metadata(target).is_ok_and(|m| m.is_dir())
            } else {
                ft.is_dir()
            };
            out.push(Entry { name, path, is_dir });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// Opens a regular file without following a symlink at the last step or blocking on a FIFO
/// that replaced it since it was checked.
fn open_regular(path: &Path) -> Option<std::fs::File> {
    let (file, meta) = crate::platform::open_nonblocking(path, false).ok()?;
    meta.is_file().then_some(file)
}

// Links and FIFOs: Unix.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(ws.path()).unwrap();
        std::fs::write(outside.path().join("secret.txt"), "DECOY").unwrap();
        std::fs::create_dir(outside.path().join("dir")).unwrap();
        (ws, outside, root)
    }

    #[test]
    fn a_symlink_leaving_the_workspace_is_skipped_and_named() {
        let (_ws, outside, root) = setup();
        symlink(outside.path().join("secret.txt"), root.join("AGENTS.md")).unwrap();
        symlink(outside.path().join("dir"), root.join("linked-dir")).unwrap();
        std::fs::write(root.join("real.md"), "inside").unwrap();
        symlink(root.join("real.md"), root.join("inner-link.md")).unwrap();
        let mut r = StartupReads::new(std::slice::from_ref(&root));
        let scope = Scope::Project { folder: &root };
        assert_eq!(r.read_text(&root.join("AGENTS.md"), 100, scope), None);
        assert_eq!(
            r.read_text(&root.join("inner-link.md"), 100, scope)
                .unwrap()
                .text,
            "inside"
        );
        let names: Vec<String> = r
            .list_dir(&root, scope)
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["inner-link.md", "real.md"]);
        let w = r.take_warnings();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("AGENTS.md") && w[0].contains("outside the workspace"));
        assert!(w.iter().any(|w| w.contains("linked-dir")), "{w:?}");
    }

    #[test]
    fn user_files_follow_their_links() {
        let (_ws, outside, root) = setup();
        symlink(outside.path().join("secret.txt"), root.join("AGENTS.md")).unwrap();
        let mut r = StartupReads::new(std::slice::from_ref(&root));
        let t = r
            .read_text(&root.join("AGENTS.md"), 100, Scope::User)
            .unwrap();
        assert_eq!(t.text, "DECOY");
        assert!(r.take_warnings().is_empty());
    }

    #[test]
    fn a_folder_between_git_root_and_cwd_may_link_inside_itself() {
        let (_ws, _outside, root) = setup();
        let parent = root.join("repo");
        let cwd = parent.join("sub");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(parent.join("doc.md"), "parent rules").unwrap();
        symlink(parent.join("doc.md"), parent.join("AGENTS.md")).unwrap();
        let mut r = StartupReads::new(std::slice::from_ref(&cwd));
        let scope = Scope::Project { folder: &parent };
        assert_eq!(
            r.read_text(&parent.join("AGENTS.md"), 100, scope)
                .unwrap()
                .text,
            "parent rules"
        );
    }

    #[test]
    fn reads_are_capped_and_only_regular_files_are_read() {
        let (_ws, _outside, root) = setup();
        std::fs::write(root.join("big.md"), "x".repeat(1000)).unwrap();
        let mut r = StartupReads::new(std::slice::from_ref(&root));
        let scope = Scope::Project { folder: &root };
        let t = r.read_text(&root.join("big.md"), 10, scope).unwrap();
        assert_eq!((t.text.len(), t.truncated), (10, true));
        let fifo = root.join("AGENTS.md");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(r.read_text(&fifo, 10, scope), None);
        assert!(r.take_warnings()[0].contains("not a regular file"));
        assert_eq!(r.read_text(&root.join("missing.md"), 10, scope), None);
    }
}
