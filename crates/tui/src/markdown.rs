//! Markdown to styled lines with `pulldown-cmark`: headings, emphasis, lists (nested,
//! ordered, task lists), block quotes, code blocks with their language tag, inline code,
//! links, rules and tables. The text must already be free of control sequences
//! (`terminal_text`); the result is wrapped to the width later (`wrap`).

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::Wrapped;

/// Renders `text` as lines. `color` false keeps inline code's backticks, so it still reads
/// as code without colour.
pub(crate) fn render(text: &str, theme: &Theme) -> Vec<Wrapped> {
    let opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    let mut r = Renderer::new(theme);
    for event in Parser::new_ext(text, opts) {
        r.event(event);
    }
    r.finish()
}

/// A block that prefixes its lines: a list item's bullet or a quote's bar.
struct Container {
    /// The first line's prefix (a bullet), used once.
    first: Option<String>,
    /// Every other line's prefix.
    rest: String,
    style: Style,
}

struct Renderer<'t> {
    theme: &'t Theme,
    out: Vec<Wrapped>,
    line: Vec<Span<'static>>,
    /// Inline styles in effect (emphasis, strong, links).
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// Ordered lists' next numbers; None for bullet lists.
    lists: Vec<Option<u64>>,
    /// Inside a code block: its lines are cut, not wrapped.
    code: bool,
    link: Option<String>,
    table_row: Vec<String>,
    table_cell: String,
    in_table: bool,
    table_head: bool,
}

impl<'t> Renderer<'t> {
    fn new(theme: &'t Theme) -> Self {
        Renderer {
            theme,
            out: Vec::new(),
            line: Vec::new(),
            styles: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            code: false,
            link: None,
            table_row: Vec::new(),
            table_cell: String::new(),
            in_table: false,
            table_head: false,
        }
    }

    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::new(), |acc, s| acc.patch(*s))
    }

    fn event(&mut self, e: Event<'_>) {
        match e {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(c) => self.inline_code(&c),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.block_gap();
                let rule = Span::styled("─".repeat(24), self.theme.dim());
                self.line.push(rule);
                self.flush();
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.line.push(Span::styled(mark, self.theme.dim()));
            }
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.inline_code(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block_gap(),
            Tag::Heading { level, .. } => {
                self.block_gap();
                let hashes = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                };
                self.styles.push(self.theme.heading());
                let marks = format!("{} ", "#".repeat(hashes));
                self.line.push(Span::styled(marks, self.theme.heading()));
            }
            Tag::BlockQuote(_) => {
                self.block_gap();
                self.containers.push(Container {
                    first: None,
                    rest: "│ ".into(),
                    style: self.theme.dim(),
                });
            }
            Tag::CodeBlock(kind) => {
                self.block_gap();
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => {
                        l.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.line
                    .push(Span::styled(format!("```{lang}"), self.theme.dim()));
                self.flush();
                self.code = true;
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.block_gap();
                } else {
                    self.flush();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_if_any();
                let bullet = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let b = format!("{n}. ");
                        *n += 1;
                        b
                    }
                    _ => "- ".to_string(),
                };
                let rest = " ".repeat(bullet.chars().count());
                self.containers.push(Container {
                    first: Some(bullet),
                    rest,
                    style: self.theme.dim(),
                });
            }
            Tag::Emphasis => self
                .styles
                .push(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .styles
                .push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.styles.push(self.theme.link());
                self.link = Some(dest_url.to_string());
            }
            Tag::Image { dest_url, .. } => self.text(&format!("[image: {dest_url}]")),
            Tag::Table(_) => {
                self.block_gap();
                self.in_table = true;
            }
            Tag::TableHead => self.table_head = true,
            Tag::TableRow => self.table_row.clear(),
            Tag::TableCell => self.table_cell.clear(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush(),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_if_any();
                self.containers.pop();
            }
            TagEnd::CodeBlock => {
                // The block's text ends with a newline, so the line is empty here.
                self.flush_if_any();
                self.code = false;
                self.line.push(Span::styled("```", self.theme.dim()));
                self.flush();
            }
            TagEnd::List(_) => {
                self.flush_if_any();
                self.lists.pop();
            }
            TagEnd::Item => {
                self.flush_if_any();
                self.containers.pop();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let shown: String = self.line.iter().map(|s| s.content.as_ref()).collect();
                    if !url.is_empty() && !shown.ends_with(url.as_str()) {
                        self.line
                            .push(Span::styled(format!(" ({url})"), self.theme.dim()));
                    }
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.table_cell);
                self.table_row.push(cell.trim().to_string());
            }
            TagEnd::TableHead | TagEnd::TableRow => self.table_row_done(),
            TagEnd::Table => {
                self.in_table = false;
            }
            _ => {}
        }
    }

    fn table_row_done(&mut self) {
        let row = std::mem::take(&mut self.table_row).join(" │ ");
        let style = if self.table_head {
            self.theme.header()
        } else {
            self.theme.text()
        };
        self.line.push(Span::styled(row, style));
        self.flush();
        self.table_head = false;
    }

    fn text(&mut self, t: &str) {
        if self.in_table {
            self.table_cell.push_str(t);
            return;
        }
        let t = t.replace('\t', "    ");
        if self.code {
            let style = self.theme.code_block();
            let mut parts = t.split('\n').peekable();
            while let Some(part) = parts.next() {
                if !part.is_empty() {
                    self.line.push(Span::styled(part.to_string(), style));
                }
                if parts.peek().is_some() {
                    self.flush();
                }
            }
            return;
        }
        let style = self.style();
        self.line.push(Span::styled(t, style));
    }

    fn inline_code(&mut self, c: &str) {
        if self.in_table {
            self.table_cell.push_str(c);
            return;
        }
        let shown = if self.theme.color() {
            c.to_string()
        } else {
            format!("`{c}`")
        };
        self.line
            .push(Span::styled(shown, self.style().patch(self.theme.code())));
    }

    /// A blank line before a block, unless it is the first or follows one.
    fn block_gap(&mut self) {
        self.flush_if_any();
        // Inside a list item the item's own line ends the previous block.
        let in_item = self.containers.iter().any(|c| c.first.is_some());
        if in_item {
            return;
        }
        if self
            .out
            .last()
            .is_some_and(|l| l.line.spans.iter().any(|s| !s.content.trim().is_empty()))
        {
            self.out.push(Wrapped::default());
        }
    }

    fn flush_if_any(&mut self) {
        if !self.line.is_empty() {
            self.flush();
        }
    }

    /// Ends the current line, with its containers' prefixes.
    fn flush(&mut self) {
        let body = std::mem::take(&mut self.line);
        let mut spans = Vec::new();
        let mut indent = Vec::new();
        for c in &mut self.containers {
            let first = c.first.take();
            let prefix = first.unwrap_or_else(|| c.rest.clone());
            spans.push(Span::styled(prefix, c.style));
            indent.push(Span::styled(c.rest.clone(), c.style));
        }
        spans.extend(body);
        self.out.push(Wrapped {
            line: Line::from(spans),
            indent,
            hard: self.code,
        });
    }

    fn finish(mut self) -> Vec<Wrapped> {
        self.flush_if_any();
        while self
            .out
            .last()
            .is_some_and(|l| l.line.spans.iter().all(|s| s.content.trim().is_empty()))
        {
            self.out.pop();
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Vec<String> {
        render(text, &Theme::new(true))
            .iter()
            .map(|w| w.line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn blocks_lists_and_code() {
        let md = "# Title\n\nSome *text* with `code`.\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n\n```rust\nfn main() {}\n```\n\n> quoted\n";
        assert_eq!(
            plain(md),
            [
                "# Title",
                "",
                "Some text with code.",
                "",
                "- one",
                "- two",
                "  - nested",
                "",
                "1. first",
                "2. second",
                "",
                "```rust",
                "fn main() {}",
                "```",
                "",
                "│ quoted"
            ]
        );
    }

    #[test]
    fn links_show_their_target() {
        assert_eq!(
            plain("see [docs](https://example.invalid/x)"),
            ["see docs (https://example.invalid/x)"]
        );
        assert_eq!(
            plain("<https://example.invalid>"),
            ["https://example.invalid"]
        );
    }
}
