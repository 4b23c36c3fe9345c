//! What every exec command shares: the config from argv, the request checked before a session
//! exists, the session opened for it, and the one way queued events are drained.

use interpreter_protocol::{ApprovalPolicy, Event, InputItem, SandboxMode};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc::UnboundedReceiver;

use interpreter_core::agent::{
    EventSink, SessionError, SessionHandle, SessionOptions, SessionStart,
};
use interpreter_core::config::{Config, Overrides};
use interpreter_core::sessions::Sessions;
use interpreter_face::view::SessionView;

use crate::output::{EXIT_CONFIG, fail};
use crate::prompt::{read_prompt, split_session_commands};
use crate::{ExecOptions, Resume};

pub(crate) fn load_config(args: &ExecOptions, cwd: Option<&Path>) -> Result<Config, String> {
    let mut o: Overrides = args.overrides.clone();
    if let Some(cwd) = cwd {
        if args.trust {
            let home = interpreter_core::config::home_dir();
            let root = interpreter_core::config::project_root(cwd);
            interpreter_core::config::set_project_trust(
                &home,
                &root,
                interpreter_core::config::TrustLevel::Trusted,
            )
            .map_err(|e| format!("--trust: {e:#}"))?;
        }
        o.project = Some(cwd.to_path_buf());
    }
    o.model = args.model.clone();
    o.provider = args.provider.clone();
    o.harness = args.harness.clone();
    o.sandbox_mode = args.sandbox;
    // exec never asks: Codex's default approval policy for exec is `never`.
    o.default_approval_policy = Some(ApprovalPolicy::Never);
    if args.yolo {
        o.sandbox_mode = Some(SandboxMode::DangerFullAccess);
        o.approval_policy = Some(ApprovalPolicy::Never);
    }
    if args.review.is_some() {
        // A review reads; whatever the flags say, its commands cannot write.
        o.sandbox_mode = Some(SandboxMode::ReadOnly);
    }
    let mut config = Config::load(&o).map_err(|e| format!("{e:#}"))?;
    config.bypass_hook_trust = args.bypass_hook_trust;
    Ok(config)
}

/// What argv and stdin ask for, checked before any session exists.
pub(crate) struct Request {
    cwd: PathBuf,
    config: Config,
    resume_id: Option<String>,
    /// Leading `/harness` and `/model` lines.
    pub(crate) commands: Vec<(String, String)>,
    pub(crate) prompt: String,
    pub(crate) images: Vec<InputItem>,
    output_schema: Option<serde_json::Value>,
    /// `exec review`: the repository's top folder, for the findings' paths.
    pub(crate) review_root: Option<String>,
    /// What the header shows as the prompt (a review's prompt is long).
    pub(crate) shown: Option<String>,
}

/// Reads and checks the request; Err is the exit code, the error already printed.
pub(crate) fn prepare(args: &ExecOptions) -> Result<Request, i32> {
    let cwd = match &args.cd {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|e| fail(1, &format!("reading the current directory: {e}")))?,
    };
    if !cwd.is_dir() {
        return Err(fail(
            1,
            &format!("--cd {}: no such directory", cwd.display()),
        ));
    }
    if args.review.is_some() && (args.output_schema.is_some() || args.goal || args.diff) {
        return Err(fail(
            1,
            "review: --output-schema, --goal and --diff do not apply (a review answers in findings JSON and changes nothing)",
        ));
    }
    // A review's target is checked before anything else: a bad one asks no model.
    let review = match &args.review {
        Some(target) => Some(crate::review::prepare(&cwd, args, target)?),
        None => None,
    };
    if !args.skip_git_repo_check
        && !args.yolo
        && interpreter_core::workspace::agents_md::git_root(&cwd).is_none()
    {
        return Err(fail(
            1,
            "Not inside a trusted directory and --skip-git-repo-check was not specified.",
        ));
    }
    let config = load_config(args, Some(&cwd)).map_err(|e| fail(EXIT_CONFIG, &e))?;

    let (resume_id, positional) = resume_target(args, &config, &cwd)?;
    let (commands, prompt) = match &review {
        Some(r) => (Vec::new(), r.prompt.clone()),
        None => {
            let raw_prompt = read_prompt(positional).map_err(|e| fail(1, &e))?;
            split_session_commands(&raw_prompt)
        }
    };
    if prompt.trim().is_empty() && commands.is_empty() {
        return Err(fail(1, "No prompt provided via stdin."));
    }
    let output_schema = match &args.output_schema {
        _ if review.is_some() => Some(interpreter_face::review::output_schema()),
        Some(p) => Some(
            std::fs::read_to_string(p)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
                .map_err(|e| fail(1, &format!("--output-schema {}: {e}", p.display())))?,
        ),
        None => None,
    };
    let images = args
        .images
        .iter()
        .map(|img| {
            interpreter_core::model::image_data_url(img)
                .map(|url| InputItem::Image { url })
                .map_err(|e| format!("--image {e}"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(1, &e))?;
    Ok(Request {
        cwd,
        config,
        resume_id,
        commands,
        prompt,
        images,
        output_schema,
        shown: review.as_ref().map(|r| r.shown.clone()),
        review_root: review.map(|r| r.root),
    })
}

/// `exec resume ID|--last`: the session to continue and the prompt given with it.
fn resume_target(
    args: &ExecOptions,
    config: &Config,
    cwd: &Path,
) -> Result<(Option<String>, Option<String>), i32> {
    let Some(Resume {
        session_id,
        prompt,
        last,
    }) = &args.resume
    else {
        return Ok((None, args.prompt.clone()));
    };
    let id = if *last {
        Sessions::new(&config.home)
            .list(Some(
                &std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf()),
            ))
            .first()
            .map(|(m, _)| m.id.clone())
    } else {
        session_id.clone()
    };
    match id {
        Some(id) => Ok((Some(id), prompt.clone())),
        None => Err(fail(
            1,
            "no session to resume: give a session id or use --last in a directory with sessions",
        )),
    }
}

/// A session of this run: its handle, its events and what they said so far.
pub(crate) struct Run {
    pub(crate) handle: SessionHandle,
    pub(crate) rx: UnboundedReceiver<Event>,
    pub(crate) view: SessionView,
    /// Events from before the header was written, for the output once it is.
    pub(crate) backlog: Vec<Event>,
}

pub(crate) async fn open(args: &ExecOptions, req: &Request) -> Result<Run, i32> {
    let (events, mut rx) = EventSink::new();
    let opts = SessionOptions {
        extra_roots: args.add_dir.clone(),
        persist: !args.ephemeral,
        face: interpreter_core::agent::FaceAbilities {
            client: "interpreter-exec",
            ..Default::default()
        },
        output_schema: req.output_schema.clone(),
        ..SessionOptions::new(req.config.clone(), req.cwd.clone(), events)
    };
    let start = match &req.resume_id {
        Some(id) => SessionStart::Resume { id: id.clone() },
        None => SessionStart::New { id: None },
    };
    let handle = Sessions::open(opts, start).await.map_err(|e| match e {
        SessionError::MissingKey(k) => fail(EXIT_CONFIG, &k.to_string()),
        other => fail(1, &other.to_string()),
    })?;
    let mut backlog = Vec::new();
    let view = SessionView::configured(&mut rx, &mut backlog)
        .await
        .ok_or_else(|| fail(1, "the session ended before it was ready"))?;
    Ok(Run {
        handle,
        rx,
        view,
        backlog,
    })
}

/// Hands every event already queued on `rx` to `handle`, without waiting: the one way exec
/// drains its events.
pub(crate) fn drain_queued(rx: &mut UnboundedReceiver<Event>, mut handle: impl FnMut(Event)) {
    while let Ok(e) = rx.try_recv() {
        handle(e);
    }
}
