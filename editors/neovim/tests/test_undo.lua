-- `:Interpreter undo` and `:Interpreter rewind` take turns back: the agent puts the files
-- back on disk and answers with `_meta["interpreter/undone"]`; the plugin reloads the
-- buffers of restored files, has Neovim notice removed ones, never reloads a buffer with
-- unsaved changes, and sums it up in a notification. The agent's report is in the transcript.
--
-- Turn 1 creates made.txt and changes a.txt (open in a window); undone, both go back. Turn 2
-- changes a.txt and the user saves their own text over it; the undo keeps the file. Turn 3
-- changes a.txt and the user edits the buffer without saving; `:Interpreter rewind 1` counts
-- the unsaved buffer as the user's edit: the file and the buffer stay as they are.
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, MOCK_URL, WORKSPACE, AGENT_HOME.
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  local notes = {}
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
    H.out(("notify[%s]: %s"):format(tostring(level), msg))
  end
  local function last_note()
    return notes[#notes] or { msg = "" }
  end
  local ws = H.env("WORKSPACE")
  require("interpreter").setup({
    cmd = H.env("INTERPRETER_BIN"),
    lsp = false,
    provider = "mock",
    model = "mock-model",
    args = { "-c", ("model_providers.mock={base_url=%q, wire_api=\"chat\"}"):format(H.env("MOCK_URL")) },
    env = { OPENINTERPRETER_HOME = H.env("AGENT_HOME") },
    chat = { trace = H.env("AGENT_HOME") .. "/acp-trace.ndjson" },
  })
  -- Edits inside the folder do not ask in `auto` mode; should one ask, it is allowed.
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      if (opts.format_item and opts.format_item(item) or tostring(item)) == "Allow once" then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  local chat = require("interpreter.chat")

  vim.cmd("Interpreter undo")
  H.check(last_note().level == vim.log.levels.WARN and H.contains(last_note().msg, "no chat session"), "undo without a chat session warns")
  vim.cmd("Interpreter rewind 1")
  H.check(H.contains(last_note().msg, "no chat session"), "so does rewind")
  H.check(chat.state() == nil, "neither opened a chat")

  local a_path, made_path = ws .. "/a.txt", ws .. "/made.txt"
  vim.cmd.edit(vim.fn.fnameescape(a_path))
  local a_buf = vim.api.nvim_get_current_buf()
  -- :edit! reads the file again (BufReadPost); the agent's own writes to the buffer do not.
  local reloads = 0
  vim.api.nvim_create_autocmd("BufReadPost", {
    buffer = a_buf,
    callback = function()
      reloads = reloads + 1
    end,
  })
  local function a_text()
    return table.concat(H.buffer_lines(a_buf), "\n")
  end

  local st
  local function prompt(cmd)
    vim.cmd(cmd)
    st = chat.state()
    H.wait(60000, function()
      return st.last_stop ~= nil
    end, "`" .. cmd .. "` to end")
    H.check(st.last_stop == "end_turn", "`" .. cmd .. "` ended with end_turn")
  end

  -- Turn 1: made.txt created, a.txt changed through its buffer.
  prompt("Interpreter chat Make made.txt and change a.txt")
  H.check(H.read_file(made_path) == "hello\n", "the turn created made.txt")
  H.check(H.read_file(a_path) == "new\n" and a_text() == "new", "the turn changed a.txt and its buffer")
  local made_buf = vim.fn.bufadd(made_path)
  vim.fn.bufload(made_buf)
  local gone_noticed = 0
  vim.api.nvim_create_autocmd("FileChangedShellPost", {
    buffer = made_buf,
    callback = function()
      gone_noticed = gone_noticed + 1
    end,
  })

  prompt("Interpreter undo")
  H.check(H.read_file(made_path) == nil, "undo removed made.txt")
  H.check(H.read_file(a_path) == "old\n", "undo put a.txt back on disk")
  H.check(a_text() == "old" and not vim.bo[a_buf].modified, "the a.txt buffer shows the old text")
  H.check(reloads == 1, "the a.txt buffer was reloaded once")
  H.check(vim.api.nvim_buf_is_loaded(made_buf), "the made.txt buffer stays")
  H.check(gone_noticed > 0, "Neovim noticed made.txt is gone (FileChangedShellPost)")
  H.check(last_note().msg == "interpreter: undid 1 turn: 1 restored, 1 removed", "the summary: " .. last_note().msg)
  H.check(last_note().level == vim.log.levels.INFO, "at INFO")
  local text = chat.text()
  H.out("---- transcript\n" .. text .. "\n----")
  H.check(H.contains(text, "## You\n\n/undo\n"), "the transcript shows /undo")
  H.check(
    H.contains(text, "Undid the last turn.\n- restored `a.txt`\n- removed `made.txt` (the turn created it)"),
    "the transcript shows the agent's report"
  )

  -- Turn 2: the user saves their own text over the agent's edit; the undo keeps it.
  prompt("Interpreter chat Change a.txt again")
  H.check(H.read_file(a_path) == "second\n" and a_text() == "second", "the second turn changed a.txt")
  vim.api.nvim_buf_set_lines(a_buf, 0, -1, false, { "mine" })
  vim.api.nvim_buf_call(a_buf, function()
    vim.cmd("silent write")
  end)
  prompt("Interpreter undo")
  H.check(H.read_file(a_path) == "mine\n", "the user's saved a.txt is kept on disk")
  H.check(a_text() == "mine" and not vim.bo[a_buf].modified, "and in its buffer")
  H.check(reloads == 1, "a kept file's buffer is not reloaded")
  H.check(last_note().msg == "interpreter: undid 1 turn: 1 kept", "the summary: " .. last_note().msg)
  H.check(H.contains(chat.text(), "- kept `a.txt`: changed after the turn; kept"), "the report says kept")

  -- Turn 3: the user's unsaved edit of the buffer survives a rewind.
  prompt("Interpreter chat Change a.txt once more")
  H.check(H.read_file(a_path) == "third\n" and a_text() == "third", "the third turn changed a.txt")
  local before = #notes
  prompt("Interpreter rewind")
  text = chat.text()
  H.check(
    H.contains(text, "Turns you can rewind to, oldest first:\n\n1. Change a.txt once more\n\n"),
    "rewind lists the one turn left (the undone ones are gone)"
  )
  H.check(#notes == before, "a listing notifies nothing")
  vim.api.nvim_buf_set_lines(a_buf, 0, -1, false, { "unsaved" })
  prompt("Interpreter rewind 1")
  H.out("---- transcript end\n" .. chat.text():sub(-400) .. "\n----")
  -- The agent reads a.txt through the plugin (fs/read_text_file), sees the unsaved buffer,
  -- and keeps the file as the user's edit.
  H.check(H.read_file(a_path) == "third\n", "rewind leaves a.txt with an unsaved buffer on disk")
  H.check(a_text() == "unsaved" and vim.bo[a_buf].modified, "the buffer keeps its unsaved text")
  H.check(reloads == 1, "a buffer with unsaved changes is not reloaded")
  H.check(last_note().msg == "interpreter: undid 1 turn: 1 kept", "the summary: " .. last_note().msg)
  H.check(
    H.contains(chat.text(), "- kept `a.txt`: unsaved changes in the editor; kept"),
    "the report says why"
  )

  chat.stop()
  H.out("RESULT: ok")
end)
