-- ACP fs/read_text_file and fs/write_text_file, served from Neovim's buffers.
--
-- Reads return a loaded buffer's current (possibly unsaved) text, else the file on disk.
-- Writes update a loaded buffer with a minimal line diff (one undo step, marks and cursor
-- kept where the text did not change) and save it, or write the file on disk, so the
-- agent's shell commands see the same text as its file tools. After an undo, refresh()
-- brings the buffers of the files the agent put back up to date.
local M = {}

local uv = vim.uv or vim.loop

local function normalize(path)
  local real = uv.fs_realpath(path)
  return vim.fs.normalize(real or path)
end

--- The loaded buffer showing `path`, if any.
---@param path string
---@return integer|nil
function M.find_buffer(path)
  local want = normalize(path)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" and normalize(name) == want then
        return b
      end
    end
  end
  return nil
end

local function buffer_text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local text = table.concat(lines, "\n")
  local empty = #lines == 1 and lines[1] == ""
  if not empty and (vim.bo[bufnr].eol or vim.bo[bufnr].fixeol) then
    text = text .. "\n"
  end
  return text
end

local function read_disk(path)
  local f, err = io.open(path, "rb")
  if not f then
    return nil, err
  end
  local text = f:read("*a")
  f:close()
  return text
end

--- Keeps lines `line` (1-based) .. `line + limit - 1` of `text`.
local function slice(text, line, limit)
  if not line and not limit then
    return text
  end
  local first = math.max(tonumber(line) or 1, 1)
  local count = tonumber(limit)
  local out, n, pos = {}, 0, 1
  while pos <= #text do
    local nl = text:find("\n", pos, true)
    local stop = nl or #text
    n = n + 1
    if n >= first and (not count or n < first + count) then
      table.insert(out, text:sub(pos, stop))
    end
    if count and n >= first + count - 1 then
      break
    end
    pos = stop + 1
  end
  return table.concat(out)
end

--- ACP error objects.
local function invalid(msg)
  return { code = -32602, message = msg }
end
local function not_found(msg)
  return { code = -32002, message = msg }
end

--- fs/read_text_file {path, line?, limit?} → {content}
---@return table|nil result, table|nil err
function M.read(params)
  local path = params.path
  if type(path) ~= "string" or not vim.startswith(path, "/") then
    return nil, invalid("fs/read_text_file needs an absolute `path`, got " .. vim.inspect(path))
  end
  local bufnr = M.find_buffer(path)
  local text
  if bufnr then
    text = buffer_text(bufnr)
  else
    local err
    text, err = read_disk(path)
    if not text then
      return nil, not_found(("cannot read %s: %s"):format(path, err))
    end
  end
  return { content = slice(text, params.line, params.limit) }, nil
end

local function split_lines(text)
  local eol = text:sub(-1) == "\n"
  if eol then
    text = text:sub(1, -2)
  end
  return vim.split(text, "\n", { plain = true }), eol
end

local diff = (vim.text and vim.text.diff) or vim.diff

--- Replaces a buffer's lines with `new`, touching only the lines that differ.
local function set_buffer_lines(bufnr, new)
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local a, b = table.concat(old, "\n") .. "\n", table.concat(new, "\n") .. "\n"
  if a == b then
    return
  end
  local hunks = diff(a, b, { result_type = "indices" })
  -- Bottom up, so earlier hunks' line numbers stay valid.
  for i = #hunks, 1, -1 do
    local sa, ca, sb, cb = unpack(hunks[i])
    local replacement = vim.list_slice(new, sb, sb + cb - 1)
    if ca == 0 then
      vim.api.nvim_buf_set_lines(bufnr, sa, sa, false, replacement)
    else
      vim.api.nvim_buf_set_lines(bufnr, sa - 1, sa - 1 + ca, false, replacement)
    end
  end
end

local function write_disk(path, content)
  local dir = vim.fs.dirname(path)
  if dir and vim.fn.isdirectory(dir) == 0 then
    vim.fn.mkdir(dir, "p")
  end
  local f, err = io.open(path, "wb")
  if not f then
    return err
  end
  f:write(content)
  f:close()
  return nil
end

--- fs/write_text_file {path, content} → null. Only paths inside `root` are written.
---@param params table
---@param root string  The session folder.
---@return table|nil result, table|nil err
function M.write(params, root)
  local path, content = params.path, params.content
  if type(path) ~= "string" or not vim.startswith(path, "/") then
    return nil, invalid("fs/write_text_file needs an absolute `path`, got " .. vim.inspect(path))
  end
  if type(content) ~= "string" then
    return nil, invalid("fs/write_text_file needs a string `content`")
  end
  local target = vim.fs.normalize(path)
  local dir_real = uv.fs_realpath(vim.fs.dirname(target))
  if dir_real then
    target = vim.fs.joinpath(dir_real, vim.fs.basename(target))
  end
  local base = normalize(root)
  if target ~= base and not vim.startswith(target, base .. "/") then
    return nil, invalid(("refusing to write %s: it is outside the session folder %s"):format(path, base))
  end
  local bufnr = M.find_buffer(path)
  if not bufnr then
    local err = write_disk(path, content)
    if err then
      return nil, { code = -32603, message = ("cannot write %s: %s"):format(path, err) }
    end
    return vim.NIL, nil
  end
  local lines, eol = split_lines(content)
  if vim.bo[bufnr].fileformat == "dos" then
    for i, l in ipairs(lines) do
      lines[i] = l:gsub("\r$", "")
    end
  end
  local ok, err = pcall(function()
    if not vim.bo[bufnr].modifiable then
      error("the buffer is not modifiable")
    end
    set_buffer_lines(bufnr, lines)
    if not eol then
      vim.bo[bufnr].eol = false
      vim.bo[bufnr].fixeol = false
    else
      vim.bo[bufnr].eol = true
    end
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd("silent noautocmd keepalt write!")
    end)
  end)
  if not ok then
    return nil, { code = -32603, message = ("cannot write %s in Neovim: %s"):format(path, err) }
  end
  return vim.NIL, nil
end

--- After the agent put files back on disk (an undo or rewind): reloads the buffers of the
--- `restored` files and has Neovim notice that the `removed` ones are gone. A buffer with
--- unsaved changes is left as it is: its text is the user's.
---@param root string  The session folder the paths are relative to.
---@param restored string[]
---@param removed string[]
---@return string[] unsaved  paths whose buffers were left alone for their unsaved changes
---@return string[] failed   "path: error" for buffers that could not be refreshed
function M.refresh(root, restored, removed)
  local unsaved, failed = {}, {}
  local function each(paths, refresh)
    for _, rel in ipairs(paths) do
      local bufnr = M.find_buffer(vim.fs.joinpath(root, rel))
      if bufnr and vim.bo[bufnr].modified then
        table.insert(unsaved, rel)
      elseif bufnr then
        local ok, err = pcall(refresh, bufnr)
        if not ok then
          table.insert(failed, rel .. ": " .. tostring(err))
        end
      end
    end
  end
  each(restored, function(bufnr)
    -- :edit! rather than :checktime, which goes by the file's time and size and could miss
    -- a restore; it keeps the cursor, and the agent's version stays one undo away.
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd("silent edit!")
    end)
  end)
  each(removed, function(bufnr)
    -- silent!: a plain :checktime would show E211 and pause a second per file; the
    -- summary notification says what was removed.
    vim.cmd("silent! checktime " .. bufnr)
  end)
  return unsaved, failed
end

return M
