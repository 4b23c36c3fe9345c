//! Trees: a folder as an object (`<mode> <name>\0<id>` per entry, sorted by name), so a
//! snapshot that changed one file writes only the trees on its path.

use anyhow::{Result, bail};
use std::collections::BTreeMap;

use super::store::Id;

/// Git's modes: a file, an executable, a link, a folder.
pub(crate) const FILE: &str = "100644";
pub(crate) const EXECUTABLE: &str = "100755";
pub(crate) const LINK: &str = "120000";
const FOLDER: &str = "40000";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeEntry {
    pub mode: String,
    pub name: String,
    pub id: Id,
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<TreeEntry>> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some(sp) = rest.iter().position(|&b| b == b' ') else {
            bail!("a damaged tree");
        };
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            bail!("a damaged tree");
        };
        if nul < sp || rest.len() < nul + 33 {
            bail!("a damaged tree");
        }
        let mut id = [0u8; 32];
        id.copy_from_slice(&rest[nul + 1..nul + 33]);
        out.push(TreeEntry {
            mode: String::from_utf8_lossy(&rest[..sp]).into_owned(),
            name: String::from_utf8_lossy(&rest[sp + 1..nul]).into_owned(),
            id,
        });
        rest = &rest[nul + 33..];
    }
    Ok(out)
}

enum Node<'a> {
    File(&'a str, Id),
    Dir(BTreeMap<&'a str, Node<'a>>),
}

/// The root tree of `files` (relative `/`-separated path → mode and blob id). `store` is
/// given each tree's bytes and returns its id (writing it when new).
pub(crate) fn build(
    files: &BTreeMap<String, (String, Id)>,
    store: &mut dyn FnMut(&[u8]) -> Result<Id>,
) -> Result<Id> {
    let mut root: BTreeMap<&str, Node> = BTreeMap::new();
    for (path, (mode, id)) in files {
        let mut dir = &mut root;
        let mut parts = path.split('/').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                dir.insert(part, Node::File(mode, *id));
                break;
            }
            let node = dir
                .entry(part)
                .or_insert_with(|| Node::Dir(BTreeMap::new()));
            if let Node::File(..) = node {
                // A file and a folder of one name cannot both be: the folder wins.
                *node = Node::Dir(BTreeMap::new());
            }
            let Node::Dir(sub) = node else {
                unreachable!("made a folder just above");
            };
            dir = sub;
        }
    }
    write_dir(&root, store)
}

fn write_dir(dir: &BTreeMap<&str, Node>, store: &mut dyn FnMut(&[u8]) -> Result<Id>) -> Result<Id> {
    let mut bytes = Vec::new();
    for (name, node) in dir {
        let (mode, id) = match node {
            Node::File(mode, id) => (*mode, *id),
            Node::Dir(sub) => (FOLDER, write_dir(sub, store)?),
        };
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&id);
    }
    store(&bytes)
}

/// Every file of the tree `root`: path → (mode, blob id). `read` returns a tree's bytes.
pub(crate) fn files(
    root: &Id,
    read: &mut dyn FnMut(&Id) -> Result<Vec<u8>>,
) -> Result<BTreeMap<String, (String, Id)>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![(String::new(), *root)];
    while let Some((prefix, id)) = todo.pop() {
        for e in parse(&read(&id)?)? {
            let path = if prefix.is_empty() {
                e.name
            } else {
                format!("{prefix}/{}", e.name)
            };
            if e.mode == FOLDER {
                todo.push((path, e.id));
            } else {
                out.insert(path, (e.mode, e.id));
            }
        }
    }
    Ok(out)
}
