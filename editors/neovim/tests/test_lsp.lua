-- The LSP face from the plugin: setup() registers `interpreter lsp` (vim.lsp.config +
-- vim.lsp.enable on 0.11), a Python file opens, `:Interpreter fix` on a line with a
-- diagnostic edits the buffer (unsaved), and `:Interpreter explain` / `:Interpreter ask`
-- show the agent's answers in a split.
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, MOCK_URL, WORKSPACE, AGENT_HOME.
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  local messages = H.capture_notify()
  local ws = H.env("WORKSPACE")
  require("interpreter").setup({
    cmd = H.env("INTERPRETER_BIN"),
    provider = "mock",
    model = "mock-model",
    args = { "-c", ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")) },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME"), INTERPRETER_LOG = "info" },
  })
  H.check(vim.lsp.config.interpreter ~= nil, "vim.lsp.config has an `interpreter` entry")
  H.check(vim.lsp.is_enabled("interpreter"), "vim.lsp.enable('interpreter') was called")

  vim.cmd.edit(vim.fn.fnameescape(ws .. "/calc.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  local code_win = vim.api.nvim_get_current_win()
  H.wait(15000, function()
    local c = require("interpreter.lsp").client(bufnr)
    return c ~= nil and c.initialized
  end, "the interpreter client to attach and initialize")
  local client = require("interpreter.lsp").client(bufnr)
  H.check(client.root_dir == ws, "the client's root is the workspace (.git marker): " .. tostring(client.root_dir))
  H.check(client.config.init_options.provider == "mock", "initializationOptions carry the provider")
  H.check(client.config.init_options.model == "mock-model", "initializationOptions carry the model")

  -- A diagnostic on line 2 for :Interpreter fix to send.
  local ns = vim.api.nvim_create_namespace("interpreter-test")
  vim.diagnostic.set(ns, bufnr, {
    { lnum = 1, col = 11, end_lnum = 1, end_col = 16, severity = vim.diagnostic.severity.ERROR, source = "test", message = "add subtracts" },
  })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.cmd("Interpreter fix")
  H.wait(30000, function()
    return H.buffer_lines(bufnr)[2] == "    return a + b"
  end, "the fix to reach the buffer")
  H.check(true, "buffer line 2 is now `    return a + b`")
  H.check(vim.bo[bufnr].modified, "the buffer is modified and unsaved")
  H.check(H.contains(H.read_file(ws .. "/calc.py"), "return a - b"), "the disk still has the old text")
  H.wait(10000, function()
    for _, m in ipairs(messages) do
      if H.contains(m, "Fix: edited calc.py") then
        return true
      end
    end
    return false
  end, "the progress end notification")
  H.check(true, "notified `interpreter: Fix: edited calc.py`")

  -- Explain: the answer document opens in a split; the code window stays.
  vim.cmd("Interpreter explain")
  local function answer_buffer(kind, needle)
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local name = vim.api.nvim_buf_get_name(b)
      if name:find("/interpreter%-lsp[^/]*/" .. kind .. "%-") and vim.api.nvim_buf_is_loaded(b) then
        local text = table.concat(H.buffer_lines(b), "\n")
        if H.contains(text, needle) then
          return b
        end
      end
    end
  end
  H.wait(30000, function()
    return answer_buffer("explain", "sum of its two arguments") ~= nil
  end, "the explain answer document")
  H.check(true, "the explain answer opened in a buffer")
  H.check(#vim.api.nvim_tabpage_list_wins(0) == 2, "it opened in a split next to the code")
  H.check(#vim.lsp.get_clients({ name = "interpreter" }) == 1, "no second client for the answer document")

  vim.api.nvim_set_current_win(code_win)
  vim.cmd("Interpreter ask how do I call it?")
  H.wait(30000, function()
    return answer_buffer("ask", "add(1, 2)") ~= nil
  end, "the ask answer document")
  H.check(true, "the ask answer opened in a buffer")

  client:stop()
  vim.wait(3000, function()
    return #vim.lsp.get_clients({ name = "interpreter" }) == 0
  end, 20)
  H.out("RESULT: ok")
end)
