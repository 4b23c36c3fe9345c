//! The editors' option lists are the core's: a harness or provider added here and not to
//! VS Code's settings (or left there after it is gone) fails these tests, and so does a
//! provider key the Neovim health check (`health.lua`) lists differently from the catalog.

use std::path::PathBuf;

use serde_json::Value;

use super::harnesses;
use crate::model::catalog::PROVIDERS;

fn editors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../editors")
}

fn vscode_setting(name: &str) -> Value {
    let manifest = std::fs::read_to_string(editors().join("vscode/package.json")).unwrap();
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    manifest["contributes"]["configuration"]["properties"][name].clone()
}

/// What `interpreter.harness` must offer: "" (config.toml decides), then every harness in
/// registry order, described as `Label: what it is`.
#[test]
fn the_vscode_harness_setting_offers_every_harness() {
    let setting = vscode_setting("interpreter.harness");
    let mut names = vec![String::new()];
    let mut descriptions = vec!["Chosen by config.toml or by the model".to_string()];
    for h in harnesses() {
        names.push(h.name.to_string());
        descriptions.push(format!("{}: {}", h.label, h.about));
    }
    let expected = serde_json::json!({"enum": names, "enumDescriptions": descriptions});
    assert_eq!(
        (&setting["enum"], &setting["enumDescriptions"]),
        (&expected["enum"], &expected["enumDescriptions"]),
        "editors/vscode/package.json's interpreter.harness differs from the harnesses; it should read:\n{}",
        serde_json::to_string_pretty(&expected).unwrap()
    );
}

/// The provider setting's description names every built-in provider and nothing else.
#[test]
fn the_vscode_provider_setting_names_every_provider() {
    let text = vscode_setting("interpreter.provider")["markdownDescription"]
        .as_str()
        .unwrap()
        .to_string();
    let named: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
    let ids: Vec<&str> = PROVIDERS.iter().map(|p| p.id).collect();
    let unknown: Vec<&&str> = named
        .iter()
        .filter(|n| !ids.contains(n) && **n != "config.toml")
        .collect();
    let missing: Vec<&&str> = ids.iter().filter(|id| !named.contains(id)).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "interpreter.provider's description: missing {missing:?}, unknown {unknown:?}"
    );
}

/// `PROVIDERS` in editors/vscode/src/settings.ts: each built-in provider with its key variable
/// and default model, one line each (`id: { envKey: "X", defaultModel: "m" },`).
#[test]
fn the_vscode_provider_table_is_the_catalog() {
    let source = std::fs::read_to_string(editors().join("vscode/src/settings.ts")).unwrap();
    let start = source.find("export const PROVIDERS").unwrap();
    let body = &source[start..];
    let body = &body[body.find("= {").unwrap() + 3..body.find("\n};").unwrap()];
    let found: Vec<String> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("envKey"))
        .map(str::to_string)
        .collect();
    let expected: Vec<String> = PROVIDERS
        .iter()
        .map(|p| {
            let id = if p.id.contains('-') {
                format!("\"{}\"", p.id)
            } else {
                p.id.to_string()
            };
            let key = p.env_key.map_or("null".into(), |k| format!("\"{k}\""));
            format!(
                "{id}: {{ envKey: {key}, defaultModel: \"{}\" }},",
                p.default_model
            )
        })
        .collect();
    assert_eq!(
        found,
        expected,
        "editors/vscode/src/settings.ts's PROVIDERS differs from the catalog; it should read:\n{}",
        expected.join("\n")
    );
}

/// `M.provider_keys` in the Neovim client's health check: each built-in provider and its key
/// variable (`false` for a local server), one line each, in catalog order.
#[test]
fn the_neovim_provider_keys_are_the_catalog() {
    let source =
        std::fs::read_to_string(editors().join("neovim/lua/interpreter/health.lua")).unwrap();
    let start = source.find("M.provider_keys = {").unwrap();
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("\n}").unwrap()];
    let found: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let expected: Vec<String> = PROVIDERS
        .iter()
        .map(|p| {
            let id = if p.id.contains('-') {
                format!("[\"{}\"]", p.id)
            } else {
                p.id.to_string()
            };
            let key = p.env_key.map_or("false".into(), |k| format!("\"{k}\""));
            format!("{id} = {key},")
        })
        .collect();
    assert_eq!(
        found,
        expected,
        "editors/neovim/lua/interpreter/health.lua's provider_keys differs from the catalog; it should read:\n{}",
        expected.join("\n")
    );
}
