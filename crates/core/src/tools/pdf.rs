//! PDF pages for the model, as images: each page rendered by poppler's `pdftoppm`, run like
//! the agent's own git (confined read-only and network-off, in a process group of its own,
//! with a deadline), scaled by the renderer to the fit's longest edge so a page of any size
//! costs the same, then fitted like any image (`tools::media`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::media::{self, Fit, ModelImage};

/// Largest PDF read.
pub(crate) const MAX_PDF_BYTES: u64 = 32 * 1024 * 1024;
/// Pages one call reads at most (Claude Code's bound).
pub(crate) const MAX_PAGES_PER_CALL: usize = 20;
/// How long reading the page count, or rendering one page, may take.
const RENDER_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `path` names a PDF by its extension.
pub(crate) fn is_pdf_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("pdf"))
}

/// A PDF's pages read for the model.
pub(crate) struct PdfPages {
    pub(crate) total: u32,
    pub(crate) pages: Vec<(u32, ModelImage)>,
}

/// The pages a `pages` argument names (`"3"`, `"1-5"`, `"1-3,7"`), 1-based, in order, each
/// once; `total` bounds them.
pub(crate) fn parse_pages(spec: &str, total: u32) -> Result<Vec<u32>, String> {
    let mut out: Vec<u32> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (from, to) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let num = |s: &str| {
            s.parse::<u32>().map_err(|_| {
                format!("`pages` must be like \"3\", \"1-5\" or \"1-3,7\", not `{spec}`")
            })
        };
        let (from, to) = (num(from)?, num(to)?);
        if from == 0 || to < from {
            return Err(format!(
                "`pages`: `{part}` is not a page range (pages start at 1)"
            ));
        }
        if to > total {
            return Err(format!(
                "`pages`: the PDF has {total} pages, so `{part}` is past its end"
            ));
        }
        for p in from..=to {
            if !out.contains(&p) {
                out.push(p);
            }
            if out.len() > MAX_PAGES_PER_CALL {
                return Err(format!(
                    "`pages` names more than {MAX_PAGES_PER_CALL} pages; read at most {MAX_PAGES_PER_CALL} per call"
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("`pages` names no page".into());
    }
    Ok(out)
}

/// Reads the pages `pages` names of the PDF at `path` (already confined to the workspace);
/// without `pages`, all of a PDF of at most `default_max` pages, and an error naming the page
/// count for a longer one.
pub(crate) async fn read_pages(
    path: &Path,
    pages: Option<&str>,
    default_max: u32,
    fit: Fit,
) -> Result<PdfPages, String> {
    let shown = path.display().to_string();
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| format!("could not read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a file"));
    }
    if meta.len() > MAX_PDF_BYTES {
        return Err(format!(
            "{shown} is {} MiB; PDFs of at most {} MiB are read",
            meta.len() >> 20,
            MAX_PDF_BYTES >> 20
        ));
    }
    let file = path.to_path_buf();
    let total = blocking(move || page_count(&file)).await?;
    let wanted = match pages {
        Some(spec) => parse_pages(spec, total)?,
        None if total <= default_max => (1..=total).collect(),
        None => {
            return Err(format!(
                "{shown} has {total} pages: read it in ranges with `pages` (e.g. \"1-5\"), at most {MAX_PAGES_PER_CALL} pages per call"
            ));
        }
    };
    let mut out = Vec::with_capacity(wanted.len());
    for page in wanted {
        let file = path.to_path_buf();
        let png = blocking(move || render(&file, page, fit.max_edge)).await?;
        let img = tokio::task::spawn_blocking(move || media::prepare(&png, fit, None))
            .await
            .map_err(|e| format!("the page could not be prepared: {e}"))?
            .map_err(|e| format!("page {page}: {e}"))?;
        out.push((page, img));
    }
    Ok(PdfPages { total, pages: out })
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("reading the PDF failed: {e}"))?
}

/// `pdfinfo`'s page count.
fn page_count(path: &Path) -> Result<u32, String> {
    let mut cmd = Command::new("pdfinfo");
    cmd.arg(path);
    let out = run(cmd)?;
    String::from_utf8_lossy(&out)
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|n| n.trim().parse().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| "not a readable PDF (no page count)".to_string())
}

/// One page as PNG, its longest edge `edge` pixels (`pdftoppm -scale-to`).
fn render(path: &Path, page: u32, edge: u32) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new("pdftoppm");
    cmd.args(["-png", "-singlefile", "-f"])
        .arg(page.to_string())
        .arg("-l")
        .arg(page.to_string())
        .arg("-scale-to")
        .arg(edge.to_string())
        // Without an output root, the page goes to stdout.
        .arg(path);
    run(cmd).map_err(|e| format!("page {page}: {e}"))
}

/// Runs a poppler tool the way the agent runs its own git; its stdout.
fn run(cmd: Command) -> Result<Vec<u8>, String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = match crate::sandbox::git::output(cmd, None, RENDER_TIMEOUT) {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "reading PDF pages needs poppler's `{program}` (the poppler-utils package), and it is not installed"
            ));
        }
        Err(e) => return Err(format!("{program} failed: {e}")),
    };
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!("not a readable PDF ({program}: {})", why.trim()));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_ranges_are_checked_and_bounded() {
        assert_eq!(parse_pages("3", 5).unwrap(), [3]);
        assert_eq!(parse_pages("1-3, 5", 5).unwrap(), [1, 2, 3, 5]);
        assert_eq!(parse_pages("2-3,3", 5).unwrap(), [2, 3]);
        assert!(parse_pages("0", 5).unwrap_err().contains("start at 1"));
        assert!(
            parse_pages("4-2", 5)
                .unwrap_err()
                .contains("not a page range")
        );
        assert!(parse_pages("6", 5).unwrap_err().contains("past its end"));
        assert!(parse_pages("a", 5).unwrap_err().contains("must be like"));
        assert!(parse_pages("1-21", 30).unwrap_err().contains("at most 20"));
        assert!(parse_pages(" , ", 5).unwrap_err().contains("no page"));
    }
}
