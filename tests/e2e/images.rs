//! Images the model reads with its tools, end to end through `interpreter exec` on the mock:
//! Kimi Code's `ReadMediaFile` and Claude Code's `Read` of an image put the image in a message
//! after the response's results, on each wire; a file that is not an image is a clear error;
//! a model the catalog says takes no images is not offered the tool.

// The hostile-command tests' ACP client; not every helper is used here.
#[allow(dead_code)]
#[path = "hostile_commands/acp.rs"]
mod acp;

use mock_llm::e2e::TestRepo;
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};

fn exec(repo: &TestRepo, mock: &MockServer, wire: &str, model: &str, harness: &str) {
    let mut args = vec!["exec".to_string(), "--json".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), wire));
    args.extend([
        "-c".into(),
        format!("model=\"{model}\""),
        "-c".into(),
        format!("harness=\"{harness}\""),
        "look at it".into(),
    ]);
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "", &[("HOME", home.as_str())]);
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn kimi_code_reads_an_image_and_the_next_request_carries_it() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("shot.png"), mock_llm::e2e::TINY_PNG).unwrap();
    std::fs::write(repo.path().join("fake.png"), "not an image").unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::default()
            .then_tool_call("m1", "ReadMediaFile", json!({"path": "shot.png"}))
            .then_tool_call("m2", "ReadMediaFile", json!({"path": "fake.png"})),
        Reply::text("I see it"),
    ]))
    .unwrap();
    exec(&repo, &mock, "chat", "kimi-k3", "kimi-code");
    let reqs = mock.model_requests();
    assert!(tool_names(&reqs[0].body).contains(&"ReadMediaFile".to_string()));
    let messages = reqs[1].body["messages"].as_array().unwrap();
    let tool_texts: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        tool_texts[0],
        "<system>Read image file shot.png: image/png, 4x3 pixels. The image follows this turn's tool results.</system>"
    );
    assert!(
        tool_texts[1].starts_with("ERROR: ")
            && tool_texts[1].contains("not a PNG, JPEG, GIF or WebP image"),
        "{}",
        tool_texts[1]
    );
    // After both results: a user message with the image, as the file was (it fits).
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let parts = last["content"].as_array().unwrap();
    assert!(parts[0]["text"].as_str().unwrap().contains("tool call m1"));
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url}"
    );
}

#[test]
fn claude_code_reads_an_image_file_with_read_on_messages() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("diagram.png"), mock_llm::e2e::TINY_PNG).unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("r1", "Read", json!({"file_path": "diagram.png"})),
        Reply::text("a diagram"),
    ]))
    .unwrap();
    exec(&repo, &mock, "messages", "claude-sonnet-4-6", "claude-code");
    let body = &mock.model_requests()[1].body;
    let blocks: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .collect();
    let result = blocks.iter().find(|b| b["type"] == "tool_result").unwrap();
    assert!(
        result["content"]
            .to_string()
            .contains("Read image file diagram.png: image/png, 4x3 pixels"),
        "{result}"
    );
    let image = blocks
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image block in {blocks:#?}"));
    assert_eq!(image["source"]["media_type"], "image/png");
}

#[test]
fn a_model_without_images_is_not_offered_the_media_tool() {
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("ok")])).unwrap();
    exec(&repo, &mock, "chat", "mock-model", "kimi-code");
    assert!(!tool_names(&mock.model_requests()[0].body).contains(&"ReadMediaFile".to_string()));
}

/// The image blocks and the tool results of a Messages request, in order.
fn blocks(body: &Value) -> (Vec<Value>, Vec<String>) {
    let all: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .collect();
    let images = all
        .iter()
        .filter(|b| b["type"] == "image")
        .cloned()
        .collect();
    let results = all
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect();
    (images, results)
}

#[test]
fn claude_code_reads_pdf_pages_as_images_and_long_or_broken_pdfs_get_clear_errors() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("spec.pdf"), mock_llm::e2e::tiny_pdf(3)).unwrap();
    std::fs::write(repo.path().join("book.pdf"), mock_llm::e2e::tiny_pdf(12)).unwrap();
    std::fs::write(repo.path().join("broken.pdf"), b"%PDF-1.4 and then nothing").unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::default()
            .then_tool_call("r1", "Read", json!({"file_path": "spec.pdf"}))
            .then_tool_call("r2", "Read", json!({"file_path": "book.pdf"}))
            .then_tool_call("r3", "Read", json!({"file_path": "broken.pdf"})),
        Reply::default()
            .then_tool_call(
                "r4",
                "Read",
                json!({"file_path": "book.pdf", "pages": "11-12"}),
            )
            .then_tool_call(
                "r5",
                "Read",
                json!({"file_path": "book.pdf", "pages": "13"}),
            ),
        Reply::text("read"),
    ]))
    .unwrap();
    exec(&repo, &mock, "messages", "claude-sonnet-4-6", "claude-code");
    let reqs = mock.model_requests();
    let read = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Read")
        .unwrap()
        .clone();
    assert_eq!(
        read["input_schema"]["properties"]["pages"]["type"],
        "string"
    );

    let (images, results) = blocks(&reqs[1].body);
    assert!(
        results[0].contains("Read PDF file spec.pdf: pages 1, 2, 3 of 3, one image per page"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("book.pdf has 12 pages: read it in ranges with `pages`"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("not a readable PDF"), "{}", results[2]);
    assert_eq!(images.len(), 3, "one image per page of spec.pdf");
    for i in &images {
        assert_eq!(i["source"]["media_type"], "image/png");
    }

    let (images, results) = blocks(&reqs[2].body);
    let last: Vec<_> = results.iter().rev().take(2).rev().collect();
    assert!(last[0].contains("pages 11, 12 of 12"), "{}", last[0]);
    assert!(
        last[1].contains("the PDF has 12 pages, so `13` is past its end"),
        "{}",
        last[1]
    );
    assert_eq!(images.len(), 5, "three pages, then two more");
}

#[test]
fn kimi_codes_read_media_file_reads_a_short_pdf_as_pages() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("slides.pdf"), mock_llm::e2e::tiny_pdf(2)).unwrap();
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("m1", "ReadMediaFile", json!({"path": "slides.pdf"})),
        Reply::text("two slides"),
    ]))
    .unwrap();
    exec(&repo, &mock, "chat", "kimi-k3", "kimi-code");
    let messages = mock.model_requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let result = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("Read PDF file slides.pdf: pages 1, 2 of 2"),
        "{result}"
    );
    let parts = messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    let urls: Vec<_> = parts.iter().filter(|p| p["type"] == "image_url").collect();
    assert_eq!(urls.len(), 2);
}

/// Issue 41: an attachment is a regular file, bounded, and an image by its bytes. A text file
/// named `.png` and a `.png` link to `/dev/zero` are refused by name, exec exits non-zero, and
/// the model is never asked; a real PNG named `.jpg` goes as the PNG it is.
#[test]
fn exec_image_attachments_are_checked_by_their_bytes_and_kind_of_file() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("notes.png"), "just text").unwrap();
    std::fs::write(repo.path().join("shot.jpg"), mock_llm::e2e::TINY_PNG).unwrap();
    let mock = MockServer::start_blocking(Script::new([Reply::text("seen")])).unwrap();
    let run = |image: &str| {
        let mut args = mock_llm::e2e::exec_args(&mock.url(), &["--image", image]);
        args.push("what is this?".into());
        repo.run(&args, "")
    };
    let out = run("notes.png");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("notes.png") && stderr.contains("not a png, jpeg, gif or webp image"),
        "{stderr}"
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/dev/zero", repo.path().join("zero.png")).unwrap();
        let out = run("zero.png");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            stderr.contains("zero.png is not a regular file"),
            "{stderr}"
        );
    }
    assert!(mock.model_requests().is_empty());
    let out = run("shot.jpg");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = mock.model_requests()[0].body.to_string();
    assert!(body.contains("data:image/png;base64,iVBORw0KGgo"), "{body}");
}

/// Issue 41: an ACP image block is an image by its bytes, whatever its `mimeType` says.
#[test]
fn acp_an_image_block_that_is_not_an_image_is_refused_and_the_agent_goes_on() {
    use base64::Engine;
    let repo = TestRepo::new();
    let mock = MockServer::start_blocking(Script::new([Reply::text("seen")])).unwrap();
    let cwd = std::fs::canonicalize(repo.path()).unwrap();
    let mut agent = acp::Agent::start(&repo, &mock, &[], &[]);
    agent.initialize();
    let id = agent.new_session(&cwd, json!([]));
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let prompt = |data: String| {
        json!({"sessionId": id, "prompt": [
            {"type": "image", "data": data, "mimeType": "image/png"},
            {"type": "text", "text": "what is this?"}]})
    };
    let refused = agent
        .request("session/prompt", prompt(b64(b"just text")))
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("image 1 of the prompt: not a png, jpeg, gif or webp image"),
        "{refused}"
    );
    assert!(mock.model_requests().is_empty());
    agent
        .request("session/prompt", prompt(b64(&mock_llm::e2e::TINY_PNG)))
        .unwrap();
    assert!(
        mock.model_requests()[0]
            .body
            .to_string()
            .contains("data:image/png;base64,iVBORw0KGgo")
    );
    agent.exit();
}
