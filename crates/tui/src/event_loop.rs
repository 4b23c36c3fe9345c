//! The event loop: terminal input, session events, the file index and signals in; actions,
//! history and frames out. Frames are drawn at most every [`FRAME_INTERVAL`]: events that
//! arrive together (a burst of streamed tokens) make one frame.

use interpreter_face::{export, review};
use interpreter_protocol::Op;
use ratatui::backend::Backend;
use ratatui::crossterm::event::Event as TermEvent;
use std::time::{Duration, Instant};

use super::app::{Action, App};
use super::screen::Screen;
use super::{FRAME_INTERVAL, Start, TICK, Tui, popup, render};

/// Events taken from the session before a frame is drawn, at most.
const EVENT_BATCH: usize = 512;

/// What woke the loop.
enum Wake {
    Terminal(Option<TermEvent>),
    Events(Option<interpreter_protocol::Event>),
    Files(Option<Vec<String>>),
    Quit,
    Tick,
}

/// Whether the loop goes on.
enum Flow {
    Continue,
    Quit,
}

impl<B: Backend> Tui<B> {
    /// Runs until the user quits, a signal arrives or the terminal goes away. Returns the
    /// session's id when it holds a conversation (for the resume hint).
    pub(super) async fn run(
        &mut self,
        prompt: Option<String>,
        start: Start,
    ) -> Result<Option<String>, String> {
        let mut input = super::terminal::spawn_input();
        let mut stops = interpreter_core::platform::StopSignals::new()
            .map_err(|e| format!("could not listen for signals: {e}"))?;
        // The prompt is drawn before the session is opened.
        self.redraw()?;
        self.start(start).await?;
        if let Some(p) = prompt.filter(|p| !p.trim().is_empty()) {
            self.app.send_message(&p);
        }
        let mut last_draw = Instant::now();
        loop {
            let wait = if self.app.turn.is_some() {
                TICK
            } else {
                Duration::from_secs(3600)
            };
            let wake = tokio::select! {
                e = input.recv() => Wake::Terminal(e),
                e = recv(&mut self.events) => Wake::Events(e),
                f = files(&mut self.files) => Wake::Files(f),
                _ = stops.recv() => Wake::Quit,
                _ = tokio::time::sleep(wait) => Wake::Tick,
            };
            let woke = match wake {
                Wake::Terminal(Some(e)) => self.on_terminal(e)?,
                Wake::Terminal(None) | Wake::Quit => Flow::Quit,
                Wake::Events(Some(e)) => {
                    self.on_event(e);
                    Flow::Continue
                }
                Wake::Events(None) => {
                    self.events = None;
                    Flow::Continue
                }
                Wake::Files(f) => {
                    self.files = None;
                    self.app.files = Some(f.unwrap_or_default());
                    self.app.refresh_popup();
                    Flow::Continue
                }
                Wake::Tick => Flow::Continue,
            };
            if matches!(woke, Flow::Quit) {
                break;
            }
            self.drain_events();
            if matches!(self.carry_out().await?, Flow::Quit) {
                break;
            }
            // Coalesce: wait out the rest of the frame interval, taking what arrives.
            let since = last_draw.elapsed();
            if since < FRAME_INTERVAL {
                tokio::time::sleep(FRAME_INTERVAL - since).await;
                self.drain_events();
            }
            self.app.tick();
            self.redraw()?;
            self.send_alerts();
            last_draw = Instant::now();
        }
        Ok(self.close().await)
    }

    async fn start(&mut self, start: Start) -> Result<(), String> {
        match start {
            Start::Pick => {
                let entries = popup::sessions_of(&self.opener.config.home, &self.opener.cwd);
                if entries.is_empty() {
                    self.open(None).await?;
                    self.app
                        .info("no earlier session in this folder: this is a new one");
                } else {
                    self.app.open_picker(entries);
                }
                Ok(())
            }
            Start::Resume(id) => self.open(Some(id)).await,
            Start::New | Start::Last => self.open(None).await,
        }
    }

    /// Opens a session (a new one, or `resume`) and makes it the current one.
    async fn open(&mut self, resume: Option<String>) -> Result<(), String> {
        self.app.reset_session(resume.is_some());
        // Resuming the session already open here: it closes first, so the new copy can
        // become its log's writer.
        if let Some(current) = self.session.take_if(|s| resume.as_deref() == Some(s.id())) {
            let _ = current.submit(Op::Shutdown).done().await;
        }
        let (handle, rx) = self.opener.open(resume).await?;
        self.session = Some(handle);
        self.events = Some(rx);
        Ok(())
    }

    fn drain_events(&mut self) {
        let Some(rx) = self.events.as_mut() else {
            return;
        };
        let mut taken = Vec::new();
        for _ in 0..EVENT_BATCH {
            match rx.try_recv() {
                Ok(e) => taken.push(e),
                Err(_) => break,
            }
        }
        for e in taken {
            self.on_event(e);
        }
    }

    /// A session event: to the app, and noted for an alert when the user looks elsewhere.
    fn on_event(&mut self, e: interpreter_protocol::Event) {
        if !self.focused
            && let Some(alert) =
                super::terminal::alert_for(&e, self.opener.config.terminal_notifications)
        {
            self.alerts.push(alert);
        }
        self.app.on_event(e);
    }

    /// Tells an unfocused user what happened: a desktop notification (OSC 9) where the
    /// terminal shows one, else the bell.
    fn send_alerts(&mut self) {
        for alert in std::mem::take(&mut self.alerts) {
            super::terminal::notify(&alert);
        }
    }

    fn on_terminal(&mut self, e: TermEvent) -> Result<Flow, String> {
        match e {
            TermEvent::Key(k) => self.app.on_key(k),
            TermEvent::Paste(p) => self.app.on_paste(&p),
            TermEvent::Resize(w, h) => self.screen.resized(w, h).map_err(|e| e.to_string())?,
            TermEvent::FocusGained => self.focused = true,
            TermEvent::FocusLost => self.focused = false,
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// Carries out what the app asked for.
    async fn carry_out(&mut self) -> Result<Flow, String> {
        for action in self.app.take_actions() {
            match action {
                Action::Op(op) => {
                    if let Some(h) = &self.session {
                        let _ = h.submit(op);
                    }
                }
                Action::Quit => return Ok(Flow::Quit),
                Action::NewSession => {
                    self.close().await;
                    self.open(None).await?;
                }
                Action::Resume(None) => {
                    let entries = popup::sessions_of(&self.opener.config.home, &self.opener.cwd);
                    if entries.is_empty() {
                        self.app.info("no earlier session in this folder");
                    } else {
                        self.app.open_picker(entries);
                    }
                }
                Action::Resume(Some(id)) => self.resume(id).await?,
                Action::PasteClipboardImage => {
                    let dir = self.opener.config.home.join("clipboard");
                    let saved =
                        tokio::task::spawn_blocking(move || super::clipboard::save_image(&dir))
                            .await
                            .unwrap_or_else(|e| Err(e.to_string()));
                    match saved {
                        Ok(path) => self.app.composer.add_image(path),
                        Err(why) => self.app.info(format!("Nothing pasted: {why}.")),
                    }
                }
                Action::Export(file) => self.export(file).await,
                Action::Review {
                    shown,
                    target,
                    focus,
                } => self.review(&shown, target, &focus).await,
                Action::IndexFiles => {
                    let (tx, rx) = tokio::sync::oneshot::channel();
                    let cwd = self.opener.cwd.clone();
                    tokio::task::spawn_blocking(move || {
                        let _ = tx.send(popup::walk_files(&cwd));
                    });
                    self.files = Some(rx);
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// `/export [file]`: the session as its log holds it, written beside the folder's files.
    async fn export(&mut self, file: String) {
        let Some(view) = self.app.view.as_ref() else {
            self.app
                .info("the session is starting: nothing to export yet");
            return;
        };
        let home = self.opener.config.home.clone();
        let (id, target) = (view.id.clone(), export::target(&view.cwd, &file, &view.id));
        let done = tokio::task::spawn_blocking(move || {
            let sessions = interpreter_core::sessions::Sessions::new(&home);
            let log = sessions
                .log_path(&id)
                .ok_or_else(|| format!("session `{id}` has no log to export"))?;
            let e = sessions.export(&log).map_err(|e| format!("{e:#}"))?;
            export::write(&e, export::Format::of_path(&target), &target)
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        match done {
            Ok(written) => self.app.info(export::written_text(&written)),
            Err(e) => self
                .app
                .push(super::cells::Cell::Error(format!("/export: {e}"))),
        }
    }

    /// `/review`: the target's diff by the agent's own confined git, then the review turn.
    async fn review(&mut self, shown: &str, target: review::Target, focus: &str) {
        let cwd = match self.app.view.as_ref() {
            Some(v) => v.cwd.clone(),
            None => self.opener.cwd.clone(),
        };
        let t = target.clone();
        let gathered = tokio::task::spawn_blocking(move || {
            review::gather(&t, |args| {
                interpreter_core::sandbox::git::run(&cwd, args, None)
            })
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        match gathered {
            Ok(g) => {
                let prompt = review::prompt(&target, &g, focus, review::Answer::Markdown);
                self.app.send_message_as(shown, &prompt, Vec::new());
            }
            Err(e) => self
                .app
                .push(super::cells::Cell::Error(format!("/review: {e}"))),
        }
    }

    async fn resume(&mut self, id: String) -> Result<(), String> {
        let store = interpreter_core::sessions::Sessions::new(&self.opener.config.home);
        if !store.exists(&id) {
            self.app.push(super::cells::Cell::Error(format!(
                "no stored session `{id}`"
            )));
            return Ok(());
        }
        if self.app.view.as_ref().is_some_and(|v| v.id == id) {
            self.app.info("that is this session");
            return Ok(());
        }
        self.close().await;
        self.open(Some(id)).await
    }

    /// Ends the current session (its log is synced); its id if it holds a conversation.
    async fn close(&mut self) -> Option<String> {
        // What the session said last is still worth showing.
        self.drain_events();
        let _ = self.flush_history();
        let handle = self.session.take()?;
        self.events = None;
        let done = handle.submit(Op::Shutdown).done();
        let _ = tokio::time::timeout(Duration::from_secs(5), done).await;
        let view = self.app.view.as_ref()?;
        view.title.as_ref().map(|_| view.id.clone())
    }

    /// Writes finished cells above the viewport.
    fn flush_history(&mut self) -> Result<(), String> {
        flush_history(&mut self.app, &mut self.screen)
    }

    /// Writes new history and draws the viewport; a frame that panics does not end the
    /// session (see [`guarded_paint`]).
    pub(super) fn redraw(&mut self) -> Result<(), String> {
        let started = Instant::now();
        guarded_paint(
            &mut self.app,
            &mut self.screen,
            &mut self.draw_failures,
            |app, screen| paint(app, screen, Instant::now()),
        )?;
        if let Some(times) = self.frame_times.as_mut() {
            times.push(started.elapsed());
        }
        Ok(())
    }

    /// `INTERPRETER_TUI_FRAME_STATS=FILE`: frame count, median and max frame time (ms) as
    /// JSON, for the benchmark.
    pub(super) fn write_frame_stats(&self) {
        let (Some(path), Some(times)) = (
            std::env::var_os("INTERPRETER_TUI_FRAME_STATS"),
            self.frame_times.as_ref(),
        ) else {
            return;
        };
        let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        let median = ms.get(ms.len() / 2).copied().unwrap_or(0.0);
        let max = ms.last().copied().unwrap_or(0.0);
        let json = serde_json::json!({"frames": ms.len(), "median_ms": median, "max_ms": max});
        if let Err(e) = std::fs::write(&path, json.to_string()) {
            tracing::warn!(
                "writing frame stats to {}: {e}",
                std::path::Path::new(&path).display()
            );
        }
    }
}

async fn recv<T>(rx: &mut Option<tokio::sync::mpsc::UnboundedReceiver<T>>) -> Option<T> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn files(
    rx: &mut Option<tokio::sync::oneshot::Receiver<Vec<String>>>,
) -> Option<Vec<String>> {
    match rx {
        Some(rx) => rx.await.ok(),
        None => std::future::pending().await,
    }
}

/// Writes the app's finished cells above the viewport.
pub(super) fn flush_history<B: Backend>(
    app: &mut App,
    screen: &mut Screen<B>,
) -> Result<(), String> {
    if app.history.is_empty() || screen.is_empty() {
        return Ok(());
    }
    let width = screen.width();
    let cells = std::mem::take(&mut app.history);
    let mut rows = Vec::new();
    for cell in &cells {
        rows.extend(render::history_rows(app, cell, width));
    }
    screen.insert_history(&rows).map_err(|e| e.to_string())
}

/// Frames that panicked: how many in a row now, how many in all, and the first one's message.
#[derive(Debug, Default)]
pub(super) struct DrawFailures {
    pub in_a_row: u32,
    pub total: u32,
    pub first: Option<String>,
}

/// Runs `paint` with a panic caught: the terminal stays in our mode, the screen is put right
/// (the viewport found again and cleared) and the next frame draws afresh. The first failure
/// of a run is said on the screen; each goes to the log, and [`super::run`] names them on
/// stderr once the terminal is restored.
pub(super) fn guarded_paint<B: Backend>(
    app: &mut App,
    screen: &mut Screen<B>,
    failures: &mut DrawFailures,
    paint: impl FnOnce(&mut App, &mut Screen<B>) -> Result<(), String>,
) -> Result<(), String> {
    let why = match super::terminal::catch_panic(|| paint(app, screen)) {
        Ok(drawn) => {
            failures.in_a_row = 0;
            return drawn;
        }
        Err(why) => why.replace('\n', " "),
    };
    failures.in_a_row = failures.in_a_row.saturating_add(1);
    failures.total = failures.total.saturating_add(1);
    tracing::error!(
        "drawing a frame of the terminal UI failed ({} in a row): {why}",
        failures.in_a_row
    );
    if failures.in_a_row == 1 {
        app.push(super::cells::Cell::Error(format!(
            "The screen could not be drawn ({why}); it is drawn afresh. The session goes on, \
             and its log is intact."
        )));
    }
    failures.first.get_or_insert(why);
    screen.recover().map_err(|e| e.to_string())
}

/// One frame: new history, then the viewport as of `now`. A viewport about to shrink (a
/// prompt answered) does so first: history written above a viewport keeps room for its
/// height, and room kept for a prompt as tall as the screen would scroll the new history
/// straight into the scrollback.
pub(super) fn paint<B: Backend>(
    app: &mut App,
    screen: &mut Screen<B>,
    now: Instant,
) -> Result<(), String> {
    let frame = render::frame(app, screen.width(), screen.max_rows(), now);
    screen.shrink(frame.rows.len()).map_err(|e| e.to_string())?;
    flush_history(app, screen)?;
    screen
        .draw(&frame.rows, frame.cursor)
        .map_err(|e| e.to_string())
}
