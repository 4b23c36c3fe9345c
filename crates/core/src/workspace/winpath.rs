//! Windows paths, confined like Unix ones: drive letters (`C:\`), UNC shares (`\\server\share`)
//! and the verbatim forms (`\\?\C:\`, `\\?\UNC\server\share`) that `canonicalize` returns, with
//! `/` and `\` both separators, `.` dropped and `..` folded (never above the root), compared
//! without regard to case where the volume ignores case (the default on Windows).
//!
//! Pure string functions, so their tests run on every platform. On Windows the workspace
//! resolves links first (`paths.rs`) and uses [`is_within`] for the final check.

use std::fmt;

/// Where a path starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Root {
    /// `C:\` (letter upper-cased).
    Drive(char),
    /// `\\server\share`.
    Unc { server: String, share: String },
}

/// An absolute Windows path, normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WinPath {
    pub root: Root,
    pub parts: Vec<String>,
}

impl fmt::Display for WinPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.root {
            Root::Drive(d) => write!(f, "{d}:\\")?,
            Root::Unc { server, share } => write!(f, "\\\\{server}\\{share}\\")?,
        }
        f.write_str(&self.parts.join("\\"))
    }
}

/// Why a path is refused before it is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// `\\.\` and `\\?\` forms other than a drive or UNC share (devices, volume GUIDs).
    Device,
    /// `C:x`: relative to that drive's current folder, which is not ours.
    DriveRelative,
    /// A part that Windows would read differently: a trailing dot or space (Windows strips
    /// them, so `x.` is `x`), an alternate data stream (`a:b`), or a reserved device name.
    Ambiguous(String),
    /// `\\server` without a share.
    IncompleteUnc,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Device => {
                f.write_str("a device path (`\\\\.\\` or `\\\\?\\` without a drive)")
            }
            Refused::DriveRelative => f.write_str(
                "a drive-relative path (`C:x`); write `C:\\x` or a path relative to the workspace",
            ),
            Refused::Ambiguous(part) => write!(
                f,
                "the name `{part}`, which Windows reads differently (a trailing dot or space, a `:` stream, or a device name)"
            ),
            Refused::IncompleteUnc => {
                f.write_str("a UNC path without a share (`\\\\server\\share`)")
            }
        }
    }
}

fn is_sep(c: char) -> bool {
    c == '\\' || c == '/'
}

/// Device names Windows opens whatever folder they are in (`C:\repo\NUL.txt` is the NUL device).
const DEVICES: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "CONIN$",
    "CONOUT$",
];

fn check_part(part: &str) -> Result<(), Refused> {
    if part == "." || part == ".." {
        return Ok(());
    }
    let stem = part.split('.').next().unwrap_or(part).trim_end();
    let device = DEVICES.iter().any(|d| d.eq_ignore_ascii_case(stem));
    if part.ends_with('.') || part.ends_with(' ') || part.contains(':') || device {
        return Err(Refused::Ambiguous(part.to_string()));
    }
    Ok(())
}

/// Splits the root off `raw`: the root (None for a relative path), whether the path is rooted
/// on the current drive (`\x`), and the rest.
fn split_root(raw: &str) -> Result<(Option<Root>, bool, &str), Refused> {
    let b = raw.as_bytes();
    // \\?\ and \\.\ (also with forward slashes).
    if b.len() >= 4
        && is_sep(b[0] as char)
        && is_sep(b[1] as char)
        && (b[2] == b'?' || b[2] == b'.')
        && is_sep(b[3] as char)
    {
        let rest = &raw[4..];
        if b[2] == b'.' {
            return Err(Refused::Device);
        }
        let unc = rest.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("UNC"))
            && rest[3..].starts_with(is_sep);
        if unc {
            return unc_root(&rest[4..]).map(|(r, rest)| (Some(r), false, rest));
        }
        return match drive(rest) {
            Some((d, tail)) if tail.is_empty() || tail.starts_with(is_sep) => {
                Ok((Some(Root::Drive(d)), false, tail))
            }
            _ => Err(Refused::Device),
        };
    }
    if b.len() >= 2 && is_sep(b[0] as char) && is_sep(b[1] as char) {
        return unc_root(&raw[2..]).map(|(r, rest)| (Some(r), false, rest));
    }
    if let Some((d, tail)) = drive(raw) {
        if !tail.is_empty() && !tail.starts_with(is_sep) {
            return Err(Refused::DriveRelative);
        }
        return Ok((Some(Root::Drive(d)), false, tail));
    }
    if raw.starts_with(is_sep) {
        return Ok((None, true, raw));
    }
    Ok((None, false, raw))
}

fn drive(s: &str) -> Option<(char, &str)> {
    let mut chars = s.chars();
    let d = chars.next().filter(char::is_ascii_alphabetic)?;
    (chars.next() == Some(':')).then(|| (d.to_ascii_uppercase(), &s[2..]))
}

fn unc_root(s: &str) -> Result<(Root, &str), Refused> {
    let mut it = s.splitn(3, is_sep);
    let server = it.next().unwrap_or_default();
    let share = it.next().unwrap_or_default();
    if server.is_empty() || share.is_empty() || server == "." || server == "?" {
        return Err(Refused::IncompleteUnc);
    }
    let rest = it.next().unwrap_or_default();
    let consumed = s.len() - rest.len();
    Ok((
        Root::Unc {
            server: server.to_string(),
            share: share.to_string(),
        },
        &s[consumed..],
    ))
}

/// `raw` made absolute against `base` (an absolute path) and normalized.
pub(crate) fn resolve(base: &WinPath, raw: &str) -> Result<WinPath, Refused> {
    let (root, rooted, rest) = split_root(raw)?;
    let (root, mut parts) = match root {
        Some(r) => (r, Vec::new()),
        None if rooted => (base.root.clone(), Vec::new()),
        None => (base.root.clone(), base.parts.clone()),
    };
    for part in rest.split(is_sep).filter(|p| !p.is_empty()) {
        check_part(part)?;
        match part {
            "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p.to_string()),
        }
    }
    Ok(WinPath { root, parts })
}

/// An absolute path, parsed and normalized; None for a relative one.
pub(crate) fn parse(raw: &str) -> Result<Option<WinPath>, Refused> {
    let (root, _, _) = split_root(raw)?;
    let Some(root) = root else {
        return Ok(None);
    };
    resolve(
        &WinPath {
            root,
            parts: Vec::new(),
        },
        raw,
    )
    .map(Some)
}

fn same(a: &str, b: &str, ignore_case: bool) -> bool {
    if ignore_case {
        a.chars()
            .flat_map(char::to_uppercase)
            .eq(b.chars().flat_map(char::to_uppercase))
    } else {
        a == b
    }
}

/// Whether `path` is `root` or below it. Drive letters and UNC server and share names are
/// compared without case always; the other parts without case when `ignore_case`.
pub(crate) fn is_within(path: &WinPath, root: &WinPath, ignore_case: bool) -> bool {
    let roots_match = match (&path.root, &root.root) {
        (Root::Drive(a), Root::Drive(b)) => a == b,
        (
            Root::Unc {
                server: s1,
                share: h1,
            },
            Root::Unc {
                server: s2,
                share: h2,
            },
        ) => same(s1, s2, true) && same(h1, h2, true),
        _ => false,
    };
    roots_match
        && path.parts.len() >= root.parts.len()
        && path
            .parts
            .iter()
            .zip(&root.parts)
            .all(|(a, b)| same(a, b, ignore_case))
}

/// Confines `raw` (as the model wrote it) to `roots`, lexically: relative paths are taken
/// from `base`. The normalized path, or why not. (The workspace resolves links first and
/// checks with [`is_within`]; this is the lexical rule the test suite states.)
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn confine(
    roots: &[WinPath],
    base: &WinPath,
    raw: &str,
    ignore_case: bool,
) -> Result<WinPath, String> {
    let p = resolve(base, raw).map_err(|e| format!("path `{raw}` is refused: it is {e}"))?;
    if roots.iter().any(|r| is_within(&p, r, ignore_case)) {
        Ok(p)
    } else {
        Err(format!(
            "path `{raw}` resolves to {p}, which is outside the workspace roots ({})",
            roots
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

#[cfg(test)]
#[path = "winpath_tests.rs"]
mod tests;
