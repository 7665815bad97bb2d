//! The cleanup policy of gateway-made conversations (see the module doc): each is kept while
//! used, and deleted after `gateway_retention` unused or beyond `gateway_max_retained`
//! (least recently used first); one with a request in flight is never deleted.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::AppState;

/// The tag marking a conversation the gateway made.
pub const TAG: (&str, &str) = ("source", "gateway");

#[derive(Debug, Default)]
struct Entry {
    last_used: Option<Instant>,
    in_flight: usize,
}

#[derive(Debug, Default)]
struct Inner {
    seeded: bool,
    entries: HashMap<String, Entry>,
}

/// Gateway-made conversations and when each was last used.
#[derive(Debug, Default)]
pub struct Retained(Mutex<Inner>);

/// Marks a conversation in use until dropped (then its clock restarts).
#[derive(Debug)]
pub struct InUse {
    state: AppState,
    id: Option<String>,
}

impl Drop for InUse {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let mut inner = self.state.gateway.lock();
            if let Some(e) = inner.entries.get_mut(&id) {
                e.in_flight = e.in_flight.saturating_sub(1);
                e.last_used = Some(Instant::now());
            }
        }
    }
}

impl Retained {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks `id` in use; `made` when the gateway made it (it is then retained). A
    /// conversation the gateway did not make is only marked, never retained.
    pub fn use_conversation(state: &AppState, id: &str, made: bool) -> InUse {
        let mut inner = state.gateway.lock();
        let tracked = made || inner.entries.contains_key(id);
        if !tracked {
            return InUse {
                state: state.clone(),
                id: None,
            };
        }
        let e = inner.entries.entry(id.to_owned()).or_default();
        e.in_flight += 1;
        InUse {
            state: state.clone(),
            id: Some(id.to_owned()),
        }
    }

    /// Forgets `id` (deleted by its request).
    pub fn forget(state: &AppState, id: &str) {
        state.gateway.lock().entries.remove(id);
    }

    /// Finds the gateway's conversations on disk once (after a restart), each aged from its
    /// last update.
    async fn seed(state: &AppState) {
        if state.gateway.lock().seeded {
            return;
        }
        let found: Vec<(String, Instant)> = state
            .registry
            .list()
            .await
            .into_iter()
            .filter(|info| info.tags.get(TAG.0).map(String::as_str) == Some(TAG.1))
            .map(|info| {
                let age = chrono::DateTime::parse_from_rfc3339(&info.updated_at)
                    .ok()
                    .and_then(|t| {
                        (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
                            .to_std()
                            .ok()
                    })
                    .unwrap_or_default();
                let at = Instant::now().checked_sub(age).unwrap_or_else(Instant::now);
                (info.id, at)
            })
            .collect();
        let mut inner = state.gateway.lock();
        inner.seeded = true;
        for (id, at) in found {
            let e = inner.entries.entry(id).or_default();
            if e.in_flight == 0 && e.last_used.is_none() {
                e.last_used = Some(at);
            }
        }
    }

    /// Deletes what the policy no longer keeps.
    pub async fn sweep(state: &AppState) {
        Self::seed(state).await;
        let retention = state.config.gateway_retention;
        let max = state.config.gateway_max_retained;
        let doomed = {
            let mut inner = state.gateway.lock();
            let now = Instant::now();
            // Idle ones, least recently used first.
            let mut idle: Vec<(String, Instant)> = inner
                .entries
                .iter()
                .filter(|(_, e)| e.in_flight == 0)
                .map(|(id, e)| (id.clone(), e.last_used.unwrap_or(now)))
                .collect();
            idle.sort_by_key(|(_, at)| *at);
            let over = inner.entries.len().saturating_sub(max);
            let mut doomed = Vec::new();
            for (i, (id, at)) in idle.into_iter().enumerate() {
                if i < over || now.duration_since(at) >= retention {
                    doomed.push(id);
                }
            }
            for id in &doomed {
                inner.entries.remove(id);
            }
            doomed
        };
        for id in doomed {
            tracing::debug!(conversation = %id, "deleting a gateway conversation (retention)");
            match state.registry.delete(&id).await {
                Ok(()) | Err(crate::error::ApiError::NotFound) => {}
                Err(e) => {
                    tracing::warn!(conversation = %id, "deleting a gateway conversation: {e}")
                }
            }
        }
    }

    /// How often the sweep should run for this retention.
    pub fn period(retention: Duration) -> Duration {
        retention / 4
    }
}
