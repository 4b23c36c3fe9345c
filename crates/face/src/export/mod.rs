//! Stored sessions as Markdown or HTML (`interpreter export`, `/export`), from the
//! [`SessionExport`] the core reads (secrets already redacted there). A page written to a
//! file keeps the prompts' images as files in `<name>_files/` beside it; on stdout, HTML keeps
//! them inline as data URLs and Markdown names them only.

mod html;
mod markdown;
mod text;

use interpreter_protocol::export::SessionExport;
use std::path::{Path, PathBuf};

use text::{ImageFiles, Images};

/// What an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Markdown (the default).
    Markdown,
    /// One self-contained HTML page.
    Html,
}

impl Format {
    /// HTML for a file named `*.html` or `*.htm`, else Markdown.
    pub fn of_path(path: &Path) -> Format {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("html" | "htm") => Format::Html,
            _ => Format::Markdown,
        }
    }
}

/// The file `/export` writes when given no name: `<session-id>.md`.
pub fn default_file(session_id: &str) -> String {
    format!("{session_id}.md")
}

/// Where `/export [file]` writes: `file` (relative to `cwd`), else `<session-id>.md` in `cwd`.
pub fn target(cwd: &Path, file: &str, session_id: &str) -> PathBuf {
    match file.trim() {
        "" => cwd.join(default_file(session_id)),
        f => cwd.join(f),
    }
}

/// What `/export` says once `written` (the page first, then its images) is on disk.
pub fn written_text(written: &[PathBuf]) -> String {
    let Some(page) = written.first() else {
        return "Nothing was exported.".into();
    };
    match written.len() - 1 {
        0 => format!("Exported the session to {}", page.display()),
        n => format!(
            "Exported the session to {} (and {n} image{} beside it)",
            page.display(),
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// `e` as one text, for stdout: images inline in HTML, named only in Markdown.
pub fn render(e: &SessionExport, format: Format) -> String {
    render_with(e, format, Images::Inline).0
}

fn render_with(
    e: &SessionExport,
    format: Format,
    mode: Images,
) -> (String, Vec<(String, Vec<u8>)>) {
    let mut images = ImageFiles {
        mode,
        files: Vec::new(),
    };
    let page = match format {
        Format::Markdown => markdown::render(e, &mut images),
        Format::Html => html::render(e, &mut images),
    };
    (page, images.files)
}

/// Writes `e` to `path`, its images as files in `<name>_files/` beside it; returns every
/// file written, the page first. Errors name the file.
pub fn write(e: &SessionExport, format: Format, path: &Path) -> Result<Vec<PathBuf>, String> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| e.id.clone());
    let folder = format!("{stem}_files");
    let (page, files) = render_with(e, format, Images::Beside(folder.clone()));
    let parent = path.parent().unwrap_or(Path::new(""));
    let mut written = vec![path.to_path_buf()];
    if !parent.as_os_str().is_empty() {
        std::fs::create_dir_all(parent)
            .map_err(|err| format!("creating {}: {err}", parent.display()))?;
    }
    if !files.is_empty() {
        let dir = parent.join(&folder);
        std::fs::create_dir_all(&dir)
            .map_err(|err| format!("creating {}: {err}", dir.display()))?;
        for (name, bytes) in files {
            let file = parent.join(name);
            std::fs::write(&file, bytes)
                .map_err(|err| format!("writing {}: {err}", file.display()))?;
            written.push(file);
        }
    }
    std::fs::write(path, page).map_err(|err| format!("writing {}: {err}", path.display()))?;
    Ok(written)
}

#[cfg(test)]
mod tests;
