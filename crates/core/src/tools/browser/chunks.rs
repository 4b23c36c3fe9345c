//! The pure parts of the Browser tools: a page's text cut into chunks a cursor walks, the
//! session's list of visited pages, and the arguments the model gives.

use std::collections::VecDeque;

/// Bytes of page text one extract shows at most (the original's 2 KB).
pub(crate) const CHUNK_BYTES: usize = 2048;
/// Pages the history keeps (the original lists the last 20).
pub(crate) const HISTORY_LEN: usize = 20;
/// Pixels a scroll moves by default, and at most.
pub(crate) const DEFAULT_SCROLL: i64 = 800;
const MAX_SCROLL: i64 = 100_000;

/// A page's text as the model reads it: `innerText` with spaces at line ends, no-break
/// spaces and runs of blank lines tidied, so chunks carry words rather than layout.
pub(crate) fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.replace('\u{a0}', " ").replace("\r\n", "\n").lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

/// One chunk of a page's text: bytes `cursor..next` (or to the end).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Chunk<'a> {
    pub(crate) text: &'a str,
    pub(crate) cursor: usize,
    /// Where the next chunk starts; None at the end of the text.
    pub(crate) next: Option<usize>,
}

impl Chunk<'_> {
    /// The chunk, then the line that says where it is: `cursor=N has_more=true next=M`.
    pub(crate) fn render(&self) -> String {
        let body = match self.text.trim().is_empty() {
            true if self.cursor == 0 => "(The page has no readable text.)",
            _ => self.text.trim_end(),
        };
        match self.next {
            Some(next) => format!("{body}\n\ncursor={} has_more=true next={next}", self.cursor),
            None => format!("{body}\n\ncursor={} has_more=false", self.cursor),
        }
    }
}

/// The chunk of `text` that starts at byte `cursor`: at most [`CHUNK_BYTES`], ending at a
/// line or word break when one falls in its second half, never inside a character.
pub(crate) fn chunk(text: &str, cursor: usize) -> Result<Chunk<'_>, String> {
    if cursor > text.len() {
        return Err(format!(
            "cursor={cursor} is past the end of the page's text ({} bytes); start again with cursor 0.",
            text.len()
        ));
    }
    let cursor = text.ceil_char_boundary(cursor);
    if text.len() - cursor <= CHUNK_BYTES {
        return Ok(Chunk {
            text: &text[cursor..],
            cursor,
            next: None,
        });
    }
    let hard = text.floor_char_boundary(cursor + CHUNK_BYTES);
    let window = &text[cursor..hard];
    let half = CHUNK_BYTES / 2;
    let end = window
        .rfind('\n')
        .filter(|&i| i >= half)
        .or_else(|| window.rfind(' ').filter(|&i| i >= half))
        .map_or(hard, |i| cursor + i + 1);
    Ok(Chunk {
        text: &text[cursor..end],
        cursor,
        next: Some(end),
    })
}

/// The `cursor` argument: a byte offset, as a string (`"2048"`, or the whole `next=2048`
/// the last extract ended with) or a number; none means the start.
pub(crate) fn parse_cursor(arg: Option<&serde_json::Value>) -> Result<usize, String> {
    let bad = || {
        "`cursor` must be a byte offset such as \"2048\": the next= value the last BrowserExtract gave."
            .to_string()
    };
    match arg {
        None | Some(serde_json::Value::Null) => Ok(0),
        Some(serde_json::Value::Number(n)) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(bad),
        Some(serde_json::Value::String(s)) => {
            let s = s.trim();
            let s = s
                .strip_prefix("next=")
                .or_else(|| s.strip_prefix("cursor="))
                .unwrap_or(s);
            match s.is_empty() {
                true => Ok(0),
                false => s.parse().map_err(|_| bad()),
            }
        }
        Some(_) => Err(bad()),
    }
}

/// The pixels a scroll moves: `direction` up or down (down by default) and `amount`
/// ([`DEFAULT_SCROLL`] by default); negative is up.
pub(crate) fn parse_scroll(
    direction: Option<&serde_json::Value>,
    amount: Option<&serde_json::Value>,
) -> Result<i64, String> {
    let sign = match direction.and_then(serde_json::Value::as_str).map(str::trim) {
        None | Some("") => 1,
        Some(d) if d.eq_ignore_ascii_case("down") => 1,
        Some(d) if d.eq_ignore_ascii_case("up") => -1,
        Some(d) => return Err(format!("`direction` must be up or down, not \"{d}\".")),
    };
    let amount = match amount {
        None | Some(serde_json::Value::Null) => DEFAULT_SCROLL,
        Some(serde_json::Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f.round() as i64))
            .ok_or("`amount` must be a number of pixels.")?,
        Some(serde_json::Value::String(s)) => s
            .trim()
            .trim_end_matches("px")
            .parse()
            .map_err(|_| "`amount` must be a number of pixels.".to_string())?,
        Some(_) => return Err("`amount` must be a number of pixels.".into()),
    };
    if amount <= 0 {
        return Err("`amount` must be more than 0 pixels; use `direction` to go up.".into());
    }
    Ok(sign * amount.min(MAX_SCROLL))
}

/// What BrowserClick clicks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// The first element a CSS selector matches.
    Selector(String),
    /// The first element of an ARIA role, with this accessible name if one is given.
    Role { role: String, name: Option<String> },
}

impl Target {
    /// `selector`, else `role` with its optional `name`.
    pub(crate) fn parse(args: &serde_json::Value) -> Result<Target, String> {
        let field = |k: &str| {
            args.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        if let Some(selector) = field("selector") {
            return Ok(Target::Selector(selector));
        }
        match field("role") {
            Some(role) => Ok(Target::Role {
                role: role.to_ascii_lowercase(),
                name: field("name"),
            }),
            None => Err(
                "Give `selector` (a CSS selector), or `role` (an ARIA role such as button or link) with an optional `name`."
                    .into(),
            ),
        }
    }

    /// How a result names it: `` `#go` `` or `the link "Next"`.
    pub(crate) fn describe(&self) -> String {
        match self {
            Target::Selector(s) => format!("`{s}`"),
            Target::Role { role, name: None } => format!("the first {role}"),
            Target::Role {
                role,
                name: Some(n),
            } => format!("the {role} \"{n}\""),
        }
    }
}

/// Accessible names compared as a person reads them: case and runs of spaces do not count.
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    normal(a) == normal(b)
}

/// `name` appears in `label`, compared as [`same_name`] does.
pub(crate) fn name_within(label: &str, name: &str) -> bool {
    normal(label).contains(&normal(name))
}

fn normal(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The pages a session's browser arrived at, oldest first, the last [`HISTORY_LEN`].
#[derive(Debug, Default)]
pub(crate) struct History {
    pages: VecDeque<String>,
}

impl History {
    /// Notes arriving at `url`; staying on the page the last call left is no visit.
    pub(crate) fn visit(&mut self, url: &str) {
        if url.is_empty() || url == "about:blank" || self.pages.back().is_some_and(|u| u == url) {
            return;
        }
        if self.pages.len() == HISTORY_LEN {
            self.pages.pop_front();
        }
        self.pages.push_back(url.to_string());
    }

    /// One numbered line per page, oldest first.
    pub(crate) fn render(&self) -> String {
        if self.pages.is_empty() {
            return "No pages visited yet in this session.".into();
        }
        self.pages
            .iter()
            .enumerate()
            .map(|(i, u)| format!("{}. {u}", i + 1))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chunks_walk_the_whole_text_at_breaks_and_char_boundaries() {
        let text: String = (0..400).map(|i| format!("word{i} ")).collect();
        let mut cursor = 0;
        let mut seen = String::new();
        let mut chunks = 0;
        loop {
            let c = chunk(&text, cursor).unwrap();
            assert!(c.text.len() <= CHUNK_BYTES);
            seen.push_str(c.text);
            chunks += 1;
            match c.next {
                Some(n) => {
                    // A word break, not the middle of a word.
                    assert!(c.text.ends_with(' '), "{:?}", &c.text[c.text.len() - 10..]);
                    cursor = n;
                }
                None => break,
            }
        }
        assert_eq!(seen, text);
        assert_eq!(chunks, text.len().div_ceil(CHUNK_BYTES));
        // Multibyte text without breaks is cut between characters.
        let wide = "é".repeat(CHUNK_BYTES);
        let c = chunk(&wide, 0).unwrap();
        assert_eq!(c.text.len(), CHUNK_BYTES);
        let c2 = chunk(&wide, 1).unwrap();
        assert_eq!(
            c2.cursor, 2,
            "a cursor inside a character moves to the next one"
        );
        assert!(
            chunk(&wide, wide.len() + 1)
                .unwrap_err()
                .contains("past the end")
        );
        assert_eq!(chunk("", 0).unwrap().next, None);
    }

    #[test]
    fn a_chunk_ends_with_where_the_next_starts() {
        let text = format!("{}\n{}", "a".repeat(1500), "b".repeat(1500));
        let c = chunk(&text, 0).unwrap();
        assert_eq!(c.next, Some(1501));
        assert!(c.render().ends_with("\n\ncursor=0 has_more=true next=1501"));
        let last = chunk(&text, 1501).unwrap();
        assert_eq!(
            last.render(),
            format!("{}\n\ncursor=1501 has_more=false", "b".repeat(1500))
        );
        assert_eq!(
            chunk("", 0).unwrap().render(),
            "(The page has no readable text.)\n\ncursor=0 has_more=false"
        );
    }

    #[test]
    fn page_text_is_tidied() {
        assert_eq!(
            tidy("Title  \r\n\n\n\nline\u{a0}one \n   \nline two\n\n"),
            "Title\n\nline one\n\nline two"
        );
    }

    #[test]
    fn cursors_scrolls_and_targets_parse_what_models_send() {
        assert_eq!(parse_cursor(None), Ok(0));
        assert_eq!(parse_cursor(Some(&json!("2048"))), Ok(2048));
        assert_eq!(parse_cursor(Some(&json!("next=4096"))), Ok(4096));
        assert_eq!(parse_cursor(Some(&json!(12))), Ok(12));
        assert_eq!(parse_cursor(Some(&json!(""))), Ok(0));
        assert!(parse_cursor(Some(&json!("abc"))).is_err());
        assert!(parse_cursor(Some(&json!(-3))).is_err());

        assert_eq!(parse_scroll(None, None), Ok(800));
        assert_eq!(
            parse_scroll(Some(&json!("UP")), Some(&json!(300))),
            Ok(-300)
        );
        assert_eq!(
            parse_scroll(Some(&json!("down")), Some(&json!("250px"))),
            Ok(250)
        );
        assert_eq!(parse_scroll(None, Some(&json!(10_000_000))), Ok(100_000));
        assert!(parse_scroll(Some(&json!("left")), None).is_err());
        assert!(parse_scroll(None, Some(&json!(0))).is_err());

        assert_eq!(
            Target::parse(&json!({"selector": " #go ", "role": "link"})),
            Ok(Target::Selector("#go".into()))
        );
        let t = Target::parse(&json!({"role": "Link", "name": "Next page"})).unwrap();
        assert_eq!(t.describe(), "the link \"Next page\"");
        assert_eq!(
            Target::parse(&json!({"role": "button"}))
                .unwrap()
                .describe(),
            "the first button"
        );
        assert!(Target::parse(&json!({"name": "x"})).is_err());
        assert!(same_name("Next  Page", "next page"));
        assert!(name_within("Go to the next page", "NEXT page"));
    }

    #[test]
    fn history_keeps_the_last_twenty_visits_in_order() {
        let mut h = History::default();
        assert_eq!(h.render(), "No pages visited yet in this session.");
        h.visit("about:blank");
        h.visit("http://a/1");
        h.visit("http://a/1");
        h.visit("http://a/2");
        assert_eq!(h.render(), "1. http://a/1\n2. http://a/2");
        for i in 0..30 {
            h.visit(&format!("http://b/{i}"));
        }
        let text = h.render();
        assert_eq!(text.lines().count(), HISTORY_LEN);
        assert!(text.starts_with("1. http://b/10\n"), "{text}");
        assert!(text.ends_with("20. http://b/29"), "{text}");
    }
}
