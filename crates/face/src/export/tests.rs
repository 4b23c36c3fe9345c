use super::*;
use interpreter_protocol::export::{ExportEntry, ExportedCall};
use interpreter_protocol::{TokenUsage, ToolKind};

const PNG: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";

fn session() -> SessionExport {
    let usage = TokenUsage {
        input_tokens: 1200,
        cached_input_tokens: 1000,
        output_tokens: 56,
        reasoning_output_tokens: 0,
    };
    SessionExport {
        id: "0190-abc".into(),
        title: Some("Fix the </title> bug".into()),
        cwd: "/repo".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_at: Some("2026-01-01T00:05:00Z".into()),
        provider: "mock".into(),
        model: "mock-model".into(),
        harness: "native".into(),
        entries: vec![
            ExportEntry::Prompt {
                text: "look at this </script><img src=x onerror=alert(1)>".into(),
                images: vec![PNG.into()],
            },
            ExportEntry::Reasoning {
                text: "thinking".into(),
            },
            ExportEntry::ToolCall(Box::new(ExportedCall {
                tool: "shell".into(),
                kind: ToolKind::Execute,
                title: "echo ```".into(),
                command: Some("echo ```".into()),
                input: serde_json::json!({"command": "echo ```"}),
                output: "```\n".into(),
                failed: false,
                diffs: vec![],
            })),
            ExportEntry::ToolCall(Box::new(ExportedCall {
                tool: "apply_patch".into(),
                kind: ToolKind::Edit,
                title: "Edit a.txt".into(),
                command: None,
                input: serde_json::json!({"input": "…"}),
                output: "Success".into(),
                failed: false,
                diffs: vec!["--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n".into()],
            })),
            ExportEntry::Answer {
                text: "Done: **fixed**. <b>raw</b>".into(),
            },
            ExportEntry::TurnEnded { usage: Some(usage) },
        ],
        total_usage: usage,
    }
}

#[test]
fn markdown_export() {
    insta::assert_snapshot!(render(&session(), Format::Markdown));
}

#[test]
fn html_escapes_everything_and_inlines_images_on_stdout() {
    let html = render(&session(), Format::Html);
    assert!(!html.contains("<img src=x"), "{html}");
    assert!(!html.contains("</script>"), "{html}");
    assert!(
        html.contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
    assert!(html.contains("<title>Fix the &lt;/title&gt; bug</title>"));
    assert!(html.contains("&lt;b&gt;raw&lt;/b&gt;") && html.contains("<strong>fixed</strong>"));
    assert!(html.contains("<span class=\"add\">+two</span>"), "{html}");
    assert!(
        html.contains("<img src=\"data:image/png;base64,iVBOR"),
        "{html}"
    );
    assert!(html.contains("<details><summary>Output (1 line)</summary>"));
    assert!(!html.contains("<script") && !html.contains("http://") && !html.contains("https://"));
}

#[test]
fn a_written_page_keeps_images_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("my session.html");
    let written = write(&session(), Format::of_path(&page), &page).unwrap();
    let image = dir.path().join("my session_files/1.png");
    assert_eq!(written, [page.clone(), image.clone()]);
    assert_eq!(&std::fs::read(&image).unwrap()[..4], b"\x89PNG");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<img src=\"my%20session_files/1.png\""),
        "{html}"
    );
    let md = dir.path().join("s.md");
    write(&session(), Format::of_path(&md), &md).unwrap();
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("![image 1](<s_files/1.png>)"), "{text}");
}

#[test]
fn a_log_without_token_counts_claims_none() {
    let mut e = session();
    e.entries
        .retain(|x| !matches!(x, ExportEntry::TurnEnded { .. }));
    e.total_usage = TokenUsage::default();
    for format in [Format::Markdown, Format::Html] {
        let page = render(&e, format);
        assert!(!page.contains("Tokens"), "{page}");
    }
}
