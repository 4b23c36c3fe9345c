//! A session as Markdown: prompts and answers as they were written, each tool call as its
//! command line or diff in a fenced block, its output folded in `<details>`.

use interpreter_protocol::export::{ExportEntry, ExportedCall, SessionExport};
use std::fmt::Write as _;

use super::text::{self, Image, ImageFiles, fence};

/// `e` as Markdown; attached images go to `images`.
pub(super) fn render(e: &SessionExport, images: &mut ImageFiles) -> String {
    let mut out = format!("# {}\n\n", one_line(&text::title(e)));
    for (label, value) in text::facts(e) {
        let _ = writeln!(out, "- **{label}:** {}", one_line(&value));
    }
    let mut turn = 0;
    for entry in &e.entries {
        match entry {
            ExportEntry::Prompt {
                text: t,
                images: urls,
            } => {
                turn += 1;
                let _ = write!(out, "\n## Prompt {turn}\n\n{}\n", t.trim_end());
                prompt_images(&mut out, urls, images);
            }
            ExportEntry::Answer { text: t } => {
                let _ = write!(out, "\n**Assistant:**\n\n{}\n", t.trim_end());
            }
            ExportEntry::Reasoning { text: t } => {
                let _ = write!(
                    out,
                    "\n<details><summary>Reasoning</summary>\n\n{}\n\n</details>\n",
                    t.trim_end()
                );
            }
            ExportEntry::ToolCall(c) => call(&mut out, c),
            ExportEntry::Plan(p) => {
                out.push_str("\n**Plan:**\n\n");
                for item in &p.items {
                    let _ = writeln!(out, "- {} {}", text::plan_mark(item.status), item.step);
                }
            }
            ExportEntry::TurnEnded { usage: Some(u) } => {
                let _ = write!(out, "\n*Tokens this turn: {}*\n", text::usage(u));
            }
            ExportEntry::TurnEnded { usage: None } => {}
            ExportEntry::Compacted => {
                out.push_str("\n---\n\n*The conversation above was summarized for the model.*\n");
            }
        }
    }
    if text::counted(e) {
        let _ = write!(
            out,
            "\n---\n\n*Tokens in all: {}*\n",
            text::usage(&e.total_usage)
        );
    }
    out
}

fn prompt_images(out: &mut String, urls: &[String], images: &mut ImageFiles) {
    for (i, url) in urls.iter().enumerate() {
        let n = i + 1;
        match Image::from_data_url(url).and_then(|img| images.add(img)) {
            Some(path) => {
                let _ = write!(out, "\n![image {n}](<{path}>)\n");
            }
            None => {
                let _ = write!(out, "\n*(image {n} attached; not included here)*\n");
            }
        }
    }
}

fn call(out: &mut String, c: &ExportedCall) {
    let _ = write!(out, "\n#### {}\n\n", one_line(&text::call_heading(c)));
    if let Some(cmd) = &c.command {
        block(out, "sh", cmd);
    }
    for d in &c.diffs {
        block(out, "diff", d);
    }
    if let Some(input) = text::shown_input(c) {
        block(out, "json", &input);
    }
    let (output, omitted) = text::output(&c.output);
    if output.is_empty() {
        return;
    }
    let lines = output.lines().count() + omitted;
    let _ = write!(
        out,
        "<details><summary>Output ({lines} line{})</summary>\n\n",
        if lines == 1 { "" } else { "s" }
    );
    block(out, "text", &output);
    out.push_str("</details>\n");
}

/// `body` in a fenced block that nothing inside can close.
fn block(out: &mut String, lang: &str, body: &str) {
    let f = fence(body);
    let _ = write!(out, "{f}{lang}\n{}\n{f}\n\n", body.trim_end_matches('\n'));
}

/// Text that must stay on one line (a heading, a list item).
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
