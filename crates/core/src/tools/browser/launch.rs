//! Starting the session's browser: a headless Chromium in a process tree of its own (as an
//! MCP stdio server is: nothing it starts outlives the guard or the agent), with the key
//! variables out of its environment as for commands, a fresh profile in a temporary folder,
//! every request under `[web]` (`guard.rs`) and every connection through our proxy
//! (`proxy.rs`), and one page the tools drive over the DevTools protocol. Dropping a
//! [`Running`] kills the tree, then removes the folder.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::{Browser, Page};
use futures::StreamExt as _;

use super::guard::{self, Refusals};
use super::proxy::{self, Proxy};
use crate::tools::web::WebConfig;

/// The viewport pages are laid out in.
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 800;
/// How often the start waits for the DevTools port file.
const POLL: Duration = Duration::from_millis(50);
/// Lines of the browser's stderr an error shows at most.
const STDERR_LINES: usize = 8;

/// A started browser and its one page. Fields drop in order: the tasks, the connection, the
/// process tree (killed), the keeper, then the profile folder, once nothing writes to it.
pub(crate) struct Running {
    pub(crate) page: Page,
    /// The connection's handle (the guard holds another).
    _browser: Arc<Browser>,
    pub(crate) refusals: Arc<Refusals>,
    handler: tokio::task::JoinHandle<()>,
    guard: tokio::task::JoinHandle<()>,
    _proxy: Proxy,
    tree: Option<crate::tools::exec::ServerTree>,
    keeper: Option<tokio::process::Child>,
    dir: Option<tempfile::TempDir>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.guard.abort();
        self.handler.abort();
        drop(self.tree.take());
        drop(self.keeper.take());
        drop(self.dir.take());
    }
}

impl Running {
    /// The connection to the browser is gone: it exited or crashed.
    pub(crate) fn gone(&self) -> bool {
        self.handler.is_finished()
    }

    /// The last lines the browser wrote to stderr, for an error.
    pub(crate) fn stderr_tail(&self) -> String {
        self.dir
            .as_ref()
            .map(|d| tail(&d.path().join("stderr.log")))
            .unwrap_or_default()
    }
}

/// Starts `exe` headless and connects to it, within `cfg.timeout`.
pub(crate) async fn start(exe: &Path, cfg: &Arc<WebConfig>) -> Result<Running, String> {
    let dir = tempfile::Builder::new()
        .prefix("interpreter-browser-")
        .tempdir()
        .map_err(|e| format!("could not make the browser's profile folder: {e}"))?;
    let profile = dir.path().join("profile");
    let log_path = dir.path().join("stderr.log");
    let log = std::fs::File::create(&log_path)
        .and_then(|f| std::fs::create_dir(&profile).map(|()| f))
        .map_err(|e| format!("could not prepare {}: {e}", dir.path().display()))?;
    let refusals = Arc::new(Refusals::default());
    let proxy = proxy::start(cfg.clone())
        .await
        .map_err(|e| format!("could not open the browser's proxy: {e}"))?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.args(arguments(&profile, proxy.addr.port()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .kill_on_drop(true);
    // Keys we were given stay ours, as for commands (`tools::exec`).
    for var in crate::secrets::secret_env_vars() {
        cmd.env_remove(var);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let (keeper, tree) = crate::tools::exec::spawn_server(cmd, |mut cmd| {
        let child = cmd.spawn()?;
        let pid = child.id();
        Ok((child, pid))
    })
    .map_err(|e| format!("could not run {}: {e}", exe.display()))?;
    let mut partial = Partial {
        tree: Some(tree),
        keeper: Some(keeper),
        dir: Some(dir),
    };
    let waited = tokio::time::timeout(cfg.timeout, debugger_url(&profile, &mut partial.keeper));
    let url = match waited.await {
        Ok(Ok(url)) => url,
        Ok(Err(status)) => {
            return Err(format!(
                "{} exited ({status}) before opening its DevTools port{}",
                exe.display(),
                stderr_note(&log_path)
            ));
        }
        Err(_) => {
            return Err(format!(
                "{} did not open its DevTools port within {} s{}",
                exe.display(),
                cfg.timeout.as_secs(),
                stderr_note(&log_path)
            ));
        }
    };
    let connected = tokio::time::timeout(cfg.timeout, connect(&url, cfg, &refusals)).await;
    let (browser, handler, page, guard) = match connected {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return Err(format!("{e}{}", stderr_note(&log_path))),
        Err(_) => {
            return Err(format!(
                "the browser did not answer within {} s{}",
                cfg.timeout.as_secs(),
                stderr_note(&log_path)
            ));
        }
    };
    Ok(Running {
        page,
        _browser: browser,
        refusals,
        handler,
        guard,
        _proxy: proxy,
        tree: partial.tree.take(),
        keeper: partial.keeper.take(),
        dir: partial.dir.take(),
    })
}

/// What a start that fails part way leaves: killed and removed in order, as [`Running`].
struct Partial {
    tree: Option<crate::tools::exec::ServerTree>,
    keeper: Option<tokio::process::Child>,
    dir: Option<tempfile::TempDir>,
}

impl Drop for Partial {
    fn drop(&mut self) {
        drop(self.tree.take());
        drop(self.keeper.take());
        drop(self.dir.take());
    }
}

type Connected = (
    Arc<Browser>,
    tokio::task::JoinHandle<()>,
    Page,
    tokio::task::JoinHandle<()>,
);

async fn connect(
    url: &str,
    cfg: &Arc<WebConfig>,
    refusals: &Arc<Refusals>,
) -> Result<Connected, String> {
    let config = HandlerConfig {
        // Certificates are checked as webfetch checks them.
        ignore_https_errors: false,
        viewport: Some(Viewport {
            width: WIDTH,
            height: HEIGHT,
            ..Viewport::default()
        }),
        request_timeout: cfg.timeout,
        ..HandlerConfig::default()
    };
    let (browser, mut handler) = Browser::connect_with_config(url, config)
        .await
        .map_err(|e| format!("could not connect to the browser: {e}"))?;
    let handler = tokio::spawn(async move {
        while let Some(event) = handler.next().await {
            if let Err(e) = event {
                tracing::debug!("browser connection: {e}");
                if matches!(e, chromiumoxide::error::CdpError::Ws(_)) {
                    break;
                }
            }
        }
    });
    let browser = Arc::new(browser);
    let guard = match guard::start(browser.clone(), cfg.clone(), refusals.clone()).await {
        Ok(g) => g,
        Err(e) => {
            handler.abort();
            return Err(e);
        }
    };
    // The rules hold before the page loads anything.
    let page = match browser.new_page("about:blank").await {
        Ok(p) => p,
        Err(e) => {
            guard.abort();
            handler.abort();
            return Err(format!("could not open a page: {e}"));
        }
    };
    Ok((browser, handler, page, guard))
}

/// The browser's flags: headless, a private profile, no background traffic of its own, and
/// no way out but our proxy (loopback too; no QUIC, no UDP for WebRTC).
fn arguments(profile: &Path, proxy_port: u16) -> Vec<String> {
    let mut args = vec![
        "--headless".to_string(),
        format!("--user-data-dir={}", profile.display()),
        "--remote-debugging-address=127.0.0.1".into(),
        "--remote-debugging-port=0".into(),
        format!("--window-size={WIDTH},{HEIGHT}"),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        format!("--proxy-server=socks5://127.0.0.1:{proxy_port}"),
        "--proxy-bypass-list=<-loopback>".into(),
        "--disable-quic".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-default-apps".into(),
        "--disable-extensions".into(),
        "--disable-sync".into(),
        "--disable-breakpad".into(),
        "--disable-dev-shm-usage".into(),
        "--disable-features=BackForwardCache,Translate,MediaRouter,OptimizationHints".into(),
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
        "--metrics-recording-only".into(),
        "--mute-audio".into(),
        "--password-store=basic".into(),
        "--use-mock-keychain".into(),
    ];
    // Chromium's own sandbox refuses to start as root on Linux (containers, CI); there it is
    // turned off, and the page still runs in a renderer process of its own, not ours.
    if linux_root() {
        args.push("--no-sandbox".into());
    }
    args.push("about:blank".into());
    args
}

fn linux_root() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The browser's DevTools address, from the `DevToolsActivePort` file it writes in its
/// profile once it listens (port, then path); how it ended if it exits first (its keeper
/// exits with it).
async fn debugger_url(
    profile: &Path,
    keeper: &mut Option<tokio::process::Child>,
) -> Result<String, String> {
    let file = profile.join("DevToolsActivePort");
    loop {
        if let Some(Ok(Some(status))) = keeper.as_mut().map(tokio::process::Child::try_wait) {
            return Err(status.to_string());
        }
        if let Ok(text) = tokio::fs::read_to_string(&file).await {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next())
                && port.trim().parse::<u16>().is_ok()
                && path.starts_with('/')
            {
                return Ok(format!("ws://127.0.0.1:{}{}", port.trim(), path.trim()));
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

/// `: <its last stderr lines>` when it wrote any.
fn stderr_note(path: &Path) -> String {
    match tail(path) {
        t if t.is_empty() => String::new(),
        t => format!(". It said: {t}"),
    }
}

/// The last [`STDERR_LINES`] lines of `path`, joined by ` | `.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(STDERR_LINES)..].join(" | ")
}
