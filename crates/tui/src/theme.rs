//! The styles the terminal session draws with. Only the 16 basic ANSI colours are used, so a
//! 16-colour terminal shows everything; with colour off (`NO_COLOR`, `--color never`) every
//! colour is dropped and only bold, dim, italic, underline and reverse remain.

use ratatui::style::{Color, Modifier, Style};

/// Every style the UI uses, by role.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    color: bool,
}

impl Theme {
    /// A theme with colour on or off.
    pub(crate) fn new(color: bool) -> Theme {
        Theme { color }
    }

    /// Whether colours are drawn.
    pub(crate) fn color(&self) -> bool {
        self.color
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    /// Plain text.
    pub(crate) fn text(&self) -> Style {
        Style::new()
    }
    /// Secondary text: hints, elapsed times, output tails.
    pub(crate) fn dim(&self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }
    /// The user's own messages.
    pub(crate) fn user(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    /// Cell headers ("Ran", "Edited").
    pub(crate) fn header(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    /// The bullet in front of a cell.
    pub(crate) fn bullet(&self) -> Style {
        self.fg(Color::Magenta)
    }
    /// Success marks and added diff lines.
    pub(crate) fn ok(&self) -> Style {
        self.fg(Color::Green)
    }
    /// Failures, removed diff lines, errors.
    pub(crate) fn error(&self) -> Style {
        self.fg(Color::Red)
    }
    /// Errors when colour is off still stand out.
    pub(crate) fn error_strong(&self) -> Style {
        self.error().add_modifier(Modifier::BOLD)
    }
    /// Warnings and declined calls.
    pub(crate) fn warn(&self) -> Style {
        self.fg(Color::Yellow)
    }
    /// The part of a command an approval prompt's danger is about: it stands out without
    /// colour too.
    pub(crate) fn danger(&self) -> Style {
        let style = self.fg(Color::Yellow).add_modifier(Modifier::BOLD);
        if self.color {
            style
        } else {
            style.add_modifier(Modifier::UNDERLINED)
        }
    }
    /// Inline code and commands.
    pub(crate) fn code(&self) -> Style {
        self.fg(Color::Cyan)
    }
    /// Code block text.
    pub(crate) fn code_block(&self) -> Style {
        self.fg(Color::Yellow)
    }
    /// Links.
    pub(crate) fn link(&self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }
    /// Headings.
    pub(crate) fn heading(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }
    /// Diff hunk headers.
    pub(crate) fn hunk(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::DIM)
    }
    /// Model reasoning.
    pub(crate) fn reasoning(&self) -> Style {
        Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC)
    }
    /// The selected row of a popup.
    pub(crate) fn selected(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
    /// Keys in hints and approval prompts.
    pub(crate) fn key(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    /// The permission mode in the status line: full access stands out.
    pub(crate) fn mode(&self, full_access: bool) -> Style {
        if full_access {
            self.fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            self.fg(Color::Green)
        }
    }
}
