//! An [`Llm`] wrapper that counts its calls under its own usage id, for the side calls of a
//! conversation (condensation summaries, titles) whose cost belongs in the conversation's
//! metrics next to the agent's.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tandem_llm::{Llm, LlmRequest, LlmResponse, Result};
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

/// Delegates to `inner` and keeps every reply so the actor can record its usage.
pub(super) struct MeteredLlm {
    inner: Arc<dyn Llm>,
    config: LlmConfig,
    replies: Mutex<Vec<LlmResponse>>,
}

impl MeteredLlm {
    /// `inner`, counted under `usage_id`.
    pub(super) fn new(inner: Arc<dyn Llm>, usage_id: &str) -> Self {
        let mut config = inner.config().clone();
        usage_id.clone_into(&mut config.usage_id);
        Self {
            inner,
            config,
            replies: Mutex::new(Vec::new()),
        }
    }

    /// The replies since the last call, oldest first.
    pub(super) fn take_replies(&self) -> Vec<LlmResponse> {
        match self.replies.lock() {
            Ok(mut r) => std::mem::take(&mut *r),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        }
    }
}

impl Llm for MeteredLlm {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        Box::pin(async move {
            let reply = self.inner.completion(request, cancel).await?;
            match self.replies.lock() {
                Ok(mut r) => r.push(reply.clone()),
                Err(p) => p.into_inner().push(reply.clone()),
            }
            Ok(reply)
        })
    }
}
