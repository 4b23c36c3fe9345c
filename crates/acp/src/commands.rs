//! Slash commands: advertised with `available_commands_update`, received as prompt text.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ConfigOptionUpdate, SessionUpdate,
    UnstructuredCommandInput,
};
use interpreter_protocol::{InputItem, Op, Restore, SkillInfo};

use super::AcpSession;
use super::answer::{Answer, answer, stop_reason};
use interpreter_core::agent::OpResult;
use interpreter_core::harness;
use interpreter_face::export as face_export;
use interpreter_face::review;
use interpreter_face::slash::{self, BUILTINS, Command};

pub(super) enum Outcome {
    /// Handled here; the prompt ends with this answer.
    Done(Answer),
    /// Run this input as a normal turn.
    Run(Vec<InputItem>),
}

/// The commands ACP offers: the built-ins that make sense in an editor, then the skills.
const OFFERED: &[&str] = &[
    "harness", "model", "compact", "undo", "rewind", "init", "review", "status", "mcp", "export",
];

pub(super) fn available(skills: &[SkillInfo]) -> Vec<AvailableCommand> {
    let mut list: Vec<AvailableCommand> = OFFERED
        .iter()
        .filter_map(|name| BUILTINS.iter().find(|b| b.name == *name))
        .map(|b| {
            let description = if b.name == "harness" {
                format!("{} ({})", b.description, harness::names().join(", "))
            } else {
                b.description.to_string()
            };
            let mut c = AvailableCommand::new(b.name, description);
            if let Some(hint) = b.input {
                c = c.input(hint_input(hint));
            }
            c
        })
        .collect();
    // A skill named like a built-in command stays reachable by the model, not by `/`.
    list.extend(
        skills
            .iter()
            .filter(|s| !BUILTINS.iter().any(|b| b.name == s.name))
            .map(|s| {
                let mut d: String = s.description.chars().take(200).collect();
                if d.len() < s.description.len() {
                    d.push('…');
                }
                let kind = if s.command { "Command" } else { "Skill" };
                let hint = s.argument_hint.as_deref().unwrap_or("arguments");
                AvailableCommand::new(s.name.clone(), format!("{kind}: {d}"))
                    .input(hint_input(hint))
            }),
    );
    list
}

fn hint_input(hint: &str) -> Option<AvailableCommandInput> {
    Some(AvailableCommandInput::Unstructured(
        UnstructuredCommandInput::new(hint),
    ))
}

pub(super) async fn handle(s: &AcpSession, input: Vec<InputItem>) -> Result<Outcome, String> {
    let Some(InputItem::Text { text }) = input.first() else {
        return Ok(Outcome::Run(input));
    };
    let skills = s
        .translator
        .view
        .lock()
        .ok()
        .and_then(|v| v.as_ref().map(|v| v.skills.clone()))
        .unwrap_or_default();
    let Some(command) = slash::parse(text, &skills) else {
        return Ok(Outcome::Run(input));
    };
    let say = |t: &str| s.translator.agent_text(t, None);
    let done = Ok(Outcome::Done(Answer::end_turn()));
    match command {
        Command::Harness(arg) | Command::Model(arg) => {
            let name = if matches!(command, Command::Harness(_)) {
                "harness"
            } else {
                "model"
            };
            say(&show_or_set(s, name, arg));
            done
        }
        Command::Status => {
            say(&status(s));
            done
        }
        Command::Mcp => {
            say(&mcp_text(s));
            done
        }
        Command::Export(file) => {
            say(&export(s, file).await);
            done
        }
        // Goal turns start on their own, outside any `session/prompt`: not for ACP yet.
        Command::Goal(_) => {
            say(
                "Goals run in the terminal, `interpreter exec --goal` and the app-server; not in ACP yet.",
            );
            done
        }
        Command::Compact => {
            let stop = stop_reason(s.handle.submit(Op::Compact).done().await)?;
            Ok(Outcome::Done(Answer { stop, meta: None }))
        }
        Command::Undo(arg) => match slash::undo_turns(arg) {
            // The report (`Event::Undone`) or the refusal (`Event::Error`) reaches the client
            // as agent text through the translator; the report also rides in `_meta`.
            Ok(turns) => undo_answer(
                s.handle
                    .submit(Op::Undo {
                        turns,
                        restore: Restore::Both,
                    })
                    .done()
                    .await,
            ),
            Err(e) => {
                say(&e);
                done
            }
        },
        Command::Rewind(arg) => rewind(s, arg).await,
        Command::Review(args) => match review_prompt(s, args).await {
            Ok(prompt) => {
                let mut input = input.clone();
                input[0] = InputItem::Text { text: prompt };
                Ok(Outcome::Run(input))
            }
            Err(e) => {
                say(&format!("/review: {e}"));
                done
            }
        },
        Command::Init(_) => {
            let mut input = input.clone();
            if let Some(prompt) = slash::prompt_for(&command) {
                input[0] = InputItem::Text { text: prompt };
            }
            Ok(Outcome::Run(input))
        }
        Command::Skill { name, args } => {
            let mut input = input.clone();
            input[0] = InputItem::Skill {
                name: name.to_string(),
                args: args.to_string(),
            };
            Ok(Outcome::Run(input))
        }
        // Not offered in ACP (the client has its own): plain text for the model.
        Command::Mode(_) | Command::New | Command::Resume(_) | Command::Quit => {
            Ok(Outcome::Run(input))
        }
    }
}

/// `/harness` or `/model`: the current one without an argument, else switch to it; the answer.
fn show_or_set(s: &AcpSession, name: &str, arg: &str) -> String {
    if arg.is_empty() {
        let st = s.settings();
        let current = if name == "harness" {
            st.harness
        } else {
            st.model
        };
        return format!("Current {name}: `{current}`.");
    }
    if let Err(e) = s.set_option(name, arg) {
        return e;
    }
    s.translator
        .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            s.settings().config_options(),
        )));
    format!("{name} set to `{arg}`; it applies from the next message.")
}

/// `/mcp`: the servers as the session last reported them.
fn mcp_text(s: &AcpSession) -> String {
    let servers = s
        .translator
        .view
        .lock()
        .ok()
        .and_then(|v| v.as_ref().map(|v| v.mcp_servers.clone()))
        .unwrap_or_default();
    interpreter_face::mcp::servers_text(&servers)
}

/// `/export [file]`: the session written beside the session's files (off the dispatch loop);
/// where it went, or why not, as the answer.
/// `/review [base BRANCH | commit SHA] [focus]`: the target's diff by the agent's own confined
/// git, in the review prompt; an error (no model request) for a bad target.
async fn review_prompt(s: &AcpSession, args: &str) -> Result<String, String> {
    let (target, focus) = review::parse_slash(args)?;
    let (cwd, t) = (s.cwd.clone(), target.clone());
    let gathered = tokio::task::spawn_blocking(move || {
        review::gather(&t, |a| interpreter_core::sandbox::git::run(&cwd, a, None))
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))?;
    Ok(review::prompt(
        &target,
        &gathered,
        &focus,
        review::Answer::Markdown,
    ))
}

async fn export(s: &AcpSession, file: &str) -> String {
    // The home the sessions' logs are kept in, as the trust answers use it.
    let (home, id) = (interpreter_core::config::home_dir(), s.id.clone());
    let target = face_export::target(&s.cwd, file, &s.id);
    let done = tokio::task::spawn_blocking(move || {
        let sessions = interpreter_core::sessions::Sessions::new(&home);
        let log = sessions
            .log_path(&id)
            .ok_or_else(|| format!("session `{id}` has no log to export yet"))?;
        let e = sessions.export(&log).map_err(|e| format!("{e:#}"))?;
        face_export::write(&e, face_export::Format::of_path(&target), &target)
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()));
    match done {
        Ok(written) => face_export::written_text(&written),
        Err(e) => format!("/export failed: {e}"),
    }
}

/// `/rewind`: the list of turns, or back to before one of them.
async fn rewind(s: &AcpSession, arg: &str) -> Result<Outcome, String> {
    let turns = s
        .translator
        .view
        .lock()
        .ok()
        .and_then(|v| v.as_ref().map(|v| v.undoable.clone()))
        .unwrap_or_default();
    match slash::rewind_target(arg, &turns) {
        Ok(Some((turn_id, restore))) => undo_answer(
            s.handle
                .submit(Op::Rewind { turn_id, restore })
                .done()
                .await,
        ),
        Ok(None) => {
            s.translator.agent_text(&slash::rewind_list(&turns), None);
            Ok(Outcome::Done(Answer::end_turn()))
        }
        Err(e) => {
            s.translator.agent_text(&e, None);
            Ok(Outcome::Done(Answer::end_turn()))
        }
    }
}

/// An undo that was refused was said (`Event::Error`); the prompt still ends normally.
fn undo_answer(r: OpResult) -> Result<Outcome, String> {
    match r {
        OpResult::Failed(_) => Ok(Outcome::Done(Answer::end_turn())),
        r => answer(r).map(Outcome::Done),
    }
}

fn status(s: &AcpSession) -> String {
    let st = s.settings();
    let u = s
        .translator
        .view
        .lock()
        .ok()
        .and_then(|v| v.as_ref().map(|v| v.total_usage()))
        .unwrap_or_default();
    format!(
        "**Session** `{}`\n\n- cwd: `{}`\n- provider: `{}`\n- model: `{}`\n- harness: `{}`\n- mode: `{}`\n- reasoning effort: `{}`\n- tokens: {} in ({} cached), {} out\n",
        s.id,
        s.cwd.display(),
        st.provider,
        st.model,
        st.harness,
        st.mode.as_str(),
        st.effort_id(),
        u.input_tokens,
        u.cached_input_tokens,
        u.output_tokens
    )
}
