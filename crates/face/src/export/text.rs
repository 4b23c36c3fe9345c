//! What both export formats say the same way: token counts, a call's heading, how much of a
//! tool's output is kept, and attached images decoded from their data URLs.

use base64::Engine as _;
use interpreter_protocol::export::{ExportEntry, ExportedCall, SessionExport};
use interpreter_protocol::{PlanStatus, TokenUsage};

/// Output longer than this many lines keeps its head and tail only.
const OUTPUT_LINES: usize = 60;
const OUTPUT_HEAD: usize = 40;
/// And at most this many bytes of it.
const OUTPUT_BYTES: usize = 16 * 1024;

/// `n` with thousands separated: 12,345.
pub(super) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "1,200 input (1,000 cached) · 56 output (12 reasoning)".
pub(super) fn usage(u: &TokenUsage) -> String {
    let mut s = format!("{} input", thousands(u.input_tokens));
    if u.cached_input_tokens > 0 {
        s.push_str(&format!(" ({} cached)", thousands(u.cached_input_tokens)));
    }
    s.push_str(&format!(" · {} output", thousands(u.output_tokens)));
    if u.reasoning_output_tokens > 0 {
        s.push_str(&format!(
            " ({} reasoning)",
            thousands(u.reasoning_output_tokens)
        ));
    }
    s
}

/// The session's facts, one (label, value) per line of the page's header.
pub(super) fn facts(e: &SessionExport) -> Vec<(&'static str, String)> {
    let mut out = vec![
        ("Session", e.id.clone()),
        ("Folder", e.cwd.display().to_string()),
        ("Model", format!("{} ({})", e.model, e.provider)),
        ("Harness", e.harness.clone()),
        ("Started", when(&e.created_at)),
    ];
    if let Some(t) = &e.updated_at {
        out.push(("Last activity", when(t)));
    }
    if counted(e) {
        out.push(("Tokens", usage(&e.total_usage)));
    }
    out
}

/// Whether the log counted tokens (logs written before turns recorded them did not).
pub(super) fn counted(e: &SessionExport) -> bool {
    e.entries
        .iter()
        .any(|x| matches!(x, ExportEntry::TurnEnded { usage: Some(_) }))
}

/// An RFC 3339 time in UTC as people read it ("2026-01-01 08:24:02 UTC"); anything else as
/// it is.
pub(super) fn when(t: &str) -> String {
    let b = t.as_bytes();
    let utc = t.ends_with('Z') || t.ends_with("+00:00");
    if utc && b.len() >= 20 && b[10] == b'T' && t.is_char_boundary(19) {
        return format!("{} {} UTC", &t[..10], &t[11..19]);
    }
    t.to_string()
}

/// The page's title: the session's, else its id.
pub(super) fn title(e: &SessionExport) -> String {
    match &e.title {
        Some(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => format!("Session {}", e.id),
    }
}

/// A call's heading: what it did, in the words the faces show ("Edit src/a.rs"), and the
/// tool that did it.
pub(super) fn call_heading(c: &ExportedCall) -> String {
    let what = match (&c.command, c.title.lines().next()) {
        (Some(_), _) => "Ran a command",
        (None, Some(t)) if !t.trim().is_empty() => t.trim(),
        _ => "Called a tool",
    };
    let mut s = format!("{what} · {}", c.tool);
    if c.failed {
        s.push_str(" · failed");
    }
    s
}

/// The arguments worth showing: none for a command or an edit with diffs (the block and
/// the diff say it all), else pretty JSON.
pub(super) fn shown_input(c: &ExportedCall) -> Option<String> {
    if c.command.is_some() || !c.diffs.is_empty() {
        return None;
    }
    match &c.input {
        serde_json::Value::Object(o) if o.is_empty() => None,
        serde_json::Value::Null => None,
        v => serde_json::to_string_pretty(v).ok(),
    }
}

/// A tool's output as an export keeps it: its head and tail when long, and the number of
/// lines left out.
pub(super) fn output(s: &str) -> (String, usize) {
    let lines: Vec<&str> = s.trim_end().lines().collect();
    let (mut kept, mut omitted) = if lines.len() > OUTPUT_LINES {
        let tail = OUTPUT_LINES - OUTPUT_HEAD;
        let omitted = lines.len() - OUTPUT_LINES;
        let mut kept = lines[..OUTPUT_HEAD].join("\n");
        kept.push_str(&format!("\n… {omitted} lines left out …\n"));
        kept.push_str(&lines[lines.len() - tail..].join("\n"));
        (kept, omitted)
    } else {
        (lines.join("\n"), 0)
    };
    if kept.len() > OUTPUT_BYTES {
        let mut end = OUTPUT_BYTES;
        while !kept.is_char_boundary(end) {
            end -= 1;
        }
        omitted += kept[end..].lines().count();
        kept.truncate(end);
        kept.push_str("\n… the rest left out …");
    }
    (kept, omitted)
}

/// A plan step's box.
pub(super) fn plan_mark(s: PlanStatus) -> &'static str {
    match s {
        PlanStatus::Completed => "[x]",
        PlanStatus::InProgress => "[~]",
        PlanStatus::Pending => "[ ]",
    }
}

/// An attached image, decoded.
pub(super) struct Image {
    pub mime: &'static str,
    pub ext: &'static str,
    pub bytes: Vec<u8>,
}

impl Image {
    /// The image a `data:image/…;base64,` URL holds; None for anything else, so no other
    /// kind of URL ever reaches a page.
    pub(super) fn from_data_url(url: &str) -> Option<Image> {
        let rest = url.strip_prefix("data:")?;
        let (head, data) = rest.split_once(',')?;
        let mime = head.strip_suffix(";base64")?;
        let (mime, ext) = match mime.to_ascii_lowercase().as_str() {
            "image/png" => ("image/png", "png"),
            "image/jpeg" | "image/jpg" => ("image/jpeg", "jpg"),
            "image/gif" => ("image/gif", "gif"),
            "image/webp" => ("image/webp", "webp"),
            _ => return None,
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .ok()?;
        Some(Image { mime, ext, bytes })
    }

    /// The image as a data URL again, re-encoded from its bytes.
    pub(super) fn data_url(&self) -> String {
        format!(
            "data:{};base64,{}",
            self.mime,
            base64::engine::general_purpose::STANDARD.encode(&self.bytes)
        )
    }
}

/// Where a page's images go: files in a folder beside it, or inline.
#[derive(Debug, Clone)]
pub(super) enum Images {
    /// Files in this folder (relative to the page), named 1.png, 2.jpg, ….
    Beside(String),
    /// Inside the page (data URLs in HTML; a note in Markdown).
    Inline,
}

/// The images of a page, collected as it is rendered.
pub(super) struct ImageFiles {
    pub mode: Images,
    pub files: Vec<(String, Vec<u8>)>,
}

impl ImageFiles {
    /// Where the page refers to `img` (None: it stays out of the page): its file, kept for
    /// writing, or its data URL.
    pub(super) fn add(&mut self, img: Image) -> Option<String> {
        match &self.mode {
            Images::Beside(dir) => {
                let name = format!("{dir}/{}.{}", self.files.len() + 1, img.ext);
                self.files.push((name.clone(), img.bytes));
                Some(name)
            }
            Images::Inline => None,
        }
    }
}

/// A fence for `body` longer than any run of backticks in it, so the block cannot end early.
pub(super) fn fence(body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_head_and_tail() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let (kept, omitted) = output(&text);
        assert_eq!(omitted, 40);
        assert!(
            kept.starts_with("line 1\n") && kept.ends_with("line 100"),
            "{kept}"
        );
        assert!(kept.contains("… 40 lines left out …") && !kept.contains("line 41\n"));
    }

    #[test]
    fn only_image_data_urls_are_images() {
        assert!(Image::from_data_url("data:image/png;base64,iVBORw0K").is_some());
        assert!(Image::from_data_url("data:text/html;base64,PHNjcmlwdD4=").is_none());
        assert!(Image::from_data_url("javascript:alert(1)").is_none());
    }

    #[test]
    fn fences_outlast_backticks() {
        assert_eq!(fence("a ```` b"), "`````");
        assert_eq!(fence("plain"), "```");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(
            when("2026-12-05T08:24:02.758794117+00:00"),
            "2026-12-05 08:24:02 UTC"
        );
        assert_eq!(when("2026-12-05T08:24:03Z"), "2026-12-05 08:24:03 UTC");
        assert_eq!(when("now"), "now");
    }
}
