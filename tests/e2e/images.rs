//! Images the model reads with its tools, end to end through `interpreter exec` on the mock:
//! Kimi Code's `ReadMediaFile` and Claude Code's `Read` of an image put the image in a message
//! after the response's results, on each wire; a file that is not an image is a clear error;
//! a model the catalog says takes no images is not offered the tool.

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
