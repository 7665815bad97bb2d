//! [`MultimodalRouter`]: images to the vision model, text to the cheaper text model.

use std::sync::Arc;

use futures::future::BoxFuture;
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

use super::{has_images, served_by};
use crate::{Llm, LlmRequest, LlmResponse, Result, prices, tokens};

/// Routes each request to one of two models: the vision model when the request carries an
/// image or does not fit the text model's context window (per the price table), the text model
/// otherwise. Its own configuration is the vision model's (the primary, as upstream's
/// `MultimodalRouter` calls it) unless replaced with [`MultimodalRouter::with_config`].
pub struct MultimodalRouter {
    config: LlmConfig,
    vision: Arc<dyn Llm>,
    text: Arc<dyn Llm>,
}

impl std::fmt::Debug for MultimodalRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultimodalRouter")
            .field("vision", &self.vision.config().model)
            .field("text", &self.text.config().model)
            .finish()
    }
}

impl MultimodalRouter {
    /// A router between a vision-capable model and a text model.
    pub fn new(vision: Arc<dyn Llm>, text: Arc<dyn Llm>) -> Self {
        Self {
            config: vision.config().clone(),
            vision,
            text,
        }
    }

    /// Replaces the router's own configuration (its `usage_id`, its name in metrics).
    pub fn with_config(mut self, config: LlmConfig) -> Self {
        self.config = config;
        self
    }

    /// The model `request` goes to.
    pub fn route(&self, request: &LlmRequest) -> &Arc<dyn Llm> {
        // Images always go to the vision model, whatever the table says of the text model.
        if has_images(request) {
            return &self.vision;
        }
        let text_config = self.text.config();
        if let Some(window) = prices::context_window_for(text_config) {
            let needed =
                tokens::count_request_tokens(&text_config.model, &request.messages, &request.tools);
            if needed as u64 > window {
                return &self.vision;
            }
        }
        &self.text
    }
}

impl Llm for MultimodalRouter {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        let target = Arc::clone(self.route(&request));
        Box::pin(async move { served_by(target.as_ref(), request, cancel).await })
    }
}
