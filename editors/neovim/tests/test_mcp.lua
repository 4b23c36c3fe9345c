-- Issue 41 in Neovim: a config with an unset token variable and a missing command still runs
-- a turn; `/mcp` is among the completions, and its answer in the transcript says why each
-- server failed, next to a ready one with its tools.
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, MOCK_URL, WORKSPACE, AGENT_HOME.
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  H.capture_notify()
  -- mcp-echo is built next to the binary (cargo build -p interpreter-tests).
  local echo = vim.fs.dirname(H.env("INTERPRETER_BIN")) .. "/mcp-echo"
  local config = io.open(H.env("AGENT_HOME") .. "/config.toml", "w")
  config:write(("[mcp_servers.echo]\ncommand = %q\n\n"):format(echo)
    .. '[mcp_servers.github]\nurl = "https://tracker.example/mcp"\n'
    .. 'bearer_token_env_var = "INTERPRETER_TEST_UNSET_TOKEN"\n\n'
    .. '[mcp_servers.gone]\ncommand = "/nonexistent/mcp-server"\n')
  config:close()
  require("interpreter").setup({
    cmd = H.env("INTERPRETER_BIN"),
    lsp = false,
    provider = "mock",
    model = "mock-model",
    args = { "-c", ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")) },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
  })
  local chat = require("interpreter.chat")
  vim.cmd("Interpreter chat hi")
  local st = chat.state()
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the turn to end")
  H.check(st.last_stop == "end_turn", "stopReason end_turn")
  H.check(H.contains(chat.text(), "Ran anyway."), "the turn ran:\n" .. chat.text())
  H.check(vim.tbl_contains(chat.complete("/mc"), "/mcp"), "/mcp completes")
  st.last_stop = nil
  H.check(chat.send("/mcp"), "/mcp sent")
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the /mcp answer")
  local text = chat.text()
  H.check(H.contains(text, "MCP servers:"), "the list:\n" .. text)
  H.check(H.contains(text, "- `echo`: ready (auth: unsupported)"), "echo is ready:\n" .. text)
  H.check(H.contains(text, "- `say`: Repeats the text."), "echo's tool:\n" .. text)
  H.check(H.contains(text, "INTERPRETER_TEST_UNSET_TOKEN is not set (auth: bearer_token)"), "github's why:\n" .. text)
  H.check(H.contains(text, "- `gone`: failed: could not run `/nonexistent/mcp-server`"), "gone's why:\n" .. text)
  chat.stop()
  H.out("RESULT: ok")
end)
