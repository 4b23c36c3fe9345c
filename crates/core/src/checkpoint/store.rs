//! The private object store of one folder's checkpoints: content-addressed objects (file
//! bytes, trees, snapshots) in append-only packs, read and written in-process. No git runs
//! on it, nothing is borrowed from the user's repository, and every object read is checked
//! against its id, so bytes changed on the disk are never restored.
//!
//! ```text
//! <home>/checkpoints/<folder key>/        0700
//!   lock                                  shared while a snapshot writes, exclusive for gc
//!   packs/<name>.pack, <name>.idx         0600: records, then the sorted ids with offsets
//!   refs/<session>.json                   the snapshots a session may still need
//!   base                                  the snapshot the manifest describes
//!   manifest                              stat data of that snapshot's files
//! ```
//!
//! An id is SHA-256 over `"<kind> <length>\0"` and the bytes. A pack record is a header
//! (kind, whether deflated, raw and stored length, id) and the stored bytes; a pack is
//! visible once its index exists (both are renamed into place). [`Store::gc`] rewrites the
//! objects the kept snapshots reach into one pack and removes the rest.

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

pub(crate) type Id = [u8; 32];

/// What an object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Blob = 1,
    Tree = 2,
    Snap = 3,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Blob => "blob",
            Kind::Tree => "tree",
            Kind::Snap => "snap",
        }
    }

    fn from_byte(b: u8) -> Option<Kind> {
        match b {
            1 => Some(Kind::Blob),
            2 => Some(Kind::Tree),
            3 => Some(Kind::Snap),
            _ => None,
        }
    }
}

/// The id of `bytes` as an object of `kind`.
pub(crate) fn id_of(kind: Kind, bytes: &[u8]) -> Id {
    let mut h = Sha256::new();
    h.update(format!("{} {}\0", kind.name(), bytes.len()).as_bytes());
    h.update(bytes);
    h.finalize().into()
}

pub(crate) fn hex(id: &Id) -> String {
    let mut s = String::with_capacity(64);
    for b in id {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

pub(crate) fn parse_hex(s: &str) -> Option<Id> {
    if s.len() != 64 {
        return None;
    }
    let mut id = [0u8; 32];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(id)
}

const PACK_MAGIC: &[u8; 8] = b"ICKPACK1";
const IDX_MAGIC: &[u8; 8] = b"ICKIDX1\0";
/// kind, flags, raw length, stored length, id.
const RECORD_HEAD: usize = 1 + 1 + 8 + 8 + 32;
const DEFLATED: u8 = 1;

/// Folders the store makes: only the owner may list or enter them.
pub(crate) fn private_dir(dir: &Path) -> Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
        .with_context(|| format!("making {}", dir.display()))?;
    make_private(dir);
    Ok(())
}

/// Takes group and other rights off `path` (Unix): folders made before the store was private
/// stay readable otherwise. Best effort.
pub(crate) fn make_private(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            let mode = meta.permissions().mode() & 0o700;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

fn create_private(path: &Path) -> Result<File> {
    crate::platform::create_mode(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
        0o600,
    )
    .open(path)
    .with_context(|| format!("creating {}", path.display()))
}

/// Where an object is: which pack, at what offset.
#[derive(Debug, Clone, Copy)]
struct Loc {
    pack: u32,
    offset: u64,
}

/// One folder's object store.
pub(crate) struct Store {
    dir: PathBuf,
    /// Pack names (without extension), by number.
    packs: Vec<String>,
    index: HashMap<Id, Loc>,
    /// Held shared while a snapshot writes and names its objects in a ref, exclusive while gc
    /// decides what is unreachable: another process's new objects are never collected.
    lock: File,
}

impl Store {
    /// The store in `dir`, made (private) on first use.
    pub(crate) fn open(dir: &Path) -> Result<Store> {
        private_dir(&dir.join("packs"))?;
        private_dir(&dir.join("refs"))?;
        let lock = crate::platform::create_mode(
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false),
            0o600,
        )
        .open(dir.join("lock"))
        .with_context(|| format!("opening {}", dir.join("lock").display()))?;
        let mut store = Store {
            dir: dir.to_path_buf(),
            packs: Vec::new(),
            index: HashMap::new(),
            lock,
        };
        store.reload();
        Ok(store)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads the index of every pack not known yet (another process may have written some).
    pub(crate) fn reload(&mut self) {
        let Ok(entries) = std::fs::read_dir(self.dir.join("packs")) else {
            return;
        };
        let known: HashSet<String> = self.packs.iter().cloned().collect();
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".idx").map(str::to_string)
            })
            .filter(|n| !known.contains(n))
            .collect();
        names.sort();
        for name in names {
            let Ok(entries) = read_idx(&self.dir.join("packs").join(format!("{name}.idx"))) else {
                continue;
            };
            let pack = self.packs.len() as u32;
            self.packs.push(name);
            for (id, offset) in entries {
                self.index.entry(id).or_insert(Loc { pack, offset });
            }
        }
    }

    pub(crate) fn contains(&self, id: &Id) -> bool {
        self.index.contains_key(id)
    }

    /// The object `id`, checked against its id. An object another process wrote since is
    /// found after a reload; one whose bytes no longer match is an error, never returned.
    pub(crate) fn read(&mut self, id: &Id) -> Result<(Kind, Vec<u8>)> {
        if !self.index.contains_key(id) {
            self.reload();
        }
        let first = self.read_at(id);
        let (kind, bytes) = match first {
            Ok(found) => found,
            // Its pack may have been rewritten by another process's gc.
            Err(_) => {
                self.packs.clear();
                self.index.clear();
                self.reload();
                self.read_at(id)?
            }
        };
        if id_of(kind, &bytes) != *id {
            bail!(
                "the saved copy {} no longer matches its checksum (the checkpoint store was changed on the disk)",
                &hex(id)[..12]
            );
        }
        Ok((kind, bytes))
    }

    fn read_at(&self, id: &Id) -> Result<(Kind, Vec<u8>)> {
        let loc = self
            .index
            .get(id)
            .with_context(|| format!("{} is not in the checkpoint store", &hex(id)[..12]))?;
        let name = &self.packs[loc.pack as usize];
        let path = self.dir.join("packs").join(format!("{name}.pack"));
        let mut f = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        use std::io::Seek;
        f.seek(std::io::SeekFrom::Start(loc.offset))?;
        let mut head = [0u8; RECORD_HEAD];
        f.read_exact(&mut head)?;
        let kind = Kind::from_byte(head[0]).context("a pack record of no known kind")?;
        let raw_len = u64::from_le_bytes(head[2..10].try_into()?);
        let stored_len = u64::from_le_bytes(head[10..18].try_into()?);
        if head[18..50] != id[..] || raw_len > 1 << 32 || stored_len > 1 << 32 {
            bail!("a damaged pack record in {}", path.display());
        }
        let mut stored = vec![0u8; stored_len as usize];
        f.read_exact(&mut stored)?;
        let bytes = if head[1] & DEFLATED != 0 {
            let mut out = Vec::with_capacity(raw_len as usize);
            flate2::read::ZlibDecoder::new(&stored[..])
                .take(raw_len + 1)
                .read_to_end(&mut out)?;
            out
        } else {
            stored
        };
        if bytes.len() as u64 != raw_len {
            bail!("a damaged pack record in {}", path.display());
        }
        Ok((kind, bytes))
    }

    /// A new pack to add objects to; nothing is visible before [`PackWriter::finish`].
    pub(crate) fn writer(&self) -> Result<PackWriter> {
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("{nanos:x}-{}-{n}", std::process::id());
        let tmp = self.dir.join("packs").join(format!("tmp-{name}.pack"));
        let mut file = BufWriter::new(create_private(&tmp)?);
        file.write_all(PACK_MAGIC)?;
        Ok(PackWriter {
            file,
            tmp,
            name,
            offset: PACK_MAGIC.len() as u64,
            entries: Vec::new(),
            ids: HashSet::new(),
        })
    }

    /// Holds the store against gc while a snapshot writes and names its objects.
    pub(crate) fn lock_shared(&self) -> Result<()> {
        self.lock
            .lock_shared()
            .context("locking the checkpoint store")
    }

    pub(crate) fn unlock(&self) {
        let _ = self.lock.unlock();
    }

    /// Bytes the packs take on the disk.
    pub(crate) fn size(&self) -> u64 {
        std::fs::read_dir(self.dir.join("packs"))
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }

    /// Keeps only what `roots` (snapshot ids) reach through `children` (the ids an object
    /// names: the store knows no object's format): copies those objects into one new pack
    /// and removes every other pack. Takes the store's lock exclusively, so no other process
    /// is between writing objects and naming them. Returns the bytes kept.
    pub(crate) fn gc(
        &mut self,
        roots: &dyn Fn() -> Vec<Id>,
        children: &dyn Fn(Kind, &[u8]) -> Vec<Id>,
    ) -> Result<u64> {
        self.lock.lock().context("locking the checkpoint store")?;
        let result = self.gc_locked(&roots(), children);
        let _ = self.lock.unlock();
        result
    }

    fn gc_locked(
        &mut self,
        roots: &[Id],
        children: &dyn Fn(Kind, &[u8]) -> Vec<Id>,
    ) -> Result<u64> {
        self.packs.clear();
        self.index.clear();
        self.reload();
        let old: Vec<String> = self.packs.clone();
        let mut reach: Vec<Id> = Vec::new();
        let mut seen: HashSet<Id> = HashSet::new();
        let mut todo: Vec<Id> = roots
            .iter()
            .filter(|id| self.index.contains_key(*id))
            .copied()
            .collect();
        while let Some(id) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            reach.push(id);
            let (kind, bytes) = match self.read(&id) {
                Ok(found) => found,
                Err(_) => continue,
            };
            todo.extend(
                children(kind, &bytes)
                    .into_iter()
                    .filter(|c| self.index.contains_key(c)),
            );
        }
        reach.sort();
        let mut writer = self.writer()?;
        for id in &reach {
            let (head, stored) = self.raw(id)?;
            writer.add_raw(id, &head, &stored)?;
        }
        let kept_name = writer.name.clone();
        writer.finish(self)?;
        for name in old.iter().filter(|n| **n != kept_name) {
            let packs = self.dir.join("packs");
            let _ = std::fs::remove_file(packs.join(format!("{name}.idx")));
            let _ = std::fs::remove_file(packs.join(format!("{name}.pack")));
        }
        // Temp packs of writers that died (a live writer holds the lock shared).
        if let Ok(entries) = std::fs::read_dir(self.dir.join("packs")) {
            for e in entries.filter_map(Result::ok) {
                if e.file_name().to_string_lossy().starts_with("tmp-") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        self.packs.clear();
        self.index.clear();
        self.reload();
        Ok(self.size())
    }

    /// A record's header and stored bytes, as they are in its pack.
    fn raw(&self, id: &Id) -> Result<([u8; RECORD_HEAD], Vec<u8>)> {
        let loc = self.index.get(id).context("object not in the store")?;
        let name = &self.packs[loc.pack as usize];
        let mut f = File::open(self.dir.join("packs").join(format!("{name}.pack")))?;
        use std::io::Seek;
        f.seek(std::io::SeekFrom::Start(loc.offset))?;
        let mut head = [0u8; RECORD_HEAD];
        f.read_exact(&mut head)?;
        let stored_len = u64::from_le_bytes(head[10..18].try_into()?);
        if stored_len > 1 << 32 {
            bail!("a damaged pack record");
        }
        let mut stored = vec![0u8; stored_len as usize];
        f.read_exact(&mut stored)?;
        Ok((head, stored))
    }
}

/// A pack being written.
pub(crate) struct PackWriter {
    file: BufWriter<File>,
    tmp: PathBuf,
    name: String,
    offset: u64,
    entries: Vec<(Id, u64)>,
    ids: HashSet<Id>,
}

/// Bytes ready for a pack: deflated when that saves space.
pub(crate) struct Prepared {
    pub id: Id,
    kind: Kind,
    raw_len: u64,
    deflated: bool,
    stored: Vec<u8>,
}

/// Hashes and compresses `bytes` (off the writer's thread: this is the costly part).
pub(crate) fn prepare(kind: Kind, bytes: &[u8]) -> Prepared {
    prepare_with_id(kind, bytes, id_of(kind, bytes))
}

/// Smaller objects are stored as they are: resetting the compressor clears about 160 KiB of
/// tables, which costs more than storing a small file's bytes saves.
const DEFLATE_FROM: usize = 2048;

/// [`prepare`] for bytes whose id is known. The compressor is kept per thread: a new one
/// allocates and clears hundreds of KiB, which for small files costs more than the file.
pub(crate) fn prepare_with_id(kind: Kind, bytes: &[u8], id: Id) -> Prepared {
    thread_local! {
        static DEFLATE: std::cell::RefCell<flate2::Compress> =
            std::cell::RefCell::new(flate2::Compress::new(flate2::Compression::fast(), true));
    }
    let mut stored = Vec::new();
    let deflated = bytes.len() >= DEFLATE_FROM
        && DEFLATE.with_borrow_mut(|deflate| {
            deflate.reset();
            // Smaller or not at all: output room for one byte less than the input.
            let mut out = Vec::with_capacity(bytes.len() - 1);
            let done = matches!(
                deflate.compress_vec(bytes, &mut out, flate2::FlushCompress::Finish),
                Ok(flate2::Status::StreamEnd)
            );
            if done {
                stored = out;
            }
            done
        });
    if !deflated {
        stored = bytes.to_vec();
    }
    Prepared {
        id,
        kind,
        raw_len: bytes.len() as u64,
        deflated,
        stored,
    }
}

impl PackWriter {
    pub(crate) fn has(&self, id: &Id) -> bool {
        self.ids.contains(id)
    }

    /// Adds an object (once: a second copy of the same id is dropped).
    pub(crate) fn add(&mut self, p: &Prepared) -> Result<()> {
        let mut head = [0u8; RECORD_HEAD];
        head[0] = p.kind as u8;
        head[1] = if p.deflated { DEFLATED } else { 0 };
        head[2..10].copy_from_slice(&p.raw_len.to_le_bytes());
        head[10..18].copy_from_slice(&(p.stored.len() as u64).to_le_bytes());
        head[18..50].copy_from_slice(&p.id);
        self.add_raw(&p.id, &head, &p.stored)
    }

    fn add_raw(&mut self, id: &Id, head: &[u8; RECORD_HEAD], stored: &[u8]) -> Result<()> {
        if !self.ids.insert(*id) {
            return Ok(());
        }
        self.file.write_all(head)?;
        self.file.write_all(stored)?;
        self.entries.push((*id, self.offset));
        self.offset += (RECORD_HEAD + stored.len()) as u64;
        Ok(())
    }

    /// Makes the pack durable and visible, and known to `store`. An empty pack is dropped.
    pub(crate) fn finish(mut self, store: &mut Store) -> Result<()> {
        if self.entries.is_empty() {
            drop(self.file);
            let _ = std::fs::remove_file(&self.tmp);
            return Ok(());
        }
        self.file.flush()?;
        let file = self.file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        let packs = store.dir.join("packs");
        let pack = packs.join(format!("{}.pack", self.name));
        std::fs::rename(&self.tmp, &pack)
            .with_context(|| format!("renaming {}", self.tmp.display()))?;
        self.entries.sort_by_key(|a| a.0);
        let tmp_idx = packs.join(format!("tmp-{}.idx", self.name));
        let mut idx = BufWriter::new(create_private(&tmp_idx)?);
        idx.write_all(IDX_MAGIC)?;
        idx.write_all(&(self.entries.len() as u64).to_le_bytes())?;
        for (id, offset) in &self.entries {
            idx.write_all(id)?;
            idx.write_all(&offset.to_le_bytes())?;
        }
        let idx = idx.into_inner().map_err(|e| e.into_error())?;
        idx.sync_all()?;
        drop(idx);
        std::fs::rename(&tmp_idx, packs.join(format!("{}.idx", self.name)))?;
        let number = store.packs.len() as u32;
        store.packs.push(self.name);
        for (id, offset) in self.entries {
            store.index.entry(id).or_insert(Loc {
                pack: number,
                offset,
            });
        }
        Ok(())
    }
}

fn read_idx(path: &Path) -> Result<Vec<(Id, u64)>> {
    let bytes = std::fs::read(path)?;
    if bytes.len() < 16 || &bytes[..8] != IDX_MAGIC {
        bail!("not a checkpoint pack index: {}", path.display());
    }
    let count = u64::from_le_bytes(bytes[8..16].try_into()?) as usize;
    let body = &bytes[16..];
    if body.len() != count.saturating_mul(40) {
        bail!("a damaged checkpoint pack index: {}", path.display());
    }
    Ok(body
        .chunks_exact(40)
        .map(|c| {
            let mut id = [0u8; 32];
            id.copy_from_slice(&c[..32]);
            let offset = u64::from_le_bytes(c[32..40].try_into().unwrap_or([0; 8]));
            (id, offset)
        })
        .collect())
}
