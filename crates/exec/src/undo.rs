//! `exec undo`: takes a stored session's last turns back.

use interpreter_protocol::{Event, Op};
use std::path::PathBuf;

use interpreter_core::agent::{EventSink, OpResult, SessionOptions, SessionStart};
use interpreter_core::sessions::Sessions;
use interpreter_face::slash;

use crate::output::{EXIT_CONFIG, fail};
use crate::session::{drain_queued, load_config};
use crate::{ExecOptions, Undo};

/// `exec undo`: opens the stored session in its own folder, undoes, and prints what was put
/// back (a JSON line with `--json`). Needs no key: no model is asked.
pub(crate) async fn undo(args: &ExecOptions, target: &Undo) -> i32 {
    let mut config = match load_config(args, None) {
        Ok(c) => c,
        Err(e) => return fail(EXIT_CONFIG, &e),
    };
    if config.provider.resolve_api_key().is_err() {
        config.provider.api_key = Some("unset".into());
    }
    let sessions = Sessions::new(&config.home);
    let id = if target.last {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
        sessions.list(Some(&cwd)).first().map(|(m, _)| m.id.clone())
    } else {
        target.session_id.clone()
    };
    let Some(id) = id else {
        return fail(
            1,
            "no session to undo: give a session id or use --last in a directory with sessions",
        );
    };
    let Some(summary) = sessions.summary(&id) else {
        return fail(1, &format!("no session `{id}`"));
    };
    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions::new(config, summary.meta.cwd.clone(), events);
    let handle = match Sessions::open(opts, SessionStart::Resume { id }).await {
        Ok(h) => h,
        Err(e) => return fail(1, &e.to_string()),
    };
    let result = handle
        .submit(Op::Undo {
            turns: target.turns.max(1),
            restore: interpreter_protocol::Restore::Both,
        })
        .done()
        .await;
    let _ = handle.submit(Op::Shutdown).done().await;
    let mut error = None;
    drain_queued(&mut rx, |e| {
        if let Event::Error { message } = e {
            error = Some(message);
        }
    });
    match result {
        OpResult::Undone(r) => {
            if args.json {
                let mut line = serde_json::to_value(&r).unwrap_or_default();
                line["type"] = "undo.completed".into();
                println!("{line}");
            } else {
                println!("{}", slash::undo_text(&r));
            }
            0
        }
        _ => fail(
            1,
            &error.unwrap_or_else(|| "the undo did not complete".into()),
        ),
    }
}
