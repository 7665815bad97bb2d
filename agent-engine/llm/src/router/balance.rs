//! [`RoundRobinRouter`] and [`RandomRouter`]: spreading calls over equivalent models. Both are
//! one [`BalancingRouter`]; they differ only in how they [`Pick`] the next model.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use futures::future::BoxFuture;
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

use super::served_by;
use crate::{Llm, LlmError, LlmRequest, LlmResponse, Result};

/// How a balancing router picks the model of the next call.
pub trait Pick: Send + Sync {
    /// The router's name in `Debug` output.
    const ROUTER: &'static str;

    /// The index, below `len`, of the model the next call goes to.
    fn pick(&self, len: usize) -> usize;
}

/// A router that spreads calls over equivalent models, each call to the model `P` picks.
/// Its configuration is the first model's unless replaced.
pub struct BalancingRouter<P> {
    config: LlmConfig,
    llms: Vec<Arc<dyn Llm>>,
    picker: P,
}

impl<P: Pick> std::fmt::Debug for BalancingRouter<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let models: Vec<&str> = self
            .llms
            .iter()
            .map(|l| l.config().model.as_str())
            .collect();
        f.debug_struct(P::ROUTER)
            .field("models", &models)
            .finish_non_exhaustive()
    }
}

impl<P: Pick> BalancingRouter<P> {
    /// A router over `llms` picking with `picker`. Fails with [`LlmError::Config`] when `llms`
    /// is empty.
    fn with_picker(llms: Vec<Arc<dyn Llm>>, picker: P) -> Result<Self> {
        let config = llms
            .first()
            .map(|l| l.config().clone())
            .ok_or_else(|| LlmError::Config("a router needs at least one model".into()))?;
        Ok(Self {
            config,
            llms,
            picker,
        })
    }

    /// Replaces the router's own configuration (its `usage_id`, its name in metrics).
    pub fn with_config(mut self, config: LlmConfig) -> Self {
        self.config = config;
        self
    }
}

impl<P: Pick> Llm for BalancingRouter<P> {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        let index = self.picker.pick(self.llms.len());
        Box::pin(async move {
            let llm = self
                .llms
                .get(index)
                .ok_or_else(|| LlmError::Config("a router needs at least one model".into()))?;
            served_by(llm.as_ref(), request, cancel).await
        })
    }
}

/// Sends call *n* to model *n mod len*.
pub type RoundRobinRouter = BalancingRouter<RoundRobin>;

/// Round-robin picking: the next model in turn.
#[derive(Debug, Default)]
pub struct RoundRobin {
    next: AtomicUsize,
}

impl Pick for RoundRobin {
    const ROUTER: &'static str = "RoundRobinRouter";

    fn pick(&self, len: usize) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed) % len.max(1)
    }
}

impl RoundRobinRouter {
    /// A router over `llms`, starting with the first; its configuration is the first's.
    /// Fails with [`LlmError::Config`] when `llms` is empty.
    pub fn new(llms: Vec<Arc<dyn Llm>>) -> Result<Self> {
        Self::with_picker(llms, RoundRobin::default())
    }
}

/// Sends each call to a model drawn at random from a seeded generator (SplitMix64), so a
/// given seed gives the same sequence of choices in tests.
pub type RandomRouter = BalancingRouter<Random>;

/// Seeded random picking (SplitMix64).
#[derive(Debug)]
pub struct Random {
    state: AtomicU64,
}

impl Pick for Random {
    const ROUTER: &'static str = "RandomRouter";

    fn pick(&self, len: usize) -> usize {
        const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut z = self
            .state
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let len = len.max(1) as u64;
        usize::try_from(z % len).unwrap_or(0)
    }
}

impl RandomRouter {
    /// A router over `llms` drawing from `seed`; its configuration is the first model's.
    /// Fails with [`LlmError::Config`] when `llms` is empty.
    pub fn new(llms: Vec<Arc<dyn Llm>>, seed: u64) -> Result<Self> {
        Self::with_picker(
            llms,
            Random {
                state: AtomicU64::new(seed),
            },
        )
    }

    /// The index of the model the next call goes to (advances the generator).
    pub fn pick(&self) -> usize {
        self.picker.pick(self.llms.len())
    }
}
