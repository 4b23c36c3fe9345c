//! Slash commands and skill invocations: the one parser every face uses. A face parses what
//! the user typed, then turns the command into `Op`s or input items; which commands a face
//! offers is its own choice (exec takes only `/harness` and `/model` lines).

use interpreter_protocol::{InputItem, Restore, SkillInfo, UndoableTurn};

/// A built-in command: its name and what it does, for completion lists.
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    /// What goes after the name, when it takes something.
    pub input: Option<&'static str>,
}

/// Every built-in command, in the order lists show them.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "harness",
        description: "Switch the harness",
        input: Some("harness name"),
    },
    Builtin {
        name: "model",
        description: "Switch the model for the next turn",
        input: Some("model name"),
    },
    Builtin {
        name: "mode",
        description: "Switch the permission mode (read-only, auto, full-access)",
        input: Some("mode"),
    },
    Builtin {
        name: "compact",
        description: "Summarize the conversation to free context",
        input: None,
    },
    Builtin {
        name: "undo",
        description: "Take back the last turn: its file changes and its messages",
        input: Some("turns"),
    },
    Builtin {
        name: "rewind",
        description: "Go back to before an earlier prompt: its files, its conversation, or both",
        input: Some("turn"),
    },
    Builtin {
        name: "goal",
        description: "Work toward an objective turn after turn (or pause, resume, clear)",
        input: Some("objective"),
    },
    Builtin {
        name: "init",
        description: "Write an AGENTS.md with instructions for this repository",
        input: None,
    },
    Builtin {
        name: "review",
        description: "Review changes: uncommitted, a branch's or a commit's; then a focus",
        input: Some("base BRANCH|commit SHA"),
    },
    Builtin {
        name: "status",
        description: "Show the session's model, mode, harness and token use",
        input: None,
    },
    Builtin {
        name: "mcp",
        description: "Show MCP servers: status, tools and auth",
        input: None,
    },
    Builtin {
        name: "export",
        description: "Write the session to a file: Markdown, or HTML for a .html name",
        input: Some("file"),
    },
    Builtin {
        name: "new",
        description: "Start a new session",
        input: None,
    },
    Builtin {
        name: "resume",
        description: "Continue an earlier session of this folder",
        input: Some("session id"),
    },
    Builtin {
        name: "quit",
        description: "Leave",
        input: None,
    },
];

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command<'a> {
    /// `/harness [name]`: switch, or say which is in use when no name is given.
    Harness(&'a str),
    /// `/model [name]`.
    Model(&'a str),
    /// `/mode [read-only|auto|full-access]`.
    Mode(&'a str),
    Compact,
    /// `/undo [turns]`: the text after the name (a number of turns, or empty for one).
    Undo(&'a str),
    /// `/rewind [turn [code|conversation|both]]`: the text after the name.
    Rewind(&'a str),
    /// `/goal objective|pause|resume|clear`.
    Goal(&'a str),
    /// `/init [focus]`: a turn with the AGENTS.md prompt.
    Init(&'a str),
    /// `/review [base BRANCH | commit SHA] [focus]`: the text after the name
    /// (`review::parse_slash` reads it).
    Review(&'a str),
    Status,
    /// `/mcp`: the session's MCP servers.
    Mcp,
    /// `/export [file]`: the file to write, empty for `<session-id>.md`.
    Export(&'a str),
    New,
    Resume(&'a str),
    Quit,
    /// `/<skill> args`.
    Skill {
        name: &'a str,
        args: &'a str,
    },
}

/// `/name args` at the start of `text`: the name (letters, digits, `-`, `_`, `:` and `.`)
/// and the rest, trimmed. `/usr/bin is broken` is no command: its name holds a `/`.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest.trim_end(), ""),
    };
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    valid.then_some((name, args))
}

/// The command `text` is, given the session's skills; None for plain text. A skill named
/// like a built-in stays reachable by the model, not by `/`.
pub fn parse<'a>(text: &'a str, skills: &[SkillInfo]) -> Option<Command<'a>> {
    let (name, args) = split(text)?;
    Some(match name {
        "harness" => Command::Harness(args),
        "model" => Command::Model(args),
        "mode" => Command::Mode(args),
        "compact" => Command::Compact,
        "undo" => Command::Undo(args),
        "rewind" => Command::Rewind(args),
        "goal" => Command::Goal(args),
        "init" => Command::Init(args),
        "review" => Command::Review(args),
        "status" => Command::Status,
        "mcp" => Command::Mcp,
        "export" => Command::Export(args),
        "new" => Command::New,
        "resume" => Command::Resume(args),
        "quit" | "exit" => Command::Quit,
        _ if skills.iter().any(|s| s.name == name) => Command::Skill { name, args },
        _ => return None,
    })
}

/// The op `/goal <args>` asks for: `pause`, `resume`, `clear`, or a new objective. An error
/// for no words at all.
pub fn goal_op(arg: &str) -> Result<interpreter_protocol::Op, String> {
    use interpreter_protocol::{GoalStatus, Op};
    let set = |status| Op::SetGoal {
        objective: None,
        status: Some(status),
        token_budget: None,
    };
    Ok(match arg.trim() {
        "" => return Err("usage: /goal <objective> | pause | resume | clear".into()),
        "pause" => set(GoalStatus::Paused),
        "resume" => set(GoalStatus::Active),
        "clear" => Op::ClearGoal,
        objective => Op::SetGoal {
            objective: Some(objective.to_string()),
            status: Some(GoalStatus::Active),
            token_budget: None,
        },
    })
}

/// A goal status in words.
pub fn goal_status_name(status: interpreter_protocol::GoalStatus) -> &'static str {
    use interpreter_protocol::GoalStatus;
    match status {
        GoalStatus::Active => "active",
        GoalStatus::Paused => "paused",
        GoalStatus::Blocked => "blocked",
        GoalStatus::UsageLimited => "stopped at the usage limit",
        GoalStatus::BudgetLimited => "stopped at its token budget",
        GoalStatus::Complete => "complete",
    }
}

/// The number of turns `/undo` was given: 1 when empty; an error for anything but a
/// positive number.
pub fn undo_turns(arg: &str) -> Result<u32, String> {
    if arg.trim().is_empty() {
        return Ok(1);
    }
    match arg.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "/undo takes a number of turns, not `{}`",
            arg.trim()
        )),
    }
}

/// What `/rewind` was given: nothing (list the turns), or a turn (its number in
/// [`rewind_list`], oldest first, or its id) and what goes back (both when unsaid).
pub fn rewind_target(
    arg: &str,
    turns: &[UndoableTurn],
) -> Result<Option<(String, Restore)>, String> {
    let mut words = arg.split_whitespace();
    let Some(which) = words.next() else {
        return Ok(None);
    };
    let restore = match words.next() {
        None | Some("both") => Restore::Both,
        Some("code") => Restore::Code,
        Some("conversation") => Restore::Conversation,
        Some(other) => {
            return Err(format!(
                "/rewind takes code, conversation or both after the turn, not `{other}`"
            ));
        }
    };
    if let Some(extra) = words.next() {
        return Err(format!("/rewind: unexpected `{extra}`"));
    }
    let turn = match which.parse::<usize>() {
        Ok(n) if (1..=turns.len()).contains(&n) => &turns[n - 1],
        Ok(n) => {
            return Err(match turns.len() {
                0 => "there is no turn to rewind to".to_string(),
                k => format!("/rewind {n}: pick a turn from 1 to {k} (send /rewind to list them)"),
            });
        }
        Err(_) => turns
            .iter()
            .find(|t| t.turn_id == which)
            .ok_or_else(|| format!("/rewind: no turn `{which}` can be rewound to"))?,
    };
    Ok(Some((turn.turn_id.clone(), restore)))
}

/// The turns `/rewind` can go back to, numbered oldest first, each with its prompt's first
/// line.
pub fn rewind_list(turns: &[UndoableTurn]) -> String {
    if turns.is_empty() {
        return "There is no turn to rewind to since the session started or was last compacted."
            .to_string();
    }
    let mut s = String::from("Turns you can rewind to, oldest first:\n");
    for (i, t) in turns.iter().enumerate() {
        s.push_str(&format!("\n{}. {}", i + 1, prompt_line(t)));
        if !t.files {
            s.push_str(" (conversation only: no checkpoint of its files)");
        }
    }
    s.push_str(
        "\n\nSend `/rewind N` to go back to just before turn N (files and conversation), or \
         `/rewind N code` / `/rewind N conversation` for one of them.",
    );
    s
}

/// A turn's prompt as one short line, for lists.
pub fn prompt_line(t: &UndoableTurn) -> String {
    let line = t.prompt.trim().lines().next().unwrap_or("").trim();
    if line.is_empty() {
        return "(a goal turn)".to_string();
    }
    let mut short: String = line.chars().take(72).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

/// What an undo did, in words: the turns, then the files restored, removed and kept.
pub fn undo_text(r: &interpreter_protocol::UndoReport) -> String {
    let turns = match r.turn_ids.len() {
        1 => "the last turn".to_string(),
        n => format!("the last {n} turns"),
    };
    let mut s = if r.conversation {
        format!("Undid {turns}.")
    } else {
        format!("Put back the files of {turns}; the conversation keeps them.")
    };
    if r.restored.is_empty() && r.removed.is_empty() && r.skipped.is_empty() {
        s.push_str(" No file had changed.");
    }
    for p in &r.restored {
        s.push_str(&format!("\n- restored `{p}`"));
    }
    for p in &r.removed {
        s.push_str(&format!("\n- removed `{p}` (the turn created it)"));
    }
    for k in &r.skipped {
        s.push_str(&format!("\n- kept `{}`: {}", k.path, k.reason));
    }
    s
}

/// `text` as input, for faces without built-in commands (exec): a skill invocation when it
/// starts with `/<skill>`, whatever the skill is named, else the text as is.
pub fn input_for(text: &str, skills: &[SkillInfo]) -> InputItem {
    match split(text) {
        Some((name, args)) if skills.iter().any(|s| s.name == name) => InputItem::Skill {
            name: name.to_string(),
            args: args.to_string(),
        },
        _ => InputItem::Text {
            text: text.to_string(),
        },
    }
}

const INIT_PROMPT: &str = "\
Create or update AGENTS.md at the root of this repository: concise instructions for coding \
agents working here. Explore first (build files, test setup, layout, conventions, CI). Cover: \
how to build, run the tests (a single test too) and lint; the code layout in a few lines; \
conventions a newcomer would get wrong. Keep it under 60 lines, no generic advice. Write the \
file with your file-editing tool.";

/// The prompt `/init` runs, with the user's focus when given. (`/review` gathers its diff
/// first: `review.rs`.)
pub fn prompt_for(command: &Command<'_>) -> Option<String> {
    let (prompt, focus) = match command {
        Command::Init(f) => (INIT_PROMPT, *f),
        _ => return None,
    };
    Some(if focus.is_empty() {
        prompt.to_string()
    } else {
        format!("{prompt}\n\nFocus: {focus}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skills() -> Vec<SkillInfo> {
        vec![SkillInfo {
            name: "deploy".into(),
            description: "d".into(),
            argument_hint: None,
            command: false,
        }]
    }

    #[test]
    fn commands_skills_and_plain_text() {
        let s = skills();
        assert_eq!(
            parse("/harness kimi-code", &s),
            Some(Command::Harness("kimi-code"))
        );
        assert_eq!(parse("  /model  k3 \n", &s), Some(Command::Model("k3")));
        assert_eq!(parse("/compact", &s), Some(Command::Compact));
        assert_eq!(parse("/mcp", &s), Some(Command::Mcp));
        assert_eq!(parse("/export", &s), Some(Command::Export("")));
        assert_eq!(
            parse("/export out/s.html ", &s),
            Some(Command::Export("out/s.html"))
        );
        assert_eq!(
            parse("/deploy staging now", &s),
            Some(Command::Skill {
                name: "deploy",
                args: "staging now"
            })
        );
        assert_eq!(parse("/usr/bin is broken", &s), None);
        assert_eq!(parse("/nope x", &s), None);
        assert_eq!(parse("fix /harness", &s), None);
        assert_eq!(
            input_for("/deploy x", &s),
            InputItem::Skill {
                name: "deploy".into(),
                args: "x".into()
            }
        );
        assert_eq!(
            prompt_for(&Command::Init("tests")).unwrap(),
            format!("{INIT_PROMPT}\n\nFocus: tests")
        );
        assert_eq!(prompt_for(&Command::Review("base main")), None);
    }

    fn turns() -> Vec<UndoableTurn> {
        ["fix the bug\nand more", "", "add tests"]
            .iter()
            .enumerate()
            .map(|(i, p)| UndoableTurn {
                turn_id: format!("t{i}"),
                prompt: p.to_string(),
                files: i != 2,
            })
            .collect()
    }

    #[test]
    fn rewind_takes_a_number_or_an_id_then_what_goes_back() {
        let t = turns();
        assert_eq!(
            parse("/rewind 2 code", &[]),
            Some(Command::Rewind("2 code"))
        );
        assert_eq!(rewind_target("", &t), Ok(None));
        assert_eq!(
            rewind_target("1", &t),
            Ok(Some(("t0".to_string(), Restore::Both)))
        );
        assert_eq!(
            rewind_target("t2 conversation", &t),
            Ok(Some(("t2".to_string(), Restore::Conversation)))
        );
        assert_eq!(
            rewind_target("3 code", &t),
            Ok(Some(("t2".to_string(), Restore::Code)))
        );
        assert!(rewind_target("4", &t).unwrap_err().contains("from 1 to 3"));
        assert!(
            rewind_target("2 all", &t)
                .unwrap_err()
                .contains("not `all`")
        );
        assert!(
            rewind_target("t9", &t)
                .unwrap_err()
                .contains("no turn `t9`")
        );
        let list = rewind_list(&t);
        assert!(
            list.contains("\n1. fix the bug\n2. (a goal turn)\n3. add tests (conversation only")
        );
        assert!(rewind_list(&[]).starts_with("There is no turn"));
    }
}
