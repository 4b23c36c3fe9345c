//! The harness a session gets when `harness` is not set: the one the model was trained
//! against, in a form its wire speaks. One row per model family; the first row whose words
//! appear in the provider's id, name or base URL or in the model name wins. `harness = …`
//! in the config always wins over this table.

use crate::config::{ProviderConfig, WireApi};
use crate::model::catalog;

/// A model family and its harness on each wire.
struct Route {
    /// Matched case-insensitively against provider id, name, base URL and model.
    words: &'static [&'static str],
    chat: &'static str,
    responses: &'static str,
    messages: &'static str,
}

/// Kimi Code has no Messages form, so Kimi on Messages gets Claude Code's surface, as every
/// Anthropic-compatible endpoint does; Qwen Code speaks Chat only, so Qwen gets it there and
/// native on Responses. GLM on Messages gets Z.ai's own agent surface, on
/// Chat Claude Code's (our choice; see docs/harnesses.md).
const ROUTES: &[Route] = &[
    Route {
        words: &["kimi", "moonshot"],
        chat: "kimi-code",
        responses: "kimi-code",
        messages: "claude-code",
    },
    Route {
        words: &["qwen", "qwq", "dashscope"],
        chat: "qwen-code",
        responses: "native",
        messages: "claude-code",
    },
    Route {
        words: &["deepseek"],
        chat: "claude-code-bare",
        responses: "claude-code-bare",
        messages: "claude-code-bare",
    },
    Route {
        words: &["glm", "zhipu", "bigmodel", "z.ai", "zai"],
        chat: "claude-code",
        responses: "claude-code",
        messages: "zcode",
    },
    Route {
        words: &["claude", "anthropic"],
        chat: "claude-code",
        responses: "claude-code",
        messages: "claude-code",
    },
];

/// The default harness for `model` on `provider`.
pub(crate) fn default_for(provider: &ProviderConfig, model: &str) -> &'static str {
    let mut haystack = format!(
        "{} {} {} {}",
        provider.id, provider.name, provider.base_url, model
    )
    .to_ascii_lowercase();
    // Kimi's short model names (`k3`, `k2p5`) name no family word.
    if catalog::model_info(model).kimi {
        haystack.push_str(" kimi");
    }
    let route = ROUTES
        .iter()
        .find(|r| r.words.iter().any(|w| haystack.contains(w)));
    match (route, provider.wire_api) {
        (Some(r), WireApi::Chat) => r.chat,
        (Some(r), WireApi::Responses) => r.responses,
        (Some(r), WireApi::Messages) => r.messages,
        (None, WireApi::Messages) => "claude-code",
        (None, _) => "native",
    }
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
}
