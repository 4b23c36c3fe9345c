//! Command-line parsing, subcommand dispatch and logging setup. Logs go to stderr (or
//! `INTERPRETER_LOG_FILE`), never to stdout, at the level `INTERPRETER_LOG` sets (`warn`
//! by default).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

use interpreter_core::config::{Overrides, SandboxMode};
use interpreter_exec::{ExecOptions, Resume, Undo};
use interpreter_tui::{Start, TuiOptions};

#[derive(Debug, Parser)]
#[command(
    name = "interpreter",
    version,
    about = "A coding agent for low-cost models: an interactive terminal session, ACP for editors, LSP code actions, and Codex-compatible exec for CI"
)]
pub(crate) struct Cli {
    /// Options of the interactive session (no subcommand).
    #[command(flatten)]
    pub tui: TuiArgs,
    /// A first prompt for the interactive session.
    pub prompt: Option<String>,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// Options of the interactive terminal session (`interpreter`, `interpreter resume`).
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct TuiArgs {
    /// Override a config key: `-c key=value` (value parsed as TOML). Repeatable; later wins.
    // Ids of their own: a subcommand's global `config`/`profile` would otherwise overwrite
    // these with its values, and the ones given before the subcommand would be lost.
    #[arg(
        id = "tui_config",
        short = 'c',
        long = "config",
        value_name = "KEY=VALUE"
    )]
    pub config: Vec<String>,
    /// Select a `[profiles.<name>]` table from config.toml.
    #[arg(id = "tui_profile", short = 'p', long = "profile")]
    pub profile: Option<String>,
    #[arg(short = 'm', long)]
    pub(crate) model: Option<String>,
    /// native, kimi-code or minimal.
    #[arg(long)]
    pub harness: Option<String>,
    /// read-only, workspace-write or danger-full-access (the starting mode).
    #[arg(short = 's', long, value_name = "MODE", value_parser = sandbox_mode)]
    pub sandbox: Option<SandboxMode>,
    /// Working directory for the session.
    #[arg(short = 'C', long = "cd")]
    pub cd: Option<PathBuf>,
    /// auto, always or never (NO_COLOR is honoured with auto).
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub color: String,
}

impl TuiArgs {
    /// These options with `later`'s on top (`interpreter -c a resume -c b`).
    pub(crate) fn merged(mut self, later: TuiArgs) -> TuiArgs {
        self.config.extend(later.config);
        self.profile = later.profile.or(self.profile);
        self.model = later.model.or(self.model);
        self.harness = later.harness.or(self.harness);
        self.sandbox = later.sandbox.or(self.sandbox);
        self.cd = later.cd.or(self.cd);
        if later.color != "auto" {
            self.color = later.color;
        }
        self
    }

    /// What the terminal face is given.
    fn into_options(self) -> TuiOptions {
        TuiOptions {
            overrides: Overrides {
                config: self.config,
                profile: self.profile,
                model: self.model,
                harness: self.harness,
                sandbox_mode: self.sandbox,
                ..Default::default()
            },
            cd: self.cd,
            color: self.color,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Continue an interactive session of this folder: a picker, `--last`, or an id.
    Resume {
        #[command(flatten)]
        tui: TuiArgs,
        /// The session id.
        session_id: Option<String>,
        /// The newest session started in this folder.
        #[arg(long, conflicts_with = "session_id")]
        last: bool,
    },
    /// Run one task non-interactively (Codex `exec` compatible: --json emits JSONL events).
    Exec(Box<ExecArgs>),
    /// Serve the Agent Client Protocol on stdio (Zed's agent panel and other ACP clients).
    Acp {
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Serve the Codex app-server protocol (JSON-RPC over JSON lines) for the Python Codex SDK.
    AppServer(AppServerArgs),
    /// Serve the Language Server Protocol on stdio: AI code actions for any LSP editor.
    Lsp(LspArgs),
    /// Store a provider's API key in config.toml (mode 0600).
    Login {
        #[command(flatten)]
        common: CommonArgs,
        /// Provider id (default: the configured provider).
        #[arg(long)]
        provider: Option<String>,
        /// Read the key from stdin instead of prompting.
        #[arg(long)]
        with_api_key: bool,
    },
    /// List the hooks that apply here, and trust a project's (Codex's `/hooks`).
    Hooks {
        #[command(flatten)]
        common: CommonArgs,
        #[command(subcommand)]
        what: Option<crate::hooks::HooksCommand>,
    },
    /// Add, list, show and remove MCP servers in config.toml (Codex's `codex mcp`).
    Mcp {
        #[command(subcommand)]
        what: crate::mcp::McpCommand,
    },
    /// Serve the agent as an MCP server on stdio (Codex's `codex` and `codex-reply` tools).
    McpServer {
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Export a stored session: Markdown on stdout, or HTML (`--html`), or a file (`-o`).
    Export {
        #[command(flatten)]
        common: CommonArgs,
        /// The session: its id, the start of its id, or the path to its log file.
        #[arg(required_unless_present = "last")]
        session: Option<String>,
        /// The newest session started in this folder.
        #[arg(long, conflicts_with = "session")]
        last: bool,
        /// One self-contained HTML page instead of Markdown.
        #[arg(long)]
        html: bool,
        /// Write to this file (a `*.html` name means HTML); images go to `<name>_files/`.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Review changes: --uncommitted, --base BRANCH or --commit SHA (`exec review`'s flags).
    #[command(disable_help_flag = true)]
    Review {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Inspect what the agent would send.
    Debug {
        #[command(subcommand)]
        what: DebugCommand,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum DebugCommand {
    /// Print the exact first request body for a prompt (default "hello").
    Prompt {
        #[command(flatten)]
        common: CommonArgs,
        #[arg(long)]
        harness: Option<String>,
        #[arg(long, short = 'C')]
        cd: Option<PathBuf>,
        prompt: Option<String>,
    },
}

/// `--harness`'s help: every harness of the registry.
fn harness_help() -> String {
    format!(
        "A harness: {}",
        interpreter_core::harness::names().join(", ")
    )
}

/// `interpreter lsp`: provider, model and harness also come from the client's
/// `initializationOptions` and `workspace/didChangeConfiguration` (docs/lsp.md).
#[derive(Debug, Clone, Args)]
pub(crate) struct LspArgs {
    /// The options every subcommand takes.
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// Talk LSP over stdin/stdout (the only transport; vscode-languageclient passes it).
    #[arg(long)]
    stdio: bool,
}

/// Options every subcommand takes.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct CommonArgs {
    /// Override a config key: `-c key=value` (value parsed as TOML). Repeatable; later wins.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", global = true)]
    pub(crate) config: Vec<String>,
    /// Select a `[profiles.<name>]` table from config.toml.
    #[arg(short = 'p', long, global = true)]
    pub(crate) profile: Option<String>,
}

impl CommonArgs {
    /// What these flags put on top of the config files.
    pub(crate) fn overrides(self) -> Overrides {
        Overrides {
            config: self.config,
            profile: self.profile,
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, Args)]
#[command(
    args_conflicts_with_subcommands = false,
    subcommand_precedence_over_arg = true
)]
pub(crate) struct ExecArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// Print events as JSON Lines on stdout (Codex `--experimental-json`).
    #[arg(long = "json", alias = "experimental-json", global = true)]
    pub json: bool,
    #[arg(short = 'm', long, global = true)]
    pub(crate) model: Option<String>,
    /// Provider id (same as `-c model_provider=…`).
    #[arg(long, global = true)]
    pub provider: Option<String>,
    #[arg(long, global = true, help = harness_help())]
    pub harness: Option<String>,
    #[arg(short = 's', long, value_name = "MODE", global = true, value_parser = sandbox_mode)]
    pub(crate) sandbox: Option<SandboxMode>,
    /// Working directory for the session.
    #[arg(short = 'C', long = "cd", global = true)]
    pub cd: Option<PathBuf>,
    /// Another directory the tools may read and write. Repeatable.
    #[arg(long = "add-dir", global = true)]
    pub add_dir: Vec<PathBuf>,
    #[arg(long, global = true)]
    pub(crate) skip_git_repo_check: bool,
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
    /// Make the prompt the session's goal: turns run until the model marks it complete, it
    /// is blocked, or its token budget is used.
    #[arg(long)]
    pub goal: bool,
    /// The goal's token budget (with --goal).
    #[arg(long, value_name = "TOKENS", requires = "goal")]
    pub goal_budget: Option<u64>,
    #[arg(long, value_name = "WHEN", default_value = "auto", global = true)]
    pub(crate) color: String,
    /// Run without sandbox or approvals.
    #[arg(
        long = "dangerously-bypass-approvals-and-sandbox",
        alias = "yolo",
        global = true
    )]
    pub yolo: bool,
    #[arg(long, hide = true, global = true)]
    pub(crate) full_auto: bool,
    /// Trust this folder's project (recorded in config.toml, as Codex's `exec --trust`): its
    /// own config loads. Without it, an untrusted project's files are left out and named.
    #[arg(long, global = true)]
    pub trust: bool,
    /// Run a trusted project's new or changed hooks without review, for this run only (as
    /// Codex's flag); disabled hooks stay off.
    #[arg(long, global = true)]
    pub dangerously_bypass_hook_trust: bool,
    /// The task. Read from stdin when absent (or `-`).
    pub prompt: Option<String>,
    #[command(subcommand)]
    pub(crate) resume: Option<ExecSub>,
}

impl ExecArgs {
    /// What the exec face is given.
    fn into_options(self) -> ExecOptions {
        ExecOptions {
            overrides: self.common.overrides(),
            json: self.json,
            model: self.model,
            provider: self.provider,
            harness: self.harness,
            sandbox: self.sandbox,
            cd: self.cd,
            add_dir: self.add_dir,
            skip_git_repo_check: self.skip_git_repo_check,
            output_schema: self.output_schema,
            images: self.images,
            output_last_message: self.output_last_message,
            diff: self.diff,
            ephemeral: self.ephemeral,
            goal: self.goal,
            goal_budget: self.goal_budget,
            color: self.color,
            yolo: self.yolo,
            trust: self.trust,
            bypass_hook_trust: self.dangerously_bypass_hook_trust,
            prompt: match &self.resume {
                Some(ExecSub::Review(r)) => r.prompt.clone(),
                _ => self.prompt,
            },
            review: match &self.resume {
                Some(ExecSub::Review(r)) => Some(r.target()),
                _ => None,
            },
            annotations: match &self.resume {
                Some(ExecSub::Review(r)) => r.github_annotations.clone(),
                _ => None,
            },
            resume: match &self.resume {
                Some(ExecSub::Resume {
                    session_id,
                    prompt,
                    last,
                }) => Some(Resume {
                    session_id: session_id.clone(),
                    prompt: prompt.clone(),
                    last: *last,
                }),
                _ => None,
            },
            undo: match self.resume {
                Some(ExecSub::Undo {
                    session_id,
                    last,
                    turns,
                }) => Some(Undo {
                    session_id,
                    last,
                    turns,
                }),
                _ => None,
            },
        }
    }
}

/// `interpreter app-server`.
#[derive(Debug, Clone, Args)]
pub(crate) struct AppServerArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// Where to serve; only `stdio://` (JSON lines on stdin and stdout).
    #[arg(long, value_name = "URL", default_value = "stdio://")]
    pub listen: String,
}

impl Command {
    /// `-c`/`--profile` given before the subcommand (as the Codex SDK passes them) join the
    /// subcommand's own, first: `interpreter -c a exec -c b` gives exec `a` then `b`.
    fn join_common(&mut self, top: &TuiArgs) {
        let common = match self {
            Command::Exec(a) => &mut a.common,
            Command::Acp { common }
            | Command::Login { common, .. }
            | Command::Hooks { common, .. }
            | Command::Export { common, .. }
            | Command::McpServer { common } => common,
            Command::AppServer(a) => &mut a.common,
            Command::Lsp(a) => &mut a.common,
            Command::Debug {
                what: DebugCommand::Prompt { common, .. },
            } => common,
            // The terminal's own options merge in `main`; `mcp` edits the user's file only.
            Command::Resume { .. } | Command::Mcp { .. } | Command::Review { .. } => return,
        };
        let later = std::mem::take(&mut common.config);
        common.config = top.config.iter().cloned().chain(later).collect();
        if common.profile.is_none() {
            common.profile = top.profile.clone();
        }
    }
}

#[derive(Debug, Clone, Subcommand)]
pub(crate) enum ExecSub {
    /// Continue a stored session.
    Resume {
        /// The session (thread) id.
        session_id: Option<String>,
        prompt: Option<String>,
        /// Resume the newest session started in this directory.
        #[arg(long)]
        last: bool,
    },
    /// Take back a stored session's last turn(s): files and conversation.
    Undo {
        /// The session (thread) id.
        session_id: Option<String>,
        /// The newest session started in this directory.
        #[arg(long, conflicts_with = "session_id")]
        last: bool,
        /// How many turns.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        turns: u32,
    },
    /// Review changes in a read-only sandbox; findings as text, or JSON with -o/--json.
    Review(ReviewArgs),
}

/// `exec review` and `interpreter review` (Codex's `codex review`): the target, and the
/// prompt as a focus (or, alone, as the review's instructions).
#[derive(Debug, Clone, Args)]
pub(crate) struct ReviewArgs {
    /// Staged, unstaged and untracked changes (the default without a prompt).
    #[arg(long, conflicts_with_all = ["base", "commit"])]
    uncommitted: bool,
    /// The changes against the merge base with BRANCH.
    #[arg(long, value_name = "BRANCH", conflicts_with = "commit")]
    base: Option<String>,
    /// The changes one commit made.
    #[arg(long, value_name = "SHA")]
    commit: Option<String>,
    /// A label for the commit (its subject is used otherwise).
    #[arg(long, requires = "commit")]
    title: Option<String>,
    /// Write the findings as GitHub workflow commands (`::warning file=…`) to FILE.
    #[arg(long, value_name = "FILE")]
    github_annotations: Option<PathBuf>,
    /// Focus for the review; alone, the review's instructions.
    prompt: Option<String>,
}

impl ReviewArgs {
    fn target(&self) -> interpreter_exec::ReviewTarget {
        use interpreter_exec::ReviewTarget as Target;
        match (&self.base, &self.commit, &self.prompt) {
            (Some(b), _, _) => Target::Base(b.clone()),
            (_, Some(sha), _) => Target::Commit {
                sha: sha.clone(),
                title: self.title.clone(),
            },
            (None, None, Some(p)) if !self.uncommitted => Target::Custom(p.clone()),
            _ => Target::Uncommitted,
        }
    }
}

/// `terminal_ui`: stderr is the terminal the UI draws on, so logs go to
/// `INTERPRETER_LOG_FILE` only (session warnings reach the UI as events). With `[otel]`, the
/// session's spans are exported too; the returned export is flushed at exit.
pub(crate) fn init_logging(terminal_ui: bool) -> Option<crate::otel::Otel> {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::prelude::*;
    let (otel_layer, otel) =
        match interpreter_core::config::otel_settings(&interpreter_core::config::home_dir()) {
            Ok(Some(settings)) => match crate::otel::start(&settings) {
                Ok((layer, otel)) => (Some(layer), Some(otel)),
                Err(e) => {
                    eprintln!("warning: [otel] is set, but its exporter did not start: {e}");
                    (None, None)
                }
            },
            // A bad `[otel]` is reported where the configuration is loaded.
            Ok(None) | Err(_) => (None, None),
        };
    let otel_layer = otel_layer.map(|l| {
        l.with_filter(
            tracing_subscriber::filter::Targets::new()
                .with_target(interpreter_core::agent::SPAN_TARGET, tracing::Level::INFO),
        )
    });
    let log_file = std::env::var_os("INTERPRETER_LOG_FILE");
    if terminal_ui && log_file.is_none() {
        if otel_layer.is_some() {
            tracing_subscriber::registry().with(otel_layer).init();
        }
        return otel;
    }
    let filter =
        EnvFilter::try_from_env("INTERPRETER_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    // Every line goes through secret redaction; a new log file is readable by its owner only.
    use interpreter_core::secrets::Redacting;
    let file = log_file.and_then(|path| {
        interpreter_core::platform::create_mode(
            std::fs::OpenOptions::new().create(true).append(true),
            0o600,
        )
        .open(&path)
        .ok()
    });
    let fmt = tracing_subscriber::fmt::layer().with_target(false);
    let fmt = match file {
        Some(file) => fmt
            .with_ansi(false)
            .with_writer(Redacting(std::sync::Mutex::new(file)))
            .with_filter(filter)
            .boxed(),
        None => {
            use std::io::IsTerminal;
            fmt.with_ansi(std::io::stderr().is_terminal())
                .with_writer(Redacting(std::io::stderr))
                .with_filter(filter)
                .boxed()
        }
    };
    tracing_subscriber::registry()
        .with(otel_layer)
        .with(fmt)
        .init();
    otel
}

/// `interpreter review …` is `interpreter exec review …`: its words parsed again as that; Err
/// is the exit code once clap has printed its error or help.
fn review_as_exec(cli: &mut Cli) -> Result<(), i32> {
    let Some(Command::Review { args }) = &cli.command else {
        return Ok(());
    };
    let argv = ["interpreter", "exec", "review"].map(std::ffi::OsString::from);
    match Cli::try_parse_from(argv.into_iter().chain(args.iter().cloned())) {
        Ok(c) => {
            cli.command = c.command;
            Ok(())
        }
        Err(e) => {
            let _ = e.print();
            Err(if e.use_stderr() { 2 } else { 0 })
        }
    }
}

/// Parses the command line, runs the chosen face, and returns the process exit code.
pub(crate) fn main() -> i32 {
    let mut cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    if let Err(code) = review_as_exec(&mut cli) {
        return code;
    }
    if let Some(command) = cli.command.as_mut() {
        command.join_common(&cli.tui);
    }
    let otel = init_logging(matches!(cli.command, None | Some(Command::Resume { .. })));
    // Named in the lock files of the sessions this process writes.
    interpreter_core::sessions::set_face(match &cli.command {
        None | Some(Command::Resume { .. }) => "terminal",
        Some(Command::Exec(_)) => "exec",
        Some(Command::Acp { .. }) => "acp",
        Some(Command::AppServer(_)) => "app-server",
        Some(Command::Lsp(_)) => "lsp",
        Some(Command::McpServer { .. }) => "mcp-server",
        Some(_) => "interpreter",
    });
    // `exec` drives one session while its front end waits on the main thread: one worker
    // is enough, and a thread fewer to start is time off every CI run.
    let workers = if matches!(cli.command, Some(Command::Exec(_))) {
        1
    } else {
        2
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: could not start the async runtime: {e}");
            return 1;
        }
    };
    let code = rt.block_on(run(cli));
    // The sessions' spans end as the runtime drops its tasks; then what is pending leaves.
    if let Some(otel) = otel {
        drop(rt);
        otel.shutdown();
    }
    code
}

/// Runs the chosen face on the runtime; its exit code.
async fn run(cli: Cli) -> i32 {
    let Some(command) = cli.command else {
        return interpreter_tui::run(cli.tui.into_options(), cli.prompt, Start::New).await;
    };
    match command {
        Command::Resume {
            tui,
            session_id,
            last,
        } => {
            let start = match (session_id, last) {
                (Some(id), _) => Start::Resume(id),
                (None, true) => Start::Last,
                (None, false) => Start::Pick,
            };
            interpreter_tui::run(cli.tui.merged(tui).into_options(), None, start).await
        }
        Command::Exec(args) => interpreter_exec::run(args.into_options()).await,
        Command::Review { .. } => unreachable!("parsed again as `exec review` above"),
        Command::Acp { common } => interpreter_acp::serve(common.overrides()).await,
        Command::AppServer(args) => {
            interpreter_app_server::serve(args.common.overrides(), &args.listen).await
        }
        Command::Lsp(args) => interpreter_lsp::run(args.common.overrides()).await,
        Command::Login {
            common,
            provider,
            with_api_key,
        } => crate::login::run(common.overrides(), provider, with_api_key),
        Command::Hooks { common, what } => crate::hooks::run(common.overrides(), what),
        Command::Mcp { what } => crate::mcp::run(what).await,
        Command::McpServer { common } => interpreter_mcp_server::serve(common.overrides()).await,
        Command::Debug {
            what:
                DebugCommand::Prompt {
                    common,
                    harness,
                    cd,
                    prompt,
                },
        } => interpreter_exec::debug_prompt(common.overrides(), harness, cd, prompt).await,
        Command::Export {
            common,
            session,
            last,
            html,
            output,
        } => interpreter_exec::export(
            common.overrides(),
            interpreter_exec::ExportOptions {
                session,
                last,
                html,
                output,
            },
        ),
    }
}

/// `-s`: a sandbox mode, checked when the command line is parsed.
fn sandbox_mode(s: &str) -> Result<SandboxMode, String> {
    s.parse::<SandboxMode>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Vec<std::ffi::OsString> {
        line.iter().map(Into::into).collect()
    }

    #[test]
    fn options_before_the_subcommand_join_those_after_it() {
        let mut cli = Cli::try_parse_from(args(&[
            "interpreter",
            "--config",
            "a=1",
            "-cb=2",
            "app-server",
            "-c",
            "c=3",
            "--listen",
            "stdio://",
        ]))
        .unwrap();
        let command = cli.command.as_mut().unwrap();
        command.join_common(&cli.tui);
        let Command::AppServer(a) = command else {
            panic!("not app-server: {command:?}")
        };
        assert_eq!(a.common.config, ["a=1", "b=2", "c=3"]);
        let mut cli = Cli::try_parse_from(args(&[
            "interpreter",
            "-p",
            "work",
            "exec",
            "--json",
            "resume",
            "ID",
            "go",
        ]))
        .unwrap();
        let command = cli.command.as_mut().unwrap();
        command.join_common(&cli.tui);
        let Command::Exec(e) = command else {
            panic!("not exec: {command:?}")
        };
        assert_eq!(e.common.profile.as_deref(), Some("work"));
    }
}
