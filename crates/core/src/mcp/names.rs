//! Model-facing names and schemas for MCP tools. Pure: no I/O.
//!
//! Providers accept function names matching `^[A-Za-z0-9_-]{1,64}$`, so `<server>__<tool>`
//! is sanitized, shortened with a stable hash suffix when too long, and de-duplicated
//! (`tools::names`).

use serde_json::{Map, Value};

#[cfg(test)]
use crate::tools::names::MAX_NAME_LEN;
use crate::tools::names::UniqueNames;
pub(super) use crate::tools::names::sanitize;

/// Hands out unique `<server>__<tool>` names for one session.
#[derive(Default)]
pub(super) struct NameAllocator {
    names: UniqueNames,
}

impl NameAllocator {
    /// The name for `tool` of `server`: sanitized, at most 64 characters, not handed out
    /// before (a harness may still rename it; `tools::external_entries` keeps it unique).
    pub(super) fn allocate(&mut self, server: &str, tool: &str) -> String {
        self.names.claim(&format!(
            "{}__{}",
            sanitize(server, "mcp"),
            sanitize(tool, "tool")
        ))
    }
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
