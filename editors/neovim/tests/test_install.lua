-- :Interpreter install against a local HTTP server serving dist/ (DOWNLOAD_BASE) and a copy
-- of it with a tampered archive (TAMPERED_BASE): a tampered archive is refused and leaves
-- nothing behind; a good one lands in stdpath("data")/interpreter/bin, where the plugin finds
-- it with PATH unchanged; `:Interpreter install` works in the background; :checkhealth reports
-- the binary, its version and the key.
--
-- Environment (run.sh sets it): PLUGIN_DIR, DOWNLOAD_BASE, TAMPERED_BASE, DIST_VERSION,
-- INSTALL_TARGET (the archive's target triple).
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/helpers.lua")

H.run(function()
  H.load_plugin()
  local notes = H.capture_notify()
  local base = H.env("DOWNLOAD_BASE")
  local tampered = H.env("TAMPERED_BASE")
  local version = H.env("DIST_VERSION")
  local target = H.env("INSTALL_TARGET")
  local install = require("interpreter.install")
  local config = require("interpreter.config")
  require("interpreter").setup({ lsp = false })

  -- Pieces without a download.
  H.check(vim.startswith(install.binary(), vim.fn.stdpath("data")), "the install folder is under stdpath('data')")
  H.check(install.archive_name("1.2.3", "x86_64-apple-darwin") == "interpreter-v1.2.3-x86_64-apple-darwin.tar.gz", "archive names follow the release")
  local sums = ("a"):rep(64) .. "  interpreter-v1.2.3-x.tar.gz\n" .. ("B"):rep(64) .. " *other.tar.gz\n"
  H.check(install.listed_sha256(sums, "interpreter-v1.2.3-x.tar.gz") == ("a"):rep(64), "SHA256SUMS lookup")
  H.check(install.listed_sha256(sums, "other.tar.gz") == ("b"):rep(64), "SHA256SUMS lookup (binary mode, upper case)")
  H.check(install.listed_sha256(sums, "missing.tar.gz") == nil, "SHA256SUMS lookup of a missing file")
  H.check(
    table.concat(install.cargo_cmd("0.1.0"), " ")
      == "cargo install --locked --root " .. install.root() .. " --git https://github.com/openinterpreter/interpreter --tag v0.1.0 interpreter",
    "cargo install builds the tagged release into the same folder"
  )
  local t = install.target()
  H.check(t == nil or t:match("^[%w_]+%-unknown%-linux%-musl$") or t:match("%-apple%-darwin$"), "this machine's release target: " .. tostring(t))
  local _, before = config.find_binary()
  H.check(before ~= "installed", "nothing installed yet (binary from " .. tostring(before) .. ")")

  -- A tampered archive is refused and installs nothing.
  local ok, msg = install.install({ wait = true, base = tampered, version = version, target = target })
  H.check(not ok and H.contains(msg, "checksum mismatch"), "a tampered archive is refused: " .. tostring(msg))
  H.check(vim.fn.filereadable(install.binary()) == 0, "no binary after a refused install")

  -- A version that is not there.
  ok, msg = install.install({ wait = true, base = base, version = "9.9.9", target = target })
  H.check(not ok and H.contains(msg, "could not download"), "a missing version is a clear error")

  -- The real one ("latest" from the base's `latest` file), blocking as lazy.nvim's build does.
  ok, msg = install.install({ wait = true, base = base, version = "latest", target = target })
  H.check(ok, "install from dist/: " .. tostring(msg))
  H.check(H.contains(msg, "interpreter " .. version), "the installed binary answers --version")
  local bin, source = config.find_binary()
  H.check(source == "installed" and bin == install.binary(), "the plugin finds the installed binary without PATH: " .. bin)
  H.check(config.acp_cmd()[1] == install.binary() and config.lsp_cmd()[1] == install.binary(), "acp and lsp commands use it")

  -- :Interpreter install in the background (INTERPRETER_DOWNLOAD_BASE / INTERPRETER_TARGET).
  vim.env.INTERPRETER_DOWNLOAD_BASE = base
  vim.env.INTERPRETER_TARGET = target
  local mtime = vim.uv.fs_stat(install.binary()).mtime.sec
  local seen = #notes
  vim.cmd("Interpreter install " .. version)
  H.check(#notes == seen + 1 and H.contains(notes[#notes], "installing " .. version), ":Interpreter install returns at once and works in the background")
  H.wait(30000, function()
    for i = seen + 1, #notes do
      local n = notes[i]
      if H.contains(n, "interpreter: installed") or H.contains(n, "install failed") then
        return true
      end
    end
    return false
  end, ":Interpreter install to finish")
  local last = notes[#notes]
  H.check(H.contains(last, "installed interpreter " .. version), ":Interpreter install " .. version .. ": " .. last)
  H.check(vim.uv.fs_stat(install.binary()).mtime.sec >= mtime, "the binary was replaced in place")

  -- :checkhealth interpreter: the binary, its version, the key.
  local function health_text()
    vim.cmd("checkhealth interpreter")
    local text = table.concat(H.buffer_lines(0), "\n")
    vim.cmd("bwipeout!")
    return text
  end
  local text = health_text()
  H.check(H.contains(text, ("binary: %s (interpreter %s), from :Interpreter install"):format(install.binary(), version)), "checkhealth names the binary and its version")
  H.check(H.contains(text, "no API key for provider `kimi`: MOONSHOT_API_KEY is not set"), "checkhealth says the key is missing")
  require("interpreter").setup({ lsp = false, env = { MOONSHOT_API_KEY = "sk-health-test" } })
  text = health_text()
  H.check(H.contains(text, "API key for provider `kimi`: MOONSHOT_API_KEY from setup({ env })"), "checkhealth finds the key in setup({ env })")
  H.check(not H.contains(text, "sk-health-test"), "checkhealth never prints the key")
  local home = H.env("AGENT_HOME")
  local f = assert(io.open(home .. "/config.toml", "w"))
  f:write('model_provider = "deepseek"\n\n[model_providers.deepseek]\napi_key = "sk-stored"\n')
  f:close()
  require("interpreter").setup({ lsp = false })
  text = health_text()
  H.check(H.contains(text, "API key for provider `deepseek`: api_key in " .. home .. "/config.toml"), "checkhealth reads config.toml's provider and stored key")
  H.check(not H.contains(text, "sk-stored"), "… without printing it")
  H.out("RESULT: ok")
end)
