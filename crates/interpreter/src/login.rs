//! `interpreter login`: store a provider's API key in config.toml, readable only by the user.
//! This is the terminal auth method ACP clients run.

use std::io::{BufRead, IsTerminal, Write};

use interpreter_core::config::{Config, Overrides, home_dir};

pub(crate) fn run(mut overrides: Overrides, provider: Option<String>, from_stdin: bool) -> i32 {
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
    let home = home_dir();
    match interpreter_core::config::set_api_key(&home, &id, key) {
        Ok(()) => {
            eprintln!(
                "Stored the key for `{id}` in {} (mode 0600).",
                home.join("config.toml").display()
            );
            0
        }
        Err(e) => {
            eprintln!("Error: {e:#}");
            1
        }
    }
}
