//! Provider clients. The only module that knows HTTP wire formats (Chat Completions,
//! Responses, Anthropic Messages).

pub(crate) mod catalog;
pub mod chat;
pub(crate) mod client;
pub(crate) mod kimi_schema;
pub(crate) mod limits;
pub(crate) mod messages;
pub mod responses;
pub mod sse;
pub(crate) mod types;
mod wire;

pub(crate) use client::ModelClient;
pub use types::{
    FinishReason, HistoryItem, ModelError, ModelRequest, ModelResponse, RawToolCall,
    SignedReasoning, StreamDelta, ToolCall, ToolSpec,
};
