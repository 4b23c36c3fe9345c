-- :checkhealth interpreter
local M = {}

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

  local bin = config.binary()
  if vim.fn.executable(bin) == 1 then
    local ok, out = pcall(function()
      return vim.system({ bin, "--version" }, { text = true }):wait(5000)
    end)
    if ok and out.code == 0 then
      health.ok(("binary: %s (%s)"):format(bin, vim.trim(out.stdout or "")))
    else
      health.warn(("binary %s did not answer --version: %s"):format(bin, ok and (out.stderr or "") or tostring(out)))
    end
  else
    health.error(("binary `%s` not found"):format(config.options.cmd), {
      "Install it (cargo install --path server) or set setup({ cmd = '/path/to/interpreter' })",
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
