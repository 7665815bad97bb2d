//! The browser's entries in a [`ToolCatalog`]: `browser_tool_set` and `browser_request_handoff`,
//! both on the conversation's one browser, which the host finds again through a [`BrowserSlot`]
//! (for the live view, the handoff routes and closing Chromium).

use std::sync::{Arc, Mutex, PoisonError};

use tandem_sdk::{MakeToolError, Tool, ToolCatalog, ToolEnv};

use crate::browser::Browser;
use crate::config::BrowserConfig;
use crate::tools::{browser_tool_set, request_handoff_tool};

/// Where the browser a conversation's tools made is kept, so the host that put the slot into
/// the [`ToolEnv`] can reach it. Clones share the slot.
#[derive(Clone, Default)]
pub struct BrowserSlot(Arc<Mutex<Option<Browser>>>);

impl BrowserSlot {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// The browser, once a browser tool was made.
    pub fn get(&self) -> Option<Browser> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The browser, made on first use with its profile in the conversation's directory.
    fn get_or_make(&self, env: &ToolEnv) -> Result<Browser, MakeToolError> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(b) = slot.as_ref() {
            return Ok(b.clone());
        }
        let dir = env.conversation_dir.clone().ok_or_else(|| {
            MakeToolError::Unavailable(
                "the browser keeps its profile in the conversation's directory, and this conversation has none"
                    .to_owned(),
            )
        })?;
        let b = Browser::new(BrowserConfig::for_conversation(
            dir,
            env.working_dir.clone(),
        ));
        *slot = Some(b.clone());
        Ok(b)
    }
}

/// Registers `browser_tool_set` (upstream's tools) and `browser_request_handoff` (Tandem's,
/// asked for by name beside the set, so an upstream client asking only for the set sees exactly
/// upstream's tools). Both use the [`BrowserSlot`] in the environment, or a slot of their own
/// when the host gave none.
pub fn register(catalog: &mut ToolCatalog) {
    catalog.register(&["browser_tool_set", "BrowserToolSet"], |_, env| {
        let made = slot(&env).get_or_make(&env).map(|b| browser_tool_set(&b));
        Box::pin(std::future::ready(made))
    });
    catalog.register_tool(
        &["browser_request_handoff", "BrowserRequestHandoffTool"],
        |_, env| {
            let b = slot(env).get_or_make(env)?;
            Ok(request_handoff_tool(&b) as Arc<dyn Tool>)
        },
    );
}

fn slot(env: &ToolEnv) -> BrowserSlot {
    env.get::<BrowserSlot>().unwrap_or_else(|| {
        // No host gave one: the browser works, but no live view can find it.
        tracing::warn!("no browser slot in the tool environment: the agent gets a private one");
        BrowserSlot::default()
    })
}
