// The extension's settings and what they turn into: the server's command line, its
// environment and its initializationOptions. Pure functions (no vscode import), so they are
// unit-tested directly.

/** The `interpreter.*` settings. Empty strings mean "not set". */
export interface Settings {
  path: string;
  provider: string;
  model: string;
  harness: string;
  baseUrl: string;
  wireApi: string;
  extraArgs: string[];
}

/** Settings whose change restarts the server (`interpreter.trace.server` applies live). */
export const RESTART_KEYS = [
  "path",
  "provider",
  "model",
  "harness",
  "baseUrl",
  "wireApi",
  "extraArgs",
] as const;

/**
 * The API key variable of each built-in provider (crates/core/src/model/catalog.rs), and the
 * model it uses when none is set (shown in the status bar).
 */
export const PROVIDERS: Record<string, { envKey: string | null; defaultModel: string }> = {
  kimi: { envKey: "MOONSHOT_API_KEY", defaultModel: "kimi-k3" },
  "kimi-code": { envKey: "KIMI_API_KEY", defaultModel: "k3" },
  deepseek: { envKey: "DEEPSEEK_API_KEY", defaultModel: "deepseek-chat" },
  zai: { envKey: "ZAI_API_KEY", defaultModel: "glm-4.7" },
  qwen: { envKey: "DASHSCOPE_API_KEY", defaultModel: "qwen3-coder-plus" },
  openrouter: { envKey: "OPENROUTER_API_KEY", defaultModel: "moonshotai/kimi-k3" },
  openai: { envKey: "OPENAI_API_KEY", defaultModel: "gpt-5.4-mini" },
  anthropic: { envKey: "ANTHROPIC_API_KEY", defaultModel: "claude-sonnet-4-6" },
  "kimi-anthropic": { envKey: "MOONSHOT_API_KEY", defaultModel: "kimi-k3" },
  "deepseek-anthropic": { envKey: "DEEPSEEK_API_KEY", defaultModel: "deepseek-v4-pro" },
  "zai-anthropic": { envKey: "ZAI_API_KEY", defaultModel: "glm-4.7" },
  minimax: { envKey: "MINIMAX_API_KEY", defaultModel: "MiniMax-M3" },
  "qwen-anthropic": { envKey: "DASHSCOPE_API_KEY", defaultModel: "qwen3-coder-plus" },
  ollama: { envKey: null, defaultModel: "qwen3-coder:30b" },
  llamacpp: { envKey: null, defaultModel: "default" },
};

/** The server's default provider when neither the settings nor config.toml pick one. */
export const DEFAULT_PROVIDER = "kimi";

/**
 * The variable that carries a stored key for a provider that is not built in. The server is
 * told to read it through the `envKey` setting.
 */
export const CUSTOM_KEY_ENV = "INTERPRETER_API_KEY";

/** The SecretStorage key holding a provider's API key. */
export function secretName(provider: string): string {
  return `interpreter.apiKey.${provider}`;
}

/** Whether a provider id is one of the server's built-in providers. */
export function isBuiltIn(provider: string): boolean {
  return Object.prototype.hasOwnProperty.call(PROVIDERS, provider);
}

/** Reads the settings through `get(key)` (a `WorkspaceConfiguration` for `interpreter`). */
export function readSettings(get: (key: string) => unknown): Settings {
  const str = (key: string, fallback = ""): string => {
    const v = get(key);
    return typeof v === "string" ? v.trim() : fallback;
  };
  const extra = get("extraArgs");
  return {
    path: str("path"),
    provider: str("provider"),
    model: str("model"),
    harness: str("harness"),
    baseUrl: str("baseUrl"),
    wireApi: str("wireApi"),
    extraArgs: Array.isArray(extra) ? extra.filter((a): a is string => typeof a === "string") : [],
  };
}

/**
 * The server's initializationOptions: only keys `interpreter lsp` knows (docs/lsp.md), so it
 * has nothing to warn about. `customKey` says a stored key travels in CUSTOM_KEY_ENV.
 */
export function initializationOptions(s: Settings, customKey: boolean): Record<string, string> {
  const opts: Record<string, string> = {};
  if (s.provider) opts.provider = s.provider;
  if (s.model) opts.model = s.model;
  if (s.harness) opts.harness = s.harness;
  if (s.baseUrl) opts.baseUrl = s.baseUrl;
  if (s.wireApi) opts.wireApi = s.wireApi;
  if (customKey) opts.envKey = CUSTOM_KEY_ENV;
  return opts;
}

/**
 * The variables that carry stored keys: each built-in provider's own variable, and
 * CUSTOM_KEY_ENV for the configured provider when it is not built in. Passing every stored
 * key lets config.toml pick the provider without the extension knowing which.
 */
export function keyEnvironment(s: Settings, keys: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [provider, key] of Object.entries(keys)) {
    if (!key) continue;
    const known = PROVIDERS[provider];
    if (known?.envKey) {
      env[known.envKey] = key;
    } else if (!known && provider === s.provider) {
      env[CUSTOM_KEY_ENV] = key;
    }
  }
  return env;
}

/** How to start the server, independent of vscode-languageclient's types. */
export interface ServerSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  initializationOptions: Record<string, string>;
}

function environment(baseEnv: NodeJS.ProcessEnv, keyEnv: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) {
    if (v !== undefined) env[k] = v;
  }
  return Object.assign(env, keyEnv);
}

/** `interpreter lsp`; `command` is the binary resolved by binary.ts. */
export function serverSpec(
  s: Settings,
  keys: Record<string, string | undefined>,
  baseEnv: NodeJS.ProcessEnv,
  workspaceFolder: string | undefined,
  command: string,
): ServerSpec {
  const keyEnv = keyEnvironment(s, keys);
  const env = environment(baseEnv, keyEnv);
  return {
    command,
    // vscode-languageclient appends `--stdio` (TransportKind.stdio).
    args: ["lsp", ...s.extraArgs],
    env,
    cwd: workspaceFolder,
    initializationOptions: initializationOptions(s, CUSTOM_KEY_ENV in keyEnv),
  };
}

/** A TOML string literal (what `-c key=value` parses). */
function tomlString(v: string): string {
  return JSON.stringify(v);
}

/**
 * The `-c` overrides for `interpreter acp` that match what initializationOptions tell
 * `interpreter lsp` (crates/lsp/src/settings.rs does the same for the LSP).
 */
export function acpConfigArgs(s: Settings, customKey: boolean): string[] {
  const c: string[] = [];
  if (s.provider) c.push(`model_provider=${tomlString(s.provider)}`);
  if (s.model) c.push(`model=${tomlString(s.model)}`);
  if (s.harness) c.push(`harness=${tomlString(s.harness)}`);
  const provider = s.provider || DEFAULT_PROVIDER;
  const table = `model_providers.${tomlString(provider)}`;
  if (s.baseUrl) c.push(`${table}.base_url=${tomlString(s.baseUrl)}`);
  if (s.wireApi) c.push(`${table}.wire_api=${tomlString(s.wireApi)}`);
  if (customKey) c.push(`${table}.env_key=${tomlString(CUSTOM_KEY_ENV)}`);
  return c.flatMap((kv) => ["-c", kv]);
}

/** How to start `interpreter acp` for the chat panel. */
export interface AcpSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export function acpSpec(
  s: Settings,
  keys: Record<string, string | undefined>,
  baseEnv: NodeJS.ProcessEnv,
  workspaceFolder: string | undefined,
  command: string,
): AcpSpec {
  const keyEnv = keyEnvironment(s, keys);
  return {
    command,
    args: ["acp", ...s.extraArgs, ...acpConfigArgs(s, CUSTOM_KEY_ENV in keyEnv)],
    env: environment(baseEnv, keyEnv),
    cwd: workspaceFolder,
  };
}

/** The provider an API key is for, from an `auth_required` message ("provider `kimi`"). */
export function providerFromAuthError(message: string): string | undefined {
  return /provider `([^`]+)`/.exec(message)?.[1];
}

/** What the status bar calls the model. */
export function modelLabel(s: Settings): string {
  if (s.model) return s.model;
  if (s.provider) return PROVIDERS[s.provider]?.defaultModel ?? s.provider;
  return PROVIDERS[DEFAULT_PROVIDER].defaultModel;
}
