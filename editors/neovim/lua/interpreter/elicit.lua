-- ACP form elicitations (`elicitation/create`): the agent's questions, asked with
-- vim.ui.select (a field with choices) and vim.ui.input (the user's own words, and
-- multi-select fields, answered as option numbers). The form's fields come in order
-- (`q1`, `q1_other`, `q2`, …); a dismissed picker cancels the form.
local M = {}

local function sorted_fields(props)
  local names = vim.tbl_keys(props)
  table.sort(names, function(a, b)
    -- q2 before q10; a field's `_other` right after it.
    local na, sa = a:match("^q(%d+)(.*)$")
    local nb, sb = b:match("^q(%d+)(.*)$")
    if na and nb and na ~= nb then
      return tonumber(na) < tonumber(nb)
    end
    if na and nb then
      return sa < sb
    end
    return a < b
  end)
  return names
end

local function one_line(s)
  return (tostring(s or ""):gsub("%s+", " "))
end

--- The choices of a field: `oneOf` (single) or `items.anyOf`/`items.enum` (multi).
local function choices(prop)
  local list = prop.oneOf or (prop.items and (prop.items.anyOf or prop.items.oneOf))
  local out = {}
  for _, o in ipairs(list or {}) do
    table.insert(out, { value = o.const or o.value, title = o.title or o.const, description = o.description })
  end
  if #out == 0 and prop.items and prop.items.enum then
    for _, v in ipairs(prop.items.enum) do
      table.insert(out, { value = v, title = v })
    end
  end
  return out
end

--- Answers `params` (CreateElicitationRequest) through `reply`; `on_cancel(fn)` registers
--- what a turn cancel calls.
---@param params table
---@param reply fun(result: any, err: table|nil)
---@param on_cancel fun(cancel: fun())
function M.answer(params, reply, on_cancel)
  local schema = params.requestedSchema or {}
  local props = schema.properties or {}
  local names = sorted_fields(props)
  local content = {}
  local done = false
  local function finish(result)
    if not done then
      done = true
      reply(result)
    end
  end
  on_cancel(function()
    finish({ action = "cancel" })
  end)
  if params.mode ~= "form" then
    return finish({ action = "decline" })
  end
  local i = 0
  local step
  local function ask_other(name, prompt)
    vim.ui.input({ prompt = prompt .. " " }, function(text)
      if done then
        return
      end
      if text == nil then
        return finish({ action = "cancel" })
      end
      if vim.trim(text) ~= "" then
        content[name] = vim.trim(text)
      end
      step()
    end)
  end
  step = function()
    if done then
      return
    end
    i = i + 1
    local name = names[i]
    if not name then
      return finish({ action = "accept", content = next(content) and content or vim.empty_dict() })
    end
    local prop = props[name]
    local title = one_line(prop.title or params.message or name)
    local other = props[name .. "_other"] and (name .. "_other") or nil
    local opts = choices(prop)
    if name:match("_other$") then
      -- Asked with its question; alone, it is a free-text question.
      local base = name:gsub("_other$", "")
      if props[base] then
        return step()
      end
      return ask_other(name, title)
    end
    if prop.type == "array" then
      local labels = {}
      for n, o in ipairs(opts) do
        table.insert(labels, ("%d %s"):format(n, one_line(o.title)))
      end
      vim.ui.input({ prompt = ("%s (%s; numbers separated by commas%s): "):format(title, table.concat(labels, ", "), other and ", or your own words" or "") }, function(text)
        if done then
          return
        end
        if text == nil then
          return finish({ action = "cancel" })
        end
        local picked = {}
        for n in text:gmatch("%d+") do
          local o = opts[tonumber(n)]
          if o then
            table.insert(picked, o.value)
          end
        end
        if #picked > 0 then
          content[name] = picked
        elseif other and vim.trim(text) ~= "" then
          content[other] = vim.trim(text)
        end
        step()
      end)
      return
    end
    local items = vim.deepcopy(opts)
    if other then
      table.insert(items, { other = true, title = "Other (your own answer)" })
    end
    vim.ui.select(items, {
      prompt = title,
      kind = "interpreter.question",
      format_item = function(o)
        local d = o.description and o.description ~= "" and (" — " .. one_line(o.description)) or ""
        return one_line(o.title) .. d
      end,
    }, function(choice)
      if done then
        return
      end
      if not choice then
        return finish({ action = "cancel" })
      end
      if choice.other then
        return ask_other(other, title)
      end
      content[name] = choice.value
      step()
    end)
  end
  step()
end

return M
