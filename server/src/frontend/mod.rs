//! Front ends: each translates one outside protocol to and from the agent core.

pub mod acp;
pub mod exec;
pub mod login;
pub mod lsp;
pub mod terminal_text;
