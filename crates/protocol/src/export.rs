//! A stored session as an export shows it (`interpreter export`, `/export`): the core reads
//! the log into a [`SessionExport`], secrets redacted, and the faces render it as Markdown or
//! HTML.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use crate::{Plan, TokenUsage, ToolKind};

/// One stored session, ready to render.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionExport {
    /// The session's id.
    pub id: String,
    /// Its title, when it has one.
    pub title: Option<String>,
    /// The folder it started in.
    pub cwd: PathBuf,
    /// When it was created, RFC 3339 in UTC.
    pub created_at: String,
    /// When its log last changed, RFC 3339 in UTC.
    pub updated_at: Option<String>,
    /// The provider and model it last used.
    pub provider: String,
    /// The model it last used.
    pub model: String,
    /// The harness it last used.
    pub harness: String,
    /// What happened, in order.
    pub entries: Vec<ExportEntry>,
    /// The tokens of every turn the log recorded, undone ones included.
    pub total_usage: TokenUsage,
}

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExportEntry {
    /// A prompt the user typed.
    Prompt {
        /// The text.
        text: String,
        /// Attached images, as data URLs.
        images: Vec<String>,
    },
    /// The model's reasoning for one response.
    Reasoning {
        /// The text.
        text: String,
    },
    /// A visible message of the model.
    Answer {
        /// The text.
        text: String,
    },
    /// A tool call and its result.
    ToolCall(Box<ExportedCall>),
    /// A plan the model set.
    Plan(Plan),
    /// A turn ended; its tokens, when the log recorded them.
    TurnEnded {
        /// The turn's tokens.
        usage: Option<TokenUsage>,
    },
    /// The history before this point was summarized for the model (compaction).
    Compacted,
}

/// A tool call as the user saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedCall {
    /// The tool's name as the model called it.
    pub tool: String,
    /// What the tool does.
    pub kind: ToolKind,
    /// The short title the faces show (e.g. "Read src/main.rs").
    pub title: String,
    /// The command line, for execute tools.
    pub command: Option<String>,
    /// The arguments as the model sent them.
    pub input: serde_json::Value,
    /// The result as the model read it.
    pub output: String,
    /// The call failed.
    pub failed: bool,
    /// A unified diff per file the call changed, paths relative to the session's folder.
    pub diffs: Vec<String>,
}
