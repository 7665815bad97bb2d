//! The crate's integration tests, linked as one test binary (one link per change, not one
//! per file): each module is one file of tests/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/harness.rs"]
mod harness;

mod bad_input;
mod browser;
mod browser_socket;
mod checkpoints;
mod conversation_flow;
mod credentials;
mod custom_tools;
mod fuzzed_input;
mod gateway;
mod listing;
mod moves;
mod openapi;
mod replay;
mod review;
mod run_queue;
mod search_tools;
mod server_info;
mod subagents;
mod surfaces;
mod takeover;
mod vnc;
mod web;
