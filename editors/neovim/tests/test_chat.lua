-- The native ACP chat: `:Interpreter chat {prompt}` starts `interpreter acp`, streams the
-- turn into the transcript buffer (agent text, plan, tool calls with status), answers the
-- permission requests for an edit and a shell command through vim.ui.select (stubbed to
-- "Allow once"), and serves fs/read_text_file (the unsaved buffer) and fs/write_text_file
-- (the buffer, saved). A second prompt is cancelled with `:Interpreter cancel`.
--
-- approval_policy="untrusted" makes the agent ask for every edit and command, whether or
-- not this machine can confine commands with Landlock (in `auto` mode, confined commands
-- run without asking).
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
    },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
    chat = { trace = H.env("AGENT_HOME") .. "/acp-trace.ndjson" },
  })

  -- a.txt is open with an unsaved second line; the agent must see (and patch) that text.
  vim.cmd.edit(vim.fn.fnameescape(ws .. "/a.txt"))
  local file_buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(file_buf, 1, 1, false, { "keep me" })
  H.check(vim.bo[file_buf].modified, "a.txt has unsaved changes before the turn")

  local selects = {}
  vim.ui.select = function(items, opts, on_choice)
    local names = {}
    for _, item in ipairs(items) do
      table.insert(names, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(selects, { prompt = opts.prompt, names = names })
    H.out("select: " .. opts.prompt .. " {" .. table.concat(names, " | ") .. "}")
    for i, name in ipairs(names) do
      if name == "Allow once" then
        -- Answer later, as a real picker would.
        vim.schedule(function()
          on_choice(items[i], i)
        end)
        return
      end
    end
    on_choice(nil, nil)
  end

  local chat = require("interpreter.chat")
  -- With a range: the lines go along as an embedded resource.
  vim.cmd("1,2Interpreter chat Please update a.txt")
  local st = chat.state()
  H.check(st ~= nil and vim.api.nvim_buf_get_name(st.buf):find("interpreter://chat", 1, true) ~= nil, "the chat buffer exists")
  H.check(vim.api.nvim_get_current_buf() == st.buf, "the chat window has focus")
  H.wait(60000, function()
    return st.last_stop ~= nil
  end, "the first turn to end")

  local text = chat.text()
  H.out("---- transcript\n" .. text .. "\n----")
  local function has(needle, what)
    H.check(H.contains(text, needle), what .. ": " .. needle)
  end
  H.check(st.last_stop == "end_turn", "stopReason end_turn")
  has("## You\n\nPlease update a.txt", "the user's prompt")
  has("Please update a.txt\n(with a.txt:1-2)", "the selection sent as context")
  has("Let me plan. ", "streamed agent text before the tools")
  has("All done: a.txt now starts with new.", "the final agent message, streamed in two chunks")
  has("plan:\n  [x] Edit a.txt\n  [~] Check it", "the plan, redrawn in place")
  H.check(select(2, text:gsub("plan:", "")) == 1, "one plan block")
  has("tool: Update plan [completed]", "the update_plan tool call")
  has("tool: Edit a.txt [completed]", "the edit tool call")
  has("tool: Edit a.txt [completed]\n    M a.txt (+1 -1)", "the edit's diff summary")
  H.check(not H.contains(text, "Plan updated"), "no output lines under the plan tool")
  has("tool: printf ok > checked.txt && cat a.txt [completed]", "the shell tool call")
  has("    | new\n    | keep me", "the shell output")
  has("tool: Edit a.txt [completed]\n    M a.txt (+1 -1)\npermission: Edit a.txt -> Allow once", "the edit's permission answer")
  has("permission: printf ok > checked.txt && cat a.txt -> Allow once", "the command's permission answer")
  has("-- turn ended: end_turn", "the completion line")
  H.check(#selects == 2, "vim.ui.select was called twice (the edit, the command)")
  H.check(H.contains(selects[1].prompt, "Edit a.txt"), "the first picker names the edit")
  H.check(H.contains(selects[2].prompt, "printf ok > checked.txt"), "the second picker names the command")
  H.check(table.concat(selects[2].names, "|"):find("^Allow once|Always allow .*|Reject$") ~= nil, "the picker offers the agent's options")

  -- fs/write_text_file went to the buffer and saved it.
  H.check(table.concat(H.buffer_lines(file_buf), "\n") == "new\nkeep me", "the a.txt buffer holds the agent's edit")
  H.check(not vim.bo[file_buf].modified, "the a.txt buffer was saved")
  H.check(H.read_file(ws .. "/a.txt") == "new\nkeep me\n", "a.txt on disk holds the edit")
  H.check(H.read_file(ws .. "/checked.txt") == "ok", "the allowed command ran")

  -- A second turn, cancelled while the model is still streaming.
  vim.cmd("Interpreter chat Do something slow")
  -- The agent may hold back a partial last word until more text comes, so wait for the
  -- first word only.
  H.wait(30000, function()
    return H.contains(chat.text(), "## interpreter\n\nWorking")
  end, "the slow turn to start streaming")
  vim.cmd("Interpreter cancel")
  H.wait(15000, function()
    return st.last_stop ~= nil
  end, "the cancelled turn to end")
  text = chat.text()
  H.out("---- transcript after cancel\n" .. text:sub(-300) .. "\n----")
  H.check(st.last_stop == "cancelled", "stopReason cancelled")
  H.check(H.contains(text, "-- turn ended: cancelled"), "the transcript shows the cancellation")
  H.check(not H.contains(text, "too late"), "nothing streamed after the cancel")

  chat.stop()
  H.wait(5000, function()
    return st.conn == nil
  end, "the agent to exit")
  H.check(H.contains(chat.text(), "agent exited"), "the transcript notes the agent's exit")
  H.out("RESULT: ok")
end)
