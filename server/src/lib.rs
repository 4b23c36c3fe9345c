//! interpreter: a coding agent for low-cost models. See docs/architecture.md for the map.
//!
//! The library exists for the binary (`cli::main`), the benches and the fuzz targets; only
//! what those name is `pub`. Everything else is `pub(crate)`, so dead code shows up.
#![warn(missing_docs, unreachable_pub)]

pub(crate) mod agent;
pub mod cli;
pub mod config;
pub mod frontend;
pub(crate) mod harness;
pub(crate) mod mcp;
pub mod model;
pub(crate) mod platform;
pub(crate) mod sandbox;
pub mod secrets;
pub(crate) mod skills;
pub(crate) mod store;
pub mod tools;
pub mod workspace;
