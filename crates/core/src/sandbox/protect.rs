//! What the agent trusts inside the folders a command may write: each writable root's `.git`
//! (its config, hooks and objects; a worktree's or submodule's git folder too), its
//! `.codex`, `.openinterpreter` and `.claude` (a trusted project's own config and rules), and
//! the agent's own home (`config.toml`, MCP definitions, skills, sessions). A confined
//! command may read them, never write them: Linux bind-mounts them read-only in a mount
//! namespace of the command's own (`mountns.rs`), or, where namespaces are refused, grants
//! Landlock rights to everything beside them (`grants`); macOS denies writes under them in the
//! Seatbelt profile.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The agent homes of this process's sessions.
static HOMES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Makes `home` (a session's `OPENINTERPRETER_HOME`) read-only to confined commands.
pub(crate) fn protect_home(home: &Path) {
    let real = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let mut homes = HOMES.lock().unwrap_or_else(|e| e.into_inner());
    if !homes.contains(&real) {
        homes.push(real);
    }
}

/// Folders of a project that the agent loads and acts on once the project is trusted (its
/// config, hooks, rules: `config::trust`), besides git's own.
const PROJECT_TRUSTED: &[&str] = &[".git", ".codex", ".openinterpreter", ".claude"];

/// The folder of `.claude` that holds Claude Code's worktrees (`tools::worktree`).
const CLAUDE_WORKTREES: &str = "worktrees";

/// What an agent home holds that a session loads and acts on.
const HOME_TRUSTED: &[&str] = &[
    "config.toml",
    "mcp.json",
    "skills",
    "agents",
    "commands",
    "hooks",
    "rules",
    "prompts",
    "AGENTS.md",
];

/// Whether the agent's own write to `path` touches what commands may not: a `.git`,
/// `.codex`, `.openinterpreter` or `.claude` folder's content, or what an agent home holds that
/// sessions load.
pub(crate) fn is_protected(path: &Path) -> bool {
    let parts: Vec<_> = path.components().map(|c| c.as_os_str()).collect();
    let trusted_folder = parts.iter().enumerate().any(|(i, c)| {
        PROJECT_TRUSTED.iter().any(|t| c == t)
            // Claude Code's worktrees live in `.claude` and are worked in.
            && !(*c == ".claude" && parts.get(i + 1).is_some_and(|n| *n == CLAUDE_WORKTREES))
    });
    if trusted_folder {
        return true;
    }
    let homes = HOMES.lock().unwrap_or_else(|e| e.into_inner());
    // The path may not exist yet: its nearest existing folder decides.
    let real = path
        .ancestors()
        .find_map(|a| {
            let rest = path.strip_prefix(a).ok()?;
            std::fs::canonicalize(a).ok().map(|r| r.join(rest))
        })
        .unwrap_or_else(|| path.to_path_buf());
    homes.iter().any(|h| {
        real.strip_prefix(h)
            .ok()
            .and_then(|rest| rest.components().next())
            .is_some_and(|first| HOME_TRUSTED.iter().any(|t| first.as_os_str() == *t))
    })
}

/// The protected paths under `writable` (real paths, existing ones only).
pub(crate) fn protected_under(writable: &[PathBuf]) -> Vec<PathBuf> {
    let homes = HOMES.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut out: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        let Ok(real) = std::fs::canonicalize(&p) else {
            return;
        };
        if writable.iter().any(|w| real.starts_with(w)) && !out.contains(&real) {
            out.push(real);
        }
    };
    for root in writable {
        let dot_git = root.join(".git");
        if dot_git.is_file() {
            // A worktree or submodule: `gitdir: <path>` names its git folder.
            if let Some(dir) = std::fs::read_to_string(&dot_git)
                .ok()
                .and_then(|s| s.strip_prefix("gitdir:").map(|d| root.join(d.trim())))
            {
                // Its config and hooks are the main repository's (`commondir`).
                if let Ok(common) = std::fs::read_to_string(dir.join("commondir")) {
                    add(dir.join(common.trim()));
                }
                add(dir);
            }
        }
        add(dot_git);
        // A trusted project's own config: a command must not write what a later session
        // loads as the user's choice.
        for dir in &PROJECT_TRUSTED[1..] {
            let folder = root.join(dir);
            // With Claude Code's worktrees in it, `.claude`'s other entries are protected
            // one by one (the folder itself then takes no new entries; see `grants`).
            if *dir == ".claude" && folder.join(CLAUDE_WORKTREES).is_dir() {
                for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                    if entry.file_name() != CLAUDE_WORKTREES {
                        add(entry.path());
                    }
                }
                continue;
            }
            add(folder);
        }
    }
    // A home that holds a writable folder (a workspace inside it) is the user's choice of
    // workspace: not made read-only around it.
    for home in homes {
        if !writable.iter().any(|w| w.starts_with(&home)) {
            add(home);
        }
    }
    // A path inside another protected one is covered by it.
    let all = out.clone();
    out.retain(|p| !all.iter().any(|q| q != p && p.starts_with(q)));
    out
}

/// Landlock rights cannot be taken away below a granted folder, so where a writable folder
/// holds a protected path, the grant goes to each of its entries but the one leading there,
/// folder by folder down to it. The folders on the way lose what needs their own rights
/// (creating, removing or renaming their direct entries): the price of no namespace.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn grants(writable: &[PathBuf], protected: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for w in writable {
        split(w, protected, &mut out);
    }
    out
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn split(dir: &Path, protected: &[PathBuf], out: &mut Vec<PathBuf>) {
    if protected.iter().any(|p| p == dir) {
        return;
    }
    if !protected.iter().any(|p| p.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            split(&path, protected, out);
        } else if !protected.contains(&path) {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protected_path_is_split_around_and_nested_ones_fold() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        for d in [".git/hooks", "src", "home/.openinterpreter"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("README.md"), "x").unwrap();
        protect_home(&root.join("home/.openinterpreter"));
        let writable = vec![root.clone()];
        let mut protected = protected_under(&writable);
        protected.sort();
        assert_eq!(
            protected,
            vec![root.join(".git"), root.join("home/.openinterpreter")]
        );
        let mut g = grants(&writable, &protected);
        g.sort();
        assert_eq!(g, vec![root.join("README.md"), root.join("src")]);
        // Outside every writable folder, nothing is protected (it is not writable at all).
        assert!(protected_under(&[root.join("src")]).is_empty());
    }

    #[test]
    fn a_worktree_protects_the_git_folder_it_names() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("main/.git/worktrees/wt")).unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(root.join("main/.git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
        let protected = protected_under(&[root.clone(), root.join("wt")]);
        // The main repository's git folder holds the worktree's: it alone is named.
        assert!(protected.contains(&root.join("main/.git")), "{protected:?}");
        assert!(protected.contains(&root.join("wt/.git")), "{protected:?}");
        assert_eq!(protected.len(), 2, "{protected:?}");
    }

    #[test]
    fn a_projects_own_config_folders_are_protected_like_git() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        for d in [".codex", ".openinterpreter", "src/.codex"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let mut protected = protected_under(std::slice::from_ref(&root));
        protected.sort();
        assert_eq!(
            protected,
            vec![root.join(".codex"), root.join(".openinterpreter")]
        );
        assert!(is_protected(&root.join(".codex/config.toml")));
        assert!(is_protected(&root.join("sub/.openinterpreter/hooks.json")));
        assert!(is_protected(&root.join(".claude/settings.local.json")));
        assert!(is_protected(&root.join(".claude/agents/x.md")));
        // Claude Code's worktrees are worked in.
        assert!(!is_protected(&root.join(".claude/worktrees/w/src/a.rs")));
        assert!(!is_protected(&root.join("src/main.rs")));
    }
}
