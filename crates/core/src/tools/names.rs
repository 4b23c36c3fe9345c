//! Tool names as providers accept them: `^[A-Za-z0-9_-]{1,64}$`, unique in a request. Every
//! naming rule (a harness's prefix such as Claude Code's `mcp__`, sanitizing, the length
//! cut) is applied first and uniqueness last, so no later rule can undo it. Pure: no I/O.

use std::collections::HashSet;

/// Longest function name providers accept.
pub(crate) const MAX_NAME_LEN: usize = 64;

/// Replaces everything outside `[A-Za-z0-9_-]` with `_`; an empty result becomes `fallback`.
pub(crate) fn sanitize(s: &str, fallback: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        fallback.to_string()
    } else {
        out
    }
}

/// Hands out names that are valid and not handed out (or reserved) before. The same
/// requests in the same order give the same names, so a resumed session's history keeps
/// matching its tools.
#[derive(Default)]
pub(crate) struct UniqueNames {
    taken: HashSet<String>,
}

impl UniqueNames {
    /// Names that are already someone's (a harness's own tools).
    pub(crate) fn reserving<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        UniqueNames {
            taken: names.into_iter().map(str::to_string).collect(),
        }
    }

    /// `wanted`, sanitized, cut to 64 characters with a hash of the whole name when longer,
    /// then made unique with a `_2`, `_3`, … suffix that the cut leaves in place.
    pub(crate) fn claim(&mut self, wanted: &str) -> String {
        let base = shorten(&sanitize(wanted, "tool"));
        let mut name = base.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            let suffix = format!("_{n}");
            name = format!("{}{suffix}", truncate(&base, MAX_NAME_LEN - suffix.len()));
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// Cuts a name longer than 64 characters and appends a hash of the whole name, so two long
/// names with the same start stay distinct.
fn shorten(name: &str) -> String {
    if name.len() <= MAX_NAME_LEN {
        return name.to_string();
    }
    let hash = format!("{:016x}", fnv1a(name.as_bytes()));
    let suffix = format!("_{}", &hash[..8]);
    format!("{}{suffix}", truncate(name, MAX_NAME_LEN - suffix.len()))
}

/// The names are ASCII after `sanitize`, so byte slicing is safe.
fn truncate(s: &str, max: usize) -> &str {
    &s[..s.len().min(max)]
}

/// FNV-1a: stable across Rust versions and runs, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
