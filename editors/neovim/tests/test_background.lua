-- A background task (Kimi Code's Bash with run_in_background) in the chat buffer: a tool entry
-- of its own, `background-b1`, in progress with its output, then completed; the call that
-- started it answers at once. Permissions are allowed through a stubbed vim.ui.select.
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
    harness = "kimi-code",
    args = { "-c", ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")) },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
  })
  vim.ui.select = function(items, _, on_choice)
    vim.schedule(function()
      on_choice(items[1], 1)
    end)
  end

  local chat = require("interpreter.chat")
  local seen = {}
  vim.cmd("Interpreter chat Run the job")
  local st = chat.state()
  H.wait(60000, function()
    local task = st.tools["background-b1"]
    if task then
      seen[task.status] = true
    end
    return st.last_stop ~= nil
  end, "the turn to end")
  H.check(st.last_stop == "end_turn", "stopReason end_turn")
  H.check(seen.in_progress == true, "the task was shown in progress")
  local task = st.tools["background-b1"]
  H.check(task ~= nil, "the task is an entry of its own")
  H.check(task.status == "completed", "the task completed (status " .. tostring(task and task.status) .. ")")
  local text = chat.text()
  H.check(H.contains(text, "tool: a job (background) [completed]"), "the entry names the task and its state")
  H.check(H.contains(text, "| finished"), "its output is shown")
  H.check(H.contains(text, "The job finished."), "the answer after it")
  chat.stop()
  H.out("RESULT: ok")
end)
