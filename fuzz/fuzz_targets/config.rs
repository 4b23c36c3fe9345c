//! The config parser: `config.toml` text layered with `-c key=value` overrides.
//!
//! Input: `<config.toml text>\0<override>\n<override>…`. Each override also goes through
//! `parse_override` on its own. No environment layer: it would read this process's variables.
#![no_main]

use interpreter_core::config::{Config, Overrides, parse_override};
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};

fuzz_target!(|data: &[u8]| {
    let (file, rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let file = String::from_utf8_lossy(file);
    let rest = String::from_utf8_lossy(rest);
    let overrides: Vec<String> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split('\n').take(16).map(String::from).collect()
    };
    for raw in &overrides {
        let _ = parse_override(raw);
    }
    let with_file = Config::from_layers(
        PathBuf::from("/fuzz-home"),
        Some(&file),
        Some(Path::new("/fuzz-home/config.toml")),
        &[],
        &Overrides {
            config: overrides.clone(),
            ..Default::default()
        },
    );
    if let Ok(config) = with_file {
        // A resolved config is usable: its provider key lookup must not panic either.
        let _ = config.provider.resolve_api_key();
    }
    // The same overrides with no file at all.
    let _ = Config::from_layers(
        PathBuf::from("/fuzz-home"),
        None,
        None,
        &[],
        &Overrides {
            config: overrides,
            ..Default::default()
        },
    );
});
