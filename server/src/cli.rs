//! Command-line parsing, subcommand dispatch and logging setup. Logs go to stderr (or
//! `INTERPRETER_LOG_FILE`), never to stdout.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

use crate::config::Overrides;

#[derive(Debug, Parser)]
#[command(
    name = "interpreter",
    version,
    about = "A coding agent for low-cost models: ACP for editors, LSP code actions, and Codex-compatible exec for CI"
)]
pub struct Cli {
    /// `-c`/`--profile` given anywhere: before the subcommand (as the Codex SDK passes them)
    /// or after it. `main` hands them to the subcommand.
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task non-interactively (Codex `exec` compatible: --json emits JSONL events).
    Exec(Box<ExecArgs>),
    /// Serve the Agent Client Protocol on stdio (Zed's agent panel and other ACP clients).
    Acp {
        #[arg(skip)]
        common: CommonArgs,
    },
    /// Serve the Codex app-server protocol (JSON-RPC over JSON lines) for the Python Codex SDK.
    AppServer(AppServerArgs),
    /// Serve the Language Server Protocol on stdio: AI code actions for any LSP editor.
    Lsp(LspArgs),
    /// Store a provider's API key in config.toml (mode 0600).
    Login {
        #[arg(skip)]
        common: CommonArgs,
        /// Provider id (default: the configured provider).
        #[arg(long)]
        provider: Option<String>,
        /// Read the key from stdin instead of prompting.
        #[arg(long)]
        with_api_key: bool,
    },
    /// Inspect what the agent would send.
    Debug {
        #[command(subcommand)]
        what: DebugCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// Print the exact first request body for a prompt (default "hello").
    Prompt {
        #[arg(skip)]
        common: CommonArgs,
        #[arg(long)]
        harness: Option<String>,
        #[arg(long, short = 'C')]
        cd: Option<PathBuf>,
        prompt: Option<String>,
    },
}

/// `interpreter lsp`: provider, model and harness also come from the client's
/// `initializationOptions` and `workspace/didChangeConfiguration` (docs/lsp.md).
#[derive(Debug, Clone, Args)]
pub struct LspArgs {
    #[arg(skip)]
    pub common: CommonArgs,
    /// Talk LSP over stdin/stdout (the only transport; vscode-languageclient passes it).
    #[arg(long)]
    pub stdio: bool,
}

/// Options every subcommand takes.
#[derive(Debug, Clone, Args, Default)]
pub struct CommonArgs {
    /// Override a config key: `-c key=value` (value parsed as TOML). Repeatable; later wins.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", global = true)]
    pub config: Vec<String>,
    /// Select a `[profiles.<name>]` table from config.toml.
    #[arg(short = 'p', long, global = true)]
    pub profile: Option<String>,
}

impl CommonArgs {
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config: self.config.clone(),
            profile: self.profile.clone(),
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, Args)]
#[command(
    args_conflicts_with_subcommands = false,
    subcommand_precedence_over_arg = true
)]
pub struct ExecArgs {
    #[arg(skip)]
    pub common: CommonArgs,
    /// Print events as JSON Lines on stdout (Codex `--experimental-json`).
    #[arg(long = "json", alias = "experimental-json", global = true)]
    pub json: bool,
    #[arg(short = 'm', long, global = true)]
    pub model: Option<String>,
    /// Provider id (same as `-c model_provider=…`).
    #[arg(long, global = true)]
    pub provider: Option<String>,
    /// native, kimi-code or minimal.
    #[arg(long, global = true)]
    pub harness: Option<String>,
    #[arg(short = 's', long, value_name = "MODE", global = true)]
    pub sandbox: Option<String>,
    /// Working directory for the session.
    #[arg(short = 'C', long = "cd", global = true)]
    pub cd: Option<PathBuf>,
    /// Another directory the tools may read and write. Repeatable.
    #[arg(long = "add-dir", global = true)]
    pub add_dir: Vec<PathBuf>,
    #[arg(long, global = true)]
    pub skip_git_repo_check: bool,
    /// A JSON Schema file the final answer must follow.
    #[arg(long, global = true)]
    pub output_schema: Option<PathBuf>,
    /// Attach an image (repeatable, or comma separated).
    #[arg(short = 'i', long = "image", value_delimiter = ',', global = true)]
    pub images: Vec<PathBuf>,
    /// Accepted for Codex SDK compatibility.
    #[arg(long, hide = true, global = true)]
    pub thread_source: Option<String>,
    /// Accepted for Codex SDK compatibility.
    #[arg(long, hide = true, global = true)]
    pub cyber_access_program: Option<String>,
    /// Write the final message to this file.
    #[arg(short = 'o', long, global = true)]
    pub output_last_message: Option<PathBuf>,
    /// Print a `git apply`-able diff of every change the run made (on stdout in human mode).
    #[arg(long, global = true)]
    pub diff: bool,
    /// Do not store the session.
    #[arg(long, global = true)]
    pub ephemeral: bool,
    #[arg(long, value_name = "WHEN", default_value = "auto", global = true)]
    pub color: String,
    /// Run without sandbox or approvals.
    #[arg(
        long = "dangerously-bypass-approvals-and-sandbox",
        alias = "yolo",
        global = true
    )]
    pub yolo: bool,
    #[arg(long, hide = true, global = true)]
    pub full_auto: bool,
    /// The task. Read from stdin when absent (or `-`).
    pub prompt: Option<String>,
    #[command(subcommand)]
    pub resume: Option<ExecSub>,
}

/// `interpreter app-server`.
#[derive(Debug, Clone, Args)]
pub struct AppServerArgs {
    #[arg(skip)]
    pub common: CommonArgs,
    /// Where to serve; only `stdio://` (JSON lines on stdin and stdout).
    #[arg(long, value_name = "URL", default_value = "stdio://")]
    pub listen: String,
}

impl Command {
    /// Hands the global `-c`/`--profile` options to the subcommand that uses them.
    fn set_common(&mut self, c: CommonArgs) {
        match self {
            Command::Exec(a) => a.common = c,
            Command::Acp { common } | Command::Login { common, .. } => *common = c,
            Command::AppServer(a) => a.common = c,
            Command::Lsp(a) => a.common = c,
            Command::Debug {
                what: DebugCommand::Prompt { common, .. },
            } => *common = c,
        }
    }
}

#[derive(Debug, Clone, Subcommand)]
pub enum ExecSub {
    /// Continue a stored session.
    Resume {
        /// The session (thread) id.
        session_id: Option<String>,
        prompt: Option<String>,
        /// Resume the newest session started in this directory.
        #[arg(long)]
        last: bool,
    },
}

/// Moves `-c`/`--config`/`-p`/`--profile` given before the subcommand to right after it.
/// Clap keeps a global option's values from one level only, so `interpreter -c a exec -c b`
/// would lose `a`; after the move both are the subcommand's, in their order.
pub fn hoist_global_options(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut hoisted = Vec::new();
    let mut it = args.into_iter();
    out.extend(it.next());
    while let Some(arg) = it.next() {
        let text = arg.to_string_lossy();
        let takes_value = matches!(&*text, "-c" | "--config" | "-p" | "--profile");
        let attached = text.starts_with("--config=")
            || text.starts_with("--profile=")
            || (text.len() > 2
                && (text.starts_with("-c") || text.starts_with("-p"))
                && !text.starts_with("--"));
        if takes_value {
            hoisted.push(arg);
            hoisted.extend(it.next());
        } else if attached {
            hoisted.push(arg);
        } else if text.starts_with('-') {
            // --help, --version: the top level's own.
            out.push(arg);
        } else {
            out.push(arg);
            out.append(&mut hoisted);
            break;
        }
    }
    out.extend(hoisted);
    out.extend(it);
    out
}

pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_env("INTERPRETER_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    // Every line goes through secret redaction; a new log file is readable by its owner only.
    use crate::secrets::Redacting;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(path) = std::env::var_os("INTERPRETER_LOG_FILE")
        && let Ok(file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
    {
        builder
            .with_ansi(false)
            .with_writer(Redacting(std::sync::Mutex::new(file)))
            .init();
        return;
    }
    use std::io::IsTerminal;
    builder
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(Redacting(std::io::stderr))
        .init();
}

pub fn main() -> i32 {
    let mut cli = match Cli::try_parse_from(hoist_global_options(std::env::args_os().collect())) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    cli.command.set_common(std::mem::take(&mut cli.common));
    init_logging();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: could not start the async runtime: {e}");
            return 1;
        }
    };
    rt.block_on(async move {
        match cli.command {
            Command::Exec(args) => crate::frontend::exec::run(*args).await,
            Command::Acp { common } => crate::frontend::acp::serve(common).await,
            Command::AppServer(args) => crate::frontend::app_server::serve(args).await,
            Command::Lsp(args) => crate::frontend::lsp::run(args).await,
            Command::Login {
                common,
                provider,
                with_api_key,
            } => crate::frontend::login::run(common, provider, with_api_key),
            Command::Debug {
                what:
                    DebugCommand::Prompt {
                        common,
                        harness,
                        cd,
                        prompt,
                    },
            } => crate::frontend::exec::debug_prompt(common, harness, cd, prompt).await,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Vec<std::ffi::OsString> {
        line.iter().map(Into::into).collect()
    }

    #[test]
    fn options_before_the_subcommand_join_those_after_it() {
        let hoisted = hoist_global_options(args(&[
            "interpreter",
            "--config",
            "a=1",
            "-cb=2",
            "app-server",
            "-c",
            "c=3",
            "--listen",
            "stdio://",
        ]));
        assert_eq!(
            hoisted,
            args(&[
                "interpreter",
                "app-server",
                "--config",
                "a=1",
                "-cb=2",
                "-c",
                "c=3",
                "--listen",
                "stdio://"
            ])
        );
        let cli = Cli::try_parse_from(hoisted).unwrap();
        assert_eq!(cli.common.config, ["a=1", "b=2", "c=3"]);
        let cli = Cli::try_parse_from(hoist_global_options(args(&[
            "interpreter",
            "-p",
            "work",
            "exec",
            "--json",
            "resume",
            "ID",
            "go",
        ])))
        .unwrap();
        assert_eq!(cli.common.profile.as_deref(), Some("work"));
        assert!(matches!(cli.command, Command::Exec(_)));
    }
}
