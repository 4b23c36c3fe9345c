//! The writing side of a session log. One process at a time writes a log: it holds an
//! advisory lock on `<id>.jsonl.lock` beside it (released by the OS if the process dies) and
//! names itself in `<id>.jsonl.holder`, so a refused second writer can say who has it.
//! Readers (lists, loads for display) never take the lock.
//!
//! Every record is whole or absent: a write that fails is cut back to the end of the last
//! whole record, and a torn tail found when a log is reopened is cut too, so the next record
//! starts on a line of its own. Within a turn, the first failure is kept for the turn's end
//! (which then fails) and no later record of the turn is written, so no record follows a
//! lost one. Between turns a failure goes back to the caller (the session warns).

use anyhow::{Context, Result, anyhow};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::LogLine;

/// What a log writes through: its file, or in tests a file that fails on cue.
pub(crate) trait LogFile: Send {
    /// Appends all of `bytes`. On an error any prefix of them may have reached the file.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Makes everything appended durable.
    fn sync(&mut self) -> io::Result<()>;
    /// Cuts the file back to `len` bytes.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

impl LogFile for File {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_all(bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

static FACE: OnceLock<&'static str> = OnceLock::new();

/// Names the face this process serves (`exec`, `acp`, …) in the holder files it writes.
/// Set once, at start-up.
pub(crate) fn set_face(face: &'static str) {
    let _ = FACE.set(face);
}

/// The session is being written by another process, or by another session of this one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("session `{id}` is open {holder}; close that one first")]
pub struct SessionBusy {
    /// The busy session's id.
    pub id: String,
    /// "in another interpreter (pid 1234, acp)" or "elsewhere in this interpreter".
    pub holder: String,
}

/// `<log>.<ext>`, beside the log.
fn sidecar(log: &Path, ext: &str) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

/// The files beside a log that belong to it (removed with it).
pub(super) fn sidecars(log: &Path) -> [PathBuf; 2] {
    [sidecar(log, "lock"), sidecar(log, "holder")]
}

/// Opens (creating) a file with mode 0600 where modes exist.
pub(super) fn open_private(path: &Path, o: &mut OpenOptions) -> io::Result<File> {
    crate::platform::create_mode(o, 0o600).open(path)
}

/// Held while this process writes a log. The lock is on its own file, because on Windows a
/// locked file cannot be read by others, and the holder must stay readable.
pub(crate) struct WriterLock {
    holder: PathBuf,
    // Dropped after `drop` has removed the holder file: that releases the lock.
    _file: File,
}

impl WriterLock {
    /// Takes the lock of `log` (session `id`), or says who has it.
    pub(crate) fn acquire(log: &Path, id: &str) -> Result<WriterLock> {
        let [lock_path, holder] = sidecars(log);
        let file = open_private(
            &lock_path,
            OpenOptions::new().create(true).truncate(false).write(true),
        )
        .with_context(|| format!("opening {}", lock_path.display()))?;
        let locked = file.try_lock();
        match locked {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(SessionBusy {
                    id: id.to_string(),
                    holder: describe_holder(&holder),
                }
                .into());
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", lock_path.display()));
            }
        }
        let face = FACE.get().copied().unwrap_or("interpreter");
        let text = format!("{} {face}\n", std::process::id());
        // Naming the holder is a courtesy: the lock works without it.
        if let Err(e) = std::fs::write(&holder, text) {
            tracing::debug!("could not write {}: {e}", holder.display());
        }
        Ok(WriterLock {
            holder,
            _file: file,
        })
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.holder);
    }
}

/// Who holds a lock, from its holder file ("pid face").
fn describe_holder(holder: &Path) -> String {
    let text = std::fs::read_to_string(holder).unwrap_or_default();
    let mut words = text.split_whitespace();
    match (
        words.next().and_then(|p| p.parse::<u32>().ok()),
        words.next(),
    ) {
        (Some(pid), _) if pid == std::process::id() => "elsewhere in this interpreter".into(),
        (Some(pid), Some(face)) => format!("in another interpreter (pid {pid}, {face})"),
        (Some(pid), None) => format!("in another interpreter (pid {pid})"),
        _ => "in another interpreter".into(),
    }
}

struct Writer {
    file: Box<dyn LogFile>,
    _lock: Option<WriterLock>,
}

/// An open session log. It may be unclaimed (a session loaded for display): then records
/// wait in memory until its first turn claims the log.
pub(crate) struct SessionLog {
    id: String,
    path: PathBuf,
    writer: Option<Writer>,
    /// For an unclaimed log: its length when it was loaded. A claim refuses a log that
    /// changed since, whose history this session does not have.
    loaded_len: u64,
    /// Records made before the log was claimed, written first when it is.
    pending: Vec<String>,
    /// Where the last whole record ends: the next one starts here.
    good_len: u64,
    /// Past `good_len` the file may hold part of a record (a failed write whose cut-back
    /// failed too); cut before the next write.
    torn: bool,
    in_turn: bool,
    /// The first failure of this turn; the turn's end reports it.
    failed: Option<String>,
}

impl SessionLog {
    /// A claimed log that writes through `file`, whose whole records end at `len`.
    pub(super) fn claimed(
        id: &str,
        path: PathBuf,
        file: Box<dyn LogFile>,
        lock: Option<WriterLock>,
        len: u64,
    ) -> SessionLog {
        SessionLog {
            id: id.to_string(),
            path,
            writer: Some(Writer { file, _lock: lock }),
            loaded_len: len,
            pending: Vec::new(),
            good_len: len,
            torn: false,
            in_turn: false,
            failed: None,
        }
    }

    /// A log this session will write only from its first turn on; `loaded_len` is its
    /// length when its history was read.
    pub(super) fn unclaimed(id: &str, path: PathBuf, loaded_len: u64) -> SessionLog {
        SessionLog {
            id: id.to_string(),
            path,
            writer: None,
            loaded_len,
            pending: Vec::new(),
            good_len: loaded_len,
            torn: false,
            in_turn: false,
            failed: None,
        }
    }

    /// A turn starts: the log is claimed if it was not (taking the lock, writing what
    /// waited), and from here a failed write fails the turn.
    pub(crate) fn begin_turn(&mut self) -> Result<()> {
        if self.writer.is_none() {
            self.claim()?;
        }
        self.in_turn = true;
        for text in std::mem::take(&mut self.pending) {
            let _ = self.write(&text);
        }
        Ok(())
    }

    fn claim(&mut self) -> Result<()> {
        let lock = WriterLock::acquire(&self.path, &self.id)?;
        let len = std::fs::metadata(&self.path)
            .with_context(|| format!("reading {}", self.path.display()))?
            .len();
        anyhow::ensure!(
            len == self.loaded_len,
            "session `{}` was changed by another interpreter since it was loaded; load it again",
            self.id
        );
        let (file, good_len) = open_for_append(&self.path)?;
        self.writer = Some(Writer {
            file: Box::new(file),
            _lock: Some(lock),
        });
        self.good_len = good_len;
        Ok(())
    }

    /// Whether a turn is running (its failures wait for its end).
    /// The log's file (a hook's `transcript_path`).
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    pub(crate) fn in_turn(&self) -> bool {
        self.in_turn
    }

    /// Appends one record. In a turn, after a failure, later records of the turn are left
    /// out (Ok): the turn's end reports the failure once.
    pub(crate) fn append(&mut self, line: &LogLine) -> Result<()> {
        // No key reaches the disk, whatever the line holds.
        let mut text = crate::secrets::to_redacted_json(line)?;
        text.push('\n');
        if self.writer.is_none() {
            self.pending.push(text);
            return Ok(());
        }
        if self.failed.is_some() {
            return Ok(());
        }
        self.write(&text)
    }

    fn write(&mut self, text: &str) -> Result<()> {
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        let result = if self.torn {
            w.file.truncate(self.good_len)
        } else {
            Ok(())
        }
        .and_then(|()| {
            self.torn = false;
            w.file.append(text.as_bytes())
        });
        match result {
            Ok(()) => {
                self.good_len += text.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Cut what part of the record got in, so the next one starts on its own line.
                self.torn = w.file.truncate(self.good_len).is_err();
                Err(self.fail(format!(
                    "appending to session log {}: {e}",
                    self.path.display()
                )))
            }
        }
    }

    fn fail(&mut self, message: String) -> anyhow::Error {
        if self.in_turn && self.failed.is_none() {
            tracing::error!("{message}");
            self.failed = Some(message.clone());
        }
        anyhow!(message)
    }

    /// Makes everything appended so far durable; fails if a record of this turn was lost.
    pub(crate) fn sync(&mut self) -> Result<()> {
        if let Some(f) = &self.failed {
            return Err(anyhow!("{f}"));
        }
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        match w.file.sync() {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail(format!("syncing session log {}: {e}", self.path.display()))),
        }
    }

    /// The turn ends: its records are made durable, or the error says why they are not.
    pub(crate) fn end_turn(&mut self) -> Result<()> {
        let r = self.sync();
        self.failed = None;
        self.in_turn = false;
        r
    }
}

/// Opens an existing log for appending, first cutting a torn last line (a crash in the
/// middle of a write): returns the file and where its whole records end.
pub(super) fn open_for_append(path: &Path) -> Result<(File, u64)> {
    let mut file = open_private(path, OpenOptions::new().read(true).append(true))
        .with_context(|| format!("opening session log {}", path.display()))?;
    let len = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    let whole =
        whole_records_end(&mut file, len).with_context(|| format!("reading {}", path.display()))?;
    if whole < len {
        tracing::warn!(
            "cutting a torn last line ({} bytes) off {}",
            len - whole,
            path.display()
        );
        file.set_len(whole)
            .with_context(|| format!("cutting the torn last line of {}", path.display()))?;
    }
    Ok((file, whole))
}

/// The offset just past the last newline of the first `len` bytes (0 if there is none).
fn whole_records_end(file: &mut File, len: u64) -> io::Result<u64> {
    const CHUNK: u64 = 64 * 1024;
    let mut end = len;
    let mut buf = vec![0u8; CHUNK as usize];
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
