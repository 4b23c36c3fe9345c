//! Front ends: each translates one outside protocol to and from the agent core.

pub mod acp;
pub mod exec;
pub mod login;
pub mod lsp;
pub mod terminal_text;

/// How every front end words [`interpreter_protocol::Event::ModelWaiting`]:
/// "waiting for kimi: 15 s" (", attempt 2" after a retry).
pub fn waiting_text(provider: &str, attempt: u32, elapsed_ms: u64) -> String {
    let mut s = format!("waiting for {provider}: {} s", elapsed_ms / 1000);
    if attempt > 1 {
        s.push_str(&format!(", attempt {attempt}"));
    }
    s
}
