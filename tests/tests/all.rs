//! The crate's integration tests, linked as one test binary (one link per change, not one
//! per file): each module is one file of tests/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod compat_official_client;
mod compat_openai;
mod compat_upstream;
mod embedded_ui;
mod hostile_agent;
mod mcp;
mod orphans;
mod remote_cli;
mod sandbox;
mod sandbox_trust;
mod subagents;
