//! Custom agents: Claude Code's Markdown (front matter `name`, `description`, `tools`,
//! `disallowedTools`, `model`, `effort`, `permissionMode`; the body is the system prompt) and
//! Codex's TOML (`name`, `description`, `developer_instructions`, `model`,
//! `model_reasoning_effort`, `sandbox_mode`). Unknown keys are ignored, as the peers do.
//!
//! An agent never gets more than its parent: its sandbox can only narrow the session's, its
//! tools are a subset of the subagent table, and a model the session's provider does not
//! offer falls back to the session's model with a warning naming the file.

use interpreter_protocol::{ReasoningEffort, SandboxMode, ToolKind};
use serde::Deserialize;
use std::path::{Path, PathBuf};

use super::{NameList, check_name};
use crate::config::ProviderConfig;
use crate::model::catalog;
use crate::tools::table::{Tool, ToolTable};
use crate::workspace::Workspace;

/// One agent a subagent call may name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CustomAgent {
    pub name: String,
    pub description: String,
    /// The subagent's system prompt.
    pub prompt: String,
    /// The tools it is offered (the peer's names); None: every subagent tool.
    pub tools: Option<Vec<String>>,
    /// Tools it is never offered.
    pub disallowed: Vec<String>,
    /// The model the file names (None or `inherit`: the session's); once resolved
    /// ([`resolve_model`]), one a configured provider offers.
    pub model: Option<String>,
    /// The configured provider `model` is on, when not the session's (set on resolving).
    pub provider: Option<String>,
    pub effort: Option<ReasoningEffort>,
    /// The sandbox it asks for; the session's narrowed by it, never widened.
    pub sandbox: Option<SandboxMode>,
    pub path: PathBuf,
}

#[derive(Debug, Deserialize)]
struct Markdown {
    name: Option<String>,
    description: Option<String>,
    tools: Option<NameList>,
    #[serde(rename = "disallowedTools", alias = "disallowed_tools")]
    disallowed_tools: Option<NameList>,
    model: Option<String>,
    #[serde(alias = "model_reasoning_effort", alias = "reasoning_effort")]
    effort: Option<String>,
    #[serde(rename = "permissionMode", alias = "permission_mode")]
    permission_mode: Option<String>,
    #[serde(alias = "sandbox")]
    sandbox_mode: Option<String>,
}

#[derive(Debug, Deserialize)]
struct CodexToml {
    name: Option<String>,
    description: Option<String>,
    developer_instructions: Option<String>,
    model: Option<String>,
    model_reasoning_effort: Option<String>,
    sandbox_mode: Option<String>,
}

/// Parses an agent file by its extension; Err says what is wrong.
pub(crate) fn parse(path: &Path, text: &str) -> Result<CustomAgent, String> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let is_toml = path.extension().is_some_and(|e| e == "toml");
    let agent = if is_toml {
        let t: CodexToml = toml::from_str(text).map_err(|e| format!("invalid TOML: {e}"))?;
        let prompt = t
            .developer_instructions
            .filter(|p| !p.trim().is_empty())
            .ok_or("developer_instructions is required")?;
        CustomAgent {
            name: pick_name(t.name, &stem),
            description: t.description.unwrap_or_default(),
            prompt,
            tools: None,
            disallowed: Vec::new(),
            model: t.model,
            provider: None,
            effort: effort(t.model_reasoning_effort)?,
            sandbox: sandbox(t.sandbox_mode)?,
            path: path.to_path_buf(),
        }
    } else {
        let (yaml, body_start) = crate::skills::front_matter::split(text)?;
        let m: Markdown = super::front_matter(yaml)?;
        let sandbox = match m.permission_mode.as_deref() {
            Some("plan") => Some(SandboxMode::ReadOnly),
            _ => sandbox(m.sandbox_mode)?,
        };
        CustomAgent {
            name: pick_name(m.name, &stem),
            description: m.description.unwrap_or_default(),
            prompt: text[body_start..].trim().to_string(),
            tools: m.tools.map(|t| t.names()),
            disallowed: m.disallowed_tools.map(|t| t.names()).unwrap_or_default(),
            model: m.model,
            provider: None,
            effort: effort(m.effort)?,
            sandbox,
            path: path.to_path_buf(),
        }
    };
    check_name(&agent.name)?;
    if agent.description.trim().is_empty() {
        return Err("description is required".into());
    }
    if agent.prompt.is_empty() {
        return Err("the system prompt (the body) is empty".into());
    }
    Ok(CustomAgent {
        description: agent.description.trim().to_string(),
        model: agent
            .model
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty()),
        ..agent
    })
}

fn pick_name(name: Option<String>, stem: &str) -> String {
    name.map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| stem.to_string())
}

fn effort(raw: Option<String>) -> Result<Option<ReasoningEffort>, String> {
    raw.map(|e| {
        e.trim()
            .to_ascii_lowercase()
            .parse()
            .map_err(|e| format!("{e}"))
    })
    .transpose()
}

fn sandbox(raw: Option<String>) -> Result<Option<SandboxMode>, String> {
    raw.map(|s| s.trim().parse().map_err(|e| format!("{e}")))
        .transpose()
}

/// The model an agent runs on, given the session's provider and model and the other
/// configured providers: `(model, provider)`, None for the session's own. A Claude alias
/// (`sonnet`, `haiku`, `opus`) or a model id maps to a model the session's provider offers,
/// else to one a provider configured in `[model_providers]` offers on the same wire;
/// otherwise the warning says the session's model is used instead.
/// `who` names what asked, for the warning (an agent and its file, or a config key).
pub(crate) fn resolve_model(
    wanted: Option<&str>,
    who: &str,
    session: &ProviderConfig,
    session_model: &str,
    others: &[ProviderConfig],
) -> (Option<(String, Option<String>)>, Option<String>) {
    let Some(wanted) = wanted else {
        return (None, None);
    };
    if wanted.eq_ignore_ascii_case("inherit") || wanted == session_model {
        return (None, None);
    }
    let lower = wanted.to_ascii_lowercase();
    let alias = matches!(lower.as_str(), "sonnet" | "haiku" | "opus");
    let offered = |provider: &str| {
        let models = catalog::provider(provider).map_or(&[][..], |p| p.models);
        models
            .iter()
            .find(|m| match alias {
                true => m.contains(lower.as_str()),
                // A dated id (`claude-haiku-4-5-20251001`) is the catalog's model too.
                false => {
                    m.eq_ignore_ascii_case(wanted)
                        || lower.strip_prefix(*m).is_some_and(|d| {
                            d.len() > 1
                                && d.starts_with('-')
                                && d[1..].chars().all(|c| c.is_ascii_digit())
                        })
                }
            })
            .map(|m| match alias {
                true => m.to_string(),
                false => wanted.to_string(),
            })
    };
    if let Some(m) = offered(&session.id) {
        return (Some((m, None)), None);
    }
    let elsewhere = others
        .iter()
        .filter(|p| p.wire_api == session.wire_api)
        .find_map(|p| offered(&p.id).map(|m| (m, Some(p.id.clone()))));
    if elsewhere.is_some() {
        return (elsewhere, None);
    }
    let warning = format!(
        "{who} asks for model `{wanted}`, which neither provider `{}` nor another configured provider on its wire offers: the session's model `{session_model}` is used",
        session.id
    );
    (None, Some(warning))
}

/// What a peer's tool name covers in any harness: tools of these kinds.
fn kinds(name: &str) -> &'static [ToolKind] {
    match name.to_ascii_lowercase().as_str() {
        "read" | "ls" | "notebookread" | "view" => &[ToolKind::Read],
        "glob" | "grep" | "search" => &[ToolKind::Search],
        "edit" | "multiedit" | "write" | "notebookedit" | "apply_patch" => {
            &[ToolKind::Edit, ToolKind::Delete, ToolKind::Move]
        }
        "bash" | "shell" | "bashoutput" | "killshell" => &[ToolKind::Execute],
        "webfetch" | "websearch" => &[ToolKind::Fetch],
        "todowrite" => &[ToolKind::Think],
        _ => &[],
    }
}

/// Whether `tool` is one the list names: by its own name, or, when the harness has no tool
/// of a listed name, by the kind that name stands for (Claude's `Edit` is native's
/// `apply_patch`).
fn named(list: &[String], tool: &dyn Tool, table: &ToolTable, ws: &Workspace) -> bool {
    let own = &tool.spec().name;
    let kind = tool.describe(&serde_json::json!({}), ws).kind;
    list.iter().any(|n| {
        own.eq_ignore_ascii_case(n)
            || (!table.all_names().any(|t| t.eq_ignore_ascii_case(n)) && kinds(n).contains(&kind))
    })
}

/// The subagent table narrowed to what the agent's `tools` and `disallowedTools` allow.
pub(crate) fn select_tools(agent: &CustomAgent, table: &ToolTable, ws: &Workspace) -> ToolTable {
    if agent.tools.is_none() && agent.disallowed.is_empty() {
        return table.clone();
    }
    table.filtered(|t| {
        agent
            .tools
            .as_ref()
            .is_none_or(|list| named(list, t, table, ws))
            && !named(&agent.disallowed, t, table, ws)
    })
}

/// The arguments that name a subagent's type, in every harness that has one (as
/// `agent::subagent` reads them).
pub(crate) const TYPE_KEYS: [&str; 4] = ["subagent_type", "agent_type", "subagent_name", "type"];

/// Characters of an agent's description its type list shows.
const MAX_LISTED: usize = 1024;

/// The subagent tools' specs with the custom agents added to their type list: to the
/// description (and to the `subagent_type` enum where the harness has one). Without custom
/// agents the table is unchanged, so the default prompt stays byte for byte the same.
pub(crate) fn list_in(table: ToolTable, agents: &[CustomAgent]) -> ToolTable {
    if agents.is_empty() {
        return table;
    }
    // Real descriptions carry long examples: each is bounded, as a skill's is.
    let lines: Vec<String> = agents
        .iter()
        .map(|a| {
            let mut d: String = a.description.chars().take(MAX_LISTED).collect();
            if d.len() < a.description.len() {
                d.push('…');
            }
            format!("- {}: {d}", a.name)
        })
        .collect();
    let note = format!(
        "\n\nCustom agent types (subagent_type):\n{}",
        lines.join("\n")
    );
    table.respecified(|spec| {
        let mut spec = spec.clone();
        let props = spec.parameters.get("properties");
        if !TYPE_KEYS
            .iter()
            .any(|k| props.is_some_and(|p| p.get(k).is_some()))
        {
            return spec; // A tool that takes no type (deepseek-tui's tool_agent).
        }
        spec.description.push_str(&note);
        for key in TYPE_KEYS {
            let list = spec
                .parameters
                .get_mut("properties")
                .and_then(|p| p.get_mut(key))
                .and_then(|f| f.get_mut("enum"))
                .and_then(|e| e.as_array_mut());
            if let Some(list) = list {
                for a in agents {
                    let name = serde_json::json!(a.name);
                    if !list.contains(&name) {
                        list.push(name);
                    }
                }
            }
        }
        spec
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claude Code's example subagent, as its docs give it.
    const CLAUDE_EXAMPLE: &str = "---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
3. Begin review immediately
";

    /// A Codex custom agent in the shape its docs give.
    const CODEX_EXAMPLE: &str = r#"name = "reviewer"
description = "PR reviewer focused on correctness, security, and missing tests."
model = "gpt-5.4"
model_reasoning_effort = "high"
sandbox_mode = "read-only"
developer_instructions = """
Review code like an owner.
Prioritize correctness, security, behavior regressions, and missing test coverage.
"""
"#;

    #[test]
    fn claude_codes_and_codexs_examples_parse() {
        let a = parse(
            Path::new("/h/.claude/agents/code-reviewer.md"),
            CLAUDE_EXAMPLE,
        )
        .unwrap();
        assert_eq!(a.name, "code-reviewer");
        assert_eq!(
            a.tools.as_deref().unwrap(),
            ["Read", "Grep", "Glob", "Bash"]
        );
        assert_eq!(a.model.as_deref(), Some("inherit"));
        assert!(a.prompt.starts_with("You are a senior code reviewer"));
        let c =
            crate::config::Config::from_layers("/h".into(), None, None, &[], &Default::default())
                .unwrap();
        assert_eq!(
            resolve_model(a.model.as_deref(), "a", &c.provider, &c.model, &[]),
            (None, None)
        );
        let c = parse(Path::new("/h/.codex/agents/reviewer.toml"), CODEX_EXAMPLE).unwrap();
        assert_eq!(c.name, "reviewer");
        assert_eq!(c.effort, Some(ReasoningEffort::High));
        assert_eq!(c.sandbox, Some(SandboxMode::ReadOnly));
        assert!(c.prompt.starts_with("Review code like an owner."));
        assert!(c.tools.is_none());
    }

    #[test]
    fn yaml_lists_plan_mode_and_bad_values() {
        let a = parse(
            Path::new("x.md"),
            "---\ndescription: d\ntools:\n  - Read\n  - Grep\npermissionMode: plan\ncolor: blue\n---\nBody\n",
        )
        .unwrap();
        assert_eq!(a.name, "x");
        assert_eq!(a.tools.unwrap(), ["Read", "Grep"]);
        assert_eq!(a.sandbox, Some(SandboxMode::ReadOnly));
        for (text, said) in [
            (
                "---\ndescription: d\neffort: huge\n---\nB\n",
                "reasoning effort",
            ),
            (
                "---\ndescription: d\nsandbox: all\n---\nB\n",
                "sandbox mode",
            ),
            ("---\nname: a b\ndescription: d\n---\nB\n", "spaces"),
            ("---\nname: a\n---\nB\n", "description is required"),
            ("---\ndescription: d\n---\n", "body"),
            ("no front matter\n", "---"),
            ("---\n- [unclosed\n---\nB\n", "front matter"),
        ] {
            let err = parse(Path::new("x.md"), text).unwrap_err();
            assert!(err.contains(said), "{text:?}: {err}");
        }
        let err = parse(Path::new("x.toml"), "name = \n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
        let err = parse(Path::new("x.toml"), "description = \"d\"\n").unwrap_err();
        assert!(err.contains("developer_instructions"), "{err}");
    }

    #[test]
    fn agents_join_each_harness_type_list_and_get_only_their_tools() {
        let env = crate::harness::test_env();
        let mut agent = parse(Path::new("r.md"), CLAUDE_EXAMPLE).unwrap();
        let ws = Workspace::new(
            &std::env::temp_dir(),
            &[],
            std::sync::Arc::new(crate::workspace::DiskBackend),
        )
        .unwrap();
        let spec = |h: &str, name: &str| {
            let table = crate::harness::by_name(h).unwrap().tools(&env);
            let listed = list_in(table.clone(), std::slice::from_ref(&agent));
            let before = table.spec_slice().iter().find(|s| s.name == name).cloned();
            let after = listed.spec_slice().iter().find(|s| s.name == name).cloned();
            (before.unwrap(), after.unwrap())
        };
        let (before, after) = spec("claude-code", "Agent");
        assert!(!before.description.contains("code-reviewer"));
        assert!(
            after
                .description
                .contains("- code-reviewer: Expert code review")
        );
        let (_, after) = spec("kimi-code", "Agent");
        let types = &after.parameters["properties"]["subagent_type"]["enum"];
        assert_eq!(types.as_array().unwrap().last().unwrap(), "code-reviewer");
        // A custom agent named like a built-in type is in the enum once; a long description
        // is cut.
        let table = crate::harness::by_name("kimi-code").unwrap().tools(&env);
        let explore = CustomAgent {
            name: "explore".into(),
            description: "x".repeat(5000),
            ..agent.clone()
        };
        let listed = list_in(table, &[explore]);
        let after = &listed.spec_slice()[0];
        assert_eq!(after.name, "Agent");
        let types = after.parameters["properties"]["subagent_type"]["enum"].to_string();
        assert_eq!(types, r#"["coder","explore","plan"]"#);
        assert!(
            after
                .description
                .contains(&format!("{}…", "x".repeat(1024)))
        );
        assert!(!after.description.contains(&"x".repeat(1025)));
        // deepseek-tui's agent_open takes a type; its tool_agent does not.
        let (_, open) = spec("deepseek-tui", "agent_open");
        assert!(open.description.contains("- code-reviewer:"));
        let (before, once) = spec("deepseek-tui", "tool_agent");
        assert_eq!(before, once);
        // No agents: the very same specs.
        let table = crate::harness::by_name("opencode").unwrap().tools(&env);
        assert_eq!(list_in(table.clone(), &[]).spec_slice(), table.spec_slice());
        // Claude's names map to native's tools by kind; Claude Code's own are kept by name.
        let names = |h: &str, a: &CustomAgent| {
            let table = crate::harness::by_name(h)
                .unwrap()
                .tools(&env)
                .for_subagent();
            let picked = select_tools(a, &table, &ws);
            picked
                .names()
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names("claude-code", &agent),
            ["Bash", "Glob", "Grep", "Read"]
        );
        agent.tools = Some(vec!["Read".into(), "Edit".into()]);
        let native = names("native", &agent);
        assert!(native.contains(&"apply_patch".to_string()), "{native:?}");
        assert!(
            !native.iter().any(|n| n == "shell" || n == "exec_command"),
            "{native:?}"
        );
        agent.tools = None;
        agent.disallowed = vec!["Bash".into()];
        assert!(!names("claude-code", &agent).contains(&"Bash".to_string()));
    }

    #[test]
    fn models_map_to_what_a_configured_provider_offers_or_fall_back_with_a_warning() {
        let with = |m: &str| CustomAgent {
            model: Some(m.into()),
            ..parse(Path::new("/a/r.md"), "---\ndescription: d\n---\nB\n").unwrap()
        };
        let config = |file: &str| {
            crate::config::Config::from_layers(
                "/h".into(),
                Some(file),
                None,
                &[],
                &Default::default(),
            )
            .unwrap()
        };
        let kimi = config("");
        let resolve = |c: &crate::config::Config, m: &str| {
            let a = with(m);
            let who = format!("agent `r` ({})", a.path.display());
            resolve_model(
                a.model.as_deref(),
                &who,
                &c.provider,
                &c.model,
                &c.other_providers,
            )
        };
        assert_eq!(
            resolve(&kimi, "kimi-k2.6"),
            (Some(("kimi-k2.6".into(), None)), None)
        );
        let (model, warning) = resolve(&kimi, "sonnet");
        assert_eq!(model, None);
        let w = warning.unwrap();
        assert!(
            w.contains("/a/r.md") && w.contains("sonnet") && w.contains("kimi-k3"),
            "{w}"
        );
        assert!(resolve(&kimi, "gpt-5.5-mini").1.is_some());
        let anthropic = config("model_provider = \"anthropic\"\nmodel = \"claude-sonnet-4-6\"\n");
        assert_eq!(
            resolve(&anthropic, "haiku"),
            (Some(("claude-haiku-4-5".into(), None)), None)
        );
        assert_eq!(
            resolve(&anthropic, "claude-haiku-4-5-20251001"),
            (Some(("claude-haiku-4-5-20251001".into(), None)), None)
        );
        assert!(resolve(&anthropic, "claude-haiku-4-5-turbo").1.is_some());
        // Another configured provider on the same wire offers it.
        let both = config(
            "[model_providers.deepseek]\nbase_url = \"http://127.0.0.1:1/v1\"\n[model_providers.anthropic]\nbase_url = \"http://127.0.0.1:1/v1\"\n",
        );
        assert_eq!(
            resolve(&both, "deepseek-reasoner"),
            (
                Some(("deepseek-reasoner".into(), Some("deepseek".into()))),
                None
            )
        );
        // Anthropic's Messages wire is not the session's Chat wire.
        assert!(resolve(&both, "haiku").1.is_some());
    }
}
