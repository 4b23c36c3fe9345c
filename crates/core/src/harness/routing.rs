//! The harness a session gets when `harness` is not set: the one the model was trained
//! against, in a form its wire speaks. One row per model family (the catalog decides the
//! family). `harness = …` in the config always wins over this table.

use super::{HarnessInfo, claude_code, kimi_code, native, qwen_code, zcode};
use crate::config::{ProviderConfig, WireApi};
use crate::model::catalog::{self, Family};

/// A model family (`model/catalog.rs` says which) and its harness on each wire (registry
/// entries, so a route cannot name a harness that does not exist).
struct Route {
    family: Family,
    chat: &'static HarnessInfo,
    responses: &'static HarnessInfo,
    messages: &'static HarnessInfo,
}

/// Kimi Code has no Messages form, so Kimi on Messages gets Claude Code's surface, as every
/// Anthropic-compatible endpoint does; Qwen Code speaks Chat only, so Qwen gets it there and
/// native on Responses. GLM on Messages gets Z.ai's own agent surface, on
/// Chat Claude Code's (our choice; see docs/harnesses.md).
const ROUTES: &[Route] = &[
    Route {
        family: Family::Kimi,
        chat: &kimi_code::INFO,
        responses: &kimi_code::INFO,
        messages: &claude_code::INFO,
    },
    Route {
        family: Family::Qwen,
        chat: &qwen_code::INFO,
        responses: &native::INFO,
        messages: &claude_code::INFO,
    },
    Route {
        family: Family::DeepSeek,
        chat: &claude_code::BARE_INFO,
        responses: &claude_code::BARE_INFO,
        messages: &claude_code::BARE_INFO,
    },
    Route {
        family: Family::Glm,
        chat: &claude_code::INFO,
        responses: &claude_code::INFO,
        messages: &zcode::INFO,
    },
    Route {
        family: Family::Claude,
        chat: &claude_code::INFO,
        responses: &claude_code::INFO,
        messages: &claude_code::INFO,
    },
];

/// The default harness for `model` on `provider`.
pub fn default_for(provider: &ProviderConfig, model: &str) -> &'static str {
    let family = catalog::family(&provider.id, &provider.name, &provider.base_url, model);
    let route = family.and_then(|f| ROUTES.iter().find(|r| r.family == f));
    let harness = match (route, provider.wire_api) {
        (Some(r), WireApi::Chat) => r.chat,
        (Some(r), WireApi::Responses) => r.responses,
        (Some(r), WireApi::Messages) => r.messages,
        (None, WireApi::Messages) => &claude_code::INFO,
        (None, _) => &native::INFO,
    };
    harness.name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Overrides};

    fn route(provider: &str, model: &str, extra: &[&str]) -> &'static str {
        let mut o = Overrides {
            config: extra.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        o.provider = Some(provider.into());
        o.model = Some(model.into());
        let c = Config::from_layers("/h".into(), None, None, &[], &o).unwrap();
        default_for(&c.provider, &c.model)
    }

    #[test]
    fn families_route_per_wire() {
        assert_eq!(route("kimi", "kimi-k3", &[]), "kimi-code");
        assert_eq!(route("kimi-code", "k3", &[]), "kimi-code");
        assert_eq!(route("openrouter", "moonshotai/kimi-k3", &[]), "kimi-code");
        assert_eq!(route("kimi-anthropic", "kimi-k3", &[]), "claude-code");
        assert_eq!(route("deepseek", "deepseek-chat", &[]), "claude-code-bare");
        assert_eq!(
            route("deepseek-anthropic", "deepseek-v4-pro", &[]),
            "claude-code-bare"
        );
        assert_eq!(route("zai", "glm-4.7", &[]), "claude-code");
        assert_eq!(route("zai-anthropic", "glm-4.7", &[]), "zcode");
        assert_eq!(route("qwen", "qwen3-coder-plus", &[]), "qwen-code");
        assert_eq!(
            route("qwen-anthropic", "qwen3-coder-plus", &[]),
            "claude-code"
        );
        assert_eq!(route("minimax", "MiniMax-M3", &[]), "claude-code");
        assert_eq!(route("anthropic", "claude-sonnet-4-6", &[]), "claude-code");
        assert_eq!(route("openai", "gpt-5.4", &[]), "native");
        assert_eq!(
            route("openrouter", "anthropic/claude-opus-4-6", &[]),
            "claude-code"
        );
    }

    #[test]
    fn custom_providers_route_by_wire_and_words() {
        let mock = |wire: &str| {
            format!(
                "model_providers.mock={{name=\"mock\", base_url=\"http://127.0.0.1:9/v1\", wire_api=\"{wire}\"}}"
            )
        };
        assert_eq!(route("mock", "mock-model", &[&mock("chat")]), "native");
        assert_eq!(
            route("mock", "mock-model", &[&mock("messages")]),
            "claude-code"
        );
        assert_eq!(route("mock", "glm-4.7", &[&mock("messages")]), "zcode");
        assert_eq!(route("mock", "kimi-k3", &[&mock("chat")]), "kimi-code");
    }

    #[test]
    fn every_route_names_a_harness_that_speaks_its_wire() {
        for r in ROUTES {
            assert!(r.chat.wires.contains(&WireApi::Chat), "{:?}", r.family);
            assert!(
                r.responses.wires.contains(&WireApi::Responses),
                "{:?}",
                r.family
            );
            assert!(
                r.messages.wires.contains(&WireApi::Messages),
                "{:?}",
                r.family
            );
        }
    }
}
