//! An answer as it streams: text is cleaned as it arrives (a control sequence split across
//! two deltas is still removed whole), and complete blocks are handed to the transcript as
//! soon as they cannot change any more, so the live viewport only ever holds the block being
//! written.

use interpreter_face::terminal_text::TerminalText;

/// One streaming agent message.
#[derive(Debug, Default)]
pub(crate) struct AgentStream {
    /// The message the deltas belong to.
    pub message_id: String,
    sanitizer: TerminalText,
    /// Clean markdown not yet in the transcript.
    pending: String,
    /// A part of this message is in the transcript already (the bullet was drawn).
    pub committed_any: bool,
    /// Where scanning for a boundary resumes, and the fence state there.
    scanned: usize,
    in_fence: Option<String>,
    /// The last boundary found: `pending[..boundary]` can be committed.
    boundary: usize,
    prev_blank: bool,
}

impl AgentStream {
    /// A stream for `message_id`.
    pub(crate) fn new(message_id: &str) -> AgentStream {
        AgentStream {
            message_id: message_id.to_string(),
            ..Default::default()
        }
    }

    /// Adds a delta.
    pub(crate) fn push(&mut self, delta: &str) {
        let clean = self.sanitizer.push_str(delta).replace('\t', "    ");
        self.pending.push_str(&clean);
        self.scan();
    }

    /// The text not yet committed, to draw live.
    pub(crate) fn pending(&self) -> &str {
        &self.pending
    }

    /// Complete blocks, taken out of the pending text, if there are any.
    pub(crate) fn take_complete(&mut self) -> Option<String> {
        if self.boundary == 0 {
            return None;
        }
        let rest = self.pending.split_off(self.boundary);
        let done = std::mem::replace(&mut self.pending, rest);
        self.scanned -= self.boundary;
        self.boundary = 0;
        (!done.trim().is_empty()).then_some(done)
    }

    /// Everything left, when the message is complete.
    pub(crate) fn finish(&mut self) -> Option<String> {
        self.sanitizer.finish();
        self.boundary = 0;
        self.scanned = 0;
        let done = std::mem::take(&mut self.pending);
        (!done.trim().is_empty()).then_some(done)
    }

    /// Finds block boundaries in the complete lines not scanned yet: the start of an
    /// unindented line after a blank line outside a code fence, or the line after a closing
    /// fence. An indented line after a blank one may continue a list item, so it is not one.
    fn scan(&mut self) {
        while let Some(nl) = self.pending[self.scanned..].find('\n') {
            let start = self.scanned;
            let line = &self.pending[start..start + nl];
            let next = start + nl + 1;
            let fence = fence_marker(line);
            match (&self.in_fence, fence) {
                (Some(open), Some(f))
                    if f.starts_with(open.as_str())
                        && line
                            .trim_start()
                            .trim_start_matches(['`', '~'])
                            .trim()
                            .is_empty() =>
                {
                    self.in_fence = None;
                    self.boundary = next;
                    self.prev_blank = false;
                }
                (Some(_), _) => {}
                (None, f) => {
                    let blank = line.trim().is_empty();
                    let unindented = !line.starts_with([' ', '\t']);
                    if self.prev_blank && !blank && unindented {
                        self.boundary = start;
                    }
                    if let Some(f) = f {
                        self.in_fence = Some(f);
                    }
                    self.prev_blank = blank;
                }
            }
            self.scanned = next;
        }
        // A new block may start before its line is complete.
        let partial = &self.pending[self.scanned..];
        if self.in_fence.is_none()
            && self.prev_blank
            && partial.starts_with(|c: char| !c.is_whitespace())
        {
            self.boundary = self.scanned;
        }
    }
}

/// The fence a line opens or closes (```` ``` ```` or `~~~`, three or more), if any.
fn fence_marker(line: &str) -> Option<String> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    for ch in ['`', '~'] {
        let n = t.chars().take_while(|c| *c == ch).count();
        if n >= 3 {
            return Some(ch.to_string().repeat(n));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_commit_when_the_next_block_starts() {
        let mut s = AgentStream::new("m");
        s.push("First para");
        s.push("graph.\n\nSecond");
        assert_eq!(s.take_complete().as_deref(), Some("First paragraph.\n\n"));
        assert_eq!(s.pending(), "Second");
        s.push(" one.\n\n```rust\nfn a() {}\n\nfn b() {}\n");
        // Inside the fence the blank line is no boundary.
        assert_eq!(s.take_complete().as_deref(), Some("Second one.\n\n"));
        s.push("```\nafter\n");
        assert_eq!(
            s.take_complete().as_deref(),
            Some("```rust\nfn a() {}\n\nfn b() {}\n```\n")
        );
        assert_eq!(s.finish().as_deref(), Some("after\n"));
    }

    #[test]
    fn indented_continuations_stay_with_their_item() {
        let mut s = AgentStream::new("m");
        s.push("1. item\n\n   more of it\n\n2. next\n");
        assert_eq!(
            s.take_complete().as_deref(),
            Some("1. item\n\n   more of it\n\n")
        );
    }

    #[test]
    fn split_escape_sequences_are_removed() {
        let mut s = AgentStream::new("m");
        s.push("a\x1b]0;ti");
        s.push("tle\x07b");
        assert_eq!(s.finish().as_deref(), Some("ab"));
    }
}
