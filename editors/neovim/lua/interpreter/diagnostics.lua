-- `_interpreter/diagnostics`: the agent asks for the diagnostics of the files it edits,
-- before and after each edit, and gets what vim.diagnostic holds (the language servers'
-- own LSP diagnostics where Neovim kept them, so ranges stay in LSP's UTF-16 columns).
--
-- After the agent wrote a file that a language server watches, the answer waits for a
-- DiagnosticChanged on its buffer (the server re-checked it) or `chat.diagnostics_wait_ms`;
-- any other file is answered at once.
local M = {}

local uv = vim.uv or vim.loop

local ext = require("interpreter.extensions")
M.CAPABILITY = ext.ACP_DIAGNOSTICS_CAPABILITY
M.METHOD = ext.ACP_DIAGNOSTICS_METHOD

--- Quiet time after a change before answering (servers publish in bursts).
local QUIET_MS = 150

---@type table<string, boolean>  Files the agent wrote whose diagnostics have not changed since.
local stale = {}
---@type (fun())[]
local waiters = {}
local group

local function normalize(path)
  return vim.fs.normalize(uv.fs_realpath(path) or path)
end

local function ensure_autocmd()
  if group then
    return
  end
  group = vim.api.nvim_create_augroup("interpreter.diagnostics", { clear = true })
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(ev)
      local name = vim.api.nvim_buf_get_name(ev.buf)
      if name ~= "" then
        stale[normalize(name)] = nil
      end
      for _, w in ipairs(vim.list_slice(waiters)) do
        w()
      end
    end,
  })
end

--- The agent wrote `path`: its next answer waits for the language servers.
function M.wrote(path)
  ensure_autocmd()
  stale[normalize(path)] = true
end

--- One vim.diagnostic entry in LSP form.
local function lsp_form(d)
  local l = d.user_data and d.user_data.lsp
  if type(l) == "table" and type(l.range) == "table" then
    return { range = l.range, severity = l.severity or d.severity or 1, message = l.message or d.message, source = l.source or d.source, code = l.code or d.code }
  end
  return {
    range = {
      start = { line = d.lnum, character = d.col },
      ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
    },
    severity = d.severity or 1,
    message = d.message,
    source = d.source,
    code = d.code,
  }
end

local function of_buffer(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, lsp_form(d))
  end
  return out
end

local function collect(paths)
  local out = {}
  if #paths == 0 then
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local name = vim.api.nvim_buf_get_name(b)
      local list = vim.api.nvim_buf_is_loaded(b) and name ~= "" and of_buffer(b) or {}
      if #list > 0 then
        out[normalize(name)] = list
      end
    end
    return out
  end
  local fs = require("interpreter.fs")
  for _, p in ipairs(paths) do
    local b = fs.find_buffer(p)
    local list = b and of_buffer(b) or {}
    -- An empty list must still encode as a JSON array.
    out[p] = #list > 0 and list or setmetatable({}, { __jsontype = "array" })
  end
  return out
end

--- Waits (without blocking the loop) until none of `paths` is stale, then a quiet spell, or
--- `wait_ms`; then calls `done`.
local function settle(paths, wait_ms, done)
  local finished, quiet = false, nil
  local self
  local function finish()
    if finished then
      return
    end
    finished = true
    for i, w in ipairs(waiters) do
      if w == self then
        table.remove(waiters, i)
        break
      end
    end
    for _, p in ipairs(paths) do
      stale[p] = nil
    end
    done()
  end
  self = function()
    for _, p in ipairs(paths) do
      if stale[p] then
        return
      end
    end
    if quiet then
      quiet:stop()
    end
    quiet = vim.defer_fn(finish, QUIET_MS)
  end
  table.insert(waiters, self)
  vim.defer_fn(finish, wait_ms)
end

--- Answers a `_interpreter/diagnostics` request `{sessionId, paths}`.
---@param params table
---@param reply fun(result: any, err: table|nil)
---@param wait_ms integer
function M.answer(params, reply, wait_ms)
  ensure_autocmd()
  local paths = {}
  for _, p in ipairs(type(params.paths) == "table" and params.paths or {}) do
    if type(p) == "string" then
      table.insert(paths, p)
    end
  end
  local waiting = {}
  local fs = require("interpreter.fs")
  for _, p in ipairs(paths) do
    local b = fs.find_buffer(p)
    -- Only a buffer some language server watches will get new diagnostics.
    if stale[normalize(p)] and b and #vim.lsp.get_clients({ bufnr = b }) > 0 then
      table.insert(waiting, normalize(p))
    end
  end
  local function send()
    local found = collect(paths)
    reply({ diagnostics = next(found) == nil and vim.empty_dict() or found })
  end
  if #waiting == 0 then
    send()
  else
    settle(waiting, wait_ms, send)
  end
end

return M
