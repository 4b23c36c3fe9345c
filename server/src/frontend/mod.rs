//! Front ends: each translates one outside protocol to and from the agent core. They send
//! `Op`s through a `SessionHandle` and read `Event`s; nothing else of the core is theirs.

pub mod acp;
pub mod exec;
pub mod login;
pub mod lsp;
mod slash;
mod view;
