//! Trusted projects. A folder's own configuration (`.codex/config.toml` and
//! `.openinterpreter/config.toml`, from the project's top down to the working folder) loads
//! only once the user trusted the project, as Codex has it: `[projects."<top>"] trust_level =
//! "trusted" | "untrusted"` in the user's config.toml, so a folder Codex trusts is trusted here
//! too. The project is the top of the folder's git repository, else the folder. Trust is
//! never inherited: a folder inside a trusted one (a clone a command made there) is asked
//! about on its own, and nothing trusts a folder but the user's answer.

use std::path::{Path, PathBuf};

/// The user's answer for a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustLevel {
    /// Its config loads.
    Trusted,
    /// Its config never loads, and nobody asks again.
    Untrusted,
}

impl TrustLevel {
    /// As config.toml spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustLevel::Trusted => "trusted",
            TrustLevel::Untrusted => "untrusted",
        }
    }
}

/// Where a session stands with its project's own files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectTrust {
    /// The project's top (what trust is recorded for).
    pub root: PathBuf,
    /// The user's answer, if there is one.
    pub level: Option<TrustLevel>,
    /// The project's own config files that trust governs, which exist (outermost first).
    pub files: Vec<PathBuf>,
    /// Its other files trust governs, which exist at its top: hooks, Claude Code's settings,
    /// rules, agents and commands.
    pub governed: Vec<PathBuf>,
}

impl ProjectTrust {
    /// The project's files load.
    pub fn trusted(&self) -> bool {
        self.level == Some(TrustLevel::Trusted)
    }

    /// The project has files of its own and the user has not answered: a face that can ask
    /// does, before the session starts.
    pub fn needs_answer(&self) -> bool {
        self.level.is_none() && self.has_own_files()
    }

    /// The project has files that load only once it is trusted.
    pub fn has_own_files(&self) -> bool {
        !self.files.is_empty() || !self.governed.is_empty()
    }

    /// Every file of its own that trust governs.
    pub fn own_files(&self) -> impl Iterator<Item = &PathBuf> {
        self.files.iter().chain(&self.governed)
    }

    /// What a face that cannot ask tells the user: the files left out and why.
    pub fn ignored_note(&self) -> Option<String> {
        if self.trusted() || !self.has_own_files() {
            return None;
        }
        let files: Vec<String> = self.own_files().map(|f| f.display().to_string()).collect();
        let why = match self.level {
            Some(TrustLevel::Untrusted) => "it is marked untrusted in config.toml",
            _ => "it is not trusted yet",
        };
        Some(format!(
            "ignoring the project's own files ({}): {why}. Trust {} to load them (`--trust` in exec, or `[projects.\"{}\"] trust_level = \"trusted\"` in config.toml).",
            files.join(", "),
            self.root.display(),
            self.root.display()
        ))
    }
}

/// The project `cwd` is in: the top of its git repository (the nearest folder holding a
/// `.git` folder or file), else `cwd` itself. Real paths.
pub fn project_root(cwd: &Path) -> PathBuf {
    let cwd = real(cwd);
    cwd.ancestors()
        .find(|a| a.join(".git").exists())
        .unwrap_or(&cwd)
        .to_path_buf()
}

/// `path`'s real path as the user writes it: on Windows without the `\\?\` prefix that
/// `canonicalize` adds, as Codex keys its projects.
fn real(path: &Path) -> PathBuf {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if cfg!(windows) {
        let s = real.to_string_lossy();
        if let Some(share) = s.strip_prefix(r"\\?\UNC\") {
            return PathBuf::from(format!(r"\\{share}"));
        }
        if let Some(rest) = s.strip_prefix(r"\\?\") {
            return PathBuf::from(rest);
        }
    }
    real
}

/// The answer recorded for `root` in the user's config table: the exact folder only.
pub(crate) fn recorded(user: &toml::Table, root: &Path) -> Option<TrustLevel> {
    let projects = user.get("projects")?.as_table()?;
    let key = root.to_string_lossy();
    let entry = projects
        .get(key.as_ref())
        .or_else(|| {
            // A path written with a trailing separator is the same folder.
            projects.iter().find_map(|(k, v)| {
                (Path::new(k.trim_end_matches(['/', '\\'])) == root).then_some(v)
            })
        })?
        .as_table()?;
    match entry.get("trust_level")?.as_str()? {
        "trusted" => Some(TrustLevel::Trusted),
        "untrusted" => Some(TrustLevel::Untrusted),
        _ => None,
    }
}

/// The project's config files that exist, from its top down to `cwd` (a closer one wins);
/// in each folder Codex's `.codex/config.toml`, then our `.openinterpreter/config.toml`.
pub(crate) fn config_files(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let cwd = real(cwd);
    let mut folders: Vec<&Path> = cwd
        .ancestors()
        .take_while(|a| a.starts_with(root))
        .collect();
    folders.reverse();
    folders
        .into_iter()
        .flat_map(|f| [".codex", ".openinterpreter"].map(|d| f.join(d).join("config.toml")))
        .filter(|p| p.is_file())
        .collect()
}

/// A project's files besides its config and custom folders that load only once it is
/// trusted: hooks, Claude Code's settings (hooks, permissions) and the MCP files
/// (`mcp_files`); the rules files are `rules::project_files`.
const GOVERNED: [&str; 7] = [
    ".codex/hooks.json",
    ".openinterpreter/hooks.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
];

/// The project's folders of custom agents and commands (the `custom` module reads them):
/// Claude Code's, Codex's, Gemini CLI's and ours.
const CUSTOM_FOLDERS: [&str; 6] = [
    ".claude/agents",
    ".codex/agents",
    ".openinterpreter/agents",
    ".claude/commands",
    ".gemini/commands",
    ".openinterpreter/commands",
];

/// The project's agent and command folders that exist, from its top down to `cwd`.
fn custom_folders(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let cwd = real(cwd);
    let mut folders: Vec<&Path> = cwd
        .ancestors()
        .take_while(|a| a.starts_with(root))
        .collect();
    folders.reverse();
    folders
        .into_iter()
        .flat_map(|f| CUSTOM_FOLDERS.map(|d| f.join(d)))
        .filter(|p| p.is_dir())
        .collect()
}

/// Where `cwd` stands: its project, the user's answer, and the project's files.
pub(crate) fn project_trust(user: &toml::Table, cwd: &Path) -> ProjectTrust {
    let root = project_root(cwd);
    let mut governed: Vec<PathBuf> = GOVERNED
        .iter()
        .map(|rel| root.join(rel))
        .filter(|p| p.exists())
        .collect();
    // Agent and command folders load only when trusted too, so a face asks for them.
    governed.extend(custom_folders(&root, cwd));
    // Rules files too: a project with only those is asked about like one with a config.
    governed.extend(super::rules::project_files(&root));
    governed.sort();
    governed.dedup();
    ProjectTrust {
        level: recorded(user, &root),
        files: config_files(&root, cwd),
        governed,
        root,
    }
}

/// A project file's table, ready to merge over the user's: parsed and checked like
/// config.toml, without `projects` (a project cannot trust itself or another) and `profile`.
pub(crate) fn project_layer(path: &Path) -> Result<toml::Table, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str::<super::ConfigToml>(&text)
        .map_err(|e| format!("invalid project config {}: {e}", path.display()))?;
    let mut table: toml::Table = toml::from_str(&text)
        .map_err(|e| format!("invalid project config {}: {e}", path.display()))?;
    table.remove("projects");
    table.remove("profile");
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_recorded_for_the_exact_project_only() {
        let user: toml::Table = toml::from_str(
            "[projects.\"/w/app\"]\ntrust_level = \"trusted\"\n[projects.\"/w/bad/\"]\ntrust_level = \"untrusted\"\n",
        )
        .unwrap();
        assert_eq!(
            recorded(&user, Path::new("/w/app")),
            Some(TrustLevel::Trusted)
        );
        assert_eq!(
            recorded(&user, Path::new("/w/bad")),
            Some(TrustLevel::Untrusted)
        );
        assert_eq!(recorded(&user, Path::new("/w/app/vendor/x")), None);
        assert_eq!(recorded(&user, Path::new("/w")), None);
    }

    #[test]
    fn config_files_run_from_the_top_down_and_the_project_is_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let top = real(dir.path());
        std::fs::create_dir_all(top.join(".git")).unwrap();
        let sub = top.join("crates/x");
        for f in [
            top.join(".codex/config.toml"),
            top.join(".openinterpreter/config.toml"),
            sub.join(".codex/config.toml"),
        ] {
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, "model = \"m\"\n").unwrap();
        }
        assert_eq!(project_root(&sub), top);
        assert_eq!(
            config_files(&top, &sub),
            [
                top.join(".codex/config.toml"),
                top.join(".openinterpreter/config.toml"),
                sub.join(".codex/config.toml")
            ]
        );
        let t = project_trust(&toml::Table::new(), &sub);
        assert!(t.needs_answer() && !t.trusted());
        // A project with only agent or command files asks too.
        std::fs::create_dir_all(sub.join(".claude/commands")).unwrap();
        let t = project_trust(&toml::Table::new(), &sub);
        assert_eq!(t.governed.last(), Some(&sub.join(".claude/commands")));
        assert!(t.ignored_note().unwrap().contains("not trusted yet"));
    }

    #[test]
    fn a_project_cannot_trust_itself() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(
            &p,
            "model = \"m\"\nprofile = \"p\"\n[projects.\"/elsewhere\"]\ntrust_level = \"trusted\"\n",
        )
        .unwrap();
        let t = project_layer(&p).unwrap();
        assert!(t.get("projects").is_none() && t.get("profile").is_none());
        std::fs::write(&p, "model = 3\n").unwrap();
        let err = project_layer(&p).unwrap_err();
        assert!(
            err.contains("config.toml") && err.contains("line 1"),
            "{err}"
        );
    }
}
