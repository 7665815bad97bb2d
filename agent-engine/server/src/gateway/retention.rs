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
    /// A sweep is deleting it: no request may start on it.
    deleting: bool,
}

#[derive(Debug, Default)]
struct Inner {
    seeded: bool,
    entries: HashMap<String, Entry>,
}

impl Inner {
    /// Marks `id` in use (retaining it when `made`); `None` when a sweep is deleting it.
    /// Returns whether it is tracked.
    fn acquire(&mut self, id: &str, made: bool) -> Option<bool> {
        if made {
            // A new conversation under this id: whatever was tracked before is gone.
            self.entries.insert(
                id.to_owned(),
                Entry {
                    in_flight: 1,
                    ..Entry::default()
                },
            );
            return Some(true);
        }
        match self.entries.get_mut(id) {
            None => Some(false),
            Some(e) if e.deleting => None,
            Some(e) => {
                e.in_flight += 1;
                Some(true)
            }
        }
    }

    /// Ends a use of `id`: its clock restarts.
    fn release(&mut self, id: &str) {
        if let Some(e) = self.entries.get_mut(id) {
            e.in_flight = e.in_flight.saturating_sub(1);
            e.last_used = Some(Instant::now());
        }
    }

    /// The idle conversations the policy no longer keeps at `now`, least recently used
    /// first, marked as being deleted (so no request starts on them meanwhile).
    fn doom(&mut self, now: Instant, retention: Duration, max: usize) -> Vec<String> {
        let mut idle: Vec<(String, Instant)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.in_flight == 0 && !e.deleting)
            .map(|(id, e)| (id.clone(), e.last_used.unwrap_or(now)))
            .collect();
        idle.sort_by_key(|(_, at)| *at);
        let kept = self.entries.values().filter(|e| !e.deleting).count();
        let over = kept.saturating_sub(max);
        let mut doomed = Vec::new();
        for (i, (id, at)) in idle.into_iter().enumerate() {
            if i < over || now.duration_since(at) >= retention {
                doomed.push(id);
            }
        }
        for id in &doomed {
            if let Some(e) = self.entries.get_mut(id) {
                e.deleting = true;
            }
        }
        doomed
    }

    /// `id`'s deletion ended: forget it unless a new conversation took its id meanwhile.
    fn deleted(&mut self, id: &str) {
        if self.entries.get(id).is_some_and(|e| e.deleting) {
            self.entries.remove(id);
        }
    }
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
            self.state.gateway.lock().release(&id);
        }
    }
}

impl Retained {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks `id` in use; `made` when the gateway made it (it is then retained). A
    /// conversation the gateway did not make is only marked, never retained. `None` when the
    /// policy is deleting it (the request must not run on it).
    pub fn use_conversation(state: &AppState, id: &str, made: bool) -> Option<InUse> {
        let tracked = state.gateway.lock().acquire(id, made)?;
        Some(InUse {
            state: state.clone(),
            id: tracked.then(|| id.to_owned()),
        })
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
        let doomed = state.gateway.lock().doom(Instant::now(), retention, max);
        for id in doomed {
            tracing::debug!(conversation = %id, "deleting a gateway conversation (retention)");
            match state.registry.delete(&id).await {
                Ok(()) | Err(crate::error::ApiError::NotFound) => {}
                Err(e) => {
                    tracing::warn!(conversation = %id, "deleting a gateway conversation: {e}")
                }
            }
            state.gateway.lock().deleted(&id);
        }
    }

    /// How often the sweep should run for this retention.
    pub fn period(retention: Duration) -> Duration {
        retention / 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn a_conversation_being_deleted_takes_no_request_and_one_in_use_is_never_doomed() {
        let mut inner = Inner::default();
        for id in ["a", "b", "c"] {
            assert_eq!(inner.acquire(id, true), Some(true));
        }
        // "b" is continued while the sweep runs: in flight, it is never doomed.
        assert_eq!(inner.acquire("b", false), Some(true));
        for id in ["a", "b", "c"] {
            inner.release(id);
        }
        assert_eq!(inner.doom(Instant::now() + HOUR, HOUR, 100).len(), 2);
        // The doomed ones refuse new requests until their deletion ends; "b" still serves.
        assert_eq!(inner.acquire("a", false), None);
        assert_eq!(inner.acquire("c", false), None);
        assert_eq!(inner.acquire("b", false), Some(true));
        assert!(inner.doom(Instant::now() + HOUR, HOUR, 100).is_empty());
        // A conversation made again under a doomed id is kept when that deletion ends.
        assert_eq!(inner.acquire("c", true), Some(true));
        inner.deleted("a");
        inner.deleted("c");
        assert_eq!(inner.acquire("a", false), Some(false), "forgotten");
        assert!(inner.entries.contains_key("c") && inner.entries.contains_key("b"));
        // Conversations not made by the gateway are never tracked.
        assert_eq!(inner.acquire("api", false), Some(false));
    }

    #[test]
    fn beyond_the_limit_the_least_recently_used_idle_ones_go() {
        let mut inner = Inner::default();
        let start = Instant::now();
        for (i, id) in ["old", "mid", "new"].into_iter().enumerate() {
            inner.acquire(id, true);
            inner.release(id);
            if let Some(e) = inner.entries.get_mut(id) {
                e.last_used = Some(start + Duration::from_secs(i as u64));
            }
        }
        inner.acquire("busy", true);
        let doomed = inner.doom(start + Duration::from_secs(10), HOUR, 2);
        assert_eq!(doomed, vec!["old".to_owned(), "mid".to_owned()]);
    }
}
