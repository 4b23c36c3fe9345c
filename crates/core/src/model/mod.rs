//! Provider clients. The only module that knows HTTP wire formats (Chat Completions,
//! Responses, Anthropic Messages).

pub mod catalog;
pub mod chat;
pub(crate) mod client;
mod image;
pub(crate) mod kimi_schema;
pub(crate) mod limits;
pub(crate) mod messages;
pub mod provider;
mod redact;
pub mod responses;
pub mod sse;
pub(crate) mod types;
mod usage;
mod wire;

pub(crate) use client::ModelClient;
pub use image::{image_data_url, sniff as sniff_image, sniff_base64 as sniff_image_base64};
pub(crate) use redact::redact_history_item;
pub use types::{
    AssistantReply, FinishReason, HistoryItem, HostedSearch, MessagePhase, ModelError,
    ModelRequest, ModelResponse, OutputMessage, Part, Parts, RawToolCall, RequestShape,
    SignedReasoning, StreamDelta, ToolCall, ToolSpec,
};
