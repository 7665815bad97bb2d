//! [`FallbackRouter`]: the next model takes over when one keeps failing.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use tandem_protocol::LlmConfig;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::served_by;
use crate::{Llm, LlmError, LlmRequest, LlmResponse, Result};

/// How long a failed model sits out when none is given.
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(60);

/// Tries its models in order. A model whose call fails in a way another provider may not
/// (retryable errors that survived the model's own retries, authentication, configuration and
/// unreachable-server errors) is marked failed and skipped for a cool-down; the call moves on to the next model.
/// Errors about the request itself (bad request, context window, cancellation) are returned
/// at once: another model would not help. When every model is cooling down, they are tried in
/// order anyway rather than failing without a call. Time is tokio's clock, so tests can pause
/// and advance it.
pub struct FallbackRouter {
    config: LlmConfig,
    llms: Vec<Arc<dyn Llm>>,
    cooldown: Duration,
    /// When each model's cool-down ends (`None`: healthy).
    failed_until: Mutex<Vec<Option<Instant>>>,
}

impl std::fmt::Debug for FallbackRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let models: Vec<&str> = self
            .llms
            .iter()
            .map(|l| l.config().model.as_str())
            .collect();
        f.debug_struct("FallbackRouter")
            .field("models", &models)
            .field("cooldown", &self.cooldown)
            .finish_non_exhaustive()
    }
}

impl FallbackRouter {
    /// A router over `llms` in order of preference, with [`DEFAULT_COOLDOWN`]; its
    /// configuration is the first model's. Fails with [`LlmError::Config`] when `llms` is empty.
    pub fn new(llms: Vec<Arc<dyn Llm>>) -> Result<Self> {
        let config = llms
            .first()
            .map(|l| l.config().clone())
            .ok_or_else(|| LlmError::Config("a router needs at least one model".into()))?;
        Ok(Self {
            config,
            failed_until: Mutex::new(vec![None; llms.len()]),
            llms,
            cooldown: DEFAULT_COOLDOWN,
        })
    }

    /// Sets how long a failed model is skipped.
    pub fn with_cooldown(mut self, cooldown: Duration) -> Self {
        self.cooldown = cooldown;
        self
    }

    /// Replaces the router's own configuration (its `usage_id`, its name in metrics).
    pub fn with_config(mut self, config: LlmConfig) -> Self {
        self.config = config;
        self
    }

    /// Whether another model may succeed where this error failed.
    pub fn should_fall_back(error: &LlmError) -> bool {
        error.is_retryable()
            || matches!(
                error,
                LlmError::Auth { .. } | LlmError::Config(_) | LlmError::Unreachable { .. }
            )
    }

    /// The models' indices in the order the next call tries them: healthy ones first (in
    /// preference order), then those cooling down (soonest back first).
    pub fn order(&self) -> Vec<usize> {
        let now = Instant::now();
        let failed = self
            .failed_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut healthy = Vec::new();
        let mut cooling = Vec::new();
        for (i, until) in failed.iter().enumerate() {
            match until {
                Some(until) if *until > now => cooling.push((*until, i)),
                _ => healthy.push(i),
            }
        }
        cooling.sort();
        healthy.extend(cooling.into_iter().map(|(_, i)| i));
        healthy
    }

    fn mark(&self, index: usize, failed: bool) {
        let mut states = self
            .failed_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = states.get_mut(index) {
            *state = failed.then(|| Instant::now() + self.cooldown);
        }
    }
}

impl Llm for FallbackRouter {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        Box::pin(async move {
            let mut last_error = None;
            for index in self.order() {
                let Some(llm) = self.llms.get(index) else {
                    continue;
                };
                match served_by(llm.as_ref(), request.clone(), cancel.clone()).await {
                    Ok(response) => {
                        self.mark(index, false);
                        return Ok(response);
                    }
                    Err(error) if Self::should_fall_back(&error) && !cancel.is_cancelled() => {
                        tracing::warn!(
                            model = %llm.config().model,
                            code = error.code(),
                            %error,
                            "model failed; falling back to the next"
                        );
                        self.mark(index, true);
                        last_error = Some(error);
                    }
                    Err(error) => return Err(error),
                }
            }
            Err(last_error
                .unwrap_or_else(|| LlmError::Config("a router needs at least one model".into())))
        })
    }
}
