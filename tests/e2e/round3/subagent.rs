//! Issue 34, class 9: "A read-only subagent loosens the approval policy". Under `approval_policy
//! = "untrusted"` the parent's `chmod` on a file outside the workspace asks (exec cannot ask,
//! so it is rejected), but an Explore subagent got read-only + `never` and ran it unasked:
//! Landlock's read-only ruleset does not cover `chmod`. The rule that holds now: a subagent
//! never gets more than its parent; its sandbox and approval policy are the parent's, narrowed
//! by its type, never widened (`Policy::narrowed_for_read_only`).

use mock_llm::e2e::{TestRepo, dir_outside_temp};
use mock_llm::{MockServer, Reply, Script};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What the model reads for a call exec was asked about (exec answers every ask with no).
const REJECTED: &str = "The user rejected this tool call";

/// The tool results of a Messages request: (tool_use_id, content).
fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (b["tool_use_id"].as_str().unwrap_or("").to_string(), text)
        })
        .collect()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn an_explore_subagent_asks_where_its_untrusted_parent_asks() {
    let repo = TestRepo::new();
    repo.write("notes.txt", "the answer is 42\n");
    let outside = dir_outside_temp(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let victim = outside.path().join("config");
    std::fs::write(&victim, "secret\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let chmod = format!("chmod 600 {}", victim.display());
    // The parent tries, then hands the same command to an Explore subagent (claude-code's
    // Agent tool), which tries it too.
    let mock = MockServer::start_blocking(Script::new([
        Reply::tool_call("toolu_01", "Bash", json!({"command": chmod})),
        Reply::tool_call(
            "toolu_02",
            "Agent",
            json!({"description": "tidy a file", "prompt": format!("Run `{chmod}`."), "subagent_type": "Explore"}),
        ),
        Reply::tool_call("toolu_03", "Bash", json!({"command": chmod})),
        Reply::text("I could not change its mode."),
        Reply::text("Neither of us changed it."),
    ]))
    .unwrap();
    let mut args = vec!["exec".to_string(), "--json".to_string()];
    args.extend(TestRepo::mock_config(&mock.url(), "messages"));
    for a in [
        "-c",
        "model=\"claude-sonnet-4-6\"",
        "--harness",
        "claude-code",
        "-c",
        "approval_policy=\"untrusted\"",
    ] {
        args.push(a.to_string());
    }
    let home = repo.home.path().display().to_string();
    let out = repo.run_with_env(&args, "tidy that file", &[("HOME", home.as_str())]);
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    assert_eq!(
        mode(&victim),
        0o644,
        "the file outside the workspace had its mode changed"
    );
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 5, "parent, parent, subagent, subagent, parent");
    // The parent's own call was asked about, and refused.
    let parent = tool_results(&reqs[1].body);
    assert_eq!(parent[0].0, "toolu_01");
    assert!(parent[0].1.contains(REJECTED), "parent: {}", parent[0].1);
    // The subagent's call was asked about too (not run, and not refused by a policy of its
    // own: it asked as its parent does).
    let child = tool_results(&reqs[3].body);
    assert_eq!(child.len(), 1, "{child:?}");
    assert_eq!(child[0].0, "toolu_03");
    assert!(child[0].1.contains(REJECTED), "subagent: {}", child[0].1);
}
