//! `interpreter exec`: one non-interactive turn, driven by argv and stdin, reported as Codex
//! JSONL (`--json`) or as a human transcript on stderr with the answer on stdout.

mod human;
mod jsonl;

use anyhow::{Context, Result};
use base64::Engine;
use interpreter_protocol::{Event, InputItem, TurnEndReason};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::agent::{EventSink, Session, SessionOptions};
use crate::cli::{CommonArgs, ExecArgs, ExecSub};
use crate::config::{Config, MissingKey, Overrides};
use crate::store::SessionStore;
use crate::tools::NoApprover;
use crate::workspace::snapshot::Snapshot;
use crate::workspace::{DiskBackend, Workspace};

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
                crate::frontend::terminal_text::sanitize(&crate::frontend::waiting_text(
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

/// Prints a fatal error the way the mode expects and returns the exit code.
fn fail(json: bool, code: i32, message: &str) -> i32 {
    // In JSON mode stdout carries events only; errors before a thread exists go to stderr.
    let _ = json;
    eprintln!("Error: {}", crate::secrets::redact(message));
    code
}

pub async fn run(args: ExecArgs) -> i32 {
    match run_inner(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {}", crate::secrets::redact(&format!("{e:#}")));
            1
        }
    }
}

fn load_config(args: &ExecArgs) -> Result<Config, String> {
    let mut o: Overrides = args.common.overrides();
    o.model = args.model.clone();
    o.provider = args.provider.clone();
    o.harness = args.harness.clone();
    o.sandbox_mode = args.sandbox.clone();
    // exec never asks: Codex's default approval policy for exec is `never`.
    if !args
        .common
        .config
        .iter()
        .any(|c| c.trim_start().starts_with("approval_policy"))
    {
        o.approval_policy = Some("never".into());
    }
    if args.yolo {
        o.sandbox_mode = Some("danger-full-access".into());
        o.approval_policy = Some("never".into());
    }
    Config::load(&o).map_err(|e| format!("{e:#}"))
}

async fn run_inner(args: ExecArgs) -> Result<i32> {
    let json = args.json;
    let cwd = match &args.cd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    if !cwd.is_dir() {
        return Ok(fail(
            json,
            1,
            &format!("--cd {}: no such directory", cwd.display()),
        ));
    }
    if !args.skip_git_repo_check && !args.yolo && crate::agent::agents_md::git_root(&cwd).is_none()
    {
        return Ok(fail(
            json,
            1,
            "Not inside a trusted directory and --skip-git-repo-check was not specified.",
        ));
    }
    let config = match load_config(&args) {
        Ok(c) => c,
        Err(e) => return Ok(fail(json, EXIT_CONFIG, &e)),
    };

    let (resume_id, positional) = match &args.resume {
        Some(ExecSub::Resume {
            session_id,
            prompt,
            last,
        }) => {
            let id = if *last {
                SessionStore::new(&config.home)
                    .list(Some(&std::fs::canonicalize(&cwd).unwrap_or(cwd.clone())))
                    .first()
                    .map(|(m, _)| m.id.clone())
            } else {
                session_id.clone()
            };
            match id {
                Some(id) => (Some(id), prompt.clone()),
                None => {
                    return Ok(fail(
                        json,
                        1,
                        "no session to resume: give a session id or use --last in a directory with sessions",
                    ));
                }
            }
        }
        None => (None, args.prompt.clone()),
    };
    let raw_prompt = match read_prompt(positional) {
        Ok(p) => p,
        Err(e) => return Ok(fail(json, 1, &e)),
    };
    let (commands, prompt) = split_session_commands(&raw_prompt);
    if prompt.trim().is_empty() && commands.is_empty() {
        return Ok(fail(json, 1, "No prompt provided via stdin."));
    }
    let output_schema = match &args.output_schema {
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).map_err(|e| e.to_string()))
        {
            Ok(v) => Some(v),
            Err(e) => {
                return Ok(fail(
                    json,
                    1,
                    &format!("--output-schema {}: {e}", p.display()),
                ));
            }
        },
        None => None,
    };
    let mut input = Vec::new();
    for img in &args.images {
        match image_data_url(img) {
            Ok(url) => input.push(InputItem::Image { url }),
            Err(e) => return Ok(fail(json, 1, &e)),
        }
    }

    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions {
        config,
        cwd: cwd.clone(),
        extra_roots: args.add_dir.clone(),
        backend: Arc::new(DiskBackend),
        approver: Arc::new(NoApprover),
        events,
        persist: !args.ephemeral,
        output_schema,
    };
    let session = match &resume_id {
        Some(id) => Session::resume(opts, id),
        None => Session::create(opts),
    };
    let mut session = match session {
        Ok(s) => s,
        Err(e) => {
            let code = if e.downcast_ref::<MissingKey>().is_some() {
                EXIT_CONFIG
            } else {
                1
            };
            return Ok(fail(json, code, &format!("{e:#}")));
        }
    };
    // config.toml's [mcp_servers]; failures are warnings, shown after the header.
    let (mcp_tools, mcp_warnings) =
        crate::mcp::connect_session_servers(&session.config, Vec::new(), session.workspace().cwd())
            .await;
    if mcp_tools.is_some() {
        session.set_external_tools(mcp_tools);
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
    // Session commands (/harness, /model) before the prompt.
    for (cmd, arg) in &commands {
        let r = match cmd.as_str() {
            "harness" => session.set_harness(arg),
            "model" => {
                session.set_model(arg);
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            return Ok(fail(json, 1, &format!("/{cmd} {arg}: {e:#}")));
        }
    }
    // `/<skill> args` runs a skill.
    let prompt = session.expand_skill(&prompt).unwrap_or(prompt);
    if !prompt.trim().is_empty() {
        input.insert(
            0,
            InputItem::Text {
                text: prompt.clone(),
            },
        );
    }
    match &mut out {
        Output::Json(w) => w.thread_started(&session.id),
        Output::Human(w) => {
            let c = &session.config;
            w.header(
                &[
                    ("workdir", session.workspace().cwd().display().to_string()),
                    ("model", c.model.clone()),
                    ("provider", c.provider.id.clone()),
                    ("harness", session.harness_name().to_string()),
                    ("approval", c.approval_policy.as_str().to_string()),
                    ("sandbox", c.sandbox_mode.as_str().to_string()),
                    ("session id", session.id.clone()),
                ],
                &prompt,
            );
        }
    }
    for message in mcp_warnings {
        out.event(&Event::Warning { message });
    }
    if input.is_empty() {
        // Only session commands: nothing to ask the model.
        while let Ok(e) = rx.try_recv() {
            out.event(&e);
        }
        return Ok(0);
    }

    // With --diff in a git work tree, changes are read off the tree afterwards, so what
    // shell commands changed is in the patch too.
    let snapshot = if args.diff {
        let cwd = session.workspace().cwd().to_path_buf();
        tokio::task::spawn_blocking(move || Snapshot::take(&cwd))
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    let cancel = CancellationToken::new();
    spawn_signal_handler(cancel.clone());
    let turn = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            let ended = session.run_turn(input, cancel).await;
            (session, ended)
        }
    });
    tokio::pin!(turn);
    let (session, ended) = loop {
        tokio::select! {
            Some(e) = rx.recv() => out.event(&e),
            r = &mut turn => break r.context("the turn task failed")?,
        }
    };
    while let Ok(e) = rx.try_recv() {
        out.event(&e);
    }
    let usage = session.total_usage();
    match &mut out {
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
        if let Err(e) = std::fs::write(path, last.clone().unwrap_or_default()) {
            eprintln!("warning: could not write {}: {e}", path.display());
        }
    }
    let diff = match (args.diff, snapshot) {
        (false, _) => None,
        (true, Some(snapshot)) => Some(tree_diff(session.workspace(), snapshot).await),
        (true, None) => Some(session.workspace().unified_diff()),
    };
    if !json {
        match &diff {
            // With --diff, stdout carries only the patch so it can be piped to `git apply`.
            Some(d) => {
                print!("{d}");
                if let Some(m) = &last {
                    eprintln!("{}", crate::frontend::terminal_text::sanitize(m));
                }
            }
            None => {
                let both_tty = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
                if let Some(m) = last.as_ref().filter(|_| completed && !both_tty) {
                    // Stdout may be a terminal too (stderr redirected): text only.
                    println!("{}", crate::frontend::terminal_text::sanitize(m));
                }
            }
        }
    } else if let Some(d) = &diff {
        eprint!("{d}");
    }
    Ok(if completed { 0 } else { 1 })
}

/// The patch of everything that changed in the work tree since `snapshot` under the cwd.
/// Changes that cannot be a text patch, or lie outside the cwd, are named on stderr.
async fn tree_diff(ws: &Workspace, snapshot: Snapshot) -> String {
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
            return ws.unified_diff();
        }
    };
    for (path, why) in &found.opaque {
        eprintln!(
            "note: {} changed but is not in the patch ({why})",
            path.display()
        );
    }
    let cwd = std::fs::canonicalize(ws.cwd()).unwrap_or_else(|_| ws.cwd().to_path_buf());
    let mut out = String::new();
    for c in &found.changes {
        match c.path.strip_prefix(&cwd) {
            Ok(rel) => out.push_str(&crate::workspace::diff::git_unified_diff(
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
pub fn split_session_commands(prompt: &str) -> (Vec<(String, String)>, String) {
    let mut commands = Vec::new();
    let mut rest = prompt;
    loop {
        let trimmed = rest.trim_start_matches(['\n', '\r']);
        let (line, after) = match trimmed.split_once('\n') {
            Some((l, a)) => (l, a),
            None => (trimmed, ""),
        };
        let line = line.trim();
        let Some(cmd) = line.strip_prefix('/') else {
            break;
        };
        let mut parts = cmd.splitn(2, char::is_whitespace);
        let name = parts.next().unwrap_or("");
        let arg = parts.next().unwrap_or("").trim();
        if !matches!(name, "harness" | "model") || arg.is_empty() {
            break;
        }
        commands.push((name.to_string(), arg.to_string()));
        rest = after;
    }
    (commands, rest.trim_start_matches(['\n', '\r']).to_string())
}

fn image_data_url(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("--image {}: {e}", path.display()))?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mime = match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => {
            return Err(format!(
                "--image {}: unsupported image type (png, jpeg, gif, webp)",
                path.display()
            ));
        }
    };
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

fn spawn_signal_handler(cancel: CancellationToken) {
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        cancel.cancel();
    });
}

/// `interpreter debug prompt`: the exact first request body, on stdout.
pub async fn debug_prompt(
    common: CommonArgs,
    harness: Option<String>,
    cd: Option<PathBuf>,
    prompt: Option<String>,
) -> i32 {
    let mut o = common.overrides();
    o.harness = harness;
    let config = match Config::load(&o) {
        Ok(c) => c,
        Err(e) => return fail(false, EXIT_CONFIG, &format!("{e:#}")),
    };
    let cwd = cd.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let (events, _rx) = EventSink::new();
    // Printing a body needs no key: use a placeholder so a missing key is not an error here.
    let mut config = config;
    if config.provider.resolve_api_key().is_err() {
        config.provider.api_key = Some("unset".into());
    }
    let opts = SessionOptions {
        config,
        cwd,
        extra_roots: vec![],
        backend: Arc::new(DiskBackend),
        approver: Arc::new(NoApprover),
        events,
        persist: false,
        output_schema: None,
    };
    match Session::create(opts) {
        Ok(s) => {
            let body = s.preview_request(prompt.as_deref().unwrap_or("hello"));
            let (prompt_tokens, tool_tokens) = s.prompt_budget();
            eprintln!(
                "harness {}: system prompt and initial context ≈ {prompt_tokens} tokens, tool schemas ≈ {tool_tokens} tokens, whole body ≈ {} tokens (4 bytes per token)",
                s.harness_name(),
                crate::tools::truncate::approx_tokens(&body.to_string())
            );
            match serde_json::to_string_pretty(&body) {
                Ok(t) => {
                    println!("{t}");
                    0
                }
                Err(e) => fail(false, 1, &e.to_string()),
            }
        }
        Err(e) => fail(false, 1, &format!("{e:#}")),
    }
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
