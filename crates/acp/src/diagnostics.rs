//! `_interpreter/diagnostics`: the editor's diagnostics for files the agent changed, asked of
//! clients that set `clientCapabilities._meta["interpreter/diagnostics"]`. Request
//! `{sessionId, paths: [abs path…]}`; answer `{diagnostics: {<path>: [{range, severity,
//! message, source?, code?}]}}` with LSP ranges and severities (1 error … 4 hint). The client
//! answers once the files' diagnostics have updated after the edit, or after a short bound.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, UntypedMessage};
use interpreter_protocol::{
    Diagnostic, DiagnosticMap, DiagnosticSeverity, DiagnosticsRequest, Position, Range,
};
use serde_json::{Value, json};
use std::path::PathBuf;

/// The client capability key (in `clientCapabilities._meta`).
pub(super) const CAPABILITY: &str = interpreter_protocol::ext::ACP_DIAGNOSTICS_CAPABILITY;
/// The extension method, agent → client.
pub(super) const METHOD: &str = interpreter_protocol::ext::ACP_DIAGNOSTICS_METHOD;

/// Asks the client; `None` when the request fails or the answer has no `diagnostics` object.
pub(super) async fn fetch(
    cx: &ConnectionTo<Client>,
    session_id: &str,
    req: &DiagnosticsRequest,
) -> Option<DiagnosticMap> {
    let message =
        UntypedMessage::new(METHOD, json!({"sessionId": session_id, "paths": req.paths})).ok()?;
    match cx.send_request(message).block_task().await {
        Ok(answer) => parse_answer(&answer),
        Err(e) => {
            tracing::warn!("{METHOD} failed: {}", e.message);
            None
        }
    }
}

/// The answer's diagnostics by absolute path; entries that do not parse are skipped.
pub(super) fn parse_answer(answer: &Value) -> Option<DiagnosticMap> {
    let files = answer.get("diagnostics")?.as_object()?;
    let mut out = DiagnosticMap::new();
    for (path, list) in files {
        let Some(path) = file_path(path).filter(|p| p.is_absolute()) else {
            continue;
        };
        let parsed = list
            .as_array()
            .map(|l| l.iter().filter_map(parse_one).collect())
            .unwrap_or_default();
        out.insert(path, parsed);
    }
    Some(out)
}

/// A path, or the path of a `file:` URI (percent-decoded, drive letters on Windows).
fn file_path(key: &str) -> Option<PathBuf> {
    if !key.starts_with("file:") {
        return Some(PathBuf::from(key));
    }
    reqwest::Url::parse(key).ok()?.to_file_path().ok()
}

fn parse_one(d: &Value) -> Option<Diagnostic> {
    let severity = match d.get("severity") {
        Some(Value::Number(n)) => DiagnosticSeverity::from_lsp(n.as_u64()?)?,
        Some(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "error" => DiagnosticSeverity::Error,
            "warning" => DiagnosticSeverity::Warning,
            "information" | "info" => DiagnosticSeverity::Information,
            "hint" => DiagnosticSeverity::Hint,
            _ => return None,
        },
        // LSP: a missing severity is the client's to interpret; editors show it as an error.
        None | Some(Value::Null) => DiagnosticSeverity::Error,
        _ => return None,
    };
    let text = |key: &str| match d.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    Some(Diagnostic {
        range: parse_range(d.get("range")?)?,
        severity,
        message: text("message")?,
        source: text("source"),
        code: text("code"),
    })
}

fn parse_range(r: &Value) -> Option<Range> {
    let pos = |p: &Value| {
        Some(Position {
            line: u32::try_from(p.get("line")?.as_u64()?).ok()?,
            character: u32::try_from(p.get("character")?.as_u64()?).ok()?,
        })
    };
    Some(Range {
        start: pos(r.get("start")?)?,
        end: pos(r.get("end")?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An absolute path on this platform.
    fn abs(name: &str) -> PathBuf {
        std::env::temp_dir().join(name)
    }

    #[test]
    fn answers_parse_with_lsp_severities_and_skip_what_is_broken() {
        let (a_py, b_py) = (abs("a.py"), abs("b.py"));
        let mut files = serde_json::Map::new();
        files.insert(
            a_py.display().to_string(),
            json!([
                {"range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 9}},
                 "severity": 1, "message": "undefined name `x`", "source": "pyright", "code": "reportUndefinedVariable"},
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                 "severity": "warning", "message": "unused import", "code": 401},
                {"severity": 1, "message": "no range"},
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                 "severity": 9, "message": "bad severity"}
            ]),
        );
        files.insert("relative.py".into(), json!([]));
        files.insert(b_py.display().to_string(), json!("not a list"));
        let map = parse_answer(&json!({"diagnostics": files})).unwrap();
        assert_eq!(map.len(), 2);
        let a = &map[&a_py];
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].severity, DiagnosticSeverity::Error);
        assert_eq!(
            a[0].range.start,
            Position {
                line: 2,
                character: 4
            }
        );
        assert_eq!(a[0].source.as_deref(), Some("pyright"));
        assert_eq!(a[1].severity, DiagnosticSeverity::Warning);
        assert_eq!(a[1].code.as_deref(), Some("401"));
        assert!(map[&b_py].is_empty());
        assert!(parse_answer(&json!({"nothing": 1})).is_none());
    }

    #[test]
    fn file_uris_are_decoded_to_the_platforms_paths() {
        let path = abs("my dir").join("a.py");
        let uri = reqwest::Url::from_file_path(&path).unwrap();
        assert!(uri.as_str().contains("my%20dir"), "{uri}");
        assert_eq!(file_path(uri.as_str()), Some(path.clone()));
        assert_eq!(file_path(&path.display().to_string()), Some(path));
    }
}
