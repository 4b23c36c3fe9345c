//! Line windows of a file: what the read tools show. Text already in memory is cut directly;
//! files too big to hold whole are streamed from disk, keeping only the window, so a 1 GB log
//! costs a 64 KiB buffer and the lines shown.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::path::Path;

/// Lines of a file (1-based numbers), as `str::lines` splits them.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LineWindow {
    pub lines: Vec<(usize, String)>,
    pub total_lines: usize,
    pub reached_end: bool,
}

/// Lines `offset..offset+limit` (1-based; a negative offset counts from the end).
pub(crate) fn from_text(text: &str, offset: i64, limit: usize) -> LineWindow {
    let all: Vec<&str> = text.lines().collect();
    let total = all.len();
    let start = first_index(offset, total);
    let end = start.saturating_add(limit).min(total);
    let lines = all
        .get(start..end)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, l)| (start + i + 1, l.to_string()))
        .collect();
    LineWindow {
        lines,
        total_lines: total,
        reached_end: end >= total,
    }
}

fn first_index(offset: i64, total: usize) -> usize {
    if offset < 0 {
        total.saturating_sub(offset.unsigned_abs() as usize)
    } else {
        (offset.max(1) as usize) - 1
    }
}

const CHUNK: usize = 64 * 1024;
/// A NUL in the first bytes means binary: shown as a refusal, not as text.
const BINARY_SNIFF: usize = 8 * 1024;

/// [`from_text`] for a file on disk, in one pass (two for a negative offset: the first counts
/// lines). Each kept line holds at most `max_line_bytes`; memory stays bounded whatever the
/// file's size or line lengths.
pub(crate) fn stream(
    path: &Path,
    offset: i64,
    limit: usize,
    max_line_bytes: usize,
) -> io::Result<LineWindow> {
    let start = if offset < 0 {
        first_index(offset, count_lines(path)?)
    } else {
        first_index(offset, 0)
    };
    let mut kept: VecDeque<(usize, String)> = VecDeque::new();
    let mut line = Vec::new();
    let mut index = 0usize;
    let mut in_line = false;
    let mut sniffed = false;
    let end = start.saturating_add(limit);
    for_each_chunk(path, |mut rest| {
        if !sniffed {
            sniffed = true;
            if memchr::memchr(0, &rest[..rest.len().min(BINARY_SNIFF)]).is_some() {
                let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{} is a binary file ({size} bytes); not shown",
                        path.display()
                    ),
                ));
            }
        }
        while !rest.is_empty() {
            let (piece, ends) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], Some(i)),
                None => (rest, None),
            };
            if (start..end).contains(&index) && line.len() < max_line_bytes {
                let room = max_line_bytes - line.len();
                line.extend_from_slice(&piece[..piece.len().min(room)]);
            }
            in_line = true;
            match ends {
                Some(i) => {
                    keep(&mut kept, &mut line, index, start..end);
                    index += 1;
                    in_line = false;
                    rest = &rest[i + 1..];
                }
                None => rest = &[],
            }
        }
        Ok(())
    })?;
    if in_line {
        keep(&mut kept, &mut line, index, start..end);
        index += 1;
    }
    Ok(LineWindow {
        lines: kept.into(),
        total_lines: index,
        reached_end: end >= index,
    })
}

fn keep(
    kept: &mut VecDeque<(usize, String)>,
    line: &mut Vec<u8>,
    index: usize,
    window: std::ops::Range<usize>,
) {
    if window.contains(&index) {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        kept.push_back((index + 1, String::from_utf8_lossy(line).into_owned()));
    }
    line.clear();
}

fn count_lines(path: &Path) -> io::Result<usize> {
    let mut count = 0usize;
    let mut last = b'\n';
    for_each_chunk(path, |chunk| {
        count += memchr::memchr_iter(b'\n', chunk).count();
        last = chunk[chunk.len() - 1];
        Ok(())
    })?;
    Ok(count + usize::from(last != b'\n'))
}

/// Feeds the file to `f` in non-empty chunks of at most [`CHUNK`] bytes.
fn for_each_chunk(path: &Path, mut f: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => f(&buf[..n])?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_one_and_from_the_end() {
        let w = from_text("a\nb\nc\n", 2, 1);
        assert_eq!(w.lines, vec![(2, "b".to_string())]);
        assert!(!w.reached_end);
        let w = from_text("a\nb\nc\n", -2, 10);
        assert_eq!(w.lines, vec![(2, "b".into()), (3, "c".into())]);
        assert!(w.reached_end);
        assert_eq!(w.total_lines, 3);
        assert!(from_text("a\n", 5, 3).lines.is_empty());
    }

    /// The streamed window is the in-memory window, line for line, on awkward inputs.
    #[test]
    fn streaming_matches_the_text_window() {
        let dir = tempfile::tempdir().unwrap();
        let long = "x".repeat(CHUNK * 2 + 17);
        let texts = [
            String::new(),
            "one".into(),
            "one\n".into(),
            "a\r\nb\r\n\r\nc".into(),
            format!("head\n{long}\nmiddle\n{long}"),
            (1..=40_000)
                .map(|i| format!("line {i} é→😀\n"))
                .collect::<String>(),
        ];
        for (k, text) in texts.iter().enumerate() {
            let p = dir.path().join(format!("f{k}"));
            std::fs::write(&p, text).unwrap();
            for (offset, limit) in [
                (1, 5),
                (2, 1),
                (3, 100_000),
                (-1, 10),
                (-3, 2),
                (-100_000, 4),
                (39_990, 20),
                (7, 0),
            ] {
                let want = from_text(text, offset, limit);
                let got = stream(&p, offset, limit, usize::MAX).unwrap();
                assert_eq!(got, want, "text {k}, offset {offset}, limit {limit}");
            }
        }
    }

    #[test]
    fn long_lines_are_held_to_the_cap_and_binary_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("long");
        std::fs::write(&p, format!("{}\nshort\n", "y".repeat(1_000_000))).unwrap();
        let w = stream(&p, 1, 2, 100).unwrap();
        assert_eq!(w.lines[0].1.len(), 100);
        assert_eq!(w.lines[1], (2, "short".into()));
        let b = dir.path().join("bin");
        std::fs::write(&b, b"ELF\0\x01\x02\n").unwrap();
        let e = stream(&b, 1, 10, 100).unwrap_err();
        assert!(e.to_string().contains("binary file"), "{e}");
    }
}
