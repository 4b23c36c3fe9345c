//! Reading, listing and searching files. Walks honour .gitignore through the `ignore` crate;
//! content search uses ripgrep's `grep-searcher`.

use globset::{Glob, GlobMatcher};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::WalkBuilder;
use std::path::{Path, PathBuf};

pub(crate) use crate::workspace::Buffers;

/// The buffers under `root` that a walk did not reach (files that exist only in memory), in
/// path order.
fn unwalked<'a>(
    buffers: &'a Buffers,
    root: &Path,
    walked: &std::collections::HashSet<PathBuf>,
) -> Vec<(&'a Path, &'a str)> {
    let mut extra: Vec<(&Path, &str)> = buffers
        .iter()
        .filter_map(|(p, t)| Some((p.as_path(), t.as_deref()?)))
        .filter(|(p, _)| p.starts_with(root) && !walked.contains(*p))
        .collect();
    extra.sort();
    extra
}

/// Cuts a line at `max` characters, marking the cut.
pub(crate) fn clip_line(line: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…[line truncated]", &line[..i]).into(),
        None => line.into(),
    }
}

fn walker(root: &Path, include_ignored: bool, max_depth: Option<usize>) -> ignore::Walk {
    WalkBuilder::new(root)
        .hidden(false)
        .git_ignore(!include_ignored)
        .git_global(!include_ignored)
        .git_exclude(!include_ignored)
        .ignore(!include_ignored)
        .parents(!include_ignored)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .max_depth(max_depth)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
}

/// Entries under `dir` up to `depth` levels, directories with a trailing `/`.
pub(crate) fn list_dir(dir: &Path, depth: usize, limit: usize) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    for entry in walker(dir, false, Some(depth.max(1))).flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let indent = "  ".repeat(entry.depth() - 1);
        let name = rel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(format!("{indent}{name}{}", if is_dir { "/" } else { "" }));
        if out.len() >= limit {
            return (out, true);
        }
    }
    (out, false)
}

/// Files under `root` whose path relative to `root` matches `pattern`.
pub(crate) fn glob(
    root: &Path,
    pattern: &str,
    include_ignored: bool,
    limit: usize,
    buffers: &Buffers,
) -> Result<(Vec<PathBuf>, bool), String> {
    let matches = glob_matcher(root, pattern)?;
    let mut out = Vec::new();
    let mut walked = std::collections::HashSet::new();
    for entry in walker(root, include_ignored, None).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        match buffers.get(entry.path()) {
            Some(None) => continue,
            Some(Some(_)) => {
                walked.insert(entry.path().to_path_buf());
            }
            None => {}
        }
        if !matches(entry.path()) {
            continue;
        }
        out.push(entry.path().to_path_buf());
        if out.len() >= limit {
            return Ok((out, true));
        }
    }
    for (path, _) in unwalked(buffers, root, &walked) {
        if matches(path) {
            out.push(path.to_path_buf());
            if out.len() >= limit {
                return Ok((out, true));
            }
        }
    }
    Ok((out, false))
}

/// Whether a path under `root` matches `pattern` (relative to `root`; a bare name like
/// `*.rs` matches at any depth, as users expect).
fn glob_matcher<'a>(root: &'a Path, pattern: &str) -> Result<impl Fn(&Path) -> bool + 'a, String> {
    let matcher: GlobMatcher = Glob::new(pattern)
        .map_err(|e| format!("invalid glob `{pattern}`: {e}"))?
        .compile_matcher();
    let any_depth = (!pattern.contains('/'))
        .then(|| Glob::new(&format!("**/{pattern}")).ok())
        .flatten()
        .map(|g| g.compile_matcher());
    Ok(move |path: &Path| {
        let rel = path.strip_prefix(root).unwrap_or(path);
        matcher.is_match(rel) || any_depth.as_ref().is_some_and(|m| m.is_match(rel))
    })
}

/// Folders under `root` (not `root` itself) whose path relative to `root` matches `pattern`.
pub(crate) fn glob_dirs(
    root: &Path,
    pattern: &str,
    include_ignored: bool,
    limit: usize,
) -> Result<Vec<PathBuf>, String> {
    let matches = glob_matcher(root, pattern)?;
    Ok(walker(root, include_ignored, None)
        .flatten()
        .filter(|e| e.depth() > 0 && e.file_type().is_some_and(|t| t.is_dir()))
        .filter(|e| matches(e.path()))
        .map(|e| e.path().to_path_buf())
        .take(limit)
        .collect())
}

/// How [`grep`] searches.
#[derive(Debug, Clone, Default)]
pub struct GrepOptions {
    /// Match regardless of case.
    pub case_insensitive: bool,
    /// Only files whose relative path matches this glob.
    pub glob: Option<String>,
    /// Also search files .gitignore and friends leave out.
    pub include_ignored: bool,
    /// At most this many matching lines.
    pub limit: usize,
    /// Open editor buffers that win over the disk.
    pub buffers: Buffers,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq)]
pub struct GrepMatch {
    pub(crate) path: PathBuf,
    pub(crate) line_number: u64,
    pub(crate) line: String,
}

/// Lines matching `pattern` (a regex) under `root` (a file or a folder), at most `limit`.
pub fn grep(
    root: &Path,
    pattern: &str,
    opts: &GrepOptions,
) -> Result<(Vec<GrepMatch>, bool), String> {
    let hits = search(
        root,
        pattern,
        &SearchOptions {
            case_insensitive: opts.case_insensitive,
            glob: opts.glob.clone(),
            include_ignored: opts.include_ignored,
            max_lines: opts.limit.saturating_add(1),
            buffers: opts.buffers.clone(),
            ..Default::default()
        },
    )?;
    let mut out: Vec<GrepMatch> = hits
        .into_iter()
        .flat_map(|f| {
            let path = f.path;
            f.lines.into_iter().map(move |l| GrepMatch {
                path: path.clone(),
                line_number: l.number,
                line: l.text,
            })
        })
        .collect();
    let truncated = out.len() > opts.limit;
    out.truncate(opts.limit);
    Ok((out, truncated))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("src/deep")).unwrap();
        std::fs::write(p.join("src/main.rs"), "fn main() {\n    hello();\n}\n").unwrap();
        std::fs::write(p.join("src/deep/lib.rs"), "pub fn hello() {}\n").unwrap();
        std::fs::write(p.join("notes.txt"), "Hello notes\n").unwrap();
        std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(p.join("target")).unwrap();
        std::fs::write(p.join("target/gen.rs"), "fn hello() {}\n").unwrap();
        d
    }

    #[test]
    fn grep_honours_gitignore_and_case() {
        let d = tree();
        let (m, _) = grep(
            d.path(),
            "hello",
            &GrepOptions {
                limit: 100,
                ..Default::default()
            },
        )
        .unwrap();
        let files: Vec<_> = m
            .iter()
            .map(|m| m.path.strip_prefix(d.path()).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            files,
            vec![
                PathBuf::from("src/deep/lib.rs"),
                PathBuf::from("src/main.rs")
            ]
        );
        let (m, _) = grep(
            d.path(),
            "hello",
            &GrepOptions {
                limit: 100,
                case_insensitive: true,
                glob: Some("*.txt".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].line, "Hello notes");
        assert!(grep(d.path(), "(", &GrepOptions::default()).is_err());
    }

    #[test]
    fn glob_and_list() {
        let d = tree();
        let (files, _) = glob(d.path(), "*.rs", false, 100, &Buffers::new()).unwrap();
        assert_eq!(files.len(), 2);
        let (files, _) = glob(d.path(), "*.rs", true, 100, &Buffers::new()).unwrap();
        assert_eq!(files.len(), 3);
        let (entries, _) = list_dir(d.path(), 2, 100);
        assert!(entries.contains(&"src/".to_string()));
        assert!(entries.contains(&"  main.rs".to_string()));
        assert!(!entries.iter().any(|e| e.contains("target")));
    }
}

/// Options for [`search`], the richer grep behind Kimi Code's Grep.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// Match regardless of case.
    pub case_insensitive: bool,
    /// Only files whose relative path matches this glob.
    pub glob: Option<String>,
    /// A ripgrep file type name (`rust`, `py`, `js`…).
    pub file_type: Option<String>,
    /// Also search files .gitignore and friends leave out.
    pub include_ignored: bool,
    /// Let the pattern match across lines.
    pub multiline: bool,
    /// Context lines before each match.
    pub before: usize,
    /// Context lines after each match.
    pub after: usize,
    /// Stop after this many matching lines in all (bounds memory on huge trees).
    pub max_lines: usize,
    /// Open editor buffers that win over the disk.
    pub buffers: Buffers,
}

/// A line [`search`] reports: a match or context around one.
#[derive(Debug, Clone, PartialEq)]
pub struct HitLine {
    pub(crate) number: u64,
    pub(crate) text: String,
    /// false for context lines.
    pub is_match: bool,
}

/// One file's lines from [`search`].
#[derive(Debug, Clone, PartialEq)]
pub struct FileHits {
    pub(crate) path: PathBuf,
    pub(crate) lines: Vec<HitLine>,
    pub(crate) matches: u64,
}

struct Collect<'a> {
    lines: &'a mut Vec<HitLine>,
    matches: &'a mut u64,
}

impl grep_searcher::Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _s: &grep_searcher::Searcher,
        m: &grep_searcher::SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        *self.matches += 1;
        let first = m.line_number().unwrap_or(0);
        for (i, line) in m.lines().enumerate() {
            self.lines.push(HitLine {
                number: first + i as u64,
                text: String::from_utf8_lossy(line)
                    .trim_end_matches(['\n', '\r'])
                    .to_string(),
                is_match: true,
            });
        }
        Ok(true)
    }

    fn context(
        &mut self,
        _s: &grep_searcher::Searcher,
        c: &grep_searcher::SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        self.lines.push(HitLine {
            number: c.line_number().unwrap_or(0),
            text: String::from_utf8_lossy(c.bytes())
                .trim_end_matches(['\n', '\r'])
                .to_string(),
            is_match: false,
        });
        Ok(true)
    }
}

/// Files under `root` with lines matching `pattern`, in path order.
pub fn search(root: &Path, pattern: &str, opts: &SearchOptions) -> Result<Vec<FileHits>, String> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(opts.case_insensitive)
        .multi_line(opts.multiline)
        .dot_matches_new_line(opts.multiline)
        .build(pattern)
        .map_err(|e| format!("invalid regex `{pattern}`: {e}"))?;
    let filter = glob_filter(opts.glob.as_deref())?;
    let (walk, types) = search_walk(root, opts)?;
    let wanted = |path: &Path| match &filter {
        Some(f) => f.is_match(path.strip_prefix(root).unwrap_or(path)),
        None => true,
    };
    let mut found = Found {
        searcher: SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .multi_line(opts.multiline)
            .before_context(opts.before)
            .after_context(opts.after)
            .build(),
        matcher,
        out: Vec::new(),
        total: 0,
        max_lines: opts.max_lines.max(1),
    };
    let mut walked = std::collections::HashSet::new();
    for entry in walk.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let buffer = match opts.buffers.get(path) {
            Some(None) => continue,
            Some(Some(text)) => {
                walked.insert(path.to_path_buf());
                Some(text.as_str())
            }
            None => None,
        };
        if wanted(path) && found.search_one(path, buffer) {
            return Ok(found.out);
        }
    }
    // Files that exist only in the session's buffers.
    for (path, text) in unwalked(&opts.buffers, root, &walked) {
        let typed = types
            .as_ref()
            .is_none_or(|t| t.matched(path, false).is_whitelist());
        if typed && wanted(path) && found.search_one(path, Some(text)) {
            break;
        }
    }
    Ok(found.out)
}

/// `*.rs` means any such file at any depth; a glob with a `/` is taken as written.
fn glob_filter(glob: Option<&str>) -> Result<Option<globset::GlobMatcher>, String> {
    let Some(g) = glob else {
        return Ok(None);
    };
    let pat = if g.contains('/') {
        g.to_string()
    } else {
        format!("**/{g}")
    };
    Ok(Some(
        Glob::new(&pat)
            .map_err(|e| format!("invalid glob `{g}`: {e}"))?
            .compile_matcher(),
    ))
}

/// The walk a search takes (ignore files unless asked, `.git` never, sorted), and the file
/// type filter when one is asked for.
fn search_walk(
    root: &Path,
    opts: &SearchOptions,
) -> Result<(WalkBuilder, Option<ignore::types::Types>), String> {
    let mut walk = WalkBuilder::new(root);
    walk.hidden(false)
        .git_ignore(!opts.include_ignored)
        .git_global(!opts.include_ignored)
        .git_exclude(!opts.include_ignored)
        .ignore(!opts.include_ignored)
        .parents(!opts.include_ignored)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    let types = match &opts.file_type {
        Some(t) => {
            let mut tb = ignore::types::TypesBuilder::new();
            tb.add_defaults();
            tb.select(t);
            let types = tb
                .build()
                .map_err(|e| format!("unknown file type `{t}`: {e}"))?;
            walk.types(types.clone());
            Some(types)
        }
        None => None,
    };
    Ok((walk, types))
}

/// What a search has found so far.
struct Found {
    searcher: grep_searcher::Searcher,
    matcher: grep_regex::RegexMatcher,
    out: Vec<FileHits>,
    total: usize,
    max_lines: usize,
}

impl Found {
    /// Searches one file (its text from a buffer when it has one); true once enough lines
    /// were found.
    fn search_one(&mut self, path: &Path, buffer: Option<&str>) -> bool {
        let mut lines = Vec::new();
        let mut matches = 0;
        let sink = Collect {
            lines: &mut lines,
            matches: &mut matches,
        };
        let r = match buffer {
            Some(text) => self
                .searcher
                .search_slice(&self.matcher, text.as_bytes(), sink),
            None => self.searcher.search_path(&self.matcher, path, sink),
        };
        if let Err(e) = r {
            tracing::debug!("grep skipped {}: {e}", path.display());
            return false;
        }
        if matches > 0 {
            self.total += lines.len();
            self.out.push(FileHits {
                path: path.to_path_buf(),
                lines,
                matches,
            });
        }
        self.total >= self.max_lines
    }
}

#[cfg(test)]
mod search_tests {
    use super::*;

    /// Unsaved buffers win over the disk: an edited file is searched as edited, a file that
    /// exists only in memory is found, and a file deleted in the session is not.
    #[test]
    fn buffers_replace_the_disk() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("src")).unwrap();
        std::fs::write(p.join("src/edited.rs"), "fn needle() {}\n").unwrap();
        std::fs::write(p.join("src/deleted.rs"), "fn needle() {}\n").unwrap();
        std::fs::write(p.join("src/plain.rs"), "// needle on disk\n").unwrap();
        let buffers: Buffers = [
            (
                p.join("src/edited.rs"),
                Some("fn renamed() {}\n".to_string()),
            ),
            (p.join("src/deleted.rs"), None),
            (
                p.join("src/unsaved.rs"),
                Some("x\nlet needle = 1;\n".to_string()),
            ),
            (p.join("notes.md"), Some("needle in a note\n".to_string())),
        ]
        .into_iter()
        .collect();
        let opts = SearchOptions {
            max_lines: 100,
            file_type: Some("rust".into()),
            buffers: buffers.clone(),
            ..Default::default()
        };
        let hits = search(p, "needle", &opts).unwrap();
        let found: Vec<(String, u64)> = hits
            .iter()
            .map(|h| {
                let rel = h.path.strip_prefix(p).unwrap().display().to_string();
                (rel, h.lines[0].number)
            })
            .collect();
        assert_eq!(
            found,
            [
                ("src/plain.rs".to_string(), 1),
                ("src/unsaved.rs".to_string(), 2)
            ]
        );

        let (paths, _) = glob(p, "*.rs", false, 100, &buffers).unwrap();
        let names: Vec<String> = paths
            .iter()
            .map(|q| q.strip_prefix(p).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["src/edited.rs", "src/plain.rs", "src/unsaved.rs"]);
    }

    #[test]
    fn context_types_and_counts() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("a.rs"),
            "one\ntwo needle\nthree\nneedle four\n",
        )
        .unwrap();
        std::fs::write(d.path().join("b.py"), "needle\n").unwrap();
        let hits = search(
            d.path(),
            "needle",
            &SearchOptions {
                before: 1,
                max_lines: 100,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].matches, 2);
        let a: Vec<(u64, bool)> = hits[0]
            .lines
            .iter()
            .map(|l| (l.number, l.is_match))
            .collect();
        assert_eq!(a, vec![(1, false), (2, true), (3, false), (4, true)]);
        let rs = search(
            d.path(),
            "needle",
            &SearchOptions {
                file_type: Some("rust".into()),
                max_lines: 100,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(rs.len(), 1);
        assert!(
            search(
                d.path(),
                "x",
                &SearchOptions {
                    file_type: Some("nosuchtype".into()),
                    ..Default::default()
                }
            )
            .is_err()
        );
    }
}
