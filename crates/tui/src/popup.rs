//! Popups under the composer: the slash-command list, the `@` file finder and the session
//! picker. Each is a filtered list with one selected row.

use interpreter_protocol::{SkillInfo, UndoableTurn};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use ratatui::text::{Line, Span};
use std::path::{Path, PathBuf};

use super::ctx::clean;
use super::theme::Theme;
use super::wrap::str_width;
use interpreter_face::slash::BUILTINS;

/// Rows a popup shows at most.
pub(crate) const POPUP_ROWS: usize = 8;
/// Files the `@` finder indexes at most.
const MAX_FILES: usize = 50_000;

/// Where the rewind picker (`rewind.rs`) is.
#[derive(Debug, Clone)]
pub(crate) enum Rewind {
    /// Choosing the turn.
    Turn,
    /// Choosing what goes back to before this turn.
    What(UndoableTurn),
}

/// What a popup lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PopupKind {
    /// Slash commands and skills.
    Slash,
    /// Workspace files for `@`.
    Files,
    /// Stored sessions of this folder.
    Sessions,
    /// Earlier prompts to rewind to (`rewind.rs`).
    Rewind,
    /// What goes back when rewinding.
    RewindWhat,
}

/// One row: what is inserted or chosen, and what is shown beside it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    /// The command name, the path, or the session id.
    pub value: String,
    /// What the row shows first.
    pub label: String,
    /// The description, or a session's age and size.
    pub detail: String,
}

/// An open popup.
#[derive(Debug, Clone)]
pub(crate) struct Popup {
    pub kind: PopupKind,
    pub items: Vec<Item>,
    pub selected: usize,
    /// Shown when nothing matches.
    pub empty: &'static str,
}

impl Popup {
    /// The selected item.
    pub(crate) fn current(&self) -> Option<&Item> {
        self.items.get(self.selected)
    }

    pub(crate) fn up(&mut self) {
        if !self.items.is_empty() {
            self.selected = (self.selected + self.items.len() - 1) % self.items.len();
        }
    }

    pub(crate) fn down(&mut self) {
        if !self.items.is_empty() {
            self.selected = (self.selected + 1) % self.items.len();
        }
    }

    /// The popup's rows at `width`.
    pub(crate) fn render(&self, theme: &Theme, width: u16) -> Vec<Line<'static>> {
        if self.items.is_empty() {
            return vec![Line::from(Span::styled(
                format!("  {}", self.empty),
                theme.dim(),
            ))];
        }
        let first = self.selected.saturating_sub(POPUP_ROWS - 1);
        let label_width = self
            .items
            .iter()
            .map(|i| str_width(&i.label))
            .max()
            .unwrap_or(0)
            .min(usize::from(width) / 2);
        let width = usize::from(width);
        self.items
            .iter()
            .enumerate()
            .skip(first)
            .take(POPUP_ROWS)
            .map(|(n, item)| {
                let chosen = n == self.selected;
                let lead = if chosen { "› " } else { "  " };
                let label = fit(&item.label, label_width);
                let pad = label_width.saturating_sub(str_width(&label));
                let room = width.saturating_sub(label_width + 4);
                let detail = fit(&item.detail, room);
                let style = if chosen {
                    theme.selected()
                } else {
                    theme.text()
                };
                Line::from(vec![
                    Span::styled(lead, style),
                    Span::styled(label, style),
                    Span::raw(" ".repeat(pad + 2)),
                    Span::styled(detail, theme.dim()),
                ])
            })
            .collect()
    }
}

/// `s` cut to `width` columns with an ellipsis.
fn fit(s: &str, width: usize) -> String {
    if str_width(s) <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = super::wrap::char_width(c);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// The slash popup for `query` (what follows the `/`): built-ins, then skills; names that
/// start with the query first.
pub(crate) fn slash(query: &str, skills: &[SkillInfo]) -> Popup {
    let q = query.to_lowercase();
    let all = BUILTINS
        .iter()
        .map(|b| {
            let label = match b.input {
                Some(arg) => format!("/{} <{arg}>", b.name),
                None => format!("/{}", b.name),
            };
            Item {
                value: b.name.to_string(),
                label,
                detail: b.description.to_string(),
            }
        })
        .chain(skills.iter().map(|s| Item {
            value: clean(&s.name),
            label: match &s.argument_hint {
                Some(hint) => format!("/{} {}", clean(&s.name), clean(hint)),
                None => format!("/{}", clean(&s.name)),
            },
            detail: clean(&s.description),
        }));
    let (mut prefix, mut inner): (Vec<Item>, Vec<Item>) = all
        .filter(|i| i.value.to_lowercase().contains(&q))
        .partition(|i| i.value.to_lowercase().starts_with(&q));
    prefix.append(&mut inner);
    Popup {
        kind: PopupKind::Slash,
        items: prefix,
        selected: 0,
        empty: "no command matches",
    }
}

/// The workspace's files for the `@` finder: a walk that honours .gitignore (and the other
/// ignore files), relative to `root`, sorted, capped at a limit.
pub(crate) fn walk_files(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(root)
        .hidden(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            e.path()
                .strip_prefix(root)
                .ok()
                .map(interpreter_core::workspace::slash_path)
        })
        .take(MAX_FILES)
        .collect();
    files.sort();
    files
}

/// The `@` popup: files matching `query` fuzzily, best first.
pub(crate) fn files(query: &str, index: Option<&[String]>) -> Popup {
    let Some(index) = index else {
        return Popup {
            kind: PopupKind::Files,
            items: Vec::new(),
            selected: 0,
            empty: "indexing files…",
        };
    };
    let matched: Vec<&String> = if query.is_empty() {
        index.iter().take(POPUP_ROWS * 4).collect()
    } else {
        let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let mut found = pattern.match_list(index.iter(), &mut matcher);
        // Best score first; shorter paths win ties.
        found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.len().cmp(&b.0.len())));
        found
            .into_iter()
            .take(POPUP_ROWS * 4)
            .map(|(p, _)| p)
            .collect()
    };
    Popup {
        kind: PopupKind::Files,
        items: matched
            .into_iter()
            .map(|p| Item {
                value: p.clone(),
                label: clean(p),
                detail: String::new(),
            })
            .collect(),
        selected: 0,
        empty: "no file matches",
    }
}

/// A stored session for the picker.
#[derive(Debug, Clone)]
pub(crate) struct SessionEntry {
    pub id: String,
    pub title: Option<String>,
    pub age_secs: u64,
    pub bytes: u64,
}

/// The sessions of `cwd` in `home`'s store, newest first.
pub(crate) fn sessions_of(home: &Path, cwd: &Path) -> Vec<SessionEntry> {
    let store = interpreter_core::sessions::Sessions::new(home);
    let cwd: PathBuf = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let now = std::time::SystemTime::now();
    store
        .list(Some(&cwd))
        .into_iter()
        .map(|(meta, modified)| SessionEntry {
            title: store.title(&meta.id),
            bytes: store.size(&meta.id).unwrap_or(0),
            age_secs: now
                .duration_since(modified)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            id: meta.id,
        })
        .collect()
}

/// The session picker.
pub(crate) fn sessions(entries: &[SessionEntry]) -> Popup {
    Popup {
        kind: PopupKind::Sessions,
        items: entries
            .iter()
            .map(|e| Item {
                value: e.id.clone(),
                label: clean(e.title.as_deref().unwrap_or("(untitled)")),
                detail: format!("{} ago · {}", age(e.age_secs), size(e.bytes)),
            })
            .collect(),
        selected: 0,
        empty: "no earlier session in this folder",
    }
}

/// "5 min", "3 h", "2 d".
pub(crate) fn age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

/// "812 B", "14 KB", "2.1 MB".
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{} KB", bytes / 1024),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_prefix_matches_come_first_and_skills_are_listed() {
        let skills = vec![SkillInfo {
            name: "deploy".into(),
            description: "Ship it".into(),
            argument_hint: None,
            command: false,
        }];
        let p = slash("", &skills);
        assert_eq!(p.items.len(), BUILTINS.len() + 1);
        let p = slash("re", &skills);
        let names: Vec<&str> = p.items.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(names, ["rewind", "review", "resume"]);
        let p = slash("ar", &skills);
        let names: Vec<&str> = p.items.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(names, ["harness"]);
    }

    #[test]
    fn file_finder_is_fuzzy_and_honours_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("target/junk.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/deep/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        let index = walk_files(dir.path());
        assert_eq!(index, ["README.md", "src/deep/main.rs"]);
        let p = files("sdm", Some(&index));
        assert_eq!(p.items[0].value, "src/deep/main.rs");
        assert_eq!(files("zzz", Some(&index)).items.len(), 0);
    }
}
