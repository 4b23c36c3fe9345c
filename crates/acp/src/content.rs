//! The ACP schema's content for our events: message chunks, tool-call text and diffs, and
//! tool kinds. Pure builders, shared by live updates, replays and permission prompts.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, TextContent, ToolCallContent, ToolKind as AcpToolKind,
};
use interpreter_protocol::{FileChange, ToolKind};

pub(super) fn chunk(text: &str, message_id: Option<&str>) -> ContentChunk {
    let mut c = ContentChunk::new(ContentBlock::Text(TextContent::new(text.to_string())));
    if let Some(id) = message_id {
        c = c.message_id(agent_client_protocol::v1::schema::MessageId::new(
            id.to_string(),
        ));
    }
    c
}

pub(super) fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(text.to_string())))
}

pub(super) fn diff_contents(changes: &[FileChange]) -> Vec<ToolCallContent> {
    let mut out = Vec::new();
    for c in changes {
        match &c.move_path {
            Some(dest) => {
                out.push(ToolCallContent::Diff(
                    Diff::new(c.path.clone(), String::new()).old_text(c.old_text.clone()),
                ));
                out.push(ToolCallContent::Diff(Diff::new(
                    dest.clone(),
                    c.new_text.clone().unwrap_or_default(),
                )));
            }
            None => out.push(ToolCallContent::Diff(
                Diff::new(c.path.clone(), c.new_text.clone().unwrap_or_default())
                    .old_text(c.old_text.clone()),
            )),
        }
    }
    out
}

pub(super) fn acp_kind(k: ToolKind) -> AcpToolKind {
    match k {
        ToolKind::Read => AcpToolKind::Read,
        ToolKind::Edit => AcpToolKind::Edit,
        ToolKind::Delete => AcpToolKind::Delete,
        ToolKind::Move => AcpToolKind::Move,
        ToolKind::Search => AcpToolKind::Search,
        ToolKind::Execute => AcpToolKind::Execute,
        ToolKind::Think => AcpToolKind::Think,
        ToolKind::Fetch => AcpToolKind::Fetch,
        ToolKind::Other => AcpToolKind::Other,
    }
}
