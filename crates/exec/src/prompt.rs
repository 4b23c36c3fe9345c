//! The prompt from argv and stdin, and the session commands (`/harness`, `/model`) that lead it.

use std::io::{IsTerminal, Read};

use interpreter_face::slash;

/// The prompt from argv, stdin, or both (stdin appended as a `<stdin>` block).
pub(crate) fn read_prompt(positional: Option<String>) -> Result<String, String> {
    let stdin_is_tty = std::io::stdin().is_terminal();
    let read_stdin = || -> Result<String, String> {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("reading the prompt from stdin: {e}"))?;
        decode_prompt(&bytes)
    };
    match positional {
        Some(p) if p == "-" => read_stdin(),
        Some(p) if !stdin_is_tty => {
            let extra = read_stdin().unwrap_or_default();
            if extra.trim().is_empty() {
                Ok(p)
            } else {
                Ok(format!("{p}\n\n<stdin>\n{}\n</stdin>", extra.trim_end()))
            }
        }
        Some(p) => Ok(p),
        None if stdin_is_tty => {
            Err("No prompt provided. Pass it as an argument or on stdin.".into())
        }
        None => {
            eprintln!("Reading prompt from stdin...");
            read_stdin()
        }
    }
}

/// UTF-8 (BOM stripped) or UTF-16 with a BOM.
fn decode_prompt(bytes: &[u8]) -> Result<String, String> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8(rest.to_vec())
            .map_err(|_| "the prompt is not valid UTF-8".into());
    }
    let utf16 = |rest: &[u8], le: bool| -> Result<String, String> {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16(&units).map_err(|_| "the prompt is not valid UTF-16".into())
    };
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, true);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, false);
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| "the prompt is not valid UTF-8".into())
}

/// Leading `/harness X` and `/model X` lines are session commands, not model input.
pub(crate) fn split_session_commands(prompt: &str) -> (Vec<(String, String)>, String) {
    let mut commands = Vec::new();
    let mut rest = prompt;
    loop {
        let trimmed = rest.trim_start_matches(['\n', '\r']);
        let (line, after) = match trimmed.split_once('\n') {
            Some((l, a)) => (l, a),
            None => (trimmed, ""),
        };
        let Some((name, arg)) = slash::split(line) else {
            break;
        };
        if !matches!(name, "harness" | "model") || arg.is_empty() {
            break;
        }
        commands.push((name.to_string(), arg.to_string()));
        rest = after;
    }
    (commands, rest.trim_start_matches(['\n', '\r']).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_lines_are_commands_only_when_known() {
        let (c, p) = split_session_commands("/harness kimi-code\n/model k3\nfix the bug\n");
        assert_eq!(
            c,
            vec![
                ("harness".into(), "kimi-code".into()),
                ("model".into(), "k3".into())
            ]
        );
        assert_eq!(p, "fix the bug\n");
        let (c, p) = split_session_commands("/usr/bin is broken\n");
        assert!(c.is_empty());
        assert_eq!(p, "/usr/bin is broken\n");
    }

    #[test]
    fn bom_and_utf16() {
        assert_eq!(decode_prompt(b"\xEF\xBB\xBFhi").unwrap(), "hi");
        assert_eq!(decode_prompt(b"\xFF\xFEh\0i\0").unwrap(), "hi");
    }
}
