use super::*;

/// The example file of Codex's rules page (developers.openai.com/codex/rules), unchanged.
const CODEX_DOCS_EXAMPLE: &str = r#"# Prompt before running commands with the prefix `gh pr view` outside the sandbox.
prefix_rule(
    # The prefix to match.
    pattern = ["gh", "pr", "view"],

    # The action to take when Codex requests to run a matching command.
    decision = "prompt",

    # Optional rationale for why this rule exists.
    justification = "Viewing PRs is allowed with approval",

    # `match` and `not_match` are optional "inline unit tests" where you can
    # provide examples of commands that should (or should not) match this rule.
    match = [
        "gh pr view 7888",
        "gh pr view --repo openai/codex",
        "gh pr view 7888 --json title,body,comments",
    ],
    not_match = [
        # Does not match because the `pattern` must be an exact prefix.
        "gh pr --repo openai/codex view 7888",
    ],
)
"#;

/// The parts of `line`, split at `&&`; a part with `>` redirects.
fn words(line: &str) -> Vec<CommandPart> {
    line.split("&&")
        .map(|c| CommandPart {
            words: c
                .split_whitespace()
                .filter(|w| !w.starts_with('>'))
                .map(|w| Some(w.to_string()))
                .collect(),
            redirects: c.contains('>'),
        })
        .collect()
}

/// No command counts as harmless (the policy passes the known read-only ones).
fn none_harmless(_: &CommandPart) -> bool {
    false
}

fn codex(text: &str) -> Rules {
    Rules {
        commands: codex::parse("t.rules", text).unwrap(),
        ..Rules::default()
    }
}

#[test]
fn the_codex_docs_example_loads_and_prompts() {
    let r = codex(CODEX_DOCS_EXAMPLE);
    let h = r.command(&words("gh pr view 12"), none_harmless).unwrap();
    assert_eq!(h.decision, Decision::Prompt);
    assert!(
        h.reason.contains("Viewing PRs is allowed with approval"),
        "{}",
        h.reason
    );
    assert!(h.reason.contains("t.rules:2"), "{}", h.reason);
    assert_eq!(r.command(&words("gh pr list"), none_harmless), None);
}

#[test]
fn alternatives_single_quotes_token_examples_and_the_default_decision() {
    let r = codex(
        "prefix_rule(pattern = ['git', ['status', 'log']], match = [['git', 'log', '-3'], 'git status'], not_match = ['git push'],)\n\
         prefix_rule(['rm'], 'forbidden', 'Use trash instead.')\n",
    );
    assert_eq!(
        r.command(&words("git log -p"), none_harmless)
            .unwrap()
            .decision,
        Decision::Allow
    );
    assert_eq!(r.command(&words("git push"), none_harmless), None);
    let f = r
        .command(&words("git status && rm -f x"), none_harmless)
        .unwrap();
    assert_eq!(f.decision, Decision::Forbidden);
    assert!(f.reason.contains("Use trash instead."));
    // Every part must be allowed for the line to be.
    assert_eq!(r.command(&words("git status && make"), none_harmless), None);
    // A word only known when the command runs matches no literal.
    let unknown = CommandPart {
        words: vec![Some("git".into()), None],
        redirects: false,
    };
    assert_eq!(r.command(&[unknown], none_harmless), None);
}

#[test]
fn parts_no_rule_names_may_go_along_when_harmless_but_never_alone() {
    let r = codex("prefix_rule(pattern=['cargo', 'test'])");
    let harmless = |p: &CommandPart| p.words.first() == Some(&Some("tail".to_string()));
    let allowed = r.command(&words("cargo test && tail -5"), harmless);
    assert_eq!(allowed.unwrap().decision, Decision::Allow);
    assert_eq!(r.command(&words("tail -5"), harmless), None);
    assert_eq!(r.command(&words("cargo test && make"), harmless), None);
    // Where its output goes is not part of a prefix: a redirected part is never allowed.
    assert_eq!(r.command(&words("cargo test >~/.bashrc"), harmless), None);
}

#[test]
fn contradicting_examples_name_the_file_and_line() {
    let e = codex::parse(
        "/h/rules/a.rules",
        "prefix_rule(\n  pattern = [\"npm\", \"test\"],\n  match = [\n    \"npm run test\",\n  ],\n)\n",
    )
    .unwrap_err();
    assert!(e.starts_with("/h/rules/a.rules:4:"), "{e}");
    assert!(
        e.contains("`match` example `npm run test` does not match"),
        "{e}"
    );
    let e = codex::parse(
        "a.rules",
        "prefix_rule(pattern=[\"ls\"], not_match=[\"ls -l\"])",
    )
    .unwrap_err();
    assert!(
        e.starts_with("a.rules:1:") && e.contains("`not_match` example `ls -l` matches"),
        "{e}"
    );
}

#[test]
fn every_cut_of_the_docs_example_parses_or_names_a_line_and_never_panics() {
    let text = CODEX_DOCS_EXAMPLE;
    for end in (0..text.len()).filter(|i| text.is_char_boundary(*i)) {
        if let Err(e) = codex::parse("cut.rules", &text[..end]) {
            let line: usize = e["cut.rules:".len()..]
                .split(':')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!((1..=26).contains(&line), "{end}: {e}");
        }
    }
}

#[test]
fn malformed_files_name_the_line() {
    for (text, line, what) in [
        (
            "prefix_rule(pattern=[\"a\"])\nprefix_rule(pattern=[\"b\"]\n",
            2,
            "never closed",
        ),
        (
            "\n\nprefix_rule(pattern=[\"a\"], decision=\"maybe\")",
            3,
            "decision must be",
        ),
        (
            "prefix_rule(pattern=[\"a\"], colour=\"red\")",
            1,
            "no argument `colour`",
        ),
        ("prefix_rule(decision=\"allow\")", 1, "needs a `pattern`"),
        (
            "\nprefix_rule(pattern=[\"a\", 'b])",
            2,
            "unterminated string",
        ),
        ("load(\"x.star\", \"y\")", 1, "unknown function `load`"),
        ("prefix_rule(pattern=[])", 1, "must not be empty"),
        ("prefix_rule(pattern=[[[\"a\"]]])", 1, "nest too deeply"),
        ("x = 1", 1, "unexpected `1`"),
    ] {
        let e = codex::parse("f.rules", text).unwrap_err();
        assert!(
            e.starts_with(&format!("f.rules:{line}:")) && e.contains(what),
            "{text}: {e}"
        );
    }
}

/// `p`, absolute on this platform (`C:` in front on Windows).
fn abs(p: &str) -> PathBuf {
    match cfg!(windows) {
        true => PathBuf::from(format!("C:{p}")),
        false => PathBuf::from(p),
    }
}

fn claude(json: &str, root: &Path) -> (Rules, Vec<String>) {
    let mut r = Rules::default();
    let home = abs("/home/u");
    let bases = claude::Bases {
        project: root,
        home: Some(&home),
    };
    let w = claude::parse("settings.json", json, &bases, &mut r).unwrap();
    (r, w)
}

#[test]
fn claude_lists_cover_commands_files_fetches_and_mcp() {
    let root = &abs("/w/app");
    let (r, warnings) = claude(
        r#"{"permissions": {
            "allow": ["Bash(cargo test:*)", "Bash(npm run build)", "Bash(git * main)", "Edit(src/**)",
                      "WebFetch(domain:example.com)", "mcp__github", "Read(./.env)"],
            "ask": ["Bash(git push:*)", "mcp__github__merge_pr", "Write(//etc/**)"],
            "deny": ["Bash(curl *)", "Edit(~/.ssh/**)", "Frobnicate"]
        }}"#,
        root,
    );
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("`Frobnicate`"), "{warnings:?}");
    let cmd = |l: &str| r.command(&words(l), none_harmless).map(|h| h.decision);
    assert_eq!(cmd("cargo test -p x"), Some(Decision::Allow));
    assert_eq!(cmd("cargo test"), Some(Decision::Allow));
    assert_eq!(cmd("cargo testx"), None);
    assert_eq!(cmd("npm run build"), Some(Decision::Allow));
    assert_eq!(cmd("npm run build --prod"), None);
    assert_eq!(cmd("git checkout main"), Some(Decision::Allow));
    assert_eq!(cmd("git push origin"), Some(Decision::Prompt));
    assert_eq!(cmd("curl"), Some(Decision::Forbidden));
    assert_eq!(cmd("curl -s x"), Some(Decision::Forbidden));
    let write = |p: &str| r.write(&[abs(p)]).map(|h| h.decision);
    assert_eq!(write("/w/app/src/a/b.rs"), Some(Decision::Allow));
    assert_eq!(write("/w/app/tests/a.rs"), None);
    assert_eq!(write("/etc/passwd"), Some(Decision::Prompt));
    assert_eq!(write("/home/u/.ssh/config"), Some(Decision::Forbidden));
    assert_eq!(r.write(&[abs("/w/app/src/x"), abs("/w/app/y")]), None);
    assert_eq!(r.fetch("example.com").unwrap().decision, Decision::Allow);
    assert_eq!(r.fetch("evil.com"), None);
    assert_eq!(r.mcp("github", "list").unwrap().decision, Decision::Allow);
    assert_eq!(
        r.mcp("github", "merge_pr").unwrap().decision,
        Decision::Prompt
    );
    assert_eq!(r.mcp("gitlab", "list"), None);
}

#[test]
fn the_strictest_rule_wins_whatever_its_source() {
    let (mut r, _) = claude(
        r#"{"permissions": {"allow": ["Bash"], "ask": ["Bash(make:*)"]}}"#,
        Path::new("/w"),
    );
    r.extend(codex(
        "prefix_rule(pattern=['make', 'clean'], decision='forbidden')",
    ));
    let cmd = |l: &str| r.command(&words(l), none_harmless).map(|h| h.decision);
    assert_eq!(cmd("ls -la"), Some(Decision::Allow));
    assert_eq!(cmd("make all"), Some(Decision::Prompt));
    assert_eq!(cmd("make clean"), Some(Decision::Forbidden));
    assert_eq!(cmd("ls && make clean"), Some(Decision::Forbidden));
}

#[test]
fn a_broken_file_loads_nothing_and_the_others_load_and_saving_applies_at_once() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("rules");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("a.rules"),
        "prefix_rule(pattern=['ls'])\nprefix_rule(pattern=['rm'], decision='no')\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.rules"), CODEX_DOCS_EXAMPLE).unwrap();
    std::fs::write(dir.join("notes.txt"), "not rules").unwrap();
    let (saved, warnings) = load(home.path(), None, None, None);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("a.rules:2:") && warnings[0].contains("nothing from that file"));
    assert_eq!(saved.read().command(&words("ls"), none_harmless), None);
    assert!(
        saved
            .read()
            .command(&words("gh pr view 1"), none_harmless)
            .is_some()
    );
    saved
        .save_allow(&["cargo".into(), "te\"st".into()])
        .unwrap();
    assert_eq!(
        saved
            .read()
            .command(&words("cargo te\"st -q"), none_harmless)
            .unwrap()
            .decision,
        Decision::Allow
    );
    // What was saved loads again, unchanged, in the next session.
    let (again, warnings) = load(home.path(), None, None, None);
    assert!(warnings.len() == 1);
    assert_eq!(
        again
            .read()
            .command(&words("cargo te\"st"), none_harmless)
            .unwrap()
            .decision,
        Decision::Allow
    );
    let text = std::fs::read_to_string(dir.join("default.rules")).unwrap();
    assert_eq!(
        text,
        "prefix_rule(pattern=[\"cargo\", \"te\\\"st\"], decision=\"allow\")\n"
    );
}

#[test]
fn claude_config_dir_is_read_instead_of_the_home_folders_claude() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(user.path().join(".claude")).unwrap();
    std::fs::write(
        user.path().join(".claude/settings.json"),
        r#"{"permissions":{"deny":["Bash(ls:*)"]}}"#,
    )
    .unwrap();
    std::fs::write(
        other.path().join("settings.json"),
        r#"{"permissions":{"deny":["Bash(make:*)"]}}"#,
    )
    .unwrap();
    let (saved, _) = load(home.path(), Some(user.path()), None, None);
    assert!(saved.read().command(&words("ls"), none_harmless).is_some());
    let (saved, _) = load(home.path(), Some(user.path()), Some(other.path()), None);
    assert!(saved.read().command(&words("ls"), none_harmless).is_none());
    assert!(
        saved
            .read()
            .command(&words("make"), none_harmless)
            .is_some()
    );
}

#[test]
fn an_untrusted_projects_rules_do_not_load() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path().to_path_buf();
    std::fs::create_dir_all(root.join(".codex/rules")).unwrap();
    std::fs::write(
        root.join(".codex/rules/p.rules"),
        "prefix_rule(pattern=['make'])",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Edit(src/**)"]}}"#,
    )
    .unwrap();
    let mut trust = ProjectTrust {
        root: root.clone(),
        level: None,
        files: vec![],
        governed: vec![],
    };
    let (saved, _) = load(home.path(), None, None, Some(&trust));
    assert!(saved.read().is_empty());
    // A project with only rules files is asked about, and its files named.
    let asked = super::super::trust::project_trust(&toml::Table::new(), &root);
    assert!(asked.needs_answer(), "{asked:?}");
    let note = asked.ignored_note().unwrap();
    assert!(
        note.contains("p.rules") && note.contains("settings.json"),
        "{note}"
    );
    trust.level = Some(super::super::TrustLevel::Trusted);
    let (saved, w) = load(home.path(), None, None, Some(&trust));
    assert!(w.is_empty(), "{w:?}");
    assert!(
        saved
            .read()
            .command(&words("make"), none_harmless)
            .is_some()
    );
    assert!(saved.read().write(&[root.join("src/main.rs")]).is_some());
}
