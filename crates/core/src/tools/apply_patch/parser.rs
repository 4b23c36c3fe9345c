//! Parser for the Codex `apply_patch` envelope format.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path/to/new.txt
//! +line one
//! *** Update File: path/to/existing.rs
//! *** Move to: path/to/renamed.rs
//! @@ fn context()
//!  context line
//! -removed line
//! +added line
//! *** End of File
//! *** Delete File: path/to/old.txt
//! *** End Patch
//! ```

use super::{Hunk, Patch, PatchError, UpdateChunk};

pub(crate) const BEGIN_PATCH_MARKER: &str = "*** Begin Patch";
pub(crate) const END_PATCH_MARKER: &str = "*** End Patch";
const ADD_FILE_MARKER: &str = "*** Add File:";
const DELETE_FILE_MARKER: &str = "*** Delete File:";
const UPDATE_FILE_MARKER: &str = "*** Update File:";
const MOVE_TO_MARKER: &str = "*** Move to:";
const EOF_MARKER: &str = "*** End of File";
const EMPTY_CHANGE_CONTEXT_MARKER: &str = "@@";
const CHANGE_CONTEXT_MARKER: &str = "@@ ";

fn invalid_patch(message: &str) -> PatchError {
    PatchError::Parse(format!("invalid patch: {message}"))
}

fn invalid_hunk(line_number: usize, message: impl AsRef<str>) -> PatchError {
    PatchError::Parse(format!(
        "invalid hunk at line {line_number}, {}",
        message.as_ref()
    ))
}

/// Parse the full text of a patch (including the `*** Begin Patch` /
/// `*** End Patch` envelope, optionally wrapped in a `<<EOF` heredoc).
pub fn parse_patch(text: &str) -> Result<Patch, PatchError> {
    let all_lines: Vec<&str> = text.trim().lines().collect();

    // `first_line_number` is the 1-based number (within the trimmed text) of
    // the `*** Begin Patch` line.
    let (lines, first_line_number) = match check_boundaries(&all_lines) {
        Ok(()) => (&all_lines[..], 1),
        Err(err) => match strip_heredoc(&all_lines) {
            Some(inner) => {
                check_boundaries(inner)?;
                (inner, 2)
            }
            None => return Err(err),
        },
    };

    let body = &lines[1..lines.len() - 1];
    let mut hunks = Vec::new();
    let mut offset = 0;
    while offset < body.len() {
        // Blank lines between hunks are harmless; skip them.
        if body[offset].trim().is_empty() {
            offset += 1;
            continue;
        }
        let line_number = first_line_number + 1 + offset;
        let (hunk, consumed) = parse_one_hunk(&body[offset..], line_number)?;
        hunks.push(hunk);
        offset += consumed;
    }

    if hunks.is_empty() {
        return Err(invalid_patch("The patch does not contain any hunks"));
    }
    Ok(Patch { hunks })
}

fn check_boundaries(lines: &[&str]) -> Result<(), PatchError> {
    let first = lines.first().map(|l| l.trim());
    if first != Some(BEGIN_PATCH_MARKER) {
        return Err(invalid_patch(
            "The first line of the patch must be '*** Begin Patch'",
        ));
    }
    let last = lines.last().map(|l| l.trim());
    if lines.len() < 2 || last != Some(END_PATCH_MARKER) {
        return Err(invalid_patch(
            "The last line of the patch must be '*** End Patch'",
        ));
    }
    Ok(())
}

/// Strip a `<<EOF` ... `EOF` heredoc wrapper (as models sometimes emit when
/// they think they are writing a shell command).
fn strip_heredoc<'a>(lines: &'a [&'a str]) -> Option<&'a [&'a str]> {
    if lines.len() < 4 {
        return None;
    }
    let first = lines[0].trim();
    let last = lines[lines.len() - 1].trim();
    let is_heredoc_start = matches!(first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"");
    if is_heredoc_start && last == "EOF" {
        Some(&lines[1..lines.len() - 1])
    } else {
        None
    }
}

/// Returns the path following a hunk header marker, if `line` is such a header.
fn header_path<'a>(
    line: &'a str,
    marker: &str,
    line_number: usize,
) -> Result<Option<&'a str>, PatchError> {
    match line.strip_prefix(marker) {
        None => Ok(None),
        Some(rest) => {
            let path = rest.trim();
            if path.is_empty() {
                Err(invalid_hunk(
                    line_number,
                    format!("'{line}' does not name a file path"),
                ))
            } else {
                Ok(Some(path))
            }
        }
    }
}

/// Parse one hunk starting at `lines[0]`; returns the hunk and the number of
/// lines consumed.
fn parse_one_hunk(lines: &[&str], line_number: usize) -> Result<(Hunk, usize), PatchError> {
    let header = lines[0].trim();

    if let Some(path) = header_path(header, ADD_FILE_MARKER, line_number)? {
        let mut contents = String::new();
        let mut consumed = 1;
        for line in &lines[1..] {
            match line.strip_prefix('+') {
                Some(text) => {
                    contents.push_str(text);
                    contents.push('\n');
                    consumed += 1;
                }
                None => break,
            }
        }
        return Ok((
            Hunk::AddFile {
                path: path.to_string(),
                contents,
            },
            consumed,
        ));
    }

    if let Some(path) = header_path(header, DELETE_FILE_MARKER, line_number)? {
        return Ok((
            Hunk::DeleteFile {
                path: path.to_string(),
            },
            1,
        ));
    }

    if let Some(path) = header_path(header, UPDATE_FILE_MARKER, line_number)? {
        let mut consumed = 1;

        let mut move_path = None;
        if let Some(next) = lines.get(1)
            && let Some(dest) = header_path(next.trim(), MOVE_TO_MARKER, line_number + 1)?
        {
            move_path = Some(dest.to_string());
            consumed += 1;
        }

        let mut chunks = Vec::new();
        while consumed < lines.len() {
            let line = lines[consumed];
            // Blank lines between chunks (e.g. after `*** End of File`).
            if line.trim().is_empty() {
                consumed += 1;
                continue;
            }
            // The next hunk header (or another marker) ends this hunk.
            if line.starts_with("***") {
                break;
            }
            let (chunk, chunk_lines) = parse_update_chunk(
                &lines[consumed..],
                line_number + consumed,
                chunks.is_empty(),
            )?;
            chunks.push(chunk);
            consumed += chunk_lines;
        }

        if chunks.is_empty() {
            return Err(invalid_hunk(
                line_number,
                format!("Update file hunk for path '{path}' is empty"),
            ));
        }

        return Ok((
            Hunk::UpdateFile {
                path: path.to_string(),
                move_path,
                chunks,
            },
            consumed,
        ));
    }

    Err(invalid_hunk(
        line_number,
        format!(
            "'{header}' is not a valid hunk header. Valid hunk headers: \
             '*** Add File: {{path}}', '*** Delete File: {{path}}', '*** Update File: {{path}}'"
        ),
    ))
}

/// If `line` is a `@@` / `@@ <context>` header, returns the (possibly empty)
/// context text.
fn change_context_header(line: &str) -> Option<&str> {
    let trimmed = line.trim_end();
    if trimmed == EMPTY_CHANGE_CONTEXT_MARKER {
        return Some("");
    }
    trimmed.strip_prefix(CHANGE_CONTEXT_MARKER)
}

/// Is `ctx` the tail of a unified-diff header, i.e. `-A[,B] +C[,D]` optionally
/// followed by ` @@...`?
fn is_unified_range(ctx: &str) -> bool {
    fn range(text: &str, sign: char) -> Option<&str> {
        let rest = text.strip_prefix(sign)?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != ',')
            .unwrap_or(rest.len());
        (digits > 0 && rest.as_bytes()[0].is_ascii_digit()).then_some(&rest[digits..])
    }
    let Some(rest) = range(ctx.trim(), '-') else {
        return false;
    };
    let Some(rest) = range(rest.trim_start(), '+') else {
        return false;
    };
    let rest = rest.trim();
    rest.is_empty() || rest.starts_with("@@")
}

/// Parse one update chunk starting at `lines[0]`; returns the chunk and the
/// number of lines consumed.
fn parse_update_chunk(
    lines: &[&str],
    line_number: usize,
    allow_missing_context: bool,
) -> Result<(UpdateChunk, usize), PatchError> {
    let mut change_context = Vec::new();
    let mut index = 0;

    // One or more `@@` headers; stacked headers narrow the search in order.
    while let Some(ctx) = lines.get(index).and_then(|l| change_context_header(l)) {
        // A unified-diff range header (`@@ -12,5 +12,6 @@`) carries no usable
        // context; treat it like a bare `@@`.
        if !ctx.trim().is_empty() && !is_unified_range(ctx) {
            change_context.push(ctx.to_string());
        }
        index += 1;
    }

    if index == 0 && !allow_missing_context {
        return Err(invalid_hunk(
            line_number,
            format!(
                "Expected update hunk to start with a @@ context marker, got: '{}'",
                lines[0]
            ),
        ));
    }

    let body_start = index;
    if body_start >= lines.len() {
        return Err(invalid_hunk(
            line_number + body_start,
            "Update hunk does not contain any lines",
        ));
    }

    let mut chunk = UpdateChunk {
        change_context,
        old_lines: Vec::new(),
        new_lines: Vec::new(),
        is_end_of_file: false,
    };

    while index < lines.len() {
        let line = lines[index];
        let body_lines = index - body_start;
        if line.trim_end() == EOF_MARKER {
            if body_lines == 0 {
                return Err(invalid_hunk(
                    line_number + index,
                    "Update hunk does not contain any lines",
                ));
            }
            chunk.is_end_of_file = true;
            index += 1;
            break;
        }
        match line.chars().next() {
            None => {
                // A completely empty line is an empty context line.
                chunk.old_lines.push(String::new());
                chunk.new_lines.push(String::new());
            }
            Some(' ') => {
                chunk.old_lines.push(line[1..].to_string());
                chunk.new_lines.push(line[1..].to_string());
            }
            Some('-') => chunk.old_lines.push(line[1..].to_string()),
            Some('+') => chunk.new_lines.push(line[1..].to_string()),
            Some(_) => {
                if body_lines == 0 {
                    return Err(invalid_hunk(
                        line_number + index,
                        format!(
                            "Unexpected line found in update hunk: '{line}'. Every line should \
                             start with ' ' (context line), '+' (added line), or '-' (removed line)"
                        ),
                    ));
                }
                // Start of the next chunk or hunk.
                break;
            }
        }
        index += 1;
    }

    Ok((chunk, index))
}
