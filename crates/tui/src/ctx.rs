//! What every drawn piece needs: the theme, the folder paths are shown relative to, and
//! `clean` for any text that comes from outside.

use std::path::Path;

use super::theme::Theme;

/// Text from outside, safe to draw: no control sequences, tabs as spaces.
pub(crate) fn clean(s: &str) -> String {
    interpreter_face::terminal_text::sanitize(s).replace('\t', "    ")
}

/// What cells need to know to draw themselves.
pub(crate) struct Ctx<'a> {
    pub theme: &'a Theme,
    /// Paths under it are shown relative.
    pub cwd: &'a Path,
}

impl Ctx<'_> {
    pub(crate) fn path(&self, p: &Path) -> String {
        let shown = match p.strip_prefix(self.cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => p.display().to_string(),
        };
        clean(&shown)
    }
}
