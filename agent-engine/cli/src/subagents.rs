//! Sub-agents of `tandem run`: each task a conversation in the same store as its parent, on
//! the parent's LLM, with its tools made through the same catalog as the parent's.

use std::sync::Arc;

use tandem_llm::Llm;
use tandem_sdk::subagent::{LocalSubAgents, SubAgents, ToolMaker};
use tandem_sdk::{ConversationStore, MakeToolError};

/// The sub-agent service a local run's `task` tool uses.
pub fn local(store: &ConversationStore, llm: &Arc<dyn Llm>) -> Arc<dyn SubAgents> {
    let make: ToolMaker = Arc::new(|spec, env| {
        Box::pin(async move {
            tandem_tools::resolve_tools(&spec, &tandem_host::catalog(), env)
                .await
                .map_err(|e| {
                    MakeToolError::Config(format!("the sub-agent's {}: {e}", e.path.join(".")))
                })
        })
    });
    Arc::new(LocalSubAgents::new(store.clone(), Arc::clone(llm), make))
}
