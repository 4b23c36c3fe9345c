//! The MCP server: `tools/list` and `tools/call` for `codex` and `codex-reply`, and the
//! threads they run. A thread is an ordinary stored session, so `interpreter resume ID`, ACP's
//! `session/load` and the app-server open it too.

use interpreter_core::agent::{
    EventSink, FaceAbilities, SessionError, SessionHandle, SessionOptions, SessionStart,
};
use interpreter_core::config::{Config, Overrides};
use interpreter_core::sessions::Sessions;
use interpreter_protocol::{ApprovalPolicy, Event, Op};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::params::{self, REPLY, START};
use crate::turn::{self, Reporter};

/// One open thread. Its events are locked by the call running a turn on it, so a second call
/// on a busy thread is told so instead of stealing the first one's events.
struct Thread {
    handle: SessionHandle,
    events: tokio::sync::Mutex<UnboundedReceiver<Event>>,
}

/// The server's state; rmcp runs each request on a task of its own, so calls on different
/// threads run at once.
#[derive(Clone)]
pub(crate) struct Server {
    overrides: Overrides,
    /// What a relative `cwd` is resolved against: the server's own folder.
    base: PathBuf,
    threads: Arc<Mutex<HashMap<String, Arc<Thread>>>>,
}

fn failed(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

impl Server {
    pub(crate) fn new(overrides: Overrides, base: PathBuf) -> Server {
        Server {
            overrides,
            base,
            threads: Arc::default(),
        }
    }

    /// Ends every open thread's session, so its log is complete.
    pub(crate) async fn shut_down(&self) {
        let threads: Vec<Arc<Thread>> = match self.threads.lock() {
            Ok(mut t) => t.drain().map(|(_, t)| t).collect(),
            Err(_) => return,
        };
        for t in threads {
            // A turn still running would hold the shutdown back: the client is gone.
            let _ = t.handle.submit(Op::Interrupt);
            let done = t.handle.submit(Op::Shutdown).done();
            if tokio::time::timeout(std::time::Duration::from_secs(10), done)
                .await
                .is_err()
            {
                tracing::warn!(
                    "mcp-server: thread {} did not shut down in 10 s",
                    t.handle.id()
                );
            }
        }
    }

    fn thread(&self, id: &str) -> Option<Arc<Thread>> {
        self.threads.lock().ok()?.get(id).cloned()
    }

    /// The client's roots as folders, when it declared the roots capability.
    #[allow(deprecated)] // roots (SEP-2577) are still how today's clients say where to work
    async fn roots(
        &self,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Option<Vec<PathBuf>>, String> {
        let declared = ctx
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        if !declared {
            return Ok(None);
        }
        let listed = ctx
            .peer
            .list_roots()
            .await
            .map_err(|e| format!("asking the client for its roots: {e}"))?;
        Ok(Some(
            listed
                .roots
                .iter()
                .filter_map(|r| file_uri_path(&r.uri))
                .collect(),
        ))
    }

    fn config(&self, mut o: Overrides, cwd: &Path, elicit: bool) -> Result<Config, String> {
        o.project = Some(cwd.to_path_buf());
        if !elicit {
            // Nobody can be asked: Codex's exec default.
            o.default_approval_policy = Some(ApprovalPolicy::Never);
        }
        Config::load(&o).map_err(|e| format!("loading the config: {e:#}"))
    }

    async fn open(
        &self,
        config: Config,
        cwd: PathBuf,
        start: SessionStart,
    ) -> Result<Arc<Thread>, String> {
        let (events, rx) = EventSink::new();
        let opts = SessionOptions {
            face: FaceAbilities {
                client: "interpreter-mcp-server",
                ..Default::default()
            },
            ..SessionOptions::new(config, cwd, events)
        };
        let handle = Sessions::open(opts, start).await.map_err(|e| match e {
            SessionError::NotFound(_) => "no such thread".to_string(),
            other => other.to_string(),
        })?;
        let thread = Arc::new(Thread {
            handle,
            events: tokio::sync::Mutex::new(rx),
        });
        if let Ok(mut t) = self.threads.lock() {
            t.insert(thread.handle.id().to_string(), thread.clone());
        }
        Ok(thread)
    }

    async fn start(&self, args: &JsonObject, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let start = match params::start(args, &self.base) {
            Ok(s) => s,
            Err(e) => return failed(e),
        };
        let cwd = match self.roots(&ctx).await {
            Ok(roots) => params::check_cwd(&start.cwd, roots.as_deref()),
            Err(e) => Err(e),
        };
        let cwd = match cwd {
            Ok(c) => c,
            Err(e) => return failed(e),
        };
        let mut o = self.overrides.clone();
        o.config.extend(start.config);
        o.profile = start.profile.or(o.profile);
        o.model = start.model.or(o.model);
        o.sandbox_mode = start.sandbox.or(o.sandbox_mode);
        o.approval_policy = start.approval_policy.or(o.approval_policy);
        let elicit = can_elicit(&ctx);
        let thread = match self.config(o, &cwd, elicit) {
            Ok(config) => self.open(config, cwd, SessionStart::New { id: None }).await,
            Err(e) => Err(e),
        };
        match thread {
            Ok(t) => run_on(&t, start.prompt, ctx, elicit).await,
            Err(e) => failed(format!("could not start a thread: {e}")),
        }
    }

    async fn reply(&self, args: &JsonObject, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let reply = match params::reply(args) {
            Ok(r) => r,
            Err(e) => return failed(e),
        };
        let elicit = can_elicit(&ctx);
        let thread = match self.thread(&reply.thread_id) {
            Some(t) => t,
            None => match self.resume(&reply.thread_id, &ctx, elicit).await {
                Ok(t) => t,
                Err(e) => return failed(format!("thread {:?}: {e}", reply.thread_id)),
            },
        };
        run_on(&thread, reply.prompt, ctx, elicit).await
    }

    /// A stored thread this process has not opened (one from before a restart).
    async fn resume(
        &self,
        id: &str,
        ctx: &RequestContext<RoleServer>,
        elicit: bool,
    ) -> Result<Arc<Thread>, String> {
        let plausible = !id.is_empty()
            && id.len() <= 128
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let home = interpreter_core::config::home_dir();
        let summary = plausible
            .then(|| Sessions::new(&home).summary(id))
            .flatten()
            .ok_or("no such thread")?;
        let roots = self.roots(ctx).await?;
        let cwd = params::check_cwd(&summary.meta.cwd, roots.as_deref())?;
        let config = self.config(self.overrides.clone(), &cwd, elicit)?;
        self.open(config, cwd, SessionStart::Resume { id: id.to_string() })
            .await
    }
}

fn can_elicit(ctx: &RequestContext<RoleServer>) -> bool {
    !ctx.peer.supported_elicitation_modes().is_empty()
}

async fn run_on(
    thread: &Thread,
    prompt: String,
    ctx: RequestContext<RoleServer>,
    elicit: bool,
) -> CallToolResult {
    let thread_id = thread.handle.id().to_string();
    let Ok(mut events) = thread.events.try_lock() else {
        return failed(format!(
            "thread {thread_id} is running another call; wait for its result"
        ));
    };
    let report = Reporter {
        peer: ctx.peer.clone(),
        request_id: ctx.id.clone(),
        thread_id,
        progress: ctx.meta.get_progress_token(),
        elicit,
    };
    turn::run(&thread.handle, &mut events, prompt, &report, ctx.ct.clone()).await
}

/// `file:///a/b%20c` as `/a/b c`; None for other schemes.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("interpreter-mcp-server", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(params::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match &*request.name {
            START => self.start(&args, context).await,
            REPLY => self.reply(&args, context).await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {other:?}: this server offers `{START}` and `{REPLY}`"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(
            file_uri_path("file:///tmp/a%20b"),
            Some(PathBuf::from("/tmp/a b"))
        );
        assert_eq!(
            file_uri_path("file://localhost/srv"),
            Some(PathBuf::from("/srv"))
        );
        assert_eq!(file_uri_path("https://x/y"), None);
    }
}
