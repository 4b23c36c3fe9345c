-- Saved rules (docs/rules.md): the permission picker offers the agent's "Always allow …, and
-- save" for a plain command; picking it writes the user's rules/default.rules, and the next
-- command with that prefix runs without a picker. approval_policy="untrusted" makes the
-- first command ask whatever this machine can confine.
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, MOCK_URL, WORKSPACE, AGENT_HOME.
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  H.capture_notify()
  local ws = H.env("WORKSPACE")
  require("interpreter").setup({
    cmd = H.env("INTERPRETER_BIN"),
    lsp = false,
    provider = "mock",
    model = "mock-model",
    args = {
      "-c",
      ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")),
      "-c",
      'approval_policy="untrusted"',
      "-c",
      'harness="native"',
    },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
  })

  local selects = {}
  vim.ui.select = function(items, opts, on_choice)
    local names = {}
    for _, item in ipairs(items) do
      table.insert(names, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(selects, names)
    H.out("select: {" .. table.concat(names, " | ") .. "}")
    for i, name in ipairs(names) do
      if H.contains(name, ", and save") then
        vim.schedule(function()
          on_choice(items[i], i)
        end)
        return
      end
    end
    on_choice(nil, nil)
  end

  local chat = require("interpreter.chat")
  vim.cmd("Interpreter chat make one")
  local st = chat.state()
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the first turn to end")
  H.check(#selects == 1, "the first command asked")
  H.check(H.contains(table.concat(selects[1], "|"), "Always allow `touch saved.txt`, and save"), "the picker offers always, and save")
  H.check(H.read_file(ws .. "/saved.txt") ~= nil, "the command ran")
  local rules = H.read_file(H.env("AGENT_HOME") .. "/rules/default.rules")
  H.check(rules == 'prefix_rule(pattern=["touch", "saved.txt"], decision="allow")\n', "the rule was saved: " .. tostring(rules))

  st.last_stop = nil
  vim.cmd("Interpreter chat make two")
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the second turn to end")
  H.check(#selects == 1, "the second command ran without a picker")
  H.check(H.read_file(ws .. "/again.txt") ~= nil, "the second command ran")
  H.check(H.contains(chat.text(), "Made two."), "the second answer")

  chat.stop()
  H.out("RESULT: ok")
end)
