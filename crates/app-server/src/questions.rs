//! Questions as the seed's `item/tool/requestUserInput` server request: `{threadId, turnId,
//! itemId, questions: [{id, header, question, isOther, isSecret, options}], isBlocking}`,
//! answered with `{answers: {<id>: {answers: [..]}}}`. An error answer declines; interrupting
//! the turn cancels the question in the core.

use interpreter_protocol::{Op, QuestionAnswer, QuestionRequest};
use serde_json::{Value, json};
use std::collections::BTreeMap;

use super::Server;
use super::state::{Asked, ThreadShared};

/// The request's params.
pub(super) fn params(thread_id: &str, turn_id: &str, req: &QuestionRequest) -> Value {
    let questions: Vec<Value> = req
        .questions
        .iter()
        .map(|q| {
            let options: Vec<Value> = q
                .options
                .iter()
                .map(|o| json!({"label": o.label, "description": o.description}))
                .collect();
            json!({
                "id": q.id,
                "header": q.header,
                "question": q.question,
                "isOther": q.allow_other,
                "isSecret": false,
                "options": if options.is_empty() { Value::Null } else { Value::Array(options) },
            })
        })
        .collect();
    json!({
        "threadId": thread_id,
        "turnId": turn_id,
        "itemId": req.call_id,
        "questions": questions,
        "isBlocking": true,
    })
}

/// Sends the request (from the session's event sink).
pub(super) fn ask(thread: &ThreadShared, turn_id: &str, req: &QuestionRequest) {
    let params = params(&thread.id, turn_id, req);
    let id = thread.approvals.remember(Asked {
        thread_id: thread.id.clone(),
        turn_id: turn_id.to_string(),
        call_id: req.call_id.clone(),
        question: true,
    });
    thread.out.request(id, "item/tool/requestUserInput", params);
}

/// The client's answer.
pub(super) fn answered(server: &Server, id: &Value, asked: Asked, result: Result<Value, Value>) {
    let answer = match result {
        Ok(r) => {
            let mut answers = BTreeMap::new();
            if let Some(map) = r.get("answers").and_then(Value::as_object) {
                for (qid, a) in map {
                    let list = a
                        .get("answers")
                        .and_then(Value::as_array)
                        .map(|l| {
                            l.iter()
                                .filter_map(|s| s.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default();
                    answers.insert(qid.clone(), list);
                }
            }
            QuestionAnswer::Answered { answers }
        }
        Err(_) => QuestionAnswer::Declined,
    };
    let Some(thread) = server.thread(&asked.thread_id) else {
        return;
    };
    server.out.notify(
        "serverRequest/resolved",
        json!({"threadId": asked.thread_id, "requestId": id}),
    );
    let _ = thread.handle.submit(Op::Answer {
        call_id: asked.call_id,
        answer,
    });
}
