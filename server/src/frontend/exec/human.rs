//! Human-readable exec transcript, written to stderr. The final answer goes to stdout
//! separately (or the diff, with `--diff`).

use interpreter_protocol::{
    Event, PlanStatus, SessionSettings, ToolKind, ToolStatus, TurnEndReason,
};
use std::collections::HashMap;
use std::io::Write;

pub struct HumanWriter<W: Write> {
    out: W,
    color: bool,
    commands: HashMap<String, (String, ToolKind)>,
    pub last_message: Option<String>,
    /// To say what a settings change changed.
    settings: Option<SessionSettings>,
}

impl<W: Write> HumanWriter<W> {
    pub fn new(out: W, color: bool) -> Self {
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

    pub fn header(&mut self, rows: &[(&str, String)], prompt: &str) {
        let mut s = format!("interpreter v{}\n--------\n", env!("CARGO_PKG_VERSION"));
        for (k, v) in rows {
            s.push_str(&format!("{}: {v}\n", self.style("1", k)));
        }
        s.push_str("--------\n");
        s.push_str(&format!("{}\n{prompt}\n\n", self.style("36", "user")));
        let _ = self.out.write_all(s.as_bytes());
    }

    pub fn line(&mut self, s: &str) {
        let _ = writeln!(self.out, "{s}");
    }

    pub fn event(&mut self, e: &Event) {
        match e {
            Event::Reasoning { text, .. } if !text.trim().is_empty() => {
                let t = format!("thinking\n{}\n", text.trim());
                let t = self.style("2;3", &t);
                self.line(&t);
            }
            Event::AgentMessage { text, .. } => {
                self.last_message = Some(text.clone());
                let h = self.style("35", "interpreter");
                self.line(&format!("{h}\n{}\n", text.trim_end()));
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
            Event::ToolCallBegin(b) => {
                let label = match b.kind {
                    ToolKind::Execute => "exec",
                    ToolKind::Edit | ToolKind::Delete | ToolKind::Move => "apply patch",
                    ToolKind::Read => "read",
                    ToolKind::Search => "search",
                    ToolKind::Think => "plan",
                    ToolKind::Other => "tool",
                };
                let h = self.style("1", label);
                self.line(&format!("{h}\n{}", b.title));
                self.commands
                    .insert(b.call_id.clone(), (b.title.clone(), b.kind));
            }
            Event::ToolCallEnd(end) => {
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
                let show_output =
                    matches!(kind, ToolKind::Execute | ToolKind::Edit | ToolKind::Other)
                        || end.status != ToolStatus::Completed;
                if show_output && !end.output.trim().is_empty() {
                    let lines: Vec<&str> = end.output.trim_end().lines().collect();
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
            Event::PlanUpdated(plan) => {
                self.line(&self.style("1", "plan"));
                for i in &plan.items {
                    let mark = match i.status {
                        PlanStatus::Completed => "✓",
                        PlanStatus::InProgress => "→",
                        PlanStatus::Pending => "•",
                    };
                    self.line(&format!("  {mark} {}", i.step));
                }
                self.line("");
            }
            Event::Warning { message } => {
                let w = self.style("33", &format!("warning: {message}"));
                self.line(&w);
            }
            Event::SessionConfigured(c) => self.settings = Some(c.settings.clone()),
            Event::SettingsChanged(new) => {
                let old = self.settings.replace(new.clone());
                if old.as_ref().is_some_and(|o| o.harness != new.harness) {
                    self.line(&format!("harness: {}", new.harness));
                }
                if old.as_ref().is_some_and(|o| o.model != new.model) {
                    self.line(&format!("model: {}", new.model));
                }
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

    pub fn turn_ended(&mut self, reason: &TurnEndReason, tokens: u64) {
        match reason {
            TurnEndReason::Failed { message } => {
                let e = self.style("31", &format!("ERROR: {message}"));
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
    #[test]
    fn thousands() {
        assert_eq!(super::group_thousands(1234567), "1,234,567");
        assert_eq!(super::group_thousands(12), "12");
    }
}
