//! A tool is one value: what the model is told (its spec), how a call is shown to the user
//! (kind, title, locations) and how it runs. A harness is a prompt builder plus a table of
//! these; the session looks calls up by name in one place.

use futures::future::BoxFuture;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

use super::{CallDescription, ToolContext, ToolOutcome};
use crate::model::ToolSpec;
use crate::workspace::{PathError, Workspace};

/// One tool of a session.
pub(crate) trait Tool: Send + Sync {
    /// Name, description and argument schema, as the model sees them.
    fn spec(&self) -> &ToolSpec;
    /// How a call shows up before it runs (begin event, approval prompt, replay).
    fn describe(&self, args: &Value, ws: &Workspace) -> CallDescription;
    /// Runs a call whose arguments are a JSON object.
    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome>;
    /// Whether this tool starts a subagent (left out of the subagent's own table).
    fn starts_subagent(&self) -> bool {
        false
    }
    /// Whether a subagent gets this tool: not those that start subagents, nor those that
    /// change the session (plan mode).
    fn for_subagents(&self) -> bool {
        !self.starts_subagent()
    }
}

/// Errors the model reads that many tools share. A harness words them its own way (Kimi Code
/// prefixes `ERROR: `, Codex's tools do not) through its [`Wording`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    /// A path the workspace refused.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A file that could not be read.
    #[error("could not read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// A message in the tool's own words.
    #[error("{0}")]
    Message(String),
    /// Refused by the policy or the user: already the outcome to report, worded as is.
    #[error("{}", .0.model_output)]
    Refused(Box<ToolOutcome>),
}

impl ToolError {
    pub(crate) fn message(text: impl Into<String>) -> ToolError {
        ToolError::Message(text.into())
    }
}

impl From<ToolOutcome> for ToolError {
    fn from(o: ToolOutcome) -> ToolError {
        ToolError::Refused(Box::new(o))
    }
}

/// What a tool body returns: the outcome, or a shared error for the harness to word.
pub(crate) type ToolResult = Result<ToolOutcome, ToolError>;

/// How a harness turns a [`ToolError`] into what the model reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wording {
    /// Put before every error message (`"ERROR: "` for Kimi Code, nothing for Codex).
    pub prefix: &'static str,
    /// Tags around the text of every failed call (Claude Code's `<tool_use_error>`).
    pub wrap: Option<(&'static str, &'static str)>,
}

impl Wording {
    pub(crate) fn outcome(self, r: ToolResult) -> ToolOutcome {
        let mut o = match r {
            Ok(o) => o,
            Err(ToolError::Refused(o)) => *o,
            Err(e) => ToolOutcome::error(format!("{}{e}", self.prefix)),
        };
        if let Some((open, close)) = self.wrap
            && o.is_error()
            && !o.model_output.starts_with(open)
        {
            o.model_output = format!("{open}{}{close}", o.model_output);
        }
        o
    }
}

/// How a tool describes a call to the user.
pub(crate) type DescribeFn = fn(&Value, &Workspace) -> CallDescription;
pub(crate) type RunFn = for<'a> fn(Value, &'a ToolContext) -> BoxFuture<'a, ToolResult>;

/// A tool made of plain functions: what most harness tools are.
pub(crate) struct FnTool {
    spec: ToolSpec,
    describe: DescribeFn,
    run: RunFn,
    wording: Wording,
    subagent: bool,
}

impl FnTool {
    pub(crate) fn plain(
        wording: Wording,
        spec: ToolSpec,
        describe: DescribeFn,
        run: RunFn,
    ) -> Arc<dyn Tool> {
        Arc::new(FnTool {
            spec,
            describe,
            run,
            wording,
            subagent: false,
        })
    }

    /// A tool whose run starts a subagent (`ctx.subagents`).
    pub(crate) fn subagent(
        wording: Wording,
        spec: ToolSpec,
        describe: DescribeFn,
        run: RunFn,
    ) -> Arc<dyn Tool> {
        Arc::new(FnTool {
            spec,
            describe,
            run,
            wording,
            subagent: true,
        })
    }
}

impl Tool for FnTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &Value, ws: &Workspace) -> CallDescription {
        (self.describe)(args, ws)
    }
    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { self.wording.outcome((self.run)(args, ctx).await) })
    }
    fn starts_subagent(&self) -> bool {
        self.subagent
    }
}

/// The tools a session offers, in the order the model sees them.
#[derive(Clone, Default)]
pub(crate) struct ToolTable {
    tools: Vec<Arc<dyn Tool>>,
    /// The specs in order, as every request sends them.
    specs: Vec<ToolSpec>,
    /// Tools that run when called but are not in the request: names the original agent
    /// answers without listing them (zcode's Glob and Grep).
    hidden: Vec<Arc<dyn Tool>>,
}

impl ToolTable {
    pub(crate) fn new(tools: Vec<Arc<dyn Tool>>) -> ToolTable {
        let specs = tools.iter().map(|t| t.spec().clone()).collect();
        ToolTable {
            tools,
            specs,
            hidden: Vec::new(),
        }
    }

    /// This table with `hidden` answering calls by name without being advertised.
    pub(crate) fn with_hidden(mut self, hidden: Vec<Arc<dyn Tool>>) -> ToolTable {
        self.hidden = hidden;
        self
    }

    /// This table with `more` answering calls too, unadvertised.
    pub(crate) fn also_hidden(
        mut self,
        more: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> ToolTable {
        self.hidden.extend(more);
        self
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .iter()
            .chain(&self.hidden)
            .find(|t| t.spec().name == name)
    }

    pub(crate) fn spec_slice(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// Every name a call can use: the listed tools' and the hidden ones'.
    pub(crate) fn all_names(&self) -> impl Iterator<Item = &str> {
        self.tools
            .iter()
            .chain(&self.hidden)
            .map(|t| t.spec().name.as_str())
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.spec().name.as_str()).collect()
    }

    /// This table followed by `more` (tools from outside the harness come last, so the
    /// cached prompt prefix stays the same when they change).
    pub(crate) fn extended(&self, more: impl IntoIterator<Item = Arc<dyn Tool>>) -> ToolTable {
        let mut tools = self.tools.clone();
        tools.extend(more);
        ToolTable::new(tools).with_hidden(self.hidden.clone())
    }

    /// This table with only the tools `keep` accepts (listed and hidden alike).
    pub(crate) fn filtered(&self, keep: impl Fn(&dyn Tool) -> bool) -> ToolTable {
        let pick = |list: &[Arc<dyn Tool>]| -> Vec<Arc<dyn Tool>> {
            list.iter().filter(|t| keep(t.as_ref())).cloned().collect()
        };
        ToolTable::new(pick(&self.tools)).with_hidden(pick(&self.hidden))
    }

    /// This table with the specs of the tools that start subagents rewritten by `f` (their
    /// type list names the custom agents).
    pub(crate) fn respecified(&self, f: impl Fn(&ToolSpec) -> ToolSpec) -> ToolTable {
        let tools = self
            .tools
            .iter()
            .map(|t| match t.starts_subagent() {
                true => Arc::new(Respecified {
                    spec: f(t.spec()),
                    inner: t.clone(),
                }) as Arc<dyn Tool>,
                false => t.clone(),
            })
            .collect();
        ToolTable::new(tools).with_hidden(self.hidden.clone())
    }

    /// The table a subagent gets: the tools made for subagents (see [`Tool::for_subagents`]).
    pub(crate) fn for_subagent(&self) -> ToolTable {
        let keep = |list: &[Arc<dyn Tool>]| -> Vec<Arc<dyn Tool>> {
            list.iter().filter(|t| t.for_subagents()).cloned().collect()
        };
        ToolTable::new(keep(&self.tools)).with_hidden(keep(&self.hidden))
    }
}

/// A tool under another spec (a subagent tool whose type list grew).
struct Respecified {
    spec: ToolSpec,
    inner: Arc<dyn Tool>,
}

impl Tool for Respecified {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn describe(&self, args: &Value, ws: &Workspace) -> CallDescription {
        self.inner.describe(args, ws)
    }
    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        self.inner.run(args, ctx)
    }
    fn starts_subagent(&self) -> bool {
        self.inner.starts_subagent()
    }
    fn for_subagents(&self) -> bool {
        self.inner.for_subagents()
    }
}

/// Builds a spec (the shape every harness writes its tools in).
pub(crate) fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
    }
}

/// A string argument, when the call gave one.
pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// The parameters of a tool: an object with these `properties`, of which `required` must be
/// given.
pub(crate) fn object(properties: Value, required: &[&str]) -> Value {
    serde_json::json!({"type": "object", "properties": properties, "required": required})
}

/// As [`object`], and no other properties (`additionalProperties: false`).
pub(crate) fn closed_object(properties: Value, required: &[&str]) -> Value {
    serde_json::json!({"type": "object", "properties": properties, "required": required,
           "additionalProperties": false})
}

/// A string argument, or "" when missing (for titles).
pub(crate) fn str_or_empty(args: &Value, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The workspace path an argument names, when it resolves (for locations).
pub(crate) fn location(ws: &Workspace, args: &Value, key: &str) -> Vec<PathBuf> {
    ws.resolve(&str_or_empty(args, key))
        .ok()
        .into_iter()
        .collect()
}
