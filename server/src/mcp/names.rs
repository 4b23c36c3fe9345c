//! Model-facing names and schemas for MCP tools. Pure: no I/O.
//!
//! Providers accept function names matching `^[A-Za-z0-9_-]{1,64}$`, so `<server>__<tool>`
//! is sanitized, shortened with a stable hash suffix when too long, and de-duplicated.

use serde_json::{Map, Value};
use std::collections::HashSet;

/// Longest function name providers accept.
pub(super) const MAX_NAME_LEN: usize = 64;

/// Replaces everything outside `[A-Za-z0-9_-]` with `_`; an empty result becomes `fallback`.
pub(super) fn sanitize(s: &str, fallback: &str) -> String {
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

/// Hands out unique `<server>__<tool>` names for one session.
#[derive(Default)]
pub(super) struct NameAllocator {
    taken: HashSet<String>,
}

impl NameAllocator {
    /// The model-facing name for `tool` of `server`: sanitized, at most 64 characters, not
    /// handed out before. The same inputs in the same order give the same names, so a resumed
    /// session's history keeps matching its tools.
    pub(super) fn allocate(&mut self, server: &str, tool: &str) -> String {
        let base = shorten(&format!(
            "{}__{}",
            sanitize(server, "mcp"),
            sanitize(tool, "tool")
        ));
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

/// A server's input schema as a function-parameters schema: always an object with
/// `type: "object"` and `properties`, everything else passed through.
pub(super) fn parameters_schema(schema: &Map<String, Value>) -> Value {
    let mut schema = schema.clone();
    schema.insert("type".into(), Value::String("object".into()));
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema.insert("properties".into(), Value::Object(Map::new()));
    }
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_sanitized_prefixed_and_unique() {
        let mut names = NameAllocator::default();
        assert_eq!(names.allocate("echo", "say"), "echo__say");
        assert_eq!(
            names.allocate("my server", "do.it/now"),
            "my_server__do_it_now"
        );
        assert_eq!(names.allocate("", "é"), "mcp___");
        // Two servers whose names sanitize alike.
        assert_eq!(names.allocate("echo!", "say"), "echo___say");
        assert_eq!(names.allocate("echo?", "say"), "echo___say_2");
        assert_eq!(names.allocate("echo?", "say"), "echo___say_3");
    }

    #[test]
    fn long_names_are_cut_with_a_stable_hash() {
        let mut names = NameAllocator::default();
        let long_tool = "t".repeat(100);
        let a = names.allocate("server", &long_tool);
        assert_eq!(a.len(), MAX_NAME_LEN);
        assert!(a.starts_with("server__ttt"));
        let b = names.allocate("server", &format!("{long_tool}x"));
        assert_eq!(b.len(), MAX_NAME_LEN);
        assert_ne!(a, b);
        // Same input, fresh allocator: same name.
        assert_eq!(NameAllocator::default().allocate("server", &long_tool), a);
        // A duplicate of a long name stays within the limit.
        let c = names.allocate("server", &long_tool);
        assert_eq!(c.len(), MAX_NAME_LEN);
        assert!(c.ends_with("_2"));
        for n in [&a, &b, &c] {
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
        }
    }

    #[test]
    fn schemas_are_objects() {
        let s = |v: Value| parameters_schema(v.as_object().unwrap());
        assert_eq!(s(json!({})), json!({"type": "object", "properties": {}}));
        assert_eq!(
            s(json!({"properties": {"a": {"type": "string"}}, "required": ["a"]})),
            json!({"properties": {"a": {"type": "string"}}, "required": ["a"], "type": "object"})
        );
        assert_eq!(s(json!({"type": "array"}))["type"], "object");
    }
}
