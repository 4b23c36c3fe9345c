//! `interpreter debug prompt`: the first request body a session would send, without sending it.

use interpreter_protocol::{Event, Op};
use std::path::PathBuf;

use interpreter_core::agent::{EventSink, SessionOptions, SessionStart};
use interpreter_core::config::{Config, Overrides};
use interpreter_core::sessions::Sessions;

use crate::output::{EXIT_CONFIG, fail};
use crate::session::drain_queued;

/// `interpreter debug prompt`: the exact first request body, on stdout.
pub async fn debug_prompt(
    overrides: Overrides,
    harness: Option<String>,
    cd: Option<PathBuf>,
    prompt: Option<String>,
) -> i32 {
    let mut o = overrides;
    o.harness = harness;
    let mut config = match Config::load(&o) {
        Ok(c) => c,
        Err(e) => return fail(EXIT_CONFIG, &format!("{e:#}")),
    };
    let cwd = cd.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    // Printing a body needs no key: use a placeholder so a missing key is not an error here.
    if config.provider.resolve_api_key().is_err() {
        config.provider.api_key = Some("unset".into());
    }
    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions {
        persist: false,
        ..SessionOptions::new(config, cwd, events)
    };
    let handle = match Sessions::open(opts, SessionStart::New { id: None }).await {
        Ok(h) => h,
        Err(e) => return fail(1, &e.to_string()),
    };
    let _ = handle
        .submit(Op::PreviewRequest {
            prompt: prompt.unwrap_or_else(|| "hello".into()),
        })
        .done()
        .await;
    let (mut harness, mut preview) = (String::new(), None);
    drain_queued(&mut rx, |e| match e {
        // The first request is the one printed, with the harness it was made for.
        _ if preview.is_some() => {}
        Event::SessionConfigured(c) => harness = c.settings.harness,
        Event::RequestPreview {
            body,
            prompt_tokens,
            tool_tokens,
        } => preview = Some((body, prompt_tokens, tool_tokens)),
        _ => {}
    });
    let Some((body, prompt_tokens, tool_tokens)) = preview else {
        return fail(1, "the session did not produce a request");
    };
    eprintln!(
        "harness {harness}: system prompt and initial context ≈ {prompt_tokens} tokens, tool schemas ≈ {tool_tokens} tokens, whole body ≈ {} tokens (4 bytes per token)",
        interpreter_core::tools::truncate::approx_tokens(&body.to_string())
    );
    match serde_json::to_string_pretty(&body) {
        Ok(t) => {
            println!("{t}");
            0
        }
        Err(e) => fail(1, &e.to_string()),
    }
}
