//! [`RoundRobinRouter`] and [`RandomRouter`]: spreading calls over equivalent models.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use futures::future::BoxFuture;
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

use super::served_by;
use crate::{Llm, LlmError, LlmRequest, LlmResponse, Result};

fn models(llms: &[Arc<dyn Llm>]) -> Vec<&str> {
    llms.iter().map(|l| l.config().model.as_str()).collect()
}

fn first_config(llms: &[Arc<dyn Llm>]) -> Result<LlmConfig> {
    llms.first()
        .map(|l| l.config().clone())
        .ok_or_else(|| LlmError::Config("a router needs at least one model".into()))
}

/// Sends call *n* to model *n mod len*.
pub struct RoundRobinRouter {
    config: LlmConfig,
    llms: Vec<Arc<dyn Llm>>,
    next: AtomicUsize,
}

impl std::fmt::Debug for RoundRobinRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoundRobinRouter")
            .field("models", &models(&self.llms))
            .finish_non_exhaustive()
    }
}

impl RoundRobinRouter {
    /// A router over `llms`, starting with the first; its configuration is the first's.
    /// Fails with [`LlmError::Config`] when `llms` is empty.
    pub fn new(llms: Vec<Arc<dyn Llm>>) -> Result<Self> {
        Ok(Self {
            config: first_config(&llms)?,
            llms,
            next: AtomicUsize::new(0),
        })
    }

    /// Replaces the router's own configuration (its `usage_id`, its name in metrics).
    pub fn with_config(mut self, config: LlmConfig) -> Self {
        self.config = config;
        self
    }
}

impl Llm for RoundRobinRouter {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.llms.len().max(1);
        Box::pin(async move {
            let llm = self
                .llms
                .get(index)
                .ok_or_else(|| LlmError::Config("a router needs at least one model".into()))?;
            served_by(llm.as_ref(), request, cancel).await
        })
    }
}

/// Sends each call to a model drawn at random from a seeded generator (SplitMix64), so a
/// given seed gives the same sequence of choices in tests.
pub struct RandomRouter {
    config: LlmConfig,
    llms: Vec<Arc<dyn Llm>>,
    state: AtomicU64,
}

impl std::fmt::Debug for RandomRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RandomRouter")
            .field("models", &models(&self.llms))
            .finish_non_exhaustive()
    }
}

impl RandomRouter {
    /// A router over `llms` drawing from `seed`; its configuration is the first model's.
    /// Fails with [`LlmError::Config`] when `llms` is empty.
    pub fn new(llms: Vec<Arc<dyn Llm>>, seed: u64) -> Result<Self> {
        Ok(Self {
            config: first_config(&llms)?,
            llms,
            state: AtomicU64::new(seed),
        })
    }

    /// Replaces the router's own configuration (its `usage_id`, its name in metrics).
    pub fn with_config(mut self, config: LlmConfig) -> Self {
        self.config = config;
        self
    }

    /// The index of the model the next call goes to (advances the generator).
    pub fn pick(&self) -> usize {
        const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut z = self
            .state
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let len = self.llms.len().max(1) as u64;
        usize::try_from(z % len).unwrap_or(0)
    }
}

impl Llm for RandomRouter {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        let index = self.pick();
        Box::pin(async move {
            let llm = self
                .llms
                .get(index)
                .ok_or_else(|| LlmError::Config("a router needs at least one model".into()))?;
            served_by(llm.as_ref(), request, cancel).await
        })
    }
}
