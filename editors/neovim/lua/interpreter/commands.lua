-- The `:Interpreter {subcommand}` user command.
local M = {}

local function selection_context(bufnr, line1, line2)
  local lines = vim.api.nvim_buf_get_lines(bufnr, line1 - 1, line2, false)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local label = (name ~= "" and vim.fn.fnamemodify(name, ":~:.") or ("buffer " .. bufnr))
    .. (":%d-%d"):format(line1, line2)
  return {
    uri = (name ~= "" and vim.uri_from_fname(name) or ("untitled:" .. bufnr)) .. ("#L%d-%d"):format(line1, line2),
    text = table.concat(lines, "\n"),
    label = label,
  }
end

---@type table<string, {run: fun(c: table), complete?: fun(lead: string, words: string[]): string[], desc: string}>
M.subcommands = {
  fix = {
    desc = "fix the diagnostics on the line or selection (LSP)",
    run = function(c)
      require("interpreter.lsp").run("fix", { line1 = c.line1, line2 = c.line2 })
    end,
  },
  explain = {
    desc = "explain the line or selection (LSP)",
    run = function(c)
      require("interpreter.lsp").run("explain", { line1 = c.line1, line2 = c.line2 })
    end,
  },
  ask = {
    desc = "ask about or change the line or selection: :Interpreter ask {prompt} (LSP)",
    run = function(c)
      require("interpreter.lsp").run("ask", { line1 = c.line1, line2 = c.line2, prompt = c.rest })
    end,
  },
  refactor = {
    desc = "refactor the selection: :Interpreter refactor [how] (LSP)",
    run = function(c)
      require("interpreter.lsp").run("refactor", { line1 = c.line1, line2 = c.line2, prompt = c.rest })
    end,
  },
  tests = {
    desc = "write tests for the line or selection (LSP)",
    run = function(c)
      require("interpreter.lsp").run("tests", { line1 = c.line1, line2 = c.line2 })
    end,
  },
  chat = {
    desc = "open the ACP chat; :Interpreter chat {prompt} sends a prompt (with a range: the selection too)",
    run = function(c)
      local context = c.range > 0 and selection_context(vim.api.nvim_get_current_buf(), c.line1, c.line2) or nil
      require("interpreter.chat").open({ prompt = c.rest, context = context })
    end,
  },
  cancel = {
    desc = "cancel the chat's running turn and running code actions",
    run = function()
      if not require("interpreter").cancel() then
        vim.notify("interpreter: nothing is running", vim.log.levels.INFO)
      end
    end,
  },
  new = {
    desc = "start over: stop the chat's agent, clear the transcript, open a new chat",
    run = function(c)
      require("interpreter.chat").reset()
      require("interpreter.chat").open({ prompt = c.rest })
    end,
  },
  undo = {
    desc = "take back the chat's last turn, or N turns: :Interpreter undo [N] (files and conversation)",
    run = function(c)
      require("interpreter.chat").undo(c.rest)
    end,
  },
  rewind = {
    desc = "list the chat's turns, or go back to just before one: :Interpreter rewind [N|turnId] [code|conversation|both]",
    run = function(c)
      require("interpreter.chat").rewind(c.rest)
    end,
    complete = function(lead, words)
      -- words: "rewind", the turn, then what goes back.
      if #words ~= 3 then
        return {}
      end
      return vim.tbl_filter(function(w)
        return vim.startswith(w, lead)
      end, { "both", "code", "conversation" })
    end,
  },
  stop = {
    desc = "stop the chat's agent process",
    run = function()
      require("interpreter.chat").stop()
    end,
  },
  mode = {
    desc = "switch the chat session's mode: read-only, auto, full-access",
    run = function(c)
      if c.rest == "" then
        local st = require("interpreter.chat").state()
        vim.notify("interpreter: mode " .. tostring(st and st.mode), vim.log.levels.INFO)
        return
      end
      require("interpreter.chat").set_mode(c.rest)
    end,
    complete = function(lead)
      local ids = require("interpreter.chat").mode_ids()
      if #ids == 0 then
        ids = { "read-only", "auto", "full-access" }
      end
      return vim.tbl_filter(function(id)
        return vim.startswith(id, lead)
      end, ids)
    end,
  },
  install = {
    desc = "install the binary into the plugin's data folder: :Interpreter install [version|latest] [cargo]",
    run = function(c)
      local opts = {}
      for word in c.rest:gmatch("%S+") do
        if word == "cargo" or word == "release" then
          opts.method = word
        else
          opts.version = word
        end
      end
      require("interpreter.install").install(opts)
    end,
    complete = function(lead)
      return vim.tbl_filter(function(w)
        return vim.startswith(w, lead)
      end, { "latest", "cargo", "release" })
    end,
  },
  log = {
    desc = "show the chat agent's recent stderr",
    run = function()
      local lines = require("interpreter.chat").stderr()
      if #lines == 0 then
        lines = { "(the agent logged nothing; set env INTERPRETER_LOG=debug in setup({ env = … }))" }
      end
      vim.cmd("botright new")
      local buf = vim.api.nvim_get_current_buf()
      vim.bo[buf].buftype = "nofile"
      vim.bo[buf].bufhidden = "wipe"
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    end,
  },
}

--- Subcommand names, sorted.
function M.names()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return names
end

local function complete(arglead, cmdline)
  -- Drop the command name (and a range glued to it, as in '<,'>Interpreter).
  local words = vim.split(cmdline:gsub("^%s*%S*%s*", "", 1), "%s+", { trimempty = false })
  if #words <= 1 then
    return vim.tbl_filter(function(name)
      return vim.startswith(name, arglead)
    end, M.names())
  end
  local sub = M.subcommands[words[1]]
  if sub and sub.complete then
    return sub.complete(arglead, words)
  end
  return {}
end

--- Runs `:Interpreter {sub} [args]` from command arguments.
function M.dispatch(c)
  local name, rest = (c.args or ""):match("^%s*(%S*)%s*(.-)%s*$")
  if name == "" then
    name = "chat"
  end
  local sub = M.subcommands[name]
  if not sub then
    vim.notify(
      ("interpreter: unknown subcommand `%s` (known: %s)"):format(name, table.concat(M.names(), ", ")),
      vim.log.levels.ERROR
    )
    return
  end
  sub.run({ rest = rest, line1 = c.line1, line2 = c.line2, range = c.range })
end

--- Creates `:Interpreter` (idempotent).
function M.create()
  vim.api.nvim_create_user_command("Interpreter", M.dispatch, {
    nargs = "*",
    range = true,
    complete = complete,
    desc = "interpreter: fix, explain, ask, refactor, tests, chat, new, cancel, undo, rewind, stop, mode, install, log",
  })
end

return M
