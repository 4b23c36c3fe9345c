//! Tool parameter schemas Kimi accepts. Moonshot checks every `tools[].function.parameters`
//! against its restricted dialect ("Moonshot Flavored JSON Schema") and answers 400 for the
//! whole request when one tool breaks it, so one MCP server with an unusual schema would
//! break every turn. [`normalize`] rewrites the shapes Moonshot is known to reject:
//!
//! | shape | Moonshot's error | rewrite |
//! |---|---|---|
//! | `type` next to `anyOf` | type should be defined in anyOf items | `type` moved into the items that lack one |
//! | tuple `items: [..]`, `items: false` | items must be an object | `prefixItems`, `items` dropped |
//! | boolean schema (`true`/`false`) | property schema must be an object | `true` → `{}`; `false` → property dropped |
//! | `$ref` with siblings | conflicting keywords after $ref expansion | the definition inlined, siblings merged over it |
//! | `$ref` outside `#/$defs` | references must start with #/$defs | `#/definitions/x` → `#/$defs/x`; other local pointers inlined |
//! | root without `type: "object"` | parameters.type is required and must be "object" | set (a root `anyOf` of objects is merged) |
//! | name starting with a digit | 400 | a letter prefixed ([`tool_name`]) |
//!
//! What cannot be rewritten (a remote `$ref`, a reference to nothing, a root that is not an
//! object) is an error: the caller leaves that tool out with a warning. Pure: no I/O.

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// Whether tools for this provider and model must follow Moonshot's dialect.
pub(crate) fn applies(provider_id: &str, model: &str) -> bool {
    super::catalog::moonshot_dialect(provider_id, model)
}

/// A function name Moonshot accepts: names may not start with a digit.
pub(crate) fn tool_name(name: &str) -> String {
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        let mut n = format!("t{name}");
        n.truncate(64);
        n
    } else {
        name.to_string()
    }
}

/// `schema` rewritten into Moonshot's dialect, or why that is not possible.
pub(crate) fn normalize(schema: &Value) -> Result<Value, String> {
    let root = match schema {
        Value::Object(_) => schema.clone(),
        Value::Bool(true) | Value::Null => json!({}),
        other => return Err(format!("the parameters schema is {other}, not an object")),
    };
    let mut n = Normalizer {
        root: &root,
        inlining: Vec::new(),
        used: BTreeSet::new(),
    };
    let mut out = n.node(&root)?;
    let obj = out
        .as_object_mut()
        .ok_or("the parameters schema is not an object")?;
    merge_root_union(obj)?;
    obj.insert("type".into(), json!("object"));
    let defs = n.used_defs()?;
    if !defs.is_empty() {
        obj.insert("$defs".into(), Value::Object(defs));
    }
    check(&out, &out)?;
    Ok(out)
}

struct Normalizer<'a> {
    /// The schema as given: what references point into.
    root: &'a Value,
    /// References being inlined, outermost first (a cycle cannot be inlined).
    inlining: Vec<String>,
    /// Definitions still referenced as `#/$defs/<name>`.
    used: BTreeSet<String>,
}

/// Keywords whose value is one schema.
const ONE: &[&str] = &[
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];
/// Keywords whose value is a list of schemas.
const LIST: &[&str] = &["anyOf", "oneOf", "allOf"];

impl Normalizer<'_> {
    fn node(&mut self, v: &Value) -> Result<Value, String> {
        let Value::Object(map) = v else {
            return Err(format!("a schema node is {v}, not an object"));
        };
        if let Some(r) = map.get("$ref") {
            return self.reference(map, r);
        }
        let mut out = Map::new();
        for (k, val) in map {
            match k.as_str() {
                // Reference targets only: what is used is inlined or moved to the root.
                "$defs" | "definitions" => {}
                "properties" | "patternProperties" => {
                    out.insert(k.clone(), Value::Object(self.properties(val)?));
                }
                "items" => match val {
                    Value::Array(tuple) => {
                        out.insert("prefixItems".into(), Value::Array(self.tuple(tuple)?));
                    }
                    Value::Bool(_) => {}
                    other => {
                        out.insert(k.clone(), self.node(other)?);
                    }
                },
                "prefixItems" => {
                    let tuple = val.as_array().ok_or("prefixItems is not a list")?;
                    out.insert(k.clone(), Value::Array(self.tuple(tuple)?));
                }
                k if LIST.contains(&k) => {
                    let items = val.as_array().ok_or_else(|| format!("{k} is not a list"))?;
                    let mut kept = Vec::new();
                    for item in items {
                        match item {
                            Value::Bool(false) => {}
                            Value::Bool(true) => kept.push(json!({})),
                            other => kept.push(self.node(other)?),
                        }
                    }
                    if kept.is_empty() {
                        return Err(format!("{k} has no schema that can match"));
                    }
                    out.insert(k.to_string(), Value::Array(kept));
                }
                k if ONE.contains(&k) && !val.is_boolean() => {
                    out.insert(k.to_string(), self.node(val)?);
                }
                _ => {
                    out.insert(k.clone(), val.clone());
                }
            }
        }
        let gone = dropped_required(map, &out);
        if let Some(Value::Array(names)) = out.get_mut("required") {
            names.retain(|n| n.as_str().is_none_or(|n| !gone.contains(n)));
        }
        move_type_into_any_of(&mut out);
        Ok(Value::Object(out))
    }

    /// `properties`: `true` becomes `{}`, a `false` property is dropped.
    fn properties(&mut self, v: &Value) -> Result<Map<String, Value>, String> {
        let Value::Object(props) = v else {
            return Err("properties is not an object".into());
        };
        let mut out = Map::new();
        for (name, schema) in props {
            match schema {
                Value::Bool(false) => {}
                Value::Bool(true) => {
                    out.insert(name.clone(), json!({}));
                }
                other => {
                    let s = self
                        .node(other)
                        .map_err(|e| format!("property `{name}`: {e}"))?;
                    out.insert(name.clone(), s);
                }
            }
        }
        Ok(out)
    }

    fn tuple(&mut self, items: &[Value]) -> Result<Vec<Value>, String> {
        items
            .iter()
            .map(|i| match i {
                Value::Bool(true) => Ok(json!({})),
                Value::Bool(false) => Err("a tuple position allows nothing (`false`)".into()),
                other => self.node(other),
            })
            .collect()
    }

    fn reference(&mut self, map: &Map<String, Value>, r: &Value) -> Result<Value, String> {
        let r = r.as_str().ok_or("$ref is not a string")?;
        let canonical = canonical_ref(r)?;
        let def_name = canonical.strip_prefix("#/$defs/").map(unescape);
        let siblings = map.len() > 1;
        if let Some(name) = &def_name {
            if !siblings || self.inlining.contains(&canonical) {
                // A plain reference to a definition is fine; in a cycle, siblings are dropped.
                if lookup(self.root, &canonical).is_none() {
                    return Err(format!("$ref `{r}` points to nothing"));
                }
                self.used.insert(name.clone());
                return Ok(json!({ "$ref": canonical }));
            }
        } else if self.inlining.contains(&canonical) {
            return Err(format!("$ref `{r}` is recursive and not under #/$defs"));
        }
        let target =
            lookup(self.root, &canonical).ok_or_else(|| format!("$ref `{r}` points to nothing"))?;
        let mut merged = match target {
            Value::Object(t) => t.clone(),
            Value::Bool(true) => Map::new(),
            other => return Err(format!("$ref `{r}` points to {other}, not a schema")),
        };
        for (k, v) in map {
            if k != "$ref" {
                merged.insert(k.clone(), v.clone());
            }
        }
        self.inlining.push(canonical);
        let out = self.node(&Value::Object(merged));
        self.inlining.pop();
        out
    }

    /// The normalized definitions that plain references still point to (and those they
    /// point to in turn).
    fn used_defs(&mut self) -> Result<Map<String, Value>, String> {
        let mut done = Map::new();
        loop {
            let Some(name) = self.used.iter().find(|n| !done.contains_key(*n)).cloned() else {
                return Ok(done);
            };
            let pointer = format!("#/$defs/{}", escape(&name));
            let target = lookup(self.root, &pointer).cloned().unwrap_or(json!({}));
            self.inlining.push(pointer);
            let body = match target {
                Value::Bool(true) => Ok(json!({})),
                other => self.node(&other),
            };
            self.inlining.pop();
            done.insert(
                name.clone(),
                body.map_err(|e| format!("definition `{name}`: {e}"))?,
            );
        }
    }
}

/// Names of the properties that a `false` schema removed from this node.
fn dropped_required(before: &Map<String, Value>, after: &Map<String, Value>) -> BTreeSet<String> {
    let names = |m: &Map<String, Value>| -> BTreeSet<String> {
        m.get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    };
    let (b, a) = (names(before), names(after));
    b.difference(&a).cloned().collect()
}

/// Moonshot wants the type on the `anyOf` items, not on their parent.
fn move_type_into_any_of(node: &mut Map<String, Value>) {
    let Some(Value::Array(_)) = node.get("anyOf") else {
        return;
    };
    let Some(ty) = node.remove("type") else {
        return;
    };
    if let Some(Value::Array(items)) = node.get_mut("anyOf") {
        for item in items {
            if let Value::Object(i) = item
                && !i.contains_key("type")
                && !i.contains_key("$ref")
            {
                i.insert("type".into(), ty.clone());
            }
        }
    }
}

/// The root must be `type: "object"`, which `anyOf` beside it forbids: a root union of
/// object schemas becomes one object with every alternative's properties, required where all
/// alternatives require them.
fn merge_root_union(root: &mut Map<String, Value>) -> Result<(), String> {
    let key = match ["anyOf", "oneOf"]
        .into_iter()
        .find(|k| root.contains_key(*k))
    {
        Some(k) => k,
        None => return Ok(()),
    };
    let Some(Value::Array(alternatives)) = root.remove(key) else {
        return Ok(());
    };
    let mut props = root
        .remove("properties")
        .and_then(|p| p.as_object().cloned())
        .unwrap_or_default();
    let mut required: Option<BTreeSet<String>> = None;
    for alt in &alternatives {
        let a = alt
            .as_object()
            .filter(|a| a.get("type").is_none_or(|t| t == "object"))
            .ok_or("the root is a union of schemas that are not all objects")?;
        for (k, v) in a
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            props.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let req: BTreeSet<String> = a
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        required = Some(match required {
            None => req,
            Some(prev) => prev.intersection(&req).cloned().collect(),
        });
    }
    root.insert("properties".into(), Value::Object(props));
    let mut all: BTreeSet<String> = root
        .remove("required")
        .and_then(|r| r.as_array().cloned())
        .map(|r| {
            r.iter()
                .filter_map(|n| n.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    all.extend(required.unwrap_or_default());
    if !all.is_empty() {
        root.insert("required".into(), json!(all));
    }
    Ok(())
}

/// `#/definitions/x` is spelled `#/$defs/x`; other local pointers stay; anything that is not
/// a local pointer cannot be resolved here.
fn canonical_ref(r: &str) -> Result<String, String> {
    if let Some(rest) = r.strip_prefix("#/definitions/") {
        return Ok(format!("#/$defs/{rest}"));
    }
    if r == "#" || r.starts_with("#/") {
        return Ok(r.to_string());
    }
    Err(format!("$ref `{r}` is not a reference inside the schema"))
}

/// Follows a local JSON pointer; `$defs` also finds `definitions`.
fn lookup<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    let path = pointer.strip_prefix('#')?;
    if path.is_empty() {
        return Some(root);
    }
    if let Some(name) = path.strip_prefix("/$defs/") {
        let name = unescape(name);
        return root
            .get("$defs")
            .and_then(|d| d.get(&name))
            .or_else(|| root.get("definitions").and_then(|d| d.get(&name)));
    }
    root.pointer(path)
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The confirmed rules hold everywhere under `node`.
fn check(node: &Value, root: &Value) -> Result<(), String> {
    let Value::Object(map) = node else {
        return Err(format!("a schema node is {node}, not an object"));
    };
    if let Some(r) = map.get("$ref") {
        let name = r
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .ok_or("a $ref outside #/$defs is left")?;
        if map.len() > 1 {
            return Err("a $ref with siblings is left".into());
        }
        return match root.get("$defs").and_then(|d| d.get(unescape(name))) {
            Some(_) => Ok(()),
            None => Err(format!("$ref to a missing definition `{name}`")),
        };
    }
    if map.contains_key("type") && map.contains_key("anyOf") {
        return Err("`type` next to `anyOf` is left".into());
    }
    if map.get("items").is_some_and(|i| !i.is_object()) {
        return Err("`items` is not an object".into());
    }
    for (k, v) in map {
        match k.as_str() {
            "properties" | "patternProperties" | "$defs" => {
                for s in v.as_object().into_iter().flat_map(|m| m.values()) {
                    check(s, root)?;
                }
            }
            "items" => check(v, root)?,
            "prefixItems" => {
                for s in v.as_array().into_iter().flatten() {
                    check(s, root)?;
                }
            }
            k if LIST.contains(&k) => {
                for s in v.as_array().into_iter().flatten() {
                    check(s, root)?;
                }
            }
            k if ONE.contains(&k) && v.is_object() => check(v, root)?,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(v: Value) -> Value {
        normalize(&v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn type_next_to_any_of_moves_into_the_items() {
        let got = norm(json!({"type": "object", "properties": {
            "v": {"type": "string", "anyOf": [{"minLength": 1}, {"type": "null"}, {"$ref": "#/$defs/d"}]}
        }, "$defs": {"d": {"type": "integer"}}}));
        assert_eq!(
            got["properties"]["v"],
            json!({"anyOf": [{"minLength": 1, "type": "string"}, {"type": "null"}, {"$ref": "#/$defs/d"}]})
        );
        assert_eq!(got["$defs"], json!({"d": {"type": "integer"}}));
    }

    #[test]
    fn tuple_items_become_prefix_items() {
        let got = norm(json!({"type": "object", "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, true]},
            "none": {"type": "array", "items": false},
            "list": {"type": "array", "items": {"type": "number"}}
        }}));
        assert_eq!(
            got["properties"]["pair"],
            json!({"type": "array", "prefixItems": [{"type": "string"}, {}]})
        );
        assert_eq!(got["properties"]["none"], json!({"type": "array"}));
        assert_eq!(
            got["properties"]["list"]["items"],
            json!({"type": "number"})
        );
    }

    #[test]
    fn boolean_schemas_become_objects_or_go() {
        let got = norm(json!({"type": "object", "properties": {
            "anything": true, "never": false, "x": {"type": "string"}
        }, "required": ["anything", "never", "x"]}));
        assert_eq!(
            got["properties"],
            json!({"anything": {}, "x": {"type": "string"}})
        );
        assert_eq!(got["required"], json!(["anything", "x"]));
        let got = norm(json!({"type": "object", "properties": {
            "u": {"anyOf": [true, false, {"type": "string"}]}
        }}));
        assert_eq!(
            got["properties"]["u"]["anyOf"],
            json!([{}, {"type": "string"}])
        );
    }

    #[test]
    fn ref_with_siblings_is_inlined_and_the_siblings_win() {
        let got = norm(json!({"type": "object", "properties": {
            "when": {"$ref": "#/$defs/date", "description": "The day"}
        }, "$defs": {"date": {"type": "string", "description": "a date", "format": "date"}}}));
        assert_eq!(
            got["properties"]["when"],
            json!({"type": "string", "description": "The day", "format": "date"})
        );
        assert!(got.get("$defs").is_none(), "{got}");
    }

    #[test]
    fn definitions_refs_are_rewritten_to_defs() {
        let got = norm(json!({"type": "object", "properties": {
            "a": {"$ref": "#/definitions/A"}, "b": {"$ref": "#/properties/a"}
        }, "definitions": {"A": {"type": "object", "properties": {"n": {"type": "integer"}}}}}));
        assert_eq!(got["properties"]["a"], json!({"$ref": "#/$defs/A"}));
        // A pointer elsewhere in the schema is inlined.
        assert_eq!(got["properties"]["b"], json!({"$ref": "#/$defs/A"}));
        assert_eq!(
            got["$defs"]["A"]["properties"]["n"],
            json!({"type": "integer"})
        );
        assert!(got.get("definitions").is_none());
    }

    #[test]
    fn recursive_ref_keeps_a_plain_reference() {
        let got = norm(
            json!({"type": "object", "properties": {"tree": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/node", "description": "child"}}
            }}}}),
        );
        assert_eq!(
            got["$defs"]["node"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/node"})
        );
    }

    #[test]
    fn root_gets_type_object() {
        assert_eq!(
            norm(json!({"properties": {}})),
            json!({"properties": {}, "type": "object"})
        );
        assert_eq!(norm(json!(true)), json!({"type": "object"}));
        let got = norm(json!({"anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
            {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}
        ]}));
        assert_eq!(
            got,
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["b"]})
        );
    }

    #[test]
    fn what_cannot_be_fixed_is_an_error() {
        for bad in [
            json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}}),
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}),
            json!({"type": "object", "properties": {"x": {"anyOf": [false]}}}),
            json!({"type": "object", "properties": {"x": 7}}),
            json!(false),
            json!({"anyOf": [{"type": "string"}]}),
        ] {
            assert!(normalize(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_valid_schema_is_unchanged() {
        let s = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false});
        assert_eq!(norm(s.clone()), s);
    }

    #[test]
    fn digit_first_names_get_a_letter() {
        assert_eq!(tool_name("7zip__pack"), "t7zip__pack");
        assert_eq!(tool_name("git__log"), "git__log");
        assert_eq!(tool_name(&"9".repeat(64)).len(), 64);
    }

    #[test]
    fn applies_to_kimi_providers_and_models_only() {
        assert!(applies("kimi", "anything"));
        assert!(applies("kimi-code", "k3"));
        assert!(applies("openrouter", "moonshotai/kimi-k3"));
        assert!(!applies("openai", "gpt-5.4"));
        assert!(!applies("mock", "mock-model"));
    }
}
