//! The wording of hook runs in the faces that show them as lines (the terminal, exec's
//! human output, ACP's message stream): a line when a hook starts with a status message, and
//! one when it ends with something to say (blocked, failed, stopped, or what it reported).
//! A hook that ran quietly says nothing.

use interpreter_protocol::{HookOutputKind, HookRun, HookRunStatus};

/// The line for a hook that started, when its handler has a status message.
pub fn started_line(run: &HookRun) -> Option<String> {
    let message = run.status_message.as_deref()?.trim();
    (!message.is_empty()).then(|| format!("{} hook: {message}…", run.event_name))
}

/// The line for a hook that ended, when it has something to say.
pub fn completed_line(run: &HookRun) -> Option<String> {
    let what = match run.status {
        HookRunStatus::Blocked => "blocked",
        HookRunStatus::Failed => "failed",
        HookRunStatus::Stopped => "stopped the turn",
        HookRunStatus::Completed | HookRunStatus::Running if run.entries.is_empty() => {
            return None;
        }
        HookRunStatus::Completed | HookRunStatus::Running => "said",
    };
    let texts: Vec<String> = run
        .entries
        .iter()
        .map(|e| match e.kind {
            HookOutputKind::Context => format!("added context: {}", one_line(&e.text)),
            _ => one_line(&e.text),
        })
        .collect();
    let command = one_line(&run.command);
    Some(format!(
        "{} hook `{command}` {what}: {}",
        run.event_name,
        texts.join("; ")
    ))
}

/// At most 300 characters of `text`, on one line.
fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &flat[..at]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interpreter_protocol::{HookOutputEntry, HookSource};

    fn run(status: HookRunStatus, entries: Vec<HookOutputEntry>) -> HookRun {
        HookRun {
            id: "k".into(),
            event_name: "PreToolUse".into(),
            source: HookSource::User,
            source_path: "/h/hooks.json".into(),
            command: "./check.sh".into(),
            status,
            status_message: None,
            started_at: 0,
            completed_at: Some(1),
            duration_ms: Some(1),
            entries,
        }
    }

    #[test]
    fn quiet_hooks_say_nothing_and_blocks_say_why() {
        assert_eq!(completed_line(&run(HookRunStatus::Completed, vec![])), None);
        let blocked = run(
            HookRunStatus::Blocked,
            vec![HookOutputEntry {
                kind: HookOutputKind::Feedback,
                text: "no rm\nplease".into(),
            }],
        );
        assert_eq!(
            completed_line(&blocked).unwrap(),
            "PreToolUse hook `./check.sh` blocked: no rm please"
        );
    }
}
