//! `interpreter hooks`: what Codex's `/hooks` shows, on the command line. `list` prints every
//! hook that applies in this folder, and `trust` approves a trusted project's new or changed
//! hooks by their definition's hash (kept in the user's config.toml).

use interpreter_core::config::{Config, Overrides};
use interpreter_core::hooks::trust;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum HooksCommand {
    /// Every hook of this folder: those that run, and the project's waiting for review.
    List,
    /// Trust the project's new or changed hooks as they are now (all of them, or those whose
    /// key `list` shows).
    Trust {
        /// Hook keys; none: every hook waiting for review.
        keys: Vec<String>,
    },
}

pub(crate) fn run(mut overrides: Overrides, what: Option<HooksCommand>) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("Error: the current folder: {e}");
            return 2;
        }
    };
    overrides.project = Some(cwd);
    let config = match Config::load(&overrides) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("Error: {e:#}");
            return 2;
        }
    };
    let (hooks, warnings) = interpreter_core::hooks::load_for(&config);
    for w in config.warnings.iter().chain(&warnings) {
        eprintln!("warning: {w}");
    }
    match what.unwrap_or(HooksCommand::List) {
        HooksCommand::List => {
            if hooks.handlers.is_empty() && hooks.pending.is_empty() {
                println!("No hooks apply here.");
            }
            for h in &hooks.handlers {
                println!("runs     {}\n         key {}", trust::describe(h), h.key);
            }
            for h in &hooks.pending {
                println!("review   {}\n         key {}", trust::describe(h), h.key);
            }
            if let Some(p) = config.project.as_ref().filter(|p| !p.trusted())
                && !p.files.is_empty()
            {
                println!(
                    "The project {} is not trusted: its hooks are not read.",
                    p.root.display()
                );
            }
            0
        }
        HooksCommand::Trust { keys } => {
            let chosen: Vec<_> = hooks
                .pending
                .iter()
                .filter(|h| keys.is_empty() || keys.contains(&h.key))
                .map(|h| h.as_ref())
                .collect();
            if let Some(k) = keys
                .iter()
                .find(|k| !hooks.pending.iter().any(|h| &h.key == *k))
            {
                eprintln!(
                    "Error: no hook waiting for review has the key {k} (see `interpreter hooks list`)"
                );
                return 1;
            }
            if chosen.is_empty() {
                println!("No hook is waiting for review.");
                return 0;
            }
            if let Err(e) = trust::trust(&config.home, &chosen) {
                eprintln!("Error: {e:#}");
                return 1;
            }
            for h in chosen {
                println!("trusted  {}", trust::describe(h));
            }
            0
        }
    }
}
