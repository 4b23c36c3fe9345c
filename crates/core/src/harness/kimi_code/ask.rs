//! Kimi Code's `AskUserQuestion`: one to four questions with two to four options and
//! `multi_select`; "Other" is added by the client. In `--print` runs Kimi Code dismisses it
//! at once, as calls here do where nobody can be asked. `header` and an option's
//! `description` are optional, as in the original; its `background` asking (answer told
//! later) is accepted but the question is asked in the call.

use interpreter_protocol::Question;
use serde_json::{Value, json};
use std::sync::Arc;

use super::WORDING;
use crate::tools::question::{Answers, QuestionTool, parse_claude_style};
use crate::tools::table::{Tool, spec};

/// `{"answers": {<question>: <answer>}}`, several picks joined by ", ".
fn render(questions: &[Question], answers: &Answers) -> String {
    let by_question: serde_json::Map<String, Value> = questions
        .iter()
        .map(|q| {
            let a = answers.get(&q.id).map(|a| a.join(", ")).unwrap_or_default();
            (q.question.clone(), json!(a))
        })
        .collect();
    json!({"answers": by_question}).to_string()
}

pub(super) fn ask_user_question() -> Arc<dyn Tool> {
    let option = json!({"type": "object", "properties": {
        "label": {"type": "string", "minLength": 1, "description": "The choice, in a few words"},
        "description": {"type": "string", "default": "", "description": "What choosing it means"}
    }, "required": ["label"], "additionalProperties": false});
    let question = json!({"type": "object", "properties": {
        "question": {"type": "string", "minLength": 1, "description": "The question to ask"},
        "header": {"type": "string", "default": "", "description": "A short label (at most 12 characters)"},
        "options": {"type": "array", "items": option, "minItems": 2, "maxItems": 4},
        "multi_select": {"type": "boolean", "default": false, "description": "Allow several answers"}
    }, "required": ["question", "options"], "additionalProperties": false});
    QuestionTool::tool(
        spec(
            "AskUserQuestion",
            "Ask the user one to four questions with a few options each when you need their decision to go on. They can always answer in their own words. Do not ask for approval of actions: the permission system does that.",
            json!({"type": "object", "properties": {
                "questions": {"type": "array", "items": question, "minItems": 1, "maxItems": 4},
                "background": {"type": "boolean", "default": false, "description": "Accepted for compatibility: the question is always asked at once, and the call returns with the answer"}
            }, "required": ["questions"], "additionalProperties": false}),
        ),
        |a| parse_claude_style(a, "multi_select"),
        render,
        WORDING,
    )
}
