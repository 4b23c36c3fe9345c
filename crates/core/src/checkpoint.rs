//! Checkpoints of a workspace, for undo. A checkpoint is a git tree of every file under the
//! session's folder (in a repository, those git does not ignore), written with plumbing into a
//! private object store under `<home>/checkpoints/<folder hash>/`, never into the user's
//! repository: its index, HEAD, stash, branches and refs are never touched. In a repository
//! the store borrows the repository's objects (git alternates), so files git already has cost
//! no copy.
//!
//! A snapshot stats every file and hashes only those whose size, modification time or mode
//! changed since the last one (`manifest`), so a checkpoint in a large tree costs a walk.
//! Files bytes are stored as they are: no filters, no line-ending conversion, so a restore is
//! byte for byte. Files over [`MAX_FILE_BYTES`] are left out, and named.
//!
//! Undoing turns compares three trees: before the first undone turn (`before`), after the
//! last (`after`), and now. A file the turns changed (`before` ≠ `after`) and nobody changed
//! since (now = `after`) goes back to `before`: written, given its mode, made a link again, or
//! removed when the turns created it. A file changed since is the user's and is left alone.

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// More files to hash than this go into one pack (`git fast-import`), not a loose object each.
const PACK_OVER: usize = 256;

/// Files larger than this are left out of checkpoints.
pub(crate) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A file as a checkpoint holds it: git's mode (`100644`, `100755`, `120000`) and blob id.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Entry {
    mode: String,
    blob: String,
    /// What the file looked like when it was hashed: size, modification time (ns) and
    /// whether it was executable, to know when to hash it again.
    size: u64,
    mtime: i128,
    /// When it was hashed. A file modified less than [`RACY_NS`] before that may have changed
    /// again within the clock's resolution, so it is hashed again (git's "racily clean").
    seen: i128,
}

/// How close to its hashing a modification makes the cached id untrustworthy.
const RACY_NS: i128 = 2_000_000_000;

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// One folder's checkpoint store.
pub(crate) struct Checkpoints {
    /// The folder checkpoints cover.
    root: PathBuf,
    /// The private bare repository.
    git_dir: PathBuf,
    /// Path (relative, `/`-separated) → entry, as of the last snapshot.
    manifest: BTreeMap<String, Entry>,
    /// The last snapshot's tree, and the index file (in `git_dir`) that holds exactly it, so
    /// the next tree is that index with only what changed (git reuses the unchanged trees).
    tree: Option<String>,
    index: Option<String>,
    /// Left out of the last snapshot: too large.
    pub(crate) skipped: Vec<String>,
    /// The root is in a git repository, whose objects the store borrows.
    in_repository: bool,
}

/// What `manifest.json` holds: the last snapshot of the folder.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Stored {
    tree: Option<String>,
    index: Option<String>,
    files: BTreeMap<String, Entry>,
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

type Shared = std::sync::Arc<std::sync::Mutex<Option<Checkpoints>>>;

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
/// starts no git). Snapshots run on a blocking thread.
pub(crate) struct Lazy {
    home: PathBuf,
    root: PathBuf,
    store: Shared,
    /// A failure is said once per session.
    pub(crate) warned: std::sync::atomic::AtomicBool,
}

impl Lazy {
    pub(crate) fn new(home: &Path, root: &Path) -> Lazy {
        Lazy {
            home: home.to_path_buf(),
            root: root.to_path_buf(),
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

    /// The folder now, as a tree id.
    pub(crate) fn snapshot(&self) -> Result<String> {
        self.with(Checkpoints::snapshot)
    }

    /// See [`Checkpoints::snapshot_paths`].
    pub(crate) fn snapshot_paths(&self, paths: &[String]) -> Result<String> {
        self.with(|c| c.snapshot_paths(paths))
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
}

fn git(git_dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.env("GIT_DIR", git_dir)
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env(
            "GIT_CONFIG_GLOBAL",
            if cfg!(windows) { "NUL" } else { "/dev/null" },
        )
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Runs `cmd` with `input` on stdin; its stdout, or an error with its stderr.
fn run(mut cmd: Command, input: &[u8]) -> Result<Vec<u8>> {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().context("running git (is it installed?)")?;
    let mut stdin = child.stdin.take().context("git stdin")?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().context("waiting for git")?;
    let _ = writer.join();
    if !out.status.success() {
        bail!(
            "git failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

/// Of `paths` (relative to `root`), those the repository around `root` ignores; none outside
/// a repository or when git cannot say. Reads the repository, never writes it.
fn ignored_by_git(root: &Path, paths: &[String]) -> HashSet<String> {
    if paths.is_empty() {
        return HashSet::new();
    }
    let mut cmd = Command::new("git");
    cmd.args(["check-ignore", "-z", "--stdin"])
        .current_dir(root)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let Ok(mut child) = cmd.spawn() else {
        return HashSet::new();
    };
    let input: Vec<u8> = paths
        .iter()
        .flat_map(|p| format!("{p}\0").into_bytes())
        .collect();
    let writer = child
        .stdin
        .take()
        .map(|mut stdin| std::thread::spawn(move || stdin.write_all(&input)));
    let out = child.wait_with_output();
    if let Some(w) = writer {
        let _ = w.join();
    }
    // Exit 1: nothing is ignored; anything else but 0 is no answer.
    match out {
        Ok(out) if out.status.success() => out
            .stdout
            .split(|&b| b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect(),
        _ => HashSet::new(),
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// The user's repository's object folder, when `root` is inside a repository.
fn repository_objects(root: &Path) -> Option<PathBuf> {
    let out = Command::new("git")
        .args(["rev-parse", "--git-common-dir"])
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = PathBuf::from(text(out.stdout));
    let dir = if dir.is_absolute() {
        dir
    } else {
        root.join(dir)
    };
    Some(dir.join("objects")).filter(|d| d.is_dir())
}

/// Git's mode for a file: a link, an executable or a plain file.
fn file_mode(meta: &std::fs::Metadata) -> &'static str {
    if meta.file_type().is_symlink() {
        "120000"
    } else if executable(meta) {
        "100755"
    } else {
        "100644"
    }
}

impl Entry {
    fn of(mode: &str, blob: &str, meta: &std::fs::Metadata, seen: i128) -> Entry {
        Entry {
            mode: mode.into(),
            blob: blob.into(),
            size: meta.len(),
            mtime: mtime_ns(meta),
            seen,
        }
    }
}

fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

#[cfg(unix)]
fn executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_meta: &std::fs::Metadata) -> bool {
    false
}

impl Checkpoints {
    /// The store for `root` under `home`, made on first use.
    pub(crate) fn open(home: &Path, root: &Path) -> Result<Checkpoints> {
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            root.hash(&mut h);
            format!("{:016x}", h.finish())
        };
        let dir = home.join("checkpoints").join(key);
        let git_dir = dir.join("objects.git");
        if !git_dir.join("HEAD").exists() {
            std::fs::create_dir_all(&dir)?;
            let mut init = git(&git_dir);
            init.args(["init", "-q", "--bare"]).arg(&git_dir);
            run(init, b"").context("making the checkpoint store")?;
        }
        let objects = repository_objects(root);
        if let Some(objects) = &objects {
            let alternates = git_dir.join("objects/info/alternates");
            std::fs::create_dir_all(alternates.parent().context("alternates folder")?)?;
            std::fs::write(&alternates, format!("{}\n", objects.display()))?;
        }
        let stored: Stored = std::fs::read(dir.join("manifest.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Ok(Checkpoints {
            root: root.to_path_buf(),
            git_dir,
            manifest: stored.files,
            tree: stored.tree,
            index: stored.index,
            skipped: Vec::new(),
            in_repository: objects.is_some(),
        })
    }

    /// What the repository's index holds for files under the root that git sees unchanged:
    /// path → (mode, blob, blob size). A first snapshot takes these instead of hashing every
    /// file, where the blob is exactly the file's size (a filter such as line-ending
    /// conversion changes the bytes: those files are hashed as they are). Reads the
    /// repository, never writes it; empty when git cannot say.
    fn index_blobs(&self) -> HashMap<String, (String, String, u64)> {
        let user_git = |args: &[&str], input: &[u8]| -> Option<Vec<u8>> {
            let mut cmd = Command::new("git");
            cmd.args(args)
                .current_dir(&self.root)
                .env("GIT_OPTIONAL_LOCKS", "0")
                .stderr(Stdio::null());
            run(cmd, input).ok()
        };
        let (Some(listed), Some(modified)) = (
            user_git(&["ls-files", "-s", "-z"], b""),
            user_git(&["diff-files", "--name-only", "-z", "--relative"], b""),
        ) else {
            return HashMap::new();
        };
        let modified: HashSet<&[u8]> = modified.split(|&b| b == 0).collect();
        let mut entries: Vec<(String, String, String)> = Vec::new();
        for rec in listed.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let Some(tab) = rec.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let (head, path) = (String::from_utf8_lossy(&rec[..tab]), &rec[tab + 1..]);
            let mut parts = head.split(' ');
            let (Some(mode), Some(blob), Some("0")) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if matches!(mode, "100644" | "100755" | "120000") && !modified.contains(path) {
                let path = String::from_utf8_lossy(path).into_owned();
                entries.push((path, mode.to_string(), blob.to_string()));
            }
        }
        let ids: Vec<u8> = entries
            .iter()
            .flat_map(|(_, _, blob)| format!("{blob}\n").into_bytes())
            .collect();
        let mut cmd = git(&self.git_dir);
        cmd.args(["cat-file", "--batch-check=%(objectsize)"]);
        let Ok(sizes) = run(cmd, &ids) else {
            return HashMap::new();
        };
        let sizes = String::from_utf8_lossy(&sizes);
        entries
            .into_iter()
            .zip(sizes.lines())
            .filter_map(|((path, mode, blob), size)| Some((path, (mode, blob, size.parse().ok()?))))
            .collect()
    }

    fn manifest_path(&self) -> PathBuf {
        self.git_dir.with_file_name("manifest.json")
    }

    /// Every file under the root now (paths relative, `/`-separated), with its metadata.
    /// In a repository, what git ignores is left out; `.git` always is.
    fn walk(&self) -> Vec<(String, PathBuf, std::fs::Metadata)> {
        let found = std::sync::Mutex::new(Vec::new());
        let root = &self.root;
        ignore::WalkBuilder::new(root)
            .hidden(false)
            .parents(true)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build_parallel()
            .run(|| {
                Box::new(|entry| {
                    // Not following links, the walker's metadata is the link's own (an lstat).
                    if let Ok(entry) = entry
                        && let Ok(meta) = entry.metadata()
                        && !meta.is_dir()
                        && let Ok(rel) = entry.path().strip_prefix(root)
                    {
                        let rel = rel.to_string_lossy().replace('\\', "/");
                        if !rel.is_empty() {
                            let mut f = found.lock().unwrap_or_else(|e| e.into_inner());
                            f.push((rel, entry.path().to_path_buf(), meta));
                        }
                    }
                    ignore::WalkState::Continue
                })
            });
        let mut out = found.into_inner().unwrap_or_else(|e| e.into_inner());
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Records the folder as it is now; returns the tree's id.
    pub(crate) fn snapshot(&mut self) -> Result<String> {
        let mut next = BTreeMap::new();
        let seen = now_ns();
        let mut to_hash: Vec<(String, PathBuf, std::fs::Metadata)> = Vec::new();
        let mut links: Vec<(String, Vec<u8>, std::fs::Metadata)> = Vec::new();
        self.skipped.clear();
        // A first snapshot in a repository starts from what its index already hashed.
        let seed = if self.manifest.is_empty() && self.in_repository {
            self.index_blobs()
        } else {
            HashMap::new()
        };
        for (rel, path, meta) in self.walk() {
            let mode = file_mode(&meta);
            if meta.len() > MAX_FILE_BYTES && !meta.file_type().is_symlink() {
                self.skipped.push(rel);
                continue;
            }
            match self.manifest.get(&rel) {
                Some(e)
                    if e.mode == mode
                        && e.size == meta.len()
                        && e.mtime == mtime_ns(&meta)
                        && e.mtime + RACY_NS < e.seen =>
                {
                    next.insert(rel, e.clone());
                }
                _ if let Some((_, blob, _)) = seed
                    .get(&rel)
                    .filter(|(m, _, size)| m == mode && *size == meta.len()) =>
                {
                    next.insert(rel.clone(), Entry::of(mode, blob, &meta, seen));
                }
                _ if meta.file_type().is_symlink() => {
                    let target = std::fs::read_link(&path)
                        .map(|t| t.to_string_lossy().into_owned().into_bytes())
                        .unwrap_or_default();
                    links.push((rel, target, meta));
                }
                _ => to_hash.push((rel, path, meta)),
            }
        }
        self.hash_files(to_hash, seen, &mut next)?;
        for (rel, target, meta) in links {
            let mut cmd = git(&self.git_dir);
            cmd.args(["hash-object", "-w", "--stdin"]);
            let id = text(run(cmd, &target).context("hashing a link")?);
            next.insert(rel, Entry::of("120000", &id, &meta, seen));
        }
        self.record(next)
    }

    /// Writes the regular files `files` into the store and enters them in `next`.
    fn hash_files(
        &self,
        files: Vec<(String, PathBuf, std::fs::Metadata)>,
        seen: i128,
        next: &mut BTreeMap<String, Entry>,
    ) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        if files.len() > PACK_OVER {
            return self.pack_files(files, seen, next);
        }
        let mut cmd = git(&self.git_dir);
        cmd.args(["hash-object", "-w", "--no-filters", "--stdin-paths"]);
        let paths: Vec<u8> = files
            .iter()
            .flat_map(|(_, p, _)| format!("{}\n", p.display()).into_bytes())
            .collect();
        let ids = text(run(cmd, &paths).context("hashing files")?);
        for ((rel, _, meta), id) in files.into_iter().zip(ids.lines()) {
            next.insert(rel, Entry::of(file_mode(&meta), id, &meta, seen));
        }
        Ok(())
    }

    /// Writes `files` into one pack with `git fast-import` (a loose object per file costs a
    /// file each: minutes for a large folder's first snapshot) and enters them in `next`. A
    /// file that cannot be read now is left out, as if it had gone.
    fn pack_files(
        &self,
        files: Vec<(String, PathBuf, std::fs::Metadata)>,
        seen: i128,
        next: &mut BTreeMap<String, Entry>,
    ) -> Result<()> {
        let (marks_name, _) = self.new_index();
        let marks = self.git_dir.join(format!("marks-{marks_name}"));
        let mut cmd = git(&self.git_dir);
        cmd.args(["fast-import", "--quiet", "--done"])
            .arg(format!("--export-marks={}", marks.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        let mut child = cmd.spawn().context("running git fast-import")?;
        let mut stdin = std::io::BufWriter::new(child.stdin.take().context("git stdin")?);
        let mut fed = Vec::with_capacity(files.len());
        for (i, (rel, path, meta)) in files.into_iter().enumerate() {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let mark = i + 1;
            let head = format!("blob\nmark :{mark}\ndata {}\n", bytes.len());
            let wrote = stdin
                .write_all(head.as_bytes())
                .and_then(|()| stdin.write_all(&bytes))
                .and_then(|()| stdin.write_all(b"\n"));
            if wrote.is_err() {
                break;
            }
            fed.push((mark, rel, meta));
        }
        let _ = stdin.write_all(b"done\n");
        drop(stdin);
        let out = child
            .wait_with_output()
            .context("waiting for git fast-import")?;
        let ids = std::fs::read_to_string(&marks);
        let _ = std::fs::remove_file(&marks);
        if !out.status.success() {
            bail!(
                "git fast-import failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let ids: HashMap<usize, String> = ids
            .context("reading fast-import's marks")?
            .lines()
            .filter_map(|l| {
                let (mark, id) = l.strip_prefix(':')?.split_once(' ')?;
                Some((mark.parse().ok()?, id.to_string()))
            })
            .collect();
        for (mark, rel, meta) in fed {
            let Some(id) = ids.get(&mark) else {
                bail!("git fast-import gave no id for {rel}");
            };
            next.insert(rel, Entry::of(file_mode(&meta), id, &meta, seen));
        }
        Ok(())
    }

    /// The last snapshot with only `paths` (relative) looked at again: the folder after a
    /// turn whose only writes were the workspace's own, without walking it. A path that is
    /// gone, a folder or too large leaves the snapshot; a link there takes a whole walk.
    pub(crate) fn snapshot_paths(&mut self, paths: &[String]) -> Result<String> {
        if self.tree.is_none() {
            return self.snapshot();
        }
        let mut next = self.manifest.clone();
        let seen = now_ns();
        let mut to_hash = Vec::new();
        // What git ignores stays out, as a walk leaves it out.
        let ignored = ignored_by_git(&self.root, paths);
        for rel in paths.iter().filter(|p| !ignored.contains(*p)) {
            let path = self.root.join(rel);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => return self.snapshot(),
                Ok(meta) if meta.is_file() && meta.len() <= MAX_FILE_BYTES => {
                    to_hash.push((rel.clone(), path, meta));
                }
                _ => {
                    next.remove(rel);
                }
            }
        }
        self.hash_files(to_hash, seen, &mut next)?;
        self.record(next)
    }

    /// Makes `next` the last snapshot: its tree (written only when something changed) and
    /// the manifest.
    fn record(&mut self, next: BTreeMap<String, Entry>) -> Result<String> {
        let same = |a: &Entry, b: &Entry| a.mode == b.mode && a.blob == b.blob;
        let unchanged = next.len() == self.manifest.len()
            && next
                .iter()
                .zip(&self.manifest)
                .all(|((p, a), (q, b))| p == q && same(a, b));
        if unchanged && let Some(tree) = self.tree.clone() {
            // Nothing to write; the stat data may be newer, which the next walk can use.
            self.manifest = next;
            return Ok(tree);
        }
        let (tree, index) = match self.update_tree(&next) {
            Ok(done) => done,
            // The last index is gone (another process's snapshot): build the tree whole.
            Err(_) => self.write_tree(&next)?,
        };
        let old_index = self.index.replace(index);
        if old_index != self.index
            && let Some(old) = old_index
        {
            let _ = std::fs::remove_file(self.git_dir.join(old));
        }
        self.manifest = next;
        self.tree = Some(tree.clone());
        let stored = Stored {
            tree: self.tree.clone(),
            index: self.index.clone(),
            files: std::mem::take(&mut self.manifest),
        };
        if let Ok(bytes) = serde_json::to_vec(&stored) {
            let _ = crate::workspace::write_private(&self.manifest_path(), &bytes);
        }
        self.manifest = stored.files;
        Ok(tree)
    }

    /// A fresh index file name in the store, unique to this process and call: another process
    /// may snapshot the same folder.
    fn new_index(&self) -> (String, PathBuf) {
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("index-{}-{n}", std::process::id());
        let path = self.git_dir.join(&name);
        (name, path)
    }

    /// `files`' tree from the last snapshot's index, changing only the entries that differ.
    fn update_tree(&self, files: &BTreeMap<String, Entry>) -> Result<(String, String)> {
        let last = self.index.as_ref().context("no earlier index")?;
        let (name, path) = self.new_index();
        std::fs::copy(self.git_dir.join(last), &path).context("copying the last index")?;
        let mut info = Vec::new();
        for (rel, e) in files {
            if self
                .manifest
                .get(rel)
                .is_none_or(|old| old.mode != e.mode || old.blob != e.blob)
            {
                info.extend_from_slice(format!("{} {}\t{rel}\0", e.mode, e.blob).as_bytes());
            }
        }
        for rel in self.manifest.keys().filter(|p| !files.contains_key(*p)) {
            info.extend_from_slice(
                format!("0 0000000000000000000000000000000000000000\t{rel}\0").as_bytes(),
            );
        }
        let tree = self.index_to_tree(&path, &info);
        if tree.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        Ok((tree?, name))
    }

    /// Applies `info` (`update-index -z --index-info` records) to the index at `path`, then
    /// writes its tree.
    fn index_to_tree(&self, path: &Path, info: &[u8]) -> Result<String> {
        let mut cmd = git(&self.git_dir);
        cmd.env("GIT_INDEX_FILE", path)
            .args(["update-index", "-z", "--index-info"]);
        run(cmd, info).context("building the checkpoint index")?;
        let mut cmd = git(&self.git_dir);
        cmd.env("GIT_INDEX_FILE", path).arg("write-tree");
        run(cmd, b"")
            .map(text)
            .context("writing the checkpoint tree")
    }

    /// `files`' tree, built whole in a new index (kept for the next snapshot).
    fn write_tree(&self, files: &BTreeMap<String, Entry>) -> Result<(String, String)> {
        let (name, path) = self.new_index();
        let mut info = Vec::new();
        for (rel, e) in files {
            info.extend_from_slice(format!("{} {}\t{rel}\0", e.mode, e.blob).as_bytes());
        }
        let tree = self.index_to_tree(&path, &info);
        if tree.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        Ok((tree?, name))
    }

    /// The files of a tree: path → (mode, blob).
    fn read_tree(&self, tree: &str) -> Result<HashMap<String, (String, String)>> {
        let mut cmd = git(&self.git_dir);
        cmd.args(["ls-tree", "-r", "-z", tree]);
        let out = run(cmd, b"").with_context(|| format!("reading checkpoint {tree}"))?;
        let mut files = HashMap::new();
        for rec in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8_lossy(rec);
            let Some((head, path)) = rec.split_once('\t') else {
                continue;
            };
            let mut parts = head.split(' ');
            let (Some(mode), Some(_kind), Some(blob)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            files.insert(path.to_string(), (mode.to_string(), blob.to_string()));
        }
        Ok(files)
    }

    fn blob(&self, id: &str) -> Result<Vec<u8>> {
        let mut cmd = git(&self.git_dir);
        cmd.args(["cat-file", "blob", id]);
        run(cmd, b"").with_context(|| format!("reading {id} from the checkpoint"))
    }

    /// The files the turns between `before` and `after` changed, sorted.
    pub(crate) fn changed(&mut self, before: &str, after: &str) -> Result<Vec<String>> {
        let old = self.read_tree(before)?;
        let new = self.read_tree(after)?;
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

    /// Puts back what the turns between `before` and `after` changed, unless it changed
    /// since `after` or an editor holds it with unsaved changes (`unsaved`).
    pub(crate) fn restore(
        &mut self,
        before: &str,
        after: &str,
        unsaved: &HashSet<String>,
    ) -> Result<Restored> {
        let old = self.read_tree(before)?;
        let new = self.read_tree(after)?;
        self.snapshot()?;
        let now: HashMap<&str, (&str, &str)> = self
            .manifest
            .iter()
            .map(|(p, e)| (p.as_str(), (e.mode.as_str(), e.blob.as_str())))
            .collect();
        let skipped_now = self.skipped.clone();
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
            let is = now
                .get(path.as_str())
                .map(|(m, b)| (m.to_string(), b.to_string()));
            if skipped_now.contains(path) {
                report
                    .skipped
                    .push((path.clone(), "larger than 16 MiB now; left as it is".into()));
                continue;
            }
            if is.as_ref() != turned {
                report
                    .skipped
                    .push((path.clone(), "changed after the turn; kept".into()));
                continue;
            }
            if unsaved.contains(path) {
                report
                    .skipped
                    .push((path.clone(), "unsaved changes in the editor; kept".into()));
                continue;
            }
            let target = self.root.join(path);
            if !self.inside(&target) {
                report.skipped.push((
                    path.clone(),
                    "its folder is a link out of the workspace now; left alone".into(),
                ));
                continue;
            }
            match was {
                None => match std::fs::remove_file(&target) {
                    Ok(()) => report.removed.push(path.clone()),
                    Err(e) => report
                        .skipped
                        .push((path.clone(), format!("not removed: {e}"))),
                },
                Some((mode, blob)) => match self.put_back(&target, mode, blob) {
                    Ok(()) => report.restored.push(path.clone()),
                    Err(e) => report.skipped.push((path.clone(), format!("{e:#}"))),
                },
            }
        }
        // What the restore wrote is the folder's state now.
        self.snapshot()?;
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

    fn put_back(&self, target: &Path, mode: &str, blob: &str) -> Result<()> {
        let bytes = self.blob(blob)?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if let Ok(meta) = std::fs::symlink_metadata(target)
            && (meta.file_type().is_symlink() || mode == "120000")
        {
            std::fs::remove_file(target)?;
        }
        if mode == "120000" {
            let link = String::from_utf8_lossy(&bytes).into_owned();
            #[cfg(unix)]
            std::os::unix::fs::symlink(&link, target)?;
            #[cfg(not(unix))]
            std::fs::write(target, link.as_bytes())?;
            return Ok(());
        }
        let mut file = std::fs::File::create(target)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mut perms = file.metadata()?.permissions();
            let base = perms.mode() & !0o111;
            let exec = if mode == "100755" {
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

#[cfg(test)]
#[path = "checkpoint_tests.rs"]
mod tests;
