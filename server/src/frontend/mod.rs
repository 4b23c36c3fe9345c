//! Front ends: each translates one outside protocol to and from the agent core. They send
//! `Op`s through a `SessionHandle` and read `Event`s; nothing else of the core is theirs.

pub mod acp;
pub mod app_server;
pub mod exec;
pub mod login;
pub mod lsp;
mod slash;
mod view;

#[cfg(test)]
mod tests {
    /// Front ends drive sessions with ops and read their events; nothing else of the core's
    /// session is theirs. The compiler holds them to it (`agent::session::Session` is private
    /// to `agent`); this keeps it so.
    #[test]
    fn front_ends_only_send_ops_and_read_events() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let session = std::fs::read_to_string(src.join("agent/session.rs")).unwrap();
        assert!(session.contains("pub(super) struct Session {"));
        let word =
            regex::Regex::new(r"\bSession\b|agent::session|\bturn_loop\b|\brun_turn\b").unwrap();
        let strings = regex::Regex::new(r#""(?:[^"\\]|\\.)*""#).unwrap();
        let mut stack = vec![src.join("frontend")];
        let mut checked = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                // This file: module declarations and this test.
                if path == src.join("frontend/mod.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for (n, line) in text.lines().enumerate() {
                    let code = strings.replace_all(line, "\"\"");
                    let code = code.split("//").next().unwrap_or("");
                    assert!(
                        !word.is_match(code),
                        "{}:{}: a front end reaches into the session: {line}",
                        path.display(),
                        n + 1
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} files checked");
    }
}
