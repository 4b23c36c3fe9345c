//! The manifest: the stat data and ids of the files of the last snapshot, so the next one
//! reads only what changed. A cache: when it is missing or damaged every file is read again.
//! A compact binary file (a large folder's manifest is read at each process's first turn).

use std::collections::BTreeMap;
use std::path::Path;

use super::store::Id;
use super::tree;
use super::walk::Stat;

/// A file as a snapshot held it, and the stat data it had when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    mode: u8,
    pub id: Id,
    stat: Stat,
    /// When it was read. A file modified less than `RACY_NS` before that may have changed
    /// again within the clock's resolution, so it is read again (git's "racily clean").
    pub seen: i128,
    pub mtime: i128,
}

const MODES: [&str; 3] = [tree::FILE, tree::EXECUTABLE, tree::LINK];

impl Entry {
    pub(crate) fn new(mode: &str, id: Id, stat: &Stat, seen: i128) -> Entry {
        Entry {
            mode: MODES.iter().position(|m| *m == mode).unwrap_or(0) as u8,
            id,
            stat: *stat,
            seen,
            mtime: stat.mtime,
        }
    }

    pub(crate) fn mode(&self) -> &'static str {
        MODES[usize::from(self.mode).min(2)]
    }

    /// Whether `stat` is the stat data this entry was read with.
    pub(crate) fn same_as(&self, stat: &Stat) -> bool {
        self.stat == *stat
    }
}

const MAGIC: &[u8; 8] = b"ICKMAN1\n";

pub(crate) fn write(path: &Path, files: &BTreeMap<String, Entry>) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(16 + files.len() * 128);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(files.len() as u64).to_le_bytes());
    for (p, e) in files {
        out.extend_from_slice(&(p.len() as u32).to_le_bytes());
        out.extend_from_slice(p.as_bytes());
        out.push(e.mode);
        out.extend_from_slice(&e.id);
        out.push(e.stat.kind);
        out.extend_from_slice(&e.stat.size.to_le_bytes());
        out.extend_from_slice(&e.stat.mtime.to_le_bytes());
        out.extend_from_slice(&e.stat.ctime.to_le_bytes());
        out.extend_from_slice(&e.stat.ino.to_le_bytes());
        out.extend_from_slice(&e.stat.mode.to_le_bytes());
        out.extend_from_slice(&e.seen.to_le_bytes());
    }
    crate::workspace::write_private(path, &out)
}

/// The manifest at `path`, or None when it is missing or damaged.
pub(crate) fn read(path: &Path) -> Option<BTreeMap<String, Entry>> {
    let bytes = std::fs::read(path).ok()?;
    let mut r = Reader(bytes.get(..)?);
    if r.take(8)? != MAGIC {
        return None;
    }
    let count = r.u64()?;
    let mut out = BTreeMap::new();
    for _ in 0..count {
        let len = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
        let p = String::from_utf8(r.take(len)?.to_vec()).ok()?;
        let mode = r.take(1)?[0];
        let id: Id = r.take(32)?.try_into().ok()?;
        let kind = r.take(1)?[0];
        let size = r.u64()?;
        let mtime = r.i128()?;
        let ctime = r.i128()?;
        let ino = r.u64()?;
        let fmode = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
        let seen = r.i128()?;
        let stat = Stat {
            kind,
            size,
            mtime,
            ctime,
            ino,
            mode: fmode,
        };
        out.insert(
            p,
            Entry {
                mode,
                id,
                stat,
                seen,
                mtime,
            },
        );
    }
    Some(out)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn i128(&mut self) -> Option<i128> {
        Some(i128::from_le_bytes(self.take(16)?.try_into().ok()?))
    }
}
