//! docs/harnesses.md's tool catalog is the code's: each harness's row lists, in the "Ours"
//! column, the count and names of the tools it offers with every capability on (fetching, a
//! search backend, images, skills, a face that asks and keeps schedules). A tool added or
//! dropped without the docs fails here, with the row's expected cell in the message.

use std::path::{Path, PathBuf};

use super::{PromptEnv, WebTools, by_name, harnesses};
use crate::config::ApprovalPolicy;

/// A session with everything a tool may need.
fn everything_on() -> PromptEnv {
    let skills = crate::skills::discover(
        &mut crate::workspace::startup::StartupReads::default(),
        Path::new("/nonexistent-dir-for-test"),
        None,
    )
    .skills;
    assert!(!skills.is_empty(), "the bundled skills are there");
    PromptEnv {
        cwd: PathBuf::from("/w"),
        roots: vec![PathBuf::from("/w")],
        approval: ApprovalPolicy::OnRequest,
        skills,
        face: crate::tools::events::FaceAbilities {
            questions: true,
            diagnostics: true,
            schedules: true,
            client: "",
        },
        web: WebTools {
            fetch: true,
            search: true,
            moonshot_search: false,
        },
        images: true,
        model: "m".into(),
        provider: "p".into(),
        github_cli: true,
        browser: true,
        ..super::test_env()
    }
}

/// The "Ours" cells of the catalog table, by harness.
fn documented() -> Vec<(String, String)> {
    let docs = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/harnesses.md"),
    )
    .unwrap();
    let section = docs
        .split("\n## Tool catalog\n")
        .nth(1)
        .expect("docs/harnesses.md has a `## Tool catalog` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            (
                cells[0]
                    .trim_start_matches("| ")
                    .trim_matches('`')
                    .to_string(),
                cells.get(2).copied().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn the_catalog_lists_every_harness_with_the_tools_it_offers() {
    let env = everything_on();
    let rows = documented();
    let mut wrong = Vec::new();
    for info in harnesses() {
        let table = by_name(info.name).unwrap().tools(&env);
        let names = table.names();
        let cell = format!(
            "{}: {}",
            names.len(),
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        match rows.iter().find(|(h, _)| h == info.name) {
            Some((_, documented)) if *documented == cell => {}
            Some((_, documented)) => wrong.push(format!(
                "{}: the docs say `{documented}`, the code offers `{cell}`",
                info.name
            )),
            None => wrong.push(format!("{}: no row; its tools are `{cell}`", info.name)),
        }
    }
    for (h, _) in &rows {
        if !harnesses().any(|i| i.name == h) {
            wrong.push(format!("{h}: a row for a harness that does not exist"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
