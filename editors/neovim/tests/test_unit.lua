-- Plugin pieces without a model: options, command lines, the transcript buffer, the fs
-- handlers, ranges and diagnostics in LSP encodings, the :Interpreter command, the
-- vim.lsp.start fallback (Neovim < 0.11), and chat failures that must not hang.
--
-- Environment (run.sh sets it): PLUGIN_DIR, INTERPRETER_BIN, WORKSPACE.
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  local notes = H.capture_notify()
  local ws = H.env("WORKSPACE")
  local bin = H.env("INTERPRETER_BIN")
  local config = require("interpreter.config")

  -- Options and command lines.
  local ok, err = pcall(config.set, { model = 3 })
  H.check(not ok and H.contains(err, "option `model` must be string"), "a bad option is a clear error")
  config.set({ cmd = bin, provider = "kimi", model = "moonshotai/kimi-k3", args = { "--profile", "fast" } })
  H.check(config.toml_string('a"b\\c/d') == '"a\\"b\\\\c/d"', "TOML strings escape quotes and backslashes, not slashes")
  H.check(
    table.concat(config.acp_cmd(), " ")
      == bin .. ' acp -c model_provider="kimi" -c model="moonshotai/kimi-k3" --profile fast',
    "acp command: provider/model as -c, then args"
  )
  H.check(table.concat(config.lsp_cmd(), " ") == bin .. " lsp --profile fast", "lsp command: args after `lsp`")
  H.check(vim.deep_equal(config.init_options(), { provider = "kimi", model = "moonshotai/kimi-k3" }), "init options")
  config.set({ init_options = { baseUrl = "http://x/v1" } })
  H.check(config.init_options().baseUrl == "http://x/v1", "init_options are merged in")
  config.set({})
  H.check(vim.json.encode(config.init_options()) == "{}", "empty init options encode as an object")
  H.check(vim.deep_equal(config.set({ root_markers = { "Cargo.toml" } }).root_markers, { "Cargo.toml" }), "lists replace the defaults")

  -- Transcript entries update in place.
  local buf = vim.api.nvim_create_buf(false, true)
  local tr = require("interpreter.transcript").new(buf)
  local a = tr:add({ "# head" })
  local s = tr:add({ "" }, "")
  tr:stream(s, "hello ")
  tr:stream(s, "world\nsecond")
  local tool = tr:add({ "tool: x [pending]" })
  tr:update(a, { "# head", "more" })
  tr:update(tool, { "tool: x [completed]", "    | out" })
  H.check(
    table.concat(H.buffer_lines(buf), "\n") == "# head\nmore\nhello world\nsecond\ntool: x [completed]\n    | out",
    "transcript buffer after streaming and updates"
  )
  H.check(tr:text() == table.concat(H.buffer_lines(buf), "\n"), "transcript text matches the buffer")
  H.check(not vim.bo[buf].modifiable, "the transcript buffer is read-only for the user")

  local nl = tr:add({ "error: first\nsecond" })
  tr:update(nl, { "error: first\nsecond\nthird" })
  H.check(vim.endswith(tr:text(), "\nerror: first\nsecond\nthird"), "lines with newlines are split, not an API error")

  -- Rendering of updates.
  local render = require("interpreter.render")
  H.check(render.one_line("make\n&& make test\n") == "make … (+2 lines)", "multi-line titles are one line")
  H.check(
    vim.deep_equal(render.tool_detail({
      { type = "diff", path = "/w/src/a.rs", oldText = "a\nb\n", newText = "a\nc\nd\n" },
      { type = "diff", path = "/elsewhere/n.rs", newText = "x\n" },
      { type = "content", content = { type = "text", text = "```console\n1\n2\n3\n4\n5\n6\n7\n```" } },
    }, "edit", "/w"), {
      "    M src/a.rs (+2 -1)",
      "    A /elsewhere/n.rs (+1 -0)",
      "    | 1", "    | 2", "    | 3", "    | 4", "    | 5", "    | … 2 more lines",
    }),
    "tool detail: diff stats, relative paths, the first output lines"
  )
  H.check(#render.tool_detail({ { type = "content", content = { type = "text", text = "Plan updated" } } }, "think") == 0, "no output under think tools")
  H.check(
    vim.deep_equal(render.plan_lines({ { content = "a", status = "completed" }, { content = "b", status = "pending" } }), { "plan:", "  [x] a", "  [ ] b" }),
    "plan lines"
  )

  -- fs handlers.
  local fs = require("interpreter.fs")
  local f = io.open(ws .. "/r.txt", "w")
  f:write("one\ntwo\nthree\n")
  f:close()
  H.check(fs.read({ path = ws .. "/r.txt" }).content == "one\ntwo\nthree\n", "fs read from disk")
  H.check(fs.read({ path = ws .. "/r.txt", line = 2, limit = 1 }).content == "two\n", "fs read line/limit")
  vim.cmd.edit(vim.fn.fnameescape(ws .. "/r.txt"))
  local rbuf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(rbuf, 0, 1, false, { "ONE" })
  H.check(fs.read({ path = ws .. "/r.txt" }).content == "ONE\ntwo\nthree\n", "fs read prefers the unsaved buffer")
  local _, rerr = fs.read({ path = ws .. "/missing.txt" })
  H.check(rerr and rerr.code == -32002, "fs read of a missing file is resource-not-found")
  _, rerr = fs.read({ path = "relative.txt" })
  H.check(rerr and rerr.code == -32602, "fs read needs an absolute path")
  local _, werr = fs.write({ path = "/etc/interpreter-test", content = "x" }, ws)
  H.check(werr and H.contains(werr.message, "outside the session folder"), "fs write outside the folder is refused")
  H.check(fs.write({ path = ws .. "/new/dir/n.txt", content = "n" }, ws) == vim.NIL, "fs write creates folders")
  H.check(H.read_file(ws .. "/new/dir/n.txt") == "n", "fs write wrote the new file")
  vim.api.nvim_buf_set_var(rbuf, "marker", 1)
  H.check(fs.write({ path = ws .. "/r.txt", content = "ONE\ntwo\n3\n" }, ws) == vim.NIL, "fs write to an open buffer")
  H.check(table.concat(H.buffer_lines(rbuf), "|") == "ONE|two|3", "the buffer got the new text")
  H.check(H.read_file(ws .. "/r.txt") == "ONE\ntwo\n3\n" and not vim.bo[rbuf].modified, "and was saved")
  fs.write({ path = ws .. "/r.txt", content = "no newline" }, ws)
  H.check(H.read_file(ws .. "/r.txt") == "no newline", "a missing final newline is kept")
  H.check(fs.read({ path = ws .. "/r.txt" }).content == "no newline", "and read back the same")

  -- Ranges and diagnostics in the client's encoding.
  local lsp = require("interpreter.lsp")
  local ubuf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(ubuf, 0, -1, false, { "héllo = 1", "x = 'é😀'" })
  local r16 = lsp.line_range(ubuf, 1, 2, "utf-16")
  H.check(r16["end"].line == 1 and r16["end"].character == 9, "utf-16 end of line 2 (😀 is 2 units)")
  H.check(lsp.line_range(ubuf, 1, 2, "utf-8")["end"].character == 12, "utf-8 end of line 2 (bytes)")
  H.check(lsp.line_range(ubuf, 1, 2, "utf-32")["end"].character == 8, "utf-32 end of line 2")
  local ns = vim.api.nvim_create_namespace("unit")
  vim.diagnostic.set(ns, ubuf, {
    { lnum = 0, col = 7, end_col = 8, message = "after é", severity = 1 },
    { lnum = 1, col = 0, message = "line 2", severity = 2 },
  })
  local d = lsp.diagnostics(ubuf, 1, 1, "utf-16")
  H.check(#d == 1 and d[1].range.start.character == 6 and d[1].message == "after é", "diagnostic columns converted to utf-16")
  local args = lsp.command_args("fix", ubuf, 1, 2, "utf-16")
  H.check(#args.diagnostics == 2 and args.range.start.line == 0 and args.prompt == nil, "fix arguments carry the diagnostics")
  args = lsp.command_args("ask", ubuf, 2, 2, "utf-16", "why?")
  H.check(args.prompt == "why?" and args.diagnostics == nil, "ask arguments carry the prompt")

  -- :Interpreter completion and errors.
  local names = vim.fn.getcompletion("Interpreter ", "cmdline")
  H.check(vim.tbl_contains(names, "fix") and vim.tbl_contains(names, "chat") and vim.tbl_contains(names, "cancel"), "subcommands complete")
  H.check(vim.deep_equal(vim.fn.getcompletion("Interpreter mode f", "cmdline"), { "full-access" }), "modes complete")
  H.check(vim.deep_equal(vim.fn.getcompletion("Interpreter re", "cmdline"), { "refactor", "rewind" }), "rewind completes")
  H.check(vim.deep_equal(vim.fn.getcompletion("Interpreter rewind 2 co", "cmdline"), { "code", "conversation" }), "what rewind restores completes")
  H.check(#vim.fn.getcompletion("Interpreter rewind co", "cmdline") == 0, "but not in the turn's place")
  vim.cmd("Interpreter bogus")
  H.check(H.contains(notes[#notes], "unknown subcommand `bogus`"), "an unknown subcommand is reported")
  vim.cmd("Interpreter cancel")
  H.check(H.contains(notes[#notes], "nothing is running"), ":Interpreter cancel with nothing running")

  -- The vim.lsp.start fallback used before 0.11.
  local enable = vim.lsp.enable
  vim.lsp.enable = nil
  require("interpreter").setup({ cmd = bin, env = { OPENINTERPRETER_HOME = ws .. "/.home" } })
  vim.lsp.enable = enable
  H.check(not vim.lsp.is_enabled("interpreter"), "fallback: vim.lsp.enable not used")
  local pf = io.open(ws .. "/m.py", "w")
  pf:write("x = 1\n")
  pf:close()
  vim.cmd.edit(vim.fn.fnameescape(ws .. "/m.py"))
  local pbuf = vim.api.nvim_get_current_buf()
  H.wait(15000, function()
    local c = lsp.client(pbuf)
    return c ~= nil and c.initialized
  end, "the fallback client to start")
  H.check(lsp.client(pbuf).root_dir == ws, "fallback client rooted at the .git folder")

  -- :checkhealth interpreter reports the binary and the running client.
  vim.cmd("checkhealth interpreter")
  local report = table.concat(H.buffer_lines(0), "\n")
  H.check(H.contains(report, "binary: " .. bin .. " (interpreter "), "checkhealth finds the binary and its version")
  H.check(H.contains(report, "LSP client") and not H.contains(report, "ERROR"), "checkhealth shows the client, no errors")
  vim.cmd("tabclose")
  lsp.client(pbuf):stop()
  vim.wait(3000, function()
    return #vim.lsp.get_clients({ name = "interpreter" }) == 0
  end, 20)

  -- The help file: :helptags accepts it (no duplicate tags), and every |link| resolves.
  local docdir = ws .. "/helpcopy/doc"
  vim.fn.mkdir(docdir, "p")
  vim.fn.writefile(vim.fn.readfile(H.env("PLUGIN_DIR") .. "/doc/interpreter.txt"), docdir .. "/interpreter.txt")
  local hok, herr = pcall(vim.cmd, "helptags " .. vim.fn.fnameescape(docdir))
  H.check(hok, "helptags accepts doc/interpreter.txt" .. (hok and "" or (": " .. tostring(herr))))
  vim.opt.runtimepath:append(ws .. "/helpcopy")
  local in_code, links = false, {}
  for _, line in ipairs(vim.fn.readfile(docdir .. "/interpreter.txt")) do
    if in_code and line:match("^<") then
      in_code = false
    end
    if not in_code then
      for link in line:gmatch("|([^|%s]+)|") do
        links[link] = true
      end
    end
    if line:match(" >%w*$") or line:match("^>%w*$") then
      in_code = true
    end
  end
  local missing = {}
  for link in pairs(links) do
    if not pcall(vim.cmd, "help " .. link) then
      table.insert(missing, link)
    end
  end
  vim.cmd("helpclose")
  H.check(#missing == 0, "every |link| in the help file resolves (missing: " .. table.concat(missing, ", ") .. ")")
  H.check(vim.tbl_count(links) > 20, "the help file has links")
  H.check(pcall(vim.cmd, "help :Interpreter-chat") and vim.fn.expand("%:t") == "interpreter.txt", ":help :Interpreter-chat opens our file")
  vim.cmd("helpclose")

  -- Chat failures end cleanly: a missing binary, and an agent that exits at once.
  local chat = require("interpreter.chat")
  require("interpreter").setup({ cmd = ws .. "/no-such-binary", lsp = false })
  chat.open({ focus = false })
  H.check(H.contains(chat.text(), "error: could not start"), "a missing binary is reported in the transcript")
  vim.api.nvim_buf_delete(chat.state().buf, { force = true })
  require("interpreter").setup({ cmd = "false", lsp = false })
  chat.open({ prompt = "hi", focus = false })
  H.wait(10000, function()
    return H.contains(chat.text(), "agent exited (code 1)")
  end, "the exit of an agent that fails at once")
  H.check(H.contains(chat.text(), "error: initialize failed: the agent exited"), "initialize fails with the exit")
  H.check(not chat.state().busy, "the chat is not left busy")
  local before = chat.text()
  vim.api.nvim_buf_delete(chat.state().buf, { force = true })
  chat.open({ focus = false })
  H.check(table.concat(H.buffer_lines(chat.state().buf), "\n") == before, "a deleted transcript buffer comes back with the conversation")
  vim.cmd("Interpreter new")
  H.check(not H.contains(chat.text(), "agent exited") and H.contains(chat.text(), "# interpreter chat"), ":Interpreter new starts a clean transcript")
  chat.reset()

  H.out("RESULT: ok")
end)
