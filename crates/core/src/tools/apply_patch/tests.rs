use std::collections::HashMap;

use super::*;

fn wrap(body: &str) -> String {
    format!("*** Begin Patch\n{body}\n*** End Patch\n")
}

fn chunks_of(patch: &Patch, index: usize) -> &[UpdateChunk] {
    match &patch.hunks[index] {
        Hunk::UpdateFile { chunks, .. } => chunks,
        other => panic!("expected update hunk, got {other:?}"),
    }
}

/// Parse `body` (wrapped in the envelope) as a single Update hunk and apply it.
fn apply_update(original: &str, body: &str) -> Result<String, PatchError> {
    let patch = parse_patch(&wrap(&format!("*** Update File: f.txt\n{body}")))?;
    derive_new_contents(original, "f.txt", chunks_of(&patch, 0))
}

fn files(entries: &[(&str, &str)]) -> HashMap<String, String> {
    entries
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect()
}

fn plan(patch_text: &str, fs: &HashMap<String, String>) -> Result<Vec<PlannedChange>, PatchError> {
    let patch = parse_patch(patch_text)?;
    plan_patch(&patch, |path| {
        fs.get(path)
            .cloned()
            .ok_or_else(|| "No such file or directory".to_string())
    })
}

fn parse_err(text: &str) -> String {
    match parse_patch(text) {
        Err(PatchError::Parse(msg)) => msg,
        other => panic!("expected parse error, got {other:?}"),
    }
}

// ---------------------------------------------------------------- parsing

#[test]
fn add_file() {
    let patch = parse_patch(&wrap("*** Add File: src/new.rs\n+fn main() {}\n+// end")).unwrap();
    assert_eq!(
        patch.hunks,
        vec![Hunk::AddFile {
            path: "src/new.rs".into(),
            contents: "fn main() {}\n// end\n".into()
        }]
    );
}

#[test]
fn add_file_with_empty_plus_lines() {
    let patch = parse_patch(&wrap("*** Add File: a.txt\n+first\n+\n+\n+last")).unwrap();
    assert_eq!(
        patch.hunks[0],
        Hunk::AddFile {
            path: "a.txt".into(),
            contents: "first\n\n\nlast\n".into()
        }
    );
}

#[test]
fn delete_file_parses_and_plans() {
    let text = wrap("*** Delete File: old.txt");
    let patch = parse_patch(&text).unwrap();
    assert_eq!(
        patch.hunks,
        vec![Hunk::DeleteFile {
            path: "old.txt".into()
        }]
    );
    let changes = plan(&text, &files(&[("old.txt", "bye\n")])).unwrap();
    assert_eq!(
        changes,
        vec![PlannedChange::Delete {
            path: "old.txt".into(),
            old_contents: "bye\n".into()
        }]
    );
}

#[test]
fn update_chunk_structure() {
    let patch = parse_patch(&wrap(
        "*** Update File: a.py\n@@ def f():\n     x = 1\n-    return x\n+    return x + 1",
    ))
    .unwrap();
    assert_eq!(
        patch.hunks[0],
        Hunk::UpdateFile {
            path: "a.py".into(),
            move_path: None,
            chunks: vec![UpdateChunk {
                change_context: vec!["def f():".into()],
                old_lines: vec!["    x = 1".into(), "    return x".into()],
                new_lines: vec!["    x = 1".into(), "    return x + 1".into()],
                is_end_of_file: false,
            }],
        }
    );
}

#[test]
fn missing_begin_marker() {
    assert_eq!(
        parse_err("*** Add File: a\n+x\n*** End Patch"),
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    );
    assert_eq!(
        parse_err(""),
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    );
}

#[test]
fn missing_end_marker() {
    assert_eq!(
        parse_err("*** Begin Patch\n*** Add File: a\n+x\n"),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
    assert_eq!(
        parse_err("*** Begin Patch"),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
}

#[test]
fn heredoc_wrapped_patch() {
    for opener in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
        let text = format!("{opener}\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n");
        let patch = parse_patch(&text).unwrap();
        assert_eq!(
            patch.hunks,
            vec![Hunk::AddFile {
                path: "a".into(),
                contents: "x\n".into()
            }]
        );
    }
}

#[test]
fn whitespace_around_markers_and_patch() {
    let text = "\n\n   *** Begin Patch   \n  *** Add File:   a.txt  \n+x\n   *** Update File: b.txt \n  *** Move to: c.txt\n@@\n-y\n+z\n  *** End Patch  \n\n";
    let patch = parse_patch(text).unwrap();
    assert_eq!(patch.hunks.len(), 2);
    assert_eq!(
        patch.hunks[0],
        Hunk::AddFile {
            path: "a.txt".into(),
            contents: "x\n".into()
        }
    );
    match &patch.hunks[1] {
        Hunk::UpdateFile {
            path, move_path, ..
        } => {
            assert_eq!(path, "b.txt");
            assert_eq!(move_path.as_deref(), Some("c.txt"));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn invalid_hunk_header_names_line() {
    let msg = parse_err(&wrap("*** Add File: a\n+x\n*** Frobnicate File: b"));
    assert_eq!(
        msg,
        "invalid hunk at line 4, '*** Frobnicate File: b' is not a valid hunk header. \
         Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    );
}

#[test]
fn empty_update_hunk() {
    let msg = parse_err(&wrap("*** Update File: src/lib.rs"));
    assert_eq!(
        msg,
        "invalid hunk at line 2, Update file hunk for path 'src/lib.rs' is empty"
    );
}

#[test]
fn non_prefixed_line_after_chunk_is_error() {
    let msg = parse_err(&wrap("*** Update File: a\n@@\n-x\n+y\nstray line"));
    assert!(
        msg.starts_with(
            "invalid hunk at line 6, Expected update hunk to start with a @@ context marker"
        ),
        "{msg}"
    );
}

#[test]
fn empty_chunk_after_header_is_error() {
    let msg = parse_err(&wrap("*** Update File: a\n@@ fn x"));
    assert!(
        msg.contains("Update hunk does not contain any lines"),
        "{msg}"
    );
}

#[test]
fn patch_without_hunks_is_error() {
    assert!(parse_err("*** Begin Patch\n*** End Patch").contains("does not contain any hunks"));
}

#[test]
fn crlf_patch_text_parses() {
    let text = "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n";
    assert_eq!(
        parse_patch(text).unwrap().hunks[0],
        Hunk::AddFile {
            path: "a".into(),
            contents: "x\n".into()
        }
    );
}

// ---------------------------------------------------------------- applying

#[test]
fn update_single_chunk() {
    let out = apply_update("a\nb\nc\n", "@@\n a\n-b\n+B\n c").unwrap();
    assert_eq!(out, "a\nB\nc\n");
}

#[test]
fn multiple_chunks_in_one_file() {
    let original = "one\ntwo\nthree\nfour\nfive\nsix\n";
    let out = apply_update(original, "@@\n one\n-two\n+2\n@@\n four\n-five\n+5\n six").unwrap();
    assert_eq!(out, "one\n2\nthree\nfour\n5\nsix\n");
}

#[test]
fn first_chunk_without_header() {
    let patch = parse_patch(&wrap("*** Update File: a\n x\n-y\n+z\n@@ tail\n-t\n+T")).unwrap();
    let chunks = chunks_of(&patch, 0);
    assert_eq!(chunks.len(), 2);
    assert!(chunks[0].change_context.is_empty());
    assert_eq!(chunks[1].change_context, vec!["tail".to_string()]);
    let out = derive_new_contents("x\ny\ntail\nt\n", "a", chunks).unwrap();
    assert_eq!(out, "x\nz\ntail\nT\n");
}

#[test]
fn context_header_selects_occurrence() {
    let original = "def a():\n    return 1\n\ndef b():\n    return 1\n";
    let out = apply_update(original, "@@ def b():\n-    return 1\n+    return 2").unwrap();
    assert_eq!(out, "def a():\n    return 1\n\ndef b():\n    return 2\n");
}

#[test]
fn stacked_context_headers() {
    let original = "class Foo:\n    def bar(self):\n        pass\n\nclass Baz:\n    def bar(self):\n        pass\n";
    let body = "@@ class Baz:\n@@     def bar(self):\n-        pass\n+        return 42";
    let patch = parse_patch(&wrap(&format!("*** Update File: f.txt\n{body}"))).unwrap();
    assert_eq!(
        chunks_of(&patch, 0)[0].change_context,
        vec!["class Baz:".to_string(), "    def bar(self):".to_string()]
    );
    let out = apply_update(original, body).unwrap();
    assert_eq!(
        out,
        "class Foo:\n    def bar(self):\n        pass\n\nclass Baz:\n    def bar(self):\n        return 42\n"
    );
}

#[test]
fn unified_diff_range_header_is_ignored() {
    let patch = parse_patch(&wrap("*** Update File: f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B")).unwrap();
    assert!(chunks_of(&patch, 0)[0].change_context.is_empty());
    let patch = parse_patch(&wrap("*** Update File: f.txt\n@@ -1 +1 @@ fn x()\n-b\n+B")).unwrap();
    assert!(chunks_of(&patch, 0)[0].change_context.is_empty());
    // Ordinary context that merely starts with '-' is kept.
    let patch = parse_patch(&wrap("*** Update File: f.txt\n@@ -- comment\n-b\n+B")).unwrap();
    assert_eq!(
        chunks_of(&patch, 0)[0].change_context,
        vec!["-- comment".to_string()]
    );
}

#[test]
fn missing_context_header_error() {
    let err = apply_update("a\nb\n", "@@ nowhere\n-a\n+b").unwrap_err();
    assert_eq!(
        err,
        PatchError::Apply("Failed to find context 'nowhere' in f.txt".into())
    );
}

#[test]
fn end_of_file_anchors_at_end() {
    let original = "x\nend\ny\nend\n";
    let patch = parse_patch(&wrap(
        "*** Update File: f.txt\n@@\n-end\n+END\n*** End of File",
    ))
    .unwrap();
    assert!(chunks_of(&patch, 0)[0].is_end_of_file);
    let out = derive_new_contents(original, "f.txt", chunks_of(&patch, 0)).unwrap();
    assert_eq!(out, "x\nend\ny\nEND\n");
}

#[test]
fn end_of_file_with_trailing_blank_context_still_anchors_at_end() {
    // The empty line before `*** End of File` must not let the pattern match
    // an earlier "end" that happens to be followed by a blank line.
    let original = "end\n\nmiddle\nend\n";
    let out = apply_update(original, "@@\n-end\n+END\n\n*** End of File").unwrap();
    assert_eq!(out, "end\n\nmiddle\nEND\n");
}

#[test]
fn end_of_file_falls_back_to_normal_search() {
    let out = apply_update("a\nb\nc\n", "@@\n-b\n+B\n*** End of File").unwrap();
    assert_eq!(out, "a\nB\nc\n");
}

#[test]
fn pure_insertion_appends_at_end() {
    let out = apply_update("a\nb\n", "@@\n+c\n+d").unwrap();
    assert_eq!(out, "a\nb\nc\nd\n");
}

#[test]
fn pure_insertion_after_context_line() {
    let out = apply_update(
        "import os\n\ndef main():\n    pass\n",
        "@@ import os\n+import sys",
    )
    .unwrap();
    assert_eq!(out, "import os\nimport sys\n\ndef main():\n    pass\n");
}

#[test]
fn trailing_whitespace_fuzz() {
    // Like Codex, the matched region (context included) is rewritten from
    // the patch text.
    let out = apply_update("foo   \nbar\t\nbaz\n", "@@\n-foo\n+FOO\n bar").unwrap();
    assert_eq!(out, "FOO\nbar\nbaz\n");
}

#[test]
fn leading_and_trailing_whitespace_fuzz() {
    let out = apply_update(
        "    indented = 1  \nnext\n",
        "@@\n-indented = 1\n+    indented = 2",
    )
    .unwrap();
    assert_eq!(out, "    indented = 2\nnext\n");
}

#[test]
fn unicode_punctuation_fuzz() {
    let original = "say(\u{201C}hi\u{201D}) \u{2014} it\u{2019}s\u{00A0}fine\nok\n";
    let out = apply_update(original, "@@\n-say(\"hi\") - it's fine\n+say(\"bye\")\n ok").unwrap();
    assert_eq!(out, "say(\"bye\")\nok\n");
}

#[test]
fn unicode_fuzz_in_context_header() {
    let original = "// section \u{2013} one\nx = 1\n// section \u{2013} two\nx = 1\n";
    let out = apply_update(original, "@@ // section - two\n-x = 1\n+x = 2").unwrap();
    assert_eq!(
        out,
        "// section \u{2013} one\nx = 1\n// section \u{2013} two\nx = 2\n"
    );
}

#[test]
fn empty_line_inside_chunk_is_context() {
    let patch = parse_patch(&wrap("*** Update File: f.txt\n@@\n a\n\n-b\n+B")).unwrap();
    let chunk = &chunks_of(&patch, 0)[0];
    assert_eq!(chunk.old_lines, vec!["a", "", "b"]);
    assert_eq!(chunk.new_lines, vec!["a", "", "B"]);
    let out = derive_new_contents("a\n\nb\n", "f.txt", chunks_of(&patch, 0)).unwrap();
    assert_eq!(out, "a\n\nB\n");
}

#[test]
fn retry_without_trailing_empty_line() {
    // The trailing blank context line stands for the final newline.
    let out = apply_update("a\nb\n", "@@\n a\n-b\n+c\n").unwrap();
    assert_eq!(out, "a\nc\n");
}

#[test]
fn chunk_that_does_not_apply() {
    let err = apply_update("a\nb\n", "@@\n a\n-missing\n+x").unwrap_err();
    assert_eq!(
        err,
        PatchError::Apply("Failed to find expected lines in f.txt:\na\nmissing".into())
    );
    assert_eq!(
        err.to_string(),
        "Failed to find expected lines in f.txt:\na\nmissing"
    );
}

#[test]
fn file_without_trailing_newline_gets_one() {
    let out = apply_update("a\nb", "@@\n-a\n+A").unwrap();
    assert_eq!(out, "A\nb\n");
}

#[test]
fn result_always_ends_with_newline() {
    for original in ["x", "x\n", "x\ny", "x\ny\n"] {
        let out = apply_update(original, "@@\n-x\n+z").unwrap();
        assert!(out.ends_with('\n'), "{out:?}");
        assert!(!out.ends_with("\n\n"), "{out:?}");
    }
    let out = apply_update("last", "@@\n+appended").unwrap();
    assert_eq!(out, "last\nappended\n");
}

#[test]
fn crlf_is_preserved() {
    let out = apply_update("a\r\nb\r\nc\r\n", "@@\n a\n-b\n+B\n+B2\n c").unwrap();
    assert_eq!(out, "a\r\nB\r\nB2\r\nc\r\n");
}

#[test]
fn lf_only_file_stays_lf() {
    let out = apply_update("a\nb\nc\n", "@@\n a\n-b\n+B\n c").unwrap();
    assert_eq!(out, "a\nB\nc\n");
}

#[test]
fn cr_only_file_is_split_on_cr_and_stays_cr() {
    let out = apply_update("a\rb\rc\r", "@@\n a\n-b\n+B\n+B2\n c").unwrap();
    assert_eq!(out, "a\rB\rB2\rc\r");
}

#[test]
fn mixed_endings_untouched_lines_keep_theirs_new_lines_take_the_first() {
    // First line ends in CRLF: added and replaced lines get CRLF; every other line keeps its
    // own ending, the context lines inside the chunk included.
    let original = "one\r\ntwo\nthree\rfour\nfive\r\nsix\n";
    let out = apply_update(original, "@@\n two\n-three\n+THREE\n four\n+added\n five").unwrap();
    assert_eq!(out, "one\r\ntwo\nTHREE\r\nfour\nadded\r\nfive\r\nsix\n");
    // First line ends in LF.
    let out = apply_update("a\nb\r\nc\rd\r\n", "@@\n-c\n+C").unwrap();
    assert_eq!(out, "a\nb\r\nC\nd\r\n");
    // First line ends in CR; a pure insertion at the end.
    let out = apply_update("a\rb\nc\r\n", "@@\n+z").unwrap();
    assert_eq!(out, "a\rb\nc\r\nz\r");
}

#[test]
fn untouched_lines_are_byte_identical_across_chunks() {
    let mut original = String::new();
    let ends = ["\n", "\r\n", "\r"];
    for i in 0..30 {
        original.push_str(&format!("line {i}{}", ends[i % 3]));
    }
    let out = apply_update(&original, "@@\n-line 4\n+LINE 4\n@@\n line 20\n-line 21\n").unwrap();
    let expected = original
        .replace("line 4\r\n", "LINE 4\n")
        .replace("line 21\n", "");
    assert_eq!(out, expected);
}

#[test]
fn last_line_without_ending_gets_the_first_lines_ending() {
    let out = apply_update("a\r\nb", "@@\n-a\n+A").unwrap();
    assert_eq!(out, "A\r\nb\r\n");
    let out = apply_update("a\r\nb", "@@\n+c").unwrap();
    assert_eq!(out, "a\r\nb\r\nc\r\n");
}

#[test]
fn context_line_repeated_in_chunk_body() {
    // Models often restate the `@@` line as the first context line.
    let out = apply_update(
        "fn a() {\n    1\n}\n",
        "@@ fn a() {\n fn a() {\n-    1\n+    2",
    )
    .unwrap();
    assert_eq!(out, "fn a() {\n    2\n}\n");
}

// ---------------------------------------------------------------- planning

#[test]
fn multiple_files_in_one_patch() {
    let text = wrap(
        "*** Add File: new.txt\n+hello\n*** Delete File: gone.txt\n*** Update File: keep.txt\n@@\n-old\n+new",
    );
    let fs = files(&[("gone.txt", "g\n"), ("keep.txt", "old\n")]);
    let changes = plan(&text, &fs).unwrap();
    assert_eq!(
        changes,
        vec![
            PlannedChange::Add {
                path: "new.txt".into(),
                contents: "hello\n".into()
            },
            PlannedChange::Delete {
                path: "gone.txt".into(),
                old_contents: "g\n".into()
            },
            PlannedChange::Update {
                path: "keep.txt".into(),
                move_path: None,
                old_contents: "old\n".into(),
                new_contents: "new\n".into()
            },
        ]
    );
    assert_eq!(
        summary(&changes),
        "Success. Updated the following files:\nA new.txt\nD gone.txt\nM keep.txt\n"
    );
}

#[test]
fn move_with_content_change() {
    let text = wrap("*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-fn a() {}\n+fn b() {}");
    let changes = plan(&text, &files(&[("src/a.rs", "fn a() {}\n")])).unwrap();
    assert_eq!(
        changes,
        vec![PlannedChange::Update {
            path: "src/a.rs".into(),
            move_path: Some("src/b.rs".into()),
            old_contents: "fn a() {}\n".into(),
            new_contents: "fn b() {}\n".into()
        }]
    );
    assert_eq!(
        summary(&changes),
        "Success. Updated the following files:\nM src/b.rs\n"
    );
}

#[test]
fn move_without_content_change() {
    let text = wrap("*** Update File: a.txt\n*** Move to: b.txt\n@@\n same");
    let changes = plan(&text, &files(&[("a.txt", "same\n")])).unwrap();
    assert_eq!(
        changes,
        vec![PlannedChange::Update {
            path: "a.txt".into(),
            move_path: Some("b.txt".into()),
            old_contents: "same\n".into(),
            new_contents: "same\n".into()
        }]
    );
}

#[test]
fn later_hunk_sees_moved_file() {
    let text = wrap(
        "*** Update File: a.txt\n*** Move to: b.txt\n@@\n-1\n+2\n*** Update File: b.txt\n@@\n-2\n+3",
    );
    let changes = plan(&text, &files(&[("a.txt", "1\n")])).unwrap();
    match &changes[1] {
        PlannedChange::Update { new_contents, .. } => assert_eq!(new_contents, "3\n"),
        other => panic!("unexpected {other:?}"),
    }
    let err = plan(
        &wrap("*** Update File: a.txt\n*** Move to: b.txt\n@@\n 1\n*** Delete File: a.txt"),
        &files(&[("a.txt", "1\n")]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("a.txt"), "{err}");
}

#[test]
fn two_hunks_on_same_file() {
    let text = wrap("*** Update File: f.txt\n@@\n-a\n+b\n*** Update File: f.txt\n@@\n-b\n+c");
    let changes = plan(&text, &files(&[("f.txt", "a\n")])).unwrap();
    assert_eq!(
        changes[1],
        PlannedChange::Update {
            path: "f.txt".into(),
            move_path: None,
            old_contents: "b\n".into(),
            new_contents: "c\n".into()
        }
    );
}

#[test]
fn add_then_update_same_file() {
    let text = wrap("*** Add File: n.txt\n+one\n*** Update File: n.txt\n@@\n one\n+two");
    let changes = plan(&text, &HashMap::new()).unwrap();
    assert_eq!(
        changes[1],
        PlannedChange::Update {
            path: "n.txt".into(),
            move_path: None,
            old_contents: "one\n".into(),
            new_contents: "one\ntwo\n".into()
        }
    );
}

#[test]
fn add_over_existing_file_is_allowed() {
    let changes = plan(&wrap("*** Add File: a\n+new"), &files(&[("a", "old\n")])).unwrap();
    assert_eq!(
        changes,
        vec![PlannedChange::Add {
            path: "a".into(),
            contents: "new\n".into()
        }]
    );
}

#[test]
fn failing_hunk_fails_whole_plan() {
    let text = wrap("*** Add File: ok.txt\n+fine\n*** Update File: f.txt\n@@\n-not there\n+x");
    let err = plan(&text, &files(&[("f.txt", "something else\n")])).unwrap_err();
    assert_eq!(
        err,
        PatchError::Apply("Failed to find expected lines in f.txt:\nnot there".into())
    );
}

#[test]
fn update_missing_file() {
    let err = plan(
        &wrap("*** Update File: nope.txt\n@@\n-a\n+b"),
        &HashMap::new(),
    )
    .unwrap_err();
    assert!(matches!(err, PatchError::Apply(_)));
    assert_eq!(
        err.to_string(),
        "Failed to read file to update nope.txt: No such file or directory"
    );
}

#[test]
fn delete_missing_file() {
    let err = plan(&wrap("*** Delete File: nope.txt"), &HashMap::new()).unwrap_err();
    assert!(matches!(err, PatchError::Apply(_)));
    assert!(err.to_string().contains("nope.txt"), "{err}");
}

#[test]
fn summary_text() {
    let changes = vec![
        PlannedChange::Add {
            path: "a".into(),
            contents: String::new(),
        },
        PlannedChange::Update {
            path: "b".into(),
            move_path: None,
            old_contents: String::new(),
            new_contents: String::new(),
        },
        PlannedChange::Update {
            path: "c".into(),
            move_path: Some("d".into()),
            old_contents: String::new(),
            new_contents: String::new(),
        },
        PlannedChange::Delete {
            path: "e".into(),
            old_contents: String::new(),
        },
    ];
    assert_eq!(
        summary(&changes),
        "Success. Updated the following files:\nA a\nM b\nM d\nD e\n"
    );
}

// ---------------------------------------------------------------- shell

const PATCH: &str = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";

#[test]
fn shell_heredoc_quoted_and_unquoted() {
    for opener in ["<<'EOF'", "<<EOF", "<< \"EOF\"", "<<'PATCH'"] {
        let delim = opener
            .trim_start_matches("<<")
            .trim()
            .trim_matches(['\'', '"']);
        let cmd = format!("apply_patch {opener}\n{PATCH}{delim}\n");
        assert_eq!(
            parse_shell_invocation(&cmd),
            Some((None, PATCH.to_string())),
            "{cmd}"
        );
    }
}

#[test]
fn shell_cd_prefix_and_alias() {
    let cmd = format!("cd src/app && applypatch <<'EOF'\n{PATCH}EOF");
    assert_eq!(
        parse_shell_invocation(&cmd),
        Some((Some("src/app".to_string()), PATCH.to_string()))
    );
    let cmd = format!("cd \"my dir\" && apply_patch <<EOF\n{PATCH}EOF\n");
    assert_eq!(
        parse_shell_invocation(&cmd),
        Some((Some("my dir".to_string()), PATCH.to_string()))
    );
}

#[test]
fn shell_single_argument_form() {
    let cmd = format!("apply_patch '{PATCH}'");
    assert_eq!(
        parse_shell_invocation(&cmd),
        Some((None, PATCH.to_string()))
    );
    let quoted = PATCH.replace('"', "\\\"");
    let cmd = format!("apply_patch \"{quoted}\"");
    assert_eq!(
        parse_shell_invocation(&cmd),
        Some((None, PATCH.to_string()))
    );
    let parsed = parse_shell_invocation(&cmd).unwrap().1;
    assert!(parse_patch(&parsed).is_ok());
}

#[test]
fn shell_negative_cases() {
    for cmd in [
        "ls",
        "ls -la",
        "echo apply_patch",
        "apply_patch",
        "apply_patchx <<EOF\n*** Begin Patch\nEOF",
        "apply_patch file.patch",
        "cd dir; apply_patch <<EOF\nx\nEOF",
        "apply_patch <<EOF && rm -rf /\n*** Begin Patch\nEOF",
        "apply_patch <<EOF\n*** Begin Patch\n*** End Patch\nEOF\nrm -rf /",
        "apply_patch '*** Begin Patch' extra",
    ] {
        assert_eq!(parse_shell_invocation(cmd), None, "{cmd}");
    }
}

#[test]
fn shell_result_feeds_parser() {
    let cmd = "cd repo && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: x.rs\n@@\n-a\n+b\n*** End Patch\nEOF\n";
    let (dir, text) = parse_shell_invocation(cmd).unwrap();
    assert_eq!(dir.as_deref(), Some("repo"));
    let patch = parse_patch(&text).unwrap();
    assert_eq!(
        derive_new_contents("a\n", "x.rs", chunks_of(&patch, 0)).unwrap(),
        "b\n"
    );
}
