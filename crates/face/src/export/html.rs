//! A session as one self-contained HTML page: inline CSS, no script, and a policy that lets
//! it load nothing but its own images. Every text from the session is escaped; the model's
//! Markdown is rendered from its parse, raw HTML in it shown as text, links kept only when
//! their scheme is harmless.

use interpreter_protocol::export::{ExportEntry, ExportedCall, SessionExport};
use pulldown_cmark::{Event, Options, Parser, Tag};
use std::fmt::Write as _;

use super::text::{self, Image, ImageFiles};

const STYLE: &str = include_str!("export.css");

/// `e` as an HTML page; attached images go to `images`.
pub(super) fn render(e: &SessionExport, images: &mut ImageFiles) -> String {
    let title = text::title(e);
    let mut out = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         img-src 'self' data: file:; style-src 'unsafe-inline'\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<header>\n<h1>{}</h1>\n<dl>\n",
        escape(&title),
        escape(&title)
    );
    for (label, value) in text::facts(e) {
        let _ = writeln!(out, "<dt>{label}</dt><dd>{}</dd>", escape(&value));
    }
    out.push_str("</dl>\n</header>\n");
    for entry in &e.entries {
        entry_html(&mut out, entry, images);
    }
    if text::counted(e) {
        let _ = writeln!(
            out,
            "<footer>Tokens in all: {}</footer>",
            escape(&text::usage(&e.total_usage))
        );
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

fn entry_html(out: &mut String, entry: &ExportEntry, images: &mut ImageFiles) {
    match entry {
        ExportEntry::Prompt {
            text: t,
            images: urls,
        } => {
            let _ = write!(
                out,
                "<section class=\"prompt\"><div class=\"who\">You</div><div class=\"plain\">{}</div>",
                escape(t.trim_end())
            );
            for (i, url) in urls.iter().enumerate() {
                let Some(img) = Image::from_data_url(url) else {
                    continue;
                };
                let src = match images.add(img) {
                    Some(path) => path.split('/').map(percent).collect::<Vec<_>>().join("/"),
                    None => Image::from_data_url(url)
                        .map(|i| i.data_url())
                        .unwrap_or_default(),
                };
                let _ = write!(
                    out,
                    "<img src=\"{}\" alt=\"image {}\">",
                    escape(&src),
                    i + 1
                );
            }
            out.push_str("</section>\n");
        }
        ExportEntry::Answer { text: t } => {
            let _ = writeln!(
                out,
                "<section class=\"answer\"><div class=\"who\">Assistant</div><div class=\"md\">{}</div></section>",
                markdown(t)
            );
        }
        ExportEntry::Reasoning { text: t } => {
            let _ = writeln!(
                out,
                "<details class=\"reasoning\"><summary>Reasoning</summary><div class=\"md\">{}</div></details>",
                markdown(t)
            );
        }
        ExportEntry::ToolCall(c) => call(out, c),
        ExportEntry::Plan(p) => {
            out.push_str("<section class=\"plan\"><div class=\"who\">Plan</div><ul>");
            for item in &p.items {
                let _ = write!(
                    out,
                    "<li><code>{}</code> {}</li>",
                    text::plan_mark(item.status),
                    escape(&item.step)
                );
            }
            out.push_str("</ul></section>\n");
        }
        ExportEntry::TurnEnded { usage: Some(u) } => {
            let _ = writeln!(
                out,
                "<div class=\"usage\">Tokens this turn: {}</div>",
                escape(&text::usage(u))
            );
        }
        ExportEntry::TurnEnded { usage: None } => {}
        ExportEntry::Compacted => out.push_str(
            "<div class=\"compacted\">The conversation above was summarized for the model.</div>\n",
        ),
    }
}

fn call(out: &mut String, c: &ExportedCall) {
    let _ = write!(
        out,
        "<section class=\"call{}\"><div class=\"call-head\">{}</div>",
        if c.failed { " failed" } else { "" },
        escape(&text::call_heading(c))
    );
    if let Some(cmd) = &c.command {
        let _ = write!(out, "<pre class=\"cmd\">{}</pre>", escape(cmd));
    }
    for d in &c.diffs {
        out.push_str("<pre class=\"diff\">");
        for line in d.lines() {
            let class = match line.as_bytes().first() {
                Some(b'+') if !line.starts_with("+++") => "add",
                Some(b'-') if !line.starts_with("---") => "del",
                Some(b'@') => "hunk",
                Some(b' ') => "ctx",
                _ => "meta",
            };
            // Block spans: a newline between them would show as a blank line.
            let _ = write!(out, "<span class=\"{class}\">{}</span>", escape(line));
        }
        out.push_str("</pre>");
    }
    if let Some(input) = text::shown_input(c) {
        let _ = write!(out, "<pre class=\"args\">{}</pre>", escape(&input));
    }
    let (output, omitted) = text::output(&c.output);
    if !output.is_empty() {
        let lines = output.lines().count() + omitted;
        let _ = write!(
            out,
            "<details{}><summary>Output ({lines} line{})</summary><pre class=\"output\">{}</pre></details>",
            // A failure's output is what a reader looks for: shown unfolded.
            if c.failed { " open" } else { "" },
            if lines == 1 { "" } else { "s" },
            escape(&output)
        );
    }
    out.push_str("</section>\n");
}

/// Text for an HTML element or a quoted attribute.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A path segment for a URL: what is not plainly safe is percent-encoded.
fn percent(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A link target the page may keep: web and mail links, fragments, and relative paths.
fn safe_href(dest: &str) -> Option<&str> {
    let lower = dest.trim().to_ascii_lowercase();
    let scheme = lower.split_once(':').map(|(s, _)| s);
    let relative = scheme.is_none_or(|s| s.contains(['/', '?', '#']));
    (relative || matches!(scheme, Some("http" | "https" | "mailto"))).then_some(dest)
}

/// The model's Markdown as HTML, built from the parse: text is escaped, raw HTML is shown as
/// text, images become links (the page fetches nothing), unsafe links lose their target.
pub(super) fn markdown(md: &str) -> String {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out = String::new();
    let mut closers: Vec<String> = Vec::new();
    let mut in_head = false;
    for event in Parser::new_ext(md, opts) {
        match event {
            Event::Start(tag) => {
                let (open, close) = tag_html(&tag, in_head);
                if matches!(tag, Tag::TableHead) {
                    in_head = true;
                }
                out.push_str(&open);
                closers.push(close);
            }
            Event::End(end) => {
                if matches!(end, pulldown_cmark::TagEnd::TableHead) {
                    in_head = false;
                }
                out.push_str(&closers.pop().unwrap_or_default());
            }
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => out.push_str(&escape(&t)),
            Event::Code(t) => {
                let _ = write!(out, "<code>{}</code>", escape(&t));
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => out.push_str(&escape(&t)),
            Event::FootnoteReference(t) => {
                let _ = write!(out, "[{}]", escape(&t));
            }
            Event::SoftBreak => out.push('\n'),
            Event::HardBreak => out.push_str("<br>"),
            Event::Rule => out.push_str("<hr>"),
            Event::TaskListMarker(done) => out.push_str(if done { "☑ " } else { "☐ " }),
        }
    }
    out
}

/// The opening and closing HTML of a Markdown element (empty for those shown as their text).
fn tag_html(tag: &Tag<'_>, in_head: bool) -> (String, String) {
    let pair = |t: &str| (format!("<{t}>"), format!("</{t}>"));
    match tag {
        Tag::Paragraph => pair("p"),
        Tag::Heading { level, .. } => pair(&format!("h{}", (*level as usize + 2).min(6))),
        Tag::BlockQuote(_) => pair("blockquote"),
        Tag::CodeBlock(_) => ("<pre><code>".into(), "</code></pre>".into()),
        Tag::List(Some(1)) => pair("ol"),
        Tag::List(Some(start)) => (format!("<ol start=\"{start}\">"), "</ol>".into()),
        Tag::List(None) => pair("ul"),
        Tag::Item => pair("li"),
        Tag::Table(_) => pair("table"),
        Tag::TableHead => ("<thead><tr>".into(), "</tr></thead>".into()),
        Tag::TableRow => pair("tr"),
        Tag::TableCell if in_head => pair("th"),
        Tag::TableCell => pair("td"),
        Tag::Emphasis => pair("em"),
        Tag::Strong => pair("strong"),
        Tag::Strikethrough => pair("del"),
        Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => match safe_href(dest_url) {
            Some(href) => (format!("<a href=\"{}\">", escape(href)), "</a>".into()),
            None => (String::new(), String::new()),
        },
        _ => (String::new(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_keeps_no_raw_html_and_no_unsafe_link() {
        let html = markdown(
            "**hi** <script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](https://e.org/?a=\"b\") ![i](http://t/p.png)",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(
            html.contains("<a href=\"https://e.org/?a=&quot;b&quot;\">y</a>"),
            "{html}"
        );
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("<strong>hi</strong>"), "{html}");
    }
}
