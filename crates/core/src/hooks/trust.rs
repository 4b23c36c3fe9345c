//! Approving a project's hooks by their exact definition. The hash covers everything that
//! decides what runs and when (event, matcher, command, timeout), so any change to it asks
//! again; the approval is kept in the user's config.toml, never in the project.

use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{Handler, HookEvent};

/// `sha256:<hex>` of a handler's definition.
pub(super) fn hash(
    event: HookEvent,
    matcher: Option<&str>,
    command: &str,
    timeout: Duration,
) -> String {
    let definition = serde_json::json!({
        "event": event.name(),
        "matcher": matcher,
        "type": "command",
        "command": command,
        "timeout": timeout.as_secs_f64(),
    });
    let digest = Sha256::digest(definition.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Trusts `handlers` as they are now, in `home`'s config.toml.
pub fn trust(home: &Path, handlers: &[&Handler]) -> anyhow::Result<()> {
    let pairs: Vec<(String, String)> = handlers
        .iter()
        .map(|h| (h.key.clone(), h.hash.clone()))
        .collect();
    crate::config::set_hook_trust(home, &pairs)
}

/// One line a person reads to decide on a hook.
pub fn describe(h: &Handler) -> String {
    let matcher = h
        .matcher
        .as_deref()
        .map(|m| format!(" [{m}]"))
        .unwrap_or_default();
    format!(
        "{}{matcher}: {}  ({}, timeout {} s)",
        h.event.name(),
        h.command,
        h.path.display(),
        h.timeout.as_secs()
    )
}
