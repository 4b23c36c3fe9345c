//! LSP message framing and dispatch: arbitrary bytes as `interpreter lsp`'s stdin, through
//! the same re-framing layer, tower-lsp-server codec and handlers (`frontend::lsp::serve_on`,
//! in process), then a probe request that must still be answered.
//!
//! Also checks that re-framing does not depend on how the input was cut. The probe is sent
//! only when the input ends between frames (otherwise it would be read as the rest of a
//! body) and has no `exit` notification (after which the server stops reading).
#![no_main]

use interpreter_lsp::framing::Reframer;
use interpreter_lsp::serve_on;
use libfuzzer_sys::fuzz_target;

const PROBE: &[u8] = br#"{"jsonrpc":"2.0","id":"fuzz-probe","method":"shutdown"}"#;

/// Whether the frames the server will read include an `exit` notification.
fn exits(frames: &[u8]) -> bool {
    let mut rest = frames;
    while let Some(i) = rest.windows(4).position(|w| w == b"\r\n\r\n") {
        let header = String::from_utf8_lossy(&rest[..i]);
        let Some(len) = header
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse::<usize>().ok())
        else {
            return false;
        };
        let body = &rest[i + 4..(i + 4 + len).min(rest.len())];
        if serde_json::from_slice::<serde_json::Value>(body)
            .is_ok_and(|v| v.get("method").and_then(|m| m.as_str()) == Some("exit"))
        {
            return true;
        }
        rest = &rest[(i + 4 + len).min(rest.len())..];
    }
    false
}

fuzz_target!(init: interpreter_fuzz::init_home(), |data: &[u8]| {
    let mut reframer = Reframer::new();
    let mut frames = Vec::new();
    reframer.feed(data, &mut frames);
    // The frames must not depend on how the input was cut.
    let mut cut = Reframer::new();
    let mut cut_frames = Vec::new();
    for piece in data.chunks(7) {
        cut.feed(piece, &mut cut_frames);
    }
    assert!(frames == cut_frames, "re-framing depends on chunk boundaries");
    assert_eq!(reframer.at_frame_boundary(), cut.at_frame_boundary());
    let probe = reframer.at_frame_boundary() && !exits(&frames);

    let mut input = data.to_vec();
    if probe {
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", PROBE.len()).as_bytes());
        input.extend_from_slice(PROBE);
    }
    let mut output = Vec::new();
    interpreter_fuzz::runtime().block_on(serve_on(Default::default(), std::io::Cursor::new(input), &mut output));
    interpreter_fuzz::reset_home();

    if probe {
        let out = String::from_utf8_lossy(&output);
        assert!(
            out.contains(r#""id":"fuzz-probe""#),
            "the probe request after the input went unanswered"
        );
    }
});
