-- Headless Neovim (0.11) as a real LSP client of `interpreter lsp`:
-- open a file, edit it without saving, ask for code actions with a diagnostic, run
-- "Fix with interpreter", and wait until Neovim has applied the agent's edit to the buffer.
--
-- Run by tests/e2e/lsp_nvim.rs as:  nvim --headless --clean -l lsp_fix.lua
-- Environment: LSP_BIN, LSP_FILE, LSP_ROOT, LSP_HOME, MOCK_URL.
-- Prints `key: value` lines on stdout; exits non-zero (cquit) on any failure.

local function out(s)
  io.stdout:write(s .. "\n")
  io.stdout:flush()
end

local function fail(msg)
  out("FAIL: " .. msg)
  vim.cmd("cquit 1")
end

local function env(name)
  local v = os.getenv(name)
  if not v or v == "" then
    fail("missing environment variable " .. name)
  end
  return v
end

local bin, file, root, home, url =
  env("LSP_BIN"), env("LSP_FILE"), env("LSP_ROOT"), env("LSP_HOME"), env("MOCK_URL")

-- Record progress and messages from the server.
local progress = {}
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(ev)
    local v = ev.data.params.value
    table.insert(progress, v.kind .. ":" .. (v.message or v.title or ""))
  end,
})
local messages = {}
vim.lsp.handlers["window/showMessage"] = function(_, params)
  table.insert(messages, params.message)
end

vim.cmd.edit(vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start({
  name = "interpreter",
  cmd = { bin, "lsp", "--stdio" },
  cmd_env = { OPENINTERPRETER_HOME = home, INTERPRETER_LOG = "info" },
  root_dir = root,
  get_language_id = function()
    return "python"
  end,
  init_options = { provider = "mock", model = "mock-model", baseUrl = url, wireApi = "chat" },
}, { bufnr = bufnr })
if not client_id then
  fail("vim.lsp.start returned nil")
end
local ready = vim.wait(15000, function()
  local c = vim.lsp.get_client_by_id(client_id)
  return c ~= nil and c.initialized
end, 20)
if not ready then
  fail("the server did not initialize")
end
local client = assert(vim.lsp.get_client_by_id(client_id))
out("initialized: true")
out("offset_encoding: " .. client.offset_encoding)

-- An unsaved edit: a new first line. The disk still has the old text.
vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { "# unsaved note" })
out("modified_before: " .. tostring(vim.bo[bufnr].modified))

local diag_range = { start = { line = 2, character = 11 }, ["end"] = { line = 2, character = 16 } }
local res, err = client:request_sync("textDocument/codeAction", {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  range = diag_range,
  context = { diagnostics = { { range = diag_range, severity = 1, source = "test", message = "add subtracts" } } },
}, 10000, bufnr)
if not res then
  fail("codeAction: " .. tostring(err))
end
if res.err then
  fail("codeAction error: " .. vim.inspect(res.err))
end
local fix
for _, a in ipairs(res.result or {}) do
  out("action: " .. a.title .. " [" .. (a.kind or "?") .. "]")
  if vim.startswith(a.title, "Fix with interpreter") then
    fix = a
  end
end
if not fix or not fix.command then
  fail("no 'Fix with interpreter' action with a command")
end

local exec = client:request_sync("workspace/executeCommand", fix.command, 10000, bufnr)
if not exec or exec.err then
  fail("executeCommand: " .. vim.inspect(exec))
end

local function buffer_text()
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end
local applied = vim.wait(30000, function()
  return buffer_text():find("return a + b", 1, true) ~= nil
end, 20)
-- Let the progress end arrive.
vim.wait(5000, function()
  for _, p in ipairs(progress) do
    if p:sub(1, 4) == "end:" then
      return true
    end
  end
  return false
end, 20)
for _, p in ipairs(progress) do
  out("progress: " .. p)
end
for _, m in ipairs(messages) do
  out("message: " .. m)
end
for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
  out("buffer " .. i .. ": " .. line)
end
if not applied then
  fail("the buffer never got the agent's edit")
end
out("modified_after: " .. tostring(vim.bo[bufnr].modified))
out("RESULT: ok")
client:stop()
vim.wait(2000, function()
  return vim.lsp.get_client_by_id(client_id) == nil
end, 20)
vim.cmd("qa!")
