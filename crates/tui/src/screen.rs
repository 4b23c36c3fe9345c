//! An inline screen: a viewport at the bottom of the terminal's normal screen (never the
//! alternate one) that grows and shrinks with its content, and history written above it by
//! scrolling the whole screen, so every finished line goes to the terminal's own scrollback
//! (tmux keeps only whole-screen scrolls in its history). Drawing goes through ratatui's
//! double-buffered `Terminal` with a fixed viewport we move ourselves.
//!
//! Every size here saturates: a terminal of 0×0, 1×1 or 65535 rows lays out without an
//! overflow, and a frame is drawn into ratatui's buffer by that buffer's own area, so no row
//! can land outside it.

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// The terminal, the viewport's place on it, and where the cursor was left.
pub(crate) struct Screen<B: Backend> {
    term: Terminal<Inline<B>>,
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
            Inline(backend),
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
        &self.term.backend().0
    }

    /// The backend, for tests that resize it.
    #[cfg(test)]
    pub(crate) fn backend_mut(&mut self) -> &mut B {
        &mut self.term.backend_mut().0
    }

    /// The viewport's place on the screen, for tests.
    #[cfg(test)]
    pub(crate) fn area(&self) -> Rect {
        self.area
    }

    /// The terminal's width.
    pub(crate) fn width(&self) -> u16 {
        self.size.width
    }

    /// The terminal has no cells (a pty can report 0×0): nothing is drawn or written, and
    /// history waits until it has a size again.
    pub(crate) fn is_empty(&self) -> bool {
        self.size.width == 0 || self.size.height == 0
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
        if self.is_empty() {
            return Ok(());
        }
        let height = u16::try_from(rows.len())
            .unwrap_or(u16::MAX)
            .clamp(1, self.max_rows());
        self.set_height(height)?;
        let area = self.area;
        self.cursor_row = cursor.map_or(0, |c| c.1.min(height.saturating_sub(1)));
        self.term.draw(|f| {
            // The buffer's own area, not ours: they are the same (see `fit`), and if they
            // ever were not, a row outside the buffer would be a panic.
            let area = f.area();
            let buf = f.buffer_mut();
            for (y, row) in (area.top()..area.bottom()).zip(rows) {
                buf.set_line(area.x, y, row, area.width);
            }
            if let Some((x, y)) = cursor.filter(|_| !area.is_empty()) {
                f.set_cursor_position(Position::new(
                    x.min(area.width.saturating_sub(1)),
                    area.y.saturating_add(y.min(area.height.saturating_sub(1))),
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

    /// Makes the viewport `rows` tall if that is shorter: it is cleared, and drawn again by
    /// the next `draw`.
    pub(crate) fn shrink(&mut self, rows: usize) -> Result<(), B> {
        let height = u16::try_from(rows)
            .unwrap_or(u16::MAX)
            .clamp(1, self.max_rows());
        if self.is_empty() || height >= self.area.height {
            return Ok(());
        }
        self.set_height(height)
    }

    /// Writes `lines` above the viewport. The viewport is redrawn by the next `draw`.
    pub(crate) fn insert_history(&mut self, lines: &[Line<'static>]) -> Result<(), B> {
        if lines.is_empty() || self.is_empty() {
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
            row = row.saturating_add(1);
        }
        // Room for the viewport under the new lines.
        let need = row
            .saturating_add(self.area.height)
            .saturating_sub(self.size.height);
        if need > 0 {
            backend.set_cursor_position(Position::new(0, bottom))?;
            backend.append_lines(need)?;
            row = row.saturating_sub(need);
        }
        backend.flush()?;
        self.area.y = row;
        self.fit()
    }

    /// Moves the viewport so it has `height` rows, scrolling the screen up when it would
    /// pass the bottom.
    fn set_height(&mut self, height: u16) -> Result<(), B> {
        if height == self.area.height {
            return Ok(());
        }
        let backend = self.term.backend_mut();
        let over = self
            .area
            .y
            .saturating_add(height)
            .saturating_sub(self.size.height);
        if over > 0 {
            backend.set_cursor_position(Position::new(0, self.size.height.saturating_sub(1)))?;
            backend.append_lines(over)?;
            self.area.y = self.area.y.saturating_sub(over);
        }
        // Everything under the viewport's top is ours: clear it, then draw afresh.
        backend.set_cursor_position(Position::new(0, self.area.y))?;
        backend.clear_region(ClearType::AfterCursor)?;
        self.area.height = height;
        self.fit()
    }

    /// The terminal changed size. The terminal may have moved our rows (reflowing them), so
    /// the viewport is found again from the cursor, which was left at a known row in it.
    pub(crate) fn resized(&mut self, width: u16, height: u16) -> Result<(), B> {
        let old = self.size;
        self.size = Size::new(width, height);
        if self.is_empty() {
            self.area = Rect::new(0, 0, width, 0);
            return self.fit();
        }
        let cursor_y = self
            .term
            .backend_mut()
            .get_cursor_position()
            .map(|p| p.y)
            .unwrap_or(self.area.y.saturating_add(self.cursor_row));
        let mut top = cursor_y.saturating_sub(self.cursor_row);
        if width < old.width && width > 0 {
            // Our old rows were as wide as the old screen: each may now take more rows.
            let per_row = old.width.div_ceil(width);
            top = top.saturating_sub(self.area.height.saturating_mul(per_row - 1));
        }
        // At least a row: the viewport may come back from a screen of no rows.
        let h = self.area.height.clamp(1, self.max_rows());
        top = top.min(height.saturating_sub(h));
        let backend = self.term.backend_mut();
        backend.set_cursor_position(Position::new(0, top))?;
        backend.clear_region(ClearType::AfterCursor)?;
        self.area = Rect::new(0, top, width, h);
        self.fit()
    }

    /// Gives ratatui's `Terminal` our viewport, so its buffers cover exactly `self.area`.
    /// Asked for a narrower area, ratatui moves it to the top row and clears the whole
    /// screen (a full-screen app's habit); for us that would wipe the transcript above the
    /// viewport and leave ratatui drawing at row 0 while we think the viewport is lower down,
    /// so the next frame indexes outside its buffer. A zero-height step takes the narrowing
    /// where nothing is cleared, and `Inline` drops the whole-screen clear.
    fn fit(&mut self) -> Result<(), B> {
        if self.area.width < self.term.get_frame().area().width {
            self.term.resize(Rect {
                height: 0,
                ..self.area
            })?;
        }
        self.term.resize(self.area)
    }

    /// Puts the screen right after a frame failed half-way: the viewport is found again and
    /// cleared, and the next frame is drawn whole.
    pub(crate) fn recover(&mut self) -> Result<(), B> {
        self.term.current_buffer_mut().reset();
        let size = self.term.backend().size().unwrap_or(self.size);
        self.resized(size.width, size.height)
    }

    /// Leaves the screen: the viewport is cleared and the cursor put where it began, so the
    /// shell's prompt follows the transcript.
    pub(crate) fn leave(&mut self) -> Result<(), B> {
        let empty = self.is_empty();
        let backend = self.term.backend_mut();
        if !empty {
            backend.set_cursor_position(Position::new(0, self.area.y))?;
            backend.clear_region(ClearType::AfterCursor)?;
        }
        backend.show_cursor()?;
        backend.flush()
    }
}

/// The backend as ratatui's `Terminal` sees it: everything passes through but a whole-screen
/// clear (either spelling), which ratatui sends when a viewport narrows and which would erase
/// the transcript above ours. Our own clears are from the viewport down.
struct Inline<B>(B);

impl<B: Backend> Backend for Inline<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> std::result::Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.0.draw(content)
    }

    fn append_lines(&mut self, n: u16) -> std::result::Result<(), Self::Error> {
        self.0.append_lines(n)
    }

    fn hide_cursor(&mut self) -> std::result::Result<(), Self::Error> {
        self.0.hide_cursor()
    }

    fn show_cursor(&mut self) -> std::result::Result<(), Self::Error> {
        self.0.show_cursor()
    }

    fn get_cursor_position(&mut self) -> std::result::Result<Position, Self::Error> {
        self.0.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(
        &mut self,
        position: P,
    ) -> std::result::Result<(), Self::Error> {
        self.0.set_cursor_position(position)
    }

    fn clear(&mut self) -> std::result::Result<(), Self::Error> {
        Ok(())
    }

    fn clear_region(&mut self, clear_type: ClearType) -> std::result::Result<(), Self::Error> {
        match clear_type {
            ClearType::All => Ok(()),
            other => self.0.clear_region(other),
        }
    }

    fn size(&self) -> std::result::Result<Size, Self::Error> {
        self.0.size()
    }

    fn window_size(&mut self) -> std::result::Result<WindowSize, Self::Error> {
        self.0.window_size()
    }

    fn flush(&mut self) -> std::result::Result<(), Self::Error> {
        self.0.flush()
    }

    fn scroll_region_up(
        &mut self,
        region: std::ops::Range<u16>,
        line_count: u16,
    ) -> std::result::Result<(), Self::Error> {
        self.0.scroll_region_up(region, line_count)
    }

    fn scroll_region_down(
        &mut self,
        region: std::ops::Range<u16>,
        line_count: u16,
    ) -> std::result::Result<(), Self::Error> {
        self.0.scroll_region_down(region, line_count)
    }
}
