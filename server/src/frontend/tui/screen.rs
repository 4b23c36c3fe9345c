//! An inline screen: a viewport at the bottom of the terminal's normal screen (never the
//! alternate one) that grows and shrinks with its content, and history written above it by
//! scrolling the whole screen, so every finished line goes to the terminal's own scrollback
//! (tmux keeps only whole-screen scrolls in its history). Drawing goes through ratatui's
//! double-buffered `Terminal` with a fixed viewport we move ourselves.

use ratatui::backend::{Backend, ClearType};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// The terminal, the viewport's place on it, and where the cursor was left.
pub(crate) struct Screen<B: Backend> {
    term: Terminal<B>,
    size: Size,
    area: Rect,
    /// The cursor's row inside the viewport after the last draw.
    cursor_row: u16,
}

type Result<T, B> = std::result::Result<T, <B as Backend>::Error>;

impl<B: Backend> Screen<B> {
    /// A screen whose viewport starts on row `top` (where the cursor is).
    pub(crate) fn new(backend: B, top: u16) -> Result<Screen<B>, B> {
        let size = backend.size()?;
        let area = Rect::new(0, top.min(size.height.saturating_sub(1)), size.width, 1);
        let term = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(area),
            },
        )?;
        Ok(Screen {
            term,
            size,
            area,
            cursor_row: 0,
        })
    }

    /// The backend, for tests.
    #[cfg(test)]
    pub(crate) fn backend(&self) -> &B {
        self.term.backend()
    }

    /// The terminal's width.
    pub(crate) fn width(&self) -> u16 {
        self.size.width
    }

    /// The most rows the viewport may take: the screen less one row, so history keeps a
    /// place above it.
    pub(crate) fn max_rows(&self) -> u16 {
        self.size.height.saturating_sub(1).max(1)
    }

    /// Draws the viewport: `rows` from its top, the cursor at (column, row) or hidden.
    pub(crate) fn draw(
        &mut self,
        rows: &[Line<'static>],
        cursor: Option<(u16, u16)>,
    ) -> Result<(), B> {
        let height = u16::try_from(rows.len())
            .unwrap_or(u16::MAX)
            .clamp(1, self.max_rows());
        self.set_height(height)?;
        let area = self.area;
        self.cursor_row = cursor.map_or(0, |c| c.1.min(height - 1));
        self.term.draw(|f| {
            let buf = f.buffer_mut();
            for (i, row) in rows.iter().take(usize::from(height)).enumerate() {
                let y = area.y + u16::try_from(i).unwrap_or(0);
                buf.set_line(area.x, y, row, area.width);
            }
            if let Some((x, y)) = cursor {
                f.set_cursor_position(Position::new(
                    x.min(area.width.saturating_sub(1)),
                    area.y + y.min(height - 1),
                ));
            }
        })?;
        if cursor.is_none() {
            // A known place, so a resize can tell where the viewport went.
            self.term
                .backend_mut()
                .set_cursor_position(Position::new(0, area.y))?;
            self.term.backend_mut().flush()?;
        }
        Ok(())
    }

    /// Writes `lines` above the viewport. The viewport is redrawn by the next `draw`.
    pub(crate) fn insert_history(&mut self, lines: &[Line<'static>]) -> Result<(), B> {
        if lines.is_empty() {
            return Ok(());
        }
        let width = self.size.width;
        let bottom = self.size.height.saturating_sub(1);
        let backend = self.term.backend_mut();
        backend.set_cursor_position(Position::new(0, self.area.y))?;
        backend.clear_region(ClearType::AfterCursor)?;
        let mut row = self.area.y;
        for line in lines {
            if row > bottom {
                // A line feed on the last row scrolls the whole screen into scrollback.
                backend.set_cursor_position(Position::new(0, bottom))?;
                backend.append_lines(1)?;
                row = bottom;
            }
            let mut buf = Buffer::empty(Rect::new(0, row, width, 1));
            buf.set_line(0, row, line, width);
            let cells = buf
                .content
                .iter()
                .enumerate()
                .map(|(x, c)| (u16::try_from(x).unwrap_or(0), row, c));
            backend.draw(cells)?;
            row += 1;
        }
        // Room for the viewport under the new lines.
        let need = (row + self.area.height).saturating_sub(self.size.height);
        if need > 0 {
            backend.set_cursor_position(Position::new(0, bottom))?;
            backend.append_lines(need)?;
            row -= need;
        }
        backend.flush()?;
        self.area.y = row;
        self.term.resize(self.area)?;
        Ok(())
    }

    /// Moves the viewport so it has `height` rows, scrolling the screen up when it would
    /// pass the bottom.
    fn set_height(&mut self, height: u16) -> Result<(), B> {
        if height == self.area.height {
            return Ok(());
        }
        let backend = self.term.backend_mut();
        let over = (self.area.y + height).saturating_sub(self.size.height);
        if over > 0 {
            backend.set_cursor_position(Position::new(0, self.size.height - 1))?;
            backend.append_lines(over)?;
            self.area.y -= over;
        }
        // Everything under the viewport's top is ours: clear it, then draw afresh.
        backend.set_cursor_position(Position::new(0, self.area.y))?;
        backend.clear_region(ClearType::AfterCursor)?;
        self.area.height = height;
        self.term.resize(self.area)?;
        Ok(())
    }

    /// The terminal changed size. The terminal may have moved our rows (reflowing them), so
    /// the viewport is found again from the cursor, which was left at a known row in it.
    pub(crate) fn resized(&mut self, width: u16, height: u16) -> Result<(), B> {
        let old = self.size;
        self.size = Size::new(width, height);
        let cursor_y = self
            .term
            .backend_mut()
            .get_cursor_position()
            .map(|p| p.y)
            .unwrap_or(self.area.y + self.cursor_row);
        let mut top = cursor_y.saturating_sub(self.cursor_row);
        if width < old.width && width > 0 {
            // Our old rows were as wide as the old screen: each may now take more rows.
            let per_row = old.width.div_ceil(width);
            top = top.saturating_sub(self.area.height * (per_row - 1));
        }
        let h = self.area.height.min(self.max_rows());
        top = top.min(height.saturating_sub(h));
        let backend = self.term.backend_mut();
        backend.set_cursor_position(Position::new(0, top))?;
        backend.clear_region(ClearType::AfterCursor)?;
        self.area = Rect::new(0, top, width, h);
        self.term.resize(self.area)?;
        Ok(())
    }

    /// Leaves the screen: the viewport is cleared and the cursor put where it began, so the
    /// shell's prompt follows the transcript.
    pub(crate) fn leave(&mut self) -> Result<(), B> {
        let backend = self.term.backend_mut();
        backend.set_cursor_position(Position::new(0, self.area.y))?;
        backend.clear_region(ClearType::AfterCursor)?;
        backend.show_cursor()?;
        backend.flush()
    }
}
