-- A small native ACP chat: one `interpreter acp` process, one session, and a scratch
-- buffer that streams the agent's messages, shows tool calls (title and status) and the
-- plan, and asks for permissions with vim.ui.select.
--
-- Flow: initialize → session/new → session/prompt per message; session/cancel on
-- `:Interpreter cancel` or the cancel keymap. With `chat.fs` the client advertises
-- fs/read_text_file and fs/write_text_file, so the agent reads unsaved buffers and its
-- edits land in them (see fs.lua). `/undo` and `/rewind` (`:Interpreter undo|rewind`) are
-- prompts too; their answer's `_meta["interpreter/undone"]` names the files the agent put
-- back, whose buffers are then reloaded.
local acp = require("interpreter.acp")
local config = require("interpreter.config")
local diagnostics = require("interpreter.diagnostics")
local elicit = require("interpreter.elicit")
local ext = require("interpreter.extensions")
local fs = require("interpreter.fs")
local render = require("interpreter.render")
local transcript = require("interpreter.transcript")

local M = {}

M.BUF_NAME = "interpreter://chat"

---@class interpreter.Chat
---@field cwd string               the session folder (Neovim's cwd when the chat opened)
---@field buf integer              the transcript buffer
---@field transcript interpreter.Transcript
---@field header_entry integer
---@field conn interpreter.AcpConnection|nil
---@field agent table|nil          agentInfo from initialize
---@field session_id string|nil
---@field ready boolean            session/new answered
---@field busy boolean             a session/prompt is running
---@field queue {text: string, context: table|nil}[]  prompts waiting for the session
---@field permissions table<table, fun()>  cancels each open permission request
---@field tools table<string, {entry: integer, title: string, status: string, kind: string|nil, detail: string[]}>
---@field text_entry integer|nil   the entry streamed text goes to
---@field text_kind string|nil     "agent", "thought" or "user"
---@field text_message string|nil  the ACP messageId of the streamed block, when it had one
---@field plan_entry integer|nil
---@field modes table|nil          modes from session/new
---@field mode string|nil
---@field commands table[]         from available_commands_update
---@field usage {used: integer, size: integer}|nil  from usage_update
---@field title string|nil         from session_info_update
---@field last_stop string|nil     the last stopReason ("error" when the prompt failed)
---@field last_stderr string[]|nil the stderr of an agent that exited
local state = nil

--- The chat's state (for tests and statuslines).
function M.state()
  return state
end

local notify_if_away
local function notify(msg, level)
  vim.notify("interpreter: " .. msg, level or vim.log.levels.INFO)
end

local function t()
  return state and state.transcript
end

--- Ends the current streamed text block so the next text starts below what follows.
local function close_text()
  if state then
    state.text_entry = nil
    state.text_kind = nil
    state.text_message = nil
  end
end

local function add(lines, prefix)
  close_text()
  return t():add(lines, prefix)
end

local function header_lines()
  local lines = { "# interpreter chat", "" }
  local info = { "folder: " .. (state.cwd or "?") }
  if state.mode then
    table.insert(info, "mode: " .. state.mode)
  end
  if state.session_id then
    table.insert(info, "session: " .. state.session_id)
  end
  lines[2] = table.concat(info, " · ")
  table.insert(lines, "")
  return lines
end

local function render_header()
  if state and state.header_entry then
    t():update(state.header_entry, header_lines())
  end
end

--- Streams a text chunk into the current block of `kind`, starting a block if needed: a
--- new kind or a new messageId (a response of two messages is two blocks).
local function stream_text(kind, text, message_id)
  local new_message = message_id ~= nil and state.text_message ~= nil and message_id ~= state.text_message
  if state.text_entry == nil or state.text_kind ~= kind or new_message then
    close_text()
    if kind == "thought" then
      state.text_entry = t():add({ "> " }, "> ")
    else
      state.text_entry = t():add({ "" }, "")
    end
    state.text_kind = kind
  end
  state.text_message = message_id
  t():stream(state.text_entry, text)
end

local function on_tool_call(u)
  local id = u.toolCallId
  if not id then
    return
  end
  local tool = state.tools[id]
  if not tool then
    -- A tool_call, or an update for a call not announced yet (legal in ACP): upsert.
    tool = { title = u.title or id, status = u.status or "pending", kind = u.kind, detail = {} }
    if u.content then
      tool.detail = render.tool_detail(u.content, tool.kind, state.cwd)
    end
    state.tools[id] = tool
    tool.entry = add(render.tool_lines(tool))
    return
  end
  tool.title = u.title or tool.title
  tool.status = u.status or tool.status
  tool.kind = u.kind or tool.kind
  if u.content then
    tool.detail = render.tool_detail(u.content, tool.kind, state.cwd)
  end
  t():update(tool.entry, render.tool_lines(tool))
end

local function on_update(params)
  if not state or params.sessionId ~= state.session_id then
    return
  end
  local u = params.update or {}
  local kind = u.sessionUpdate
  if kind == "agent_message_chunk" then
    local text = render.content_text(u.content)
    if text then
      stream_text("agent", text, u.messageId)
    end
  elseif kind == "agent_thought_chunk" then
    local text = render.content_text(u.content)
    if text and config.options.chat.show_thoughts then
      stream_text("thought", text)
    end
  elseif kind == "user_message_chunk" then
    local text = render.content_text(u.content)
    if text then
      stream_text("user", text)
    end
  elseif kind == "tool_call" or kind == "tool_call_update" then
    on_tool_call(u)
  elseif kind == "plan" then
    -- The plan is always the full list; it is redrawn where it first appeared.
    if state.plan_entry then
      t():update(state.plan_entry, render.plan_lines(u.entries))
    else
      state.plan_entry = add(render.plan_lines(u.entries))
    end
  elseif kind == "available_commands_update" then
    state.commands = u.availableCommands or {}
  elseif kind == "current_mode_update" then
    state.mode = u.currentModeId
    render_header()
  elseif kind == "usage_update" then
    state.usage = { used = u.used, size = u.size }
  elseif kind == "session_info_update" then
    state.title = u.title or state.title
  end
end

-- Neovim has the focus (FocusLost/FocusGained; terminals that do not report focus leave it
-- true).
local focused = true
vim.api.nvim_create_autocmd({ "FocusLost", "FocusGained" }, {
  group = vim.api.nvim_create_augroup("interpreter_chat_focus", { clear = true }),
  callback = function(ev)
    focused = ev.event == "FocusGained"
  end,
})

--- Tells a user who looks elsewhere (Neovim unfocused, or the chat in no window) with
--- vim.notify, unless `chat.notify` is false.
notify_if_away = function(what)
  if config.options.chat.notify == false then
    return
  end
  local shown = state and state.buf and vim.fn.bufwinid(state.buf) ~= -1
  if focused and shown then
    return
  end
  notify(what)
end

--- session/request_permission → vim.ui.select. Returns the chosen option, or `cancelled`
--- when the picker is dismissed or the turn is cancelled.
local function on_permission(params, reply)
  local options = params.options or {}
  local call = params.toolCall or {}
  local known = call.toolCallId and state.tools[call.toolCallId]
  local title = call.title or (known and known.title) or call.toolCallId or "a tool call"
  notify_if_away("waiting for your approval: " .. render.one_line(title))
  local key = {}
  local done = false
  local function finish(result, label)
    if done then
      return
    end
    done = true
    state.permissions[key] = nil
    reply(result)
    add({ ("permission: %s -> %s"):format(render.one_line(title), label) })
  end
  state.permissions[key] = function()
    finish({ outcome = { outcome = "cancelled" } }, "cancelled")
  end
  if #options == 0 then
    finish({ outcome = { outcome = "cancelled" } }, "cancelled (no options offered)")
    return
  end
  vim.ui.select(options, {
    -- The project and hooks questions (`trust-project`, `trust-hooks`) ask; others run.
    prompt = ((call.toolCallId or ""):match("^trust%-") and "interpreter asks: " or "interpreter wants to run: ")
      .. render.one_line(title),
    kind = "interpreter.permission",
    format_item = function(o)
      return o.name or o.optionId
    end,
  }, function(choice)
    if choice then
      finish({ outcome = { outcome = "selected", optionId = choice.optionId } }, choice.name or choice.optionId)
    else
      finish({ outcome = { outcome = "cancelled" } }, "dismissed")
    end
  end)
end

local function on_request(method, params, reply)
  if method == "session/request_permission" then
    on_permission(params, reply)
  elseif method == "fs/read_text_file" and config.options.chat.fs then
    local result, err = fs.read(params)
    reply(result, err)
  elseif method == "fs/write_text_file" and config.options.chat.fs then
    local result, err = fs.write(params, state.cwd)
    if not err and config.options.chat.diagnostics then
      diagnostics.wrote(params.path)
    end
    reply(result, err)
  elseif method == "elicitation/create" then
    local key = {}
    elicit.answer(params, function(result)
      state.permissions[key] = nil
      reply(result)
    end, function(cancel)
      state.permissions[key] = cancel
    end)
  elseif method == diagnostics.METHOD and config.options.chat.diagnostics then
    diagnostics.answer(params, reply, config.options.chat.diagnostics_wait_ms)
  else
    reply(nil, { code = -32601, message = "method not found: " .. method })
  end
end

local function on_notification(method, params)
  if method == "session/update" then
    on_update(params)
  end
end

local function cancel_permissions()
  if not state then
    return
  end
  for _, cancel in pairs(state.permissions) do
    cancel()
  end
end

local function on_exit(code, signal, stderr)
  if not state then
    return
  end
  cancel_permissions()
  local lines = { ("agent exited (code %d%s)"):format(code, signal ~= 0 and (", signal " .. signal) or "") }
  if code ~= 0 then
    for i = math.max(1, #stderr - 10), #stderr do
      if stderr[i] and stderr[i] ~= "" then
        table.insert(lines, "    " .. stderr[i])
      end
    end
  end
  add(lines)
  state.last_stderr = stderr
  state.conn = nil
  state.ready = false
  state.busy = false
end

local function error_text(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  local msg = err.message or vim.inspect(err)
  if err.code == -32000 then
    msg = msg .. " (set the provider's API key in the environment, or run `interpreter login` in a terminal)"
  end
  return msg
end

local function plural(n, word)
  return ("%d %s%s"):format(n, word, n == 1 and "" or "s")
end

--- An undo's report (`_meta["interpreter/undone"]` of the prompt's answer): the agent put
--- the files back on disk, so their buffers are refreshed, then a one-line summary.
---@param undone {turnIds: string[], conversation: boolean, restored: string[], removed: string[], skipped: {path: string, reason: string}[]}
local function on_undone(undone)
  local restored, removed = undone.restored or {}, undone.removed or {}
  local skipped = undone.skipped or {}
  local unsaved, failed = fs.refresh(state.cwd, restored, removed)
  local turns = plural(#(undone.turnIds or {}), "turn")
  local head = undone.conversation == false and ("put back the files of " .. turns) or ("undid " .. turns)
  local counts = {}
  for _, c in ipairs({ { restored, "restored" }, { removed, "removed" }, { skipped, "kept" } }) do
    if #c[1] > 0 then
      table.insert(counts, #c[1] .. " " .. c[2])
    end
  end
  local line = head .. ": " .. (#counts > 0 and table.concat(counts, ", ") or "no file changed")
  local level = vim.log.levels.INFO
  if #unsaved > 0 then
    -- The agent could not see the buffer (chat.fs off), so the file on disk went back
    -- under the user's unsaved text; which one wins is theirs to say (:e! or :w).
    line = line .. "; not reloaded, unsaved changes: " .. table.concat(unsaved, ", ")
    level = vim.log.levels.WARN
  end
  if #failed > 0 then
    line = line .. "; could not reload " .. table.concat(failed, "; ")
    level = vim.log.levels.WARN
  end
  notify(line, level)
end

local send_now

--- Sends the queued prompts once the session exists.
local function drain()
  if state and state.ready and not state.busy and #state.queue > 0 then
    send_now(table.remove(state.queue, 1))
  end
end

--- Starts the agent and the session.
local function connect()
  local cmd = config.acp_cmd()
  local conn, err
  -- Messages from an agent that was replaced (stopped, or its transcript wiped) are dropped.
  local function current()
    return state ~= nil and conn ~= nil and state.conn == conn
  end
  conn, err = acp.start(cmd, {
    cwd = state.cwd,
    env = config.env(),
    trace = config.options.chat.trace and vim.fn.expand(config.options.chat.trace) or nil,
    handlers = {
      on_request = function(method, params, reply)
        if not current() then
          return reply(nil, { code = -32603, message = "this Neovim chat was closed" })
        end
        on_request(method, params, reply)
      end,
      on_notification = function(method, params)
        if current() then
          on_notification(method, params)
        end
      end,
      on_exit = function(code, signal, stderr)
        if current() then
          on_exit(code, signal, stderr)
        end
      end,
    },
  })
  if not conn then
    add({ "error: " .. err })
    notify(err, vim.log.levels.ERROR)
    return
  end
  state.conn = conn
  local fs_on = config.options.chat.fs
  conn:request("initialize", {
    protocolVersion = 1,
    clientCapabilities = {
      fs = { readTextFile = fs_on, writeTextFile = fs_on },
      terminal = false,
      elicitation = { form = vim.empty_dict() },
      _meta = config.options.chat.diagnostics and { [diagnostics.CAPABILITY] = true } or nil,
    },
    clientInfo = { name = "interpreter.nvim", title = "interpreter for Neovim", version = tostring(vim.version()) },
  }, function(ierr, init)
    if not current() then
      return
    end
    if ierr then
      add({ "error: initialize failed: " .. error_text(ierr) })
      return
    end
    if type(init) == "table" and init.protocolVersion ~= 1 then
      add({ ("error: the agent speaks ACP version %s; this plugin speaks 1"):format(tostring(init.protocolVersion)) })
      conn:stop()
      return
    end
    state.agent = init and init.agentInfo
    conn:request("session/new", { cwd = state.cwd, mcpServers = {} }, function(serr, session)
      if not current() then
        return
      end
      if serr or type(session) ~= "table" or not session.sessionId then
        add({ "error: session/new failed: " .. error_text(serr or "no sessionId") })
        state.queue = {}
        return
      end
      state.session_id = session.sessionId
      state.modes = session.modes
      state.mode = session.modes and session.modes.currentModeId or nil
      render_header()
      local want = config.options.chat.mode
      if want and want ~= state.mode then
        M.set_mode(want, function()
          state.ready = true
          drain()
        end)
      else
        state.ready = true
        drain()
      end
    end)
  end)
end

--- Prompt content blocks: the text, then an optional selection as an embedded resource.
local function prompt_blocks(text, context)
  local blocks = { { type = "text", text = text } }
  if context then
    table.insert(blocks, {
      type = "resource",
      resource = { uri = context.uri, text = context.text, mimeType = "text/plain" },
    })
  end
  return blocks
end

---@param item {text: string, context: table|nil}
send_now = function(item)
  state.busy = true
  state.last_stop = nil
  -- Tool call ids are only unique within a turn (models reuse ids like "call_0"), and an
  -- updated plan is drawn again under the turn that changed it.
  state.tools = {}
  state.plan_entry = nil
  add({ "## You", "" })
  local you = vim.split(item.text, "\n", { plain = true })
  if item.context then
    table.insert(you, "(with " .. item.context.label .. ")")
  end
  table.insert(you, "")
  add(you)
  add({ "## interpreter", "" })
  local conn = state.conn
  conn:request("session/prompt", {
    sessionId = state.session_id,
    prompt = prompt_blocks(item.text, item.context),
  }, function(err, result)
    if not state or state.conn ~= conn then
      return
    end
    state.busy = false
    cancel_permissions()
    if err then
      state.last_stop = "error"
      add({ "", "error: " .. error_text(err), "" })
    else
      local reason = type(result) == "table" and result.stopReason or "?"
      state.last_stop = reason
      add({ "", ("-- turn ended: %s"):format(reason), "" })
      if reason == "end_turn" then
        notify_if_away("turn complete")
      end
      local meta = type(result) == "table" and result._meta
      if type(meta) == "table" and type(meta[ext.ACP_UNDONE]) == "table" then
        on_undone(meta[ext.ACP_UNDONE])
      end
    end
    drain()
  end)
end

local function ensure_buffer()
  if state and state.buf and vim.api.nvim_buf_is_valid(state.buf) then
    if vim.api.nvim_buf_is_loaded(state.buf) then
      return state.buf
    end
    -- Unloaded (:bdelete): free the name for a new buffer.
    pcall(vim.api.nvim_buf_delete, state.buf, { force = true })
  end
  local buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, M.BUF_NAME)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "interpreter"
  pcall(vim.treesitter.start, buf, "markdown")
  local keys = config.options.chat.keymaps or {}
  local function map(lhs, fn, desc)
    if lhs then
      vim.keymap.set("n", lhs, fn, { buffer = buf, desc = desc, nowait = true })
    end
  end
  map(keys.prompt, function()
    M.input()
  end, "interpreter: send a prompt")
  map(keys.cancel, function()
    M.cancel()
  end, "interpreter: cancel the turn")
  map(keys.close, function()
    vim.cmd("close")
  end, "interpreter: close the chat window")
  return buf
end

local function show(buf)
  local wins = vim.fn.win_findbuf(buf)
  for _, w in ipairs(wins) do
    if vim.api.nvim_win_get_tabpage(w) == vim.api.nvim_get_current_tabpage() then
      vim.api.nvim_set_current_win(w)
      return
    end
  end
  local o = config.options.chat
  local pos = o.position
  if pos == "tab" then
    vim.cmd("tabnew")
  elseif pos == "below" or pos == "above" then
    vim.cmd((pos == "below" and "botright " or "topleft ") .. (o.size and tostring(o.size) or "") .. "split")
  elseif pos == "right" or pos == "left" then
    local width = o.size or math.max(60, math.floor(vim.o.columns * 0.4))
    vim.cmd((pos == "right" and "botright " or "topleft ") .. width .. "vsplit")
  end
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
end

local function fresh_state(cwd)
  return {
    cwd = vim.fs.normalize(cwd or vim.fn.getcwd()),
    queue = {},
    permissions = {},
    tools = {},
    commands = {},
    busy = false,
    ready = false,
  }
end

--- Opens the chat (starting the agent on first use) and, with a prompt, sends it.
---@param o {prompt?: string, context?: table, focus?: boolean, cwd?: string}|nil
function M.open(o)
  o = o or {}
  if not state then
    state = fresh_state(o.cwd)
    state.buf = ensure_buffer()
    state.transcript = transcript.new(state.buf)
    state.header_entry = t():add(header_lines())
  elseif not (vim.api.nvim_buf_is_valid(state.buf) and vim.api.nvim_buf_is_loaded(state.buf)) then
    -- The transcript buffer was deleted: show the same conversation in a new one.
    state.buf = ensure_buffer()
    state.transcript:rebind(state.buf)
  end
  if o.focus ~= false then
    show(state.buf)
  end
  if not state.conn then
    connect()
  end
  if o.prompt and vim.trim(o.prompt) ~= "" and state.conn then
    M.send(o.prompt, o.context)
  end
  return state.buf
end

--- Stops the agent and clears the transcript; the next prompt starts a new session.
function M.reset()
  M.stop()
  if state and state.buf and vim.api.nvim_buf_is_valid(state.buf) then
    local buf = state.buf
    state = nil
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  end
  state = nil
end

--- Sends a prompt (queued until the session exists; refused while a turn runs).
---@param text string
---@param context table|nil  {uri, text, label} of a selection
function M.send(text, context)
  if not state then
    M.open({ focus = false })
  elseif not state.conn then
    connect()
  end
  if not state.conn then
    return false
  end
  if state.busy then
    notify("a turn is running: wait, or :Interpreter cancel", vim.log.levels.WARN)
    return false
  end
  table.insert(state.queue, { text = text, context = context })
  drain()
  return true
end

--- Sends a slash command that only means something to a running session.
local function session_command(command, arg)
  if not state or not state.conn or not state.session_id then
    notify("no chat session: run :Interpreter chat first", vim.log.levels.WARN)
    return false
  end
  arg = vim.trim(arg or "")
  return M.send(arg == "" and command or (command .. " " .. arg))
end

--- `/undo [N]`: takes back the last turn (or N turns), its files and its conversation.
---@param arg string|nil  the number of turns
function M.undo(arg)
  return session_command("/undo", arg)
end

--- `/rewind [N|turnId] [code|conversation|both]`: without a turn, lists the turns (in the
--- transcript); with one, goes back to just before it.
---@param arg string|nil
function M.rewind(arg)
  return session_command("/rewind", arg)
end

--- Asks for a prompt with vim.ui.input (completes the agent's slash commands).
function M.input()
  vim.ui.input({ prompt = "interpreter> ", completion = "customlist,v:lua.require'interpreter.chat'.complete" }, function(text)
    if text and vim.trim(text) ~= "" then
      M.send(text)
    end
  end)
end

--- Completion of `/command` names for the prompt.
function M.complete(arglead)
  local out = {}
  for _, c in ipairs(state and state.commands or {}) do
    local name = "/" .. (c.name or "")
    if vim.startswith(name, arglead) then
      table.insert(out, name)
    end
  end
  return out
end

--- session/cancel for the running turn. Open permission prompts answer `cancelled`.
---@return boolean  whether a turn was running
function M.cancel()
  if not state or not state.conn or not state.busy then
    return false
  end
  cancel_permissions()
  state.conn:notify("session/cancel", { sessionId = state.session_id })
  add({ "(cancel requested)" })
  return true
end

--- Switches the session mode (session/set_mode), e.g. "read-only", "auto", "full-access".
function M.set_mode(mode, cb)
  if not state or not state.conn or not state.session_id then
    notify("no chat session: run :Interpreter chat first", vim.log.levels.WARN)
    return
  end
  state.conn:request("session/set_mode", { sessionId = state.session_id, modeId = mode }, function(err)
    if err then
      notify("set_mode " .. mode .. " failed: " .. error_text(err), vim.log.levels.ERROR)
    else
      state.mode = mode
      render_header()
    end
    if cb then
      cb(err)
    end
  end)
end

--- Mode ids the session offers (for completion).
function M.mode_ids()
  local ids = {}
  for _, m in ipairs(state and state.modes and state.modes.availableModes or {}) do
    table.insert(ids, m.id)
  end
  return ids
end

--- Stops the agent; the transcript stays. The next prompt starts a new session.
function M.stop()
  if state and state.conn then
    cancel_permissions()
    state.conn:stop()
  end
end

--- The agent's recent stderr (for troubleshooting).
function M.stderr()
  if not state then
    return {}
  end
  return state.conn and state.conn.stderr or state.last_stderr or {}
end

--- The transcript as text.
function M.text()
  return state and state.transcript and state.transcript:text() or ""
end

vim.api.nvim_create_autocmd("VimLeavePre", {
  group = vim.api.nvim_create_augroup("interpreter.chat", { clear = true }),
  callback = function()
    M.stop()
  end,
})

return M
