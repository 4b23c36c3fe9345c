//! Git worktrees a session works in for a task (Claude Code's EnterWorktree and ExitWorktree):
//! `<repository>/.claude/worktrees/<name>` on a new branch `worktree-<name>` from HEAD, as
//! Claude Code lays them out. Git runs as the agent's own git (`sandbox::git`): the
//! repository's programs off (hooks, filters, fsmonitor), able to write only the repository's
//! folders, and only after the user was asked. The session then works in the worktree: its
//! folder, workspace boundary and prompt move there (`agent::Session::move_worktree`).

use std::io;
use std::path::{Path, PathBuf};

use crate::sandbox::git;

/// Where worktrees go, under the repository's top.
pub(crate) const WORKTREES: &str = ".claude/worktrees";
/// Longest worktree name, as Claude Code allows.
const NAME_MAX: usize = 64;

/// The worktree a session is working in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorktreeSession {
    /// The worktree's folder: the session's folder while it lasts.
    pub path: PathBuf,
    /// Its branch, when known.
    pub branch: Option<String>,
    /// The commit EnterWorktree started it from (commits after it are "not on the original
    /// branch"); `None` for a worktree entered by path.
    pub base: Option<String>,
    /// The session's folder before the first EnterWorktree (the repository's top).
    pub original: PathBuf,
    /// EnterWorktree made it: only such a worktree may be removed by ExitWorktree.
    pub created: bool,
}

/// A change of the session's folder a tool asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WorktreeMove {
    /// Work in this worktree from the next call on.
    Enter(Box<WorktreeSession>),
    /// Go back to the folder the session had before.
    Exit,
}

/// Claude Code's rule for names: `/`-separated segments of letters, digits, `.`, `_` and `-`,
/// 64 characters at most.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok_segment = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    if name.len() > NAME_MAX || !name.split('/').all(ok_segment) {
        return Err(format!(
            "Invalid worktree name {name:?}: each \"/\"-separated segment may contain only letters, digits, dots, underscores and dashes, {NAME_MAX} characters at most."
        ));
    }
    Ok(())
}

/// A name like Claude Code's generated ones (`bright-running-fox`).
pub(crate) fn random_name() -> String {
    const A: &[&str] = &[
        "bright", "calm", "eager", "gentle", "brave", "quiet", "swift", "tidy", "keen", "bold",
        "merry", "steady", "clever", "sunny", "lucky", "noble",
    ];
    const B: &[&str] = &[
        "running", "singing", "jumping", "hiking", "sailing", "dancing", "flying", "reading",
        "coding", "baking", "rowing", "drawing", "skating", "humming", "roaming", "writing",
    ];
    const C: &[&str] = &[
        "fox", "otter", "heron", "badger", "lynx", "owl", "panda", "falcon", "beaver", "koala",
        "tiger", "whale", "robin", "bison", "gecko", "moose",
    ];
    let b = *uuid::Uuid::new_v4().as_bytes();
    let pick = |list: &[&'static str], byte: u8| list[usize::from(byte) % list.len()];
    format!("{}-{}-{}", pick(A, b[0]), pick(B, b[1]), pick(C, b[2]))
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// The top of the repository `dir` is in (its real path).
pub(crate) fn repo_top(dir: &Path) -> io::Result<PathBuf> {
    let top = text(git::run(dir, &["rev-parse", "--show-toplevel"], None)?);
    std::fs::canonicalize(top)
}

/// The repository's shared git folder (`.git` of the main worktree).
fn common_dir(dir: &Path) -> io::Result<PathBuf> {
    let out = text(git::run(dir, &["rev-parse", "--git-common-dir"], None)?);
    std::fs::canonicalize(dir.join(out))
}

/// The worktrees git knows for the repository of `dir`, with their branches.
pub(crate) fn registered(dir: &Path) -> io::Result<Vec<(PathBuf, Option<String>)>> {
    let out = text(git::run(dir, &["worktree", "list", "--porcelain"], None)?);
    let mut found = Vec::new();
    for block in out.split("\n\n") {
        let mut path = None;
        let mut branch = None;
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                path = std::fs::canonicalize(p).ok();
            } else if let Some(b) = line.strip_prefix("branch ") {
                branch = Some(b.trim_start_matches("refs/heads/").to_string());
            }
        }
        found.extend(path.map(|p| (p, branch)));
    }
    Ok(found)
}

/// Makes `<top>/.claude/worktrees/<name>` on a new branch `worktree-<name>` from HEAD.
pub(crate) fn create(top: &Path, name: &str, original: &Path) -> io::Result<WorktreeSession> {
    let dir = top.join(WORKTREES).join(name);
    let branch = format!("worktree-{name}");
    let base = text(
        git::run(top, &["rev-parse", "--verify", "HEAD"], None).map_err(|_| {
            io::Error::other("the repository has no commit yet: a worktree starts from HEAD")
        })?,
    );
    let writable = vec![top.to_path_buf(), common_dir(top)?];
    let dir_arg = dir.to_string_lossy().into_owned();
    git::run_writing(
        top,
        &["worktree", "add", "-b", &branch, &dir_arg, &base],
        writable,
    )?;
    Ok(WorktreeSession {
        path: std::fs::canonicalize(&dir)?,
        branch: Some(branch),
        base: Some(base),
        original: original.to_path_buf(),
        created: true,
    })
}

/// What removing `wt` would lose: its uncommitted files, and its commits since it began.
pub(crate) fn unsaved_work(wt: &WorktreeSession) -> io::Result<Vec<String>> {
    let mut lost = Vec::new();
    let status = text(git::run(&wt.path, &["status", "--porcelain=v1"], None)?);
    let files: Vec<&str> = status.lines().map(|l| l.get(3..).unwrap_or(l)).collect();
    if !files.is_empty() {
        lost.push(format!(
            "{} uncommitted file(s): {}",
            files.len(),
            files.join(", ")
        ));
    }
    if let (Some(base), Some(branch)) = (&wt.base, &wt.branch) {
        let range = format!("{base}..{branch}");
        let n = text(git::run(&wt.path, &["rev-list", "--count", &range], None)?);
        if n != "0" && !n.is_empty() {
            lost.push(format!(
                "{n} commit(s) on {branch} not on the original branch"
            ));
        }
    }
    Ok(lost)
}

/// Removes `wt`'s folder and its branch (run from the repository's top).
pub(crate) fn remove(wt: &WorktreeSession) -> io::Result<()> {
    let top = &wt.original;
    let writable = vec![top.clone(), common_dir(top)?];
    let path = wt.path.to_string_lossy().into_owned();
    git::run_writing(
        top,
        &["worktree", "remove", "--force", &path],
        writable.clone(),
    )?;
    if let Some(branch) = &wt.branch {
        git::run_writing(top, &["branch", "-D", branch], writable)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_claude_codes_rule() {
        for ok in ["fix-login", "team/bug_12", "v1.2", &"a".repeat(64)] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "a b",
            "../up",
            "a//b",
            "x;rm",
            "é",
            &"a".repeat(65),
            "a/./b",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        let generated = random_name();
        assert!(check_name(&generated).is_ok(), "{generated}");
        assert_eq!(generated.split('-').count(), 3);
    }
}
