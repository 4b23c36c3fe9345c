//! docs/architecture.md's rules, checked on the code: which crate may depend on which
//! front-end library, the order of the core's modules, and a place on the map for every
//! module of every crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Libraries that belong to one face (or to the command line) and never to the core.
const FACE_LIBRARIES: &[&str] = &[
    "agent-client-protocol",
    "tower-lsp-server",
    "ratatui",
    "crossterm",
    "clap",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn map() -> String {
    std::fs::read_to_string(root().join("docs/architecture.md")).unwrap()
}

/// Every crate under `crates/`: its directory name and its manifest.
fn crates() -> Vec<(String, toml::Table)> {
    let mut all: Vec<(String, toml::Table)> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| {
            let text = std::fs::read_to_string(p.join("Cargo.toml")).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, text.parse().unwrap())
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// The names in `[dependencies]` and `[target.*.dependencies]` (not dev or build).
fn normal_dependencies(manifest: &toml::Table) -> BTreeSet<String> {
    let mut tables = vec![manifest.get("dependencies")];
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        tables.extend(targets.values().map(|t| t.get("dependencies")));
    }
    tables
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_table())
        .flat_map(|t| t.keys().cloned())
        .collect()
}

#[test]
fn the_core_has_no_face_library_and_each_belongs_to_one_crate() {
    let crates = crates();
    assert!(
        crates.len() >= 8,
        "{:?}",
        crates.iter().map(|c| &c.0).collect::<Vec<_>>()
    );
    for lib in FACE_LIBRARIES {
        let users: Vec<&str> = crates
            .iter()
            .filter(|(_, m)| normal_dependencies(m).contains(*lib))
            .map(|(name, _)| name.as_str())
            .collect();
        assert!(
            !users.contains(&"core"),
            "interpreter-core depends on {lib}"
        );
        assert!(
            users.len() <= 1,
            "{lib} is a dependency of {users:?}: one crate at most"
        );
    }
}

/// rmcp is the core's MCP client; its server side is the MCP server face's alone, so the
/// core never serves MCP itself.
#[test]
fn only_the_mcp_server_face_serves_mcp() {
    for (name, manifest) in crates() {
        let features: Vec<String> = manifest
            .get("dependencies")
            .and_then(|d| d.get("rmcp"))
            .and_then(|r| r.get("features"))
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect();
        let serves = features
            .iter()
            .any(|f| f == "server" || f.starts_with("transport-streamable-http-server"));
        assert!(
            !serves || name == "mcp-server",
            "crates/{name} enables rmcp's server side ({features:?}): only crates/mcp-server may"
        );
    }
}

/// The core's top-level modules as the map orders them, bottom up.
fn layers() -> Vec<String> {
    let map = map();
    let start = map
        .find("Bottom up, each uses only those")
        .expect("the layer list in docs/architecture.md");
    let rest = &map[start..];
    let list = rest
        .split("\n\n")
        .nth(1)
        .expect("the list follows its sentence");
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == "tests.rs" || name.ends_with("_tests.rs") || name == "proptests.rs"
}

/// A source file's text before its first `#[cfg(test)]`: the code the rules judge.
fn non_test_code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The non-test source files under `src`: each path relative to `src`, with its code.
fn sources(src: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .iter()
        .map(|f| {
            let rel = f
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, f)
        })
        .filter(|(rel, _)| !is_test_file(rel))
        .map(|(rel, f)| (rel, non_test_code(f)))
        .collect()
}

/// The top-level modules a file's non-test code names with `crate::`.
fn uses(text: &str) -> BTreeSet<String> {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let after = &code[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

#[test]
fn the_core_modules_only_use_the_layers_below_them() {
    let layers = layers();
    let src = root().join("crates/core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut modules = BTreeSet::new();
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let top = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || is_test_file(&rel) {
            continue;
        }
        modules.insert(top.clone());
        let text = std::fs::read_to_string(&file).unwrap();
        for used in uses(&text) {
            if used != top {
                edges.entry(top.clone()).or_default().insert(used);
            }
        }
    }
    let unplaced: Vec<&String> = modules.iter().filter(|m| !layers.contains(m)).collect();
    assert!(
        unplaced.is_empty(),
        "modules of the core missing from the layer list in docs/architecture.md: {unplaced:?}"
    );
    let rank = |m: &str| layers.iter().position(|l| l == m);
    for (from, to) in &edges {
        for used in to {
            let Some(used_rank) = rank(used) else {
                continue; // not a module: `crate::` in a string or a doc comment
            };
            assert!(
                used_rank < rank(from).unwrap(),
                "`{from}` uses `{used}`, which docs/architecture.md puts above it: {layers:?}"
            );
        }
    }
}

/// The sections of the map: each `### ` heading with the text under it.
fn sections(map: &str) -> Vec<(String, String)> {
    map.split("\n### ")
        .skip(1)
        .map(|s| {
            let (head, body) = s.split_once('\n').unwrap_or((s, ""));
            (head.to_string(), body.to_string())
        })
        .collect()
}

#[test]
fn every_module_has_a_place_on_the_map() {
    let map = map();
    let sections = sections(&map);
    let mut missing = Vec::new();
    for (krate, _) in crates() {
        let src = root().join("crates").join(&krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let rel = file
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if matches!(rel.as_str(), "lib.rs" | "main.rs") || is_test_file(&rel) {
                continue;
            }
            // A folder module is named as `folder/`; a file as `name.rs`.
            let name = match rel.strip_suffix("/mod.rs") {
                Some(dir) => format!("{}/", dir.rsplit('/').next().unwrap()),
                None => rel.rsplit('/').next().unwrap().to_string(),
            };
            let top = rel.split('/').next().unwrap();
            // The section of the module's crate, or of its top-level module in the core.
            let owner = if krate == "core" {
                let top = if top.ends_with(".rs") {
                    top.to_string()
                } else {
                    format!("{top}/")
                };
                format!("crates/core/src/{top}")
            } else {
                format!("crates/{krate}/")
            };
            let named = sections.iter().any(|(head, body)| {
                head.contains(&owner)
                    && (rel.split('/').count() == 1 && krate == "core"
                        || head.contains(&format!("`{owner}{name}`"))
                        || [format!("`{name}"), format!("/{name}")]
                            .iter()
                            .any(|n| body.contains(n.as_str()) || head.contains(n.as_str())))
            });
            if !named {
                missing.push(format!("crates/{krate}/src/{rel}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "modules docs/architecture.md does not name in their crate's (or core module's) section: {missing:#?}"
    );
}

/// A module folder's files (its root file aside: it declares the others and re-exports them)
/// and which of them each one names, through `super::` or `crate::` paths. A subfolder counts
/// as one file.
fn folder_imports(dir: &Path, module: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let mut nodes: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && path.join("mod.rs").is_file() {
            let mut files = Vec::new();
            rust_files(&path, &mut files);
            files.retain(|f| !is_test_file(&f.to_string_lossy()));
            nodes.insert(name, files);
        } else if let Some(stem) = name.strip_suffix(".rs")
            && !matches!(stem, "mod" | "lib" | "main")
            && !is_test_file(&name)
        {
            nodes.insert(stem.to_string(), vec![path]);
        }
    }
    let names: BTreeSet<String> = nodes.keys().cloned().collect();
    let crate_prefix = if module.is_empty() {
        "crate::".to_string()
    } else {
        format!("crate::{}::", module.join("::"))
    };
    let mut edges = BTreeMap::new();
    for (node, files) in &nodes {
        let mut used = BTreeSet::new();
        for file in files {
            let code = non_test_code(file);
            let code = code.as_str();
            // `super::` is the folder only in the folder's own files, not in a subfolder's.
            let mut prefixes = vec![crate_prefix.as_str()];
            if file.parent() == Some(dir) {
                prefixes.push("super::");
            }
            for prefix in prefixes {
                for (i, _) in code.match_indices(prefix) {
                    // `crate::agent::` is no prefix of `crate::agents::`, nor `super::` of
                    // `super::super::`.
                    if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                        continue;
                    }
                    used.extend(path_heads(&code[i + prefix.len()..]));
                }
            }
        }
        used.retain(|u| u != node && names.contains(u));
        edges.insert(node.clone(), used);
    }
    edges
}

/// The first segments a path names: `task::run` gives `task`, `{goal, undo::Mark}` both.
fn path_heads(after: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = after.strip_prefix('{') else {
        return vec![ident(after)];
    };
    let mut heads = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                heads.push(ident(&group[start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(ident(&group[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    heads
}

/// The strongly connected groups of more than one file: each is an import cycle.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reaches = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for next in edges.get(&n).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|n| (n, reaches(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in edges.keys() {
        if out.iter().any(|c| c.contains(n)) {
            continue;
        }
        let group: Vec<String> = edges
            .keys()
            .filter(|m| *m == n || (reach[n].contains(*m) && reach[*m].contains(n)))
            .cloned()
            .collect();
        if group.len() > 1 {
            out.push(group);
        }
    }
    out
}

/// Every module folder of every crate (`crates/<crate>/src` and each folder with a `mod.rs`),
/// with its module path.
fn module_folders() -> Vec<(PathBuf, Vec<String>)> {
    fn walk(dir: &Path, module: Vec<String>, out: &mut Vec<(PathBuf, Vec<String>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && path.join("mod.rs").is_file() {
                let mut sub = module.clone();
                sub.push(path.file_name().unwrap().to_string_lossy().into_owned());
                walk(&path, sub, out);
            }
        }
        out.push((dir.to_path_buf(), module));
    }
    let mut out = Vec::new();
    for (krate, _) in crates() {
        walk(
            &root().join("crates").join(krate).join("src"),
            Vec::new(),
            &mut out,
        );
    }
    out
}

/// No module folder's files import each other in a circle: each folder has a bottom layer
/// (state, wire) that imports no handler. `scripts/import-cycles.sh` prints the count.
#[test]
fn no_module_folder_has_an_import_cycle() {
    let mut found = Vec::new();
    for (dir, module) in module_folders() {
        let folder = dir.strip_prefix(root().join("crates")).unwrap();
        let folder = folder.to_string_lossy().replace('\\', "/");
        for cycle in cycles(&folder_imports(&dir, &module)) {
            found.push(format!("{folder}: {}", cycle.join(" ↔ ")));
        }
    }
    println!("import cycles: {}", found.len());
    for c in &found {
        println!("  {c}");
    }
    assert!(
        found.is_empty(),
        "import cycles among a folder's files: {found:#?}"
    );
}

/// What the faces share (`interpreter-face`) and pure text (`interpreter-text`) sit beside the
/// core, not in it: neither depends on the core, and the core on neither.
#[test]
fn shared_face_code_and_pure_text_live_beside_the_core() {
    let crates: BTreeMap<String, toml::Table> = crates().into_iter().collect();
    let core = normal_dependencies(&crates["core"]);
    for beside in ["face", "text"] {
        assert!(
            !core.contains(&format!("interpreter-{beside}")),
            "interpreter-core depends on interpreter-{beside}"
        );
        let deps = normal_dependencies(&crates[beside]);
        assert!(
            !deps.contains("interpreter-core"),
            "interpreter-{beside} depends on the core"
        );
    }
}

/// The core's public modules that only faces use, on purpose: the entry they open sessions
/// through.
const FACE_ENTRIES: &[&str] = &["sessions"];

/// Every `pub mod` of the core is used inside the core (outside its own files and tests):
/// code only a face needs lives in that face, or in `interpreter-face`/`interpreter-text`.
#[test]
fn every_public_module_of_the_core_is_used_inside_the_core() {
    let code = sources(&root().join("crates/core/src"));
    let mut unused = Vec::new();
    for (rel, text) in &code {
        let folder = match rel.strip_suffix("mod.rs").or(rel.strip_suffix("lib.rs")) {
            Some(dir) => dir.to_string(),
            None => format!("{}/", rel.trim_end_matches(".rs")),
        };
        for line in text.lines() {
            let Some(name) = line
                .strip_prefix("pub mod ")
                .and_then(|l| l.strip_suffix(';'))
            else {
                continue;
            };
            if FACE_ENTRIES.contains(&name) {
                continue;
            }
            let own = format!("{folder}{name}");
            let used = code.iter().any(|(other, text)| {
                other != &format!("{own}.rs")
                    && !other.starts_with(&format!("{own}/"))
                    && text.match_indices(&format!("{name}::")).any(|(i, _)| {
                        !text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
            });
            if !used {
                unused.push(own);
            }
        }
    }
    assert!(
        unused.is_empty(),
        "public modules of the core that no other core module uses (move them to their face): {unused:?}"
    );
}

/// Provider ids and model-family words live in `model/catalog.rs` only: routing, wire defaults,
/// key names and schema dialects ask the catalog. A string literal equal to one, anywhere else
/// outside tests, is a second definition (a harness's own name aside).
#[test]
fn provider_ids_and_family_words_are_written_only_in_the_catalog() {
    use crate::model::catalog;
    let harnesses = crate::harness::names();
    let mut names: BTreeSet<String> = catalog::PROVIDERS
        .iter()
        .map(|p| p.id.to_string())
        .collect();
    for (_, words) in catalog::FAMILIES {
        names.extend(words.iter().map(|w| w.to_string()));
    }
    names.retain(|n| !harnesses.contains(&n.as_str()));
    let mut found = Vec::new();
    for (krate, _) in crates() {
        for (rel, code) in sources(&root().join("crates").join(&krate).join("src")) {
            if rel.ends_with("model/catalog.rs") {
                continue;
            }
            let rel = format!("crates/{krate}/src/{rel}");
            for (i, literal) in code.split('"').enumerate() {
                if i % 2 == 1 && names.contains(literal) {
                    found.push(format!("{rel}: \"{literal}\""));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "provider ids or family words outside the catalog: {found:#?}"
    );
}

/// Every file the map names (`name.rs`, `folder/name.rs`, `scripts/x.sh`, …) exists: a file
/// that moved takes its line in the map with it.
#[test]
fn every_file_the_map_names_exists() {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if matches!(name.as_ref(), "target" | "node_modules" | ".git")
                || name.starts_with(".venv")
            {
                continue;
            }
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(format!("/{rel}"));
            }
        }
    }
    let root = root().canonicalize().unwrap();
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    let map = map();
    let mut missing = BTreeSet::new();
    for (i, token) in map.split('`').enumerate() {
        let named = i % 2 == 1
            && [".rs", ".sh", ".py", ".ts", ".lua", ".toml", ".sbpl"]
                .iter()
                .any(|ext| token.ends_with(ext))
            && token
                .chars()
                .all(|c| c.is_alphanumeric() || "_./-".contains(c));
        if named && !files.iter().any(|f| f.ends_with(&format!("/{token}"))) {
            missing.insert(token.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "files docs/architecture.md names that do not exist: {missing:?}"
    );
}
