//! What the core asks of a front end beyond approvals: questions for the user (answered with
//! [`crate::Op::Answer`]) and the editor's diagnostics for files (answered with
//! [`crate::Op::Diagnostics`]). Positions, ranges and severities are LSP's.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Questions a tool call puts to the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRequest {
    /// The call that asks.
    pub call_id: String,
    /// One or more questions, asked together.
    pub questions: Vec<Question>,
}

/// One question, with the choices the model offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// Identifies the question in the answer (unique within the request).
    pub id: String,
    /// A short label (a dozen characters), for tabs and titles.
    pub header: String,
    /// The question itself.
    pub question: String,
    /// The choices; empty for a free-text question.
    pub options: Vec<QuestionOption>,
    /// Several choices may be picked.
    pub multi_select: bool,
    /// The user may answer in their own words instead of picking.
    pub allow_other: bool,
}

/// One choice of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionOption {
    /// What the user picks (a few words).
    pub label: String,
    /// What picking it means.
    pub description: String,
}

/// The user's answer to a [`QuestionRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum QuestionAnswer {
    /// Answers by question id: the labels picked, or the user's own words.
    Answered {
        /// Question id → answers.
        answers: BTreeMap<String, Vec<String>>,
    },
    /// The user chose not to answer.
    Declined,
    /// The turn was cancelled while asking.
    Cancelled,
    /// Nobody answered within the approval timeout.
    TimedOut,
    /// No one can be asked here (a front end without questions, `exec`).
    Unavailable,
}

/// The session wants the editor's diagnostics for these files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticsRequest {
    /// Ties the answer to the request.
    pub request_id: String,
    /// Absolute paths.
    pub paths: Vec<PathBuf>,
}

/// Diagnostics by file (absolute path).
pub type DiagnosticMap = BTreeMap<PathBuf, Vec<Diagnostic>>;

/// One diagnostic, as a language server published it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Where, in LSP positions (zero-based lines, UTF-16 columns).
    pub range: Range,
    /// How bad.
    pub severity: DiagnosticSeverity,
    /// What is wrong.
    pub message: String,
    /// Who says so (`rustc`, `pyright`).
    #[serde(default)]
    pub source: Option<String>,
    /// The checker's code for it.
    #[serde(default)]
    pub code: Option<String>,
}

/// A span of a document, in LSP positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    /// Where it starts.
    pub start: Position,
    /// Where it ends (exclusive).
    pub end: Position,
}

/// A place in a document: zero-based line and UTF-16 column, as in LSP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// Zero-based line.
    pub line: u32,
    /// Zero-based column in UTF-16 code units.
    pub character: u32,
}

/// LSP's severities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticSeverity {
    /// 1.
    Error,
    /// 2.
    Warning,
    /// 3.
    Information,
    /// 4.
    Hint,
}

impl DiagnosticSeverity {
    /// From LSP's number (1 error … 4 hint).
    pub fn from_lsp(n: u64) -> Option<DiagnosticSeverity> {
        match n {
            1 => Some(DiagnosticSeverity::Error),
            2 => Some(DiagnosticSeverity::Warning),
            3 => Some(DiagnosticSeverity::Information),
            4 => Some(DiagnosticSeverity::Hint),
            _ => None,
        }
    }

    /// The word for it (`error`, `warning`, `info`, `hint`).
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticSeverity::Error => "error",
            DiagnosticSeverity::Warning => "warning",
            DiagnosticSeverity::Information => "info",
            DiagnosticSeverity::Hint => "hint",
        }
    }
}
