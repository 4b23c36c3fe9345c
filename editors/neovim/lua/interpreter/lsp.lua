-- The LSP face: registers `interpreter lsp` with Neovim's client and runs its code action
-- commands (interpreter.fix, .explain, .ask, .refactor, .writeTests) for a range of lines.
--
-- The server answers workspace/executeCommand at once and runs the agent in the background;
-- edits come back as a versioned workspace/applyEdit that Neovim's default handler applies,
-- answers of explain/ask through window/showDocument (or window/showMessage), and progress
-- through $/progress (LspProgress), which we use for the end notification and for cancel.
local config = require("interpreter.config")

local M = {}

M.name = "interpreter"

--- Command ids and the argument fields they use (crates/lsp/src/actions.rs).
M.actions = {
  fix = { command = "interpreter.fix", diagnostics = true },
  explain = { command = "interpreter.explain" },
  ask = { command = "interpreter.ask", prompt = "required" },
  refactor = { command = "interpreter.refactor", prompt = "optional" },
  tests = { command = "interpreter.writeTests" },
}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Calls a client method with the 0.11 method syntax, or the 0.10 field syntax.
local function call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

--- window/showDocument: answers of explain/ask open in a split next to the code instead of
--- replacing the current window's buffer.
local function show_document(_, params)
  if type(params) ~= "table" or type(params.uri) ~= "string" then
    return { success = false }
  end
  if params.external then
    local ok = pcall(vim.ui.open, params.uri)
    return { success = ok }
  end
  local fname = vim.uri_to_fname(params.uri)
  local origin = vim.api.nvim_get_current_win()
  local ok = pcall(function()
    local bufnr = vim.fn.bufadd(fname)
    local win = vim.fn.win_findbuf(bufnr)[1]
    if win and vim.api.nvim_win_get_tabpage(win) == vim.api.nvim_get_current_tabpage() then
      vim.api.nvim_set_current_win(win)
      vim.cmd("silent edit!")
    else
      vim.cmd("botright split " .. vim.fn.fnameescape(fname))
    end
    vim.bo.bufhidden = "wipe"
  end)
  if ok and params.takeFocus == false then
    vim.api.nvim_set_current_win(origin)
  end
  return { success = ok }
end

--- The workspace folder for a buffer: the nearest folder with a root marker, else the
--- current directory (so one client serves files without markers). Nil for the answer
--- documents the server writes (they need no language server of their own).
function M.root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:find("/interpreter%-lsp[^/]*/[^/]+%.md$") then
    return nil
  end
  return vim.fs.root(bufnr, config.options.root_markers) or vim.fn.getcwd()
end

local function lsp_config()
  return {
    name = M.name,
    cmd = config.lsp_cmd(),
    cmd_env = config.env(),
    root_dir = function(bufnr, on_dir)
      local root = M.root_dir(bufnr)
      if root then
        on_dir(root)
      end
    end,
    filetypes = config.options.filetypes,
    init_options = config.init_options(),
    handlers = { ["window/showDocument"] = show_document },
  }
end

local augroup = vim.api.nvim_create_augroup("interpreter.lsp", { clear = true })

--- Starts (or reuses) a client for one buffer: the path for Neovim before 0.11.
local function start_legacy(bufnr)
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
    return
  end
  local c = lsp_config()
  local root = M.root_dir(bufnr)
  if not root then
    return
  end
  vim.lsp.start({
    name = c.name,
    cmd = c.cmd,
    cmd_env = c.cmd_env,
    init_options = c.init_options,
    handlers = c.handlers,
    root_dir = root,
  }, { bufnr = bufnr })
end

M.registered = false

--- Registers the language server: vim.lsp.config + vim.lsp.enable on 0.11+, a FileType
--- autocmd calling vim.lsp.start before that. Calling it again applies new options to
--- clients started afterwards.
function M.register()
  vim.api.nvim_clear_autocmds({ group = augroup })
  M.registered = true
  if vim.lsp.config and vim.lsp.enable and has_011 then
    local c = lsp_config()
    c.name = nil
    vim.lsp.config(M.name, c)
    vim.lsp.enable(M.name)
  else
    vim.api.nvim_create_autocmd("FileType", {
      group = augroup,
      pattern = config.options.filetypes or "*",
      callback = function(ev)
        start_legacy(ev.buf)
      end,
    })
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype ~= "" then
        start_legacy(b)
      end
    end
  end
  M.watch_progress()
end

--- The interpreter client attached to a buffer, if any.
---@param bufnr integer
function M.client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = M.name })[1]
end

--- Length of `s` in the client's position encoding.
local function encoded_len(s, encoding)
  if encoding == "utf-8" then
    return #s
  end
  if has_011 then
    return vim.str_utfindex(s, encoding == "utf-32" and "utf-32" or "utf-16")
  end
  local u32, u16 = vim.str_utfindex(s)
  return encoding == "utf-32" and u32 or u16
end

local function line_text(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
end

--- An LSP position for a byte column.
local function position(bufnr, row, col, encoding)
  local text = line_text(bufnr, row)
  col = math.min(col, #text)
  return { line = row, character = encoded_len(text:sub(1, col), encoding) }
end

--- The LSP range of whole lines `line1..line2` (1-based, inclusive).
function M.line_range(bufnr, line1, line2, encoding)
  local last = line2 - 1
  return {
    start = { line = line1 - 1, character = 0 },
    ["end"] = { line = last, character = encoded_len(line_text(bufnr, last), encoding) },
  }
end

--- Diagnostics on lines `line1..line2`, as LSP diagnostics. Ones that came from a language
--- server keep their original form; others are converted.
function M.diagnostics(bufnr, line1, line2, encoding)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local first, last = d.lnum, d.end_lnum or d.lnum
    if last >= line1 - 1 and first <= line2 - 1 then
      local lsp_d = d.user_data and d.user_data.lsp
      if type(lsp_d) == "table" and lsp_d.range and lsp_d.message then
        table.insert(out, lsp_d)
      else
        table.insert(out, {
          range = {
            start = position(bufnr, d.lnum, d.col or 0, encoding),
            ["end"] = position(bufnr, d.end_lnum or d.lnum, d.end_col or d.col or 0, encoding),
          },
          severity = d.severity,
          message = d.message,
          source = d.source,
          code = d.code,
        })
      end
    end
  end
  return out
end

--- The argument of an interpreter.* command: {uri, range, diagnostics?, prompt?}.
function M.command_args(action, bufnr, line1, line2, encoding, prompt)
  local spec = M.actions[action]
  local args = {
    uri = vim.uri_from_bufnr(bufnr),
    range = M.line_range(bufnr, line1, line2, encoding),
  }
  if spec.diagnostics then
    local diags = M.diagnostics(bufnr, line1, line2, encoding)
    if #diags > 0 then
      args.diagnostics = diags
    end
  end
  if spec.prompt and prompt and vim.trim(prompt) ~= "" then
    args.prompt = prompt
  end
  return args
end

local function notify(msg, level)
  vim.notify("interpreter: " .. msg, level or vim.log.levels.INFO)
end

--- Waits briefly for the client to attach (it may still be initializing right after a file
--- was opened).
local function wait_for_client(bufnr)
  local client = M.client(bufnr)
  if client or not M.registered or vim.bo[bufnr].buftype ~= "" then
    return client
  end
  vim.wait(5000, function()
    client = M.client(bufnr)
    return client ~= nil
  end, 20)
  return client
end

--- Runs a code action command on lines `line1..line2` of a buffer.
---@param action "fix"|"explain"|"ask"|"refactor"|"tests"
---@param o {bufnr?: integer, line1?: integer, line2?: integer, prompt?: string, on_done?: fun(err: table|nil)}
function M.run(action, o)
  o = o or {}
  local spec = M.actions[action]
  if not spec then
    notify("unknown action `" .. tostring(action) .. "`", vim.log.levels.ERROR)
    return
  end
  local bufnr = (o.bufnr == nil or o.bufnr == 0) and vim.api.nvim_get_current_buf() or o.bufnr
  local cursor = vim.api.nvim_win_get_cursor(0)[1]
  local line1, line2 = o.line1 or cursor, o.line2 or o.line1 or cursor
  if spec.prompt == "required" and (not o.prompt or vim.trim(o.prompt) == "") then
    vim.ui.input({ prompt = "Ask interpreter: " }, function(input)
      if input and vim.trim(input) ~= "" then
        M.run(action, vim.tbl_extend("force", o, { bufnr = bufnr, line1 = line1, line2 = line2, prompt = input }))
      end
    end)
    return
  end
  local client = wait_for_client(bufnr)
  if not client then
    notify(
      "the language server is not attached to this buffer. Call require('interpreter').setup() "
        .. "and check :checkhealth interpreter (buffer "
        .. bufnr
        .. ")",
      vim.log.levels.ERROR
    )
    return
  end
  local params = {
    command = spec.command,
    arguments = { M.command_args(action, bufnr, line1, line2, client.offset_encoding or "utf-16", o.prompt) },
  }
  call(client, "request", "workspace/executeCommand", params, function(err)
    if err then
      notify(spec.command .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if o.on_done then
      o.on_done(err)
    end
  end, bufnr)
end

--- Running code actions by client id and progress token, from LspProgress.
M.running = {}

local progress_group = vim.api.nvim_create_augroup("interpreter.progress", { clear = true })

function M.watch_progress()
  vim.api.nvim_clear_autocmds({ group = progress_group })
  vim.api.nvim_create_autocmd("LspProgress", {
    group = progress_group,
    callback = function(ev)
      local data = ev.data or {}
      local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
      local params = data.params
      if not client or client.name ~= M.name or not params or type(params.value) ~= "table" then
        return
      end
      local v, token = params.value, params.token
      M.running[client.id] = M.running[client.id] or {}
      if v.kind == "begin" then
        M.running[client.id][token] = v.title or "interpreter"
      elseif v.kind == "end" then
        local title = M.running[client.id][token] or "interpreter"
        M.running[client.id][token] = nil
        if config.options.notify_progress then
          vim.notify(title .. ": " .. (v.message or "done"), vim.log.levels.INFO)
        end
      end
    end,
  })
end

--- Cancels every running code action (window/workDoneProgress/cancel). Returns how many.
function M.cancel_all()
  local n = 0
  for id, tokens in pairs(M.running) do
    local client = vim.lsp.get_client_by_id(id)
    for token in pairs(tokens) do
      if client then
        call(client, "notify", "window/workDoneProgress/cancel", { token = token })
        n = n + 1
      end
    end
  end
  return n
end

return M
