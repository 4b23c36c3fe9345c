-- Defines :Interpreter at startup without loading the rest of the plugin; the language
-- server is registered by require("interpreter").setup().
if vim.g.loaded_interpreter then
  return
end
vim.g.loaded_interpreter = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_echo({ { "interpreter.nvim needs Neovim 0.10 or newer", "ErrorMsg" } }, true, {})
  return
end

require("interpreter.commands").create()
