//! Client settings (`initializationOptions`, `workspace/didChangeConfiguration`) and the agent
//! configuration they produce. Settings are untrusted input: anything wrong becomes a message
//! for the user, never a crash, and the last good configuration stays in force.

use serde_json::Value;

use interpreter_core::config::{Config, Overrides};
use interpreter_text::positions::PositionEncoding;

/// What a client may set. Every key is optional; missing keys fall back to config.toml,
/// the environment and the command line (`-c`, `--profile`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Settings {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub harness: Option<String>,
    /// For a custom provider (`[model_providers.<provider>]`): its endpoint and wire API.
    pub base_url: Option<String>,
    pub wire_api: Option<String>,
    pub env_key: Option<String>,
    pub profile: Option<String>,
    /// More `key=value` overrides, as with `-c`.
    pub config: Vec<String>,
    pub position_encoding: Option<PositionEncoding>,
}

const KEYS: &[(&str, &str)] = &[
    ("provider", "provider"),
    ("model", "model"),
    ("harness", "harness"),
    ("baseUrl", "base_url"),
    ("wireApi", "wire_api"),
    ("envKey", "env_key"),
    ("profile", "profile"),
    ("config", "config"),
    ("positionEncoding", "position_encoding"),
];

/// Settings parsed from one JSON value, plus warnings about keys that were ignored.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub settings: Settings,
    pub warnings: Vec<String>,
}

impl Settings {
    /// Parses `{…}` or `{"interpreter": {…}}` (the section form VS Code and Neovim send).
    /// `null` and `{}` give empty settings. Keys may be camelCase or snake_case.
    pub(super) fn parse(value: &Value) -> Result<Parsed, String> {
        let obj = match value {
            Value::Null => return Ok(Parsed::default()),
            Value::Object(o) => match o.get("interpreter") {
                Some(Value::Object(inner)) => inner,
                Some(Value::Null) | None => o,
                Some(other) => {
                    return Err(format!(
                        "settings.interpreter must be an object, got {other}"
                    ));
                }
            },
            other => return Err(format!("settings must be a JSON object, got {other}")),
        };
        let mut parsed = Parsed::default();
        let s = &mut parsed.settings;
        for (key, value) in obj {
            let Some((_, canonical)) = KEYS
                .iter()
                .find(|(camel, snake)| key == camel || key == snake)
            else {
                parsed
                    .warnings
                    .push(format!("unknown setting `{key}` ignored"));
                continue;
            };
            if value.is_null() {
                continue;
            }
            let string = || -> Result<String, String> {
                value
                    .as_str()
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| {
                        format!("setting `{key}` must be a non-empty string, got {value}")
                    })
            };
            match *canonical {
                "provider" => s.provider = Some(string()?),
                "model" => s.model = Some(string()?),
                "harness" => s.harness = Some(string()?),
                "base_url" => s.base_url = Some(string()?),
                "wire_api" => s.wire_api = Some(string()?),
                "env_key" => s.env_key = Some(string()?),
                "profile" => s.profile = Some(string()?),
                "position_encoding" => {
                    let v = string()?;
                    s.position_encoding = Some(PositionEncoding::parse(&v).ok_or_else(|| {
                        format!("setting `{key}` must be utf-8, utf-16 or utf-32, got `{v}`")
                    })?);
                }
                "config" => s.config = config_entries(key, value)?,
                _ => unreachable!("every key in KEYS is handled"),
            }
        }
        Ok(parsed)
    }

    /// `self` with every key `top` sets replaced.
    pub(super) fn merged(&self, top: &Settings) -> Settings {
        Settings {
            provider: top.provider.clone().or(self.provider.clone()),
            model: top.model.clone().or(self.model.clone()),
            harness: top.harness.clone().or(self.harness.clone()),
            base_url: top.base_url.clone().or(self.base_url.clone()),
            wire_api: top.wire_api.clone().or(self.wire_api.clone()),
            env_key: top.env_key.clone().or(self.env_key.clone()),
            profile: top.profile.clone().or(self.profile.clone()),
            config: if top.config.is_empty() {
                self.config.clone()
            } else {
                top.config.clone()
            },
            position_encoding: top.position_encoding.or(self.position_encoding),
        }
    }

    /// The agent configuration: config.toml, profile, environment, the command line, then
    /// these settings on top. Reads config.toml (I/O).
    pub(super) fn load_config(&self, common: &Overrides) -> Result<Config, String> {
        self.load_with(common, Config::load)
    }

    fn load_with(
        &self,
        common: &Overrides,
        load: impl Fn(&Overrides) -> anyhow::Result<Config>,
    ) -> Result<Config, String> {
        let mut o: Overrides = common.clone();
        if self.profile.is_some() {
            o.profile = self.profile.clone();
        }
        o.config.extend(self.config.iter().cloned());
        o.provider = self.provider.clone().or(o.provider);
        o.model = self.model.clone().or(o.model);
        o.harness = self.harness.clone().or(o.harness);
        let provider_keys = [
            ("base_url", &self.base_url),
            ("wire_api", &self.wire_api),
            ("env_key", &self.env_key),
        ];
        if provider_keys.iter().any(|(_, v)| v.is_some()) {
            // The table to set depends on which provider is in effect after all layers.
            let provider = match &self.provider {
                Some(p) => p.clone(),
                None => load(&o).map_err(|e| format!("{e:#}"))?.provider.id,
            };
            for (key, value) in provider_keys {
                if let Some(v) = value {
                    let quoted = toml::Value::String(v.clone()).to_string();
                    o.config
                        .push(format!("model_providers.\"{provider}\".{key}={quoted}"));
                }
            }
        }
        let config = load(&o).map_err(|e| format!("{e:#}"))?;
        if let Some(h) = &config.harness {
            interpreter_core::harness::check(h)?;
        }
        Ok(config)
    }
}

fn config_entries(key: &str, value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_str().map(String::from).ok_or_else(|| {
                    format!("setting `{key}` must list \"key=value\" strings, got {i}")
                })
            })
            .collect(),
        // {"key": value} → key=value with the value as TOML.
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| json_to_toml(v).map(|t| format!("{k}={t}")))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("setting `{key}` holds a value TOML cannot express")),
        other => Err(format!(
            "setting `{key}` must be an array of \"key=value\" strings or an object, got {other}"
        )),
    }
}

fn json_to_toml(v: &Value) -> Option<toml::Value> {
    Some(match v {
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(a) => toml::Value::Array(a.iter().map(json_to_toml).collect::<Option<_>>()?),
        Value::Object(o) => toml::Value::Table(
            o.iter()
                .map(|(k, v)| Some((k.clone(), json_to_toml(v)?)))
                .collect::<Option<_>>()?,
        ),
        Value::Null => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_nested_and_snake_case() {
        let a = Settings::parse(
            &json!({"provider": "mock", "baseUrl": "http://x/v1", "wireApi": "chat"}),
        )
        .unwrap();
        let b = Settings::parse(
            &json!({"interpreter": {"provider": "mock", "base_url": "http://x/v1", "wire_api": "chat"}}),
        )
        .unwrap();
        assert_eq!(a.settings, b.settings);
        assert_eq!(a.settings.base_url.as_deref(), Some("http://x/v1"));
        assert!(Settings::parse(&Value::Null).unwrap().settings == Settings::default());
    }

    #[test]
    fn bad_values_are_errors_and_unknown_keys_warnings() {
        let e = Settings::parse(&json!({"model": 42})).unwrap_err();
        assert!(e.contains("`model` must be a non-empty string"), "{e}");
        let e = Settings::parse(&json!({"positionEncoding": "utf-7"})).unwrap_err();
        assert!(e.contains("utf-8, utf-16 or utf-32"), "{e}");
        let e = Settings::parse(&json!("nope")).unwrap_err();
        assert!(e.contains("must be a JSON object"), "{e}");
        let p = Settings::parse(&json!({"modle": "x"})).unwrap();
        assert_eq!(
            p.warnings,
            vec!["unknown setting `modle` ignored".to_string()]
        );
    }

    #[test]
    fn config_entries_from_array_or_object() {
        let p = Settings::parse(&json!({"config": ["max_turn_requests=3"]})).unwrap();
        assert_eq!(p.settings.config, vec!["max_turn_requests=3"]);
        let p =
            Settings::parse(&json!({"config": {"max_turn_requests": 3, "model": "m"}})).unwrap();
        assert_eq!(
            p.settings.config,
            vec!["max_turn_requests=3", "model=\"m\""]
        );
    }

    #[test]
    fn merged_prefers_the_newer_settings() {
        let init = Settings::parse(&json!({"provider": "mock", "model": "a"}))
            .unwrap()
            .settings;
        let later = Settings::parse(&json!({"model": "b"})).unwrap().settings;
        let m = init.merged(&later);
        assert_eq!(m.provider.as_deref(), Some("mock"));
        assert_eq!(m.model.as_deref(), Some("b"));
    }

    #[test]
    fn custom_provider_and_bad_config() {
        let common = Overrides {
            config: vec!["model_reasoning_effort=\"low\"".into()],
            ..Default::default()
        };
        // config.toml-free loading, so the developer's own config cannot leak in.
        let load = |o: &Overrides| Config::from_layers("/h".into(), None, None, &[], o);
        let s = Settings::parse(&json!({
            "provider": "mock", "model": "mock-model", "baseUrl": "http://127.0.0.1:9/v1",
            "wireApi": "chat", "config": ["model_providers.mock.name=\"Mock\""]
        }))
        .unwrap()
        .settings;
        let c = s.load_with(&common, load).unwrap();
        assert_eq!(c.provider.id, "mock");
        assert_eq!(c.provider.name, "Mock");
        assert_eq!(c.provider.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(c.model, "mock-model");
        assert_eq!(
            c.reasoning_effort,
            Some(interpreter_protocol::ReasoningEffort::Low)
        );
        // base_url without a provider setting goes to the provider in effect.
        let s = Settings::parse(&json!({"baseUrl": "http://127.0.0.1:8/v1"}))
            .unwrap()
            .settings;
        let c = s.load_with(&common, load).unwrap();
        assert_eq!(c.provider.id, "kimi");
        assert_eq!(c.provider.base_url, "http://127.0.0.1:8/v1");

        let bad = Settings::parse(&json!({"provider": "nope"}))
            .unwrap()
            .settings;
        let e = bad.load_with(&common, load).unwrap_err();
        assert!(e.contains("unknown model_provider `nope`"), "{e}");
        let bad = Settings::parse(&json!({"harness": "nope"}))
            .unwrap()
            .settings;
        let e = bad.load_with(&common, load).unwrap_err();
        assert!(e.contains("unknown harness `nope`"), "{e}");
        let bad =
            Settings::parse(&json!({"provider": "mock", "wireApi": "grpc", "baseUrl": "http://x"}))
                .unwrap()
                .settings;
        let e = bad.load_with(&common, load).unwrap_err();
        assert!(e.contains("wire_api"), "{e}");
    }
}
