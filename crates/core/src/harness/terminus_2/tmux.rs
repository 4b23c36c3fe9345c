//! The tmux pane behind terminus-2's terminal. The server runs as a background task of the
//! session (`tmux -D`: in the foreground, so it stays in the task's process tree): it is
//! confined by the session's policy like any command, so the shell in its pane and all it
//! starts are too, and it is killed when the session ends or the tool is dropped. The agent
//! drives it over a socket in a private temporary folder.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use super::parse::Keys;
use super::prompt::{self, prompt_line};
use super::{HEIGHT, NAME};
use crate::config::SandboxMode;
use crate::tools::ToolContext;
use crate::tools::background::{BackgroundTasks, Start};
use crate::tools::table::ToolError;

const SESSION: &str = "terminus";
const WIDTH: u32 = 160;
const HISTORY_LINES: u32 = 50_000;
/// A command waits at most this long, whatever its `duration` says.
const MAX_WAIT: f64 = 60.0;
const DEFAULT_WAIT: f64 = 1.0;
/// A batch takes at most this long in all.
const MAX_BATCH: f64 = 180.0;
/// One tmux client command (they only talk to the server).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);
/// The server task's own timeout: in practice, the session's length.
const SERVER_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
const NO_TMUX: &str = "terminus-2 needs tmux, and no `tmux` was found on PATH. Install tmux (for example with the system's package manager) or pick another harness.";

const READ_ONLY_HINT: &str = "\nIn read-only mode the sandbox lets the terminal create nothing, not even its tmux socket: terminus-2 needs a mode that allows writes (workspace-write).";

/// A running server with its pane, and the buffer as the model last saw it.
pub(super) struct Pane {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    task: String,
    tasks: Weak<BackgroundTasks>,
    previous: String,
}

impl Drop for Pane {
    fn drop(&mut self) {
        if let Some(tasks) = self.tasks.upgrade() {
            let _ = tasks.stop(&self.task);
        }
    }
}

impl Pane {
    /// The pane in `slot`, started (or restarted, if its server or shell ended) as needed.
    pub(super) async fn ensure<'a>(
        slot: &'a mut Option<Pane>,
        ctx: &ToolContext,
    ) -> Result<&'a mut Pane, ToolError> {
        if slot.as_ref().is_some_and(|p| !p.server_running(ctx)) {
            *slot = None;
        }
        match slot {
            Some(pane) => {
                // The shell exited (C-d, `exit`): a fresh one on the same server.
                if client(&pane.socket, &["has-session", "-t", SESSION], None)
                    .await
                    .is_err()
                {
                    pane.open(ctx.workspace.cwd()).await?;
                }
            }
            None => *slot = Some(Pane::start(ctx).await?),
        }
        slot.as_mut()
            .ok_or_else(|| ToolError::message("the terminal did not start"))
    }

    async fn start(ctx: &ToolContext) -> Result<Pane, ToolError> {
        if !on_path("tmux") {
            return Err(ToolError::message(NO_TMUX));
        }
        let dir = tempfile::Builder::new()
            .prefix("interpreter-terminus-")
            .tempdir()
            .map_err(|e| ToolError::message(format!("could not make the tmux folder: {e}")))?;
        let socket = dir.path().join("tmux.sock");
        let command = format!(
            "exec tmux -D -S {} -f /dev/null",
            shlex::try_quote(&socket.to_string_lossy())
                .map_err(|_| ToolError::message("the tmux socket path cannot be quoted"))?
        );
        let record = ctx.spawn_task(&Start {
            tool: NAME,
            command: &command,
            description: "terminus-2's terminal (tmux server)",
            cwd: ctx.workspace.cwd(),
            timeout: SERVER_LIFETIME,
            interactive: false,
            tty: false,
            quiet: true,
        })?;
        let mut pane = Pane {
            _dir: dir,
            socket,
            task: record.id,
            tasks: Arc::downgrade(&ctx.tasks),
            previous: String::new(),
        };
        pane.wait_for_server(ctx).await?;
        pane.open(ctx.workspace.cwd()).await?;
        Ok(pane)
    }

    fn server_running(&self, ctx: &ToolContext) -> bool {
        ctx.tasks.get(&self.task).is_some_and(|t| t.running())
    }

    async fn wait_for_server(&self, ctx: &ToolContext) -> Result<(), ToolError> {
        for _ in 0..100 {
            if self.socket.exists() {
                return Ok(());
            }
            if let Some(t) = ctx.tasks.get(&self.task)
                && !t.running()
            {
                // A confined read-only server may not even make its socket.
                let hint = match ctx.policy.sandbox == SandboxMode::ReadOnly
                    && ctx.policy.confines_commands()
                {
                    true => READ_ONLY_HINT,
                    false => "",
                };
                return Err(ToolError::message(format!(
                    "the tmux server could not start (it {}): {}{hint}",
                    t.outcome(),
                    t.tail(2_000).trim()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(ToolError::message(
            "the tmux server did not open its socket within 5 seconds",
        ))
    }

    /// A new window of [`WIDTH`]×[`HEIGHT`] running a bare interactive bash in `cwd`.
    async fn open(&mut self, cwd: &Path) -> Result<(), ToolError> {
        let (ps1, _) = prompt_line(cwd);
        let shell = format!(
            "env PAGER=less PS1={} bash --noprofile --norc -i",
            shlex::try_quote(&ps1).map_err(|_| ToolError::message("bad prompt"))?
        );
        let (width, height, history) = (
            WIDTH.to_string(),
            HEIGHT.to_string(),
            HISTORY_LINES.to_string(),
        );
        let cwd = cwd.to_string_lossy();
        #[rustfmt::skip]
        let args = [
            "set-option", "-g", "history-limit", &history, ";",
            "set-option", "-g", "status", "off", ";",
            "new-session", "-d", "-s", SESSION, "-x", &width, "-y", &height, "-c", &cwd, &shell,
        ];
        client(&self.socket, &args, None).await?;
        // The shell draws its first prompt: that screen is the one the model was shown.
        for _ in 0..50 {
            if !self.capture(false).await?.trim().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.previous = self.capture(true).await?;
        Ok(())
    }

    /// Types `commands`, waiting after each as it asks, then reads the terminal.
    pub(super) async fn run(
        &mut self,
        commands: &[Keys],
        cancel: &CancellationToken,
    ) -> Result<String, ToolError> {
        let budget = batch_budget(commands);
        let typing = async {
            for c in commands {
                self.send(&c.keystrokes).await?;
                let wait = c.duration.unwrap_or(DEFAULT_WAIT).clamp(0.0, MAX_WAIT);
                tokio::time::sleep(Duration::from_secs_f64(wait)).await;
            }
            Ok::<(), ToolError>(())
        };
        let note = tokio::select! {
            r = tokio::time::timeout(Duration::from_secs_f64(budget), typing) => match r {
                Ok(r) => r.map(|()| None)?,
                Err(_) => Some(format!(
                    "[TIMEOUT] The commands took more than {budget:.0} seconds in all; those not yet sent were skipped.\n\n"
                )),
            },
            () = cancel.cancelled() => Some("[INTERRUPTED] The user stopped the commands.\n\n".to_string()),
        };
        let observation = prompt::limit_output(&self.observe().await?);
        Ok(format!("{}{observation}", note.unwrap_or_default()))
    }

    /// Plain text is pasted (newlines become Enter); a key name alone (`C-c`) is pressed.
    async fn send(&self, keys: &str) -> Result<(), ToolError> {
        if keys.is_empty() {
            return Ok(());
        }
        if is_key_name(keys) {
            client(&self.socket, &["send-keys", "-t", SESSION, keys], None).await?;
            return Ok(());
        }
        client(
            &self.socket,
            &["load-buffer", "-b", SESSION, "-"],
            Some(keys),
        )
        .await?;
        client(
            &self.socket,
            &["paste-buffer", "-d", "-b", SESSION, "-t", SESSION],
            None,
        )
        .await?;
        Ok(())
    }

    async fn capture(&self, all: bool) -> Result<String, ToolError> {
        let args: &[&str] = match all {
            true => &["capture-pane", "-p", "-S", "-", "-t", SESSION],
            false => &["capture-pane", "-p", "-t", SESSION],
        };
        client(&self.socket, args, None).await
    }

    /// What is new in the buffer since the last look, or the screen when that is unclear.
    async fn observe(&mut self) -> Result<String, ToolError> {
        let current = self.capture(true).await?;
        let new = new_output(&self.previous, &current);
        let text = match new {
            Some(new) if !new.trim().is_empty() => format!("New Terminal Output:\n{new}"),
            _ => format!("Current Terminal Screen:\n{}", self.capture(false).await?),
        };
        self.previous = current;
        Ok(text)
    }
}

/// The batch's time budget: 10 s, 8 s a command and the waits asked for, 180 s at most.
fn batch_budget(commands: &[Keys]) -> f64 {
    let waits: f64 = commands
        .iter()
        .map(|c| c.duration.unwrap_or(DEFAULT_WAIT).clamp(0.0, MAX_WAIT))
        .sum();
    (10.0 + 8.0 * commands.len() as f64 + waits).min(MAX_BATCH)
}

/// The buffer from the last line the model saw (the prompt it typed at) on, when the old
/// buffer is still there to find.
fn new_output(previous: &str, current: &str) -> Option<String> {
    let previous = previous.trim();
    let at = current.find(previous)?;
    let last_line = previous.rfind('\n').map_or(0, |i| i + 1);
    Some(current[at + last_line..].to_string())
}

/// `C-c`, `M-x`, `Escape`, `Up`…: sent as the key, as tmux names it.
fn is_key_name(keys: &str) -> bool {
    const NAMED: [&str; 14] = [
        "Enter", "Escape", "Tab", "BSpace", "Space", "Up", "Down", "Left", "Right", "Home", "End",
        "PageUp", "PageDown", "DC",
    ];
    let modified = keys
        .strip_prefix("C-")
        .or_else(|| keys.strip_prefix("M-"))
        .is_some_and(|k| k.chars().count() == 1 || NAMED.contains(&k));
    modified || NAMED.contains(&keys)
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            let candidate = dir.join(program);
            std::fs::metadata(&candidate).is_ok_and(|m| m.is_file())
        })
    })
}

/// Runs `tmux -S <socket> <args>`, with `input` on its stdin; its stdout.
async fn client(socket: &Path, args: &[&str], input: Option<&str>) -> Result<String, ToolError> {
    use tokio::io::AsyncWriteExt as _;
    let fail = |e: String| ToolError::message(format!("tmux {}: {e}", args[0]));
    let mut child = tokio::process::Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(args)
        .env_remove("TMUX")
        .stdin(match input {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| fail(e.to_string()))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(text.as_bytes())
            .await
            .map_err(|e| fail(e.to_string()))?;
    }
    let out = tokio::time::timeout(CLIENT_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| fail("no answer from the server".into()))?
        .map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_output_starts_at_the_line_last_seen() {
        let before = "me@h:/w$ ls\na\nme@h:/w$\n\n\n";
        let after = "me@h:/w$ ls\na\nme@h:/w$ echo hi\nhi\nme@h:/w$\n\n";
        assert_eq!(
            new_output(before, after).as_deref(),
            Some("me@h:/w$ echo hi\nhi\nme@h:/w$\n\n")
        );
        assert_eq!(
            new_output("me@h:/w$\n", "me@h:/w$ x\n").as_deref(),
            Some("me@h:/w$ x\n")
        );
        // The old buffer scrolled out of the history: no way to tell what is new.
        assert_eq!(new_output("gone\nline", "other\n"), None);
    }

    #[test]
    fn keys_and_budgets() {
        for k in ["C-c", "C-d", "M-x", "Escape", "C-Left", "Up"] {
            assert!(is_key_name(k), "{k}");
        }
        for k in ["ls\n", "C-c\n", "echo C-c", "q", "Cat"] {
            assert!(!is_key_name(k), "{k}");
        }
        let keys = |d: Option<f64>| Keys {
            keystrokes: "x".into(),
            duration: d,
        };
        assert_eq!(batch_budget(&[]), 10.0);
        assert_eq!(batch_budget(&[keys(None), keys(Some(0.5))]), 27.5);
        assert_eq!(batch_budget(&vec![keys(Some(600.0)); 4]), 180.0);
    }
}
