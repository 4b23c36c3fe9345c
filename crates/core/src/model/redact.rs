//! Keys out of history items: what the model is sent, the session keeps and the log holds.

use super::{HistoryItem, Part};

/// Redacts a history item before it is kept, sent to the model or logged.
pub(crate) fn redact_history_item(item: &mut HistoryItem) {
    match item {
        HistoryItem::User { text, .. } => crate::secrets::redact_in_place(text),
        HistoryItem::Assistant(reply) => {
            for r in &mut reply.signed_reasoning {
                crate::secrets::redact_in_place(&mut r.text);
            }
            if let Some(r) = &mut reply.reasoning {
                crate::secrets::redact_in_place(r);
            }
            for part in &mut reply.parts {
                match part {
                    Part::Message(m) => crate::secrets::redact_in_place(&mut m.text),
                    Part::Call(call) => {
                        if crate::secrets::contains_secret(&call.arguments)
                            && let Ok(mut v) =
                                serde_json::from_str::<serde_json::Value>(&call.arguments)
                        {
                            crate::secrets::redact_json(&mut v);
                            call.arguments = v.to_string();
                        }
                    }
                }
            }
        }
        HistoryItem::ToolResult { output, .. } => crate::secrets::redact_in_place(output),
    }
}
