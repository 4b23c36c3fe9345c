//! The AI code actions: their titles, kinds and command ids, the command argument, and the
//! prompt each one sends. Offering actions is cheap and does no I/O.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use tower_lsp_server::ls_types as lsp;

use interpreter_text::documents::DocumentSnapshot;
use interpreter_text::positions::{PositionEncoding, position_to_char};

use super::convert;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    Fix,
    Explain,
    Refactor,
    WriteTests,
    Ask,
}

impl Action {
    pub(super) const ALL: [Action; 5] = [
        Action::Fix,
        Action::Explain,
        Action::Refactor,
        Action::WriteTests,
        Action::Ask,
    ];

    /// The `workspace/executeCommand` id (namespaced: VS Code registers command ids globally).
    pub(super) fn command(self) -> &'static str {
        match self {
            Action::Fix => "interpreter.fix",
            Action::Explain => "interpreter.explain",
            Action::Refactor => "interpreter.refactor",
            Action::WriteTests => "interpreter.writeTests",
            Action::Ask => "interpreter.ask",
        }
    }

    pub(super) fn title(self) -> &'static str {
        match self {
            Action::Fix => "Fix with interpreter",
            Action::Explain => "Explain with interpreter",
            Action::Refactor => "Refactor selection…",
            Action::WriteTests => "Write tests for this",
            Action::Ask => "Ask interpreter…",
        }
    }

    /// The code action kind; clients filter with `only` by prefix.
    pub(super) fn kind(self) -> &'static str {
        match self {
            Action::Fix => "quickfix.interpreter",
            Action::Explain => "interpreter.explain",
            Action::Refactor => "refactor.rewrite.interpreter",
            Action::WriteTests => "interpreter.tests",
            Action::Ask => "interpreter.ask",
        }
    }

    pub(super) fn from_command(command: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.command() == command)
    }

    /// Explain only reads; every other action may edit buffers.
    pub(super) fn may_edit(self) -> bool {
        self != Action::Explain
    }

    /// Short name for progress titles and messages.
    pub(super) fn label(self) -> &'static str {
        match self {
            Action::Fix => "Fix",
            Action::Explain => "Explain",
            Action::Refactor => "Refactor",
            Action::WriteTests => "Write tests",
            Action::Ask => "Ask",
        }
    }
}

/// The one argument every command takes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CommandArgs {
    pub uri: lsp::Uri,
    pub range: lsp::Range,
    /// The diagnostics to fix (Fix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<lsp::Diagnostic>,
    /// The user's request (Ask), or how to refactor (Refactor). Editor integrations ask the
    /// user for it and fill it in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

impl CommandArgs {
    /// Parses `arguments[0]`; the error names what is wrong for the client.
    pub(super) fn parse(
        command: &str,
        arguments: &[serde_json::Value],
    ) -> Result<CommandArgs, String> {
        let Some(first) = arguments.first() else {
            return Err(format!(
                "{command} needs one argument: {{uri, range, diagnostics?, prompt?}}"
            ));
        };
        serde_json::from_value(first.clone())
            .map_err(|e| format!("{command}: invalid argument: {e}"))
    }
}

fn kind_matches(kind: &str, only: &[lsp::CodeActionKind]) -> bool {
    only.iter().any(|o| {
        let o = o.as_str();
        o.is_empty() || kind == o || kind.starts_with(&format!("{o}."))
    })
}

/// The actions offered for a range: Fix only with diagnostics, Refactor only for a
/// non-empty selection.
pub(super) fn code_actions(params: &lsp::CodeActionParams) -> Vec<lsp::CodeActionOrCommand> {
    let diagnostics = &params.context.diagnostics;
    let has_selection = params.range.start != params.range.end;
    Action::ALL
        .into_iter()
        .filter(|a| match a {
            Action::Fix => !diagnostics.is_empty(),
            Action::Refactor => has_selection,
            _ => true,
        })
        .filter(|a| {
            params
                .context
                .only
                .as_deref()
                .is_none_or(|only| kind_matches(a.kind(), only))
        })
        .map(|a| {
            let args = CommandArgs {
                uri: params.text_document.uri.clone(),
                range: params.range,
                diagnostics: if a == Action::Fix {
                    diagnostics.clone()
                } else {
                    vec![]
                },
                prompt: None,
            };
            let title = match a {
                Action::Fix => fix_title(diagnostics),
                _ => a.title().to_string(),
            };
            lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: title.clone(),
                kind: Some(lsp::CodeActionKind::from(a.kind().to_string())),
                diagnostics: (a == Action::Fix).then(|| diagnostics.clone()),
                command: Some(lsp::Command {
                    title,
                    command: a.command().to_string(),
                    arguments: Some(vec![
                        serde_json::to_value(args).unwrap_or(serde_json::Value::Null),
                    ]),
                }),
                ..Default::default()
            })
        })
        .collect()
}

/// The Fix action says what it fixes: the one problem's message, or how many there are and
/// the first one's.
fn fix_title(diagnostics: &[lsp::Diagnostic]) -> String {
    const MAX: usize = 60;
    let short = |m: &str| {
        let one: String = m.split_whitespace().collect::<Vec<_>>().join(" ");
        match one.chars().count() > MAX {
            true => format!("{}…", one.chars().take(MAX).collect::<String>()),
            false => one,
        }
    };
    match diagnostics {
        [] => Action::Fix.title().to_string(),
        [d] => format!("{}: {}", Action::Fix.title(), short(&d.message)),
        [d, ..] => format!(
            "{}: {} problems ({}, …)",
            Action::Fix.title(),
            diagnostics.len(),
            short(&d.message)
        ),
    }
}

/// Lines of context shown around the range.
const CONTEXT_LINES: usize = 20;
/// Cap on the code quoted into a prompt; the agent can read the rest.
const MAX_QUOTED_CHARS: usize = 16_000;

/// What the prompt says about the document.
pub(super) struct PromptDoc<'a> {
    /// Path relative to the session's folder.
    pub display_path: &'a str,
    pub snapshot: Option<&'a DocumentSnapshot>,
    pub encoding: PositionEncoding,
}

/// The user message for one action.
pub(super) fn prompt(action: Action, args: &CommandArgs, doc: &PromptDoc<'_>) -> String {
    let path = doc.display_path;
    let r = args.range;
    let mut p = String::new();
    let _ = writeln!(
        p,
        "You are running as a code action in the user's editor, on `{path}`. Edits you make \
         go to the editor's buffers for the user to review; nothing is saved to disk. \
         read_file returns the editor's current (possibly unsaved) text of open files. Shell \
         commands are limited to read-only ones.\n"
    );
    let _ = writeln!(
        p,
        "The user's selection: `{path}` from line {}:{} to line {}:{} (1-based).",
        r.start.line + 1,
        r.start.character + 1,
        r.end.line + 1,
        r.end.character + 1
    );
    if let Some(snap) = doc.snapshot {
        quote(&mut p, snap, args.range, doc.encoding);
    }
    p.push('\n');
    match action {
        Action::Fix if args.diagnostics.is_empty() => p.push_str(
            "Fix the problems in the selected code. Make the smallest change that fixes them, \
             with apply_patch. Do not reformat or touch unrelated code.",
        ),
        Action::Fix => {
            p.push_str("Fix these problems:\n");
            for d in &args.diagnostics {
                let severity = match d.severity {
                    Some(lsp::DiagnosticSeverity::ERROR) => "error",
                    Some(lsp::DiagnosticSeverity::WARNING) => "warning",
                    Some(lsp::DiagnosticSeverity::INFORMATION) => "info",
                    Some(lsp::DiagnosticSeverity::HINT) => "hint",
                    _ => "problem",
                };
                let _ = write!(
                    p,
                    "- line {}:{}: {severity}: {}",
                    d.range.start.line + 1,
                    d.range.start.character + 1,
                    d.message.trim()
                );
                let code = d.code.as_ref().map(|c| match c {
                    lsp::NumberOrString::Number(n) => n.to_string(),
                    lsp::NumberOrString::String(s) => s.clone(),
                });
                match (&d.source, code) {
                    (Some(s), Some(c)) => {
                        let _ = write!(p, " ({s} {c})");
                    }
                    (Some(s), None) => {
                        let _ = write!(p, " ({s})");
                    }
                    (None, Some(c)) => {
                        let _ = write!(p, " ({c})");
                    }
                    (None, None) => {}
                }
                p.push('\n');
            }
            p.push_str(
                "Make the smallest change that fixes them, with apply_patch. Do not reformat \
                 or touch unrelated code.",
            );
        }
        Action::Explain => p.push_str(
            "Explain the selected code: what it does, how, and anything surprising or risky. \
             Answer in concise Markdown. Do not change any file.",
        ),
        Action::Refactor => {
            let how = args
                .prompt
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .unwrap_or("make it clearer and simpler");
            let _ = write!(
                p,
                "Refactor the selected code: {how}. Keep its behaviour. Change only what the \
                 refactoring needs, with apply_patch."
            );
        }
        Action::WriteTests => p.push_str(
            "Write tests for the selected code (or the function at the cursor). Follow the \
             project's conventions for where tests live and how they are written; look at \
             existing tests first. Add them with apply_patch.",
        ),
        Action::Ask => {
            let _ = write!(p, "{}", args.prompt.as_deref().unwrap_or("").trim());
        }
    }
    p
}

/// Quotes the lines around `range` with `L<n>:` numbers, and the selected text itself.
fn quote(p: &mut String, snap: &DocumentSnapshot, range: lsp::Range, enc: PositionEncoding) {
    let rope = &snap.rope;
    let lines = rope.len_lines();
    let first = (range.start.line as usize).min(lines.saturating_sub(1));
    let last = (range.end.line as usize).min(lines.saturating_sub(1));
    let from = first.saturating_sub(CONTEXT_LINES);
    let to = (last + CONTEXT_LINES).min(lines.saturating_sub(1));
    let _ = writeln!(
        p,
        "\nLines {}-{} of the buffer (version {}, {}):\n```{}",
        from + 1,
        to + 1,
        snap.version,
        snap.language_id,
        snap.language_id
    );
    let mut budget = MAX_QUOTED_CHARS;
    for n in from..=to {
        let line = rope.line(n).to_string();
        let line = line.trim_end_matches(['\n', '\r']);
        if line.len() > budget {
            p.push_str("… (cut; read the file for the rest)\n");
            break;
        }
        budget -= line.len();
        let _ = writeln!(p, "L{}: {line}", n + 1);
    }
    p.push_str("```\n");
    let range = convert::range(range);
    let a = position_to_char(rope, range.start, enc);
    let b = position_to_char(rope, range.end, enc);
    if b > a && b - a <= MAX_QUOTED_CHARS {
        let _ = writeln!(
            p,
            "Selected text:\n```{}\n{}\n```",
            snap.language_id,
            rope.slice(a..b)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn params(
        range: lsp::Range,
        diags: Vec<lsp::Diagnostic>,
        only: Option<Vec<&str>>,
    ) -> lsp::CodeActionParams {
        lsp::CodeActionParams {
            text_document: lsp::TextDocumentIdentifier {
                uri: lsp::Uri::from_str("file:///x.py").unwrap(),
            },
            range,
            context: lsp::CodeActionContext {
                diagnostics: diags,
                only: only.map(|o| {
                    o.into_iter()
                        .map(|k| lsp::CodeActionKind::from(k.to_string()))
                        .collect()
                }),
                trigger_kind: None,
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        }
    }

    fn titles(actions: &[lsp::CodeActionOrCommand]) -> Vec<String> {
        actions
            .iter()
            .map(|a| match a {
                lsp::CodeActionOrCommand::CodeAction(a) => a.title.clone(),
                lsp::CodeActionOrCommand::Command(c) => c.title.clone(),
            })
            .collect()
    }

    #[test]
    fn offers_by_context_and_filters_by_kind() {
        let cursor = lsp::Range::new(lsp::Position::new(1, 0), lsp::Position::new(1, 0));
        let sel = lsp::Range::new(lsp::Position::new(1, 0), lsp::Position::new(2, 3));
        let diag = lsp::Diagnostic {
            range: cursor,
            message: "undefined name".into(),
            ..Default::default()
        };
        assert_eq!(
            titles(&code_actions(&params(cursor, vec![], None))),
            [
                "Explain with interpreter",
                "Write tests for this",
                "Ask interpreter…"
            ]
        );
        assert_eq!(
            titles(&code_actions(&params(sel, vec![diag.clone()], None))).len(),
            5
        );
        assert_eq!(
            titles(&code_actions(&params(
                sel,
                vec![diag.clone()],
                Some(vec!["quickfix"])
            ))),
            ["Fix with interpreter: undefined name"]
        );
        let other = lsp::Diagnostic {
            message: format!("unused\nimport {}", "x".repeat(80)),
            ..diag.clone()
        };
        assert_eq!(
            titles(&code_actions(&params(
                sel,
                vec![other.clone()],
                Some(vec!["quickfix"])
            ))),
            [format!(
                "Fix with interpreter: unused import {}…",
                "x".repeat(46)
            )]
        );
        assert_eq!(
            titles(&code_actions(&params(
                sel,
                vec![diag.clone(), other],
                Some(vec!["quickfix"])
            ))),
            ["Fix with interpreter: 2 problems (undefined name, …)"]
        );
        assert_eq!(
            titles(&code_actions(&params(
                sel,
                vec![diag],
                Some(vec!["refactor"])
            ))),
            ["Refactor selection…"]
        );
        assert!(
            code_actions(&params(sel, vec![], Some(vec!["source.organizeImports"]))).is_empty()
        );
    }

    #[test]
    fn command_arguments_round_trip() {
        let sel = lsp::Range::new(lsp::Position::new(1, 0), lsp::Position::new(2, 3));
        let actions = code_actions(&params(sel, vec![], None));
        let lsp::CodeActionOrCommand::CodeAction(a) = &actions[0] else {
            panic!()
        };
        let cmd = a.command.as_ref().unwrap();
        assert_eq!(Action::from_command(&cmd.command), Some(Action::Explain));
        let args = CommandArgs::parse(&cmd.command, cmd.arguments.as_deref().unwrap()).unwrap();
        assert_eq!(args.range, sel);
        assert!(
            CommandArgs::parse("interpreter.fix", &[])
                .unwrap_err()
                .contains("needs one argument")
        );
        assert!(
            CommandArgs::parse("interpreter.fix", &[serde_json::json!({"uri": 3})])
                .unwrap_err()
                .contains("invalid argument")
        );
    }

    #[test]
    fn prompt_quotes_the_buffer_and_the_diagnostics() {
        let snap = interpreter_text::documents::Document::new(
            "file:///x.py".into(),
            None,
            "python".into(),
            4,
            "import os\nprint(undefined_name)\n",
        )
        .snapshot();
        let args = CommandArgs {
            uri: lsp::Uri::from_str("file:///x.py").unwrap(),
            range: lsp::Range::new(lsp::Position::new(1, 6), lsp::Position::new(1, 20)),
            diagnostics: vec![lsp::Diagnostic {
                range: lsp::Range::new(lsp::Position::new(1, 6), lsp::Position::new(1, 20)),
                severity: Some(lsp::DiagnosticSeverity::ERROR),
                source: Some("pyflakes".into()),
                message: "undefined name 'undefined_name'".into(),
                ..Default::default()
            }],
            prompt: None,
        };
        let doc = PromptDoc {
            display_path: "x.py",
            snapshot: Some(&snap),
            encoding: PositionEncoding::Utf16,
        };
        let p = prompt(Action::Fix, &args, &doc);
        assert!(p.contains("L2: print(undefined_name)"), "{p}");
        assert!(p.contains("version 4"), "{p}");
        assert!(
            p.contains("- line 2:7: error: undefined name 'undefined_name' (pyflakes)"),
            "{p}"
        );
        assert!(
            p.contains("Selected text:\n```python\nundefined_name\n```"),
            "{p}"
        );
        let p = prompt(
            Action::Ask,
            &CommandArgs {
                prompt: Some(" why? ".into()),
                ..args
            },
            &doc,
        );
        assert!(p.ends_with("why?"), "{p}");
    }
}
