//! Retries with exponential backoff, as upstream's tenacity policy does: the n-th retry waits
//! `multiplier * 2^(n-1)` seconds clamped to `[min_wait, max_wait]`, or what the provider's
//! `retry-after` asked for (capped at `max_wait`). Only [`LlmError::is_retryable`] errors are
//! retried, and every wait ends early with [`LlmError::Cancelled`] when the token is cancelled.
//! Each retry is announced ([`RetryNotice`]) before its wait, so a person sees the schedule.

use std::future::Future;
use std::time::Duration;

use tandem_protocol::LlmConfig;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, Result};

/// A failed attempt that is tried again, announced before the wait.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// Why the attempt failed.
    pub error: LlmError,
    /// The retry that comes next (1 for the first).
    pub retry: u32,
    /// Retries allowed in all.
    pub max_retries: u32,
    /// How long until it.
    pub wait: Duration,
}

/// How often and how patiently a failed call is tried again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub max_retries: u32,
    /// Shortest wait between attempts.
    pub min_wait: Duration,
    /// Longest wait between attempts (also caps `retry-after`).
    pub max_wait: Duration,
    /// Seconds of the first backoff step before clamping; doubles on each retry.
    pub multiplier: f64,
}

impl RetryPolicy {
    /// The policy of an LLM configuration (`num_retries`, `retry_min_wait`, `retry_max_wait`,
    /// `retry_multiplier`). Negative or non-finite values count as zero.
    pub fn from_config(config: &LlmConfig) -> Self {
        let min_wait = seconds(config.retry_min_wait);
        let max_wait = seconds(config.retry_max_wait).max(min_wait);
        let multiplier = if config.retry_multiplier.is_finite() {
            config.retry_multiplier.max(0.0)
        } else {
            0.0
        };
        Self {
            max_retries: config.num_retries,
            min_wait,
            max_wait,
            multiplier,
        }
    }

    /// A policy that never retries.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            min_wait: Duration::ZERO,
            max_wait: Duration::ZERO,
            multiplier: 0.0,
        }
    }

    /// How long to wait before retry number `retry` (1 for the first retry) after `error`.
    pub fn delay(&self, retry: u32, error: &LlmError) -> Duration {
        if let Some(asked) = error.retry_after() {
            return asked.min(self.max_wait);
        }
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        let backoff = seconds(self.multiplier * 2f64.powi(exponent));
        backoff.clamp(self.min_wait, self.max_wait)
    }

    /// Runs `attempt` (given the 0-based attempt number) until it succeeds, fails with an error
    /// that is not retryable, or the retries are used up; the last error is returned. Waits
    /// between attempts end with [`LlmError::Cancelled`] when `cancel` fires.
    pub async fn run<T, F, Fut>(&self, cancel: &CancellationToken, attempt: F) -> Result<T>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.run_observed(cancel, None, attempt).await
    }

    /// [`run`](Self::run), announcing each retry to `on_retry` before its wait.
    pub async fn run_observed<T, F, Fut>(
        &self,
        cancel: &CancellationToken,
        on_retry: Option<&UnboundedSender<RetryNotice>>,
        mut attempt: F,
    ) -> Result<T>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut number = 0u32;
        loop {
            if cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            let error = match attempt(number).await {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            if !error.is_retryable() || number >= self.max_retries {
                return Err(error);
            }
            number += 1;
            let wait = self.delay(number, &error);
            tracing::warn!(
                code = error.code(),
                retry = number,
                of = self.max_retries,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                "LLM call failed, retrying: {error}"
            );
            if let Some(tx) = on_retry {
                let _ = tx.send(RetryNotice {
                    error,
                    retry: number,
                    max_retries: self.max_retries,
                    wait,
                });
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(LlmError::Cancelled),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

/// A duration of `secs` seconds; zero for negative or NaN, a day at most.
fn seconds(secs: f64) -> Duration {
    const DAY: f64 = 86_400.0;
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(secs.min(DAY)).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn policy() -> RetryPolicy {
        let mut config = LlmConfig::new("openai/x");
        config.num_retries = 5;
        config.retry_min_wait = 8.0;
        config.retry_max_wait = 64.0;
        config.retry_multiplier = 8.0;
        RetryPolicy::from_config(&config)
    }

    fn unavailable() -> LlmError {
        LlmError::ServiceUnavailable {
            status: 503,
            message: "down".into(),
        }
    }

    #[test]
    fn backoff_doubles_within_bounds() {
        let waits: Vec<u64> = (1..=5)
            .map(|n| policy().delay(n, &unavailable()).as_secs())
            .collect();
        assert_eq!(waits, vec![8, 16, 32, 64, 64]);
        assert_eq!(
            policy().delay(u32::MAX, &unavailable()),
            Duration::from_secs(64)
        );
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let limited = |secs| LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(secs)),
            message: String::new(),
        };
        assert_eq!(policy().delay(1, &limited(2)), Duration::from_secs(2));
        assert_eq!(policy().delay(1, &limited(600)), Duration::from_secs(64));
    }

    #[test]
    fn nonsense_config_does_not_panic() {
        let mut config = LlmConfig::new("openai/x");
        config.retry_min_wait = f64::NAN;
        config.retry_max_wait = -3.0;
        config.retry_multiplier = f64::INFINITY;
        let policy = RetryPolicy::from_config(&config);
        assert_eq!(policy.delay(3, &unavailable()), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn retries_retryable_errors_only() {
        let calls = AtomicU32::new(0);
        let result = policy()
            .run(&CancellationToken::new(), |n| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move { if n < 2 { Err(unavailable()) } else { Ok(n) } }
            })
            .await;
        assert_eq!(result, Ok(2));
        assert_eq!(calls.load(Ordering::SeqCst), 3);

        let calls = AtomicU32::new(0);
        let result: Result<()> = policy()
            .run(&CancellationToken::new(), |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async {
                    Err(LlmError::Auth {
                        status: 401,
                        message: "no".into(),
                    })
                }
            })
            .await;
        assert!(matches!(result, Err(LlmError::Auth { .. })));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_max_retries_with_last_error() {
        let calls = AtomicU32::new(0);
        let result: Result<()> = policy()
            .run(&CancellationToken::new(), |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Err(unavailable()) }
            })
            .await;
        assert_eq!(result, Err(unavailable()));
        assert_eq!(calls.load(Ordering::SeqCst), 6);
    }

    #[tokio::test(start_paused = true)]
    async fn each_retry_is_announced_before_its_wait() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let result = policy()
            .run_observed(&CancellationToken::new(), Some(&tx), |n| async move {
                if n < 2 { Err(unavailable()) } else { Ok(n) }
            })
            .await;
        assert_eq!(result, Ok(2));
        drop(tx);
        let mut notices = Vec::new();
        while let Some(n) = rx.recv().await {
            notices.push((n.retry, n.max_retries, n.wait.as_secs(), n.error));
        }
        assert_eq!(
            notices,
            vec![(1, 5, 8, unavailable()), (2, 5, 16, unavailable())]
        );
    }

    #[tokio::test]
    async fn cancelling_ends_the_wait() {
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            trigger.cancel();
        });
        let started = std::time::Instant::now();
        let result: Result<()> = policy()
            .run(&cancel, |_| async { Err(unavailable()) })
            .await;
        assert_eq!(result, Err(LlmError::Cancelled));
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
