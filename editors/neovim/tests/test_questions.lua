-- The agent's questions (Claude Code's AskUserQuestion) as an ACP form elicitation, asked
-- with vim.ui.select (one choice) and vim.ui.input (a multi-select question, as numbers),
-- both stubbed here to answer like a user; run.sh checks that the answers reached the model.
-- Then a picker the user dismisses, which cancels the turn.
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
    harness = "claude-code",
    args = { "-c", ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")) },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
  })

  local selects, inputs = {}, {}
  vim.ui.select = function(items, opts, on_choice)
    local names = {}
    for _, item in ipairs(items) do
      table.insert(names, opts.format_item(item))
    end
    table.insert(selects, { prompt = opts.prompt, names = names })
    H.out("select: " .. opts.prompt .. " {" .. table.concat(names, " | ") .. "}")
    vim.schedule(function()
      on_choice(items[2], 2)
    end)
  end
  vim.ui.input = function(opts, on_confirm)
    table.insert(inputs, opts.prompt)
    H.out("input: " .. opts.prompt)
    vim.schedule(function()
      on_confirm("1, 2")
    end)
  end

  local chat = require("interpreter.chat")
  vim.cmd("Interpreter chat Set up a database")
  local st = chat.state()
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the turn to end")
  H.check(st.last_stop == "end_turn", "stopReason end_turn")
  H.check(#selects == 1, "one picker for the single-choice question")
  H.check(H.contains(selects[1].prompt, "DB: Which database?"), "the picker shows the header and the question")
  H.check(table.concat(selects[1].names, "|") == "SQLite — a file|Postgres — a server|Other (your own answer)", "the options, then Other")
  H.check(#inputs == 1 and H.contains(inputs[1], "1 Auth, 2 Cache"), "the multi-select question as numbers")
  H.check(H.contains(chat.text(), "Postgres with auth and cache."), "the answer after the question")

  -- A dismissed picker cancels the form: the turn ends as cancelled, and the model is not
  -- asked again (the mock's next reply would say NOT EXPECTED).
  vim.ui.select = function(_, opts, on_choice)
    H.out("select, dismissed: " .. opts.prompt)
    vim.schedule(function()
      on_choice(nil, nil)
    end)
  end
  vim.cmd("Interpreter chat Once more")
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the second turn to end")
  H.check(st.last_stop == "cancelled", "a dismissed picker cancels the turn (stopReason " .. tostring(st.last_stop) .. ")")
  H.check(not H.contains(chat.text(), "NOT EXPECTED"), "no model request after the cancelled question")
  chat.stop()
  H.out("RESULT: ok")
end)
