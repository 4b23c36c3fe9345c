-- Options for the plugin: defaults, validation, and the command lines they produce.
local M = {}

---@class interpreter.ChatKeymaps
---@field prompt string|false   Ask for a prompt (vim.ui.input) and send it.
---@field cancel string|false   Cancel the running turn (session/cancel).
---@field close string|false    Close the chat window (the agent keeps running).

---@class interpreter.ChatOptions
---@field position "right"|"left"|"below"|"above"|"tab"|"current"  Where `:Interpreter chat` opens.
---@field size number|nil        Width (right/left) or height (below/above) of the split.
---@field fs boolean             Advertise fs/read_text_file and fs/write_text_file.
---@field diagnostics boolean    Offer `_interpreter/diagnostics` (vim.diagnostic of edited files).
---@field diagnostics_wait_ms integer  How long an answer waits for servers after an agent write.
---@field show_thoughts boolean  Show the model's reasoning chunks.
---@field notify boolean         vim.notify a turn's end or a waiting approval while away.
---@field mode string|nil        ACP session mode to switch to after session/new.
---@field trace string|nil       A file that gets every ACP frame (for troubleshooting).
---@field keymaps interpreter.ChatKeymaps

---@class interpreter.Options
---@field cmd string             Path or name of the `interpreter` binary. The default, "interpreter",
---                              means the one `:Interpreter install` put in stdpath("data"), else PATH.
---@field args string[]          Extra arguments after the subcommand, for both `lsp` and `acp`.
---@field env table<string,string>|nil  Extra environment for both servers.
---@field provider string|nil
---@field model string|nil
---@field harness string|nil
---@field init_options table|nil Extra LSP initializationOptions (baseUrl, wireApi, config, …).
---@field root_markers string[]
---@field filetypes string[]|nil nil attaches the LSP to every file buffer.
---@field lsp boolean            Register the language server.
---@field notify_progress boolean  vim.notify when a code action finishes.
---@field chat interpreter.ChatOptions

---@type interpreter.Options
M.defaults = {
  cmd = "interpreter",
  args = {},
  env = nil,
  provider = nil,
  model = nil,
  harness = nil,
  init_options = nil,
  root_markers = { ".git" },
  filetypes = nil,
  lsp = true,
  notify_progress = true,
  chat = {
    position = "right",
    size = nil,
    fs = true,
    -- Offer the agent vim.diagnostic's diagnostics of the files it edits.
    diagnostics = true,
    diagnostics_wait_ms = 2000,
    show_thoughts = false,
    -- vim.notify when a turn ends or an approval waits while Neovim is unfocused or the chat
    -- is in no window.
    notify = true,
    mode = nil,
    trace = nil,
    keymaps = { prompt = "<CR>", cancel = "<C-c>", close = "q" },
  },
}

---@type interpreter.Options
M.options = vim.deepcopy(M.defaults)

local function check(name, value, types, optional)
  local ok = optional and value == nil
  for _, t in ipairs(types) do
    ok = ok or type(value) == t
  end
  if not ok then
    error(("interpreter.setup: option `%s` must be %s, got %s"):format(
      name,
      table.concat(types, " or ") .. (optional and " (or nil)" or ""),
      vim.inspect(value)
    ), 3)
  end
end

--- Merges user options over the defaults and validates them. Errors name the bad option.
---@param opts table|nil
---@return interpreter.Options
function M.set(opts)
  opts = opts or {}
  check("opts", opts, { "table" })
  local o = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace, not merge (tbl_deep_extend merges list tables index by index).
  for _, k in ipairs({ "args", "root_markers", "filetypes" }) do
    if opts[k] ~= nil then
      o[k] = opts[k]
    end
  end
  check("cmd", o.cmd, { "string" })
  check("args", o.args, { "table" })
  check("env", o.env, { "table" }, true)
  check("provider", o.provider, { "string" }, true)
  check("model", o.model, { "string" }, true)
  check("harness", o.harness, { "string" }, true)
  check("init_options", o.init_options, { "table" }, true)
  check("root_markers", o.root_markers, { "table" })
  check("filetypes", o.filetypes, { "table" }, true)
  check("lsp", o.lsp, { "boolean" })
  check("chat", o.chat, { "table" })
  check("chat.fs", o.chat.fs, { "boolean" })
  check("chat.diagnostics", o.chat.diagnostics, { "boolean" })
  check("chat.notify", o.chat.notify, { "boolean" })
  check("chat.diagnostics_wait_ms", o.chat.diagnostics_wait_ms, { "number" })
  check("chat.mode", o.chat.mode, { "string" }, true)
  check("chat.trace", o.chat.trace, { "string" }, true)
  for _, a in ipairs(o.args) do
    check("args[]", a, { "string" })
  end
  M.options = o
  return o
end

--- The binary and where it was found: a `cmd` from setup() ("cmd"), the one
--- `:Interpreter install` put in the data folder ("installed"), or `interpreter` on PATH
--- ("path"). When none exists: the name as given and nil (errors later name it).
---@return string, "cmd"|"installed"|"path"|nil
function M.find_binary()
  local cmd = vim.fn.expand(M.options.cmd)
  if cmd ~= M.defaults.cmd then
    local exe = vim.fn.exepath(cmd)
    return exe ~= "" and exe or cmd, exe ~= "" and "cmd" or nil
  end
  local installed = require("interpreter.install").binary()
  if vim.fn.executable(installed) == 1 then
    return installed, "installed"
  end
  local exe = vim.fn.exepath(cmd)
  if exe ~= "" then
    return exe, "path"
  end
  return cmd, nil
end

--- The binary as an absolute path when it can be found, else as given.
---@return string
function M.binary()
  return (M.find_binary())
end

--- `interpreter lsp …args`
---@return string[]
function M.lsp_cmd()
  return vim.list_extend({ M.binary(), "lsp" }, vim.deepcopy(M.options.args))
end

--- A TOML basic string literal. (vim.json.encode would escape "/" as "\/", which TOML rejects.)
---@param s string
---@return string
function M.toml_string(s)
  local escaped = s:gsub('[\\"%c]', function(c)
    local named = { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n", ["\t"] = "\\t" }
    return named[c] or ("\\u%04X"):format(c:byte())
  end)
  return '"' .. escaped .. '"'
end

--- `interpreter acp …args`, with provider/model/harness as `-c` overrides (ACP has no
--- initializationOptions).
---@return string[]
function M.acp_cmd()
  local cmd = { M.binary(), "acp" }
  local o = M.options
  if o.provider then
    vim.list_extend(cmd, { "-c", "model_provider=" .. M.toml_string(o.provider) })
  end
  if o.model then
    vim.list_extend(cmd, { "-c", "model=" .. M.toml_string(o.model) })
  end
  if o.harness then
    vim.list_extend(cmd, { "-c", "harness=" .. M.toml_string(o.harness) })
  end
  return vim.list_extend(cmd, vim.deepcopy(o.args))
end

--- LSP initializationOptions: provider/model/harness, then `init_options` on top.
---@return table
function M.init_options()
  local o = M.options
  local init = vim.tbl_extend("force", {
    provider = o.provider,
    model = o.model,
    harness = o.harness,
  }, o.init_options or {})
  if vim.tbl_isempty(init) then
    return vim.empty_dict()
  end
  return init
end

--- The environment for child processes (nil keeps Neovim's).
---@return table<string,string>|nil
function M.env()
  return M.options.env
end

return M
