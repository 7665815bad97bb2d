//! The crate's integration tests, linked as one test binary (one link per change, not one
//! per file): each module is one file of tests/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic_messages;
mod completion_log;
mod demo_model;
mod openai_chat;
mod prices;
mod prompt_tools;
mod provider_routing;
mod responses_api;
mod router;
mod tokens;
