//! One turn: its events written as they come, approval requests refused, and its end.

use interpreter_protocol::{
    ApprovalDecision, Event, InputItem, Op, TokenUsage, TurnEndReason, TurnEnded,
};

use interpreter_core::agent::{OpResult, SessionHandle};
use interpreter_face::view::SessionView;

use crate::ExecOptions;
use crate::output::Output;
use crate::session::{Run, drain_queued};

/// Runs the turn, writing its events as they come. Nobody can be asked in exec: approval
/// requests are refused. Ctrl+C or SIGTERM interrupts the turn.
pub(crate) async fn drive_turn(
    run: &mut Run,
    out: &mut Output,
    input: Vec<InputItem>,
) -> TurnEnded {
    let ticket = run.handle.submit(Op::UserInput { items: input });
    spawn_signal_handler(run.handle.clone());
    let turn_id = ticket.id.clone();
    let done = ticket.done();
    tokio::pin!(done);
    let result = loop {
        tokio::select! {
            Some(e) = run.rx.recv() => on_event(&run.handle, &mut run.view, out, &e),
            r = &mut done => break r,
        }
    };
    drain_queued(&mut run.rx, |e| {
        on_event(&run.handle, &mut run.view, out, &e)
    });
    match result {
        OpResult::Turn(ended) => ended,
        OpResult::Done | OpResult::Undone(_) | OpResult::Failed(_) => TurnEnded {
            turn_id,
            reason: TurnEndReason::Failed {
                message: "the session ended before the turn did".into(),
            },
        },
    }
}

/// Observes and writes one event of a turn. The only place exec answers an approval request:
/// nobody can be asked, so it is refused.
pub(crate) fn on_event(
    handle: &SessionHandle,
    view: &mut SessionView,
    out: &mut Output,
    e: &Event,
) {
    view.observe(e);
    if let Event::ApprovalRequested(req) = e {
        let _ = handle.submit(Op::Approval {
            call_id: req.call_id.clone(),
            decision: ApprovalDecision::Reject,
        });
    }
    out.event(e);
}

/// Writes one turn's end with its usage and `-o FILE`; the exit code.
pub(crate) fn finish_turn(
    args: &ExecOptions,
    out: &mut Output,
    ended: &TurnEnded,
    usage: TokenUsage,
) -> i32 {
    match out {
        Output::Json(w) => w.turn_ended(&ended.reason, usage),
        Output::Human(w) => w.turn_ended(
            &ended.reason,
            usage.input_tokens.saturating_sub(usage.cached_input_tokens) + usage.output_tokens,
        ),
    }
    let completed = matches!(
        ended.reason,
        TurnEndReason::Completed | TurnEndReason::MaxTokens | TurnEndReason::Refusal
    );
    let last = out.last_message();
    if completed && let Some(path) = &args.output_last_message {
        if last.is_none() {
            eprintln!("warning: no final message to write to {}", path.display());
        }
        if let Err(e) = std::fs::write(path, last.unwrap_or_default()) {
            eprintln!("warning: could not write {}: {e}", path.display());
        }
    }
    if completed { 0 } else { 1 }
}

/// Ctrl+C or SIGTERM interrupts the running turn.
pub(crate) fn spawn_signal_handler(handle: SessionHandle) {
    tokio::spawn(async move {
        let Ok(mut stops) = interpreter_core::platform::StopSignals::new() else {
            return;
        };
        stops.recv().await;
        let _ = handle.submit(Op::Interrupt);
    });
}
