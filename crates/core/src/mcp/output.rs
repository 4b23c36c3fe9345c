//! An MCP tool result as text for the model and the user. Pure: no I/O.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Joins the text content; other content is noted in one line each (the model cannot see
/// images or audio through a tool result). Structured content stands in when there is no
/// content at all.
pub(super) fn result_text(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        parts.push(match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!(
                "[image: {}, {} bytes, not shown]",
                i.mime_type,
                base64_len(&i.data)
            ),
            ContentBlock::Audio(a) => format!(
                "[audio: {}, {} bytes, not shown]",
                a.mime_type,
                base64_len(&a.data)
            ),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    format!("[resource {uri}]\n{text}")
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => format!(
                    "[binary resource {uri}: {}, {} bytes, not shown]",
                    mime_type.as_deref().unwrap_or("unknown type"),
                    base64_len(blob)
                ),
                _ => "[resource of an unknown type, not shown]".to_string(),
            },
            ContentBlock::ResourceLink(l) => format!("[resource link: {} {}]", l.name, l.uri),
            _ => "[content of an unknown type, not shown]".to_string(),
        });
    }
    if parts.is_empty()
        && let Some(s) = &result.structured_content
    {
        parts.push(s.to_string());
    }
    let text = parts.join("\n");
    if text.trim().is_empty() {
        "(no output)".to_string()
    } else {
        text
    }
}

/// Decoded size of base64 data, without decoding it.
fn base64_len(data: &str) -> usize {
    let trimmed = data.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(v: serde_json::Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_is_joined_and_other_content_noted() {
        let r = result(json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAAAA=="}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
            {"type": "text", "text": "two"}
        ]}));
        assert_eq!(
            result_text(&r),
            "one\n[image: image/png, 3 bytes, not shown]\n[resource file:///a.txt]\nbody\n\
             [binary resource file:///b.bin: unknown type, 4 bytes, not shown]\n\
             [resource link: c file:///c]\ntwo"
        );
    }

    #[test]
    fn structured_content_and_empty_results() {
        let r = result(json!({"content": [], "structuredContent": {"n": 1}}));
        assert_eq!(result_text(&r), "{\"n\":1}");
        let r = result(json!({"content": []}));
        assert_eq!(result_text(&r), "(no output)");
    }
}
