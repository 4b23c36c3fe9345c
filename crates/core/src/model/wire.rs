//! What differs per wire API, in one place: the endpoint, the body, the headers and the
//! stream accumulator. `client.rs` does the HTTP and retries the same way for all of them.

use serde_json::Value;

use super::catalog;
use super::chat::{self, ChatStream};
use super::messages::{self, MessagesStream};
use super::provider::{AuthScheme, ProviderConfig, WireApi};
use super::responses::{self, ResponsesStream};
use super::sse::SseEvent;
use super::types::{ModelError, ModelRequest, ModelResponse, StreamDelta};

/// The URL a request goes to. Messages endpoints are documented both with and without the
/// `/v1` segment (`…/anthropic`, `…/anthropic/v1`); both work.
pub(crate) fn endpoint(p: &ProviderConfig) -> String {
    let base = &p.base_url;
    match p.wire_api {
        WireApi::Chat => format!("{base}/chat/completions"),
        WireApi::Responses => format!("{base}/responses"),
        WireApi::Messages if base.ends_with("/v1") => format!("{base}/messages"),
        WireApi::Messages => format!("{base}/v1/messages"),
    }
}

/// The exact JSON body of a request.
pub(crate) fn build_body(p: &ProviderConfig, req: &ModelRequest<'_>) -> Value {
    let info = catalog::model_info(req.model);
    match p.wire_api {
        WireApi::Chat => chat::build_body(req, info, send_cache_key(p)),
        WireApi::Responses => responses::build_body(req),
        WireApi::Messages => messages::build_body(req, info),
    }
}

fn send_cache_key(p: &ProviderConfig) -> bool {
    // Local servers may reject unknown fields; hosted ones use it for prefix caching.
    !super::catalog::provider(&p.id).is_some_and(|info| info.local)
}

/// The headers that carry the key and the wire's version. Our user agent (set on the
/// client) names us; nothing here names another product.
pub(crate) fn headers(p: &ProviderConfig, api_key: Option<&str>) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(token) = p.login_token() {
        out.push(("authorization", format!("Bearer {token}")));
    } else if let Some(k) = api_key {
        match p.auth.scheme {
            AuthScheme::Bearer => out.push(("authorization", format!("Bearer {k}"))),
            AuthScheme::XApiKey => out.push(("x-api-key", k.to_string())),
        }
    }
    if p.wire_api == WireApi::Messages {
        out.push(("anthropic-version", messages::ANTHROPIC_VERSION.to_string()));
    }
    out
}

/// A response being streamed, in its wire's format.
pub(crate) enum WireStream {
    Chat(ChatStream),
    Responses(ResponsesStream),
    Messages(MessagesStream),
}

impl WireStream {
    pub(crate) fn new(p: &ProviderConfig) -> WireStream {
        match p.wire_api {
            WireApi::Chat => WireStream::Chat(ChatStream::new(&p.id)),
            WireApi::Responses => WireStream::Responses(ResponsesStream::new(&p.id)),
            WireApi::Messages => WireStream::Messages(MessagesStream::new(&p.id)),
        }
    }

    pub(crate) fn handle(&mut self, ev: &SseEvent) -> Result<Vec<StreamDelta>, ModelError> {
        match self {
            WireStream::Chat(s) => s.handle(&ev.data),
            WireStream::Responses(s) => s.handle(ev.event.as_deref(), &ev.data),
            WireStream::Messages(s) => s.handle(ev.event.as_deref(), &ev.data),
        }
    }

    /// Content bytes so far (see `model::limits`).
    pub(crate) fn output_bytes(&self) -> u64 {
        match self {
            WireStream::Chat(s) => s.output_bytes(),
            WireStream::Responses(s) => s.output_bytes(),
            WireStream::Messages(s) => s.output_bytes(),
        }
    }

    pub(crate) fn partial_state(&self) -> String {
        match self {
            WireStream::Chat(s) => s.partial_state(),
            WireStream::Responses(s) => s.partial_state(),
            WireStream::Messages(s) => s.partial_state(),
        }
    }

    pub(crate) fn finish(self) -> Result<ModelResponse, ModelError> {
        match self {
            WireStream::Chat(s) => s.finish(),
            WireStream::Responses(s) => s.finish(),
            WireStream::Messages(s) => s.finish(),
        }
    }
}
