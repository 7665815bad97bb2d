//! `tandem-host`: the composition root. What the CLI (`tandem run`, `tandem serve`), the agent
//! server and the desktop app assemble the same way, so that each gets the same Tandem:
//!
//! - [`catalog`]: every tool an agent spec may name — the engine's built-ins
//!   ([`tandem_tools::builtin_catalog`], MCP servers included: they resolve from the agent's
//!   `mcp_config` through it) and the browser's ([`tandem_browser::register`]);
//! - [`settings`]: where `$TANDEM_HOME` is, what its `settings.json` says, which LLM a run or a
//!   server uses;
//! - [`env`]: what the environment names (the LLM, session keys, a provider's API key);
//! - [`profiles`]: named LLM profiles with their secrets encrypted at rest;
//! - [`demo`]: the scripted demo LLM, for a Tandem without a provider.
//!
//! It sits above the engine crates and below the hosts; nothing in the engine depends on it.

pub mod demo;
pub mod env;
pub mod profiles;
pub mod settings;

pub use demo::{DEMO_MODEL, DemoLlm};

/// Every tool a Tandem host can give an agent, by the name an agent spec uses: the engine's
/// built-ins and MCP ([`tandem_tools::builtin_catalog`]) and the browser's tool set and handoff tool
/// ([`tandem_browser::register`]). A host puts the services the tools share (the terminal the
/// live PTY attaches to, the browser slot the live view finds) in each conversation's
/// [`ToolEnv`](tandem_sdk::ToolEnv); a tool that finds none makes a private one and logs it.
pub fn catalog() -> tandem_sdk::ToolCatalog {
    let mut catalog = tandem_tools::builtin_catalog();
    tandem_browser::register(&mut catalog);
    catalog
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_catalog_has_every_tool_set() {
        let catalog = super::catalog();
        for name in [
            "terminal",
            "file_editor",
            "task_tracker",
            "browser_tool_set",
            "browser_request_handoff",
        ] {
            assert!(catalog.knows(name), "{name} missing from the host catalog");
        }
    }
}
