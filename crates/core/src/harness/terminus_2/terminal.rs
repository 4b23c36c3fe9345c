//! terminus-2's one tool, `terminal`: a reply's keystrokes typed into a tmux pane that lives
//! as long as the session (or until the harness changes), then what the pane shows. The model
//! never calls it on the wire: the harness makes its calls from the reply's JSON.

use futures::future::BoxFuture;
use interpreter_protocol::ToolKind;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

use super::parse::Keys;
use super::{NAME, prompt};
use crate::model::ToolSpec;
use crate::tools::table::{Tool, ToolError, ToolResult, Wording, spec};
use crate::tools::{CallDescription, ToolContext, ToolOutcome};
use crate::workspace::Workspace;

/// Observations and errors are shown as they are.
const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};

/// A call's arguments: the reply's commands, whether it said the task is complete, and
/// whether that was already asked (then the task ends after the commands).
#[derive(Debug, Default, Deserialize)]
pub(super) struct Args {
    #[serde(default)]
    pub commands: Vec<Keys>,
    #[serde(default)]
    pub task_complete: bool,
    #[serde(default)]
    pub confirmed: bool,
}

impl Args {
    pub(super) fn of(v: &Value) -> Args {
        serde_json::from_value(v.clone()).unwrap_or_default()
    }
}

/// The pane, shared by the tool tables the harness builds (they are rebuilt when the goal or
/// the MCP tools change), so the shell lives as long as the harness does.
#[derive(Default)]
pub(super) struct Shared {
    #[cfg(unix)]
    pane: tokio::sync::Mutex<Option<super::tmux::Pane>>,
}

pub(super) struct Terminal {
    spec: ToolSpec,
    #[cfg_attr(not(unix), allow(dead_code))]
    shared: Arc<Shared>,
}

impl Terminal {
    pub(super) fn new(shared: Arc<Shared>) -> Terminal {
        Terminal {
            spec: spec(
                NAME,
                "Type keystrokes into the terminal and read what it shows.",
                json!({"type": "object", "properties": {
                    "commands": {"type": "array", "items": {"type": "object", "properties": {
                        "keystrokes": {"type": "string"},
                        "duration": {"type": "number"}
                    }, "required": ["keystrokes"]}},
                    "task_complete": {"type": "boolean"},
                    "confirmed": {"type": "boolean"}
                }, "required": ["commands"]}),
            ),
            shared,
        }
    }

    async fn call(&self, ctx: &ToolContext, args: &Value) -> ToolResult {
        let args = Args::of(args);
        let typed = typed(&args.commands);
        // Keystrokes are commands: the policy is asked about them as about any command.
        if !typed.trim().is_empty() {
            ctx.authorize(
                ctx.command_intent(&typed),
                NAME,
                ToolKind::Execute,
                &typed,
                vec![],
            )
            .await?;
        }
        let observation = self.drive(ctx, &args.commands).await?;
        Ok(ToolOutcome::ok(if args.task_complete && !args.confirmed {
            prompt::confirm(&observation)
        } else {
            observation
        }))
    }

    #[cfg(unix)]
    async fn drive(&self, ctx: &ToolContext, commands: &[Keys]) -> Result<String, ToolError> {
        let mut slot = self.shared.pane.lock().await;
        let pane = super::tmux::Pane::ensure(&mut slot, ctx).await?;
        pane.run(commands, &ctx.cancel).await
    }

    #[cfg(not(unix))]
    async fn drive(&self, _ctx: &ToolContext, _commands: &[Keys]) -> Result<String, ToolError> {
        Err(ToolError::message(
            "terminus-2 needs tmux, which does not run on this system: use another harness here.",
        ))
    }
}

impl Tool for Terminal {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &Value, _ws: &Workspace) -> CallDescription {
        let typed = typed(&Args::of(args).commands);
        CallDescription {
            kind: ToolKind::Execute,
            title: match typed.trim() {
                "" => "Wait for the terminal".to_string(),
                t => t.to_string(),
            },
            locations: vec![],
            command: Some(typed),
        }
    }
    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { WORDING.outcome(self.call(ctx, &args).await) })
    }
}

/// The keystrokes of a batch as one text, for approval and display.
fn typed(commands: &[Keys]) -> String {
    let mut text = String::new();
    for c in commands {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&c.keystrokes);
    }
    text
}
