-- :Interpreter install: puts the `interpreter` binary into the plugin's data folder
-- (stdpath("data")/interpreter/bin), where config.binary() finds it without PATH changes.
--
-- From a release (the default): downloads <base>/v<version>/<archive> and
-- <base>/v<version>/SHA256SUMS with curl (or wget), refuses the archive unless its SHA-256 is
-- the one listed, unpacks it and checks that the binary answers --version. With cargo: runs
-- `cargo install --locked --root <data folder> …`, which builds from source into the same place.
local M = {}

M.repo = "openinterpreter/interpreter"
M.github = "https://github.com/" .. M.repo .. "/releases"

local is_windows = vim.fn.has("win32") == 1
local exe = is_windows and "interpreter.exe" or "interpreter"

--- The folder `:Interpreter install` writes to.
function M.root()
  return vim.fs.joinpath(vim.fn.stdpath("data"), "interpreter")
end

--- Where the installed binary is (whether or not it exists).
function M.binary()
  return vim.fs.joinpath(M.root(), "bin", exe)
end

--- The release target triple for this machine, or nil and why not.
---@return string|nil, string|nil
function M.target()
  local u = vim.uv.os_uname()
  local arch = ({ x86_64 = "x86_64", amd64 = "x86_64", AMD64 = "x86_64", aarch64 = "aarch64", arm64 = "aarch64", ARM64 = "aarch64" })[u.machine]
  if not arch then
    return nil, "no release build for the " .. u.machine .. " architecture"
  end
  if u.sysname == "Linux" then
    return arch .. "-unknown-linux-musl"
  elseif u.sysname == "Darwin" then
    return arch .. "-apple-darwin"
  end
  return nil, "no release build for " .. u.sysname .. " yet"
end

--- The archive name in a release.
function M.archive_name(version, target)
  return ("interpreter-v%s-%s.tar.gz"):format(version, target)
end

--- The SHA-256 that a SHA256SUMS text lists for `name`, or nil.
---@param sums string
---@param name string
---@return string|nil
function M.listed_sha256(sums, name)
  for line in vim.gsplit(sums, "\n", { plain = true }) do
    local hash, file = line:match("^(%x+)%s+%*?(%S+)%s*$")
    if hash and file == name and #hash == 64 then
      return hash:lower()
    end
  end
  return nil
end

--- The `cargo install` command line for a version ("latest" builds the default branch).
---@param version string
---@return string[]
function M.cargo_cmd(version)
  local cmd = { "cargo", "install", "--locked", "--root", M.root(), "--git", "https://github.com/" .. M.repo }
  if version ~= "latest" then
    vim.list_extend(cmd, { "--tag", "v" .. version })
  end
  return vim.list_extend(cmd, { "interpreter" })
end

-- Background installs run in a coroutine that yields while a command runs; `finishers` gets
-- what the coroutine returned or raised. (No pcall across a yield: PUC Lua 5.1 cannot.)
local finishers = setmetatable({}, { __mode = "k" })

local function drive(co, ...)
  local ok, res = coroutine.resume(co, ...)
  if coroutine.status(co) == "dead" and finishers[co] then
    finishers[co](ok, res)
  end
end

-- Runs a command: in a background install it yields until the command ends (the editor stays
-- responsive); otherwise it blocks.
local function run(cmd, opts)
  local co = coroutine.running()
  local background = co and finishers[co]
  local ok, proc = pcall(vim.system, cmd, opts or {}, background and function(res)
    vim.schedule(function()
      drive(co, res)
    end)
  end or nil)
  if not ok then
    return { code = 127, stdout = "", stderr = tostring(proc) }
  end
  if background then
    return coroutine.yield()
  end
  return proc:wait()
end

local function download(url, file)
  local cmd
  if vim.fn.executable("curl") == 1 then
    cmd = { "curl", "--proto", "=https,http", "-fsSL", "--retry", "3", "-o", file, url }
  elseif vim.fn.executable("wget") == 1 then
    cmd = { "wget", "-q", "-O", file, url }
  else
    error("curl or wget is needed to download " .. url, 0)
  end
  local r = run(cmd, { text = true })
  if r.code ~= 0 then
    error(("could not download %s: %s"):format(url, vim.trim(r.stderr or "")), 0)
  end
end

local function sha256_of(file)
  local tries = {
    { "sha256sum", file },
    { "shasum", "-a", "256", file },
    { "certutil", "-hashfile", file, "SHA256" },
  }
  for _, cmd in ipairs(tries) do
    if vim.fn.executable(cmd[1]) == 1 then
      local r = run(cmd, { text = true })
      local hash = r.code == 0 and (r.stdout or ""):match("(%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x)")
      if hash then
        return hash:lower()
      end
    end
  end
  error("sha256sum, shasum or certutil is needed to check the download", 0)
end

local function read(file)
  local f = assert(io.open(file, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function version_of(bin)
  local r = run({ bin, "--version" }, { text = true })
  if r.code ~= 0 then
    error(("%s --version failed: %s"):format(bin, vim.trim(r.stderr or "")), 0)
  end
  return vim.trim(r.stdout or "")
end

--- The download base: opts.base, else $INTERPRETER_DOWNLOAD_BASE, else the GitHub releases.
local function base_of(opts)
  local base = opts.base or vim.env.INTERPRETER_DOWNLOAD_BASE
  if base and base ~= "" then
    return (base:gsub("/+$", "")), true
  end
  return M.github .. "/download", false
end

local function from_release(opts, tmp)
  local target, why = opts.target, nil
  if not target or target == "" then
    target, why = M.target()
  end
  if not target then
    error(why .. "; use :Interpreter install cargo", 0)
  end
  local base, custom = base_of(opts)
  local version = opts.version
  if version == "latest" then
    local latest_url = custom and (base .. "/latest") or (M.github .. "/latest/download/latest")
    download(latest_url, tmp .. "/latest")
    version = vim.trim(read(tmp .. "/latest"))
  end
  version = version:gsub("^v", "")
  if not version:match("^%d+%.%d+%.%d+[%w.+-]*$") then
    error(("not a version: '%s'"):format(version), 0)
  end
  local name = M.archive_name(version, target)
  local archive = tmp .. "/" .. name
  download(("%s/v%s/%s"):format(base, version, name), archive)
  download(("%s/v%s/SHA256SUMS"):format(base, version), tmp .. "/SHA256SUMS")
  local expected = M.listed_sha256(read(tmp .. "/SHA256SUMS"), name)
  if not expected then
    error(("SHA256SUMS of v%s lists no %s; refusing to install"):format(version, name), 0)
  end
  local actual = sha256_of(archive)
  if actual ~= expected then
    error(("checksum mismatch for %s: SHA256SUMS says %s, the download is %s; refusing to install"):format(name, expected, actual), 0)
  end
  local unpacked = tmp .. "/x"
  vim.fn.mkdir(unpacked, "p")
  local r = run({ "tar", "-xzf", archive, "-C", unpacked }, { text = true })
  if r.code ~= 0 then
    error(("could not unpack %s: %s"):format(name, vim.trim(r.stderr or "")), 0)
  end
  local new = unpacked .. "/" .. exe
  if vim.fn.filereadable(new) == 0 then
    error(name .. " holds no " .. exe, 0)
  end
  -- Copy into the bin folder, then rename over the old binary (safe while it runs).
  local bin = M.binary()
  vim.fn.mkdir(vim.fs.dirname(bin), "p")
  local staged = bin .. ".new"
  assert(vim.uv.fs_copyfile(new, staged))
  assert(vim.uv.fs_chmod(staged, tonumber("755", 8)))
  assert(vim.uv.fs_rename(staged, bin))
  return bin
end

local function from_cargo(opts)
  if vim.fn.executable("cargo") == 0 then
    error("cargo is not on PATH (https://rustup.rs installs it)", 0)
  end
  local cmd = M.cargo_cmd(opts.version)
  opts.notify("interpreter: " .. table.concat(cmd, " ") .. " (this takes a few minutes)")
  local r = run(cmd, { text = true })
  if r.code ~= 0 then
    error("cargo install failed:\n" .. vim.trim(r.stderr or ""), 0)
  end
  return M.binary()
end

---@class interpreter.InstallOptions
---@field version string|nil  "0.1.0", "v0.1.0" or "latest"; default: the plugin's version
---@field method "release"|"cargo"|nil  default "release"
---@field base string|nil     download base (default $INTERPRETER_DOWNLOAD_BASE, else GitHub)
---@field target string|nil   target triple to fetch (default $INTERPRETER_TARGET, else this machine's)
---@field wait boolean|nil    block until done (for lazy.nvim's `build`)
---@field on_done fun(ok: boolean, result: string)|nil  called with the binary's version line or the error
---@field notify fun(msg: string, level?: integer)|nil

--- Installs the binary. Without `wait` it runs in the background and reports with vim.notify.
---@param opts interpreter.InstallOptions|nil
---@return boolean|nil ok, string|nil result  (with `wait`)
function M.install(opts)
  opts = vim.tbl_extend("force", {
    version = require("interpreter").version,
    target = vim.env.INTERPRETER_TARGET,
    method = "release",
    notify = function(msg, level)
      vim.notify(msg, level or vim.log.levels.INFO)
    end,
  }, opts or {})
  if opts.method ~= "release" and opts.method ~= "cargo" then
    error(("interpreter.install: method must be \"release\" or \"cargo\", got %s"):format(vim.inspect(opts.method)))
  end
  local tmp = vim.fn.tempname()

  local function work()
    vim.fn.mkdir(tmp, "p")
    local bin = opts.method == "cargo" and from_cargo(opts) or from_release(opts, tmp)
    return ("%s at %s"):format(version_of(bin), bin)
  end

  local function finish(ok, result)
    vim.fn.delete(tmp, "rf")
    result = tostring(result)
    if ok then
      opts.notify("interpreter: installed " .. result)
    else
      opts.notify("interpreter: install failed: " .. result, vim.log.levels.ERROR)
    end
    if opts.on_done then
      opts.on_done(ok, result)
    end
    return ok, result
  end

  if opts.wait then
    return finish(pcall(work))
  end
  opts.notify(("interpreter: installing %s (%s)…"):format(opts.version, opts.method))
  local co = coroutine.create(work)
  finishers[co] = finish
  drive(co)
end

return M
