//! Where file text lives. The disk backend writes atomically (temp file, then rename).

use futures::future::BoxFuture;
use std::io;
use std::path::Path;

/// Whole-file reads above this are refused; tools page through big files instead.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

/// Where the workspace reads and writes file text: the disk, the ACP client's fs, or the LSP
/// client's buffers. Paths arrive absolute, inside the workspace roots.
pub trait FileBackend: Send + Sync {
    /// A file's whole text; a missing file is `ErrorKind::NotFound`, which the workspace reads
    /// as absent.
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<String>>;
    /// Replaces a file's text, creating the file if need be.
    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, io::Result<()>>;
    /// Deletes a file; one that does not exist is an error.
    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>>;

    /// Texts this backend holds that may differ from the disk (open editor documents, writes
    /// kept in memory; `None`: deleted), for searches. The disk and the ACP client, which
    /// cannot list its buffers, hold none.
    fn buffers(&self) -> super::Buffers {
        Default::default()
    }

    /// Whether reads show an editor's buffers, which may hold unsaved text (the ACP client's
    /// fs): an undo keeps a file whose buffer differs from the disk.
    fn reads_editor_buffers(&self) -> bool {
        false
    }
}

/// Files on the local disk: UTF-8 only, whole reads up to [`MAX_READ_BYTES`], atomic writes.
pub struct DiskBackend;

impl FileBackend for DiskBackend {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<String>> {
        Box::pin(async move {
            let meta = tokio::fs::metadata(path).await?;
            if meta.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{} is a directory", path.display()),
                ));
            }
            if meta.len() > MAX_READ_BYTES {
                return Err(io::Error::new(
                    io::ErrorKind::FileTooLarge,
                    format!(
                        "{} is {} bytes, over the {} byte limit for whole-file reads; read it in windows",
                        path.display(),
                        meta.len(),
                        MAX_READ_BYTES
                    ),
                ));
            }
            let bytes = tokio::fs::read(path).await?;
            String::from_utf8(bytes).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not UTF-8 text", path.display()),
                )
            })
        })
    }

    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            let path = path.to_path_buf();
            let text = text.to_string();
            tokio::task::spawn_blocking(move || write_atomic(&path, text.as_bytes()))
                .await
                .map_err(io::Error::other)?
        })
    }

    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move { tokio::fs::remove_file(path).await })
    }
}

/// Writes a file only its owner can read (config with keys), atomically.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_mode(path, bytes, Some(0o600))
}

/// Writes through a temp file in the same folder and renames it over the target, so a crash
/// leaves either the old or the new content, never a torn file.
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_mode(path, bytes, None)
}

/// `mode` set: the temp file is created with it (no moment where others can read it).
fn write_atomic_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other(format!("{} has no parent folder", path.display())))?;
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let result = (|| {
        let mut f = crate::platform::create_mode(
            std::fs::OpenOptions::new().write(true).create_new(true),
            mode.unwrap_or(0o666),
        )
        .open(&tmp)?;
        f.write_all(bytes)?;
        if mode.is_none()
            && let Ok(meta) = std::fs::metadata(path)
        {
            f.set_permissions(meta.permissions())?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
