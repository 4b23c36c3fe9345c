//! `interpreter` with no subcommand: an interactive session in the terminal. A fourth face
//! over the same core: it opens sessions with `Sessions::open`, sends `Op`s and draws the
//! `Event`s, and adds no agent logic of its own. History goes to the terminal's scrollback
//! (an inline viewport, never the alternate screen), so memory stays bounded however long
//! the session runs.
//!
//! Split by responsibility: [`app`] keeps the state from events, [`keys`] maps keys to
//! actions, [`cells`] and [`markdown`] draw the transcript, [`stream`] commits streamed text,
//! [`composer`], [`popup`], [`approval`] and [`status`] are the parts of the viewport,
//! [`fit`] cuts a prompt's text to the rows it has, [`fold`] folds an approval's command and
//! [`danger`] finds the part of it the danger is about, [`render`] lays the viewport out, [`screen`] owns the inline viewport and [`terminal`]
//! sets the terminal up and restores it.
#![warn(missing_docs, unreachable_pub)]

mod app;
mod approval;
mod cells;
mod clipboard;
mod composer;
mod ctx;
mod danger;
mod fit;
mod fold;
mod keys;
mod markdown;
mod popup;
#[cfg(test)]
mod prompt_tests;
mod question;
mod render;
mod rewind;
mod screen;
#[cfg(test)]
mod screen_tests;
mod status;
mod stream;
mod subagent;
mod terminal;
#[cfg(test)]
mod tests;
mod theme;
mod wrap;

use interpreter_protocol::{ApprovalPolicy, Event, Op, PermissionMode};
use ratatui::backend::{Backend, CrosstermBackend};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

use app::App;
use interpreter_core::agent::{
    EventSink, SessionError, SessionHandle, SessionOptions, SessionStart,
};
use interpreter_core::config::{Config, Overrides};
use interpreter_core::sessions::Sessions;
use screen::Screen;

/// Exit status when there is no terminal, or the configuration is bad.
const EXIT_USAGE: i32 = 2;
/// The shortest time between two frames while events stream in.
const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// How often the working indicator's clock moves.
const TICK: Duration = Duration::from_millis(100);

/// How the terminal session starts: the command line as the binary parsed it.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// `-c`, `--profile`, `-m`, `--harness` and `-s`.
    pub overrides: Overrides,
    /// `-C`: the working directory.
    pub cd: Option<PathBuf>,
    /// `--color`: auto, always or never.
    pub color: String,
}

/// What to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// A new session.
    New,
    /// `interpreter resume ID`.
    Resume(String),
    /// `interpreter resume --last`.
    Last,
    /// `interpreter resume`: a picker of this folder's sessions.
    Pick,
}

/// Runs the interactive session; the process's exit code.
pub async fn run(args: TuiOptions, prompt: Option<String>, start: Start) -> i32 {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!(
            "interpreter: the interactive session needs a terminal on stdin and stdout.\n\
             For scripts and pipes use `interpreter exec \"your task\"` (see `interpreter exec --help`)."
        );
        return EXIT_USAGE;
    }
    let opener = match Opener::new(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("Error: {}", interpreter_core::secrets::redact(&e));
            return EXIT_USAGE;
        }
    };
    let start = match opener.resolve(start) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let theme = theme::Theme::new(color_enabled(&args.color));
    let (guard, row) = match terminal::enter() {
        Ok(v) => v,
        Err(e) => {
            terminal::restore();
            eprintln!("Error: could not set up the terminal: {e}");
            return 1;
        }
    };
    let backend = CrosstermBackend::new(std::io::BufWriter::with_capacity(
        64 * 1024,
        std::io::stdout(),
    ));
    let screen = match Screen::new(backend, row) {
        Ok(s) => s,
        Err(e) => {
            drop(guard);
            eprintln!("Error: could not set up the terminal: {e}");
            return 1;
        }
    };
    let mut tui = Tui::new(App::new(theme, opener.base_approval), screen, opener);
    let outcome = tui.run(prompt, start).await;
    let _ = tui.screen.leave();
    drop(guard);
    tui.write_frame_stats();
    if let Some(first) = &tui.draw_failures.first {
        eprintln!(
            "interpreter: {} frame(s) of the terminal UI could not be drawn and were drawn again; the first: {first}",
            tui.draw_failures.total
        );
    }
    match outcome {
        Ok(Some(id)) => {
            println!("To continue this session, run `interpreter resume {id}`.");
            0
        }
        Ok(None) => 0,
        Err(e) => {
            eprintln!("Error: {}", interpreter_core::secrets::redact(&e));
            1
        }
    }
}

/// `--color` and `NO_COLOR`: `never` or a set `NO_COLOR` turns colour off, `always` on.
fn color_enabled(flag: &str) -> bool {
    match flag {
        "always" => true,
        "never" => false,
        _ => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// On first open of a project with its own config: asks whether to trust it, on the terminal
/// before the screen is taken, and saves the answer in config.toml (as Codex does). True
/// when it is now trusted.
fn ask_trust(
    project: &interpreter_core::config::ProjectTrust,
    home: &std::path::Path,
) -> Result<bool, String> {
    use interpreter_core::config::TrustLevel;
    use std::io::{BufRead, Write};
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "{} has configuration of its own:",
        project.root.display()
    );
    for f in project.own_files() {
        let _ = writeln!(err, "  {}", f.display());
    }
    let _ = write!(
        err,
        "A trusted project's own config loads with every session here (its model, sandbox and MCP servers).\nDo you trust {}? [y/N] ",
        project.root.display()
    );
    let _ = err.flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("reading the answer: {e}"))?;
    let level = match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => TrustLevel::Trusted,
        _ => TrustLevel::Untrusted,
    };
    interpreter_core::config::set_project_trust(home, &project.root, level)
        .map_err(|e| format!("saving the answer: {e:#}"))?;
    Ok(level == TrustLevel::Trusted)
}

/// A trusted project's hooks that are new or changed: asks whether to run them, before the
/// screen is taken, and records the approval of each definition (Codex's `/hooks` review).
fn ask_hooks(
    review: &[std::sync::Arc<interpreter_core::hooks::Handler>],
    home: &std::path::Path,
) -> Result<(), String> {
    use interpreter_core::hooks::trust;
    use std::io::{BufRead, Write};
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "The project has hooks that are new or changed since you approved them:"
    );
    for h in review {
        let _ = writeln!(err, "  {}", trust::describe(h));
    }
    let _ = write!(
        err,
        "They run programs at points of every session here. Run them? [y/N] "
    );
    let _ = err.flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("reading the answer: {e}"))?;
    if !matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        let _ = writeln!(
            err,
            "They stay off; `interpreter hooks trust` approves them later."
        );
        return Ok(());
    }
    let chosen: Vec<&interpreter_core::hooks::Handler> =
        review.iter().map(|h| h.as_ref()).collect();
    trust::trust(home, &chosen).map_err(|e| format!("saving the answer: {e:#}"))
}

/// What every session of this run is opened with.
struct Opener {
    config: Config,
    cwd: PathBuf,
    mode: PermissionMode,
    base_approval: ApprovalPolicy,
}

impl Opener {
    fn new(args: &TuiOptions) -> Result<Opener, String> {
        let cwd = match &args.cd {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| format!("reading the current directory: {e}"))?,
        };
        let cwd = std::fs::canonicalize(&cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
        let mut overrides = args.overrides.clone();
        overrides.project = Some(cwd.clone());
        let mut config = Config::load(&overrides).map_err(|e| format!("{e:#}"))?;
        if let Some(project) = config.project.clone().filter(|p| p.needs_answer())
            && ask_trust(&project, &config.home)?
        {
            config = Config::load(&overrides).map_err(|e| format!("{e:#}"))?;
        }
        if config.project.as_ref().is_some_and(|p| p.trusted()) {
            let review = interpreter_core::hooks::to_review(&config);
            if !review.is_empty() {
                ask_hooks(&review, &config.home)?;
            }
        }
        // The modes as in ACP: `auto` also asks before sandboxed commands.
        let mode = PermissionMode::for_sandbox(config.sandbox_mode);
        let base_approval = config.approval_policy;
        let permissions = mode.permissions(base_approval);
        config.sandbox_mode = permissions.sandbox;
        config.approval_policy = permissions.approval;
        Ok(Opener {
            config,
            cwd,
            mode,
            base_approval,
        })
    }

    /// `--last` becomes the newest session's id; a picker with nothing to pick is a new
    /// session.
    fn resolve(&self, start: Start) -> Result<Start, String> {
        match start {
            Start::Last => popup::sessions_of(&self.config.home, &self.cwd)
                .first()
                .map(|e| Start::Resume(e.id.clone()))
                .ok_or_else(|| format!("no earlier session in {}", self.cwd.display())),
            other => Ok(other),
        }
    }

    /// Opens a session; its events arrive on the returned channel.
    async fn open(
        &self,
        resume: Option<String>,
    ) -> Result<(SessionHandle, UnboundedReceiver<Event>), String> {
        let (events, rx) = EventSink::new();
        let opts = SessionOptions {
            face: interpreter_core::agent::FaceAbilities {
                questions: true,
                diagnostics: false,
                schedules: true,
                client: "interpreter-tui",
            },
            ..SessionOptions::new(self.config.clone(), self.cwd.clone(), events)
        };
        let resumed = resume.is_some();
        let start = match resume {
            Some(id) => SessionStart::Resume { id },
            None => SessionStart::New { id: None },
        };
        let handle = Sessions::open(opts, start).await.map_err(|e| match e {
            SessionError::MissingKey(k) => k.to_string(),
            other => other.to_string(),
        })?;
        let _ = handle.submit(Op::SetPermissions(
            self.mode.permissions(self.base_approval),
        ));
        if resumed {
            let _ = handle.submit(Op::Replay);
        }
        Ok((handle, rx))
    }
}

/// The event loop's state: the app, the screen, and the session it talks to.
struct Tui<B: Backend> {
    app: App,
    screen: Screen<B>,
    opener: Opener,
    session: Option<SessionHandle>,
    events: Option<UnboundedReceiver<Event>>,
    files: Option<tokio::sync::oneshot::Receiver<Vec<String>>>,
    /// Frame times, when `INTERPRETER_TUI_FRAME_STATS` names a file to write them to.
    frame_times: Option<Vec<Duration>>,
    /// Frames that panicked (caught, the session went on).
    draw_failures: event_loop::DrawFailures,
    /// The terminal has the user's focus (as its focus reports say; assumed at start).
    focused: bool,
    /// What to tell the user about while the terminal is not focused.
    alerts: Vec<String>,
}

impl<B: Backend> Tui<B> {
    fn new(app: App, screen: Screen<B>, opener: Opener) -> Self {
        Tui {
            app,
            screen,
            opener,
            session: None,
            events: None,
            files: None,
            frame_times: std::env::var_os("INTERPRETER_TUI_FRAME_STATS").map(|_| Vec::new()),
            draw_failures: event_loop::DrawFailures::default(),
            focused: true,
            alerts: Vec::new(),
        }
    }
}

mod event_loop;
