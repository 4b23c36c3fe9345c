//! Tools that ask the user: Claude Code's `AskUserQuestion`, Codex's `request_user_input` and
//! their kin. Each harness gives its schema, how its arguments become questions and how the
//! answers read in its original's words; the asking itself is the core's
//! (`ToolContext::asks`): the front end's picker or form, the approval timeout, cancellation.
//! Nobody to ask (exec, a client without questions) answers at once, so the model decides.

use futures::future::BoxFuture;
use interpreter_protocol::{Question, QuestionAnswer, QuestionOption, ToolKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::table::{Tool, Wording};
use super::{CallDescription, ModeChange, ToolContext, ToolOutcome};
use crate::model::ToolSpec;
use crate::workspace::Workspace;

/// Answers by question id.
pub(crate) type Answers = BTreeMap<String, Vec<String>>;
/// A harness's arguments → the questions (or the error the model reads).
pub(crate) type Parse = fn(&Value) -> Result<Vec<Question>, String>;
/// The questions and the user's answers → the result the model reads.
pub(crate) type Render = fn(&[Question], &Answers) -> String;

/// What the model reads when no one can be asked.
pub(crate) const UNAVAILABLE: &str = "No one can answer questions here: this session runs without a user to ask. Decide on your own, go on with the task, and say in your final answer what you chose and why.";
/// What the model reads when the user did not answer.
pub(crate) const DECLINED: &str = "The user declined to answer. Do not ask again; go on with your best judgement or stop and wait for the user.";

pub(crate) struct QuestionTool {
    pub spec: ToolSpec,
    pub parse: Parse,
    pub render: Render,
    pub wording: Wording,
}

impl QuestionTool {
    /// The tool, as a table entry.
    pub(crate) fn tool(
        spec: ToolSpec,
        parse: Parse,
        render: Render,
        wording: Wording,
    ) -> Arc<dyn Tool> {
        Arc::new(QuestionTool {
            spec,
            parse,
            render,
            wording,
        })
    }
}

impl Tool for QuestionTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn describe(&self, args: &Value, _ws: &Workspace) -> CallDescription {
        let first = (self.parse)(args)
            .ok()
            .and_then(|q| q.into_iter().next())
            .map(|q| q.question)
            .unwrap_or_default();
        CallDescription {
            kind: ToolKind::Think,
            title: match first.is_empty() {
                true => "Ask the user".into(),
                false => format!("Ask: {first}"),
            },
            locations: vec![],
            command: None,
        }
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let questions = match (self.parse)(&args) {
                Ok(q) => q,
                Err(e) => {
                    return self
                        .wording
                        .outcome(Err(super::table::ToolError::Message(e)));
                }
            };
            let answer = ctx
                .asks
                .ask(&ctx.call_id, questions.clone(), &ctx.cancel)
                .await;
            let outcome = match answer {
                QuestionAnswer::Answered { answers } => {
                    ToolOutcome::ok((self.render)(&questions, &answers))
                }
                QuestionAnswer::Declined => ToolOutcome::declined(DECLINED),
                QuestionAnswer::Unavailable => ToolOutcome::error(UNAVAILABLE),
                QuestionAnswer::TimedOut => ToolOutcome::error(format!(
                    "Nobody answered within {} seconds. Decide on your own, go on, and say in your final answer what you chose.",
                    ctx.asks.timeout().as_secs()
                )),
                // The user cancelled: the turn ends here, as an interrupt would end it.
                QuestionAnswer::Cancelled => ToolOutcome {
                    mode_change: Some(ModeChange::StopTurn),
                    ..ToolOutcome::declined("The user cancelled the question and the turn.")
                },
            };
            self.wording.outcome(Ok(outcome))
        })
    }

    /// The originals keep questions to the session the user talks to.
    fn for_subagents(&self) -> bool {
        false
    }
}

/// Claude-style arguments (`questions: [{question, header, options: [{label, description}],
/// <multi>}]`), the multi-select key named as the harness names it. Ids are `q1`, `q2`, ….
pub(crate) fn parse_claude_style(args: &Value, multi_key: &str) -> Result<Vec<Question>, String> {
    let list = args
        .get("questions")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .ok_or("`questions` must be a non-empty array")?;
    list.iter()
        .enumerate()
        .map(|(i, q)| {
            let question =
                text(q, "question").ok_or(format!("question {} has no `question` text", i + 1))?;
            Ok(Question {
                id: format!("q{}", i + 1),
                header: text(q, "header").unwrap_or_default(),
                question,
                options: options(q)?,
                multi_select: q.get(multi_key).and_then(Value::as_bool).unwrap_or(false),
                allow_other: true,
            })
        })
        .collect()
}

/// A question's `options` (`[{label, description?}]`); labels must be there.
pub(crate) fn options(q: &Value) -> Result<Vec<QuestionOption>, String> {
    let Some(list) = q.get("options") else {
        return Ok(vec![]);
    };
    let list = list.as_array().ok_or("`options` must be an array")?;
    list.iter()
        .map(|o| {
            Ok(QuestionOption {
                label: text(o, "label").ok_or("every option needs a `label`")?,
                description: text(o, "description").unwrap_or_default(),
            })
        })
        .collect()
}

/// A non-empty trimmed string argument.
pub(crate) fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// Claude Code's result: `User has answered your questions: "Q"="A", …`.
pub(crate) fn render_claude_style(questions: &[Question], answers: &Answers) -> String {
    let pairs: Vec<String> = questions
        .iter()
        .map(|q| {
            let a = answers.get(&q.id).map(|a| a.join(", ")).unwrap_or_default();
            format!("\"{}\"=\"{}\"", q.question, a)
        })
        .collect();
    format!(
        "User has answered your questions: {}. You can now continue with the user's answers in mind.",
        pairs.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_style_questions_parse_and_answers_read_as_claude_code_writes_them() {
        let args = json!({"questions": [
            {"question": "Which database?", "header": "DB", "multiSelect": false,
             "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]},
            {"question": "Which extras?", "header": "Extras", "multiSelect": true,
             "options": [{"label": "Auth"}, {"label": "Cache"}]}
        ]});
        let q = parse_claude_style(&args, "multiSelect").unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!((q[0].id.as_str(), q[1].multi_select), ("q1", true));
        assert_eq!(q[0].options[1].label, "Postgres");
        let mut answers = Answers::new();
        answers.insert("q1".into(), vec!["SQLite".into()]);
        answers.insert("q2".into(), vec!["Auth".into(), "Cache".into()]);
        assert_eq!(
            render_claude_style(&q, &answers),
            "User has answered your questions: \"Which database?\"=\"SQLite\", \"Which extras?\"=\"Auth, Cache\". You can now continue with the user's answers in mind."
        );
        assert!(parse_claude_style(&json!({"questions": []}), "multiSelect").is_err());
        assert!(
            parse_claude_style(&json!({"questions": [{"header": "x"}]}), "multiSelect").is_err()
        );
    }
}
