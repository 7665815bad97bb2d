//! The crate's integration tests, linked as one test binary (one link per change, not one
//! per file): each module is one file of tests/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod compat_official_client;
mod compat_openai;
mod compat_upstream;
mod embedded_ui;
mod hostile_agent;
mod mcp;
mod move_chain;
mod orphans;
mod remote_cli;
mod rewind_crash;
mod sandbox;
mod sandbox_trust;
mod sandbox_undo;
mod subagents;

use std::path::Path;
use std::process::{Command, Output};

use tandem_e2e::tandem_bin;

/// `tandem <args>` with its own `TANDEM_HOME` and none of the runner's server, key or LLM
/// settings, so only the arguments say where it runs and which model it asks.
fn tandem(home: &Path, args: &[&str]) -> Output {
    Command::new(tandem_bin().unwrap())
        .args(args)
        .env("TANDEM_HOME", home)
        .env_remove("TANDEM_SERVER_URL")
        .env_remove("TANDEM_SESSION_KEY")
        .env_remove("LLM_MODEL")
        .env_remove("LLM_BASE_URL")
        .env_remove("LLM_API_KEY")
        .output()
        .unwrap()
}
