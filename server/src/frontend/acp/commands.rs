//! Slash commands: advertised with `available_commands_update`, received as prompt text.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ConfigOptionUpdate, SessionUpdate, StopReason,
    UnstructuredCommandInput,
};
use interpreter_protocol::InputItem;
use tokio_util::sync::CancellationToken;

use super::AcpSession;
use super::handlers::apply_settings;
use crate::agent::Session;
use crate::harness;

pub enum Outcome {
    /// Handled here; the prompt ends with this reason.
    Done(StopReason),
    /// Run this input as a normal turn.
    Run(Vec<InputItem>),
}

const INIT_PROMPT: &str = "\
Create or update AGENTS.md at the root of this repository: concise instructions for coding \
agents working here. Explore first (build files, test setup, layout, conventions, CI). Cover: \
how to build, run the tests (a single test too) and lint; the code layout in a few lines; \
conventions a newcomer would get wrong. Keep it under 60 lines, no generic advice. Write the \
file with apply_patch.";

const REVIEW_PROMPT: &str = "\
Review the uncommitted changes in this repository (run `git status` and `git diff HEAD`; \
include untracked files). Report concrete findings only: bugs, missing error handling, \
broken tests, security problems, and unclear code, each as `path:line: finding` with a \
one-line fix. Say plainly if you find nothing worth changing. Do not edit files.";

pub fn available(skills: &[crate::skills::Skill]) -> Vec<AvailableCommand> {
    let builtin = ["harness", "model", "compact", "init", "review", "status"];
    let hint = |h: &str| {
        Some(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new(h),
        ))
    };
    let mut list = vec![
        AvailableCommand::new(
            "harness",
            format!("Switch the harness ({})", harness::HARNESSES.join(", ")),
        )
        .input(hint("harness name")),
        AvailableCommand::new("model", "Switch the model for the next turn")
            .input(hint("model name")),
        AvailableCommand::new("compact", "Summarize the conversation to free context"),
        AvailableCommand::new(
            "init",
            "Write an AGENTS.md with instructions for this repository",
        ),
        AvailableCommand::new("review", "Review the working-tree diff")
            .input(hint("optional focus")),
        AvailableCommand::new(
            "status",
            "Show the session's model, mode, harness and token use",
        ),
    ];
    // A skill named like a built-in command stays reachable by the model, not by `/`.
    list.extend(
        skills
            .iter()
            .filter(|s| !builtin.contains(&s.name.as_str()))
            .map(|s| {
                let mut d: String = s.description.chars().take(200).collect();
                if d.len() < s.description.len() {
                    d.push('…');
                }
                AvailableCommand::new(s.name.clone(), format!("Skill: {d}"))
                    .input(hint("arguments"))
            }),
    );
    list
}

pub async fn handle(
    s: &AcpSession,
    agent: &mut Session,
    input: Vec<InputItem>,
    token: &CancellationToken,
) -> Result<Outcome, String> {
    let Some(InputItem::Text { text }) = input.first() else {
        return Ok(Outcome::Run(input));
    };
    let text = text.clone();
    let trimmed = text.trim_start();
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Ok(Outcome::Run(input));
    };
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest.trim(), ""),
    };
    let say = |t: &str| s.translator.agent_text(t, None);
    match name {
        "harness" | "model" => {
            if args.is_empty() {
                let st = s.settings();
                say(&format!(
                    "Current {name}: `{}`.",
                    if name == "harness" {
                        st.harness
                    } else {
                        st.model
                    }
                ));
                return Ok(Outcome::Done(StopReason::EndTurn));
            }
            let result = s
                .settings
                .lock()
                .map(|mut st| st.set(name, args))
                .unwrap_or(Ok(()));
            if let Err(e) = result {
                say(&e);
                return Ok(Outcome::Done(StopReason::EndTurn));
            }
            apply_settings(s, agent)?;
            s.translator
                .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    s.settings().config_options(),
                )));
            say(&format!(
                "{name} set to `{args}`; it applies from the next message."
            ));
            Ok(Outcome::Done(StopReason::EndTurn))
        }
        "status" => {
            let st = s.settings();
            let u = agent.total_usage();
            say(&format!(
                "**Session** `{}`\n\n- cwd: `{}`\n- provider: `{}`\n- model: `{}`\n- harness: `{}`\n- mode: `{}`\n- reasoning effort: `{}`\n- tokens: {} in ({} cached), {} out\n",
                s.id,
                s.cwd.display(),
                st.provider,
                st.model,
                st.harness,
                st.mode,
                st.effort,
                u.input_tokens,
                u.cached_input_tokens,
                u.output_tokens
            ));
            Ok(Outcome::Done(StopReason::EndTurn))
        }
        "compact" => match agent.compact(token).await {
            // The compaction events tell the client; nothing more to say.
            Ok(_) => Ok(Outcome::Done(StopReason::EndTurn)),
            Err(_) if token.is_cancelled() => Ok(Outcome::Done(StopReason::Cancelled)),
            Err(e) => Err(e),
        },
        "init" => Ok(Outcome::Run(with_text(input, INIT_PROMPT, args))),
        "review" => Ok(Outcome::Run(with_text(input, REVIEW_PROMPT, args))),
        _ => match agent.expand_skill(&text) {
            Some(expanded) => {
                let mut input = input;
                input[0] = InputItem::Text { text: expanded };
                Ok(Outcome::Run(input))
            }
            None => Ok(Outcome::Run(input)),
        },
    }
}

fn with_text(mut input: Vec<InputItem>, prompt: &str, args: &str) -> Vec<InputItem> {
    let text = if args.is_empty() {
        prompt.to_string()
    } else {
        format!("{prompt}\n\nFocus: {args}")
    };
    input[0] = InputItem::Text { text };
    input
}
