//! Built-in providers and what we know about their models.

use super::provider::{AuthScheme, WireApi};

pub(crate) const DEFAULT_PROVIDER: &str = "kimi";
/// OpenAI's id: Codex's own settings (`openai_base_url`, `CODEX_API_KEY`) apply to it.
pub(crate) const OPENAI: &str = "openai";

/// A model family: which harness a model gets by default (`harness/routing.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Moonshot's Kimi models, Kimi Code's short names (`k3`, `k2p5`) included.
    Kimi,
    /// Alibaba's Qwen and QwQ models (DashScope).
    Qwen,
    /// DeepSeek's chat and reasoning models.
    DeepSeek,
    /// Zhipu's GLM models (Z.ai, BigModel).
    Glm,
    /// Anthropic's Claude models.
    Claude,
}

/// Each family's words, matched case-insensitively in a provider's id, name and base URL and
/// in the model name; the first family with a match wins.
pub(crate) const FAMILIES: &[(Family, &[&str])] = &[
    (Family::Kimi, &["kimi", "moonshot"]),
    (Family::Qwen, &["qwen", "qwq", "dashscope"]),
    (Family::DeepSeek, &["deepseek"]),
    (Family::Glm, &["glm", "zhipu", "bigmodel", "z.ai", "zai"]),
    (Family::Claude, &["claude", "anthropic"]),
];

/// The family of `model` on the provider with this id, name and base URL.
pub fn family(
    provider_id: &str,
    provider_name: &str,
    base_url: &str,
    model: &str,
) -> Option<Family> {
    // Kimi's short model names (`k3`, `k2p5`) name no family word.
    if model_info(model).kimi {
        return Some(Family::Kimi);
    }
    let haystack = format!("{provider_id} {provider_name} {base_url} {model}").to_ascii_lowercase();
    FAMILIES
        .iter()
        .find(|(_, words)| words.iter().any(|w| haystack.contains(w)))
        .map(|(f, _)| *f)
}

/// Tools for this provider and model must follow Moonshot's schema dialect
/// (`model/kimi_schema.rs`): Moonshot's own endpoints, and Kimi models anywhere.
pub(crate) fn moonshot_dialect(provider_id: &str, model: &str) -> bool {
    matches!(provider_id, "kimi" | "kimi-code") || model_info(model).kimi
}

/// Kimi Code's search service, which its key also opens (`[web] search = "kimi-code"`).
pub(crate) const KIMI_CODE_SEARCH: &str = "https://api.kimi.com/coding/v1/search";

/// The search service of the provider with this id and base URL, if it has one on its own
/// key: Kimi Code's, beside its API.
pub(crate) fn search_service(provider_id: &str, base_url: &str) -> Option<String> {
    (provider_id == "kimi-code" || base_url.contains("api.kimi.com/coding"))
        .then(|| format!("{}/search", base_url.trim_end_matches('/')))
}

/// A built-in provider: the defaults a `[model_providers.<id>]` table of the same id overrides.
pub struct ProviderInfo {
    /// What `model_provider` and `[model_providers.<id>]` call it.
    pub id: &'static str,
    /// The name people see (`interpreter login`, account lists).
    pub name: &'static str,
    /// The API root; the wire appends its endpoint (`/chat/completions`, `/responses`,
    /// `/messages`).
    pub base_url: &'static str,
    /// The environment variable that holds the key; None for local servers, which take none.
    pub env_key: Option<&'static str>,
    /// The API its endpoint speaks, which decides the request body and the stream format.
    pub wire_api: WireApi,
    /// How the key is sent (Bearer unless the provider documents `x-api-key`).
    pub auth: AuthScheme,
    /// The model a session uses when config names none.
    pub default_model: &'static str,
    /// The models front ends offer to switch to (ACP, app-server); empty for local servers.
    pub models: &'static [&'static str],
    /// A server on this machine (Ollama, llama.cpp): it may reject request fields it does not
    /// know, so none beyond the wire's own are sent.
    pub local: bool,
}

pub(crate) const PROVIDERS: &[ProviderInfo] = &[
    ProviderInfo {
        id: "kimi",
        name: "Moonshot AI (Kimi platform)",
        base_url: "https://api.moonshot.ai/v1",
        env_key: Some("MOONSHOT_API_KEY"),
        wire_api: WireApi::Chat,
        auth: AuthScheme::Bearer,
        default_model: "kimi-k3",
        models: &["kimi-k3", "kimi-k2.7-code", "kimi-k2.6", "kimi-k2-thinking"],
        local: false,
    },
    ProviderInfo {
        id: "kimi-code",
        name: "Kimi Code",
        base_url: "https://api.kimi.com/coding/v1",
        env_key: Some("KIMI_API_KEY"),
        wire_api: WireApi::Chat,
        auth: AuthScheme::Bearer,
        default_model: "k3",
        models: &["k3", "k3-256k"],
        local: false,
    },
    ProviderInfo {
        id: "deepseek",
        name: "DeepSeek",
        base_url: "https://api.deepseek.com/v1",
        env_key: Some("DEEPSEEK_API_KEY"),
        wire_api: WireApi::Chat,
        auth: AuthScheme::Bearer,
        default_model: "deepseek-chat",
        models: &["deepseek-chat", "deepseek-reasoner"],
        local: false,
    },
    ProviderInfo {
        id: "zai",
        name: "Z.ai (GLM)",
        base_url: "https://api.z.ai/api/paas/v4",
        env_key: Some("ZAI_API_KEY"),
        wire_api: WireApi::Chat,
        auth: AuthScheme::Bearer,
        default_model: "glm-4.7",
        models: &["glm-4.7", "glm-4.6"],
        local: false,
    },
    ProviderInfo {
        id: "qwen",
        name: "Qwen (DashScope compatible mode)",
        base_url: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        env_key: Some("DASHSCOPE_API_KEY"),
        wire_api: WireApi::Chat,
        auth: AuthScheme::Bearer,
        default_model: "qwen3-coder-plus",
        models: &["qwen3-coder-plus", "qwen3-coder-flash"],
        local: false,
    },
    ProviderInfo {
        id: "openrouter",
        name: "OpenRouter",
        base_url: "https://openrouter.ai/api/v1",
        env_key: Some("OPENROUTER_API_KEY"),
        wire_api: WireApi::Chat,
        auth: AuthScheme::Bearer,
        default_model: "moonshotai/kimi-k3",
        models: &["moonshotai/kimi-k3"],
        local: false,
    },
    ProviderInfo {
        id: "openai",
        name: "OpenAI",
        base_url: "https://api.openai.com/v1",
        env_key: Some("OPENAI_API_KEY"),
        wire_api: WireApi::Responses,
        auth: AuthScheme::Bearer,
        default_model: "gpt-5.4-mini",
        models: &["gpt-5.4-mini", "gpt-5.4"],
        local: false,
    },
    // Anthropic Messages endpoints. The base URLs, key variables and models come from each
    // provider's own guide to its Anthropic-compatible API (named per entry); the key goes in
    // `x-api-key` where the guide sets ANTHROPIC_API_KEY, as Bearer where it sets
    // ANTHROPIC_AUTH_TOKEN.
    // Anthropic's API reference (Messages).
    ProviderInfo {
        id: "anthropic",
        name: "Anthropic",
        base_url: "https://api.anthropic.com/v1",
        env_key: Some("ANTHROPIC_API_KEY"),
        wire_api: WireApi::Messages,
        auth: AuthScheme::XApiKey,
        default_model: "claude-sonnet-4-6",
        models: &["claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"],
        local: false,
    },
    // Kimi API platform docs, "Anthropic-compatible API" (Claude Code setup).
    ProviderInfo {
        id: "kimi-anthropic",
        name: "Moonshot AI (Kimi platform, Anthropic API)",
        base_url: "https://api.moonshot.ai/anthropic/v1",
        env_key: Some("MOONSHOT_API_KEY"),
        wire_api: WireApi::Messages,
        auth: AuthScheme::Bearer,
        default_model: "kimi-k3",
        models: &["kimi-k3", "kimi-k2.7-code", "kimi-k2.6"],
        local: false,
    },
    // DeepSeek API docs, "Anthropic API" guide.
    ProviderInfo {
        id: "deepseek-anthropic",
        name: "DeepSeek (Anthropic API)",
        base_url: "https://api.deepseek.com/anthropic/v1",
        env_key: Some("DEEPSEEK_API_KEY"),
        wire_api: WireApi::Messages,
        auth: AuthScheme::XApiKey,
        default_model: "deepseek-v4-pro",
        models: &["deepseek-v4-pro", "deepseek-flash"],
        local: false,
    },
    // Z.ai developer docs, Claude Code with the GLM Coding Plan.
    ProviderInfo {
        id: "zai-anthropic",
        name: "Z.ai (GLM, Anthropic API)",
        base_url: "https://api.z.ai/api/anthropic/v1",
        env_key: Some("ZAI_API_KEY"),
        wire_api: WireApi::Messages,
        auth: AuthScheme::Bearer,
        default_model: "glm-4.7",
        models: &["glm-4.7", "glm-4.6"],
        local: false,
    },
    // MiniMax platform docs, "Anthropic API compatible" (text).
    ProviderInfo {
        id: "minimax",
        name: "MiniMax (Anthropic API)",
        base_url: "https://api.minimax.io/anthropic/v1",
        env_key: Some("MINIMAX_API_KEY"),
        wire_api: WireApi::Messages,
        auth: AuthScheme::XApiKey,
        default_model: "MiniMax-M3",
        models: &["MiniMax-M3", "MiniMax-M2.7"],
        local: false,
    },
    // Alibaba Cloud Model Studio docs, "Claude Code" (international edition).
    ProviderInfo {
        id: "qwen-anthropic",
        name: "Qwen (DashScope, Anthropic API)",
        base_url: "https://dashscope-intl.aliyuncs.com/apps/anthropic/v1",
        env_key: Some("DASHSCOPE_API_KEY"),
        wire_api: WireApi::Messages,
        auth: AuthScheme::XApiKey,
        default_model: "qwen3-coder-plus",
        models: &["qwen3-coder-plus", "qwen3-max"],
        local: false,
    },
    ProviderInfo {
        id: "ollama",
        name: "Ollama (local)",
        base_url: "http://localhost:11434/v1",
        env_key: None,
        wire_api: WireApi::Chat,
        auth: AuthScheme::Bearer,
        default_model: "qwen3-coder:30b",
        models: &[],
        local: true,
    },
    ProviderInfo {
        id: "llamacpp",
        name: "llama.cpp server (local)",
        base_url: "http://localhost:8080/v1",
        env_key: None,
        wire_api: WireApi::Chat,
        auth: AuthScheme::Bearer,
        default_model: "default",
        models: &[],
        local: true,
    },
];

/// The built-in provider with this id, if there is one.
pub fn provider(id: &str) -> Option<&'static ProviderInfo> {
    PROVIDERS.iter().find(|p| p.id == id)
}

/// The provider a session uses when config names none.
pub fn default_provider() -> &'static ProviderInfo {
    provider(DEFAULT_PROVIDER).expect("the default provider is in the catalog")
}

/// The context window a face assumes for a model the catalog does not know.
pub const FALLBACK_CONTEXT_WINDOW: u64 = 131_072;

/// Facts about a model family that change how we talk to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// The model's context window in tokens; None when the catalog does not know it (config's
    /// `model_context_window` wins over it).
    pub context_window: Option<u64>,
    /// USD per 1M tokens: input (uncached), cached input, output.
    pub price: Option<(f64, f64, f64)>,
    /// Kimi rules: fixed sampling, `thinking`, reasoning echoed on tool-call messages.
    pub kimi: bool,
    /// The provider rejects assistant tool-call messages without `reasoning_content`.
    pub echo_reasoning: bool,
    /// A Claude model (routing; Anthropic's thinking rules).
    pub claude: bool,
    /// The model takes images (tools that read images are offered only then).
    pub images: bool,
    /// On the Messages wire the model takes Anthropic's `thinking` budget. Kimi K3 always
    /// reasons and takes none; Qwen's coder models do not think.
    pub thinking_budget: bool,
}

/// What the catalog knows about `model`, from its name alone (after any `vendor/`, any case).
pub fn model_info(model: &str) -> ModelInfo {
    let m = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let kimi = m.starts_with("kimi") || m == "k3" || m.starts_with("k3-") || m.starts_with("k2p");
    let k3 = m.contains("k3");
    let deepseek = m.starts_with("deepseek");
    let claude = m.contains("claude");
    ModelInfo {
        context_window: if k3 {
            Some(if m.ends_with("256k") {
                262_144
            } else {
                1_048_576
            })
        } else if kimi {
            Some(262_144)
        } else if deepseek {
            Some(131_072)
        } else if claude {
            Some(200_000)
        } else {
            None
        },
        price: if k3 { Some((3.0, 0.30, 15.0)) } else { None },
        kimi,
        echo_reasoning: kimi || deepseek || m.starts_with("glm") || m.starts_with("qwen"),
        claude,
        images: takes_images(&m, k3, claude),
        thinking_budget: !kimi && !m.starts_with("qwen3-coder"),
    }
}

/// Models known to take images, by name: Kimi K3, Claude, OpenAI's GPT-4o, GPT-4.1, GPT-5 and
/// o-series, Gemini, and the vision variants of Qwen and GLM.
fn takes_images(m: &str, k3: bool, claude: bool) -> bool {
    k3 || claude
        || m.starts_with("gpt-4o")
        || m.starts_with("gpt-4.1")
        || m.starts_with("gpt-5")
        || m.starts_with("o3")
        || m.starts_with("o4")
        || m.starts_with("gemini")
        || (m.starts_with("qwen") && m.contains("vl"))
        || (m.starts_with("glm") && m.contains('v'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k3_facts() {
        let k = model_info("kimi-k3");
        assert!(k.kimi && k.echo_reasoning);
        assert_eq!(k.context_window, Some(1_048_576));
        assert_eq!(
            model_info("moonshotai/kimi-k3").price,
            Some((3.0, 0.30, 15.0))
        );
        assert!(model_info("k3").kimi);
        assert!(k.images && model_info("claude-sonnet-4-6").images);
        assert!(!model_info("deepseek-chat").images && !model_info("mock-model").images);
        assert!(!model_info("gpt-5.4").kimi);
    }

    #[test]
    fn anthropic_compatible_endpoints() {
        for (id, url, key, auth) in [
            (
                "anthropic",
                "https://api.anthropic.com/v1",
                "ANTHROPIC_API_KEY",
                AuthScheme::XApiKey,
            ),
            (
                "kimi-anthropic",
                "https://api.moonshot.ai/anthropic/v1",
                "MOONSHOT_API_KEY",
                AuthScheme::Bearer,
            ),
            (
                "deepseek-anthropic",
                "https://api.deepseek.com/anthropic/v1",
                "DEEPSEEK_API_KEY",
                AuthScheme::XApiKey,
            ),
            (
                "zai-anthropic",
                "https://api.z.ai/api/anthropic/v1",
                "ZAI_API_KEY",
                AuthScheme::Bearer,
            ),
            (
                "minimax",
                "https://api.minimax.io/anthropic/v1",
                "MINIMAX_API_KEY",
                AuthScheme::XApiKey,
            ),
            (
                "qwen-anthropic",
                "https://dashscope-intl.aliyuncs.com/apps/anthropic/v1",
                "DASHSCOPE_API_KEY",
                AuthScheme::XApiKey,
            ),
        ] {
            let p = provider(id).unwrap();
            assert_eq!(
                (p.base_url, p.env_key, p.auth),
                (url, Some(key), auth),
                "{id}"
            );
            assert_eq!(p.wire_api, WireApi::Messages, "{id}");
            assert!(p.models.contains(&p.default_model), "{id}");
        }
        assert!(model_info("claude-sonnet-4-6").claude);
        assert!(model_info("claude-sonnet-4-6").thinking_budget);
        assert!(!model_info("qwen3-coder-plus").thinking_budget);
    }
}
