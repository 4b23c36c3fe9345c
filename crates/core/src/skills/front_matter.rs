//! SKILL.md front matter: the split and the rules. `build.rs` includes this file too (bundled
//! skills are checked and parsed at build time, so a session never runs the YAML parser for
//! them); it depends on `serde` and `serde_saphyr` only.

use serde::Deserialize;

pub(super) const MAX_NAME: usize = 64;
pub(super) const MAX_DESCRIPTION: usize = 1024;

#[derive(Debug, Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
}

/// A valid skill file: its name (the folder's when the front matter has none), its
/// description, and where the body starts in the text.
#[derive(Debug)]
pub(super) struct Parsed {
    pub name: String,
    pub description: String,
    pub body_start: usize,
}

/// Splits `---\nyaml\n---\nbody` into the YAML and where the body starts; Err when the
/// text has no closed front matter. Agent and command files share it.
pub(crate) fn split(text: &str) -> Result<(&str, usize), String> {
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let unmarked = &text[bom..];
    let rest = unmarked
        .strip_prefix("---\n")
        .or_else(|| unmarked.strip_prefix("---\r\n"))
        .ok_or("missing YAML front matter (the file must start with ---)")?;
    let end = rest
        .find("\n---")
        .ok_or("the front matter is not closed by a --- line")?;
    let yaml = &rest[..end];
    let body = rest[end + 4..]
        .trim_start_matches(['-'])
        .trim_start_matches(['\r', '\n']);
    Ok((yaml, text.len() - body.len()))
}

/// Splits `---\nyaml\n---\nbody` and checks the fields; Err says what is wrong.
pub(super) fn parse(text: &str, dir_name: &str) -> Result<Parsed, String> {
    let (yaml, body_start) = split(text)?;
    let fm: FrontMatter =
        serde_saphyr::from_str(yaml).map_err(|e| format!("invalid front matter: {e}"))?;
    let name = fm
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| dir_name.to_string());
    if name.chars().count() > MAX_NAME {
        return Err(format!("name is longer than {MAX_NAME} characters"));
    }
    if name.contains(char::is_whitespace) || name.contains('/') {
        return Err(format!("name `{name}` must not contain spaces or slashes"));
    }
    let description = fm
        .description
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .ok_or("description is required")?;
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(format!(
            "description is longer than {MAX_DESCRIPTION} characters"
        ));
    }
    Ok(Parsed {
        name,
        description,
        body_start,
    })
}
