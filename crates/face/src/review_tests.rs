use super::*;
use std::io;

/// A git that answers from a table of `args joined by spaces` → stdout; anything else fails.
fn fake<'a>(table: &'a [(&'a str, &'a str)]) -> impl FnMut(&[&str]) -> io::Result<Vec<u8>> + 'a {
    move |args| {
        let key = args.join(" ");
        table
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_bytes().to_vec())
            .ok_or_else(|| io::Error::other(format!("git {key} failed")))
    }
}

const REPO: &[(&str, &str)] = &[
    ("rev-parse --show-toplevel", "/repo\n"),
    ("rev-parse --verify --quiet HEAD^{commit}", "aaaa\n"),
];

#[test]
fn slash_targets_and_focus() {
    assert_eq!(parse_slash(""), Ok((Target::Uncommitted, String::new())));
    assert_eq!(
        parse_slash("look at errors"),
        Ok((Target::Uncommitted, "look at errors".into()))
    );
    assert_eq!(
        parse_slash("base main  security only"),
        Ok((Target::Base("main".into()), "security only".into()))
    );
    assert_eq!(
        parse_slash("commit 1a2b"),
        Ok((
            Target::Commit {
                sha: "1a2b".into(),
                title: None
            },
            String::new()
        ))
    );
    assert!(parse_slash("base").unwrap_err().contains("BRANCH"));
}

#[test]
fn gather_errors_are_clear() {
    let err = gather(&Target::Uncommitted, fake(&[])).unwrap_err();
    assert!(err.contains("not a git repository"), "{err}");
    let err = gather(
        &Target::Uncommitted,
        fake(&[("rev-parse --show-toplevel", "/repo\n")]),
    )
    .unwrap_err();
    assert!(err.contains("no commits"), "{err}");
    let err = gather(&Target::Base("nope".into()), fake(REPO)).unwrap_err();
    assert_eq!(err, "base branch `nope` not found");
    let commit = Target::Commit {
        sha: "dead".into(),
        title: None,
    };
    assert_eq!(
        gather(&commit, fake(REPO)).unwrap_err(),
        "commit `dead` not found"
    );
    // An option is never handed to git as a name.
    let err = gather(&Target::Base("--output=/tmp/x".into()), fake(REPO)).unwrap_err();
    assert!(err.contains("not found"), "{err}");
    let mut clean = REPO.to_vec();
    clean.push(("diff --no-color --no-ext-diff HEAD", ""));
    clean.push(("ls-files --others --exclude-standard", ""));
    assert_eq!(
        gather(&Target::Uncommitted, fake(&clean)).unwrap_err(),
        "no uncommitted changes to review"
    );
}

#[test]
fn gather_each_target() {
    let mut t = REPO.to_vec();
    t.extend([
        (
            "diff --no-color --no-ext-diff HEAD",
            "diff --git a/x b/x\n+1\n",
        ),
        ("ls-files --others --exclude-standard", "new.rs\n"),
        (
            "rev-parse --verify --quiet main^{commit}",
            "bbbbbbbbbbbbbbbb\n",
        ),
        ("merge-base HEAD bbbbbbbbbbbbbbbb", "cccccccccccccccc\n"),
        ("diff --no-color --no-ext-diff cccccccccccccccc", "+base\n"),
        (
            "rev-parse --verify --quiet 1a2b^{commit}",
            "dddddddddddddddd\n",
        ),
        (
            "show --no-color --no-ext-diff --format=medium dddddddddddddddd",
            "commit dddd\nAuthor: a\n\n    Fix the parser\n\ndiff --git a/y b/y\n",
        ),
    ]);
    let g = gather(&Target::Uncommitted, fake(&t)).unwrap();
    assert!(g.diff.contains("+1") && g.diff.contains("new.rs"), "{g:?}");
    let g = gather(&Target::Base("main".into()), fake(&t)).unwrap();
    assert_eq!(g.diff, "+base\n");
    assert_eq!(g.command, "git diff cccccccccccccccc");
    assert!(g.description.starts_with("changes against main"));
    let commit = Target::Commit {
        sha: "1a2b".into(),
        title: None,
    };
    let g = gather(&commit, fake(&t)).unwrap();
    assert_eq!(g.description, "commit dddddddddddd: Fix the parser");
    let p = prompt(&commit, &g, "tests", Answer::Json);
    assert!(p.contains("diff --git a/y b/y") && p.contains("Focus: tests"));
    assert!(p.contains("overall_correctness"));
    let custom = Target::Custom("check the docs".into());
    let g = gather(&custom, fake(&[])).unwrap();
    let p = prompt(&custom, &g, "", Answer::Markdown);
    assert!(p.contains("check the docs") && !p.contains("```diff"));
}

#[test]
fn a_long_diff_is_cut_at_a_char_boundary() {
    let cut = cut("é".repeat(MAX_DIFF_BYTES));
    assert!(cut.len() < MAX_DIFF_BYTES + 100);
    assert!(cut.contains("the diff is cut here"));
}

const ANSWER: &str = r#"Here it is:
```json
{"findings": [{"title": "Check the length", "body": "It panics on empty input.\nGuard it.",
  "confidence_score": 0.8, "priority": 1,
  "code_location": {"absolute_file_path": "/repo/src/a,b.rs",
                    "line_range": {"start": 3, "end": 5}}}],
 "overall_correctness": "patch is incorrect", "overall_explanation": "One panic.",
 "overall_confidence_score": 0.7}
```"#;

#[test]
fn answers_parse_or_say_why_not() {
    let r = parse_answer(ANSWER).unwrap();
    assert_eq!(r.findings[0].code_location.line_range.end, 5);
    let text = render_text(&r, "/repo");
    assert!(
        text.contains("[P1] Check the length\n  src/a,b.rs:3-5\n"),
        "{text}"
    );
    assert!(text.starts_with("Verdict: patch is incorrect (confidence 0.70)"));
    let err = parse_answer("Looks good to me!").unwrap_err();
    assert!(err.contains("no findings JSON"), "{err}");
    let err = parse_answer(r#"{"findings": []}"#).unwrap_err();
    assert!(err.contains("overall_correctness"), "{err}");
    let bad = ANSWER.replace(r#""start": 3"#, r#""start": 9"#);
    assert!(parse_answer(&bad).unwrap_err().contains("bad line range"));
}

#[test]
fn findings_become_escaped_workflow_commands() {
    let mut r = parse_answer(ANSWER).unwrap();
    r.findings[0].body = "50% off\n::error::pwned".into();
    let lines = workflow_commands(&r, "/repo/");
    assert_eq!(
        lines,
        "::warning file=src/a%2Cb.rs,line=3,endLine=5,title=[P1] Check the length::50%25 off%0A::error::pwned\n"
    );
    assert_eq!(lines.lines().count(), 1);
    r.findings[0].priority = Some(0);
    r.findings[0].title = "a: b".into();
    assert!(
        workflow_commands(&r, "/repo")
            .starts_with("::error file=src/a%2Cb.rs,line=3,endLine=5,title=[P0] a%3A b::")
    );
    // A path outside the repository stays as the model wrote it.
    r.findings[0].code_location.absolute_file_path = "/elsewhere/x.rs".into();
    assert!(workflow_commands(&r, "/repo").contains("file=/elsewhere/x.rs,"));
}

#[test]
fn the_schema_requires_every_field() {
    let s = output_schema();
    assert_eq!(s["required"].as_array().unwrap().len(), 4);
    let f = &s["properties"]["findings"]["items"];
    assert_eq!(f["additionalProperties"], false);
    assert_eq!(f["required"].as_array().unwrap().len(), 5);
}
