//! Who drives the browser: one state machine, [`Control`], under one mutex. Every change of
//! driver is one transition made while holding that mutex, and the live view's state
//! (`driver`, `handoff`) is published inside the same critical section, so no reader ever sees
//! a driver the machine does not have.
//!
//! ```text
//!                request_handoff                  take_control
//!   Agent{..} ─────────────────▶ HandoffRequested ───────────▶ Person{resume: false, reply}
//!     │   ▲   ◀───────────────── (cancel_handoff)                 │
//!     │   │                     take_control(running)             │ hand_back
//!     │   └──────────────────────────────────────────── Agent{resume_pending: resume}
//!     └─────────────────────────────────────────────▶ Person{resume: running || resume_pending}
//! ```
//!
//! Ordering rules, which the stress test in the server's tests checks:
//! - [`Browser::take_control`] and [`Browser::hand_back`] wait for the engine lock, so an agent
//!   action (or a person's input) in flight finishes before the driver changes; agent actions
//!   check the driver while holding that lock ([`Browser::for_agent`]), so none runs while a
//!   person drives.
//! - Whether the hand-back resumes the agent's run is decided in the takeover's transition
//!   (`Person { resume_on_hand_back }`) and read in the hand-back's, never kept elsewhere.
//! - Takeovers and hand-backs take turns: each holds the browser's turn until the caller drops
//!   the [`Takeover`] / [`HandOver`] it got, so what the server does around a transition
//!   (pause the run, record the change) finishes before the next transition starts. A
//!   hand-back that arrives while the takeover is still pausing the run waits for it.
//! - A hand-back that owes the agent a resume leaves `Agent { resume_pending: true }`; the
//!   resume ([`Browser::resume_pending`]) happens in its own turn, only once the run has
//!   stopped (checked in that turn, not before it) and only if the agent still drives. A takeover that comes first inherits the
//!   debt (its own hand-back resumes), so no hand-back leaves the run paused.

use std::sync::Arc;

use tokio::sync::{OwnedMutexGuard, oneshot};

use crate::browser::{Browser, HandBack};
use tandem_protocol::{BrowserDriver as Driver, BrowserHandoff as Handoff};

/// The state machine.
#[derive(Debug)]
pub(crate) enum Control {
    /// The agent's tools act.
    Agent {
        /// A hand-back owes the agent's run a resume not made yet.
        resume_pending: bool,
    },
    /// The agent waits in `browser_request_handoff` for a person (its tools may still act).
    HandoffRequested {
        /// Answered at the hand-back.
        reply: oneshot::Sender<HandBack>,
    },
    /// A person drives; the agent's browser actions are refused.
    Person {
        /// URL and title when they took control.
        taken_at: (String, String),
        /// Whether the takeover paused a running agent, so the hand-back must resume it.
        resume_on_hand_back: bool,
        /// A `browser_request_handoff` waiting for the hand-back.
        reply: Option<oneshot::Sender<HandBack>>,
    },
}

impl Default for Control {
    fn default() -> Self {
        Self::Agent {
            resume_pending: false,
        }
    }
}

impl Control {
    pub(crate) fn driver(&self) -> Driver {
        match self {
            Self::Person { .. } => Driver::Person,
            _ => Driver::Agent,
        }
    }
}

/// What [`Browser::resume_pending`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// The run was resumed.
    Resumed,
    /// Nothing is owed (already resumed, or a person drives again and owes it at their own
    /// hand-back).
    NotOwed,
    /// The run has not stopped yet: wait until it does and ask again.
    NotStopped,
}

/// A takeover that happened. The next takeover or hand-back waits until this is dropped, so
/// the caller records it and pauses the run first.
#[must_use = "the next hand-back waits until the takeover is dropped"]
pub struct Takeover {
    /// Where the page was when the person took control.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Whether the agent's run was running (and not waiting for the person): the caller pauses
    /// it, and the hand-back will say to resume it.
    pub pause_run: bool,
    _turn: OwnedMutexGuard<()>,
}

impl std::fmt::Debug for Takeover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Takeover")
            .field("url", &self.url)
            .field("pause_run", &self.pause_run)
            .finish_non_exhaustive()
    }
}

/// A hand-back that happened: what to tell the agent, whether to resume its run, and the
/// secrets the person typed. A waiting `browser_request_handoff` is answered by
/// [`HandOver::answer`] (or when this is dropped), so the caller registers the secrets first
/// and the agent's observation is masked.
#[must_use = "the waiting agent is answered when the hand-over is answered or dropped"]
pub struct HandOver {
    /// What changed while the person drove.
    pub back: HandBack,
    /// Whether the takeover paused the agent's run: resume it with
    /// [`Browser::resume_pending`] once the paused step has landed.
    pub resume_run: bool,
    /// `(name, value)` of what the person typed into password fields, to become secrets of
    /// the conversation before the agent sees anything.
    pub secrets: Vec<(String, String)>,
    reply: Option<oneshot::Sender<HandBack>>,
    _turn: OwnedMutexGuard<()>,
}

impl std::fmt::Debug for HandOver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandOver")
            .field("back", &self.back)
            .field("resume_run", &self.resume_run)
            .field("secrets", &self.secrets.len())
            .finish_non_exhaustive()
    }
}

impl HandOver {
    /// Gives the hand-back to a waiting `browser_request_handoff` as its result. Answers
    /// whether one was waiting (if not, the caller tells the agent some other way).
    pub fn answer(&mut self) -> bool {
        match self.reply.take() {
            Some(reply) => reply.send(self.back.clone()).is_ok(),
            None => false,
        }
    }

    /// Whether an agent waits for this hand-back (not yet answered).
    pub fn awaited(&self) -> bool {
        self.reply.as_ref().is_some_and(|r| !r.is_closed())
    }
}

impl Drop for HandOver {
    fn drop(&mut self) {
        self.answer();
    }
}

impl Browser {
    /// Who drives.
    pub fn driver(&self) -> Driver {
        self.control().driver()
    }

    pub(crate) fn control(&self) -> std::sync::MutexGuard<'_, Control> {
        self.inner
            .control
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn turn(&self) -> OwnedMutexGuard<()> {
        Arc::clone(&self.inner.turn).lock_owned().await
    }

    /// A person takes control. Waits for an agent action in flight to finish; from then on
    /// the agent's browser actions are refused until the hand-back. `running` is asked (in the
    /// transition) whether the agent's run is active: a running agent that is not waiting for
    /// the person is to be paused, and resumed at the hand-back. `None` when the person
    /// already drove.
    pub async fn take_control(&self, running: impl FnOnce() -> bool) -> Option<Takeover> {
        let turn = self.turn().await;
        // The agent's action in flight holds the engine; it finishes first.
        let _engine = self.inner.engine.lock().await;
        let mut control = self.control();
        let (url, title) = {
            let s = self.inner.state.borrow();
            (s.url.clone(), s.title.clone())
        };
        let (pause_run, reply) = match std::mem::take(&mut *control) {
            Control::Person {
                taken_at,
                resume_on_hand_back,
                reply,
            } => {
                *control = Control::Person {
                    taken_at,
                    resume_on_hand_back,
                    reply,
                };
                return None;
            }
            Control::Agent { resume_pending } => (running() || resume_pending, None),
            // The agent waits in browser_request_handoff: its run is waiting for the person,
            // not to be paused.
            Control::HandoffRequested { reply } => (false, Some(reply)),
        };
        *control = Control::Person {
            taken_at: (url.clone(), title.clone()),
            resume_on_hand_back: pause_run,
            reply,
        };
        self.inner.state.send_modify(|s| s.driver = Driver::Person);
        drop(control);
        Some(Takeover {
            url,
            title,
            pause_run,
            _turn: turn,
        })
    }

    /// The person hands control back with `note`. Waits for their input in flight to finish,
    /// collects what they typed into password fields, and gives the browser to the agent.
    /// `None` when the agent already drove.
    pub async fn hand_back(&self, note: &str) -> Option<HandOver> {
        let turn = self.turn().await;
        let mut engine = self.inner.engine.lock().await;
        if self.driver() != Driver::Person {
            return None;
        }
        // Password fields still filled in on any tab count too (the person may not have
        // typed into them through the live view, or not submitted yet).
        if let Some(engine) = engine.as_mut() {
            self.collect_password_fields(engine).await;
        }
        let secrets = self.take_typed_secrets();
        let mut control = self.control();
        let Control::Person {
            taken_at: (url_before, title_before),
            resume_on_hand_back,
            reply,
        } = std::mem::take(&mut *control)
        else {
            return None;
        };
        *control = Control::Agent {
            resume_pending: resume_on_hand_back,
        };
        self.inner.state.send_modify(|s| {
            s.driver = Driver::Agent;
            s.handoff = None;
        });
        let now = self.inner.state.borrow().clone();
        drop(control);
        drop(engine);
        Some(HandOver {
            back: HandBack {
                url_before,
                title_before,
                url_after: now.url,
                title_after: now.title,
                note: note.to_owned(),
            },
            resume_run: resume_on_hand_back,
            secrets,
            reply,
            _turn: turn,
        })
    }

    /// Whether the agent is waiting in `browser_request_handoff`.
    pub fn handoff_pending(&self) -> bool {
        match &*self.control() {
            Control::HandoffRequested { .. } => true,
            Control::Person { reply, .. } => reply.is_some(),
            Control::Agent { .. } => false,
        }
    }

    /// Makes the resume a hand-back owes the agent's run, in the browser's turn (so no
    /// takeover interleaves): `resume` runs only if the agent still drives, the resume is still
    /// owed and the run has stopped (`running` answers false). While the run is still going
    /// (the step the takeover paused has not landed) the debt stays and
    /// [`Resume::NotStopped`] says to wait for the run to stop and ask again: a resume decided
    /// on a stop seen before the turn could start nothing and lose the debt.
    pub async fn resume_pending<F, Fut>(&self, running: impl FnOnce() -> bool, resume: F) -> Resume
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let _turn = self.turn().await;
        {
            let mut control = self.control();
            match &mut *control {
                Control::Agent { resume_pending } if *resume_pending => {
                    if running() {
                        return Resume::NotStopped;
                    }
                    *resume_pending = false;
                }
                _ => return Resume::NotOwed,
            }
        }
        resume().await;
        Resume::Resumed
    }

    /// The agent asks for a person; the answer comes at the hand-back. While a person already
    /// drives, their hand-back answers it.
    pub(crate) fn request_handoff(&self, reason: &str) -> oneshot::Receiver<HandBack> {
        let (tx, rx) = oneshot::channel();
        let mut control = self.control();
        match &mut *control {
            Control::Person { reply, .. } => *reply = Some(tx),
            other => *other = Control::HandoffRequested { reply: tx },
        }
        self.inner.state.send_modify(|s| {
            s.handoff = Some(Handoff {
                reason: reason.to_owned(),
            })
        });
        rx
    }

    /// Withdraws a handoff request the agent stopped waiting for (interrupted, or closed).
    pub(crate) fn cancel_handoff(&self) {
        let mut control = self.control();
        match &mut *control {
            Control::HandoffRequested { .. } => *control = Control::default(),
            Control::Person { reply, .. } => *reply = None,
            Control::Agent { .. } => {}
        }
        self.inner
            .state
            .send_if_modified(|s| s.handoff.take().is_some());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::BrowserConfig;

    /// No Chromium: who drives and the resume debt need none.
    fn browser(dir: &tempfile::TempDir) -> Browser {
        Browser::new(BrowserConfig::for_conversation(
            dir.path().join("conv"),
            dir.path().join("ws"),
        ))
    }

    async fn resume(b: &Browser, running: bool, resumes: &AtomicUsize) -> Resume {
        b.resume_pending(
            || running,
            || async {
                resumes.fetch_add(1, Ordering::SeqCst);
            },
        )
        .await
    }

    #[tokio::test]
    async fn a_resume_asked_while_the_paused_run_is_still_going_keeps_the_debt() {
        let dir = tempfile::tempdir().unwrap();
        let b = browser(&dir);
        let resumes = AtomicUsize::new(0);
        let takeover = b.take_control(|| true).await.unwrap();
        assert!(takeover.pause_run);
        drop(takeover);
        let over = b.hand_back("done").await.unwrap();
        assert!(over.resume_run);
        drop(over);
        // The step the takeover paused has not landed: nothing resumes, the debt stays.
        assert_eq!(resume(&b, true, &resumes).await, Resume::NotStopped);
        assert_eq!(resumes.load(Ordering::SeqCst), 0);
        // Once it has stopped, the resume runs once.
        assert_eq!(resume(&b, false, &resumes).await, Resume::Resumed);
        assert_eq!(resume(&b, false, &resumes).await, Resume::NotOwed);
        assert_eq!(resumes.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_late_resumer_never_spends_the_debt_of_a_later_takeover_on_a_running_run() {
        let dir = tempfile::tempdir().unwrap();
        let b = browser(&dir);
        let resumes = AtomicUsize::new(0);
        // A takeover paused the run, its hand-back owes the resume, and the run stopped.
        drop(b.take_control(|| true).await.unwrap());
        drop(b.hand_back("first").await.unwrap());
        // A second takeover comes first: it inherits the debt, although the run had stopped.
        let second = b.take_control(|| false).await.unwrap();
        assert!(second.pause_run, "the debt passes to the takeover");
        drop(second);
        // A resumer that saw the stop before the takeover finds nothing owed while a person
        // drives.
        assert_eq!(resume(&b, false, &resumes).await, Resume::NotOwed);
        // The second hand-back owes it again; the run was resumed meanwhile and a third
        // takeover's pause is still in flight: a resumer that saw an earlier stop waits.
        drop(b.hand_back("second").await.unwrap());
        assert_eq!(resume(&b, true, &resumes).await, Resume::NotStopped);
        assert_eq!(resume(&b, false, &resumes).await, Resume::Resumed);
        assert_eq!(resumes.load(Ordering::SeqCst), 1);
        assert_eq!(b.driver(), Driver::Agent);
    }

    #[tokio::test]
    async fn taking_control_twice_or_handing_back_twice_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let b = browser(&dir);
        assert!(b.hand_back("nobody drove").await.is_none());
        drop(b.take_control(|| false).await.unwrap());
        assert!(b.take_control(|| true).await.is_none());
        let over = b.hand_back("back").await.unwrap();
        assert!(
            !over.resume_run,
            "a run that was not running is not resumed"
        );
        drop(over);
        assert!(b.hand_back("again").await.is_none());
        assert_eq!(b.driver(), Driver::Agent);
    }
}
