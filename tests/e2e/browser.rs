//! little-coder's Browser tools end to end: `interpreter exec` drives a real headless Chromium
//! on the mock's pages (`/web/links`, `/web/echo`): navigate, extract in chunks, scroll, click
//! by role, go back, fill and submit a form, read the history; `[web]` rules refuse a denied
//! domain as a navigation, as the link a click follows, and as an image and a WebSocket of a
//! page. The browser and its profile folder are gone when the session ends; a browser that
//! dies is reported and replaced; one that cannot start, or is not there, is a clear error.
//!
//! The tests that need Chromium are skipped (saying why) where none is found, unless
//! `INTERPRETER_REQUIRE_BROWSER=1` (scripts/test.sh sets it once it has installed one).

use std::path::{Path, PathBuf};

use mock_llm::e2e::{TestRepo, succeeded};
use mock_llm::{MockServer, Reply, Script};
use serde_json::json;

/// A Chromium-family browser on PATH, as the agent looks for one; None skips the test unless
/// one is required.
fn browser_or_skip(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("INTERPRETER_BROWSER")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| {
            let path = std::env::var_os("PATH")?;
            [
                "chromium",
                "chromium-browser",
                "google-chrome",
                "google-chrome-stable",
                "chrome",
                "msedge",
            ]
            .iter()
            .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
            .find(|p| p.is_file())
        });
    if found.is_none() {
        assert!(
            std::env::var("INTERPRETER_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "INTERPRETER_REQUIRE_BROWSER=1 but no Chromium was found on PATH"
        );
        eprintln!("{test}: skipped, no Chromium on PATH (install `chromium` to run it)");
    }
    found
}

/// Runs little-coder through `exec` with `extra` config, its temporary files in `tmp`.
fn exec(repo: &TestRepo, mock: &MockServer, tmp: &Path, extra: &[&str]) {
    let mut args = vec!["exec".to_string(), "--json".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(["-c".into(), "harness=\"little-coder\"".into()]);
    args.extend(["-c".into(), "web.allow_private=true".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("browse the webpage".into());
    let home = repo.home.path().display().to_string();
    let tmp = tmp.display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", &home), ("TMPDIR", &tmp)]);
    succeeded(&out);
}

/// The tool results the last request carried, in order.
fn results(mock: &MockServer) -> Vec<String> {
    let body = mock.model_requests().last().unwrap().body.clone();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Nothing the session started is left: no profile folder in `tmp`, and no process whose
/// command line names it (the profile's path is in the browser's arguments).
fn nothing_left(tmp: &Path) {
    let left: Vec<_> = std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("interpreter-browser-"))
        .collect();
    assert!(left.is_empty(), "profile folders left: {left:?}");
    if cfg!(target_os = "linux") {
        let needle = tmp.display().to_string();
        // The tree is killed as the session ends; give the kernel a moment to reap it.
        for _ in 0..50 {
            let alive: Vec<String> = std::fs::read_dir("/proc")
                .unwrap()
                .filter_map(Result::ok)
                .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .filter(|c| c.contains(&needle))
                .collect();
            if alive.is_empty() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("browser processes outlived the session in {needle}");
    }
}

#[test]
fn little_coder_browses_clicks_types_goes_back_and_lists_history() {
    if browser_or_skip("little_coder_browses_clicks_types_goes_back_and_lists_history").is_none() {
        return;
    }
    let repo = TestRepo::new();
    let tmp = tempfile::tempdir().unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let base = format!("http://{}", mock.addr());
    mock.set_script(Script::new([
        // One response: the navigation is slow, and the extract still reads its page (the
        // calls run together, in call order).
        Reply::default()
            .then_tool_call(
                "n1",
                "BrowserNavigate",
                json!({"url": format!("{base}/web/slow/300/first")}),
            )
            .then_tool_call("x1", "BrowserExtract", json!({})),
        Reply::tool_call(
            "n2",
            "BrowserNavigate",
            json!({"url": format!("{base}/web/links")}),
        ),
        Reply::tool_call("x2", "BrowserExtract", json!({"cursor": "2048"})),
        Reply::tool_call("s1", "BrowserScroll", json!({"amount": 300})),
        Reply::tool_call(
            "c1",
            "BrowserClick",
            json!({"role": "link", "name": "next page"}),
        ),
        Reply::tool_call("b1", "BrowserBack", json!({})),
        Reply::tool_call(
            "c2",
            "BrowserClick",
            json!({"role": "link", "name": "Nope"}),
        ),
        Reply::tool_call(
            "t1",
            "BrowserType",
            json!({"selector": "#q", "text": "rust traits", "submit": true}),
        ),
        Reply::tool_call("x3", "BrowserExtract", json!({})),
        Reply::tool_call("h1", "BrowserHistory", json!({})),
        Reply::text("done"),
    ]));
    exec(&repo, &mock, tmp.path(), &[]);
    let tools = mock.model_requests()[0].body["tools"].to_string();
    assert!(tools.contains("\"BrowserNavigate\""), "{tools}");
    let r = results(&mock);
    assert_eq!(r.len(), 11, "{r:#?}");
    assert!(
        r[0].starts_with(&format!(
            "Navigated to {base}/web/slow/300/first\nTitle: Mock page: first\n\n"
        )),
        "{}",
        r[0]
    );
    assert!(r[0].ends_with("cursor=0 has_more=false"), "{}", r[0]);
    assert!(r[1].starts_with("Home | About\nfirst\n"), "{}", r[1]);
    assert!(r[1].contains("The answer is 42."), "{}", r[1]);
    assert!(
        r[2].starts_with(&format!(
            "Navigated to {base}/web/links\nTitle: Links page\n\nLinks page\n"
        )),
        "{}",
        r[2]
    );
    assert!(
        r[2].contains("\n\ncursor=0 has_more=true next="),
        "{}",
        r[2]
    );
    assert!(
        r[3].contains("particular.\n\ncursor=2048 has_more=true next="),
        "{}",
        r[3]
    );
    assert!(!r[3].contains("Paragraph 1 "), "{}", r[3]);
    assert!(r[3].contains("Paragraph 50 of the links page"), "{}", r[3]);
    assert!(
        r[4].starts_with("Scrolled down 300 px: the view now shows 300-"),
        "{}",
        r[4]
    );
    assert_eq!(
        r[5],
        format!("Clicked the link \"next page\".\nNow at {base}/web/next\nTitle: Mock page: next")
    );
    assert_eq!(
        r[6],
        format!("Went back to {base}/web/links\nTitle: Links page")
    );
    assert_eq!(
        r[7],
        "No link named \"Nope\" is on the page. Its links: \"Next page\", \"Forbidden page\"."
    );
    // The field's old value is replaced, not added to.
    assert_eq!(
        r[8],
        format!(
            "Typed 11 characters into `#q` and pressed Enter.\nNow at {base}/web/echo?q=rust+traits\nTitle: Echo"
        )
    );
    assert_eq!(
        r[9],
        "You searched for: rust traits\n\ncursor=0 has_more=false"
    );
    assert_eq!(
        r[10],
        format!(
            "1. {base}/web/slow/300/first\n2. {base}/web/links\n3. {base}/web/next\n4. {base}/web/links\n5. {base}/web/echo?q=rust+traits"
        )
    );
    nothing_left(tmp.path());
}

#[test]
fn a_denied_domain_is_refused_as_a_navigation_a_link_and_an_image() {
    if browser_or_skip("a_denied_domain_is_refused_as_a_navigation_a_link_and_an_image").is_none() {
        return;
    }
    let repo = TestRepo::new();
    let tmp = tempfile::tempdir().unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let base = format!("http://{}", mock.addr());
    let denied = format!("http://localhost:{}", mock.addr().port());
    mock.set_script(Script::new([
        Reply::tool_call(
            "n1",
            "BrowserNavigate",
            json!({"url": format!("{denied}/web/forbidden")}),
        ),
        Reply::tool_call("c0", "BrowserClick", json!({"selector": "a"})),
        Reply::tool_call(
            "n2",
            "BrowserNavigate",
            json!({"url": format!("{base}/web/links")}),
        ),
        Reply::tool_call(
            "c1",
            "BrowserClick",
            json!({"role": "link", "name": "Forbidden page"}),
        ),
        Reply::tool_call("h1", "BrowserHistory", json!({})),
        Reply::text("done"),
    ]));
    exec(
        &repo,
        &mock,
        tmp.path(),
        &["-c", "web.denied_domains=[\"localhost\"]"],
    );
    let r = results(&mock);
    assert_eq!(r.len(), 5, "{r:#?}");
    assert_eq!(
        r[0],
        format!(
            "Navigating to {denied}/web/forbidden failed: localhost is denied by [web] denied_domains (localhost)."
        )
    );
    assert_eq!(
        r[1],
        "No page is open in the browser: open one with BrowserNavigate first."
    );
    assert!(
        r[2].contains(&format!(
            " of the page's requests, such as {denied}/web/forbidden-image (localhost is denied by [web] denied_domains (localhost))."
        )),
        "{}",
        r[2]
    );
    assert_eq!(
        r[3],
        format!(
            "Clicked the link \"Forbidden page\".\nIt led to {denied}/web/forbidden, which was blocked: localhost is denied by [web] denied_domains (localhost)."
        )
    );
    assert_eq!(r[4], format!("1. {base}/web/links"));
    let asked: Vec<String> = mock.requests().into_iter().map(|q| q.path).collect();
    assert!(
        asked.iter().any(|p| p == "/web/links"),
        "the allowed page was loaded: {asked:?}"
    );
    assert!(
        !asked.iter().any(|p| p.starts_with("/web/forbidden")),
        "a refused request reached the server: {asked:?}"
    );
    nothing_left(tmp.path());
}

/// The pid of the session's browser (its main process: the one with the DevTools port), found
/// by the profile folder under `tmp` in its arguments.
#[cfg(target_os = "linux")]
fn browser_pid(tmp: &Path) -> Option<i32> {
    let needle = tmp.display().to_string();
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(Result::ok)
        .find_map(|e| {
            let pid: i32 = e.file_name().to_string_lossy().parse().ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (cmd.contains(&needle)
                && cmd.contains("--remote-debugging-port")
                && !cmd.contains("--type="))
            .then_some(pid)
        })
}

#[cfg(target_os = "linux")]
#[test]
fn a_browser_that_dies_is_reported_and_the_next_call_starts_a_fresh_one() {
    if browser_or_skip("a_browser_that_dies_is_reported_and_the_next_call_starts_a_fresh_one")
        .is_none()
    {
        return;
    }
    let repo = TestRepo::new();
    let tmp = tempfile::tempdir().unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let base = format!("http://{}", mock.addr());
    let links = json!({"url": format!("{base}/web/links")});
    mock.set_script(Script::new([
        Reply::tool_call("n1", "BrowserNavigate", links.clone()),
        // Time for the test to kill the browser before the next call.
        Reply::tool_call("x1", "BrowserExtract", json!({})).with_delay(3000),
        Reply::tool_call("n2", "BrowserNavigate", links),
        Reply::text("done"),
    ]));
    let mut args = vec!["exec".to_string(), "--json".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "chat"));
    args.extend(["-c".into(), "harness=\"little-coder\"".into()]);
    args.extend(["-c".into(), "web.allow_private=true".into()]);
    args.push("browse the webpage".into());
    let mut child = repo
        .command(&args)
        .env("HOME", repo.home.path())
        .env("TMPDIR", tmp.path())
        .spawn()
        .unwrap();
    // No more input than the prompt.
    drop(child.stdin.take());
    // Once the navigation's result went back, the browser dies.
    let start = std::time::Instant::now();
    while mock.model_requests().len() < 2 {
        assert!(start.elapsed().as_secs() < 60, "the navigation never ended");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = browser_pid(tmp.path()).expect("the browser runs");
    // SAFETY: kill has no memory effects; the pid is the browser this test's session started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let out = mock_llm::e2e::wait_with_timeout(child, std::time::Duration::from_secs(120));
    succeeded(&out);
    let r = results(&mock);
    assert_eq!(r.len(), 3, "{r:#?}");
    assert!(
        r[0].starts_with(&format!("Navigated to {base}/web/links")),
        "{}",
        r[0]
    );
    assert!(
        r[1].starts_with("The browser stopped since the last call (it may have crashed)"),
        "{}",
        r[1]
    );
    assert!(
        r[1].ends_with(
            "The next Browser call starts a fresh one: open the page again with BrowserNavigate."
        ),
        "{}",
        r[1]
    );
    assert!(
        r[2].starts_with(&format!("Navigated to {base}/web/links")),
        "{}",
        r[2]
    );
    nothing_left(tmp.path());
}

#[test]
fn without_a_browser_the_tools_are_not_offered_and_a_call_says_what_to_install() {
    let repo = TestRepo::new();
    let tmp = tempfile::tempdir().unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let base = format!("http://{}", mock.addr());
    mock.set_script(Script::new([
        // A resumed session may call a tool this one does not list.
        Reply::tool_call(
            "n1",
            "BrowserNavigate",
            json!({"url": format!("{base}/web/links")}),
        ),
        Reply::text("done"),
    ]));
    exec(
        &repo,
        &mock,
        tmp.path(),
        &["-c", "web.browser=\"/nonexistent/chromium\""],
    );
    let tools = mock.model_requests()[0].body["tools"].to_string();
    assert!(!tools.contains("Browser"), "{tools}");
    let r = results(&mock);
    assert!(
        r[0].starts_with(
            "[web] browser (or INTERPRETER_BROWSER) names `/nonexistent/chromium`, which is not an executable file. Install Chromium (Debian and Ubuntu: `apt-get install chromium`"
        ),
        "{}",
        r[0]
    );
    assert!(!mock.requests().iter().any(|q| q.path == "/web/links"));
}

#[cfg(unix)]
#[test]
fn a_browser_that_cannot_start_is_a_clear_error_and_leaves_nothing() {
    use std::os::unix::fs::PermissionsExt as _;
    let repo = TestRepo::new();
    let tmp = tempfile::tempdir().unwrap();
    let fake = repo.home.path().join("broken-chromium");
    std::fs::write(&fake, "#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("placeholder")])).unwrap();
    let base = format!("http://{}", mock.addr());
    mock.set_script(Script::new([
        Reply::tool_call(
            "n1",
            "BrowserNavigate",
            json!({"url": format!("{base}/web/links")}),
        ),
        Reply::text("done"),
    ]));
    let browser = format!("web.browser=\"{}\"", fake.display());
    exec(&repo, &mock, tmp.path(), &["-c", &browser]);
    let r = results(&mock);
    assert_eq!(
        r[0],
        format!(
            "The browser could not start: {} exited (exit status: 3) before opening its DevTools port. It said: cannot open display.",
            fake.display()
        )
    );
    nothing_left(tmp.path());
}
