-- How ACP session updates look in the chat transcript: tool call lines with a short
-- summary of their content, and the plan. Pure functions of their input.
local M = {}

--- Plan entry statuses.
M.PLAN_MARK = { pending = "[ ]", in_progress = "[~]", completed = "[x]" }

--- Lines of output shown under a tool call.
M.MAX_OUTPUT_LINES = 5

--- `s` on one line: a multi-line command or title keeps its first line and says how many
--- more there are.
---@param s string
---@return string
function M.one_line(s)
  s = tostring(s):gsub("\r", "")
  local first, rest = s:match("^([^\n]*)\n(.*)$")
  if not first then
    return s
  end
  local more = #vim.split(rest, "\n", { plain = true })
  return ("%s … (+%d line%s)"):format(first, more, more == 1 and "" or "s")
end

--- The text of a text content block, else nil.
function M.content_text(block)
  if type(block) == "table" and block.type == "text" and type(block.text) == "string" then
    return block.text
  end
  return nil
end

local diff = (vim.text and vim.text.diff) or vim.diff

--- "+added -removed" line counts between two texts.
function M.diff_stat(old, new)
  local added, removed = 0, 0
  local ok, hunks = pcall(diff, old or "", new or "", { result_type = "indices" })
  if ok then
    for _, h in ipairs(hunks) do
      removed = removed + h[2]
      added = added + h[4]
    end
  end
  return ("+%d -%d"):format(added, removed)
end

local function display_path(path, cwd)
  if cwd and vim.startswith(path, cwd .. "/") then
    return path:sub(#cwd + 2)
  end
  return path
end

--- A few lines describing a tool call's content: the files it changed and the start of its
--- output (not for `think` tools, whose output is the plan shown elsewhere).
---@param content table[]  ToolCallContent
---@param kind string|nil  ToolKind
---@param cwd string|nil   paths under it are shown relative
---@return string[]
function M.tool_detail(content, kind, cwd)
  local out = {}
  for _, c in ipairs(content or {}) do
    if c.type == "diff" and type(c.path) == "string" then
      table.insert(
        out,
        ("    %s %s (%s)"):format(c.oldText and "M" or "A", display_path(c.path, cwd), M.diff_stat(c.oldText, c.newText))
      )
    elseif c.type == "content" and kind ~= "think" then
      local text = M.content_text(c.content)
      if text then
        text = text:gsub("\r", ""):gsub("^```%w*\n", ""):gsub("\n?```%s*$", "")
        local lines = vim.split(text, "\n", { plain = true, trimempty = true })
        for i = 1, math.min(#lines, M.MAX_OUTPUT_LINES) do
          table.insert(out, "    | " .. lines[i])
        end
        if #lines > M.MAX_OUTPUT_LINES then
          table.insert(out, ("    | … %d more lines"):format(#lines - M.MAX_OUTPUT_LINES))
        end
      end
    elseif c.type == "terminal" then
      table.insert(out, "    (terminal " .. tostring(c.terminalId) .. ")")
    end
  end
  return out
end

--- `tool: {title} [{status}]` and its detail lines.
---@param tool {title: string, status: string, detail: string[]}
function M.tool_lines(tool)
  local lines = { ("tool: %s [%s]"):format(M.one_line(tool.title), tool.status) }
  vim.list_extend(lines, tool.detail or {})
  return lines
end

--- The plan block: `plan:` and one `[x]`/`[~]`/`[ ]` line per entry.
function M.plan_lines(entries)
  local lines = { "plan:" }
  for _, e in ipairs(entries or {}) do
    table.insert(lines, ("  %s %s"):format(M.PLAN_MARK[e.status] or "[?]", M.one_line(e.content or "")))
  end
  return lines
end

return M
