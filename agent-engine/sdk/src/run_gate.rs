//! How many conversations step at once. A run beyond the limit waits its turn in a queue, first
//! come first served, instead of being refused; it starts as a slot frees.
//!
//! A conversation's run loop holds a [`RunPermit`] from its first step until it stops; a run
//! that found no free slot holds a [`Ticket`] and knows how many runs are ahead of it. Dropping
//! a ticket (the run was paused or the conversation closed while waiting) leaves the queue;
//! dropping a permit hands the slot to the oldest ticket.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{oneshot, watch};

/// The slots runs share, and the queue of runs waiting for one.
#[derive(Debug)]
pub struct RunGate {
    max: usize,
    inner: Mutex<Inner>,
    /// Bumped whenever the queue moves, so waiting runs can say where they stand.
    moved: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct Inner {
    running: usize,
    waiting: VecDeque<Waiter>,
    next_ticket: u64,
}

#[derive(Debug)]
struct Waiter {
    ticket: u64,
    grant: oneshot::Sender<RunPermit>,
}

/// A slot: held while a run steps; dropping it hands the slot on.
#[derive(Debug)]
pub struct RunPermit {
    gate: Arc<RunGate>,
}

/// A place in the queue. Await [`Ticket::granted`] for the slot; drop it to leave the queue.
#[derive(Debug)]
pub struct Ticket {
    gate: Arc<RunGate>,
    number: u64,
    grant: Option<oneshot::Receiver<RunPermit>>,
}

/// What [`RunGate::enter`] gives: a slot now, or a place in the queue.
#[derive(Debug)]
pub enum Entry {
    /// A slot was free.
    Running(RunPermit),
    /// Every slot is taken: wait with this ticket.
    Queued(Ticket),
}

impl RunGate {
    /// A gate letting `max` runs step at once (at least one).
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            inner: Mutex::new(Inner::default()),
            moved: watch::channel(0).0,
        })
    }

    /// How many runs may step at once.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Runs stepping now.
    pub fn running(&self) -> usize {
        self.lock().running
    }

    /// Runs waiting for a slot.
    pub fn queued(&self) -> usize {
        self.lock().waiting.len()
    }

    /// A slot if one is free, else a place at the end of the queue.
    pub fn enter(self: &Arc<Self>) -> Entry {
        let mut inner = self.lock();
        if inner.running < self.max && inner.waiting.is_empty() {
            inner.running += 1;
            return Entry::Running(RunPermit {
                gate: Arc::clone(self),
            });
        }
        let number = inner.next_ticket;
        inner.next_ticket += 1;
        let (grant, rx) = oneshot::channel();
        inner.waiting.push_back(Waiter {
            ticket: number,
            grant,
        });
        drop(inner);
        self.moved.send_modify(|n| *n += 1);
        Entry::Queued(Ticket {
            gate: Arc::clone(self),
            number,
            grant: Some(rx),
        })
    }

    /// A receiver that changes whenever the queue moves.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.moved.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A run stopped: its slot goes to the oldest waiting run, or is freed.
    fn release(self: &Arc<Self>) {
        loop {
            let mut inner = self.lock();
            let Some(next) = inner.waiting.pop_front() else {
                inner.running = inner.running.saturating_sub(1);
                drop(inner);
                self.moved.send_modify(|n| *n += 1);
                return;
            };
            drop(inner);
            self.moved.send_modify(|n| *n += 1);
            // The slot passes without being freed. A ticket dropped just now cannot take it:
            // forget that permit (so its drop does not release again) and try the next one.
            match next.grant.send(RunPermit {
                gate: Arc::clone(self),
            }) {
                Ok(()) => return,
                Err(permit) => std::mem::forget(permit),
            }
        }
    }
}

impl Drop for RunPermit {
    fn drop(&mut self) {
        let gate = Arc::clone(&self.gate);
        gate.release();
    }
}

impl Ticket {
    /// How many runs are ahead of this one (0: next); `None` once it has its slot.
    pub fn ahead(&self) -> Option<usize> {
        self.gate
            .lock()
            .waiting
            .iter()
            .position(|w| w.ticket == self.number)
    }

    /// Waits for the slot.
    pub async fn granted(&mut self) -> RunPermit {
        match self.grant.as_mut() {
            Some(rx) => match rx.await {
                Ok(permit) => {
                    self.grant = None;
                    permit
                }
                // The gate keeps every waiter's sender until it grants it.
                Err(_) => std::future::pending().await,
            },
            None => std::future::pending().await,
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut inner = self.gate.lock();
        let before = inner.waiting.len();
        inner.waiting.retain(|w| w.ticket != self.number);
        let left = inner.waiting.len() != before;
        drop(inner);
        if left {
            self.gate.moved.send_modify(|n| *n += 1);
        } else if let Some(mut rx) = self.grant.take()
            && let Ok(permit) = rx.try_recv()
        {
            // Granted but never taken: hand the slot on.
            drop(permit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(e: Entry) -> Ticket {
        match e {
            Entry::Queued(t) => t,
            Entry::Running(_) => panic!("expected to queue"),
        }
    }

    fn running(e: Entry) -> RunPermit {
        match e {
            Entry::Running(p) => p,
            Entry::Queued(_) => panic!("expected a slot"),
        }
    }

    #[tokio::test]
    async fn runs_beyond_the_limit_wait_in_order_and_start_as_slots_free() {
        let gate = RunGate::new(2);
        let a = running(gate.enter());
        let b = running(gate.enter());
        let mut c = queued(gate.enter());
        let mut d = queued(gate.enter());
        assert_eq!((gate.running(), gate.queued()), (2, 2));
        assert_eq!((c.ahead(), d.ahead()), (Some(0), Some(1)));

        drop(a);
        let c_permit = c.granted().await;
        assert_eq!(c.ahead(), None);
        assert_eq!(d.ahead(), Some(0));
        assert_eq!((gate.running(), gate.queued()), (2, 1));

        drop(b);
        let d_permit = d.granted().await;
        drop((c_permit, d_permit));
        assert_eq!((gate.running(), gate.queued()), (0, 0));
    }

    #[tokio::test]
    async fn a_ticket_dropped_leaves_the_queue_and_one_granted_but_untaken_passes_its_slot_on() {
        let gate = RunGate::new(1);
        let a = running(gate.enter());
        let b = queued(gate.enter());
        let c = queued(gate.enter());
        drop(b);
        assert_eq!(c.ahead(), Some(0));

        let mut d = queued(gate.enter());
        drop(a); // c is granted the slot...
        drop(c); // ...but goes away before taking it: d gets it.
        let permit = d.granted().await;
        assert_eq!((gate.running(), gate.queued()), (1, 0));
        drop(permit);
        assert_eq!(gate.running(), 0);
        let _e = running(gate.enter());
    }

    #[tokio::test]
    async fn the_watch_sees_the_queue_move() {
        let gate = RunGate::new(1);
        let a = running(gate.enter());
        let mut rx = gate.watch();
        rx.mark_unchanged();
        let _b = queued(gate.enter());
        assert!(rx.has_changed().unwrap());
        rx.mark_unchanged();
        drop(a);
        assert!(rx.has_changed().unwrap());
    }
}
