-- interpreter.nvim: Neovim client for the `interpreter` coding agent.
--
--   require("interpreter").setup({ model = "kimi-k3" })
--
-- registers `interpreter lsp` (AI code actions, `:Interpreter fix|explain|ask`) and provides
-- a native ACP chat over `interpreter acp` (`:Interpreter chat`). See :help interpreter.
local config = require("interpreter.config")

local M = {}

M.version = "0.1.0"

--- Configures the plugin and registers the language server (unless `lsp = false`).
---@param opts interpreter.Options|nil
function M.setup(opts)
  config.set(opts)
  require("interpreter.commands").create()
  if config.options.lsp then
    require("interpreter.lsp").register()
  end
end

--- Runs a code action command on lines `line1..line2` (default: the cursor line).
---@param action "fix"|"explain"|"ask"|"refactor"|"tests"
---@param opts {bufnr?: integer, line1?: integer, line2?: integer, prompt?: string}|nil
function M.action(action, opts)
  require("interpreter.lsp").run(action, opts)
end

function M.fix(opts)
  M.action("fix", opts)
end

function M.explain(opts)
  M.action("explain", opts)
end

function M.ask(prompt, opts)
  M.action("ask", vim.tbl_extend("force", opts or {}, { prompt = prompt }))
end

--- Opens the chat; with a prompt, sends it.
function M.chat(prompt, opts)
  return require("interpreter.chat").open(vim.tbl_extend("force", opts or {}, { prompt = prompt }))
end

--- Installs the binary into the plugin's data folder (see :help interpreter-install).
--- lazy.nvim: `build = function() require("interpreter").install({ wait = true }) end`.
---@param opts interpreter.InstallOptions|nil
function M.install(opts)
  return require("interpreter.install").install(opts)
end

--- Cancels the chat's running turn and every running code action.
function M.cancel()
  local chat = require("interpreter.chat").cancel()
  local actions = require("interpreter.lsp").cancel_all()
  return chat or actions > 0
end

return M
