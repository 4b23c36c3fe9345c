//! The rewind picker (Esc Esc on an empty prompt, or `/rewind`): the earlier prompts, newest
//! first, then what goes back: the code and the conversation, or one of them. When the
//! conversation goes back, the turn's prompt returns to the composer, to edit and send again.

use interpreter_protocol::{Op, Restore, UndoableTurn};
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::time::{Duration, Instant};

use super::app::App;
use super::cells::Cell;
use super::ctx::clean;
use super::popup::{Item, Popup, PopupKind, Rewind};
use interpreter_face::slash;

/// How soon a second Esc must follow the first.
const ESC_WINDOW: Duration = Duration::from_millis(800);

fn turns_popup(turns: &[UndoableTurn]) -> Popup {
    Popup {
        kind: PopupKind::Rewind,
        items: turns
            .iter()
            .rev()
            .map(|t| Item {
                value: t.turn_id.clone(),
                label: clean(&slash::prompt_line(t)),
                detail: if t.files {
                    String::new()
                } else {
                    "conversation only".into()
                },
            })
            .collect(),
        selected: 0,
        empty: "no turn to rewind to",
    }
}

fn what_popup(turn: &UndoableTurn) -> Popup {
    let item = |value: &str, label: &str, detail: &str| Item {
        value: value.into(),
        label: label.into(),
        detail: detail.into(),
    };
    let mut items = Vec::new();
    if turn.files {
        items.push(item(
            "both",
            "Code and conversation",
            "the files as they were before it; the conversation up to it",
        ));
    }
    items.push(item(
        "conversation",
        "Conversation",
        "the conversation up to it; the files stay as they are",
    ));
    if turn.files {
        items.push(item(
            "code",
            "Code",
            "the files as they were before it; the conversation stays",
        ));
    }
    Popup {
        kind: PopupKind::RewindWhat,
        items,
        selected: 0,
        empty: "",
    }
}

impl App {
    /// Esc on an empty prompt: a second one soon after opens the picker.
    pub(crate) fn esc_on_empty_prompt(&mut self) {
        match self.esc_armed.take() {
            Some(t) if t.elapsed() < ESC_WINDOW => self.open_rewind(),
            _ => self.esc_armed = Some(Instant::now()),
        }
    }

    /// Opens the picker on the turns that can be taken back.
    pub(crate) fn open_rewind(&mut self) {
        if self.turn.is_some() {
            self.push(Cell::Error(
                "a turn is running: rewind once it ends (Ctrl+C interrupts it)".into(),
            ));
            return;
        }
        let turns = self.undoable();
        if turns.is_empty() {
            self.info(slash::rewind_list(&turns));
            return;
        }
        self.popup = Some(turns_popup(&turns));
        self.rewind = Some(Rewind::Turn);
    }

    fn undoable(&self) -> Vec<UndoableTurn> {
        self.view
            .as_ref()
            .map(|v| v.undoable.clone())
            .unwrap_or_default()
    }

    /// Keys while the picker is open: ↑/↓ choose, Enter picks, Esc goes back a step.
    pub(crate) fn rewind_key(&mut self, key: KeyEvent) {
        let (Some(stage), Some(mut p)) = (self.rewind.clone(), self.popup.take()) else {
            self.rewind = None;
            return;
        };
        match key.code {
            KeyCode::Up => p.up(),
            KeyCode::Down => p.down(),
            KeyCode::Esc => {
                self.rewind = None;
                if let Rewind::What(_) = stage {
                    self.open_rewind();
                }
                return;
            }
            KeyCode::Enter => {
                self.rewind = None;
                let Some(value) = p.current().map(|i| i.value.clone()) else {
                    return;
                };
                match stage {
                    Rewind::Turn => {
                        if let Some(t) = self.undoable().into_iter().find(|t| t.turn_id == value) {
                            self.popup = Some(what_popup(&t));
                            self.rewind = Some(Rewind::What(t));
                        }
                    }
                    Rewind::What(turn) => {
                        let restore = match value.as_str() {
                            "code" => Restore::Code,
                            "conversation" => Restore::Conversation,
                            _ => Restore::Both,
                        };
                        self.rewind_to(turn, restore);
                    }
                }
                return;
            }
            _ => {}
        }
        self.popup = Some(p);
    }

    /// Goes back to before `turn`; its prompt returns to the composer when the conversation
    /// goes back.
    pub(crate) fn rewind_to(&mut self, turn: UndoableTurn, restore: Restore) {
        self.op(Op::Rewind {
            turn_id: turn.turn_id,
            restore,
        });
        if restore != Restore::Code {
            self.composer.set_text(&turn.prompt);
        }
    }

    /// `/rewind [turn [what]]`: the picker, or straight to the turn.
    pub(crate) fn rewind_command(&mut self, arg: &str) {
        let turns = self.undoable();
        match slash::rewind_target(arg, &turns) {
            Ok(None) => self.open_rewind(),
            Ok(Some((id, restore))) => {
                if let Some(t) = turns.into_iter().find(|t| t.turn_id == id) {
                    self.rewind_to(t, restore);
                }
            }
            Err(e) => self.push(Cell::Error(e)),
        }
    }
}
