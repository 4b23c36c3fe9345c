//! A harness's title request (opencode's): one extra request with the session's first user
//! message, sent beside the first turn so it adds no wait, whose answer becomes the
//! session's title. Its tokens count toward the session's.

use std::time::Duration;

use futures::FutureExt as _;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use crate::model::{HistoryItem, ModelRequest, Parts as _};

/// The title request gives up after this.
const TIMEOUT: Duration = Duration::from_secs(60);
/// What its first user message says, as the original sends it.
pub(crate) const ASK: &str = "Generate a title for this conversation:\n";
const MAX_TITLE_CHARS: usize = 80;

fn user(text: &str) -> HistoryItem {
    HistoryItem::User {
        text: text.to_string(),
        images: vec![],
        synthetic: false,
    }
}

/// The reply's first line, without quotes or a `Title:` label.
fn clean(reply: &str) -> Option<String> {
    let line = reply.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.strip_prefix("Title:").unwrap_or(line).trim();
    let line = line
        .trim_matches(|c| c == '"' || c == '\'' || c == '`')
        .trim();
    let title: String = line.chars().take(MAX_TITLE_CHARS).collect();
    (!title.is_empty()).then_some(title)
}

impl Session {
    /// Starts the title request for the first user message `text`, when the harness makes
    /// one and this session has not asked yet.
    pub(super) fn start_title_request(&mut self, text: &str) {
        let Some(system) = self.state.harness.title_prompt() else {
            return;
        };
        if self.state.title_asked || self.parent_id.is_some() || text.trim().is_empty() {
            return;
        }
        self.state.title_asked = true;
        let client = self.services.client.clone();
        let model = self.config.model.clone();
        let max_output_tokens = self.config.max_output_tokens;
        let shape = self.state.harness.request_shape();
        let quoted = serde_json::to_string(text).unwrap_or_default();
        self.state.title_task = Some(tokio::spawn(async move {
            let history = vec![user(ASK), user(&quoted)];
            let req = ModelRequest {
                model: &model,
                system,
                history: &history,
                tools: &[],
                prompt_cache_key: "",
                max_output_tokens,
                reasoning_effort: None,
                output_schema: None,
                hosted_search: None,
                shape,
            };
            let cancel = CancellationToken::new();
            let (mut on_delta, mut on_retry, mut on_wait) = (|_| {}, |_| {}, |_| {});
            let streamed = client.stream(&req, &mut on_delta, &mut on_retry, &mut on_wait, &cancel);
            let resp = tokio::time::timeout(TIMEOUT, streamed).await.ok()?.ok()?;
            let title = clean(&resp.text())?;
            Some((title, resp.usage.unwrap_or_default()))
        }));
    }

    /// The title request's answer, once it has come: the session's title from now on.
    pub(super) fn collect_title(&mut self) {
        if !self
            .state
            .title_task
            .as_ref()
            .is_some_and(|t| t.is_finished())
        {
            return;
        }
        let Some(task) = self.state.title_task.take() else {
            return;
        };
        let Some(Ok(Some((title, usage)))) = task.now_or_never() else {
            return;
        };
        self.add_subagent_usage(usage);
        let _ = self.set_title(&title);
    }
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn a_title_is_the_replys_first_line_without_quotes_or_label() {
        assert_eq!(
            clean("\n\"Parser bug fix\"\nmore"),
            Some("Parser bug fix".into())
        );
        assert_eq!(clean("Title: Auth refresh"), Some("Auth refresh".into()));
        assert_eq!(clean("  \n "), None);
        assert_eq!(clean(&"x".repeat(200)).unwrap().len(), 80);
    }
}
