-- The chat transcript: a scratch buffer made of entries (a heading, a streamed message, a
-- tool call, the plan…). Each entry owns a run of lines; updating an entry rewrites only its
-- lines, so a tool call's status can change after text was streamed below it.
local M = {}

---@class interpreter.Entry
---@field lines string[]
---@field prefix string|nil  For streamed entries: the prefix of every new line.

---@class interpreter.Transcript
---@field buf integer
---@field entries interpreter.Entry[]
local Transcript = {}
Transcript.__index = Transcript

--- Buffer lines cannot hold newlines: split any line that has them.
local function normalize(lines)
  local out = {}
  for _, l in ipairs(lines) do
    l = tostring(l):gsub("\r\n", "\n")
    if l:find("\n", 1, true) then
      vim.list_extend(out, vim.split(l, "\n", { plain = true }))
    else
      table.insert(out, l)
    end
  end
  if #out == 0 then
    out = { "" }
  end
  return out
end

---@param buf integer
---@return interpreter.Transcript
function M.new(buf)
  local self = setmetatable({ buf = buf, entries = {} }, Transcript)
  self:_set(0, -1, {})
  return self
end

function Transcript:_set(first, last, lines)
  if not (vim.api.nvim_buf_is_valid(self.buf) and vim.api.nvim_buf_is_loaded(self.buf)) then
    return
  end
  vim.bo[self.buf].modifiable = true
  vim.api.nvim_buf_set_lines(self.buf, first, last, false, lines)
  vim.bo[self.buf].modifiable = false
  vim.bo[self.buf].modified = false
end

--- The first buffer line (0-based) of entry `index`.
function Transcript:_start(index)
  local n = 0
  for i = 1, index - 1 do
    n = n + #self.entries[i].lines
  end
  return n
end

--- Keeps windows showing the end of the transcript following it.
function Transcript:_follow(old_count)
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local row = vim.api.nvim_win_get_cursor(win)[1]
    if row >= old_count then
      pcall(vim.api.nvim_win_set_cursor, win, { vim.api.nvim_buf_line_count(self.buf), 0 })
    end
  end
end

--- Appends an entry; returns its index.
---@param lines string[]
---@param prefix string|nil
---@return integer
function Transcript:add(lines, prefix)
  lines = normalize(lines)
  local old_count = self:line_count()
  table.insert(self.entries, { lines = vim.deepcopy(lines), prefix = prefix })
  if old_count == 0 then
    self:_set(0, -1, lines)
  else
    self:_set(old_count, old_count, lines)
  end
  self:_follow(old_count)
  return #self.entries
end

--- Replaces the lines of entry `index`.
---@param index integer
---@param lines string[]
function Transcript:update(index, lines)
  local e = self.entries[index]
  if not e then
    return
  end
  lines = normalize(lines)
  local old_count = self:line_count()
  local start = self:_start(index)
  local n = #e.lines
  e.lines = vim.deepcopy(lines)
  if old_count == n and start == 0 then
    self:_set(0, -1, lines)
  else
    self:_set(start, start + n, lines)
  end
  self:_follow(old_count)
end

--- Appends streamed text to entry `index` (its last line continues; new lines get the
--- entry's prefix).
---@param index integer
---@param text string
function Transcript:stream(index, text)
  local e = self.entries[index]
  if not e or text == "" then
    return
  end
  local old_count = self:line_count()
  local start = self:_start(index)
  local last = start + #e.lines - 1
  local parts = vim.split(text:gsub("\r\n", "\n"), "\n", { plain = true })
  local changed = {}
  e.lines[#e.lines] = e.lines[#e.lines] .. parts[1]
  table.insert(changed, e.lines[#e.lines])
  for i = 2, #parts do
    local line = (e.prefix or "") .. parts[i]
    table.insert(e.lines, line)
    table.insert(changed, line)
  end
  self:_set(last, last + 1, changed)
  self:_follow(old_count)
end

--- Shows the transcript in another buffer (the old one was deleted).
---@param buf integer
function Transcript:rebind(buf)
  self.buf = buf
  local all = {}
  for _, e in ipairs(self.entries) do
    vim.list_extend(all, e.lines)
  end
  self:_set(0, -1, all)
end

--- The number of lines the entries hold.
function Transcript:line_count()
  local n = 0
  for _, e in ipairs(self.entries) do
    n = n + #e.lines
  end
  return n
end

--- The whole transcript as text (for tests and `:Interpreter chat` yanks).
function Transcript:text()
  local out = {}
  for _, e in ipairs(self.entries) do
    vim.list_extend(out, e.lines)
  end
  return table.concat(out, "\n")
end

return M
