//! `tandem-host`: the composition root. What the CLI (`tandem run`, `tandem serve`), the agent
//! server and the desktop app assemble the same way, so that each gets the same Tandem:
//!
//! - [`catalog`]: every tool an agent spec may name — the engine's built-ins
//!   ([`tandem_tools::builtin_catalog`]), the browser's ([`tandem_browser::register`]) and the
//!   tools of the MCP servers of the spec's `mcp_config` ([`tandem_mcp::register`]);
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
/// built-ins ([`tandem_tools::builtin_catalog`]), the browser's tool set and handoff tool
/// ([`tandem_browser::register`]), and the MCP client as the source of the tools a spec's
/// `mcp_config` brings ([`tandem_mcp::register`]). A host puts the services the tools share (the terminal the
/// live PTY attaches to, the browser slot the live view finds) in each conversation's
/// [`ToolEnv`](tandem_sdk::ToolEnv); a tool that finds none makes a private one and logs it.
pub fn catalog() -> tandem_sdk::ToolCatalog {
    let mut catalog = tandem_tools::builtin_catalog();
    tandem_browser::register(&mut catalog);
    tandem_mcp::register(&mut catalog);
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

    #[tokio::test]
    async fn the_catalog_starts_the_mcp_servers_of_a_spec() {
        use std::sync::{Arc, Mutex};
        let mut spec =
            tandem_protocol::AgentSpec::default_for(tandem_protocol::LlmConfig::new("none"));
        spec.tools.clear();
        spec.include_default_tools.clear();
        spec.mcp_config = Some(serde_json::json!({
            "mcpServers": {"gone": {"command": "/nonexistent/tandem-mcp-server"}}
        }));
        let warnings = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&warnings);
        let env = tandem_sdk::ToolEnv::new(std::env::temp_dir()).with(tandem_mcp::McpWarnings(
            Arc::new(move |w: &str| sink.lock().unwrap().push(w.to_owned())),
        ));
        // The MCP source is there: the server is tried, and its failure costs only its tools.
        let tools = tandem_tools::resolve_tools(&spec, &super::catalog(), env)
            .await
            .expect("resolved");
        assert!(tools.is_empty());
        let warnings = warnings.lock().unwrap();
        assert!(warnings.iter().any(|w| w.contains("gone")), "{warnings:?}");
    }
}
