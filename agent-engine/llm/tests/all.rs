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

use tandem_llm::{Llm, LlmError, LlmRequest, LlmResponse};
use tokio_util::sync::CancellationToken;

/// One completion that nothing cancels. Here rather than in tandem-testkit, which never
/// depends on tandem-llm.
async fn complete(llm: &impl Llm, request: LlmRequest) -> Result<LlmResponse, LlmError> {
    llm.completion(request, CancellationToken::new()).await
}
