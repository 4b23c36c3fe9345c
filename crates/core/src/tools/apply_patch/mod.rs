//! Codex-style `apply_patch`: a parser for the patch envelope format and a
//! pure (I/O-free) applier.
//!
//! * [`parse_patch`] turns patch text into a [`Patch`].
//! * [`derive_new_contents`] applies one Update hunk's chunks to a file's text.
//! * [`plan_patch`] computes every change of a patch up front, so a caller can
//!   write all of them or none.
//! * [`parse_shell_invocation`] recognises `apply_patch <<'EOF' ...` shell
//!   commands so they can be routed here instead of to a shell.

mod parser;
mod seek;
mod shell;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt;

pub use parser::parse_patch;
pub use shell::parse_shell_invocation;

/// A parsed patch: one or more hunks, applied in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The hunks, in patch order.
    pub hunks: Vec<Hunk>,
}

/// One `*** Add/Delete/Update File` section of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// Create a file.
    AddFile {
        /// The path, as written in the patch.
        path: String,
        /// The whole new file.
        contents: String,
    },
    /// Remove a file.
    DeleteFile {
        /// The path, as written in the patch.
        path: String,
    },
    /// Change a file, maybe moving it.
    UpdateFile {
        /// The path, as written in the patch.
        path: String,
        /// `*** Move to`: the new path.
        move_path: Option<String>,
        /// The `@@` sections, in file order.
        chunks: Vec<UpdateChunk>,
    },
}

/// One `@@` section of an Update hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateChunk {
    /// `@@ <line>` headers, located in order before the old lines.
    pub change_context: Vec<String>,
    /// Context and removed lines, in file order.
    pub old_lines: Vec<String>,
    /// Context and added lines, in file order.
    pub new_lines: Vec<String>,
    /// The chunk was followed by `*** End of File`.
    pub is_end_of_file: bool,
}

/// Why a patch was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchError {
    /// The patch text is malformed.
    Parse(String),
    /// The patch is well formed but does not apply to the files.
    Apply(String),
}

impl PatchError {
    /// The text the model reads.
    pub fn message(&self) -> &str {
        match self {
            PatchError::Parse(message) | PatchError::Apply(message) => message,
        }
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for PatchError {}

/// A change computed by [`plan_patch`], ready to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedChange {
    /// A new file.
    Add {
        /// The path, as written in the patch.
        path: String,
        /// Its text.
        contents: String,
    },
    /// A file to remove.
    Delete {
        /// The path, as written in the patch.
        path: String,
        /// What it held, for the diff.
        old_contents: String,
    },
    /// A file to rewrite, maybe under a new path.
    Update {
        /// The path, as written in the patch.
        path: String,
        /// The new path, when moved.
        move_path: Option<String>,
        /// The text before.
        old_contents: String,
        /// The text after.
        new_contents: String,
    },
}

/// A region of the original lines to replace.
struct Replacement {
    start: usize,
    /// The chunk's old lines as matched (context and removed lines).
    old_lines: Vec<String>,
    new_lines: Vec<String>,
}

/// A file's lines without their endings, and each line's ending (`\n`, `\r\n`, `\r`, or
/// `""` for a last line without one). Mixed endings in one file are kept apart.
fn split_lines(text: &str) -> (Vec<String>, Vec<&'static str>) {
    let mut lines = Vec::new();
    let mut ends = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let end = match bytes[i] {
            b'\n' => "\n",
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => "\r\n",
            b'\r' => "\r",
            _ => {
                i += 1;
                continue;
            }
        };
        lines.push(text[start..i].to_string());
        ends.push(end);
        i += end.len();
        start = i;
    }
    if start < text.len() {
        lines.push(text[start..].to_string());
        ends.push("");
    }
    (lines, ends)
}

/// Apply an Update hunk's chunks to `original` (the file's current text).
/// `path` is only used in messages.
///
/// Line endings, as Codex keeps them: lines the patch leaves alone (context lines included)
/// keep their own ending byte for byte, so a file mixing `\n`, `\r\n` and `\r` stays mixed;
/// lines the patch adds or replaces take the ending of the file's first line. The result
/// always ends with a line ending (a last line without one gets the first line's).
pub fn derive_new_contents(
    original: &str,
    path: &str,
    chunks: &[UpdateChunk],
) -> Result<String, PatchError> {
    let (mut lines, mut ends) = split_lines(original);
    let first_eol = ends.iter().copied().find(|e| !e.is_empty()).unwrap_or("\n");

    let mut replacements = compute_replacements(&lines, path, chunks)?;
    // Stable sort: chunks that start at the same line keep patch order.
    replacements.sort_by_key(|r| r.start);
    for r in replacements.into_iter().rev() {
        let end = r.start + r.old_lines.len();
        let new_ends = replaced_endings(&r, &ends[r.start..end], first_eol);
        lines.splice(r.start..end, r.new_lines);
        ends.splice(r.start..end, new_ends);
    }

    let mut out = String::with_capacity(original.len() + 64);
    for (line, end) in lines.iter().zip(&ends) {
        out.push_str(line);
        out.push_str(if end.is_empty() { first_eol } else { end });
    }
    Ok(out)
}

/// The endings of a replacement's new lines: a line the chunk keeps (equal in its old and new
/// lines) has the ending it had in the file; an added line gets `first_eol`.
fn replaced_endings(
    r: &Replacement,
    old_ends: &[&'static str],
    first_eol: &'static str,
) -> Vec<&'static str> {
    let mut out = vec![first_eol; r.new_lines.len()];
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &r.old_lines, &r.new_lines);
    for op in ops {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            out[new_index..new_index + len].copy_from_slice(&old_ends[old_index..old_index + len]);
        }
    }
    out
}

fn compute_replacements(
    lines: &[String],
    path: &str,
    chunks: &[UpdateChunk],
) -> Result<Vec<Replacement>, PatchError> {
    let mut replacements = Vec::new();
    let mut line_index = 0;

    for chunk in chunks {
        let mut context_index = None;
        for ctx in &chunk.change_context {
            match seek::seek_sequence(lines, std::slice::from_ref(ctx), line_index) {
                Some(idx) => {
                    context_index = Some(idx);
                    line_index = idx + 1;
                }
                None => {
                    return Err(PatchError::Apply(format!(
                        "Failed to find context '{ctx}' in {path}"
                    )));
                }
            }
        }

        if chunk.old_lines.is_empty() {
            // Pure insertion: right after the `@@` context line if one was
            // given, otherwise at the end of the file.
            let start = if chunk.is_end_of_file || context_index.is_none() {
                lines.len()
            } else {
                line_index
            };
            replacements.push(Replacement {
                start,
                old_lines: Vec::new(),
                new_lines: chunk.new_lines.clone(),
            });
            continue;
        }

        let Some((start, old, new)) = locate_chunk(lines, chunk, line_index, context_index) else {
            return Err(PatchError::Apply(format!(
                "Failed to find expected lines in {path}:\n{}",
                chunk.old_lines.join("\n")
            )));
        };
        replacements.push(Replacement {
            start,
            old_lines: old.to_vec(),
            new_lines: new.to_vec(),
        });
        line_index = start + old.len();
    }

    Ok(replacements)
}

/// Find where a chunk's old lines sit in the file. Returns the start index
/// and the (possibly trimmed) old and new lines to use.
fn locate_chunk<'c>(
    lines: &[String],
    chunk: &'c UpdateChunk,
    start: usize,
    context_index: Option<usize>,
) -> Option<(usize, &'c [String], &'c [String])> {
    let mut variants: Vec<(&[String], &[String])> = vec![(&chunk.old_lines, &chunk.new_lines)];
    // A trailing empty old line often stands for the file's final newline,
    // which is not a line of its own here. Retry without it.
    if chunk.old_lines.last().is_some_and(String::is_empty) {
        let old = &chunk.old_lines[..chunk.old_lines.len() - 1];
        let new = match chunk.new_lines.last() {
            Some(last) if last.is_empty() => &chunk.new_lines[..chunk.new_lines.len() - 1],
            _ => &chunk.new_lines[..],
        };
        variants.push((old, new));
    }

    if chunk.is_end_of_file {
        for &(old, new) in &variants {
            if let Some(at) = lines.len().checked_sub(old.len())
                && at >= start
                && seek::matches_exactly_at(lines, old, at)
            {
                return Some((at, old, new));
            }
        }
    }

    // Models often repeat the `@@` context line as the chunk's first context
    // line; if nothing matches after it, also allow matching at it.
    let mut starts = vec![start];
    if let Some(ctx) = context_index {
        starts.push(ctx);
    }
    for search_start in starts {
        for &(old, new) in &variants {
            if let Some(at) = seek::seek_sequence(lines, old, search_start) {
                return Some((at, old, new));
            }
        }
    }
    None
}

/// Compute every change without writing anything. `read` returns a file's
/// current text (`Err(message)` if missing/unreadable).
///
/// Hunks apply in order; a later hunk on a path touched earlier in the same
/// patch sees the earlier result. Adding a file that exists is allowed
/// (overwrite, like Codex). Deleting or updating a missing file is an Apply
/// error naming the path.
pub fn plan_patch(
    patch: &Patch,
    mut read: impl FnMut(&str) -> Result<String, String>,
) -> Result<Vec<PlannedChange>, PatchError> {
    // Files touched earlier in this patch: `None` means deleted (or moved away).
    let mut overlay: HashMap<String, Option<String>> = HashMap::new();
    let mut current =
        |overlay: &HashMap<String, Option<String>>, path: &str| match overlay.get(path) {
            Some(Some(contents)) => Ok(contents.clone()),
            Some(None) => Err("the file was deleted or moved earlier in this patch".to_string()),
            None => read(path),
        };

    let mut changes = Vec::with_capacity(patch.hunks.len());
    for hunk in &patch.hunks {
        match hunk {
            Hunk::AddFile { path, contents } => {
                overlay.insert(path.clone(), Some(contents.clone()));
                changes.push(PlannedChange::Add {
                    path: path.clone(),
                    contents: contents.clone(),
                });
            }
            Hunk::DeleteFile { path } => {
                let old_contents = current(&overlay, path).map_err(|err| {
                    PatchError::Apply(format!("Failed to delete file {path}: {err}"))
                })?;
                overlay.insert(path.clone(), None);
                changes.push(PlannedChange::Delete {
                    path: path.clone(),
                    old_contents,
                });
            }
            Hunk::UpdateFile {
                path,
                move_path,
                chunks,
            } => {
                let old_contents = current(&overlay, path).map_err(|err| {
                    PatchError::Apply(format!("Failed to read file to update {path}: {err}"))
                })?;
                let new_contents = derive_new_contents(&old_contents, path, chunks)?;
                match move_path {
                    Some(dest) => {
                        overlay.insert(path.clone(), None);
                        overlay.insert(dest.clone(), Some(new_contents.clone()));
                    }
                    None => {
                        overlay.insert(path.clone(), Some(new_contents.clone()));
                    }
                }
                changes.push(PlannedChange::Update {
                    path: path.clone(),
                    move_path: move_path.clone(),
                    old_contents,
                    new_contents,
                });
            }
        }
    }
    Ok(changes)
}

/// `"Success. Updated the following files:\n"` then one line per change:
/// `A path`, `M path` (moves show the destination path), `D path`.
pub fn summary(changes: &[PlannedChange]) -> String {
    let mut out = String::from("Success. Updated the following files:\n");
    for change in changes {
        let line = match change {
            PlannedChange::Add { path, .. } => format!("A {path}"),
            PlannedChange::Delete { path, .. } => format!("D {path}"),
            PlannedChange::Update {
                path, move_path, ..
            } => format!("M {}", move_path.as_deref().unwrap_or(path)),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}
