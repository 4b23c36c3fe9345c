//! What a run changed in a git work tree, whoever made the change (file tools or shell
//! commands): for `exec --diff`. Before the run, git's status names the files that differ from
//! the index and their text is kept; after it, every file that differs from the index or from
//! that kept text is a change. Nothing is written to the repository.

use interpreter_protocol::{FileChange, FileChangeKind};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use interpreter_core::platform::open_nonblocking;
use interpreter_core::workspace::MAX_READ_BYTES;

/// A file's text as it was, or why it cannot be diffed.
#[derive(Debug, Clone, PartialEq)]
enum Content {
    Missing,
    Text(String),
    /// Binary, not UTF-8 or too big: its change is reported, not diffed. `oid` is git's blob
    /// id of the content, which tells whether it changed.
    Opaque {
        why: &'static str,
        oid: Option<String>,
    },
}

pub(crate) struct Snapshot {
    top: PathBuf,
    /// Files that differed from the index when the snapshot was taken, relative to `top`.
    before: BTreeMap<PathBuf, Content>,
}

/// The work tree's changes since a [`Snapshot`]: diffable ones, and the paths that changed but
/// cannot be shown as text (with the reason).
#[derive(Debug, Default)]
pub(crate) struct TreeChanges {
    pub changes: Vec<FileChange>,
    pub opaque: Vec<(PathBuf, &'static str)>,
}

impl Snapshot {
    /// None when `cwd` is not in a git work tree (or git is missing).
    pub(crate) fn take(cwd: &Path) -> Option<Snapshot> {
        let top = git(cwd, &["rev-parse", "--show-toplevel"], None).ok()?;
        let top = PathBuf::from(String::from_utf8_lossy(&top).trim_end_matches('\n'));
        let before = dirty(&top)
            .ok()?
            .into_iter()
            .map(|rel| {
                let text = read(&top, &top.join(&rel));
                (rel, text)
            })
            .collect();
        Some(Snapshot { top, before })
    }

    pub(crate) fn changes(&self) -> io::Result<TreeChanges> {
        let now: BTreeSet<PathBuf> = dirty(&self.top)?.into_iter().collect();
        let candidates: BTreeSet<&PathBuf> = now.iter().chain(self.before.keys()).collect();
        // What a file held before the run: the kept text when it was dirty, else the index.
        let from_index: Vec<&PathBuf> = candidates
            .iter()
            .copied()
            .filter(|p| !self.before.contains_key(*p))
            .collect();
        let mut indexed = index_texts(&self.top, &from_index)?;
        let mut out = TreeChanges::default();
        for rel in candidates {
            let old = match self.before.get(rel) {
                Some(t) => t.clone(),
                None => indexed.remove(rel).unwrap_or(Content::Missing),
            };
            let path = self.top.join(rel);
            let new = read(&self.top, &path);
            if old == new {
                continue;
            }
            let (old_text, new_text) = match (old, new) {
                (Content::Opaque { why, .. }, _) | (_, Content::Opaque { why, .. }) => {
                    out.opaque.push((path, why));
                    continue;
                }
                (o, n) => (o.into_option(), n.into_option()),
            };
            let kind = match (&old_text, &new_text) {
                (None, _) => FileChangeKind::Add,
                (_, None) => FileChangeKind::Delete,
                _ => FileChangeKind::Update,
            };
            out.changes.push(FileChange {
                path,
                kind,
                move_path: None,
                old_text,
                new_text,
            });
        }
        Ok(out)
    }
}

impl Content {
    fn into_option(self) -> Option<String> {
        match self {
            Content::Text(t) => Some(t),
            _ => None,
        }
    }
}

fn read(top: &Path, path: &Path) -> Content {
    let opaque = |why| Content::Opaque {
        why,
        oid: hash_object(top, path),
    };
    // Never blocks on a FIFO or reads a device that is there instead of a file.
    let Ok((file, meta)) = open_nonblocking(path, true) else {
        return Content::Missing;
    };
    if !meta.is_file() {
        return Content::Missing;
    }
    if meta.len() > MAX_READ_BYTES {
        return opaque("over 16 MiB");
    }
    let mut bytes = Vec::new();
    if file
        .take(MAX_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return Content::Missing;
    }
    match text_of(bytes) {
        Ok(t) => Content::Text(t),
        Err(why) => opaque(why),
    }
}

fn text_of(bytes: Vec<u8>) -> Result<String, &'static str> {
    if bytes.contains(&0) {
        return Err("binary");
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8")
}

/// git's blob id for a file's content (streamed by git; nothing is written).
fn hash_object(top: &Path, path: &Path) -> Option<String> {
    let out = git(
        top,
        &["hash-object", "--no-filters", "--", &path.to_string_lossy()],
        None,
    )
    .ok()?;
    Some(String::from_utf8_lossy(&out).trim().to_string())
}

/// Files (relative to `top`) whose work-tree content differs from the index, or that git does
/// not track and does not ignore.
fn dirty(top: &Path) -> io::Result<Vec<PathBuf>> {
    let out = git(
        top,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules",
        ],
        None,
    )?;
    Ok(out
        .split(|b| *b == 0)
        .filter(|e| e.len() > 3)
        // "XY path": X is the index, Y the work tree; a change staged before the run counts
        // too (the index is what "before" is read from otherwise).
        .map(|e| PathBuf::from(String::from_utf8_lossy(&e[3..]).into_owned()))
        .collect())
}

/// The index's text of each path: `git cat-file --batch-check` for ids and sizes, then
/// `--batch` for the contents small enough to diff.
fn index_texts(top: &Path, paths: &[&PathBuf]) -> io::Result<BTreeMap<PathBuf, Content>> {
    let mut texts = BTreeMap::new();
    let names: Vec<&PathBuf> = paths
        .iter()
        .copied()
        .filter(|p| !p.to_string_lossy().contains('\n'))
        .collect();
    let request = |objects: &mut dyn Iterator<Item = String>| {
        let mut input = Vec::new();
        for o in objects {
            let _ = writeln!(input, "{o}");
        }
        input
    };
    if names.is_empty() {
        return Ok(texts);
    }
    // "<oid> blob <size>", or "<name> missing" for a path the index does not have.
    let mut index_paths = names.iter().map(|p| format!(":{}", p.to_string_lossy()));
    let checked = git(
        top,
        &["cat-file", "--batch-check"],
        Some(request(&mut index_paths)),
    )?;
    let mut small = Vec::new();
    for (p, line) in names.iter().zip(String::from_utf8_lossy(&checked).lines()) {
        let mut f = line.split(' ');
        match (
            f.next(),
            f.next(),
            f.next().and_then(|s| s.parse::<u64>().ok()),
        ) {
            (Some(oid), Some("blob"), Some(size)) if size > MAX_READ_BYTES => {
                let oid = Some(oid.to_string());
                texts.insert(
                    (*p).clone(),
                    Content::Opaque {
                        why: "over 16 MiB",
                        oid,
                    },
                );
            }
            (Some(oid), Some("blob"), Some(_)) => small.push((*p, oid.to_string())),
            _ => {
                texts.insert((*p).clone(), Content::Missing);
            }
        }
    }
    if small.is_empty() {
        return Ok(texts);
    }
    let mut oids = small.iter().map(|(_, oid)| oid.clone());
    let out = git(top, &["cat-file", "--batch"], Some(request(&mut oids)))?;
    let mut rest = out.as_slice();
    for (p, oid) in small {
        let nl = rest
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| io::Error::other("git cat-file: short output"))?;
        let size = String::from_utf8_lossy(&rest[..nl])
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|s| rest.len() > nl + s)
            .ok_or_else(|| io::Error::other("git cat-file: bad header"))?;
        let body = rest[nl + 1..nl + 1 + size].to_vec();
        rest = &rest[(nl + 2 + size).min(rest.len())..];
        let text = match text_of(body) {
            Ok(t) => Content::Text(t),
            Err(why) => Content::Opaque {
                why,
                oid: Some(oid),
            },
        };
        texts.insert(p.clone(), text);
    }
    Ok(texts)
}

/// The agent's own git in `dir`: confined, with the repository's programs turned off.
fn git(dir: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> io::Result<Vec<u8>> {
    let mut all = vec!["-c", "core.quotePath=false"];
    all.extend_from_slice(args);
    interpreter_core::sandbox::git::run(dir, &all, stdin.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, script: &str) {
        let ok = std::process::Command::new("sh")
            .args(["-c", script])
            .current_dir(dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "{script}");
    }

    #[test]
    fn shell_edits_count_and_earlier_dirt_does_not() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        sh(
            p,
            "git init -q && printf 'a\\n' > kept.txt && printf 'b\\n' > edited.txt && printf 'c\\n' > gone.txt \
             && printf 'bin\\0ary' > blob.bin && git add . \
             && printf 'user wip\\n' > kept.txt && printf 'draft\\n' > untracked.txt && printf 'x\\n' > .gitignore \
             && mkdir -p target && printf 'ignored\\n' > target/out",
        );
        std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
        sh(p, "git add .gitignore");
        let snap = Snapshot::take(p).unwrap();
        sh(
            p,
            "printf 'B\\n' > edited.txt && rm gone.txt && printf 'new\\n' > made.txt \
             && printf 'draft 2\\n' > untracked.txt && printf 'bin\\0ARY' > blob.bin && printf 'more\\n' > target/out",
        );
        let c = snap.changes().unwrap();
        let mut got: Vec<(String, FileChangeKind, Option<String>, Option<String>)> = c
            .changes
            .iter()
            .map(|f| {
                (
                    f.path
                        .strip_prefix(p.canonicalize().unwrap())
                        .unwrap()
                        .display()
                        .to_string(),
                    f.kind,
                    f.old_text.clone(),
                    f.new_text.clone(),
                )
            })
            .collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            got,
            vec![
                (
                    "edited.txt".into(),
                    FileChangeKind::Update,
                    Some("b\n".into()),
                    Some("B\n".into())
                ),
                (
                    "gone.txt".into(),
                    FileChangeKind::Delete,
                    Some("c\n".into()),
                    None
                ),
                (
                    "made.txt".into(),
                    FileChangeKind::Add,
                    None,
                    Some("new\n".into())
                ),
                (
                    "untracked.txt".into(),
                    FileChangeKind::Update,
                    Some("draft\n".into()),
                    Some("draft 2\n".into())
                ),
            ]
        );
        assert_eq!(c.opaque.len(), 1);
        assert!(c.opaque[0].0.ends_with("blob.bin"));
    }

    #[test]
    fn outside_a_work_tree_there_is_no_snapshot() {
        let d = tempfile::tempdir().unwrap();
        assert!(Snapshot::take(d.path()).is_none());
    }
}
