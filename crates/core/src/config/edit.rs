//! Writing config.toml: the only code that does. Edits keep the user's comments and layout,
//! and the file is written readable by its owner only (it may hold keys).

use anyhow::{Context, Result};
use std::path::Path;

/// Sets `[model_providers.<provider>] api_key` in `<home>/config.toml`.
pub fn set_api_key(home: &Path, provider: &str, key: &str) -> Result<()> {
    edit_config(&home.join("config.toml"), |doc| {
        let providers = doc
            .entry("model_providers")
            .or_insert_with(implicit_table)
            .as_table_mut()
            .context("model_providers is not a table")?;
        let table = providers
            .entry(provider)
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_like_mut()
            .with_context(|| format!("model_providers.{provider} is not a table"))?;
        table.insert("api_key", toml_edit::value(key));
        Ok(())
    })
}

/// Removes `provider`'s key from `<home>/config.toml` (a key in the environment stays).
pub fn remove_api_key(home: &Path, provider: &str) -> Result<()> {
    edit_config(&home.join("config.toml"), |doc| {
        if let Some(t) = doc
            .get_mut("model_providers")
            .and_then(|p| p.get_mut(provider))
            .and_then(|t| t.as_table_like_mut())
        {
            t.remove("api_key");
        }
        Ok(())
    })
}

/// Writes `harness` (or `profiles.<profile>.harness`) in `<home>/config.toml`; `None`
/// removes it, so the model picks. The caller checks the name first (`harness::check`).
pub fn set_harness(home: &Path, profile: Option<&str>, harness: Option<&str>) -> Result<()> {
    edit_config(&home.join("config.toml"), |doc| {
        let table = match profile {
            Some(profile) => doc
                .entry("profiles")
                .or_insert_with(implicit_table)
                .as_table_mut()
                .context("profiles is not a table")?
                .entry(profile)
                .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
                .as_table_mut()
                .with_context(|| format!("profiles.{profile} is not a table"))?,
            None => doc.as_table_mut(),
        };
        match harness {
            Some(h) => {
                table.insert("harness", toml_edit::value(h));
            }
            None => {
                table.remove("harness");
            }
        }
        Ok(())
    })
}

/// Records the user's answer for a project, as Codex does: `[projects."<root>"] trust_level`.
pub fn set_project_trust(home: &Path, root: &Path, level: super::TrustLevel) -> Result<()> {
    edit_config(&home.join("config.toml"), |doc| {
        let projects = doc
            .entry("projects")
            .or_insert_with(implicit_table)
            .as_table_mut()
            .context("projects is not a table")?;
        let key = root.to_string_lossy();
        let entry = projects
            .entry(key.as_ref())
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
        // Codex writes explicit tables; an inline one becomes one.
        if let Some(inline) = entry.as_inline_table().cloned() {
            *entry = toml_edit::Item::Table(inline.into_table());
        }
        let table = entry
            .as_table_like_mut()
            .with_context(|| format!("projects.\"{key}\" is not a table"))?;
        table.insert("trust_level", toml_edit::value(level.as_str()));
        Ok(())
    })
}

/// Records that the user trusts hooks as they are now, as Codex does:
/// `[hooks.state."<key>"] trusted_hash = "sha256:…"`, one per `(key, hash)`.
pub fn set_hook_trust(home: &Path, trusted: &[(String, String)]) -> Result<()> {
    edit_config(&home.join("config.toml"), |doc| {
        let hooks = doc
            .entry("hooks")
            .or_insert_with(implicit_table)
            .as_table_mut()
            .context("hooks is not a table")?;
        let state = hooks
            .entry("state")
            .or_insert_with(implicit_table)
            .as_table_mut()
            .context("hooks.state is not a table")?;
        for (key, hash) in trusted {
            let entry = state
                .entry(key)
                .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
            let table = entry
                .as_table_like_mut()
                .with_context(|| format!("hooks.state.\"{key}\" is not a table"))?;
            table.insert("trusted_hash", toml_edit::value(hash.as_str()));
        }
        Ok(())
    })
}

/// A JSON value as the TOML value of a `-c key=value` override.
pub fn toml_literal(v: &serde_json::Value) -> String {
    use serde_json::Value;
    fn convert(v: &Value) -> toml_edit::Value {
        match v {
            Value::Bool(b) => (*b).into(),
            Value::Number(n) => match n.as_i64() {
                Some(i) => i.into(),
                None => n.as_f64().unwrap_or(0.0).into(),
            },
            Value::String(s) => s.as_str().into(),
            Value::Array(a) => toml_edit::Value::Array(a.iter().map(convert).collect()),
            Value::Object(o) => {
                let mut t = toml_edit::InlineTable::new();
                for (k, v) in o {
                    t.insert(k, convert(v));
                }
                toml_edit::Value::InlineTable(t)
            }
            // TOML has no null: an empty string is the closest "unset".
            Value::Null => "".into(),
        }
    }
    convert(v).to_string().trim().to_string()
}

/// A table that shows only through its subtables (`[model_providers.kimi]`, no bare header).
pub(super) fn implicit_table() -> toml_edit::Item {
    let mut t = toml_edit::Table::new();
    t.set_implicit(true);
    toml_edit::Item::Table(t)
}

/// Edits config.toml in place (comments and layout kept); written 0600.
pub(super) fn edit_config(
    path: &Path,
    f: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<()>,
) -> Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("invalid config {}", path.display()))?;
    f(&mut doc)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::workspace::write_private(path, doc.to_string().as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_edits_keep_comments_and_set_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "# mine\nmodel = \"kimi-k3\"\n").unwrap();
        set_api_key(dir.path(), "kimi", "sk-1").unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("# mine"));
        assert!(
            text.contains("[model_providers.kimi]\napi_key = \"sk-1\""),
            "{text}"
        );
        // Unix modes only: on Windows the profile folder's ACL keeps it private.
        if let Some(mode) = crate::platform::mode(&std::fs::metadata(&p).unwrap()) {
            assert_eq!(mode & 0o777, 0o600);
        }
        remove_api_key(dir.path(), "kimi").unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("# mine") && !text.contains("sk-1"), "{text}");
    }

    #[test]
    fn harness_edits_keep_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "# mine\nmodel = \"k3\"\n").unwrap();
        set_harness(dir.path(), None, Some("minimal")).unwrap();
        set_harness(dir.path(), Some("work"), Some("kimi-code")).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.contains("# mine") && text.contains("harness = \"minimal\""),
            "{text}"
        );
        assert!(
            text.contains("[profiles.work]\nharness = \"kimi-code\""),
            "{text}"
        );
        set_harness(dir.path(), None, None).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains("harness = \"minimal\""), "{text}");
    }

    #[test]
    fn json_values_become_toml_literals() {
        let v = serde_json::json!({"a": [1, 2.5, "x"], "b": true, "c": null});
        assert_eq!(
            toml_literal(&v),
            r#"{ a = [1, 2.5, "x"], b = true, c = "" }"#
        );
    }
}
