//! `interpreter login`: store a provider's API key in config.toml, readable only by the user.
//! This is the terminal auth method ACP clients run.

use std::io::{BufRead, IsTerminal, Write};

use crate::cli::CommonArgs;
use crate::config::{Config, home_dir};

pub(crate) fn run(common: CommonArgs, provider: Option<String>, from_stdin: bool) -> i32 {
    let mut overrides = common.overrides();
    overrides.provider = provider;
    let config = match Config::load(&overrides) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("Error: {e:#}");
            return 2;
        }
    };
    let id = config.provider.id.clone();
    let var = config.provider.env_key.clone();
    if !from_stdin && std::io::stdin().is_terminal() {
        eprint!(
            "API key for {} ({}){}: ",
            config.provider.name,
            id,
            var.as_deref()
                .map(|v| format!(", instead of ${v}"))
                .unwrap_or_default()
        );
        let _ = std::io::stderr().flush();
    }
    let mut key = String::new();
    if let Err(e) = std::io::stdin().lock().read_line(&mut key) {
        eprintln!("Error: reading the key: {e}");
        return 1;
    }
    let key = key.trim();
    if key.is_empty() {
        eprintln!("Error: no key given; nothing was stored.");
        return 1;
    }
    let path = home_dir().join("config.toml");
    match store_key(&path, &id, key) {
        Ok(()) => {
            eprintln!(
                "Stored the key for `{id}` in {} (mode 0600).",
                path.display()
            );
            0
        }
        Err(e) => {
            eprintln!("Error: {e:#}");
            1
        }
    }
}

/// Sets `[model_providers.<id>] api_key` and keeps the rest of the file as it was.
pub(crate) fn store_key(path: &std::path::Path, provider: &str, key: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    crate::config::edit_config(path, |doc| {
        let providers = doc
            .entry("model_providers")
            .or_insert_with(|| {
                let mut t = toml_edit::Table::new();
                t.set_implicit(true);
                toml_edit::Item::Table(t)
            })
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

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_comments_and_sets_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "# mine\nmodel = \"kimi-k3\"\n").unwrap();
        super::store_key(&p, "kimi", "sk-1").unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("# mine"));
        assert!(text.contains("api_key = \"sk-1\""));
        // Unix modes only: on Windows the profile folder's ACL keeps it private.
        if let Some(mode) = crate::platform::mode(&std::fs::metadata(&p).unwrap()) {
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
