//! Issue 34, hostile inputs round 3, through the real binary and the mock model: the agent's
//! own git on a hostile repository, state the agent trusts, special files, undo that never
//! lies, the checkpoint store, goal budgets, subagents, network off, login tokens. Each module
//! is one class of `docs/sandbox.md`'s round 3 table; the terminal's prompts are in `tui.rs`.

#[path = "round3/budgets.rs"]
mod budgets;
#[path = "round3/subagent.rs"]
mod subagent;
#[path = "round3/token.rs"]
mod token;
