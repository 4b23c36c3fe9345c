//! Text that is about to reach a terminal: what a model or a command wrote, with every
//! control character and control sequence removed, so it cannot move the cursor, clear the
//! screen, set the window title or write the clipboard (OSC 52). Only `\n` and `\t` stay.
//! Our own colours are added after this, so they are not affected.
//!
//! Removed: C0 controls (also `\r`) and DEL; C1 controls (U+0080–U+009F); two-character
//! escapes (`ESC 7`, `ESC ( B`, …); CSI sequences (`ESC [` or U+009B, up to the final byte);
//! string sequences — OSC (`ESC ]`, U+009D), DCS (`ESC P`, U+0090), SOS, PM and APC — up to
//! their terminator (BEL, ST as `ESC \` or U+009C, CAN or SUB). A string sequence also ends
//! at a newline, so an unterminated one hides at most the rest of its line.
//!
//! What a user is asked to approve is escaped instead ([`escape_invisible`]): a character that
//! hides or reorders text (U+202E, zero-width spaces, odd spaces, controls) is shown as
//! `\u{202e}`, so the ACP permission request and the terminal prompt show the whole command.
//!
//! [`TerminalText`] keeps its state between chunks, so a sequence split across two streamed
//! chunks is still removed whole. Pure: no I/O.

/// A streaming sanitizer: feed chunks in order with [`TerminalText::push`].
#[derive(Debug, Default, Clone)]
pub struct TerminalText {
    state: State,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (0x20–0x2F), waiting for the final byte.
    EscIntermediate,
    /// Inside a CSI sequence: parameter and intermediate bytes until a final byte.
    Csi,
    /// Inside OSC, DCS, SOS, PM or APC, until a terminator. `esc`: the last char was ESC.
    Str { esc: bool },
}

impl TerminalText {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Appends the displayable part of `chunk` to `out`.
    pub(crate) fn push(&mut self, chunk: &str, out: &mut String) {
        for c in chunk.chars() {
            self.step(c, out);
        }
    }

    /// The displayable part of `chunk`, as a new string.
    pub fn push_str(&mut self, chunk: &str) -> String {
        let mut out = String::with_capacity(chunk.len());
        self.push(chunk, &mut out);
        out
    }

    /// Ends the text: an unfinished sequence is dropped and the next chunk starts afresh.
    pub fn finish(&mut self) {
        self.state = State::Ground;
    }

    /// True when no sequence is open.
    #[cfg(test)]
    pub(crate) fn at_ground(&self) -> bool {
        self.state == State::Ground
    }

    fn step(&mut self, c: char, out: &mut String) {
        match self.state {
            State::Ground => self.ground(c, out),
            State::Escape => match c {
                '[' => self.state = State::Csi,
                ']' | 'P' | 'X' | '^' | '_' => self.state = State::Str { esc: false },
                '\u{20}'..='\u{2f}' => self.state = State::EscIntermediate,
                '\u{30}'..='\u{7e}' => self.state = State::Ground,
                _ => self.abort(c, out),
            },
            State::EscIntermediate => match c {
                '\u{20}'..='\u{2f}' => {}
                '\u{30}'..='\u{7e}' => self.state = State::Ground,
                _ => self.abort(c, out),
            },
            State::Csi => match c {
                '\u{20}'..='\u{3f}' => {}
                '\u{40}'..='\u{7e}' => self.state = State::Ground,
                _ => self.abort(c, out),
            },
            State::Str { esc: true } if c == '\\' => self.state = State::Ground,
            // ESC followed by anything else ends the string and starts a new escape.
            State::Str { esc: true } => {
                self.state = State::Escape;
                self.step(c, out);
            }
            State::Str { esc: false } => match c {
                '\x1b' => self.state = State::Str { esc: true },
                '\x07' | '\u{9c}' | '\x18' | '\x1a' => self.state = State::Ground,
                '\n' => {
                    self.state = State::Ground;
                    out.push('\n');
                }
                _ => {}
            },
        }
    }

    fn ground(&mut self, c: char, out: &mut String) {
        match c {
            '\n' | '\t' => out.push(c),
            '\x1b' => self.state = State::Escape,
            '\u{9b}' => self.state = State::Csi,
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => {
                self.state = State::Str { esc: false }
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }

    /// A sequence broken by a character that cannot be in it: drop what was read and treat
    /// the character as text again (it may itself start a sequence).
    fn abort(&mut self, c: char, out: &mut String) {
        self.state = State::Ground;
        self.ground(c, out);
    }
}

/// `text` without control characters and sequences (see the module docs).
pub fn sanitize(text: &str) -> String {
    TerminalText::new().push_str(text)
}

/// A character that shows as nothing, as a space, or changes how the text around it reads:
/// controls (but `\n` and `\t`), bidirectional controls (U+202E reverses what follows),
/// zero-width and invisible characters, and spaces other than U+0020 (a shell reads them as
/// part of a word).
fn disguises(c: char) -> bool {
    if c == '\n' || c == '\t' {
        return false;
    }
    c.is_control()
        || matches!(
            c,
            '\u{00A0}'
                | '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{1680}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180E}'
                | '\u{2000}'..='\u{200F}'
                | '\u{2028}'..='\u{202F}'
                | '\u{205F}'..='\u{206F}'
                | '\u{3000}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E007F}'
                | '\u{E0100}'..='\u{E01EF}'
        )
}

/// `text` as a user must see it to decide on it (a command to approve): every character of
/// [`disguises`] written as `\u{202e}`, newlines and tabs kept.
pub fn escape_invisible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if disguises(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// [`escape_invisible`] on one line: each newline shown as ` ⏎ `.
pub fn escape_one_line(text: &str) -> String {
    escape_invisible(text.trim_end_matches('\n')).replace('\n', " \u{23CE} ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_and_bidi_characters_are_escaped_for_approval() {
        let cmd = "echo ok\u{200B}\nrm -rf /tmp/\u{202E}txt.sh\u{00A0}x\x1b[2J\tend";
        assert_eq!(
            escape_invisible(cmd),
            "echo ok\\u{200b}\nrm -rf /tmp/\\u{202e}txt.sh\\u{a0}x\\u{1b}[2J\tend"
        );
        assert_eq!(
            escape_one_line("echo ok\nrm -rf x\n"),
            "echo ok \u{23CE} rm -rf x"
        );
        let plain = "grep -rn 'héllo → 世界' src";
        assert_eq!(escape_invisible(plain), plain);
    }

    #[test]
    fn plain_text_newlines_and_tabs_stay() {
        let t = "fn main() {\n\tprintln!(\"héllo → 世界\");\n}\n";
        assert_eq!(sanitize(t), t);
    }

    #[test]
    fn c0_c1_and_del_are_removed() {
        assert_eq!(
            sanitize("a\rb\x08c\x00d\x07e\x7ff\u{85}g\u{9c}h"),
            "abcdefgh"
        );
        assert_eq!(sanitize("line\r\nnext"), "line\nnext");
    }

    #[test]
    fn csi_sequences_are_removed() {
        assert_eq!(sanitize("\x1b[2Jclear"), "clear");
        assert_eq!(sanitize("\x1b[1;31mred\x1b[0m"), "red");
        assert_eq!(sanitize("\x1b[?1049hscreen"), "screen");
        assert_eq!(sanitize("\u{9b}2Jeight-bit"), "eight-bit");
    }

    #[test]
    fn osc_with_either_terminator_is_removed() {
        // OSC 52: write the clipboard. OSC 0: set the title.
        assert_eq!(sanitize("a\x1b]52;c;ZXZpbA==\x07b"), "ab");
        assert_eq!(sanitize("a\x1b]0;pwned\x1b\\b"), "ab");
        assert_eq!(sanitize("a\u{9d}0;pwned\u{9c}b"), "ab");
        assert_eq!(sanitize("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "link");
    }

    #[test]
    fn dcs_sos_pm_apc_are_removed() {
        assert_eq!(sanitize("a\x1bP1$r0m\x1b\\b"), "ab");
        assert_eq!(sanitize("a\u{90}q#0;2\u{9c}b"), "ab");
        assert_eq!(
            sanitize("a\x1bXsos\x1b\\b\x1b^pm\x07c\x1b_apc\x1b\\d"),
            "abcd"
        );
    }

    #[test]
    fn two_character_escapes_are_removed() {
        assert_eq!(sanitize("a\x1b7b\x1b8c\x1bcd\x1b(Be"), "abcde");
    }

    #[test]
    fn an_unterminated_string_ends_at_the_newline() {
        assert_eq!(sanitize("a\x1b]0;title\nvisible"), "a\nvisible");
        assert_eq!(sanitize("tail\x1b]52;c;"), "tail");
    }

    #[test]
    fn esc_inside_a_string_starts_a_new_sequence() {
        assert_eq!(sanitize("\x1b]0;t\x1b[2Jx"), "x");
    }

    #[test]
    fn a_broken_csi_keeps_the_text_after_it() {
        assert_eq!(sanitize("\x1b[12\u{e9}t\u{e9}"), "\u{e9}t\u{e9}");
        assert_eq!(sanitize("\x1b[1\nnext"), "\nnext");
    }

    /// Every way of cutting a hostile text into two chunks gives the same result as the
    /// whole text.
    #[test]
    fn sequences_split_across_chunks_are_still_removed() {
        let hostile = "ok \x1b]52;c;ZXZpbA==\x07 \x1b[2J\x1b]0;t\x1b\\ \u{9b}31m\u{9d}x\u{9c}\x1bP+q\x1b\\ end\n";
        let whole = sanitize(hostile);
        assert_eq!(whole, "ok    end\n");
        let chars: Vec<char> = hostile.chars().collect();
        for cut in 0..=chars.len() {
            let (a, b): (String, String) =
                (chars[..cut].iter().collect(), chars[cut..].iter().collect());
            let mut t = TerminalText::new();
            let mut out = t.push_str(&a);
            out.push_str(&t.push_str(&b));
            assert_eq!(out, whole, "cut at {cut}");
            assert!(t.at_ground());
        }
    }

    #[test]
    fn finish_drops_an_open_sequence() {
        let mut t = TerminalText::new();
        assert_eq!(t.push_str("a\x1b]0;"), "a");
        assert!(!t.at_ground());
        t.finish();
        assert_eq!(t.push_str("b"), "b");
    }
}
