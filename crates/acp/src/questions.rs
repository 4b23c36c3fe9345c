//! Questions as ACP form elicitations (`elicitation/create`), for clients that advertise
//! `clientCapabilities.elicitation.form`. Each question is a field `q<n>`: a single-select
//! string (`oneOf` its options) or a multi-select array; a question that takes the user's own
//! words also gets a free-text field `q<n>_other`, which wins when filled. `accept` answers,
//! `decline` declines, `cancel` (or a failed request) cancels the question and the turn.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, ElicitationAction, ElicitationContentValue, ElicitationFormMode,
    ElicitationSchema, ElicitationSessionScope, EnumOption, MultiSelectPropertySchema, SessionId,
    StringPropertySchema,
};
use interpreter_protocol::{Question, QuestionAnswer, QuestionRequest};
use std::collections::BTreeMap;

use interpreter_face::terminal_text::escape_one_line;

fn field(i: usize) -> String {
    format!("q{}", i + 1)
}

/// The form for `req`'s questions, and the message above it.
pub(super) fn form(session_id: &str, req: &QuestionRequest) -> CreateElicitationRequest {
    let mut schema = ElicitationSchema::new();
    for (i, q) in req.questions.iter().enumerate() {
        let title = match q.header.is_empty() {
            true => escape_one_line(&q.question),
            false => format!(
                "{}: {}",
                escape_one_line(&q.header),
                escape_one_line(&q.question)
            ),
        };
        let options: Vec<EnumOption> = q
            .options
            .iter()
            .map(|o| {
                EnumOption::new(o.label.clone(), escape_one_line(&o.label)).description(
                    (!o.description.is_empty()).then(|| escape_one_line(&o.description)),
                )
            })
            .collect();
        if !options.is_empty() {
            match q.multi_select {
                true => {
                    schema = schema.property(
                        field(i),
                        MultiSelectPropertySchema::titled(options).title(title.clone()),
                        false,
                    )
                }
                false => {
                    schema = schema.property(
                        field(i),
                        StringPropertySchema::new()
                            .title(title.clone())
                            .one_of(options),
                        false,
                    )
                }
            }
        }
        if q.allow_other || q.options.is_empty() {
            let other = match q.options.is_empty() {
                true => title,
                false => "Other (your own answer)".to_string(),
            };
            schema = schema.property(
                format!("{}_other", field(i)),
                StringPropertySchema::new().title(other),
                false,
            );
        }
    }
    let message = match req.questions.as_slice() {
        [q] => escape_one_line(&q.question),
        qs => format!("The agent has {} questions for you.", qs.len()),
    };
    let scope = ElicitationSessionScope::new(SessionId::new(session_id.to_string())).tool_call_id(
        agent_client_protocol::v1::schema::ToolCallId::new(req.call_id.clone()),
    );
    CreateElicitationRequest::new(ElicitationFormMode::new(scope, schema), message)
}

/// The client's answer as the core's.
pub(super) fn answer(questions: &[Question], action: ElicitationAction) -> QuestionAnswer {
    let content = match action {
        ElicitationAction::Accept(a) => a.content.unwrap_or_default(),
        ElicitationAction::Decline => return QuestionAnswer::Declined,
        _ => return QuestionAnswer::Cancelled,
    };
    let values = |v: &ElicitationContentValue| -> Vec<String> {
        match v {
            ElicitationContentValue::String(s) => vec![s.clone()],
            ElicitationContentValue::StringArray(a) => a.clone(),
            ElicitationContentValue::Integer(n) => vec![n.to_string()],
            ElicitationContentValue::Number(n) => vec![n.to_string()],
            ElicitationContentValue::Boolean(b) => vec![b.to_string()],
            _ => vec![],
        }
    };
    let mut answers = BTreeMap::new();
    for (i, q) in questions.iter().enumerate() {
        let other = content
            .get(&format!("{}_other", field(i)))
            .map(values)
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>();
        let picked: Vec<String> = content.get(&field(i)).map(values).unwrap_or_default();
        let chosen = if other.is_empty() { picked } else { other };
        answers.insert(q.id.clone(), chosen);
    }
    QuestionAnswer::Answered { answers }
}

/// Asks the client; a request that fails cancels the question.
pub(super) async fn ask(
    cx: &ConnectionTo<Client>,
    session_id: &str,
    req: &QuestionRequest,
) -> QuestionAnswer {
    match cx.send_request(form(session_id, req)).block_task().await {
        Ok(resp) => answer(&req.questions, resp.action),
        Err(e) => {
            tracing::warn!("elicitation/create failed: {}", e.message);
            QuestionAnswer::Cancelled
        }
    }
}
