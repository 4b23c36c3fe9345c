//! Provider clients. The only module that knows HTTP wire formats (Chat Completions,
//! Responses, Anthropic Messages).

pub mod catalog;
pub mod chat;
pub mod client;
pub mod kimi_schema;
pub mod messages;
pub mod responses;
pub mod sse;
pub mod types;
mod wire;

pub use client::ModelClient;
pub use types::{
    FinishReason, HistoryItem, ModelError, ModelRequest, ModelResponse, RawToolCall,
    SignedReasoning, StreamDelta, ToolCall, ToolSpec,
};
