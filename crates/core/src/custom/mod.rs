//! Custom agents and custom commands from files, in the formats users already have: Claude
//! Code's `agents/*.md` and `commands/*.md`, Codex's `agents/*.toml`, Gemini CLI's
//! `commands/*.toml`, and ours under `$OPENINTERPRETER_HOME` and `.openinterpreter/`.
//!
//! The user's folders are always read; a project's only when the user trusted it
//! (`config::trust`), from its top down to the working folder. Lowest precedence first: the
//! user's (Claude's, then Codex's or Gemini's, then ours), then the project's folders in the
//! same order, a closer folder over a farther one. A broken file is named in a warning and
//! left out; the rest load.

pub(crate) mod agents;
pub(crate) mod commands;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) use agents::CustomAgent;
pub(crate) use commands::CustomCommand;

use crate::workspace::startup::{Scope, StartupReads};

/// A file longer than this is left out with a warning.
pub(crate) const MAX_FILE_BYTES: usize = 128 * 1024;
/// Files read from one folder at most (a folder of thousands is a mistake, not a library).
const MAX_FILES: usize = 200;
/// How deep command subfolders (`dir:name`) are read.
const MAX_DEPTH: usize = 3;

/// Agent folders in one place, lowest precedence first (`config::trust` lists these and
/// the command folders as what trusting a project loads).
const AGENT_PLACES: [&str; 3] = [".claude/agents", ".codex/agents", ".openinterpreter/agents"];
/// Command folders in one place, lowest precedence first.
const COMMAND_PLACES: [&str; 3] = [
    ".claude/commands",
    ".gemini/commands",
    ".openinterpreter/commands",
];

/// What the files define, and the warnings for the ones left out.
#[derive(Debug, Default, Clone)]
pub(crate) struct Custom {
    pub agents: Vec<CustomAgent>,
    pub commands: Vec<CustomCommand>,
    /// Where the read-only built-in subagents run (`explore_model`, resolved like an
    /// agent's model): the model, and its provider when not the session's.
    pub explore_model: Option<(String, Option<String>)>,
    pub warnings: Vec<String>,
}

/// Where to look: our home folder, the user's home, and a trusted project (its top and the
/// working folder).
pub(crate) struct Places<'a> {
    pub home: &'a Path,
    pub user_home: Option<&'a Path>,
    pub project: Option<(&'a Path, &'a Path)>,
}

/// One folder to read, and whose it is.
struct Folder<'a> {
    dir: PathBuf,
    scope: Scope<'a>,
}

/// The folders of `places` for `kinds` (`AGENT_PLACES` or `COMMAND_PLACES`), lowest
/// precedence first; `ours` is the folder's name under our home (`agents`, `commands`).
fn folders<'a>(places: &Places<'a>, kinds: [&str; 3], ours: &str) -> Vec<Folder<'a>> {
    let mut out = Vec::new();
    if let Some(home) = places.user_home {
        for place in &kinds[..2] {
            out.push(Folder {
                dir: home.join(place),
                scope: Scope::User,
            });
        }
    }
    out.push(Folder {
        dir: places.home.join(ours),
        scope: Scope::User,
    });
    if let Some((root, cwd)) = places.project {
        for dir in project_chain(root, cwd) {
            for place in kinds {
                out.push(Folder {
                    dir: dir.join(place),
                    scope: Scope::Project { folder: root },
                });
            }
        }
    }
    out
}

/// The folders from the project's top down to `cwd`.
fn project_chain<'a>(root: &Path, cwd: &'a Path) -> Vec<&'a Path> {
    let mut chain: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .collect();
    chain.reverse();
    chain
}

/// Reads every agent and command file of `places`.
pub(crate) fn discover(reads: &mut StartupReads, places: &Places<'_>) -> Custom {
    let mut warnings = Vec::new();
    let mut agents: BTreeMap<String, CustomAgent> = BTreeMap::new();
    for folder in folders(places, AGENT_PLACES, "agents") {
        for (path, text) in files(reads, &folder, 0, &mut warnings) {
            match agents::parse(&path, &text) {
                Ok(a) => {
                    agents.insert(a.name.clone(), a);
                }
                Err(e) => warnings.push(format!("skipped agent {}: {e}", path.display())),
            }
        }
    }
    let mut commands: BTreeMap<String, CustomCommand> = BTreeMap::new();
    for folder in folders(places, COMMAND_PLACES, "commands") {
        for (path, text) in files(reads, &folder, MAX_DEPTH, &mut warnings) {
            let name = command_name(&folder.dir, &path);
            match commands::parse(&path, name, &text) {
                Ok(c) => {
                    commands.insert(c.name.clone(), c);
                }
                Err(e) => warnings.push(format!("skipped command {}: {e}", path.display())),
            }
        }
    }
    for w in &warnings {
        tracing::warn!("{w}");
    }
    Custom {
        agents: agents.into_values().collect(),
        commands: commands.into_values().collect(),
        explore_model: None,
        warnings,
    }
}

/// A command's name: its path under the commands folder without the extension, folders
/// joined by `:` (`git/commit.md` is `git:commit`).
fn command_name(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path).with_extension("");
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(":")
}

/// The `.md` and `.toml` files of a folder (and its subfolders down to `depth`), each read
/// up to [`MAX_FILE_BYTES`]; a longer one is named in a warning and left out.
fn files(
    reads: &mut StartupReads,
    folder: &Folder<'_>,
    depth: usize,
    warnings: &mut Vec<String>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut pending = vec![(folder.dir.clone(), 0)];
    while let Some((dir, level)) = pending.pop() {
        for entry in reads.list_dir(&dir, folder.scope) {
            if entry.name.starts_with('.') {
                continue;
            }
            if entry.is_dir {
                if level < depth {
                    pending.push((entry.path, level + 1));
                }
                continue;
            }
            let known = Path::new(&entry.name)
                .extension()
                .is_some_and(|e| e == "md" || e == "toml");
            if !known {
                continue;
            }
            if out.len() == MAX_FILES {
                warnings.push(format!(
                    "read only the first {MAX_FILES} files of {}",
                    folder.dir.display()
                ));
                return out;
            }
            let Some(read) = reads.read_text(&entry.path, MAX_FILE_BYTES, folder.scope) else {
                continue;
            };
            if read.truncated {
                warnings.push(format!(
                    "skipped {}: it is over {} KiB",
                    entry.path.display(),
                    MAX_FILE_BYTES / 1024
                ));
                continue;
            }
            out.push((entry.path, read.text));
        }
    }
    out.sort();
    out
}

/// Front matter's `tools`-like fields: Claude Code writes a comma-separated string, others
/// a YAML list.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
pub(crate) enum NameList {
    Comma(String),
    List(Vec<String>),
}

impl NameList {
    pub(crate) fn names(&self) -> Vec<String> {
        let split = |s: &str| -> Vec<String> {
            s.split([',', ' '])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect()
        };
        match self {
            NameList::Comma(s) => split(s),
            NameList::List(v) => v.iter().flat_map(|s| split(s)).collect(),
        }
    }
}

/// Front matter as YAML; when that fails, as plain `key: value` lines, the way Claude Code
/// reads `argument-hint: [pr-number] [priority]` (not valid YAML, and in its own docs).
pub(crate) fn front_matter<T: serde::de::DeserializeOwned>(yaml: &str) -> Result<T, String> {
    let yaml_error = match serde_saphyr::from_str(yaml) {
        Ok(v) => return Ok(v),
        Err(e) => format!("invalid front matter (its line 1 is the file's line 2): {e}"),
    };
    let mut map = serde_json::Map::new();
    for line in yaml.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let plain = line.split_once(':').filter(|(k, _)| {
            !k.is_empty() && !k.starts_with(char::is_whitespace) && !k.contains(' ')
        });
        let Some((key, value)) = plain else {
            return Err(yaml_error);
        };
        let value = value.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q))
            .unwrap_or(value);
        map.insert(key.to_string(), serde_json::Value::from(unquoted));
    }
    serde_json::from_value(serde_json::Value::Object(map)).map_err(|_| yaml_error)
}

/// A name given in a file, checked: up to 64 characters, no spaces or slashes.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.chars().count() > 64 {
        return Err("the name is longer than 64 characters".into());
    }
    if name.contains(char::is_whitespace) || name.contains(['/', '\\']) {
        return Err(format!(
            "the name `{name}` must not contain spaces or slashes"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn every_place_is_read_the_closer_wins_and_an_untrusted_project_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (home, user, top) = (base.join("oi"), base.join("u"), base.join("p"));
        let agent = |name: &str, d: &str| {
            format!("---\nname: {name}\ndescription: {d}\n---\nYou are {d}.\n")
        };
        write(
            &user.join(".claude/agents/rev.md"),
            &agent("rev", "claude's"),
        );
        write(
            &user.join(".codex/agents/rev.toml"),
            "name = \"rev\"\ndescription = \"codex's\"\ndeveloper_instructions = \"x\"\n",
        );
        write(&home.join("agents/mine.md"), &agent("mine", "ours"));
        write(
            &top.join(".claude/agents/rev.md"),
            &agent("rev", "project's"),
        );
        write(&top.join(".claude/agents/bad.md"), "---\nname: [\n---\n");
        write(
            &top.join(".claude/commands/git/commit.md"),
            "Commit $ARGUMENTS\n",
        );
        write(
            &top.join(".gemini/commands/plan.toml"),
            "prompt = \"Plan {{args}}\"\n",
        );
        write(
            &user.join(".gemini/commands/plan.toml"),
            "prompt = \"Mine\"\n",
        );
        let mut reads = StartupReads::new(std::slice::from_ref(&top));
        let mut places = Places {
            home: &home,
            user_home: Some(&user),
            project: None,
        };
        let c = discover(&mut reads, &places);
        let names: Vec<_> = c
            .agents
            .iter()
            .map(|a| (&*a.name, &*a.description))
            .collect();
        assert_eq!(names, [("mine", "ours"), ("rev", "codex's")]);
        assert_eq!(c.commands.len(), 1);
        assert_eq!(c.commands[0].expand("x"), "Mine\n\n/plan x");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        places.project = Some((&top, &top));
        let c = discover(&mut reads, &places);
        let rev = c.agents.iter().find(|a| a.name == "rev").unwrap();
        assert_eq!(rev.description, "project's");
        let names: Vec<_> = c.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["git:commit", "plan"]);
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("bad.md"), "{:?}", c.warnings);
    }

    /// A project's agent file that links outside the workspace is not read; the user's own
    /// may link anywhere.
    #[cfg(unix)]
    #[test]
    fn a_project_file_linking_outside_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (top, outside, home) = (base.join("p"), base.join("o"), base.join("h"));
        write(
            &outside.join("evil.md"),
            "---\ndescription: DECOY\n---\nYou obey.\n",
        );
        std::fs::create_dir_all(top.join(".claude/agents")).unwrap();
        std::fs::create_dir_all(home.join("agents")).unwrap();
        std::os::unix::fs::symlink(outside.join("evil.md"), top.join(".claude/agents/evil.md"))
            .unwrap();
        std::os::unix::fs::symlink(outside.join("evil.md"), home.join("agents/mine.md")).unwrap();
        let mut reads = StartupReads::new(std::slice::from_ref(&top));
        let places = Places {
            home: &home,
            user_home: None,
            project: Some((&top, &top)),
        };
        let c = discover(&mut reads, &places);
        let names: Vec<_> = c.agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["mine"]);
        let w = reads.take_warnings();
        assert!(
            w.iter().any(|w| w.contains("outside the workspace")),
            "{w:?}"
        );
    }

    #[test]
    fn a_file_over_the_bound_is_named_and_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        let big = format!("---\ndescription: d\n---\n{}", "x".repeat(MAX_FILE_BYTES));
        write(&home.join("commands/big.md"), &big);
        let places = Places {
            home: &home,
            user_home: None,
            project: None,
        };
        let c = discover(&mut StartupReads::default(), &places);
        assert!(c.commands.is_empty());
        assert!(c.warnings[0].contains("big.md") && c.warnings[0].contains("KiB"));
    }
}
