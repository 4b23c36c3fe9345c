-- :checkhealth interpreter
local M = {}

-- The key variable of each built-in provider (crates/core/src/model/catalog.rs; a test keeps the
-- two in step). false: a local server, no key.
M.provider_keys = {
  kimi = "MOONSHOT_API_KEY",
  ["kimi-code"] = "KIMI_API_KEY",
  deepseek = "DEEPSEEK_API_KEY",
  zai = "ZAI_API_KEY",
  qwen = "DASHSCOPE_API_KEY",
  openrouter = "OPENROUTER_API_KEY",
  openai = "OPENAI_API_KEY",
  anthropic = "ANTHROPIC_API_KEY",
  ["kimi-anthropic"] = "MOONSHOT_API_KEY",
  ["deepseek-anthropic"] = "DEEPSEEK_API_KEY",
  ["zai-anthropic"] = "ZAI_API_KEY",
  minimax = "MINIMAX_API_KEY",
  ["qwen-anthropic"] = "DASHSCOPE_API_KEY",
  ollama = false,
  llamacpp = false,
}

--- The agent's config.toml, as the binary finds it.
function M.config_path(env)
  env = env or {}
  local home = env.OPENINTERPRETER_HOME or vim.env.OPENINTERPRETER_HOME or env.CODEX_HOME or vim.env.CODEX_HOME
  if not home or home == "" then
    home = vim.fs.joinpath(vim.uv.os_homedir() or "~", ".openinterpreter")
  end
  return vim.fs.joinpath(home, "config.toml")
end

--- The top-level keys and [model_providers.<id>] tables of a config.toml: just enough TOML
--- (string values on `key = "value"` lines) to see which provider and key are configured.
function M.scan_config(text)
  local top, providers, section = {}, {}, nil
  for line in vim.gsplit(text or "", "\n", { plain = true }) do
    line = line:gsub("^%s+", "")
    local header = line:match("^%[([^%]]+)%]")
    if header then
      section = header:match("^model_providers%.\"?([%w_-]+)\"?$") or false
      if section then
        providers[section] = providers[section] or {}
      end
    else
      local k, v = line:match('^([%w_-]+)%s*=%s*"([^"]*)"')
      if k then
        if section == nil then
          top[k] = v
        elseif section then
          providers[section][k] = v
        end
      end
    end
  end
  return { top = top, providers = providers }
end

--- Whether the configured provider has a key, and where it comes from. Never the key itself.
---@return {provider: string, ok: boolean, none_needed?: boolean, var?: string, where: string}
function M.key_status()
  local config = require("interpreter.config")
  local env = config.options.env or {}
  local path = M.config_path(env)
  local f = io.open(path, "r")
  local text = f and f:read("*a") or ""
  if f then
    f:close()
  end
  local toml = M.scan_config(text)
  local provider = config.options.provider or env.OPENINTERPRETER_PROVIDER or vim.env.OPENINTERPRETER_PROVIDER or toml.top.model_provider or "kimi"
  local table_ = toml.providers[provider] or {}
  if table_.api_key and table_.api_key ~= "" then
    return { provider = provider, ok = true, where = "api_key in " .. path }
  end
  local var = table_.env_key or M.provider_keys[provider]
  if var == false then
    return { provider = provider, ok = false, none_needed = true, where = "" }
  end
  if not var then
    return { provider = provider, ok = false, where = ("model_providers.%s in %s names no env_key or api_key"):format(provider, path) }
  end
  if env[var] and env[var] ~= "" then
    return { provider = provider, ok = true, var = var, where = var .. " from setup({ env })" }
  end
  if vim.env[var] and vim.env[var] ~= "" then
    return { provider = provider, ok = true, var = var, where = var .. " from the environment" }
  end
  return { provider = provider, ok = false, var = var, where = var .. " is not set and " .. path .. " stores no api_key" }
end

function M.check()
  local health = vim.health
  local config = require("interpreter.config")
  health.start("interpreter.nvim")

  local v = vim.version()
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok(("Neovim %s: vim.lsp.config/vim.lsp.enable"):format(tostring(v)))
  elseif vim.fn.has("nvim-0.10") == 1 then
    health.ok(("Neovim %s: vim.lsp.start fallback"):format(tostring(v)))
  else
    health.error("Neovim 0.10 or newer is needed (vim.system)")
  end

  local bin, source = config.find_binary()
  local from = ({
    cmd = "setup({ cmd })",
    installed = ":Interpreter install",
    path = "PATH",
  })[source or ""]
  if source then
    local ok, out = pcall(function()
      return vim.system({ bin, "--version" }, { text = true }):wait(5000)
    end)
    if ok and out.code == 0 then
      health.ok(("binary: %s (%s), from %s"):format(bin, vim.trim(out.stdout or ""), from))
    else
      health.error(("binary %s (from %s) did not answer --version: %s"):format(bin, from, ok and vim.trim(out.stderr or "") or tostring(out)))
    end
  else
    health.error(("binary `%s` not found"):format(config.options.cmd), {
      ":Interpreter install (a release build into " .. require("interpreter.install").binary() .. ")",
      "or put `interpreter` on PATH, or setup({ cmd = '/path/to/interpreter' })",
    })
  end

  local key = M.key_status()
  if key.ok then
    health.ok(("API key for provider `%s`: %s"):format(key.provider, key.where))
  elseif key.none_needed then
    health.ok(("provider `%s` needs no API key"):format(key.provider))
  else
    health.warn(("no API key for provider `%s`: %s"):format(key.provider, key.where), {
      "set " .. (key.var or "the provider's key variable") .. " in the environment or in setup({ env = … })",
      "or run `interpreter login` (stores it in config.toml)",
    })
  end

  health.info("lsp command: " .. table.concat(config.lsp_cmd(), " "))
  health.info("acp command: " .. table.concat(config.acp_cmd(), " "))
  health.info("initializationOptions: " .. vim.json.encode(config.init_options()))

  local lsp = require("interpreter.lsp")
  if not config.options.lsp then
    health.info("language server disabled (lsp = false)")
  elseif not lsp.registered then
    health.warn("language server not registered: call require('interpreter').setup()")
  else
    local clients = vim.lsp.get_clients({ name = lsp.name })
    if #clients == 0 then
      health.info("no interpreter LSP client running yet (it starts when a file buffer opens)")
    end
    for _, c in ipairs(clients) do
      health.ok(("LSP client %d: root %s, encoding %s"):format(c.id, tostring(c.root_dir), c.offset_encoding))
    end
  end

  local st = require("interpreter.chat").state()
  if st and st.conn then
    health.ok(("chat agent running, session %s, mode %s"):format(tostring(st.session_id), tostring(st.mode)))
  else
    health.info("chat agent not running (:Interpreter chat starts it)")
  end
end

return M
