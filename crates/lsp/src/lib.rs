//! `interpreter lsp`: a companion language server that offers AI code actions.
//!
//! The editor's open buffers are the truth: `didOpen`/`didChange` feed ropes in
//! [`interpreter_text::documents`], applied in arrival order with no await in the handler.
//! A code action is a cheap `Command`; `workspace/executeCommand` answers at once and runs an
//! agent turn in a spawned task whose file tools read buffers before disk and write into an
//! overlay ([`crate::overlay`]). The result returns as a versioned
//! `workspace/applyEdit` of minimal edits, rebased if the user kept typing.
//!
//! Liveness (tower-lsp-server reads stdin in one loop and runs at most a few handlers at a
//! time): no handler awaits the model, `applyEdit` or any other client request. Spawned tasks
//! do that, with timeouts. Only this module knows LSP types; stdout carries LSP frames only.
//!
//! On `tower-lsp-server` 0.23.0 (pinned), the maintained fork of `tower-lsp`: tower-lsp 0.20 is
//! stuck on lsp-types 0.94 and has no `window/workDoneProgress/create`; the fork is tokio-native
//! like the core and ships `Client::create_work_done_progress`. 0.23.0 rather than the 0.24
//! release candidate: a stable release, and we need no LSP 3.18 types.
#![warn(missing_docs, unreachable_pub)]

mod actions;
mod apply;
mod convert;
pub mod framing;
mod job;
mod overlay;
mod server;
mod settings;
mod state;

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, FutureExt};
use tower_lsp_server::jsonrpc::{Id, Request, Response};
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::{LspService, Server};

use interpreter_core::config::Overrides;
use state::Jobs;

tokio::task_local! {
    /// The JSON-RPC id of the request a handler is serving (tower-lsp-server does not pass
    /// it), so `$/cancelRequest` can reach work that outlives the request.
    static REQUEST_ID: Id;
}

/// The id of the request being handled, inside a handler.
fn current_request_id() -> Option<Id> {
    REQUEST_ID.try_with(Id::clone).ok()
}

/// Serves LSP on stdin/stdout until `exit` or end of input. Returns the exit status.
pub async fn run(overrides: Overrides) -> i32 {
    serve_on(overrides, tokio::io::stdin(), tokio::io::stdout()).await;
    0
}

/// Serves LSP on any byte streams until `exit` or end of input: stdin/stdout in production,
/// in-memory input in tests and in the fuzz target. Input goes through [`framing::Reframed`],
/// so a malformed frame is dropped rather than the end of the session.
pub async fn serve_on(
    overrides: Overrides,
    input: impl tokio::io::AsyncRead + Unpin,
    output: impl tokio::io::AsyncWrite,
) {
    let jobs = Arc::new(Jobs::default());
    let (service, socket) = LspService::new({
        let jobs = jobs.clone();
        move |client| server::Backend::new(client, overrides.clone(), jobs)
    });
    let service = Intercept {
        inner: service,
        jobs: jobs.clone(),
    };
    // More slots than the default 4 reduce head-of-line blocking; handlers never wait on the
    // client anyway.
    Server::new(framing::Reframed::new(input), output, socket)
        .concurrency_level(32)
        .serve(service)
        .await;
    jobs.cancel_all();
}

/// The error for a frame [`framing::Reframer`] refused, to the id it carried (else `null`).
fn rejected_answer(req: &Request) -> Response {
    let params = req.params().cloned().unwrap_or_default();
    let id = match params.get("id") {
        Some(serde_json::Value::Number(n)) => n.as_i64().map(Id::Number),
        Some(serde_json::Value::String(s)) => Some(Id::String(s.clone())),
        _ => None,
    }
    .unwrap_or(Id::Null);
    let code = match params.get("code").and_then(serde_json::Value::as_i64) {
        Some(-32600) => tower_lsp_server::jsonrpc::ErrorCode::InvalidRequest,
        _ => tower_lsp_server::jsonrpc::ErrorCode::ParseError,
    };
    let message = params
        .get("message")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("the message could not be read")
        .to_string();
    Response::from_error(
        id,
        tower_lsp_server::jsonrpc::Error {
            code,
            message: message.into(),
            data: None,
        },
    )
}

/// Sits in front of the language service: records each request's id for its handler and
/// routes cancellation (`$/cancelRequest`, `window/workDoneProgress/cancel`) to running jobs
/// as well as to tower-lsp-server's own pending requests.
struct Intercept<S> {
    inner: S,
    jobs: Arc<Jobs>,
}

impl<S> tower_service::Service<Request> for Intercept<S>
where
    S: tower_service::Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        match req.method() {
            // A frame the reframer refused: answered here, to its id when it had one.
            framing::REJECTED => futures::future::ready(Ok(Some(rejected_answer(&req)))).boxed(),
            "$/cancelRequest" => {
                if let Some(p) = req
                    .params()
                    .and_then(|p| serde_json::from_value::<lsp::CancelParams>(p.clone()).ok())
                {
                    let id = match p.id {
                        lsp::NumberOrString::Number(n) => Id::Number(n.into()),
                        lsp::NumberOrString::String(s) => Id::String(s),
                    };
                    self.jobs.cancel_request(&id);
                }
                self.inner.call(req).boxed()
            }
            "window/workDoneProgress/cancel" => {
                match req.params().and_then(|p| {
                    serde_json::from_value::<lsp::WorkDoneProgressCancelParams>(p.clone()).ok()
                }) {
                    Some(p) => {
                        self.jobs.cancel_progress(&p.token);
                    }
                    None => tracing::warn!("window/workDoneProgress/cancel without a token"),
                }
                futures::future::ready(Ok(None)).boxed()
            }
            _ => match req.id().cloned() {
                Some(id) => REQUEST_ID.scope(id, self.inner.call(req)).boxed(),
                None => self.inner.call(req).boxed(),
            },
        }
    }
}
