//! The apply_patch parser and applier: patch text in, a plan over one file's text out.
//!
//! Input: `<patch text>\0<file text>`; without a NUL the whole input is the patch and the file
//! is empty. Every path reads the same file text, except paths containing `missing`, which do
//! not exist. Besides the patch parser this runs the shell-invocation parser on the patch text.
#![no_main]

use interpreter_core::tools::apply_patch::{
    Hunk, derive_new_contents, parse_patch, parse_shell_invocation, plan_patch, summary,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (patch, file) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let patch = String::from_utf8_lossy(patch);
    let file = String::from_utf8_lossy(file);

    let _ = parse_shell_invocation(&patch);
    let Ok(parsed) = parse_patch(&patch) else {
        return;
    };
    // Each Update hunk on its own against the file text…
    for hunk in &parsed.hunks {
        if let Hunk::UpdateFile { path, chunks, .. } = hunk {
            let _ = derive_new_contents(&file, path, chunks);
        }
    }
    // …and the whole patch, hunks seeing each other's results.
    let plan = plan_patch(&parsed, |path| {
        if path.contains("missing") {
            Err(format!("{path}: no such file"))
        } else {
            Ok(file.to_string())
        }
    });
    if let Ok(changes) = plan {
        assert_eq!(changes.len(), parsed.hunks.len(), "one change per hunk");
        let _ = summary(&changes);
    }
});
