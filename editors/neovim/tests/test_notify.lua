-- Notifications: a turn that ends while the chat is in a window of a focused Neovim says
-- nothing; while Neovim is unfocused (FocusLost) or the chat is in no window, vim.notify says
-- "interpreter: turn complete".
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, MOCK_URL, WORKSPACE, AGENT_HOME.
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  local messages = H.capture_notify()
  require("interpreter").setup({
    cmd = H.env("INTERPRETER_BIN"),
    lsp = false,
    provider = "mock",
    model = "mock-model",
    args = { "-c", ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")) },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
  })
  local chat = require("interpreter.chat")
  local function told()
    local n = 0
    for _, m in ipairs(messages) do
      if m == "interpreter: turn complete" then
        n = n + 1
      end
    end
    return n
  end
  local function turn(prompt, ends)
    vim.cmd("Interpreter chat " .. prompt)
    H.wait(30000, function()
      return H.contains(chat.text(), ends)
    end, "the turn answering " .. ends)
    H.wait(5000, function()
      local st = chat.state()
      return st and st.last_stop ~= nil
    end, "the turn to end")
  end

  turn("one", "-- turn ended: end_turn")
  H.check(told() == 0, "a turn seen in a focused Neovim is not told")

  vim.api.nvim_exec_autocmds("FocusLost", {})
  turn("two", "Second.")
  H.wait(5000, function()
    return told() == 1
  end, "the turn that ended while unfocused to be told")

  vim.api.nvim_exec_autocmds("FocusGained", {})
  -- The chat in no window: `:Interpreter chat` shows it again, so send without it.
  local st = chat.state()
  for _, win in ipairs(vim.fn.win_findbuf(st.buf)) do
    if #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    else
      vim.cmd.enew()
    end
  end
  H.check(vim.fn.bufwinid(st.buf) == -1, "the chat is in no window")
  chat.send("three")
  H.wait(30000, function()
    return told() == 2
  end, "the turn that ended with the chat hidden to be told")
  chat.stop()
  H.out("RESULT: ok")
end)
