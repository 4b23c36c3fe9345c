-- Our ACP extensions, mirroring crates/protocol/src/ext.rs (a Rust test compares the lists;
-- docs/acp-extensions.md describes them). Use these names; never write the strings elsewhere.
local M = {}

-- ACP request, agent -> client: the editor's diagnostics for files the agent changed.
M.ACP_DIAGNOSTICS_METHOD = "_interpreter/diagnostics"
-- `clientCapabilities._meta` key: the client answers ACP_DIAGNOSTICS_METHOD.
M.ACP_DIAGNOSTICS_CAPABILITY = "interpreter/diagnostics"
-- `_meta` key of a prompt's answer and of a replayed user message: the turn it ran.
M.ACP_TURN_ID = "interpreter/turnId"
-- `_meta` key of an undo's answer: the turns and files it took back.
M.ACP_UNDONE = "interpreter/undone"

return M
