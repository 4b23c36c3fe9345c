//! Claude Code's `AskUserQuestion`: one to four questions with two to four options each,
//! multi-select, and an "Other" answer the user may always give. Claude Code lists it in
//! every mode, `-p` included; where nobody can be asked the call answers so at once.

use serde_json::json;
use std::sync::Arc;

use super::WORDING;
use crate::model::ToolSpec;
use crate::tools::question::{QuestionTool, parse_claude_style, render_claude_style};
use crate::tools::table::{Tool, spec};

/// The schema Claude Code and the harnesses that copy it (Qwen Code) share, with the
/// multi-select key they name.
pub(crate) fn question_schema(multi_key: &str) -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "questions": {
                "type": "array", "minItems": 1, "maxItems": 4,
                "description": "Questions to ask the user (1-4)",
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "description": "The complete question, clear and specific, ending with a question mark"},
                        "header": {"type": "string", "description": "A very short label for the question (at most 12 characters)"},
                        "options": {
                            "type": "array", "minItems": 2, "maxItems": 4,
                            "description": "The choices (2-4). An \"Other\" answer is always offered; do not add one",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string", "description": "The choice, in 1-5 words"},
                                    "description": {"type": "string", "description": "What choosing it means"}
                                },
                                "required": ["label", "description"],
                                "additionalProperties": false
                            }
                        },
                        multi_key: {"type": "boolean", "default": false, "description": "Let the user pick several options"}
                    },
                    "required": ["question", "header", "options", multi_key],
                    "additionalProperties": false
                }
            }
        },
        "required": ["questions"],
        "additionalProperties": false
    })
}

fn ask_spec() -> ToolSpec {
    spec(
        "AskUserQuestion",
        "Ask the user questions while you work: to settle an ambiguous request, learn a \
         preference, or choose between approaches. Each question offers 2-4 options, and the \
         user can always answer in their own words instead. Put a recommended option first and \
         end its label with \"(Recommended)\". Use multiSelect when several answers can apply. \
         Do not use it to ask for approval of a plan (ExitPlanMode does that).",
        question_schema("multiSelect"),
    )
}

pub(crate) fn ask_user_question() -> Arc<dyn Tool> {
    QuestionTool::tool(
        ask_spec(),
        |a| parse_claude_style(a, "multiSelect"),
        render_claude_style,
        WORDING,
    )
}
