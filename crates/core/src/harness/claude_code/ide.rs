//! Claude Code's IDE tool, `mcp__ide__getDiagnostics`: offered only when the front end can
//! report the editor's diagnostics, as Claude Code has it only when connected to an IDE.
//! Input `{uri?}` (a `file://` URI or a path; none: every file); the result is Claude Code's
//! JSON, `[{uri, diagnostics: [{message, severity, range, source?, code?}]}]`.

use interpreter_protocol::{DiagnosticMap, DiagnosticSeverity, ToolKind};
use serde_json::{Value, json};
use std::sync::Arc;

use super::{WORDING, describe, tool};
use crate::tools::ToolContext;
use crate::tools::ToolOutcome;
use crate::tools::table::{Tool, ToolError, ToolResult, spec, str_or_empty};

pub(crate) const NAME: &str = "mcp__ide__getDiagnostics";

pub(super) fn get_diagnostics() -> Arc<dyn Tool> {
    tool(
        WORDING,
        spec(
            NAME,
            "Get the language diagnostics (errors, warnings) the editor shows, for one file or for every file it has open.",
            json!({
                "type": "object",
                "properties": {
                    "uri": {"type": "string", "description": "Optional file URI to get diagnostics for. If not provided, gets diagnostics for all files."}
                },
                "additionalProperties": false
            }),
        ),
        |a, _| {
            let uri = str_or_empty(a, "uri");
            let title = match uri.is_empty() {
                true => "Get diagnostics".to_string(),
                false => format!("Get diagnostics for {uri}"),
            };
            describe(ToolKind::Read, title)
        },
        |a, c| Box::pin(run(c, a)),
    )
}

async fn run(ctx: &ToolContext, args: Value) -> ToolResult {
    let uri = str_or_empty(&args, "uri");
    let paths = match uri.trim() {
        "" => vec![],
        u => vec![
            ctx.workspace
                .resolve(u.strip_prefix("file://").unwrap_or(u))?,
        ],
    };
    ctx.events
        .send(interpreter_protocol::Event::ToolCallRunning {
            call_id: ctx.call_id.clone(),
        });
    match ctx.asks.diagnostics(paths, &ctx.cancel).await {
        Some(map) => Ok(ToolOutcome::ok(claude_json(&map).to_string())),
        None => Err(ToolError::message("The editor did not report diagnostics.")),
    }
}

/// The diagnostics in Claude Code's shape.
fn claude_json(map: &DiagnosticMap) -> Value {
    let files: Vec<Value> = map
        .iter()
        .map(|(path, list)| {
            let diagnostics: Vec<Value> = list
                .iter()
                .map(|d| {
                    let mut v = json!({
                        "message": d.message,
                        "severity": match d.severity {
                            DiagnosticSeverity::Error => "Error",
                            DiagnosticSeverity::Warning => "Warning",
                            DiagnosticSeverity::Information => "Info",
                            DiagnosticSeverity::Hint => "Hint",
                        },
                        "range": d.range,
                    });
                    if let Some(s) = &d.source {
                        v["source"] = json!(s);
                    }
                    if let Some(c) = &d.code {
                        v["code"] = json!(c);
                    }
                    v
                })
                .collect();
            json!({"uri": format!("file://{}", path.display()), "diagnostics": diagnostics})
        })
        .collect();
    Value::Array(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_protocol::{Diagnostic, Position, Range};

    #[test]
    fn diagnostics_come_back_in_claude_codes_shape() {
        let at = Position {
            line: 1,
            character: 2,
        };
        let mut map = DiagnosticMap::new();
        map.insert(
            "/w/a.py".into(),
            vec![Diagnostic {
                range: Range { start: at, end: at },
                severity: DiagnosticSeverity::Warning,
                message: "unused".into(),
                source: Some("pyright".into()),
                code: None,
            }],
        );
        assert_eq!(
            claude_json(&map),
            json!([{"uri": "file:///w/a.py", "diagnostics": [{
                "message": "unused", "severity": "Warning", "source": "pyright",
                "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 2}}
            }]}])
        );
    }
}
