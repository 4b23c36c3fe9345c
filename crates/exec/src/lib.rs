//! `interpreter exec`: one non-interactive turn, driven by argv and stdin, reported as Codex
//! JSONL (`--json`) or as a human transcript on stderr with the answer on stdout.
#![warn(missing_docs, unreachable_pub)]

mod diff;
mod human;
mod jsonl;

use anyhow::Result;
use interpreter_protocol::{
    ApprovalDecision, ApprovalPolicy, Event, Goal, GoalStatus, InputItem, Op, SandboxMode,
    TokenUsage, TurnEndReason, TurnEnded,
};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc::UnboundedReceiver;

use diff::Snapshot;
use interpreter_core::agent::{
    EventSink, OpResult, SessionError, SessionHandle, SessionOptions, SessionStart,
};
use interpreter_core::config::{Config, Overrides};
use interpreter_core::sessions::Sessions;
use interpreter_face::slash;
use interpreter_face::view::SessionView;

use human::HumanWriter;
use jsonl::JsonlWriter;

/// Exit status for bad configuration or a missing key.
const EXIT_CONFIG: i32 = 2;

enum Output {
    Json(JsonlWriter<std::io::Stdout>),
    Human(HumanWriter<std::io::Stderr>),
}

impl Output {
    fn event(&mut self, e: &Event) {
        match (self, e) {
            // Progress, not an event of Codex's stream: stderr only.
            (
                Output::Json(_),
                Event::ModelWaiting {
                    provider,
                    attempt,
                    elapsed_ms,
                },
            ) => eprintln!(
                "{}…",
                interpreter_face::terminal_text::sanitize(&interpreter_face::waiting_text(
                    provider,
                    *attempt,
                    *elapsed_ms
                ))
            ),
            (Output::Json(w), e) => w.event(e),
            (Output::Human(w), e) => w.event(e),
        }
    }
    fn last_message(&self) -> Option<String> {
        match self {
            Output::Json(w) => w.last_message.clone(),
            Output::Human(w) => w.last_message.clone(),
        }
    }
}

/// Prints a fatal error and returns the exit code. In JSON mode stdout carries events only,
/// so errors before a thread exists go to stderr in both modes.
fn fail(code: i32, message: &str) -> i32 {
    eprintln!("Error: {}", interpreter_core::secrets::redact(message));
    code
}

/// What `interpreter exec` was asked to do: the command line as the binary parsed it.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// `-c key=value` and `--profile`.
    pub overrides: Overrides,
    /// JSON Lines on stdout (Codex `--experimental-json`).
    pub json: bool,
    /// `-m`.
    pub model: Option<String>,
    /// `--provider`.
    pub provider: Option<String>,
    /// `--harness`.
    pub harness: Option<String>,
    /// `-s`: the sandbox mode.
    pub sandbox: Option<SandboxMode>,
    /// `-C`: the working directory.
    pub cd: Option<PathBuf>,
    /// `--add-dir`: more directories the tools may read and write.
    pub add_dir: Vec<PathBuf>,
    /// Run outside a git repository.
    pub skip_git_repo_check: bool,
    /// A JSON Schema file the final answer must follow.
    pub output_schema: Option<PathBuf>,
    /// Images to attach.
    pub images: Vec<PathBuf>,
    /// Write the final message to this file.
    pub output_last_message: Option<PathBuf>,
    /// Print a `git apply`-able diff of the run's changes.
    pub diff: bool,
    /// Do not store the session.
    pub ephemeral: bool,
    /// `--goal`: the prompt is the session's goal, worked on turn after turn.
    pub goal: bool,
    /// `--goal-budget`: the goal's token budget.
    pub goal_budget: Option<u64>,
    /// auto, always or never.
    pub color: String,
    /// No sandbox, no approvals.
    pub yolo: bool,
    /// The task; stdin when absent or `-`.
    pub prompt: Option<String>,
    /// `exec resume`.
    pub resume: Option<Resume>,
    /// `exec undo`.
    pub undo: Option<Undo>,
}

/// `exec undo [ID|--last] [--turns N]`: take a stored session's last turns back.
#[derive(Debug, Clone, Default)]
pub struct Undo {
    /// The session (thread) id.
    pub session_id: Option<String>,
    /// The newest session started in this directory.
    pub last: bool,
    /// How many turns; at least 1.
    pub turns: u32,
}

/// `exec resume [ID|--last] [PROMPT]`.
#[derive(Debug, Clone, Default)]
pub struct Resume {
    /// The session (thread) id.
    pub session_id: Option<String>,
    /// The prompt given with it.
    pub prompt: Option<String>,
    /// The newest session started in this directory.
    pub last: bool,
}

/// Runs `interpreter exec` and returns the process exit code.
pub async fn run(args: ExecOptions) -> i32 {
    match run_inner(args).await {
        Ok(code) => code,
        Err(e) => fail(1, &format!("{e:#}")),
    }
}

fn load_config(args: &ExecOptions) -> Result<Config, String> {
    let mut o: Overrides = args.overrides.clone();
    o.model = args.model.clone();
    o.provider = args.provider.clone();
    o.harness = args.harness.clone();
    o.sandbox_mode = args.sandbox;
    // exec never asks: Codex's default approval policy for exec is `never`.
    o.default_approval_policy = Some(ApprovalPolicy::Never);
    if args.yolo {
        o.sandbox_mode = Some(SandboxMode::DangerFullAccess);
        o.approval_policy = Some(ApprovalPolicy::Never);
    }
    Config::load(&o).map_err(|e| format!("{e:#}"))
}

/// What argv and stdin ask for, checked before any session exists.
struct Request {
    cwd: PathBuf,
    config: Config,
    resume_id: Option<String>,
    /// Leading `/harness` and `/model` lines.
    commands: Vec<(String, String)>,
    prompt: String,
    images: Vec<InputItem>,
    output_schema: Option<serde_json::Value>,
}

/// Reads and checks the request; Err is the exit code, the error already printed.
fn prepare(args: &ExecOptions) -> Result<Request, i32> {
    let cwd = match &args.cd {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|e| fail(1, &format!("reading the current directory: {e}")))?,
    };
    if !cwd.is_dir() {
        return Err(fail(
            1,
            &format!("--cd {}: no such directory", cwd.display()),
        ));
    }
    if !args.skip_git_repo_check
        && !args.yolo
        && interpreter_core::workspace::agents_md::git_root(&cwd).is_none()
    {
        return Err(fail(
            1,
            "Not inside a trusted directory and --skip-git-repo-check was not specified.",
        ));
    }
    let config = load_config(args).map_err(|e| fail(EXIT_CONFIG, &e))?;
    let (resume_id, positional) = resume_target(args, &config, &cwd)?;
    let raw_prompt = read_prompt(positional).map_err(|e| fail(1, &e))?;
    let (commands, prompt) = split_session_commands(&raw_prompt);
    if prompt.trim().is_empty() && commands.is_empty() {
        return Err(fail(1, "No prompt provided via stdin."));
    }
    let output_schema = match &args.output_schema {
        Some(p) => Some(
            std::fs::read_to_string(p)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
                .map_err(|e| fail(1, &format!("--output-schema {}: {e}", p.display())))?,
        ),
        None => None,
    };
    let images = args
        .images
        .iter()
        .map(|img| {
            interpreter_core::model::image_data_url(img)
                .map(|url| InputItem::Image { url })
                .map_err(|e| format!("--image {e}"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(1, &e))?;
    Ok(Request {
        cwd,
        config,
        resume_id,
        commands,
        prompt,
        images,
        output_schema,
    })
}

/// `exec resume ID|--last`: the session to continue and the prompt given with it.
fn resume_target(
    args: &ExecOptions,
    config: &Config,
    cwd: &Path,
) -> Result<(Option<String>, Option<String>), i32> {
    let Some(Resume {
        session_id,
        prompt,
        last,
    }) = &args.resume
    else {
        return Ok((None, args.prompt.clone()));
    };
    let id = if *last {
        Sessions::new(&config.home)
            .list(Some(
                &std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf()),
            ))
            .first()
            .map(|(m, _)| m.id.clone())
    } else {
        session_id.clone()
    };
    match id {
        Some(id) => Ok((Some(id), prompt.clone())),
        None => Err(fail(
            1,
            "no session to resume: give a session id or use --last in a directory with sessions",
        )),
    }
}

/// A session of this run: its handle, its events and what they said so far.
struct Run {
    handle: SessionHandle,
    rx: UnboundedReceiver<Event>,
    view: SessionView,
    /// Events from before the header was written, for the output once it is.
    backlog: Vec<Event>,
}

async fn open(args: &ExecOptions, req: &Request) -> Result<Run, i32> {
    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions {
        extra_roots: args.add_dir.clone(),
        persist: !args.ephemeral,
        output_schema: req.output_schema.clone(),
        ..SessionOptions::new(req.config.clone(), req.cwd.clone(), events)
    };
    let start = match &req.resume_id {
        Some(id) => SessionStart::Resume { id: id.clone() },
        None => SessionStart::New { id: None },
    };
    let handle = Sessions::open(opts, start).await.map_err(|e| match e {
        SessionError::MissingKey(k) => fail(EXIT_CONFIG, &k.to_string()),
        other => fail(1, &other.to_string()),
    })?;
    let mut backlog = Vec::new();
    let view = SessionView::configured(&mut rx, &mut backlog)
        .await
        .ok_or_else(|| fail(1, "the session ended before it was ready"))?;
    Ok(Run {
        handle,
        rx,
        view,
        backlog,
    })
}

/// `exec undo`: opens the stored session in its own folder, undoes, and prints what was put
/// back (a JSON line with `--json`). Needs no key: no model is asked.
async fn undo(args: &ExecOptions, target: &Undo) -> i32 {
    let mut config = match load_config(args) {
        Ok(c) => c,
        Err(e) => return fail(EXIT_CONFIG, &e),
    };
    if config.provider.resolve_api_key().is_err() {
        config.provider.api_key = Some("unset".into());
    }
    let sessions = Sessions::new(&config.home);
    let id = if target.last {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
        sessions.list(Some(&cwd)).first().map(|(m, _)| m.id.clone())
    } else {
        target.session_id.clone()
    };
    let Some(id) = id else {
        return fail(
            1,
            "no session to undo: give a session id or use --last in a directory with sessions",
        );
    };
    let Some(summary) = sessions.summary(&id) else {
        return fail(1, &format!("no session `{id}`"));
    };
    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions::new(config, summary.meta.cwd.clone(), events);
    let handle = match Sessions::open(opts, SessionStart::Resume { id }).await {
        Ok(h) => h,
        Err(e) => return fail(1, &e.to_string()),
    };
    let result = handle
        .submit(Op::Undo {
            turns: target.turns.max(1),
            restore: interpreter_protocol::Restore::Both,
        })
        .done()
        .await;
    let _ = handle.submit(Op::Shutdown).done().await;
    let mut error = None;
    while let Ok(e) = rx.try_recv() {
        if let Event::Error { message } = e {
            error = Some(message);
        }
    }
    match result {
        OpResult::Undone(r) => {
            if args.json {
                let mut line = serde_json::to_value(&r).unwrap_or_default();
                line["type"] = "undo.completed".into();
                println!("{line}");
            } else {
                println!("{}", slash::undo_text(&r));
            }
            0
        }
        _ => fail(
            1,
            &error.unwrap_or_else(|| "the undo did not complete".into()),
        ),
    }
}

async fn run_inner(args: ExecOptions) -> Result<i32> {
    if let Some(target) = args.undo.clone() {
        return Ok(undo(&args, &target).await);
    }
    let json = args.json;
    let req = match prepare(&args) {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    let mut run = match open(&args, &req).await {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    // Session commands (/harness, /model) before the prompt.
    for (cmd, arg) in &req.commands {
        let op = match cmd.as_str() {
            "harness" => Op::SetHarness {
                harness: arg.clone(),
            },
            _ => Op::SetModel { model: arg.clone() },
        };
        if let OpResult::Failed(e) = run.handle.submit(op).done().await {
            return Ok(fail(1, &format!("/{cmd} {arg}: {e}")));
        }
    }
    while let Ok(e) = run.rx.try_recv() {
        run.view.observe(&e);
        run.backlog.push(e);
    }
    let mut input = req.images.clone();
    if !req.prompt.trim().is_empty() {
        // `/<skill> args` runs a skill.
        input.insert(0, slash::input_for(&req.prompt, &run.view.skills));
    }
    let color = match args.color.as_str() {
        "always" => true,
        "never" => false,
        _ => std::io::stderr().is_terminal(),
    };
    let mut out = if json {
        Output::Json(JsonlWriter::new(std::io::stdout()))
    } else {
        Output::Human(HumanWriter::new(std::io::stderr(), color))
    };
    write_header(&mut out, &run.view, &req);
    for e in std::mem::take(&mut run.backlog) {
        out.event(&e);
    }
    if input.is_empty() {
        // Only session commands: nothing to ask the model.
        return Ok(0);
    }
    // With --diff in a git work tree, changes are read off the tree afterwards, so what
    // shell commands changed is in the patch too.
    let snapshot = if args.diff {
        let cwd = run.view.cwd.clone();
        tokio::task::spawn_blocking(move || Snapshot::take(&cwd))
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    let code = if args.goal {
        drive_goal(&args, &mut run, &mut out, &req.prompt).await
    } else {
        let ended = drive_turn(&mut run, &mut out, input).await;
        finish_turn(&args, &mut out, &ended, run.view.total_usage())
    };
    let diff = match (args.diff, snapshot) {
        (false, _) => None,
        (true, Some(snapshot)) => Some(tree_diff(&run.view, snapshot).await),
        (true, None) => Some(run.view.diff.clone().unwrap_or_default()),
    };
    print_result(json, diff, out.last_message(), code == 0);
    let _ = run.handle.submit(Op::Shutdown).done().await;
    Ok(code)
}

fn write_header(out: &mut Output, view: &SessionView, req: &Request) {
    match out {
        Output::Json(w) => w.thread_started(&view.id),
        Output::Human(w) => {
            let s = &view.settings;
            w.header(
                &[
                    ("workdir", view.cwd.display().to_string()),
                    ("model", s.model.clone()),
                    ("provider", s.provider.clone()),
                    ("harness", s.harness.clone()),
                    ("approval", s.permissions.approval.as_str().to_string()),
                    ("sandbox", s.permissions.sandbox.as_str().to_string()),
                    ("session id", view.id.clone()),
                ],
                &req.prompt,
            );
        }
    }
}

/// Runs the turn, writing its events as they come. Nobody can be asked in exec: approval
/// requests are refused. Ctrl+C or SIGTERM interrupts the turn.
async fn drive_turn(run: &mut Run, out: &mut Output, input: Vec<InputItem>) -> TurnEnded {
    let ticket = run.handle.submit(Op::UserInput { items: input });
    spawn_signal_handler(run.handle.clone());
    let turn_id = ticket.id.clone();
    let done = ticket.done();
    tokio::pin!(done);
    let result = loop {
        tokio::select! {
            Some(e) = run.rx.recv() => on_event(run, out, &e),
            r = &mut done => break r,
        }
    };
    while let Ok(e) = run.rx.try_recv() {
        on_event(run, out, &e);
    }
    match result {
        OpResult::Turn(ended) => ended,
        OpResult::Done | OpResult::Undone(_) | OpResult::Failed(_) => TurnEnded {
            turn_id,
            reason: TurnEndReason::Failed {
                message: "the session ended before the turn did".into(),
            },
        },
    }
}

/// `--goal`: sets the prompt as the goal and writes every turn the session runs for it, until
/// the goal stops being active and its last turn has ended. 0 when the model marked it
/// complete.
async fn drive_goal(args: &ExecOptions, run: &mut Run, out: &mut Output, objective: &str) -> i32 {
    let ticket = run.handle.submit(Op::SetGoal {
        objective: Some(objective.to_string()),
        status: Some(GoalStatus::Active),
        token_budget: args.goal_budget,
    });
    spawn_signal_handler(run.handle.clone());
    if let OpResult::Failed(e) = ticket.done().await {
        return fail(1, &format!("--goal: {e}"));
    }
    let mut goal: Option<Goal> = None;
    let (mut running, mut code) = (false, 1);
    let mut usage_before = run.view.total_usage();
    while let Some(e) = run.rx.recv().await {
        match &e {
            Event::TurnStarted { .. } => running = true,
            Event::GoalUpdated { goal: g, .. } => goal = Some(g.clone()),
            Event::GoalCleared => goal = None,
            _ => {}
        }
        if let Event::TurnEnded(ended) = &e {
            running = false;
            run.view.observe(&e);
            let total = run.view.total_usage();
            code = finish_turn(args, out, ended, since(total, usage_before));
            usage_before = total;
        } else {
            on_event(run, out, &e);
        }
        if !running && goal.as_ref().is_none_or(|g| g.status != GoalStatus::Active) {
            break;
        }
    }
    match goal {
        Some(g) if g.status == GoalStatus::Complete => code,
        Some(g) => fail(
            1,
            &format!(
                "the goal stopped before it was complete: {} ({} tokens used{})",
                serde_json::to_value(g.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                g.tokens_used,
                g.token_budget
                    .map(|b| format!(" of {b}"))
                    .unwrap_or_default()
            ),
        ),
        None => fail(1, "the goal was cleared before it was complete"),
    }
}

/// What was used between two totals: one turn's usage.
fn since(total: TokenUsage, before: TokenUsage) -> TokenUsage {
    TokenUsage {
        input_tokens: total.input_tokens.saturating_sub(before.input_tokens),
        cached_input_tokens: total
            .cached_input_tokens
            .saturating_sub(before.cached_input_tokens),
        output_tokens: total.output_tokens.saturating_sub(before.output_tokens),
        reasoning_output_tokens: total
            .reasoning_output_tokens
            .saturating_sub(before.reasoning_output_tokens),
    }
}

fn on_event(run: &mut Run, out: &mut Output, e: &Event) {
    run.view.observe(e);
    if let Event::ApprovalRequested(req) = e {
        let _ = run.handle.submit(Op::Approval {
            call_id: req.call_id.clone(),
            decision: ApprovalDecision::Reject,
        });
    }
    out.event(e);
}

/// Writes one turn's end with its usage and `-o FILE`; the exit code.
fn finish_turn(args: &ExecOptions, out: &mut Output, ended: &TurnEnded, usage: TokenUsage) -> i32 {
    match out {
        Output::Json(w) => w.turn_ended(&ended.reason, usage),
        Output::Human(w) => w.turn_ended(
            &ended.reason,
            usage.input_tokens.saturating_sub(usage.cached_input_tokens) + usage.output_tokens,
        ),
    }
    let completed = matches!(
        ended.reason,
        TurnEndReason::Completed | TurnEndReason::MaxTokens | TurnEndReason::Refusal
    );
    let last = out.last_message();
    if completed && let Some(path) = &args.output_last_message {
        if last.is_none() {
            eprintln!("warning: no final message to write to {}", path.display());
        }
        if let Err(e) = std::fs::write(path, last.unwrap_or_default()) {
            eprintln!("warning: could not write {}: {e}", path.display());
        }
    }
    if completed { 0 } else { 1 }
}

/// The final answer on stdout (human mode), or the patch with `--diff`.
fn print_result(json: bool, diff: Option<String>, last: Option<String>, completed: bool) {
    if json {
        if let Some(d) = &diff {
            eprint!("{d}");
        }
        return;
    }
    match &diff {
        // With --diff, stdout carries only the patch so it can be piped to `git apply`.
        Some(d) => {
            print!("{d}");
            if let Some(m) = &last {
                eprintln!("{}", interpreter_face::terminal_text::sanitize(m));
            }
        }
        None => {
            let both_tty = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
            if let Some(m) = last.as_ref().filter(|_| completed && !both_tty) {
                // Stdout may be a terminal too (stderr redirected): text only.
                println!("{}", interpreter_face::terminal_text::sanitize(m));
            }
        }
    }
}

/// The patch of everything that changed in the work tree since `snapshot` under the cwd.
/// Changes that cannot be a text patch, or lie outside the cwd, are named on stderr.
async fn tree_diff(view: &SessionView, snapshot: Snapshot) -> String {
    let found = tokio::task::spawn_blocking(move || snapshot.changes())
        .await
        .map_err(std::io::Error::other)
        .and_then(|r| r);
    let found = match found {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "warning: could not read the work tree's changes ({e}); the patch holds the file tools' edits only"
            );
            return view.diff.clone().unwrap_or_default();
        }
    };
    for (path, why) in &found.opaque {
        eprintln!(
            "note: {} changed but is not in the patch ({why})",
            path.display()
        );
    }
    let cwd = std::fs::canonicalize(&view.cwd).unwrap_or_else(|_| view.cwd.clone());
    let mut out = String::new();
    for c in &found.changes {
        match c.path.strip_prefix(&cwd) {
            Ok(rel) => out.push_str(&interpreter_core::workspace::diff::git_unified_diff(
                &rel.to_string_lossy(),
                c.old_text.as_deref(),
                c.new_text.as_deref(),
            )),
            Err(_) => eprintln!(
                "note: {} changed outside {} and is not in the patch",
                c.path.display(),
                cwd.display()
            ),
        }
    }
    out
}

/// The prompt from argv, stdin, or both (stdin appended as a `<stdin>` block).
fn read_prompt(positional: Option<String>) -> Result<String, String> {
    let stdin_is_tty = std::io::stdin().is_terminal();
    let read_stdin = || -> Result<String, String> {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("reading the prompt from stdin: {e}"))?;
        decode_prompt(&bytes)
    };
    match positional {
        Some(p) if p == "-" => read_stdin(),
        Some(p) if !stdin_is_tty => {
            let extra = read_stdin().unwrap_or_default();
            if extra.trim().is_empty() {
                Ok(p)
            } else {
                Ok(format!("{p}\n\n<stdin>\n{}\n</stdin>", extra.trim_end()))
            }
        }
        Some(p) => Ok(p),
        None if stdin_is_tty => {
            Err("No prompt provided. Pass it as an argument or on stdin.".into())
        }
        None => {
            eprintln!("Reading prompt from stdin...");
            read_stdin()
        }
    }
}

/// UTF-8 (BOM stripped) or UTF-16 with a BOM.
fn decode_prompt(bytes: &[u8]) -> Result<String, String> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8(rest.to_vec())
            .map_err(|_| "the prompt is not valid UTF-8".into());
    }
    let utf16 = |rest: &[u8], le: bool| -> Result<String, String> {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16(&units).map_err(|_| "the prompt is not valid UTF-16".into())
    };
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, true);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, false);
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| "the prompt is not valid UTF-8".into())
}

/// Leading `/harness X` and `/model X` lines are session commands, not model input.
fn split_session_commands(prompt: &str) -> (Vec<(String, String)>, String) {
    let mut commands = Vec::new();
    let mut rest = prompt;
    loop {
        let trimmed = rest.trim_start_matches(['\n', '\r']);
        let (line, after) = match trimmed.split_once('\n') {
            Some((l, a)) => (l, a),
            None => (trimmed, ""),
        };
        let Some((name, arg)) = slash::split(line) else {
            break;
        };
        if !matches!(name, "harness" | "model") || arg.is_empty() {
            break;
        }
        commands.push((name.to_string(), arg.to_string()));
        rest = after;
    }
    (commands, rest.trim_start_matches(['\n', '\r']).to_string())
}

fn spawn_signal_handler(handle: SessionHandle) {
    tokio::spawn(async move {
        let Ok(mut stops) = interpreter_core::platform::StopSignals::new() else {
            return;
        };
        stops.recv().await;
        let _ = handle.submit(Op::Interrupt);
    });
}

/// `interpreter debug prompt`: the exact first request body, on stdout.
pub async fn debug_prompt(
    overrides: Overrides,
    harness: Option<String>,
    cd: Option<PathBuf>,
    prompt: Option<String>,
) -> i32 {
    let mut o = overrides;
    o.harness = harness;
    let mut config = match Config::load(&o) {
        Ok(c) => c,
        Err(e) => return fail(EXIT_CONFIG, &format!("{e:#}")),
    };
    let cwd = cd.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    // Printing a body needs no key: use a placeholder so a missing key is not an error here.
    if config.provider.resolve_api_key().is_err() {
        config.provider.api_key = Some("unset".into());
    }
    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions {
        persist: false,
        ..SessionOptions::new(config, cwd, events)
    };
    let handle = match Sessions::open(opts, SessionStart::New { id: None }).await {
        Ok(h) => h,
        Err(e) => return fail(1, &e.to_string()),
    };
    let _ = handle
        .submit(Op::PreviewRequest {
            prompt: prompt.unwrap_or_else(|| "hello".into()),
        })
        .done()
        .await;
    let mut harness = String::new();
    while let Ok(e) = rx.try_recv() {
        match e {
            Event::SessionConfigured(c) => harness = c.settings.harness,
            Event::RequestPreview {
                body,
                prompt_tokens,
                tool_tokens,
            } => {
                eprintln!(
                    "harness {harness}: system prompt and initial context ≈ {prompt_tokens} tokens, tool schemas ≈ {tool_tokens} tokens, whole body ≈ {} tokens (4 bytes per token)",
                    interpreter_core::tools::truncate::approx_tokens(&body.to_string())
                );
                return match serde_json::to_string_pretty(&body) {
                    Ok(t) => {
                        println!("{t}");
                        0
                    }
                    Err(e) => fail(1, &e.to_string()),
                };
            }
            _ => {}
        }
    }
    fail(1, "the session did not produce a request")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_lines_are_commands_only_when_known() {
        let (c, p) = split_session_commands("/harness kimi-code\n/model k3\nfix the bug\n");
        assert_eq!(
            c,
            vec![
                ("harness".into(), "kimi-code".into()),
                ("model".into(), "k3".into())
            ]
        );
        assert_eq!(p, "fix the bug\n");
        let (c, p) = split_session_commands("/usr/bin is broken\n");
        assert!(c.is_empty());
        assert_eq!(p, "/usr/bin is broken\n");
    }

    #[test]
    fn bom_and_utf16() {
        assert_eq!(decode_prompt(b"\xEF\xBB\xBFhi").unwrap(), "hi");
        assert_eq!(decode_prompt(b"\xFF\xFEh\0i\0").unwrap(), "hi");
    }
}
