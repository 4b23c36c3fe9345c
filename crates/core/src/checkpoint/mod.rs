//! Checkpoints of a workspace, for undo. A checkpoint (a *snapshot*) holds every regular file
//! and link under the session's folder that git does not ignore, by content, in a private
//! store under `<home>/checkpoints/<folder key>/` (`store.rs`): never in the user's
//! repository, and no git runs for it. What it cannot hold is *unknown* to it, by name and
//! with why (`walk.rs`): what git ignores, files over [`MAX_FILE_BYTES`], FIFOs, sockets and
//! devices, git's own config and hooks, and other workspace roots. Undo never deletes or
//! overwrites an unknown path, and names every one a turn changed.
//!
//! A snapshot stats every entry and reads only files whose stat data changed since the last
//! one (`manifest`): size, modification and change time, inode and mode. Files are opened
//! without following links and without blocking, and read only when `fstat` says they are
//! regular, so a FIFO or a device never stops a snapshot; a snapshot has a deadline.
//!
//! Undoing turns compares three states: before the first undone turn (`before`), after the
//! last (`after`), and the files now, hashed. A file the turns changed and nobody changed
//! since (its bytes now are those after the turns) goes back: written, given its mode, made a
//! link again, or removed when the turns created it. A file whose bytes differ is the user's
//! and is left alone; so is a file an editor holds with unsaved changes.

mod manifest;
mod store;
mod tree;
mod walk;

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use manifest::Entry;
use store::{Id, Kind, Store, hex, parse_hex};
pub(crate) use walk::Why;
use walk::{Stat, Unknown};

/// Files larger than this are left out of checkpoints (and named).
pub(crate) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// How long a snapshot may take. Past it the snapshot fails (the turn runs, and cannot be
/// undone): a folder on a hung network mount must not hold the agent.
pub(crate) const SNAPSHOT_DEADLINE: Duration = Duration::from_secs(60);

/// How close to its hashing a modification makes the cached id untrustworthy (git's
/// "racily clean").
const RACY_NS: i128 = 2_000_000_000;

/// Refs of this many sessions per folder are kept (the newest); older sessions' turns can no
/// longer be undone.
const SESSIONS_KEPT: usize = 20;

/// The store is collected when its packs exceed twice what the last collection kept, and
/// this much.
const GC_SLACK: u64 = 8 * 1024 * 1024;

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

#[cfg(not(unix))]
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

/// A relative path with `/` between folders.
fn slash(rel: &Path) -> String {
    rel.to_string_lossy().replace('\\', "/")
}

/// What a snapshot object holds: the files' tree and what was unknown, with why.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Snap {
    tree: String,
    #[serde(default)]
    unknown: BTreeMap<String, Why>,
}

impl Snap {
    pub(crate) fn parse(bytes: &[u8]) -> Result<Snap> {
        serde_json::from_slice(bytes).context("a damaged snapshot")
    }
}

/// A snapshot just taken: its id, and the stat data of what it could not hold (to tell what a
/// turn changed there).
#[derive(Debug, Clone)]
pub(crate) struct Taken {
    pub(crate) id: String,
    unknown: Arc<BTreeMap<String, Unknown>>,
}

/// A path a turn changed that undo cannot put back, and why, for the undo report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Uncovered {
    pub path: String,
    pub reason: String,
}

/// What changed between two snapshots among the paths neither could hold.
pub(crate) fn uncovered(before: &Taken, after: &Taken) -> Vec<Uncovered> {
    let mut out = Vec::new();
    let paths: std::collections::BTreeSet<&String> =
        before.unknown.keys().chain(after.unknown.keys()).collect();
    for path in paths {
        let (what, why) = match (before.unknown.get(path), after.unknown.get(path)) {
            (Some(b), Some(a)) if b.stat != a.stat => ("changed", &a.why),
            (Some(b), None) => ("deleted or replaced", &b.why),
            (None, Some(a)) => ("created", &a.why),
            _ => continue,
        };
        out.push(Uncovered {
            path: path.clone(),
            reason: format!(
                "{what} by the turn; {}: undo leaves it as it is",
                why.describe()
            ),
        });
    }
    out
}

/// What an undo did, file by file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Restored {
    /// Put back as they were before (relative paths).
    pub(crate) restored: Vec<String>,
    /// Removed: the undone turns created them.
    pub(crate) removed: Vec<String>,
    /// Left alone, with why.
    pub(crate) skipped: Vec<(String, String)>,
}

type Shared = Arc<std::sync::Mutex<Option<Checkpoints>>>;

/// One store per folder in a process: sessions of the same folder take their snapshots in
/// turn, on one manifest.
fn shared(home: &Path, root: &Path) -> Shared {
    static ALL: std::sync::OnceLock<std::sync::Mutex<HashMap<(PathBuf, PathBuf), Shared>>> =
        std::sync::OnceLock::new();
    let mut all = ALL
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    all.entry((home.to_path_buf(), root.to_path_buf()))
        .or_default()
        .clone()
}

/// A session's checkpoints, opened on first use (so a session that never runs a turn
/// touches no store). Snapshots run on a blocking thread.
/// When a snapshot gives up: past its deadline, or when asked to stop (a turn that ran no
/// tool does not need its snapshot before).
#[derive(Clone)]
pub(crate) struct Limit {
    deadline: Instant,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Limit {
    pub(crate) fn new(deadline: Instant, stop: Arc<std::sync::atomic::AtomicBool>) -> Limit {
        Limit { deadline, stop }
    }

    fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Stopped, or past the deadline.
    pub(crate) fn reached(&self) -> bool {
        self.stopped() || Instant::now() > self.deadline
    }
}

/// A snapshot stopped on request: not a failure to report.
#[derive(Debug)]
pub(crate) struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the snapshot was stopped")
    }
}

impl std::error::Error for Stopped {}

pub(crate) struct Lazy {
    home: PathBuf,
    root: PathBuf,
    /// The session's other workspace roots: walked for what changed, never restored.
    others: Vec<PathBuf>,
    /// Names this session's refs in the store.
    session: String,
    store: Shared,
    /// A failure is said once per session.
    pub(crate) warned: std::sync::atomic::AtomicBool,
}

impl Lazy {
    pub(crate) fn new(home: &Path, root: &Path, others: &[PathBuf], session: &str) -> Lazy {
        Lazy {
            home: home.to_path_buf(),
            root: root.to_path_buf(),
            others: others.iter().filter(|o| *o != root).cloned().collect(),
            session: session.to_string(),
            store: shared(home, root),
            warned: Default::default(),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Checkpoints) -> Result<T>) -> Result<T> {
        let mut guard = self.store.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(Checkpoints::open(&self.home, &self.root)?);
        }
        f(guard.as_mut().context("checkpoint store")?)
    }

    fn limit(stop: Arc<std::sync::atomic::AtomicBool>) -> Limit {
        Limit::new(Instant::now() + SNAPSHOT_DEADLINE, stop)
    }

    /// The folder now.
    pub(crate) fn snapshot(&self) -> Result<Taken> {
        self.snapshot_until(Default::default())
    }

    /// The folder now, unless `stop` is set first (the files read so far are kept for the
    /// next snapshot). Each snapshot has its own flag: a stop is never lost to the next one.
    pub(crate) fn snapshot_until(&self, stop: Arc<std::sync::atomic::AtomicBool>) -> Result<Taken> {
        let limit = Lazy::limit(stop);
        self.with(|c| c.snapshot(&self.session, &self.others, &limit))
    }

    /// See [`Checkpoints::snapshot_paths`].
    pub(crate) fn snapshot_paths(&self, base: &Taken, paths: &[String]) -> Result<Taken> {
        let limit = Lazy::limit(Default::default());
        self.with(|c| c.snapshot_paths(&self.session, base, paths, &limit))
    }

    /// See [`Checkpoints::changed`].
    pub(crate) fn changed(&self, before: &str, after: &str) -> Result<Vec<String>> {
        self.with(|c| c.changed(before, after))
    }

    /// See [`Checkpoints::restore`].
    pub(crate) fn restore(
        &self,
        before: &str,
        after: &str,
        unsaved: &HashSet<String>,
    ) -> Result<Restored> {
        self.with(|c| c.restore(before, after, unsaved))
    }

    /// The snapshots this session may still undo to: everything else of it can go.
    pub(crate) fn keep(&self, ids: Vec<String>) -> Result<()> {
        self.with(|c| c.keep(&self.session, ids))
    }
}

/// What a session's ref file names: the snapshots of its undoable turns, and those taken
/// since (a running turn's).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
struct Refs {
    kept: Vec<String>,
    pending: Vec<String>,
}

/// One folder's checkpoint store.
pub(crate) struct Checkpoints {
    /// The folder checkpoints cover.
    root: PathBuf,
    store: Store,
    /// Path (relative, `/`-separated) → entry, as of the last snapshot.
    manifest: Arc<BTreeMap<String, Entry>>,
    /// The snapshot the manifest describes.
    base: Option<Id>,
    refs: HashMap<String, Refs>,
}

/// The folder's key under `<home>/checkpoints`: a digest of its path.
fn folder_key(root: &Path) -> String {
    hex(&store::id_of(Kind::Blob, root.to_string_lossy().as_bytes()))[..16].to_string()
}

impl Checkpoints {
    /// The store for `root` under `home`, made (private) on first use.
    pub(crate) fn open(home: &Path, root: &Path) -> Result<Checkpoints> {
        // The home holds keys, sessions and every checkpoint: only its owner may enter it.
        store::make_private(home);
        let all = home.join("checkpoints");
        store::private_dir(&all)?;
        remove_legacy_stores(&all);
        let dir = all.join(folder_key(root));
        let store = Store::open(&dir)?;
        let mut cp = Checkpoints {
            root: root.to_path_buf(),
            store,
            manifest: Arc::new(BTreeMap::new()),
            base: None,
            refs: HashMap::new(),
        };
        // The manifest is only a cache: an entry counts when the store has its bytes (a
        // snapshot stopped halfway leaves the files it read).
        if let Some(files) = manifest::read(&dir.join("manifest")) {
            let files: BTreeMap<String, Entry> = files
                .into_iter()
                .filter(|(_, e)| cp.store.contains(&e.id))
                .collect();
            cp.manifest = Arc::new(files);
        }
        Ok(cp)
    }

    /// Records the folder as it is now.
    pub(crate) fn snapshot(
        &mut self,
        session: &str,
        others: &[PathBuf],
        limit: &Limit,
    ) -> Result<Taken> {
        let walked = walk::walk(&self.root, others, limit).map_err(|_| {
            if limit.stopped() {
                anyhow::Error::new(Stopped)
            } else {
                anyhow::anyhow!("{}", too_slow(&self.root))
            }
        })?;
        let seen = now_ns();
        let mut next = BTreeMap::new();
        let mut unknown = walked.unknown;
        let mut to_read = Vec::new();
        for (rel, path, meta) in walked.files {
            let stat = Stat::of(&meta);
            match self.manifest.get(&rel) {
                Some(e) if e.same_as(&stat) && e.mtime + RACY_NS < e.seen => {
                    next.insert(rel, e.clone());
                }
                _ => to_read.push((rel, path, stat)),
            }
        }
        self.store.lock_shared()?;
        let result = self.write_snapshot(session, next, &mut unknown, to_read, seen, limit);
        self.store.unlock();
        let id = result?;
        Ok(Taken {
            id,
            unknown: Arc::new(unknown),
        })
    }

    /// The snapshot `base` (the last one) with only `paths` (relative) looked at again: the
    /// folder after a turn whose only writes were the workspace's own, without walking it.
    pub(crate) fn snapshot_paths(
        &mut self,
        session: &str,
        base: &Taken,
        paths: &[String],
        limit: &Limit,
    ) -> Result<Taken> {
        if self.base.map(|b| hex(&b)) != Some(base.id.clone()) {
            // Another snapshot of the folder came between: walk.
            return self.snapshot(session, &[], limit);
        }
        let seen = now_ns();
        let mut next: BTreeMap<String, Entry> = self.manifest.as_ref().clone();
        let mut unknown = base.unknown.as_ref().clone();
        let mut to_read = Vec::new();
        for (rel, class) in walk::classify(&self.root, paths) {
            next.remove(&rel);
            unknown.remove(&rel);
            if let Some(u) = class {
                unknown.insert(rel, u);
                continue;
            }
            let path = self.root.join(&rel);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_file() || meta.file_type().is_symlink() => {
                    to_read.push((rel, path, Stat::of(&meta)));
                }
                // Gone, or a folder now.
                _ => {}
            }
        }
        self.store.lock_shared()?;
        let result = self.write_snapshot(session, next, &mut unknown, to_read, seen, limit);
        self.store.unlock();
        let id = result?;
        Ok(Taken {
            id,
            unknown: Arc::new(unknown),
        })
    }

    /// Reads `to_read` into the store, writes the tree and the snapshot, makes `next` the
    /// manifest and names the snapshot in `session`'s refs. Runs under the store's shared
    /// lock.
    fn write_snapshot(
        &mut self,
        session: &str,
        mut next: BTreeMap<String, Entry>,
        unknown: &mut BTreeMap<String, Unknown>,
        to_read: Vec<(String, PathBuf, Stat)>,
        seen: i128,
        limit: &Limit,
    ) -> Result<String> {
        let mut writer = self.store.writer()?;
        let read = read_files(&self.store, &mut writer, to_read, limit)?;
        // Nothing read and nothing gone: the manifest on disk is this one already.
        let same_manifest = read.is_empty() && next.len() == self.manifest.len();
        for (rel, stat, outcome) in read {
            match outcome {
                Ok((mode, id)) => {
                    next.insert(rel, Entry::new(mode, id, &stat, seen));
                }
                Err(why) => {
                    unknown.insert(rel, Unknown { why, stat });
                }
            }
        }
        if limit.reached() {
            // Keep what was read: the next snapshot reads only the rest.
            writer.finish(&mut self.store)?;
            let _ = manifest::write(&self.store.dir().join("manifest"), &next);
            self.manifest = Arc::new(next);
            self.base = None;
            if limit.stopped() {
                return Err(anyhow::Error::new(Stopped));
            }
            bail!(
                "reading the folder's files took longer than {} s",
                SNAPSHOT_DEADLINE.as_secs()
            );
        }
        let files: BTreeMap<String, (String, Id)> = next
            .iter()
            .map(|(p, e)| (p.clone(), (e.mode().to_string(), e.id)))
            .collect();
        let store = &self.store;
        let tree = tree::build(&files, &mut |bytes| {
            let id = store::id_of(Kind::Tree, bytes);
            if !store.contains(&id) && !writer.has(&id) {
                writer.add(&store::prepare(Kind::Tree, bytes))?;
            }
            Ok(id)
        })?;
        let snap = Snap {
            tree: hex(&tree),
            unknown: unknown
                .iter()
                .filter(|(p, _)| !p.starts_with('/') && !Path::new(p).is_absolute())
                .map(|(p, u)| (p.clone(), u.why.clone()))
                .collect(),
        };
        let bytes = serde_json::to_vec(&snap)?;
        let prepared = store::prepare(Kind::Snap, &bytes);
        let id = prepared.id;
        if !self.store.contains(&id) {
            writer.add(&prepared)?;
        }
        writer.finish(&mut self.store)?;
        let gc = self.store.dir().join("gc");
        if !gc.exists() {
            // A new store is all live at its first whole snapshot: the size to grow from.
            let _ = crate::workspace::write_private(&gc, self.store.size().to_string().as_bytes());
        }
        let refs = self.refs.entry(session.to_string()).or_default();
        let id_hex = hex(&id);
        if !refs.pending.contains(&id_hex) {
            refs.pending.push(id_hex.clone());
        }
        let refs = refs.clone();
        self.write_refs(session, &refs)?;
        let dir = self.store.dir().to_path_buf();
        if same_manifest || manifest::write(&dir.join("manifest"), &next).is_ok() {
            let _ = crate::workspace::write_private(&dir.join("base"), id_hex.as_bytes());
        }
        self.manifest = Arc::new(next);
        self.base = Some(id);
        Ok(id_hex)
    }

    fn write_refs(&self, session: &str, refs: &Refs) -> Result<()> {
        let name: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = self.store.dir().join("refs").join(format!("{name}.json"));
        crate::workspace::write_private(&path, &serde_json::to_vec(refs)?)
            .with_context(|| format!("writing {}", path.display()))
    }

    /// The snapshots of `session`'s undoable turns: what it took before that no turn keeps can
    /// go. Collects the store when it has grown past twice what the last collection kept.
    pub(crate) fn keep(&mut self, session: &str, ids: Vec<String>) -> Result<()> {
        let refs = Refs {
            kept: ids,
            pending: Vec::new(),
        };
        self.write_refs(session, &refs)?;
        self.refs.insert(session.to_string(), refs);
        let dir = self.store.dir().to_path_buf();
        let live: Option<u64> = std::fs::read_to_string(dir.join("gc"))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        // No baseline before a first whole snapshot (`write_snapshot` sets it).
        let Some(live) = live else {
            return Ok(());
        };
        if self.store.size() <= (2 * live).max(live + GC_SLACK) {
            return Ok(());
        }
        self.gc()
    }

    /// Keeps what the refs of the newest sessions and the manifest's snapshot reach; drops
    /// older sessions' refs.
    pub(crate) fn gc(&mut self) -> Result<()> {
        let dir = self.store.dir().to_path_buf();
        let base = self.base;
        // The manifests' files too (this one's and the file's, maybe another process's): a
        // snapshot stopped halfway left them for the next.
        let cached: Vec<Id> = self.manifest.values().map(|e| e.id).collect();
        let roots = move || -> Vec<Id> {
            let mut files: Vec<(std::time::SystemTime, PathBuf)> =
                std::fs::read_dir(dir.join("refs"))
                    .map(|d| {
                        d.filter_map(Result::ok)
                            .filter_map(|e| {
                                let t = e.metadata().ok()?.modified().ok()?;
                                Some((t, e.path()))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
            files.sort_by_key(|b| std::cmp::Reverse(b.0));
            let mut roots: Vec<Id> = base.into_iter().chain(cached.iter().copied()).collect();
            if let Some(files) = manifest::read(&dir.join("manifest")) {
                roots.extend(files.values().map(|e| e.id));
            }
            if let Some(b) = std::fs::read_to_string(dir.join("base"))
                .ok()
                .and_then(|s| parse_hex(s.trim()))
            {
                roots.push(b);
            }
            for (i, (_, path)) in files.iter().enumerate() {
                if i >= SESSIONS_KEPT {
                    let _ = std::fs::remove_file(path);
                    continue;
                }
                let refs: Refs = std::fs::read(path)
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .unwrap_or_default();
                roots.extend(
                    refs.kept
                        .iter()
                        .chain(&refs.pending)
                        .filter_map(|s| parse_hex(s)),
                );
            }
            roots
        };
        let kept = self.store.gc(&roots, &children)?;
        let _ = crate::workspace::write_private(
            &self.store.dir().join("gc"),
            kept.to_string().as_bytes(),
        );
        Ok(())
    }

    fn load_snap(&mut self, id: &str) -> Result<Snap> {
        let Some(id) = parse_hex(id) else {
            bail!(
                "checkpoint {id} was made by an older version of interpreter, whose checkpoints this one does not read"
            );
        };
        let (kind, bytes) = self
            .store
            .read(&id)
            .context("the checkpoint is no longer in the store (it was collected)")?;
        if kind != Kind::Snap {
            bail!("{} is not a checkpoint", hex(&id));
        }
        Snap::parse(&bytes)
    }

    fn files_of(&mut self, snap: &Snap) -> Result<BTreeMap<String, (String, Id)>> {
        let root = parse_hex(&snap.tree).context("a damaged snapshot")?;
        let store = &mut self.store;
        tree::files(&root, &mut |id| {
            let (kind, bytes) = store.read(id)?;
            if kind != Kind::Tree {
                bail!("a damaged checkpoint tree");
            }
            Ok(bytes)
        })
    }

    /// The files the turns between `before` and `after` changed, sorted.
    pub(crate) fn changed(&mut self, before: &str, after: &str) -> Result<Vec<String>> {
        let (b, a) = (self.load_snap(before)?, self.load_snap(after)?);
        let old = self.files_of(&b)?;
        let new = self.files_of(&a)?;
        let mut paths: Vec<String> = old
            .keys()
            .chain(new.keys())
            .filter(|p| old.get(*p) != new.get(*p))
            .cloned()
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Puts back what the turns between `before` and `after` changed, unless its bytes changed
    /// since `after`, an editor holds it with unsaved changes (`unsaved`), or it was unknown
    /// to a checkpoint.
    pub(crate) fn restore(
        &mut self,
        before: &str,
        after: &str,
        unsaved: &HashSet<String>,
    ) -> Result<Restored> {
        let (b, a) = (self.load_snap(before)?, self.load_snap(after)?);
        let old = self.files_of(&b)?;
        let new = self.files_of(&a)?;
        let mut paths: Vec<&String> = old.keys().chain(new.keys()).collect();
        paths.sort();
        paths.dedup();
        let mut report = Restored::default();
        for path in paths {
            let was = old.get(path);
            let turned = new.get(path);
            if was == turned {
                continue;
            }
            let mut skip = |why: String| report.skipped.push((path.clone(), why));
            // Absent from a checkpoint because it was unknown there is not "absent".
            if was.is_none()
                && let Some(why) = b.unknown.get(path)
            {
                skip(format!(
                    "before the turn it was {}; left as it is",
                    why.describe()
                ));
                continue;
            }
            if turned.is_none()
                && let Some(why) = a.unknown.get(path)
            {
                skip(format!(
                    "after the turn it was {}; left as it is",
                    why.describe()
                ));
                continue;
            }
            let target = self.root.join(path);
            let now = match current(&target) {
                Ok(now) => now,
                Err(why) => {
                    skip(format!("now {}; left as it is", why.describe()));
                    continue;
                }
            };
            if now.as_ref() != turned {
                skip("changed after the turn; kept".into());
                continue;
            }
            if unsaved.contains(path) {
                skip("unsaved changes in the editor; kept".into());
                continue;
            }
            if !self.inside(&target) {
                skip("its folder is a link out of the workspace now; left alone".into());
                continue;
            }
            match was {
                None => match std::fs::remove_file(&target) {
                    Ok(()) => report.removed.push(path.clone()),
                    Err(e) => report
                        .skipped
                        .push((path.clone(), format!("not removed: {e}"))),
                },
                Some((mode, id)) => match self.put_back(&target, mode, id) {
                    Ok(()) => report.restored.push(path.clone()),
                    Err(e) => report.skipped.push((path.clone(), format!("{e:#}"))),
                },
            }
        }
        Ok(report)
    }

    /// Whether writing `target` stays under the root: its nearest existing folder, links
    /// resolved, is inside it (a folder replaced by a link since the turn would lead out).
    fn inside(&self, target: &Path) -> bool {
        let Ok(root) = std::fs::canonicalize(&self.root) else {
            return false;
        };
        let mut dir = target.parent();
        while let Some(d) = dir {
            if let Ok(real) = std::fs::canonicalize(d) {
                return real.starts_with(&root);
            }
            dir = d.parent();
        }
        false
    }

    fn put_back(&mut self, target: &Path, mode: &str, id: &Id) -> Result<()> {
        let (kind, bytes) = self.store.read(id)?;
        if kind != Kind::Blob {
            bail!("a damaged checkpoint: not a file's bytes");
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if let Ok(meta) = std::fs::symlink_metadata(target)
            && (meta.file_type().is_symlink() || mode == tree::LINK)
        {
            std::fs::remove_file(target)?;
        }
        if mode == tree::LINK {
            let link = String::from_utf8_lossy(&bytes).into_owned();
            #[cfg(unix)]
            std::os::unix::fs::symlink(&link, target)?;
            #[cfg(not(unix))]
            std::fs::write(target, link.as_bytes())?;
            return Ok(());
        }
        use std::io::Write;
        let mut file = std::fs::File::create(target)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mut perms = file.metadata()?.permissions();
            let base = perms.mode() & !0o111;
            let exec = if mode == tree::EXECUTABLE {
                // The execute bits follow the read bits, as git checks files out.
                (base & 0o444) >> 2
            } else {
                0
            };
            perms.set_mode(base | exec);
            std::fs::set_permissions(target, perms)?;
        }
        Ok(())
    }
}

fn too_slow(root: &Path) -> String {
    format!(
        "walking {} took longer than {} s",
        root.display(),
        SNAPSHOT_DEADLINE.as_secs()
    )
}

/// Stores of the format before this one (a git repository, `objects.git`): unbounded and
/// readable by others, and unreadable here. Removed.
fn remove_legacy_stores(all: &Path) {
    let Ok(entries) = std::fs::read_dir(all) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        if e.path().join("objects.git").is_dir() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Git's mode for a file: a link, an executable or a plain file.
fn file_mode(stat: &Stat) -> &'static str {
    if stat.kind == walk::KIND_LINK {
        tree::LINK
    } else if cfg!(unix) && stat.mode & 0o111 != 0 {
        tree::EXECUTABLE
    } else {
        tree::FILE
    }
}

/// A file's bytes, read without following a link and without blocking, only when `fstat`
/// says it is a regular file of at most [`MAX_FILE_BYTES`]; a link's target.
fn read_entry(path: &Path, stat: &Stat) -> Result<Vec<u8>, Why> {
    if stat.kind == walk::KIND_LINK {
        return std::fs::read_link(path)
            .map(|t| t.to_string_lossy().into_owned().into_bytes())
            .map_err(|e| Why::Unreadable {
                error: e.to_string(),
            });
    }
    let (file, meta) =
        crate::platform::open_nonblocking(path, false).map_err(|e| Why::Unreadable {
            error: e.to_string(),
        })?;
    if !meta.is_file() {
        return Err(Why::Special {
            kind: if meta.is_dir() {
                "folder".into()
            } else {
                "special file".into()
            },
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Why::TooLarge { bytes: meta.len() });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    use std::io::Read;
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Why::Unreadable {
            error: e.to_string(),
        })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Why::TooLarge {
            bytes: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// What is at `path` now, as a checkpoint would hold it: None when nothing is there, an
/// error when it is something a checkpoint cannot hold.
fn current(path: &Path) -> Result<Option<(String, Id)>, Why> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Why::Unreadable {
                error: e.to_string(),
            });
        }
    };
    if meta.is_dir() {
        return Err(Why::Special {
            kind: "folder".into(),
        });
    }
    let stat = Stat::of(&meta);
    if stat.kind != walk::KIND_LINK && stat.kind != walk::KIND_FILE {
        return Err(Why::Special {
            kind: "special file".into(),
        });
    }
    let bytes = read_entry(path, &stat)?;
    Ok(Some((
        file_mode(&stat).to_string(),
        store::id_of(Kind::Blob, &bytes),
    )))
}

type ReadOutcome = (String, Stat, Result<(&'static str, Id), Why>);

/// Reads, hashes and compresses `files` on a few threads and adds the new ones to `writer`.
fn read_files(
    store: &Store,
    writer: &mut store::PackWriter,
    files: Vec<(String, PathBuf, Stat)>,
    limit: &Limit,
) -> Result<Vec<ReadOutcome>> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4)
        .min(files.len());
    // The bytes of a file the store lacks, ready to add; None when the store has them.
    type Sent = (String, Stat, Result<(Id, Option<store::Prepared>), Why>);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Sent>(256);
    let mut out = Vec::with_capacity(files.len());
    let files = &files;
    std::thread::scope(|scope| -> Result<()> {
        for t in 0..threads {
            let tx = tx.clone();
            scope.spawn(move || {
                for (i, (rel, path, stat)) in files.iter().skip(t).step_by(threads).enumerate() {
                    // What was read so far stays useful: the caller keeps it.
                    if i % 64 == 0 && limit.reached() {
                        return;
                    }
                    let outcome = read_entry(path, stat).map(|bytes| {
                        let id = store::id_of(Kind::Blob, &bytes);
                        // Bytes the store has are not compressed again.
                        let new = (!store.contains(&id))
                            .then(|| store::prepare_with_id(Kind::Blob, &bytes, id));
                        (id, new)
                    });
                    if tx.send((rel.clone(), *stat, outcome)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        for (rel, stat, outcome) in rx {
            match outcome {
                Ok((id, new)) => {
                    if let Some(p) = new
                        && !writer.has(&id)
                    {
                        writer.add(&p)?;
                    }
                    out.push((rel, stat, Ok((file_mode(&stat), id))));
                }
                Err(why) => out.push((rel, stat, Err(why))),
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// The ids an object names: a tree's entries, a snapshot's tree.
fn children(kind: Kind, bytes: &[u8]) -> Vec<Id> {
    match kind {
        Kind::Blob => Vec::new(),
        Kind::Tree => tree::parse(bytes)
            .map(|entries| entries.into_iter().map(|e| e.id).collect())
            .unwrap_or_default(),
        Kind::Snap => Snap::parse(bytes)
            .ok()
            .and_then(|s| parse_hex(&s.tree))
            .into_iter()
            .collect(),
    }
}

#[cfg(test)]
mod tests;
