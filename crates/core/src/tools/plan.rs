//! Plan items from a model's list, shared by the harnesses' plan tools (`update_plan`,
//! `TodoList`), which differ only in field and status names and in how they word errors.

use interpreter_protocol::{PlanItem, PlanStatus};
use serde_json::Value;

/// The names a harness uses: the text field, and the word for a finished item.
pub(crate) struct Dialect {
    pub text_field: &'static str,
    pub completed: &'static str,
}

#[derive(Debug, PartialEq)]
pub(crate) enum PlanError {
    /// An item without text.
    EmptyText,
    /// A status that is not pending, in_progress or the dialect's `completed`.
    UnknownStatus(String),
}

pub(crate) fn parse_items(list: &[Value], dialect: &Dialect) -> Result<Vec<PlanItem>, PlanError> {
    list.iter()
        .map(|item| {
            let text = item
                .get(dialect.text_field)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim();
            if text.is_empty() {
                return Err(PlanError::EmptyText);
            }
            let status = match item.get("status").and_then(Value::as_str) {
                Some(s) if s == dialect.completed => PlanStatus::Completed,
                Some("in_progress") => PlanStatus::InProgress,
                Some("pending") | None => PlanStatus::Pending,
                Some(other) => return Err(PlanError::UnknownStatus(other.to_string())),
            };
            Ok(PlanItem {
                step: text.to_string(),
                status,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dialects_name_fields_and_statuses() {
        let todo = Dialect {
            text_field: "title",
            completed: "done",
        };
        let items = parse_items(
            &[
                json!({"title": " a ", "status": "done"}),
                json!({"title": "b"}),
            ],
            &todo,
        )
        .unwrap();
        assert_eq!(items[0].step, "a");
        assert_eq!(items[0].status, PlanStatus::Completed);
        assert_eq!(items[1].status, PlanStatus::Pending);
        assert_eq!(
            parse_items(&[json!({"title": "a", "status": "completed"})], &todo),
            Err(PlanError::UnknownStatus("completed".into()))
        );
        assert_eq!(
            parse_items(&[json!({"step": "a"})], &todo),
            Err(PlanError::EmptyText)
        );
    }
}
