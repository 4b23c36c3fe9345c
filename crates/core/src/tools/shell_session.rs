//! One shell that lives across calls (little-coder's `ShellSession`): `cd`, variables and
//! functions persist from one command to the next. The shell is a quiet background task,
//! started confined like any command and stopped with the session; each command is asked
//! about on its own, then fed to it with a marker line after it that carries the exit code
//! and the working folder.

use std::time::{Duration, Instant};

use interpreter_protocol::ToolKind;

use crate::tools::ToolContext;
use crate::tools::background::Start;
use crate::tools::table::ToolError;

/// The shell, without the user's profile: its rc files could print, prompt or wait.
const SHELL: &str = "bash --noprofile --norc";
/// The shell itself is stopped after this, whatever it runs.
const LIFETIME: Duration = Duration::from_secs(24 * 3600);
const POLL: Duration = Duration::from_millis(25);

/// What one command did.
#[derive(Debug)]
pub(crate) struct ShellRun {
    pub(crate) output: String,
    /// None when it did not end (timed out) or the shell exited under it.
    pub(crate) exit_code: Option<i32>,
    /// The shell's folder after it.
    pub(crate) cwd: String,
    pub(crate) timed_out: bool,
}

/// The session's shell: the task that runs it, once started.
#[derive(Default)]
pub(crate) struct ShellSession {
    /// Held for a whole command: one command at a time.
    task: tokio::sync::Mutex<Option<String>>,
}

impl ShellSession {
    /// Asks the policy about `command` as tool `tool`, then runs it in the shell (started
    /// first when there is none). Past `timeout` the shell is stopped: the next command gets
    /// a fresh one, in the workspace folder.
    pub(crate) async fn run(
        &self,
        ctx: &ToolContext,
        tool: &str,
        command: &str,
        timeout: Duration,
    ) -> Result<ShellRun, ToolError> {
        ctx.authorize(
            ctx.command_intent(command),
            tool,
            ToolKind::Execute,
            command,
            vec![],
        )
        .await?;
        self.feed(ctx, tool, command, timeout).await
    }

    /// The shell's folder, without starting one: the workspace folder when none runs.
    pub(crate) async fn cwd(&self, ctx: &ToolContext, tool: &str) -> Result<String, ToolError> {
        if self.running(ctx).await.is_none() {
            return Ok(ctx.workspace.cwd().display().to_string());
        }
        Ok(self
            .feed(ctx, tool, "true", Duration::from_secs(10))
            .await?
            .cwd)
    }

    /// Stops the shell; the next command starts a fresh one. Whether one was running.
    pub(crate) async fn reset(&self, ctx: &ToolContext) -> bool {
        let mut slot = self.task.lock().await;
        let Some(id) = slot.take() else {
            return false;
        };
        ctx.tasks.stop(&id).is_ok()
    }

    async fn running(&self, ctx: &ToolContext) -> Option<String> {
        let slot = self.task.lock().await;
        slot.clone()
            .filter(|id| ctx.tasks.get(id).is_some_and(|t| t.running()))
    }

    async fn feed(
        &self,
        ctx: &ToolContext,
        tool: &str,
        command: &str,
        timeout: Duration,
    ) -> Result<ShellRun, ToolError> {
        let mut slot = self.task.lock().await;
        let live = slot
            .clone()
            .filter(|id| ctx.tasks.get(id).is_some_and(|t| t.running()));
        let id = match live {
            Some(id) => id,
            None => {
                let cwd = ctx.workspace.cwd().to_path_buf();
                let t = ctx.spawn_task(&Start {
                    tool,
                    command: SHELL,
                    description: "shell session",
                    cwd: &cwd,
                    timeout: LIFETIME,
                    interactive: true,
                    tty: false,
                    quiet: true,
                })?;
                *slot = Some(t.id.clone());
                t.id
            }
        };
        // Whatever the shell printed between commands is not this command's.
        let _ = ctx.tasks.read_new(&id);
        let marker = format!("__interpreter_shell_{}__", uuid::Uuid::new_v4().simple());
        let script = format!(
            "{{\n{command}\n}} </dev/null 2>&1\nprintf '\\n{marker} %s %s\\n' \"$?\" \"$PWD\"\n"
        );
        ctx.tasks
            .send_input(&id, script.as_bytes())
            .map_err(ToolError::message)?;
        let deadline = Instant::now() + timeout;
        let mut seen = String::new();
        loop {
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = ctx.cancel.cancelled() => {
                    let _ = ctx.tasks.stop(&id);
                    *slot = None;
                    return Err(ToolError::message("The command was cancelled; the shell session was reset."));
                }
            }
            let Some((record, new)) = ctx.tasks.read_new(&id) else {
                *slot = None;
                return Err(ToolError::message("The shell session is gone."));
            };
            seen.push_str(&new);
            if let Some(run) = finished(&seen, &marker) {
                return Ok(run);
            }
            if !record.running() {
                *slot = None;
                return Ok(ShellRun {
                    output: seen,
                    exit_code: record.exit_code,
                    cwd: ctx.workspace.cwd().display().to_string(),
                    timed_out: false,
                });
            }
            if Instant::now() >= deadline {
                let _ = ctx.tasks.stop(&id);
                *slot = None;
                return Ok(ShellRun {
                    output: seen,
                    exit_code: None,
                    cwd: ctx.workspace.cwd().display().to_string(),
                    timed_out: true,
                });
            }
        }
    }
}

/// The command's run, once its marker line has come.
fn finished(seen: &str, marker: &str) -> Option<ShellRun> {
    let at = seen.find(marker)?;
    let rest = &seen[at + marker.len()..];
    let line = rest.split('\n').next()?;
    if !rest.contains('\n') {
        return None;
    }
    let (code, cwd) = line.trim_start().split_once(' ')?;
    let output = seen[..at].strip_suffix('\n').unwrap_or(&seen[..at]);
    Some(ShellRun {
        output: output.to_string(),
        exit_code: code.parse().ok(),
        cwd: cwd.trim_end_matches('\r').to_string(),
        timed_out: false,
    })
}

#[cfg(test)]
mod tests {
    use super::finished;

    #[test]
    fn the_marker_line_gives_the_code_and_folder_once_it_is_whole() {
        let m = "__m__";
        assert!(finished("out\n__m__ 0 /tm", m).is_none());
        let r = finished("out\nmore\n\n__m__ 3 /tmp/a b\n", m).unwrap();
        assert_eq!(r.output, "out\nmore\n");
        assert_eq!(r.exit_code, Some(3));
        assert_eq!(r.cwd, "/tmp/a b");
        let empty = finished("\n__m__ 0 /w\n", m).unwrap();
        assert_eq!(empty.output, "");
    }
}
