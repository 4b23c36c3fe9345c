-- A JSON-RPC 2.0 connection to an ACP agent over stdio with newline-delimited framing,
-- on top of vim.system. Knows nothing about sessions or the UI: chat.lua does that.
--
-- Every handler runs on the main loop (vim.schedule), in the order the agent sent the
-- messages. Request ids from the agent may be numbers or strings and are echoed verbatim.
local M = {}

---@class interpreter.AcpHandlers
---@field on_request fun(method: string, params: table, reply: fun(result: any, err: table|nil))
---@field on_notification fun(method: string, params: table)
---@field on_exit fun(code: integer, signal: integer, stderr: string[])

---@class interpreter.AcpConnection
---@field proc vim.SystemObj
---@field pending table<integer, fun(err: table|nil, result: any)>
---@field stderr string[]  The last lines the agent logged.
---@field closed boolean
local Connection = {}
Connection.__index = Connection

--- How many stderr lines to keep for error reports.
local STDERR_LINES = 200

local function decode(line)
  local ok, msg = pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
  if ok and type(msg) == "table" then
    return msg
  end
  return nil
end

--- Starts the agent. Returns the connection, or nil and an error message (e.g. the binary
--- was not found).
---@param cmd string[]
---@param opts {cwd?: string, env?: table<string,string>, handlers: interpreter.AcpHandlers, trace?: string}
---  `trace`: a file that gets every frame, prefixed with "<- " (from the agent) or "-> ".
---@return interpreter.AcpConnection|nil, string|nil
function M.start(cmd, opts)
  local self = setmetatable({
    pending = {},
    next_id = 0,
    stderr = {},
    closed = false,
    handlers = opts.handlers,
    cmd = cmd,
  }, Connection)
  if opts.trace then
    self.trace = io.open(opts.trace, "a")
  end
  local buffered = ""
  local err_buffered = ""
  local ok, proc = pcall(vim.system, cmd, {
    cwd = opts.cwd,
    env = opts.env,
    stdin = true,
    text = true,
    stdout = function(_, data)
      if not data then
        return
      end
      buffered = buffered .. data
      local lines = {}
      local start = 1
      while true do
        local nl = buffered:find("\n", start, true)
        if not nl then
          break
        end
        table.insert(lines, buffered:sub(start, nl - 1))
        start = nl + 1
      end
      buffered = buffered:sub(start)
      if #lines > 0 then
        vim.schedule(function()
          for _, line in ipairs(lines) do
            self:_dispatch(line)
          end
        end)
      end
    end,
    stderr = function(_, data)
      if not data then
        return
      end
      err_buffered = err_buffered .. data
      local lines = vim.split(err_buffered, "\n", { plain = true })
      err_buffered = table.remove(lines)
      vim.schedule(function()
        for _, l in ipairs(lines) do
          table.insert(self.stderr, l)
          if #self.stderr > STDERR_LINES then
            table.remove(self.stderr, 1)
          end
        end
      end)
    end,
  }, function(out)
    vim.schedule(function()
      if err_buffered ~= "" then
        table.insert(self.stderr, err_buffered)
        err_buffered = ""
      end
      self:_closed(out.code, out.signal)
    end)
  end)
  if not ok then
    return nil, ("could not start `%s`: %s"):format(table.concat(cmd, " "), tostring(proc))
  end
  self.proc = proc
  return self, nil
end

function Connection:_closed(code, signal)
  if self.closed then
    return
  end
  self.closed = true
  local pending = self.pending
  self.pending = {}
  local err = { code = -32099, message = ("the agent exited (code %d, signal %d)"):format(code, signal) }
  for _, cb in pairs(pending) do
    pcall(cb, err, nil)
  end
  if self.trace then
    self.trace:close()
    self.trace = nil
  end
  if self.handlers.on_exit then
    self.handlers.on_exit(code, signal, self.stderr)
  end
end

function Connection:_trace(prefix, line)
  if self.trace then
    self.trace:write(prefix, line, "\n")
    self.trace:flush()
  end
end

function Connection:_send(msg)
  if self.closed then
    return false
  end
  local line = vim.json.encode(msg)
  self:_trace("-> ", line)
  local ok = pcall(self.proc.write, self.proc, line .. "\n")
  return ok
end

function Connection:_dispatch(line)
  if line:match("^%s*$") then
    return
  end
  self:_trace("<- ", line)
  local msg = decode(line)
  if not msg then
    table.insert(self.stderr, "(not JSON on stdout) " .. line:sub(1, 200))
    return
  end
  if msg.method and msg.id ~= nil then
    local id = msg.id
    local replied = false
    local function reply(result, err)
      if replied then
        return
      end
      replied = true
      if err then
        self:_send({ jsonrpc = "2.0", id = id, error = err })
      else
        self:_send({ jsonrpc = "2.0", id = id, result = result == nil and vim.NIL or result })
      end
    end
    local ok, e = pcall(self.handlers.on_request, msg.method, msg.params or {}, reply)
    if not ok then
      reply(nil, { code = -32603, message = "the Neovim client failed: " .. tostring(e) })
    end
  elseif msg.method then
    local ok, e = pcall(self.handlers.on_notification, msg.method, msg.params or {})
    if not ok then
      vim.notify("interpreter: handling " .. msg.method .. " failed: " .. tostring(e), vim.log.levels.ERROR)
    end
  elseif msg.id ~= nil then
    local cb = self.pending[msg.id]
    self.pending[msg.id] = nil
    if cb then
      cb(msg.error, msg.result)
    end
  end
end

--- Sends a request; `cb(err, result)` runs on the main loop. Returns the request id.
---@param method string
---@param params table
---@param cb fun(err: table|nil, result: any)
---@return integer|nil
function Connection:request(method, params, cb)
  self.next_id = self.next_id + 1
  local id = self.next_id
  self.pending[id] = cb
  if not self:_send({ jsonrpc = "2.0", id = id, method = method, params = params }) then
    self.pending[id] = nil
    vim.schedule(function()
      cb({ code = -32099, message = "the agent is not running" }, nil)
    end)
    return nil
  end
  return id
end

---@param method string
---@param params table
function Connection:notify(method, params)
  return self:_send({ jsonrpc = "2.0", method = method, params = params })
end

--- Stops the agent: closes stdin, then SIGTERM, then SIGKILL if it lingers.
function Connection:stop()
  if self.closed or not self.proc then
    return
  end
  pcall(self.proc.write, self.proc, nil)
  pcall(self.proc.kill, self.proc, "sigterm")
  local proc = self.proc
  vim.defer_fn(function()
    if not self.closed then
      pcall(proc.kill, proc, "sigkill")
    end
  end, 2000)
end

return M
