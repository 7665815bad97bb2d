//! The demo LLM: the scripted demo model on a loopback port, so that Tandem shows the whole
//! agent loop without a provider or an API key. The one place that starts it: `tandem run
//! --llm demo`, `tandem serve --llm demo` and the desktop's local backend all call
//! [`DemoLlm::start`].
//!
//! One demo LLM serves every conversation: the model learns each conversation's workspace from
//! the request (the system prompt names it), so it is bound to no folder.

use tandem_demo::DemoServer;
use tandem_protocol::LlmConfig;

/// The model name the demo LLM answers to (the UI recognises it and shows a demo badge).
pub const DEMO_MODEL: &str = "openai/tandem-demo";

/// A running demo LLM. It answers on loopback until dropped: keep it alive as long as any
/// conversation may call [`config`](Self::config)'s base URL.
#[derive(Debug)]
pub struct DemoLlm {
    config: LlmConfig,
    // Kept alive for as long as the demo runs; dropping it stops the server.
    _server: DemoServer,
}

impl DemoLlm {
    /// Starts the demo LLM on a free port of 127.0.0.1 (on its own thread and runtime, so it
    /// may be called from sync code or inside any Tokio runtime).
    pub fn start() -> std::io::Result<Self> {
        // It keeps no record of requests, so it may answer for as long as the app runs.
        let server = DemoServer::start()?;
        let mut config = LlmConfig::new(DEMO_MODEL);
        config.base_url = Some(server.base_url());
        config.api_key = Some("demo".into());
        config.num_retries = 0;
        Ok(Self {
            config,
            _server: server,
        })
    }

    /// The LLM configuration that reaches the demo (model [`DEMO_MODEL`], loopback base URL,
    /// a placeholder key, no retries).
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// The OpenAI base URL the demo answers on, e.g. `http://127.0.0.1:41234/v1`.
    pub fn base_url(&self) -> &str {
        self.config.base_url.as_deref().unwrap_or_default()
    }
}

/// Whether `llm` is the demo LLM's configuration.
pub fn is_demo(llm: &LlmConfig) -> bool {
    llm.model == DEMO_MODEL
}
