//! One walk of a folder that sees every entry once and says what a checkpoint does with it:
//! a regular file or a link is kept (its bytes go into the store); anything else is
//! *unknown* to undo, with why (ignored by git, larger than the cap, a FIFO, socket or
//! device, git's own files, outside the checkpointed folder), and only its stat data is
//! kept, so a turn's change to it can be named even though it cannot be put back.
//!
//! What git ignores follows git's own rules, read in-process (`.gitignore` files, the
//! repository's `info/exclude`, the user's global excludes); no git runs on the repository.
//! A folder git ignores is not entered: its own stat data tells that entries were added or
//! removed in it, not which. Outside a repository nothing is ignored.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Why undo cannot cover a path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub(crate) enum Why {
    /// Git ignores it (a folder git ignores is one entry).
    Ignored,
    /// Larger than the checkpoint cap.
    TooLarge { bytes: u64 },
    /// Not a regular file, a link or a folder: a FIFO, socket or device.
    Special { kind: String },
    /// Git's own files (`.git/config`, hooks, info): the agent never restores those.
    GitInternal,
    /// In another workspace root (`--add-dir`), which checkpoints do not cover.
    Outside,
    /// It could not be read.
    Unreadable { error: String },
}

impl Why {
    /// In words, for the undo report.
    pub(crate) fn describe(&self) -> String {
        match self {
            Why::Ignored => "ignored by git, so no copy is kept".into(),
            Why::TooLarge { bytes } => format!(
                "larger than {} MiB ({bytes} bytes), so no copy is kept",
                super::MAX_FILE_BYTES >> 20
            ),
            Why::Special { kind } => format!("a {kind}, not a file: no copy is kept"),
            Why::GitInternal => "git's own configuration or hooks: undo never changes them".into(),
            Why::Outside => "outside the folder checkpoints cover (an added root)".into(),
            Why::Unreadable { error } => format!("could not be read ({error}), so no copy is kept"),
        }
    }
}

/// What `stat` says of an entry: enough to tell that it changed, even with its size and
/// modification time kept (`cp -p`, `touch -r` change the inode's change time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stat {
    pub kind: u8,
    pub size: u64,
    pub mtime: i128,
    pub ctime: i128,
    pub ino: u64,
    pub mode: u32,
}

pub(crate) const KIND_FILE: u8 = 1;
pub(crate) const KIND_LINK: u8 = 2;
const KIND_DIR: u8 = 3;
const KIND_OTHER: u8 = 4;

impl Stat {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stat {
        let ft = meta.file_type();
        let kind = if ft.is_symlink() {
            KIND_LINK
        } else if ft.is_dir() {
            KIND_DIR
        } else if ft.is_file() {
            KIND_FILE
        } else {
            KIND_OTHER
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stat {
                kind,
                size: meta.size(),
                mtime: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ctime: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                ino: meta.ino(),
                mode: meta.mode(),
            }
        }
        #[cfg(not(unix))]
        {
            Stat {
                kind,
                size: meta.len(),
                mtime: super::mtime_ns(meta),
                ctime: 0,
                ino: 0,
                mode: u32::from(meta.permissions().readonly()),
            }
        }
    }
}

/// The kind of a special file, in words.
fn special_kind(meta: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let ft = meta.file_type();
        if ft.is_fifo() {
            return "FIFO".into();
        }
        if ft.is_socket() {
            return "socket".into();
        }
        if ft.is_char_device() {
            return "character device".into();
        }
        if ft.is_block_device() {
            return "block device".into();
        }
    }
    let _ = meta;
    "special file".into()
}

/// A path undo cannot cover, and its stat data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unknown {
    pub why: Why,
    pub stat: Stat,
}

/// What one walk found.
#[derive(Default)]
pub(crate) struct Walked {
    /// Regular files up to the cap and links under the root: relative path, full path, lstat.
    pub files: Vec<(String, PathBuf, std::fs::Metadata)>,
    /// Everything else, by relative path (absolute for entries outside the root).
    pub unknown: BTreeMap<String, Unknown>,
}

/// The walk ran past its deadline, or was stopped.
#[derive(Debug)]
pub(crate) struct TooSlow;

/// The ignore rules of a folder: the matchers from the repository's outermost (the global
/// excludes, `info/exclude`) to the folder's own `.gitignore`.
type Chain = Arc<Vec<Arc<Gitignore>>>;

/// Git's ignore rules for folders under one root.
pub(crate) struct Rules {
    /// The repository around the root; None: nothing is ignored.
    repo: Option<PathBuf>,
    chains: Mutex<HashMap<PathBuf, Chain>>,
}

impl Rules {
    /// The rules for `root`: those of the repository it is in (its top `.git` found by going
    /// up), with the `.gitignore` files of the folders from the top down to `root`'s parent.
    pub(crate) fn for_root(root: &Path) -> Rules {
        let repo = crate::workspace::agents_md::git_root(root);
        let rules = Rules {
            repo: repo.clone(),
            chains: Mutex::new(HashMap::new()),
        };
        if let Some(top) = &repo {
            let mut base: Vec<Arc<Gitignore>> = Vec::new();
            let (global, _) = GitignoreBuilder::new(top).build_global();
            base.push(Arc::new(global));
            if let Some(git_dir) = git_dir(top) {
                let mut b = GitignoreBuilder::new(top);
                let _ = b.add(git_dir.join("info/exclude"));
                if let Ok(gi) = b.build() {
                    base.push(Arc::new(gi));
                }
            }
            // The folders above the root, down from the top of the repository.
            let mut above: Vec<&Path> = root
                .ancestors()
                .skip(1)
                .take_while(|d| d.starts_with(top))
                .collect();
            above.reverse();
            for dir in above {
                base.push(Arc::new(gitignore_of(dir)));
            }
            rules
                .chains
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(
                    root.parent().map(Path::to_path_buf).unwrap_or_default(),
                    Arc::new(base),
                );
        }
        rules
    }

    /// Whether git ignores `path`, an entry of `dir` (whose chain is known).
    fn ignored(&self, dir: &Path, path: &Path, is_dir: bool) -> bool {
        if self.repo.is_none() {
            return false;
        }
        let chain = self.chain(dir);
        for m in chain.iter().rev() {
            match m.matched(path, is_dir) {
                ignore::Match::Ignore(_) => return true,
                ignore::Match::Whitelist(_) => return false,
                ignore::Match::None => {}
            }
        }
        false
    }

    /// The chain of `dir`, made from its parent's (and its own `.gitignore`) when not known.
    fn chain(&self, dir: &Path) -> Chain {
        if let Some(c) = self
            .chains
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(dir)
        {
            return c.clone();
        }
        let parent = match dir.parent() {
            Some(p) if self.repo.as_ref().is_some_and(|top| p.starts_with(top)) => self.chain(p),
            _ => Arc::new(Vec::new()),
        };
        let mut chain: Vec<Arc<Gitignore>> = parent.as_ref().clone();
        chain.push(Arc::new(gitignore_of(dir)));
        let chain = Arc::new(chain);
        self.chains
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), chain.clone());
        chain
    }

    /// Whether git ignores `path` (anywhere under the root), looking at each folder above it.
    pub(crate) fn ignored_path(&self, root: &Path, path: &Path) -> bool {
        if self.repo.is_none() {
            return false;
        }
        let Ok(rel) = path.strip_prefix(root) else {
            return false;
        };
        let mut dir = root.to_path_buf();
        let parts: Vec<_> = rel.components().collect();
        for (i, part) in parts.iter().enumerate() {
            let next = dir.join(part);
            let last = i + 1 == parts.len();
            let is_dir = !last || next.is_dir();
            if self.ignored(&dir, &next, is_dir) {
                return true;
            }
            dir = next;
        }
        false
    }
}

fn gitignore_of(dir: &Path) -> Gitignore {
    let file = dir.join(".gitignore");
    if !file.is_file() {
        return Gitignore::empty();
    }
    let mut b = GitignoreBuilder::new(dir);
    let _ = b.add(file);
    b.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The git folder of the repository whose top is `top`: `.git`, or where a `.git` file
/// (`gitdir: …`, a worktree or submodule) points.
pub(crate) fn git_dir(top: &Path) -> Option<PathBuf> {
    let dot = top.join(".git");
    let meta = std::fs::symlink_metadata(&dot).ok()?;
    if meta.is_dir() {
        return Some(dot);
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    let path = Path::new(target);
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        top.join(path)
    })
}

/// Records git's own files of the git folder `git_dir` (its config, hooks, info) as unknown:
/// what a turn does to them is named, never restored.
fn git_internals(
    git_dir: &Path,
    key: &dyn Fn(&Path) -> String,
    out: &mut BTreeMap<String, Unknown>,
) {
    let mut add = |p: &Path| {
        if let Ok(meta) = std::fs::symlink_metadata(p) {
            out.insert(
                key(p),
                Unknown {
                    why: Why::GitInternal,
                    stat: Stat::of(&meta),
                },
            );
        }
    };
    add(&git_dir.join("config"));
    for sub in ["hooks", "info"] {
        let dir = git_dir.join(sub);
        add(&dir);
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.filter_map(Result::ok).take(1000) {
                add(&e.path());
            }
        }
    }
}

/// Walks `root` (its files to keep, and what is unknown) and `others` (all unknown, as
/// outside), until `limit`.
pub(crate) fn walk(
    root: &Path,
    others: &[PathBuf],
    limit: &super::Limit,
) -> Result<Walked, TooSlow> {
    let mut walked = Walked::default();
    let rel_key = |p: &Path| -> String {
        match p.strip_prefix(root) {
            Ok(rel) => super::slash(rel),
            Err(_) => p.display().to_string(),
        }
    };
    one_root(root, true, &rel_key, limit, &mut walked)?;
    for other in others.iter().filter(|o| o.as_path() != root) {
        one_root(other, false, &rel_key, limit, &mut walked)?;
    }
    // The repository's own git folder, wherever it is (above the root, or a worktree's).
    if let Some(top) = crate::workspace::agents_md::git_root(root)
        && let Some(dir) = git_dir(&top)
    {
        git_internals(&dir, &rel_key, &mut walked.unknown);
    }
    Ok(walked)
}

fn one_root(
    root: &Path,
    keep: bool,
    key: &(dyn Fn(&Path) -> String + Sync),
    limit: &super::Limit,
    out: &mut Walked,
) -> Result<(), TooSlow> {
    let rules = Rules::for_root(root);
    let files = Mutex::new(Vec::new());
    let unknown = Mutex::new(BTreeMap::new());
    let late = AtomicBool::new(false);
    ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                if limit.reached() {
                    late.store(true, Ordering::Relaxed);
                    return ignore::WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                let path = entry.path();
                // Not following links, this is the entry's own lstat.
                let Ok(meta) = entry.metadata() else {
                    return ignore::WalkState::Continue;
                };
                let unknown_as = |why: Why| {
                    unknown.lock().unwrap_or_else(|e| e.into_inner()).insert(
                        key(path),
                        Unknown {
                            why,
                            stat: Stat::of(&meta),
                        },
                    );
                };
                if entry.depth() == 0 {
                    return ignore::WalkState::Continue;
                }
                let dir = path.parent().unwrap_or(root);
                let ft = meta.file_type();
                if entry.file_name() == ".git" {
                    let mut found = BTreeMap::new();
                    if ft.is_dir() {
                        git_internals(path, key, &mut found);
                    } else {
                        found.insert(
                            key(path),
                            Unknown {
                                why: Why::GitInternal,
                                stat: Stat::of(&meta),
                            },
                        );
                    }
                    unknown
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(found);
                    return ignore::WalkState::Skip;
                }
                if rules.ignored(dir, path, ft.is_dir()) {
                    unknown_as(Why::Ignored);
                    return ignore::WalkState::Skip;
                }
                if ft.is_dir() {
                    return ignore::WalkState::Continue;
                }
                if !keep {
                    unknown_as(Why::Outside);
                } else if ft.is_symlink() {
                    push_file(&files, key(path), path, meta);
                } else if ft.is_file() {
                    if meta.len() > super::MAX_FILE_BYTES {
                        unknown_as(Why::TooLarge { bytes: meta.len() });
                    } else {
                        push_file(&files, key(path), path, meta);
                    }
                } else {
                    unknown_as(Why::Special {
                        kind: special_kind(&meta),
                    });
                }
                ignore::WalkState::Continue
            })
        });
    if late.load(Ordering::Relaxed) {
        return Err(TooSlow);
    }
    out.files
        .extend(files.into_inner().unwrap_or_else(|e| e.into_inner()));
    out.unknown
        .extend(unknown.into_inner().unwrap_or_else(|e| e.into_inner()));
    Ok(())
}

fn push_file(
    files: &Mutex<Vec<(String, PathBuf, std::fs::Metadata)>>,
    rel: String,
    path: &Path,
    meta: std::fs::Metadata,
) {
    files
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((rel, path.to_path_buf(), meta));
}

/// Which of `paths` (relative to `root`) are unknown now, and why, with the stat data of
/// every path that exists: for the snapshot after a turn that wrote only through the
/// workspace.
pub(crate) fn classify(root: &Path, paths: &[String]) -> BTreeMap<String, Option<Unknown>> {
    let rules = Rules::for_root(root);
    let mut out = BTreeMap::new();
    for rel in paths {
        let path = root.join(rel);
        let meta = std::fs::symlink_metadata(&path).ok();
        let why = if rules.ignored_path(root, &path) {
            Some(Why::Ignored)
        } else {
            match &meta {
                Some(m) if m.file_type().is_file() && m.len() > super::MAX_FILE_BYTES => {
                    Some(Why::TooLarge { bytes: m.len() })
                }
                Some(m)
                    if !m.file_type().is_file() && !m.file_type().is_symlink() && !m.is_dir() =>
                {
                    Some(Why::Special {
                        kind: special_kind(m),
                    })
                }
                _ => None,
            }
        };
        out.insert(
            rel.clone(),
            why.map(|why| Unknown {
                why,
                stat: meta.as_ref().map(Stat::of).unwrap_or_default(),
            }),
        );
    }
    out
}
