//! Skills: folders holding a `SKILL.md` with YAML front matter (`name` ≤ 64 characters,
//! `description` ≤ 1024). Found in `.agents/skills` and Claude Code's `.claude/skills` from the
//! repo root down to the cwd, `~/.agents/skills` and `~/.claude/skills`, and the bundled
//! `skills/` folder (embedded in the binary). A skill closer to the cwd overrides one of the
//! same name further away; repo skills override user skills, which override bundled ones; in
//! one folder `.agents/skills` overrides `.claude/skills`.
//!
//! Repo skills are read through [`StartupReads`]: a skill folder or SKILL.md that links
//! outside the workspace is skipped with a warning. `~/.agents/skills` is the user's own.

pub(crate) mod front_matter;

use std::collections::BTreeMap;
use std::path::Path;

use crate::workspace::startup::{Scope as ReadScope, StartupReads};

/// Where skills live in a folder, lowest precedence first: Claude Code's, then ours (Codex's).
const PLACES: [&str; 2] = [".claude/skills", ".agents/skills"];

/// A SKILL.md longer than this is skipped.
const MAX_SKILL_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Scope {
    Bundled,
    User,
    Repo,
}

impl Scope {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Scope::Bundled => "Built-in",
            Scope::User => "User",
            Scope::Repo => "Project",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Skill {
    pub name: String,
    pub description: String,
    /// Where the model can read it; bundled skills use a `builtin://` path.
    pub path: String,
    pub scope: Scope,
    pub body: String,
}

/// A bundled skill, checked and parsed by build.rs.
struct Bundled {
    dir: &'static str,
    name: &'static str,
    description: &'static str,
    text: &'static str,
    body_start: usize,
}

include!(concat!(env!("OUT_DIR"), "/bundled_skills.rs"));

/// The text of a bundled skill file, for `builtin://skills/<name>/SKILL.md` paths.
pub(crate) fn read_builtin(path: &str) -> Option<&'static str> {
    let name = path
        .strip_prefix("builtin://skills/")?
        .strip_suffix("/SKILL.md")?;
    BUNDLED.iter().find(|b| b.dir == name).map(|b| b.text)
}

/// Parses a SKILL.md; Err says what is wrong.
pub(crate) fn parse(
    text: &str,
    dir_name: &str,
    path: String,
    scope: Scope,
) -> Result<Skill, String> {
    let p = front_matter::parse(text, dir_name)?;
    Ok(Skill {
        name: p.name,
        description: p.description,
        path,
        scope,
        body: text[p.body_start..].to_string(),
    })
}

/// Skills and the warnings for the ones that were skipped.
#[derive(Debug, Default, Clone)]
pub(crate) struct Discovered {
    pub skills: Vec<Skill>,
    pub warnings: Vec<String>,
}

#[cfg(test)]
impl Discovered {
    fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }
}

/// The bundled skills (parsed at build time).
fn bundled() -> impl Iterator<Item = Skill> {
    BUNDLED.iter().map(|b| Skill {
        name: b.name.to_string(),
        description: b.description.to_string(),
        path: format!("builtin://skills/{}/SKILL.md", b.dir),
        scope: Scope::Bundled,
        body: b.text[b.body_start..].to_string(),
    })
}

/// Finds every skill for a session in `cwd`; `user_home` is the user's home folder. What
/// `reads` skipped is in its warnings.
pub(crate) fn discover(
    reads: &mut StartupReads,
    cwd: &Path,
    user_home: Option<&Path>,
) -> Discovered {
    let mut by_name: BTreeMap<String, Skill> = BTreeMap::new();
    let mut warnings = Vec::new();
    // Lowest precedence first; later inserts replace earlier ones.
    for s in bundled() {
        by_name.insert(s.name.clone(), s);
    }
    if let Some(home) = user_home {
        for place in PLACES {
            scan(
                reads,
                &home.join(place),
                ReadScope::User,
                Scope::User,
                &mut by_name,
                &mut warnings,
            );
        }
    }
    let root = crate::workspace::agents_md::git_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let mut chain: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .collect();
    chain.reverse();
    for dir in chain {
        for place in PLACES {
            scan(
                reads,
                &dir.join(place),
                ReadScope::Project { folder: dir },
                Scope::Repo,
                &mut by_name,
                &mut warnings,
            );
        }
    }
    Discovered {
        skills: by_name.into_values().collect(),
        warnings,
    }
}

fn scan(
    reads: &mut StartupReads,
    dir: &Path,
    read_scope: ReadScope<'_>,
    scope: Scope,
    out: &mut BTreeMap<String, Skill>,
    warnings: &mut Vec<String>,
) {
    for sub in reads.list_dir(dir, read_scope) {
        if !sub.is_dir {
            continue;
        }
        let file = sub.path.join("SKILL.md");
        let Some(read) = reads.read_text(&file, MAX_SKILL_BYTES, read_scope) else {
            continue;
        };
        if read.truncated {
            let w = format!(
                "skipped skill {}: it is over {} KiB",
                file.display(),
                MAX_SKILL_BYTES / 1024
            );
            tracing::warn!("{w}");
            warnings.push(w);
            continue;
        }
        match parse(&read.text, &sub.name, file.display().to_string(), scope) {
            Ok(s) => {
                out.insert(s.name.clone(), s);
            }
            Err(e) => {
                let w = format!("skipped skill {}: {e}", file.display());
                tracing::warn!("{w}");
                warnings.push(w);
            }
        }
    }
}

/// The user message that invokes a skill explicitly (`/<name> args`).
pub(crate) fn invocation(skill: &Skill, args: &str) -> String {
    let body = skill.body.replace("$ARGUMENTS", args);
    let mut out = format!(
        "<skill>\n<name>{}</name>\n<path>{}</path>\n{}\n</skill>",
        skill.name,
        skill.path,
        body.trim_end()
    );
    if !args.trim().is_empty() && !skill.body.contains("$ARGUMENTS") {
        out.push_str(&format!("\n\nArguments: {}", args.trim()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_skills_parse() {
        let d = discover(
            &mut StartupReads::default(),
            Path::new("/nonexistent-dir-for-test"),
            None,
        );
        let names: Vec<&str> = d.skills.iter().map(|s| s.name.as_str()).collect();
        for n in ["commit-message", "explain-error", "review", "write-tests"] {
            assert!(names.contains(&n), "{names:?}");
        }
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[test]
    fn claude_codes_skill_folders_are_read_and_ours_win_in_one_folder() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let r = std::fs::canonicalize(repo.path()).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        let skill = |dir: &Path, name: &str, description: &str| {
            std::fs::create_dir_all(dir.join(name)).unwrap();
            std::fs::write(
                dir.join(name).join("SKILL.md"),
                format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
            )
            .unwrap();
        };
        skill(&r.join(".claude/skills"), "pdf", "Claude's pdf");
        skill(&r.join(".claude/skills"), "lint", "Claude's lint");
        skill(&r.join(".agents/skills"), "lint", "Our lint");
        skill(&home.path().join(".claude/skills"), "mine", "My own");
        let mut reads = StartupReads::new(std::slice::from_ref(&r));
        let d = discover(&mut reads, &r, Some(home.path()));
        assert_eq!(d.get("pdf").unwrap().description, "Claude's pdf");
        assert_eq!(d.get("lint").unwrap().description, "Our lint");
        assert_eq!(d.get("mine").unwrap().scope, Scope::User);
    }

    #[test]
    fn repo_overrides_bundled_and_invalid_is_skipped_with_a_warning() {
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join(".agents/skills/review")).unwrap();
        std::fs::write(
            r.join(".agents/skills/review/SKILL.md"),
            "---\nname: review\ndescription: Our own review checklist\n---\nUse our checklist.\n",
        )
        .unwrap();
        std::fs::create_dir_all(r.join(".agents/skills/broken")).unwrap();
        std::fs::write(
            r.join(".agents/skills/broken/SKILL.md"),
            "---\nname: [unclosed\n---\nx\n",
        )
        .unwrap();
        std::fs::create_dir_all(r.join(".agents/skills/nodesc")).unwrap();
        std::fs::write(
            r.join(".agents/skills/nodesc/SKILL.md"),
            "---\nname: nodesc\n---\nx\n",
        )
        .unwrap();
        std::fs::create_dir_all(r.join("sub/.agents/skills/deploy")).unwrap();
        std::fs::write(
            r.join("sub/.agents/skills/deploy/SKILL.md"),
            "---\ndescription: \"Deploys: the $ARGUMENTS env\"\n---\nDeploy to $ARGUMENTS.\n",
        )
        .unwrap();
        let cwd = std::fs::canonicalize(r.join("sub")).unwrap();
        let mut reads = StartupReads::new(std::slice::from_ref(&cwd));
        let d = discover(&mut reads, &cwd, None);
        let review = d.get("review").unwrap();
        assert_eq!(review.scope, Scope::Repo);
        assert_eq!(review.description, "Our own review checklist");
        let deploy = d.get("deploy").unwrap();
        assert_eq!(deploy.description, "Deploys: the $ARGUMENTS env");
        assert!(d.get("broken").is_none() && d.get("nodesc").is_none());
        assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
        assert!(
            d.warnings
                .iter()
                .any(|w| w.contains("description is required"))
        );
        let expanded = invocation(d.get("deploy").unwrap(), "staging");
        assert!(expanded.contains("Deploy to staging."), "{expanded}");
        assert!(d.get("nope").is_none());
    }

    /// A repo skill folder or SKILL.md that links outside the workspace is skipped and named;
    /// the user's own skills may link anywhere.
    #[cfg(unix)]
    #[test]
    fn repo_skills_linking_outside_are_skipped_user_skills_are_not() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = std::fs::canonicalize(repo.path()).unwrap();
        let o = outside.path();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(o.join("evil")).unwrap();
        std::fs::write(
            o.join("evil/SKILL.md"),
            "---\nname: evil\ndescription: DECOY outside\n---\nx\n",
        )
        .unwrap();
        std::fs::create_dir_all(r.join(".agents/skills/file-link")).unwrap();
        std::os::unix::fs::symlink(o.join("evil"), r.join(".agents/skills/evil")).unwrap();
        std::os::unix::fs::symlink(
            o.join("evil/SKILL.md"),
            r.join(".agents/skills/file-link/SKILL.md"),
        )
        .unwrap();
        std::fs::create_dir_all(home.path().join(".agents/skills")).unwrap();
        std::os::unix::fs::symlink(o.join("evil"), home.path().join(".agents/skills/evil"))
            .unwrap();
        let mut reads = StartupReads::new(std::slice::from_ref(&r));
        let d = discover(&mut reads, &r, None);
        assert!(d.get("evil").is_none());
        let w = reads.take_warnings();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w.iter().all(|w| w.contains("outside the workspace")),
            "{w:?}"
        );
        let d = discover(&mut reads, &r, Some(home.path()));
        assert_eq!(d.get("evil").unwrap().scope, Scope::User);
    }

    #[test]
    fn limits_are_enforced() {
        let long = "x".repeat(65);
        let err = parse(
            &format!("---\nname: {long}\ndescription: d\n---\n"),
            "d",
            "p".into(),
            Scope::Repo,
        )
        .unwrap_err();
        assert!(err.contains("64"));
        let err = parse(
            &format!("---\ndescription: {}\n---\n", "y".repeat(1025)),
            "d",
            "p".into(),
            Scope::Repo,
        )
        .unwrap_err();
        assert!(err.contains("1024"));
        assert!(parse("no front matter", "d", "p".into(), Scope::Repo).is_err());
    }
}
