//! Codex's `request_user_input`: one to three questions, each with an id, a short header
//! and two or three options, answered as `{"answers": {<id>: {"answers": [..]}}}`. Codex
//! offers it only where someone can answer (it is behind a setting there); here it is listed
//! when the front end can ask, and otherwise answers calls at once that nobody can be asked.

use interpreter_protocol::Question;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;

use crate::tools::question::{Answers, QuestionTool, options, text};
use crate::tools::table::{Tool, Wording, spec};

fn parse(args: &Value) -> Result<Vec<Question>, String> {
    let list = args
        .get("questions")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .ok_or("request_user_input needs a non-empty `questions` array")?;
    let mut ids = HashSet::new();
    list.iter()
        .map(|q| {
            let id = text(q, "id").ok_or("every question needs an `id`")?;
            if !ids.insert(id.clone()) {
                return Err(format!("the question id `{id}` is used twice"));
            }
            let options = options(q)?;
            if options.is_empty() {
                return Err(
                    "request_user_input requires non-empty options for every question".into(),
                );
            }
            Ok(Question {
                header: text(q, "header").unwrap_or_default(),
                question: text(q, "question")
                    .ok_or(format!("question `{id}` has no `question` text"))?,
                id,
                options,
                multi_select: false,
                allow_other: true,
            })
        })
        .collect()
}

fn render(_questions: &[Question], answers: &Answers) -> String {
    let by_id: serde_json::Map<String, Value> = answers
        .iter()
        .map(|(id, a)| (id.clone(), json!({"answers": a})))
        .collect();
    json!({"answers": by_id}).to_string()
}

pub(super) fn request_user_input(wording: Wording) -> Arc<dyn Tool> {
    let option = json!({
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "What the user picks (1-5 words)."},
            "description": {"type": "string", "description": "One short sentence on what picking it means."}
        },
        "required": ["label", "description"],
        "additionalProperties": false
    });
    let question = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "A stable snake_case id the answer is keyed by."},
            "header": {"type": "string", "description": "A short label shown above the question (at most 12 characters)."},
            "question": {"type": "string", "description": "The question, in one sentence."},
            "options": {"type": "array", "items": option, "description": "2-3 mutually exclusive choices, the recommended one first with \"(Recommended)\" after its label. Do not add an \"Other\" choice: the user can always answer in their own words."}
        },
        "required": ["id", "header", "question", "options"],
        "additionalProperties": false
    });
    QuestionTool::tool(
        spec(
            "request_user_input",
            "Ask the user one to three short questions and wait for the answers. Use it when a decision is the user's to make and you cannot infer it.",
            json!({
                "type": "object",
                "properties": {"questions": {"type": "array", "items": question, "description": "The questions; prefer one, at most three."}},
                "required": ["questions"],
                "additionalProperties": false
            }),
        ),
        parse,
        render,
        wording,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_questions_need_ids_and_options_and_answers_are_keyed_by_id() {
        let ok = json!({"questions": [{"id": "db", "header": "DB", "question": "Which one?",
            "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]}]});
        let q = parse(&ok).unwrap();
        assert!(q[0].allow_other && !q[0].multi_select);
        let mut a = Answers::new();
        a.insert("db".into(), vec!["SQLite".into()]);
        assert_eq!(
            render(&q, &a),
            r#"{"answers":{"db":{"answers":["SQLite"]}}}"#
        );
        let no_options = json!({"questions": [{"id": "db", "header": "DB", "question": "Which?", "options": []}]});
        assert!(
            parse(&no_options)
                .unwrap_err()
                .contains("non-empty options")
        );
        let twice = json!({"questions": [ok["questions"][0].clone(), ok["questions"][0].clone()]});
        assert!(parse(&twice).unwrap_err().contains("used twice"));
    }
}
