//! interpreter-core: the agent core. Sessions, harnesses, tools, model wires, sandbox,
//! workspace, store, MCP, skills, config and secrets. See docs/architecture.md for the map.
//!
//! The faces (crates/acp, lsp, exec, app-server, tui) reach the core through what is `pub`
//! here; no front-end protocol library is a dependency of this crate.
#![warn(unreachable_pub, missing_docs)]

pub mod agent;
mod checkpoint;
pub mod config;
mod custom;
pub mod harness;
pub mod hooks;
pub mod mcp;
pub mod model;
pub mod platform;
pub mod sandbox;
pub mod secrets;
pub mod sessions;
pub mod skills;
mod store;
pub mod tools;
pub mod workspace;

#[cfg(test)]
mod architecture_tests;
