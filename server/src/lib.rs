//! interpreter: a coding agent for low-cost models. See docs/architecture.md for the map.

pub mod agent;
pub mod cli;
pub mod config;
pub mod frontend;
pub mod harness;
pub mod mcp;
pub mod model;
pub mod sandbox;
pub mod secrets;
pub mod skills;
pub mod store;
pub mod tools;
pub mod workspace;
