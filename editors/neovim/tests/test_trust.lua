-- Trust: a project with config and hooks of its own. The first prompt asks through
-- vim.ui.select whether to trust the project, then whether to run its hooks; both answers are
-- saved in the agent's config.toml, and the hook runs for that same prompt (run.sh checks the
-- mock received its context).
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, MOCK_URL, WORKSPACE, AGENT_HOME.
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  require("interpreter").setup({
    cmd = H.env("INTERPRETER_BIN"),
    lsp = false,
    provider = "mock",
    model = "mock-model",
    args = { "-c", ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")) },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
  })
  local prompts = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(prompts, opts.prompt)
    for i, item in ipairs(items) do
      local name = opts.format_item and opts.format_item(item) or tostring(item)
      if name == "Trust this project" or name == "Run these hooks" then
        vim.schedule(function()
          on_choice(items[i], i)
        end)
        return
      end
    end
    on_choice(nil, nil)
  end
  local chat = require("interpreter.chat")
  vim.cmd("Interpreter chat hello")
  H.wait(30000, function()
    return H.contains(chat.text(), "Trusted.")
  end, "the answer after both questions")
  H.check(#prompts == 2, "two questions were asked: " .. vim.inspect(prompts))
  H.check(prompts[1]:find("interpreter asks: Trust", 1, true) ~= nil, "the project question: " .. prompts[1])
  H.check(prompts[2]:find("interpreter asks: Run the project's hooks?", 1, true) ~= nil, "the hooks question: " .. prompts[2])
  local config = table.concat(vim.fn.readfile(H.env("AGENT_HOME") .. "/config.toml"), "\n")
  H.check(config:find('trust_level = "trusted"', 1, true) ~= nil, "the project's answer is saved: " .. config)
  H.check(config:find('trusted_hash = "sha256:', 1, true) ~= nil, "the hooks' approval is saved: " .. config)
  chat.stop()
  H.out("RESULT: ok")
end)
