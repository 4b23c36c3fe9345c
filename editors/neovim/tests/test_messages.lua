-- A response of two messages (the Responses wire's commentary, then the answer) is two blocks
-- of the transcript, each ACP messageId its own, each delta added to its own block.
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, MOCK_URL, WORKSPACE, AGENT_HOME.
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  H.capture_notify()
  require("interpreter").setup({
    cmd = H.env("INTERPRETER_BIN"),
    lsp = false,
    provider = "mock",
    model = "mock-model",
    args = { "-c", ("model_providers.mock={base_url=%q, wire_api=\"responses\"}"):format(H.env("MOCK_URL")) },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
  })
  local chat = require("interpreter.chat")
  vim.cmd("Interpreter chat answer me")
  local st = chat.state()
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the turn to end")
  H.check(st.last_stop == "end_turn", "stopReason end_turn")
  local lines = vim.split(chat.text(), "\n")
  local first, second
  for i, l in ipairs(lines) do
    if l == "Looking first." then
      first = i
    elseif l == "All done." then
      second = i
    end
  end
  H.check(first ~= nil and second ~= nil and first < second, "two blocks, in order:\n" .. chat.text())
  H.check(not H.contains(chat.text(), "first.All"), "the messages are not run together")
  chat.stop()
  H.out("RESULT: ok")
end)
