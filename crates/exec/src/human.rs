//! Human-readable exec transcript, written to stderr. The final answer goes to stdout
//! separately (or the diff, with `--diff`).
//!
//! Everything that came from the model, a command, a tool or a provider passes through
//! [`clean`] before it is printed, so it cannot drive the terminal; our own colours are added
//! afterwards.

use interpreter_protocol::{
    Event, PlanStatus, SessionSettings, ToolKind, ToolStatus, TurnEndReason,
};
use std::collections::HashMap;
use std::io::Write;

use interpreter_face::terminal_text::sanitize as clean;

pub(super) struct HumanWriter<W: Write> {
    out: W,
    color: bool,
    commands: HashMap<String, (String, ToolKind)>,
    pub last_message: Option<String>,
    /// To say what a settings change changed.
    settings: Option<SessionSettings>,
}

impl<W: Write> HumanWriter<W> {
    pub(super) fn new(out: W, color: bool) -> Self {
        HumanWriter {
            out,
            color,
            commands: HashMap::new(),
            last_message: None,
            settings: None,
        }
    }

    fn style(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    pub(super) fn header(&mut self, rows: &[(&str, String)], prompt: &str) {
        let mut s = format!("interpreter v{}\n--------\n", env!("CARGO_PKG_VERSION"));
        for (k, v) in rows {
            s.push_str(&format!("{}: {}\n", self.style("1", k), clean(v)));
        }
        s.push_str("--------\n");
        s.push_str(&format!(
            "{}\n{}\n\n",
            self.style("36", "user"),
            clean(prompt)
        ));
        let _ = self.out.write_all(s.as_bytes());
    }

    pub(super) fn line(&mut self, s: &str) {
        let _ = writeln!(self.out, "{s}");
    }

    pub(super) fn event(&mut self, e: &Event) {
        match e {
            Event::Reasoning { text, .. } if !text.trim().is_empty() => {
                let t = format!("thinking\n{}\n", clean(text.trim()));
                let t = self.style("2;3", &t);
                self.line(&t);
            }
            Event::AgentMessage { text, .. } => {
                self.last_message = Some(text.clone());
                let h = self.style("35", "interpreter");
                self.line(&format!("{h}\n{}\n", clean(text.trim_end())));
            }
            // Plan updates print themselves (PlanUpdated).
            Event::ToolCallBegin(b) if b.kind == ToolKind::Think => {
                self.commands
                    .insert(b.call_id.clone(), (b.title.clone(), b.kind));
            }
            Event::ToolCallEnd(end)
                if end.status == ToolStatus::Completed
                    && self
                        .commands
                        .get(&end.call_id)
                        .is_some_and(|c| c.1 == ToolKind::Think) =>
            {
                self.commands.remove(&end.call_id);
            }
            Event::ToolCallBegin(b) => self.tool_begin(b),
            Event::ToolCallEnd(end) => self.tool_end(end),
            Event::PlanUpdated(plan) => self.plan(plan),
            Event::Warning { message } => {
                let w = self.style("33", &format!("warning: {}", clean(message)));
                self.line(&w);
            }
            Event::HookStarted { run, .. } => {
                if let Some(l) = interpreter_face::hooks::started_line(run) {
                    self.line(&clean(&l));
                }
            }
            Event::HookCompleted { run, .. } => {
                if let Some(l) = interpreter_face::hooks::completed_line(run) {
                    let l = self.style("33", &format!("hook: {}", clean(&l)));
                    self.line(&l);
                }
            }
            Event::SessionConfigured(c) => self.settings = Some(c.settings.clone()),
            Event::SettingsChanged(new) => self.settings_changed(new),
            Event::ModelWaiting {
                provider,
                attempt,
                elapsed_ms,
            } => {
                let w = interpreter_face::waiting_text(&clean(provider), *attempt, *elapsed_ms);
                let w = self.style("2", &format!("{w}…"));
                self.line(&w);
            }
            Event::ContextCompacted {
                tokens_before,
                tokens_after,
                ..
            } => self.line(&format!(
                "context compacted (about {tokens_before} → {tokens_after} tokens)\n"
            )),
            _ => {}
        }
    }

    fn tool_begin(&mut self, b: &interpreter_protocol::ToolCallBegin) {
        let label = match b.kind {
            ToolKind::Execute => "exec",
            ToolKind::Edit | ToolKind::Delete | ToolKind::Move => "apply patch",
            ToolKind::Read => "read",
            ToolKind::Search => "search",
            ToolKind::Think => "plan",
            ToolKind::Fetch => "fetch",
            ToolKind::Other => "tool",
        };
        let h = self.style("1", label);
        self.line(&format!("{h}\n{}", clean(&b.title)));
        self.commands
            .insert(b.call_id.clone(), (b.title.clone(), b.kind));
    }

    fn tool_end(&mut self, end: &interpreter_protocol::ToolCallEnd) {
        let (_, kind) = self
            .commands
            .remove(&end.call_id)
            .unwrap_or_else(|| (String::new(), ToolKind::Other));
        let status = match (end.status, end.exit_code) {
            (ToolStatus::Completed, _) => self.style("32", " succeeded"),
            (ToolStatus::Declined, _) => self.style("33", " declined"),
            (ToolStatus::Failed, Some(c)) => self.style("31", &format!(" exited {c}")),
            (ToolStatus::Failed, None) => self.style("31", " failed"),
        };
        self.line(&format!("{status}:"));
        let show_output = matches!(kind, ToolKind::Execute | ToolKind::Edit | ToolKind::Other)
            || end.status != ToolStatus::Completed;
        let output = clean(&end.output);
        if show_output && !output.trim().is_empty() {
            let lines: Vec<&str> = output.trim_end().lines().collect();
            let shown: Vec<&str> = if lines.len() > 20 {
                lines[..10]
                    .iter()
                    .chain(lines[lines.len() - 10..].iter())
                    .copied()
                    .collect()
            } else {
                lines
            };
            for l in shown {
                let dim = self.style("2", l);
                self.line(&dim);
            }
        }
        self.line("");
    }

    fn plan(&mut self, plan: &interpreter_protocol::Plan) {
        self.line(&self.style("1", "plan"));
        for i in &plan.items {
            let mark = match i.status {
                PlanStatus::Completed => "✓",
                PlanStatus::InProgress => "→",
                PlanStatus::Pending => "•",
            };
            self.line(&format!("  {mark} {}", clean(&i.step)));
        }
        self.line("");
    }

    fn settings_changed(&mut self, new: &SessionSettings) {
        let old = self.settings.replace(new.clone());
        if old.as_ref().is_some_and(|o| o.harness != new.harness) {
            self.line(&format!("harness: {}", clean(&new.harness)));
        }
        if old.as_ref().is_some_and(|o| o.model != new.model) {
            self.line(&format!("model: {}", clean(&new.model)));
        }
    }

    pub(super) fn turn_ended(&mut self, reason: &TurnEndReason, tokens: u64) {
        match reason {
            TurnEndReason::Failed { message } => {
                let e = self.style("31", &format!("ERROR: {}", clean(message)));
                self.line(&e);
            }
            TurnEndReason::Cancelled => self.line("turn interrupted"),
            TurnEndReason::MaxTurnRequests => {
                self.line("ERROR: the turn reached max_turn_requests without a final answer")
            }
            TurnEndReason::MaxTokens => {
                self.line("warning: the answer was cut at the output token limit")
            }
            TurnEndReason::Refusal => {
                self.line("warning: the provider's content filter stopped the answer")
            }
            TurnEndReason::Completed => {}
        }
        let h = self.style("1", "tokens used");
        self.line(&format!("{h}\n{}", group_thousands(tokens)));
    }
}

fn group_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_protocol::{ToolCallBegin, ToolCallEnd};

    /// Model text, command titles and output, warnings and errors reach the terminal as text;
    /// our own colour codes are the only escapes left.
    #[test]
    fn hostile_text_is_printed_without_control_sequences() {
        let evil = "x\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x1b\\\x1b[2J\u{9b}31my";
        let mut w = HumanWriter::new(Vec::new(), true);
        w.event(&Event::AgentMessage {
            message_id: "m".into(),
            text: evil.into(),
            phase: None,
        });
        w.event(&Event::ToolCallBegin(ToolCallBegin {
            call_id: "c".into(),
            tool: "shell".into(),
            kind: ToolKind::Execute,
            title: evil.into(),
            input: serde_json::Value::Null,
            locations: vec![],
            command: None,
            subagent: None,
        }));
        w.event(&Event::ToolCallEnd(ToolCallEnd {
            call_id: "c".into(),
            status: ToolStatus::Completed,
            output: format!("{evil}\r\n"),
            exit_code: Some(0),
            changes: vec![],
        }));
        w.event(&Event::Warning {
            message: evil.into(),
        });
        w.turn_ended(
            &TurnEndReason::Failed {
                message: evil.into(),
            },
            1,
        );
        let out = String::from_utf8(w.out).unwrap();
        for bad in ["\x1b]", "\x1b[2J", "\x07", "\u{9b}", "\r"] {
            assert!(!out.contains(bad), "{bad:?} in {out:?}");
        }
        assert!(out.contains("\x1b[35minterpreter\x1b[0m"), "{out:?}");
        assert!(out.contains("xy"), "{out:?}");
        // Every escape left is one of our SGR colour codes.
        for (i, _) in out.match_indices('\x1b') {
            let rest = &out[i..];
            let end = rest.find('m').expect("an SGR sequence");
            assert!(
                rest[2..end].chars().all(|c| c.is_ascii_digit() || c == ';')
                    && rest.starts_with("\x1b["),
                "{:?}",
                &rest[..end + 1]
            );
        }
        let mut plain = HumanWriter::new(Vec::new(), false);
        plain.event(&Event::AgentMessage {
            message_id: "m".into(),
            text: evil.into(),
            phase: None,
        });
        let out = String::from_utf8(plain.out).unwrap();
        assert!(!out.contains('\x1b'), "{out:?}");
    }

    #[test]
    fn thousands() {
        assert_eq!(super::group_thousands(1234567), "1,234,567");
        assert_eq!(super::group_thousands(12), "12");
    }
}
