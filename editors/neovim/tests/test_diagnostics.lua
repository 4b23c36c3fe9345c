-- Diagnostics after an edit: a real language server (tests/fixtures/diag_server.py, pygls)
-- publishes a warning calc.py always had and an error once it names `undefined_name`. The
-- agent asks for calc.py's diagnostics before and after its patch (`_interpreter/diagnostics`);
-- the answer after the patch waits for the server, and the new error, not the old warning,
-- reaches the model (run.sh checks the recorded request).
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, MOCK_URL, WORKSPACE, AGENT_HOME,
-- PYGLS_PYTHON (a Python with pygls).
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  H.capture_notify()
  local ws = H.env("WORKSPACE")
  local here = vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))
  require("interpreter").setup({
    cmd = H.env("INTERPRETER_BIN"),
    lsp = false,
    provider = "mock",
    model = "mock-model",
    args = {
      "-c",
      ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")),
      "-c",
      'sandbox_mode="danger-full-access"',
    },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
    chat = { trace = H.env("AGENT_HOME") .. "/acp-trace.ndjson" },
  })

  vim.cmd.edit(vim.fn.fnameescape(ws .. "/calc.py"))
  local buf = vim.api.nvim_get_current_buf()
  local client = vim.lsp.start({
    name = "diag-server",
    cmd = { H.env("PYGLS_PYTHON"), here .. "/fixtures/diag_server.py" },
    root_dir = ws,
  })
  H.check(client ~= nil, "the language server started")
  H.wait(15000, function()
    return #vim.diagnostic.get(buf) == 1
  end, "the server's first diagnostics")

  local chat = require("interpreter.chat")
  vim.cmd("Interpreter chat Add a line to calc.py")
  local st = chat.state()
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the turn to end")
  H.check(st.last_stop == "end_turn", "stopReason end_turn")
  H.check(table.concat(H.buffer_lines(buf), "\n") == "x = 1\ny = undefined_name", "the buffer holds the patch")
  local errors = vim.diagnostic.get(buf, { severity = vim.diagnostic.severity.ERROR })
  H.check(#errors == 1, "the server found the new error in the buffer")

  local trace = H.read_file(H.env("AGENT_HOME") .. "/acp-trace.ndjson") or ""
  local asked = select(2, trace:gsub('"method":"_interpreter/diagnostics"', ""))
  H.check(asked >= 2, ("the agent asked for diagnostics before and after the edit (%d requests)"):format(asked))
  H.check(H.contains(trace, '"interpreter/diagnostics":true'), "initialize offered diagnostics")
  chat.stop()
  H.out("RESULT: ok")
end)
