//! A run's slot among the conversations that share a [`RunGate`]: taken when the run starts,
//! waited for in the queue when every slot is taken (the state says how many runs are ahead),
//! given back when the run ends.

use std::sync::Arc;

use tandem_protocol::Event;
use tokio::sync::watch;

use super::Actor;
use crate::run_gate::{Entry, RunGate, RunPermit, Ticket};

/// The state key of a waiting run's place: `{"ahead": n}` while it waits, null once it runs.
pub const QUEUE_KEY: &str = "queued_ahead";

/// What a run holds of the gate.
#[derive(Debug, Default)]
pub(super) enum Slot {
    /// Not running, or no gate.
    #[default]
    Free,
    /// Stepping.
    Held(#[allow(dead_code)] RunPermit),
    /// Waiting its turn.
    Waiting(Waiting),
}

#[derive(Debug)]
pub(super) struct Waiting {
    ticket: Ticket,
    moved: watch::Receiver<u64>,
}

/// What happened to a waiting run.
pub(super) enum QueueMove {
    /// Its turn came.
    Granted(RunPermit),
    /// The queue moved: it may be nearer the front.
    Moved,
}

impl Waiting {
    /// The next thing that happens to this run in the queue.
    pub(super) async fn next(&mut self) -> QueueMove {
        tokio::select! {
            permit = self.ticket.granted() => QueueMove::Granted(permit),
            changed = self.moved.changed() => match changed {
                Ok(()) => QueueMove::Moved,
                // The gate lives as long as the ticket: this does not happen.
                Err(_) => std::future::pending().await,
            },
        }
    }
}

impl Slot {
    pub(super) fn is_waiting(&self) -> bool {
        matches!(self, Self::Waiting(_))
    }
}

impl Actor {
    /// Takes a slot for the run starting now, or a place in the queue (recorded in the log).
    pub(super) fn take_slot(&mut self, gate: &Arc<RunGate>) {
        match gate.enter() {
            Entry::Running(permit) => self.slot = Slot::Held(permit),
            Entry::Queued(ticket) => {
                let ahead = ticket.ahead().unwrap_or(0);
                let mut moved = gate.watch();
                moved.mark_unchanged();
                self.slot = Slot::Waiting(Waiting { ticket, moved });
                let leaf = self.leaf();
                self.emit(Event::state_update(
                    QUEUE_KEY,
                    serde_json::json!({ "ahead": ahead }),
                    leaf,
                ));
            }
        }
    }

    /// A waiting run's turn came, or the queue moved (the state shows the new place; that is
    /// not logged, the run's start is).
    pub(super) fn on_queue_move(&mut self, waiting: Waiting, change: QueueMove) {
        match change {
            QueueMove::Granted(permit) => {
                self.slot = Slot::Held(permit);
                let leaf = self.leaf();
                self.emit(Event::state_update(
                    QUEUE_KEY,
                    serde_json::Value::Null,
                    leaf,
                ));
            }
            QueueMove::Moved => {
                if let Some(ahead) = waiting.ticket.ahead() {
                    let mut view = self.write_view();
                    if let Some(q) = view.state.extra.get_mut(QUEUE_KEY)
                        && let Some(obj) = q.as_object_mut()
                    {
                        obj.insert("ahead".into(), ahead.into());
                    }
                }
                self.slot = Slot::Waiting(waiting);
            }
        }
    }

    /// The run ended: its slot goes to the next waiting run, or it leaves the queue.
    pub(super) fn release_slot(&mut self) {
        if let Slot::Waiting(_) = std::mem::take(&mut self.slot) {
            let leaf = self.leaf();
            self.emit(Event::state_update(
                QUEUE_KEY,
                serde_json::Value::Null,
                leaf,
            ));
        }
    }
}
