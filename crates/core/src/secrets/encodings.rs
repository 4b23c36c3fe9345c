//! The forms a key takes when a command encodes what it prints: base64 (standard and URL-safe,
//! at each of the three alignments a key can have inside a longer stream), hex (lower and upper
//! case) and reversed. Tools wrap long encoded lines (`base64` at 76 columns, `xxd -p` at 60),
//! so the redaction regex allows a line break between any two characters.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use regex::Regex;

/// The encoded forms of `key`. For base64 only the characters that depend on the key's bytes
/// alone are kept: a key that starts 1 or 2 bytes into a 3-byte group shares its first
/// characters with whatever came before it, and its last with whatever follows.
pub(super) fn of(key: &str) -> Vec<String> {
    let bytes = key.as_bytes();
    let mut out = vec![
        key.chars().rev().collect::<String>(),
        hex(bytes, false),
        hex(bytes, true),
    ];
    for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        for offset in 0..3usize {
            let mut shifted = vec![0u8; offset];
            shifted.extend_from_slice(bytes);
            let encoded = engine.encode(&shifted);
            // Character i covers bits [6i, 6i + 6): keep those inside the key's bits.
            let first = (8 * offset).div_ceil(6);
            let last = (8 * shifted.len()) / 6;
            if let Some(core) = encoded.get(first..last) {
                out.push(core.to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn hex(bytes: &[u8], upper: bool) -> String {
    bytes
        .iter()
        .map(|b| {
            if upper {
                format!("{b:02X}")
            } else {
                format!("{b:02x}")
            }
        })
        .collect()
}

/// One regex matching any of `forms`, each allowed to be broken across lines.
pub(super) fn regex(forms: &[String]) -> Option<Regex> {
    if forms.is_empty() {
        return None;
    }
    let alternatives: Vec<String> = forms
        .iter()
        .map(|f| {
            f.chars()
                .map(|c| regex::escape(&c.to_string()))
                .collect::<Vec<_>>()
                .join(r"(?:\r?\n)?")
        })
        .collect();
    Regex::new(&alternatives.join("|")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};

    const KEY: &str = "sk-TEST-ABC123DISTINCT?>~";

    #[test]
    fn a_key_anywhere_in_an_encoded_stream_is_matched() {
        let re = regex(&of(KEY)).unwrap();
        for prefix in ["", "A", "AB", "MOCK_KEY=", "x\u{e9}"] {
            let text = format!("{prefix}{KEY}\nNEXT=1\n");
            for engine in [&STANDARD, &URL_SAFE] {
                let encoded = engine.encode(&text);
                assert!(re.is_match(&encoded), "{prefix:?}: {encoded}");
                // Wrapped as `base64` does, at every possible column.
                for width in [7, 60, 76] {
                    let wrapped: Vec<String> = encoded
                        .as_bytes()
                        .chunks(width)
                        .map(|c| String::from_utf8_lossy(c).into_owned())
                        .collect();
                    assert!(re.is_match(&wrapped.join("\n")), "{prefix:?} at {width}");
                }
            }
            let hex_lower = hex(text.as_bytes(), false);
            assert!(re.is_match(&hex_lower));
            assert!(re.is_match(&hex(text.as_bytes(), true)));
            let reversed: String = text.chars().rev().collect();
            assert!(re.is_match(&reversed));
        }
        assert!(!re.is_match(&STANDARD.encode("nothing secret here at all")));
    }
}
