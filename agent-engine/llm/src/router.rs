//! Routers: LLMs made of LLMs. Each implements [`Llm`] itself, so the agent loop cannot tell a
//! router from a client, and each reply says which model served it (`LlmResponse.model` as the
//! provider named it, `usage.model` as the configuration names it).
//!
//! - [`MultimodalRouter`]: requests with images (or too long for the text model) go to the
//!   vision model, the rest to the cheaper text model.
//! - [`RoundRobinRouter`] and [`RandomRouter`]: spread calls over equivalent models.
//! - [`FallbackRouter`]: the next model takes over when one keeps failing, and a failed model
//!   sits out a cool-down.

mod balance;
mod fallback;
mod multimodal;

use std::sync::Arc;

use futures::future::BoxFuture;
use tandem_protocol::{Content, LlmConfig};
use tokio_util::sync::CancellationToken;

use crate::{Llm, LlmRequest, LlmResponse, Result};

pub use balance::{RandomRouter, RoundRobinRouter};
pub use fallback::FallbackRouter;
pub use multimodal::MultimodalRouter;

impl<T: Llm + ?Sized> Llm for Arc<T> {
    fn config(&self) -> &LlmConfig {
        (**self).config()
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        (**self).completion(request, cancel)
    }
}

impl<T: Llm + ?Sized> Llm for Box<T> {
    fn config(&self) -> &LlmConfig {
        (**self).config()
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        (**self).completion(request, cancel)
    }
}

/// Whether any message of `request` carries an image.
pub fn has_images(request: &LlmRequest) -> bool {
    request.messages.iter().any(|m| {
        m.content
            .iter()
            .any(|c| matches!(c, Content::Image(image) if !image.image_urls.is_empty()))
    })
}

/// Calls `llm` and stamps the reply with the model that served it: the provider's name when
/// it gave none, and the configured name in `usage.model`.
pub(crate) async fn served_by(
    llm: &dyn Llm,
    request: LlmRequest,
    cancel: CancellationToken,
) -> Result<LlmResponse> {
    let mut response = llm.completion(request, cancel).await?;
    let configured = &llm.config().model;
    if response.model.is_empty() {
        response.model.clone_from(configured);
    }
    response.usage.model.clone_from(configured);
    Ok(response)
}
