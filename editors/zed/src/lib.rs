//! Zed extension for `interpreter lsp`: a companion language server that adds AI code
//! actions (Fix, Explain, Refactor, Write tests, Ask) next to each language's own server.
//!
//! The extension only finds the binary and passes settings through; the server does the rest.
//! The binary comes from `lsp.interpreter.binary.path` in Zed's settings, else from `$PATH`
//! of the worktree's shell. Nothing is downloaded.
//!
//! The agent panel (ACP) does not go through this extension: Zed starts `interpreter acp`
//! from an `agent_servers` entry or from the ACP Registry (docs/zed.md).

use zed_extension_api::{
    self as zed, LanguageServerId, Result,
    settings::{CommandSettings, LspSettings},
};

/// The language server id in extension.toml and the key under `lsp` in Zed's settings.
const SERVER_ID: &str = "interpreter";
/// The executable looked up on `$PATH`.
const BINARY: &str = "interpreter";
/// The subcommand that serves LSP on stdio.
const DEFAULT_ARGS: &[&str] = &["lsp"];

struct InterpreterExtension;

/// Builds the command that starts the server (pure, so it is unit-tested on the host).
///
/// - `binary`: `lsp.interpreter.binary` from Zed's settings. Its `path` wins over `$PATH`; its
///   `arguments` replace the default `["lsp"]`; its `env` is laid over the shell environment.
/// - `on_path`: where `interpreter` is on the worktree shell's `$PATH`, if anywhere.
/// - `shell_env`: the worktree shell's environment, so keys exported in a shell profile
///   (`MOONSHOT_API_KEY`, …) reach the server.
fn server_command(
    binary: Option<&CommandSettings>,
    on_path: Option<String>,
    shell_env: Vec<(String, String)>,
) -> Result<zed::Command> {
    let configured = binary
        .and_then(|b| b.path.as_deref())
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    let command = match configured.or(on_path) {
        Some(path) => path,
        None => {
            return Err(format!(
                "`{BINARY}` was not found on $PATH. Install it (`cargo install --path server` \
                 in the interpreter repository, or a release binary), or set \
                 `lsp.{SERVER_ID}.binary.path` in Zed's settings to its absolute path."
            ));
        }
    };
    let args = match binary.and_then(|b| b.arguments.clone()) {
        Some(args) if !args.is_empty() => args,
        _ => DEFAULT_ARGS.iter().map(|a| a.to_string()).collect(),
    };
    let mut env = shell_env;
    if let Some(extra) = binary.and_then(|b| b.env.as_ref()) {
        let mut extra: Vec<_> = extra.iter().collect();
        // HashMap order is arbitrary; sort so the command is deterministic.
        extra.sort();
        for (key, value) in extra {
            env.retain(|(k, _)| k != key);
            env.push((key.clone(), value.clone()));
        }
    }
    Ok(zed::Command { command, args, env })
}

impl zed::Extension for InterpreterExtension {
    fn new() -> Self {
        InterpreterExtension
    }

    fn language_server_command(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let settings = LspSettings::for_worktree(SERVER_ID, worktree).unwrap_or_default();
        server_command(
            settings.binary.as_ref(),
            worktree.which(BINARY),
            worktree.shell_env(),
        )
    }

    /// `lsp.interpreter.initialization_options` (provider, model, harness, baseUrl, wireApi,
    /// …; see docs/lsp.md).
    fn language_server_initialization_options(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<zed::serde_json::Value>> {
        Ok(LspSettings::for_worktree(SERVER_ID, worktree)
            .ok()
            .and_then(|s| s.initialization_options))
    }

    /// `lsp.interpreter.settings`, sent with `workspace/didChangeConfiguration`; the server
    /// merges them over the initialization options.
    fn language_server_workspace_configuration(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<zed::serde_json::Value>> {
        Ok(LspSettings::for_worktree(SERVER_ID, worktree)
            .ok()
            .and_then(|s| s.settings))
    }
}

zed::register_extension!(InterpreterExtension);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(
        path: Option<&str>,
        arguments: Option<&[&str]>,
        env: &[(&str, &str)],
    ) -> CommandSettings {
        CommandSettings {
            path: path.map(str::to_string),
            arguments: arguments.map(|a| a.iter().map(|s| s.to_string()).collect()),
            env: (!env.is_empty()).then(|| {
                env.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<HashMap<_, _>>()
            }),
        }
    }

    fn shell() -> Vec<(String, String)> {
        vec![
            ("PATH".into(), "/usr/bin".into()),
            ("MOONSHOT_API_KEY".into(), "from-shell".into()),
        ]
    }

    #[test]
    fn uses_path_lookup_and_lsp_by_default() {
        let cmd = server_command(None, Some("/usr/local/bin/interpreter".into()), shell()).unwrap();
        assert_eq!(cmd.command, "/usr/local/bin/interpreter");
        assert_eq!(cmd.args, ["lsp"]);
        assert_eq!(cmd.env, shell());
    }

    #[test]
    fn configured_path_wins_and_env_overrides_the_shell() {
        let s = settings(
            Some("/opt/interpreter/bin/interpreter"),
            None,
            &[
                ("MOONSHOT_API_KEY", "from-settings"),
                ("INTERPRETER_LOG", "info"),
            ],
        );
        let cmd = server_command(Some(&s), Some("/usr/bin/interpreter".into()), shell()).unwrap();
        assert_eq!(cmd.command, "/opt/interpreter/bin/interpreter");
        assert_eq!(cmd.args, ["lsp"]);
        let env: HashMap<_, _> = cmd.env.iter().cloned().collect();
        assert_eq!(env["MOONSHOT_API_KEY"], "from-settings");
        assert_eq!(env["INTERPRETER_LOG"], "info");
        assert_eq!(env["PATH"], "/usr/bin");
        assert_eq!(
            cmd.env
                .iter()
                .filter(|(k, _)| k == "MOONSHOT_API_KEY")
                .count(),
            1
        );
    }

    #[test]
    fn arguments_replace_the_default() {
        let s = settings(None, Some(&["lsp", "--profile", "fast"]), &[]);
        let cmd = server_command(Some(&s), Some("/usr/bin/interpreter".into()), vec![]).unwrap();
        assert_eq!(cmd.args, ["lsp", "--profile", "fast"]);
        let empty = settings(None, Some(&[]), &[]);
        let cmd = server_command(Some(&empty), Some("interpreter".into()), vec![]).unwrap();
        assert_eq!(cmd.args, ["lsp"]);
    }

    #[test]
    fn missing_binary_says_how_to_fix_it() {
        let err = server_command(None, None, shell()).unwrap_err();
        assert!(err.contains("not found on $PATH"), "{err}");
        assert!(err.contains("lsp.interpreter.binary.path"), "{err}");
        let blank = settings(Some("  "), None, &[]);
        assert!(server_command(Some(&blank), None, vec![]).is_err());
    }
}
