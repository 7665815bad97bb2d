//! Tests of the MCP client against real MCP servers (from the npm cache the test set-up fills)
//! and small misbehaving ones (fixtures/fake_server.py), linked as one test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bad_servers;
mod common;
mod everything;
