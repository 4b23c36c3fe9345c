//! What the user's keys do: composer editing, popups, approvals, slash commands, Ctrl+C and
//! Shift+Tab. Every effect on the session leaves as an [`Action`].

use interpreter_protocol::{ApprovalDecision, InputItem, Op, PermissionMode};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::time::{Duration, Instant};

use super::app::{Action, App};
use super::cells::Cell;
use super::popup::{self, PopupKind};
use super::status::mode_of;
use interpreter_face::slash::{self, BUILTINS, Command};

/// How long a first Ctrl+C on an empty prompt waits for the second.
const QUIT_WINDOW: Duration = Duration::from_secs(3);

impl App {
    /// Takes in one key press.
    pub(crate) fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            self.ctrl_c();
            return;
        }
        if !(ctrl && key.code == KeyCode::Char('d')) {
            self.quit_armed = None;
        }
        if key.code != KeyCode::Esc {
            self.esc_armed = None;
        }
        if self.picker.is_some() {
            self.picker_key(key);
            return;
        }
        if self.rewind.is_some() {
            self.rewind_key(key);
            return;
        }
        if let Some(p) = self.approvals.front() {
            if let Some(d) = super::approval::decision_for(&key, &p.req) {
                self.answer_approval(d);
            }
            return;
        }
        if let Some(form) = self.questions.front_mut() {
            if let super::question::Outcome::Done(answer) = form.key(&key) {
                let call_id = form.req.call_id.clone();
                self.questions.pop_front();
                let cancelled = answer == interpreter_protocol::QuestionAnswer::Cancelled;
                self.op(Op::Answer { call_id, answer });
                if cancelled {
                    self.op(Op::Interrupt);
                }
            }
            return;
        }
        if key.code == KeyCode::BackTab {
            self.cycle_mode();
            return;
        }
        if self.popup.is_some() && self.popup_key(&key) {
            return;
        }
        self.edit_key(key);
    }

    /// A bracketed paste goes into the composer.
    pub(crate) fn on_paste(&mut self, text: &str) {
        if self.picker.is_none() && self.approvals.is_empty() && self.questions.is_empty() {
            self.composer.paste(text);
            self.refresh_popup();
        }
    }

    fn edit_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let c = &mut self.composer;
        match key.code {
            KeyCode::Enter if key.modifiers.intersects(KeyModifiers::SHIFT) || alt => {
                c.insert_char('\n')
            }
            KeyCode::Char('j') if ctrl => c.insert_char('\n'),
            // Terminals paste text only: an image comes from the clipboard itself.
            KeyCode::Char('v') if ctrl || alt => {
                self.act(Action::PasteClipboardImage);
                return;
            }
            KeyCode::Enter => {
                self.submit();
                return;
            }
            KeyCode::Char('d') if ctrl => {
                if c.is_empty() {
                    self.act(Action::Quit);
                } else {
                    c.delete();
                }
            }
            KeyCode::Char('a') if ctrl => c.home(),
            KeyCode::Char('e') if ctrl => c.end(),
            KeyCode::Char('w') if ctrl => c.delete_word(),
            KeyCode::Char('u') if ctrl => c.delete_to_line_start(),
            KeyCode::Char('b') if ctrl => c.left(),
            KeyCode::Char('f') if ctrl => c.right(),
            KeyCode::Char(ch) if !ctrl => c.insert_char(ch),
            KeyCode::Tab => c.insert_str("    "),
            KeyCode::Backspace => c.backspace(),
            KeyCode::Delete => c.delete(),
            KeyCode::Left => c.left(),
            KeyCode::Right => c.right(),
            KeyCode::Home => c.home(),
            KeyCode::End => c.end(),
            KeyCode::Up => c.up(),
            KeyCode::Down => c.down(),
            KeyCode::Esc if c.is_empty() => {
                self.esc_on_empty_prompt();
                return;
            }
            _ => return,
        }
        self.refresh_popup();
    }

    /// Keys a popup takes; false for keys that go on to the composer.
    fn popup_key(&mut self, key: &KeyEvent) -> bool {
        let Some(p) = self.popup.as_mut() else {
            return false;
        };
        if p.items.is_empty() && matches!(key.code, KeyCode::Enter | KeyCode::Tab) {
            self.popup = None;
            return false;
        }
        match key.code {
            KeyCode::Up => p.up(),
            KeyCode::Down => p.down(),
            KeyCode::Esc => {
                self.popup = None;
                self.popup_dismissed = Some(self.composer.text().to_string());
            }
            KeyCode::Tab => self.accept_popup(false),
            KeyCode::Enter if key.modifiers.is_empty() => self.accept_popup(true),
            _ => return false,
        }
        true
    }

    /// Takes the popup's selection: completes a command or inserts a path. `run` (Enter)
    /// runs a command that needs nothing more.
    fn accept_popup(&mut self, run: bool) {
        let Some(p) = self.popup.take() else { return };
        let Some(item) = p.current().cloned() else {
            return;
        };
        match p.kind {
            PopupKind::Slash => {
                let needs_arg = BUILTINS.iter().any(|b| {
                    b.name == item.value && matches!(b.name, "harness" | "model" | "mode")
                });
                if run && !needs_arg {
                    self.composer.set_text(&format!("/{}", item.value));
                    self.submit();
                } else {
                    self.composer.set_text(&format!("/{} ", item.value));
                }
            }
            PopupKind::Files => {
                let (start, end, _) = self.composer.token_at_cursor();
                let path = if item.value.contains(char::is_whitespace) {
                    format!("\"{}\" ", item.value)
                } else {
                    format!("{} ", item.value)
                };
                self.composer.replace(start, end, &path);
            }
            PopupKind::Sessions | PopupKind::Rewind | PopupKind::RewindWhat => {}
        }
    }

    /// Opens, updates or closes the popup for what is typed now.
    pub(crate) fn refresh_popup(&mut self) {
        let text = self.composer.text().to_string();
        if self.popup_dismissed.as_deref() == Some(text.as_str()) {
            return;
        }
        self.popup_dismissed = None;
        let before = &text[..self.composer.cursor()];
        let skills = self
            .view
            .as_ref()
            .map(|v| v.skills.as_slice())
            .unwrap_or(&[]);
        if let Some(q) = before.strip_prefix('/')
            && !text.contains(char::is_whitespace)
        {
            self.popup = Some(popup::slash(q, skills));
            return;
        }
        let (_, _, token) = self.composer.token_at_cursor();
        if let Some(q) = token.strip_prefix('@') {
            let q = q.to_string();
            self.want_files();
            self.popup = Some(popup::files(&q, self.files.as_deref()));
            return;
        }
        self.popup = None;
    }

    fn ctrl_c(&mut self) {
        if self.turn.is_some() || !self.approvals.is_empty() || !self.questions.is_empty() {
            for a in std::mem::take(&mut self.approvals) {
                self.op(Op::Approval {
                    call_id: a.req.call_id,
                    decision: ApprovalDecision::Cancelled,
                });
            }
            for q in std::mem::take(&mut self.questions) {
                self.op(Op::Answer {
                    call_id: q.req.call_id,
                    answer: interpreter_protocol::QuestionAnswer::Cancelled,
                });
            }
            self.op(Op::Interrupt);
            return;
        }
        if self.picker.take().is_some() {
            return;
        }
        if self.popup.take().is_some() || !self.composer.is_empty() {
            self.composer.clear();
            return;
        }
        match self.quit_armed {
            Some(t) if t.elapsed() < QUIT_WINDOW => self.act(Action::Quit),
            _ => self.quit_armed = Some(Instant::now()),
        }
    }

    fn cycle_mode(&mut self) {
        let Some(view) = self.view.as_ref() else {
            return;
        };
        let next = mode_of(view).next();
        self.op(Op::SetPermissions(next.permissions(self.base_approval)));
    }

    fn answer_approval(&mut self, decision: ApprovalDecision) {
        let Some(super::approval::Prompt { req, .. }) = self.approvals.pop_front() else {
            return;
        };
        if decision == ApprovalDecision::AllowAlways && !req.remember_key.trim().is_empty() {
            let what = super::approval::always_label(&req.remember_key);
            let what = what.trim_start_matches("always for ");
            self.info(format!("allowed {what} for the rest of this session"));
        }
        if decision == ApprovalDecision::AllowAlwaysSave && req.offers_save() {
            let what = super::approval::always_label(&req.remember_key);
            let what = what.trim_start_matches("always for ");
            self.info(format!(
                "allowed {what} from now on: saved as a rule in your rules/default.rules"
            ));
        }
        self.op(Op::Approval {
            call_id: req.call_id,
            decision,
        });
        if decision == ApprovalDecision::Cancelled {
            self.op(Op::Interrupt);
        }
    }

    fn picker_key(&mut self, key: KeyEvent) {
        let Some(entries) = self.picker.as_ref() else {
            return;
        };
        let mut p = self
            .popup
            .take()
            .filter(|p| p.kind == PopupKind::Sessions)
            .unwrap_or_else(|| popup::sessions(entries));
        match key.code {
            KeyCode::Up => p.up(),
            KeyCode::Down => p.down(),
            KeyCode::Enter => {
                let id = p.current().map(|i| i.value.clone());
                self.picker = None;
                match id {
                    Some(id) => self.act(Action::Resume(Some(id))),
                    None if self.view.is_none() => self.act(Action::NewSession),
                    None => {}
                }
                return;
            }
            KeyCode::Esc => {
                self.picker = None;
                if self.view.is_none() {
                    self.act(Action::NewSession);
                }
                return;
            }
            _ => {}
        }
        self.popup = Some(p);
    }

    /// Opens the session picker with these sessions.
    pub(crate) fn open_picker(&mut self, entries: Vec<popup::SessionEntry>) {
        self.popup = Some(popup::sessions(&entries));
        self.picker = Some(entries);
    }

    /// Enter: a command, or a message for the model.
    fn submit(&mut self) {
        self.popup = None;
        let shown = self.composer.text().to_string();
        if shown.trim().is_empty() {
            return;
        }
        let full = self.composer.take();
        let images = self.composer.take_images(&full);
        let skills = self
            .view
            .as_ref()
            .map(|v| v.skills.clone())
            .unwrap_or_default();
        match slash::parse(&full, &skills) {
            Some(cmd) => self.command(cmd, &shown),
            None if slash::split(&full).is_some() => {
                let name = slash::split(&full).map(|(n, _)| n).unwrap_or_default();
                self.push(Cell::Error(format!(
                    "unknown command /{name} (type / to see the commands)"
                )));
            }
            None => self.send_message_as(&shown, &full, images),
        }
    }

    /// Sends `text` to the model: a new turn, or, while one runs, input that joins its next
    /// request (the answer in flight finishes and stays); queued until the session is ready.
    pub(crate) fn send_message(&mut self, text: &str) {
        self.send_message_as(text, text, Vec::new());
    }

    /// Sends `full` and `images`, showing `shown` (pastes folded, images as chips) in the
    /// transcript.
    pub(crate) fn send_message_as(
        &mut self,
        shown: &str,
        full: &str,
        images: Vec<std::path::PathBuf>,
    ) {
        if self.view.is_none() {
            self.queued.push_back(full.to_string());
            return;
        }
        let skills = self
            .view
            .as_ref()
            .map(|v| v.skills.clone())
            .unwrap_or_default();
        self.push(Cell::User(shown.to_string()));
        let mut items = vec![slash::input_for(full, &skills)];
        items.extend(
            images
                .into_iter()
                .map(|path| InputItem::LocalImage { path }),
        );
        if self.turn.is_some() {
            self.op(Op::Steer { items });
            return;
        }
        self.op(Op::UserInput { items });
        self.turn = Some(super::app::Turn {
            started: Instant::now(),
            waiting: None,
        });
    }

    fn command(&mut self, cmd: Command<'_>, shown: &str) {
        match cmd {
            Command::Harness("") => {
                let now = self
                    .view
                    .as_ref()
                    .map(|v| v.settings.harness.clone())
                    .unwrap_or_default();
                let all = interpreter_core::harness::names().join(", ");
                self.info(format!("harness: {now} (available: {all})"));
            }
            Command::Harness(h) => self.op(Op::SetHarness {
                harness: h.to_string(),
            }),
            Command::Model("") => {
                let now = self
                    .view
                    .as_ref()
                    .map(|v| v.settings.model.clone())
                    .unwrap_or_default();
                self.info(format!("model: {now}"));
            }
            Command::Model(m) => self.op(Op::SetModel {
                model: m.to_string(),
            }),
            Command::Mode(m) => self.mode_command(m),
            Command::Compact => self.op(Op::Compact),
            Command::Undo(arg) => match slash::undo_turns(arg) {
                Ok(turns) => self.op(Op::Undo {
                    turns,
                    restore: interpreter_protocol::Restore::Both,
                }),
                Err(e) => self.push(Cell::Error(e)),
            },
            Command::Rewind(arg) => self.rewind_command(arg),
            Command::Goal(arg) => match slash::goal_op(arg) {
                Ok(op) => self.op(op),
                Err(e) => self.push(Cell::Error(e)),
            },
            Command::Init(_) => {
                if let Some(prompt) = slash::prompt_for(&cmd) {
                    self.send_message_as(shown, &prompt, Vec::new());
                }
            }
            Command::Review(args) => match interpreter_face::review::parse_slash(args) {
                Ok((target, focus)) => self.act(Action::Review {
                    shown: shown.to_string(),
                    target,
                    focus,
                }),
                Err(e) => self.push(Cell::Error(e)),
            },
            Command::Status => {
                let lines = self.status_lines();
                self.push(Cell::Info(lines));
            }
            Command::Mcp => {
                let servers = self
                    .view
                    .as_ref()
                    .map(|v| v.mcp_servers.clone())
                    .unwrap_or_default();
                let text = interpreter_face::mcp::servers_text(&servers);
                self.push(Cell::Info(text.lines().map(str::to_string).collect()));
            }
            Command::Export(file) => self.act(Action::Export(file.to_string())),
            Command::New => self.act(Action::NewSession),
            Command::Resume("") => self.act(Action::Resume(None)),
            Command::Resume(id) => self.act(Action::Resume(Some(id.to_string()))),
            Command::Quit => self.act(Action::Quit),
            Command::Skill { name, args } => {
                if self.turn.is_some() {
                    self.queued.push_back(shown.to_string());
                    return;
                }
                self.push(Cell::User(shown.to_string()));
                self.op(Op::UserInput {
                    items: vec![InputItem::Skill {
                        name: name.to_string(),
                        args: args.to_string(),
                    }],
                });
            }
        }
    }

    fn mode_command(&mut self, m: &str) {
        if m.is_empty() {
            if let Some(v) = self.view.as_ref() {
                let now = mode_of(v).as_str();
                self.info(format!(
                    "mode: {now} (read-only, auto, full-access; Shift+Tab cycles)"
                ));
            }
            return;
        }
        match m.parse::<PermissionMode>() {
            Ok(mode) => self.op(Op::SetPermissions(mode.permissions(self.base_approval))),
            Err(e) => self.push(Cell::Error(e.to_string())),
        }
    }

    fn status_lines(&self) -> Vec<String> {
        let Some(v) = self.view.as_ref() else {
            return vec!["the session is starting".into()];
        };
        let s = &v.settings;
        let u = v.total_usage();
        let mut out = vec![
            format!(
                "session   {}{}",
                v.id,
                v.title
                    .as_ref()
                    .map(|t| format!("  ({t})"))
                    .unwrap_or_default()
            ),
            format!("folder    {}", v.cwd.display()),
            format!(
                "model     {} / {}{}",
                s.provider,
                s.model,
                s.effort
                    .map(|e| format!(" · effort {}", e.as_str()))
                    .unwrap_or_default()
            ),
            format!("harness   {}", s.harness),
            format!("mode      {}", mode_of(v).as_str()),
        ];
        if let Some(t) = v.tokens.as_ref() {
            let window = t.context_window.or(s.context_window);
            out.push(format!(
                "context   {}{}",
                super::status::tokens(t.context_used),
                window
                    .map(|w| format!(" of {}", super::status::tokens(w)))
                    .unwrap_or_default()
            ));
            if let Some(c) = t.cost_usd {
                out.push(format!("cost      ${c:.4}"));
            }
        }
        out.push(format!(
            "tokens    {} in ({} cached) · {} out",
            u.input_tokens, u.cached_input_tokens, u.output_tokens
        ));
        out
    }
}
