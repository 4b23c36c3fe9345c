-- Shared helpers for the headless tests (run by run.sh as `nvim --headless --clean -l FILE`).
-- Output goes to stdout with io.stdout:write (print() goes to stderr in headless mode);
-- every failure exits non-zero with :cquit, and every wait has a timeout.
local H = {}

function H.out(s)
  io.stdout:write(s .. "\n")
  io.stdout:flush()
end

function H.fail(msg)
  H.out("FAIL: " .. msg)
  io.stdout:flush()
  vim.cmd("cquit 1")
end

--- Runs `fn` and turns any Lua error into a failure (a raw error in `-l` mode prints a
--- traceback and exits 1 too, but this keeps the message on stdout).
function H.run(fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    H.fail(tostring(err))
  end
  vim.cmd("qa!")
end

function H.env(name)
  local v = os.getenv(name)
  if not v or v == "" then
    H.fail("missing environment variable " .. name)
  end
  return v
end

function H.check(cond, msg)
  if not cond then
    H.fail(msg)
  end
  H.out("ok: " .. msg)
end

function H.wait(ms, cond, what)
  local ok = vim.wait(ms, cond, 20)
  if not ok then
    H.fail("timed out after " .. ms .. " ms waiting for " .. what)
  end
end

--- Puts the plugin (editors/neovim) on the runtimepath and sources plugin/interpreter.lua.
function H.load_plugin()
  local plugin = H.env("PLUGIN_DIR")
  vim.opt.runtimepath:prepend(plugin)
  vim.cmd("runtime! plugin/interpreter.lua")
  H.check(vim.fn.exists(":Interpreter") == 2, ":Interpreter is defined by plugin/interpreter.lua")
end

--- Records vim.notify messages (and still shows them on stdout).
function H.capture_notify()
  local messages = {}
  vim.notify = function(msg, level)
    table.insert(messages, msg)
    H.out(("notify[%s]: %s"):format(tostring(level), msg))
  end
  return messages
end

function H.buffer_lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

function H.read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

function H.contains(haystack, needle)
  return haystack:find(needle, 1, true) ~= nil
end

return H
