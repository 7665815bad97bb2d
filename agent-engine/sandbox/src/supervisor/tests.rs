//! The supervisor on the fake provisioner: starts cancelled, dropped, failed or shut down at
//! every step leave nothing behind; a sandbox that dies is reported with its exit status; two
//! starts racing each get their own sandbox.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Supervisor;
use crate::fake::{Fake, Step};
use crate::{Progress, SandboxError, SandboxSpec};

/// A deadline only as an "it happened at all" guard, never a speed check.
const GUARD: Duration = Duration::from_secs(30);

struct Setup {
    fake: Arc<Fake>,
    sup: Supervisor,
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let fake = Fake::new();
        let sup = Supervisor::new(fake.clone());
        Self {
            fake,
            sup,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn spec(&self) -> SandboxSpec {
        SandboxSpec::new(self.dir.path())
    }

    /// A start, awaited here, with a token nobody cancels.
    async fn start(&self) -> Result<super::Running, SandboxError> {
        self.sup
            .start(&self.spec(), &|_| {}, &CancellationToken::new())
            .await
    }

    /// A start on a task, with its own token.
    fn spawn_start(
        &self,
    ) -> (
        tokio::task::JoinHandle<Result<super::Running, SandboxError>>,
        CancellationToken,
    ) {
        let (sup, spec, cancel) = (self.sup.clone(), self.spec(), CancellationToken::new());
        let token = cancel.clone();
        let task = tokio::spawn(async move { sup.start(&spec, &|_| {}, &token).await });
        (task, cancel)
    }

    /// Waits until the fake holds no sandbox (removals on tasks take a moment).
    async fn until_empty(&self) {
        tokio::time::timeout(GUARD, async {
            while !self.fake.sandboxes().is_empty() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("left behind: {:?}", self.fake.sandboxes()));
    }

    fn nothing_left(&self) {
        assert_eq!(self.fake.sandboxes(), Vec::<String>::new(), "left behind");
        assert_eq!(self.sup.owned(), Vec::<String>::new(), "still owned");
        assert_eq!(
            self.fake.dropped_creates(),
            0,
            "a create was dropped half-way"
        );
    }
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("it never happened")
}

#[tokio::test]
async fn a_start_runs_its_steps_in_order_and_stop_removes_the_sandbox() {
    let s = Setup::new();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let h = Arc::clone(&heard);
    let progress = move |p: Progress| h.lock().unwrap().push(p);
    let running = s
        .sup
        .start(&s.spec(), &progress, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        *heard.lock().unwrap(),
        [
            Progress::Starting,
            Progress::WaitingForHealth,
            Progress::Ready
        ]
    );
    let id = running.sandbox().id.clone();
    assert_eq!(running.sandbox().session_key, format!("key-of-{id}"));
    assert_eq!(s.fake.sandboxes(), std::slice::from_ref(&id));
    assert_eq!(s.sup.owned(), [id]);
    assert_eq!(running.has_exited(), None);
    running.stop().await.unwrap();
    s.nothing_left();
}

#[tokio::test]
async fn cancelling_a_start_at_each_step_leaves_nothing() {
    // Before anything: no create at all.
    let s = Setup::new();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let r = s.sup.start(&s.spec(), &|_| {}, &cancel).await;
    assert!(matches!(r, Err(SandboxError::Cancelled)), "{r:?}");
    assert_eq!(s.fake.creates(), 0);

    for step in [Step::Create, Step::Start, Step::Ready] {
        let s = Setup::new();
        let gate = s.fake.hold(step);
        let (task, cancel) = s.spawn_start();
        within(gate.reached()).await;
        cancel.cancel();
        if step == Step::Create {
            // The create runs to its end (the daemon would finish it anyway); the start ends
            // right after, removing it by its id.
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert!(!task.is_finished(), "the create is never abandoned");
            gate.release();
        }
        // Start and ready are left hanging: the start does not wait for them.
        let r = within(task).await.unwrap();
        assert!(matches!(r, Err(SandboxError::Cancelled)), "{step:?}: {r:?}");
        s.nothing_left();
    }
}

#[tokio::test]
async fn a_failing_step_removes_what_was_created_and_says_why() {
    for (step, needed) in [
        (Step::Create, "no space"),
        (Step::Start, "no space"),
        (Step::Ready, "no space"),
    ] {
        let s = Setup::new();
        s.fake.fail(step, "no space");
        let e = s.start().await.unwrap_err();
        assert!(e.to_string().contains(needed), "{step:?}: {e}");
        s.nothing_left();
    }
    let s = Setup::new();
    let spec = SandboxSpec::new(s.dir.path().join("missing"));
    let e = s
        .sup
        .start(&spec, &|_| {}, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, SandboxError::Invalid(_)), "{e}");
    s.nothing_left();
}

#[tokio::test]
async fn a_sandbox_that_dies_is_reported_at_once_with_its_exit_status() {
    let s = Setup::new();
    let running = s.start().await.unwrap();
    let id = running.sandbox().id.clone();
    let fake = Arc::clone(&s.fake);
    let killer = id.clone();
    tokio::spawn(async move { fake.kill(&killer, 137) });
    let exit = within(running.exited()).await;
    assert_eq!(exit.code, Some(137));
    assert!(exit.reason.contains("137"), "{}", exit.reason);
    assert_eq!(running.has_exited(), Some(exit));
    // Its owner still removes it (after reading its logs, say).
    assert_eq!(s.fake.sandboxes(), [id]);
    running.stop().await.unwrap();
    s.nothing_left();
}

#[tokio::test]
async fn a_sandbox_dying_while_it_comes_up_fails_the_start_with_the_reason_and_its_output() {
    let s = Setup::new();
    let gate = s.fake.hold(Step::Ready);
    let (task, _cancel) = s.spawn_start();
    within(gate.reached()).await;
    let id = s.fake.sandboxes().remove(0);
    s.fake.kill(&id, 3);
    // The health check still hangs: the death alone ends the start.
    let e = within(task).await.unwrap().unwrap_err();
    let SandboxError::Died { reason, logs, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(reason.contains("code 3"), "{reason}");
    assert!(logs.contains(&format!("the last words of {id}")), "{logs}");
    s.nothing_left();
}

#[tokio::test]
async fn a_sandbox_removed_elsewhere_is_reported_as_removed() {
    let s = Setup::new();
    let running = s.start().await.unwrap();
    s.sup.stop(&running.sandbox().id.clone()).await.unwrap();
    let exit = within(running.exited()).await;
    assert!(exit.reason.contains("removed"), "{}", exit.reason);
    running.stop().await.unwrap();
    s.nothing_left();
}

#[tokio::test]
async fn shutting_down_during_a_start_cancels_it_and_leaves_nothing() {
    for step in [Step::Create, Step::Start, Step::Ready] {
        let s = Setup::new();
        let gate = s.fake.hold(step);
        let (task, _cancel) = s.spawn_start();
        within(gate.reached()).await;
        let sup = s.sup.clone();
        let shutdown = tokio::spawn(async move { sup.shutdown().await });
        if step == Step::Create {
            gate.release();
        }
        let r = within(task).await.unwrap();
        assert!(matches!(r, Err(SandboxError::Cancelled)), "{step:?}: {r:?}");
        within(shutdown).await.unwrap();
        s.nothing_left();
        // A start after the shutdown does not begin.
        s.fake.pass(step);
        let r = s.start().await;
        assert!(matches!(r, Err(SandboxError::Cancelled)), "{r:?}");
        s.nothing_left();
    }
}

#[tokio::test]
async fn shutting_down_removes_every_running_sandbox_but_a_detached_one() {
    let s = Setup::new();
    let never = CancellationToken::new();
    let kept = s.sup.start(&s.spec(), &|_| {}, &never).await.unwrap();
    let detached = s
        .sup
        .start(&s.spec(), &|_| {}, &never)
        .await
        .unwrap()
        .detach();
    s.sup.shutdown().await;
    assert_eq!(s.fake.sandboxes(), std::slice::from_ref(&detached.id));
    // The handle of a removed one says so.
    assert!(within(kept.exited()).await.reason.contains("removed"));
    drop(kept);
    s.sup.stop(&detached.id).await.unwrap();
    s.nothing_left();
}

#[tokio::test]
async fn a_start_dropped_at_any_step_leaves_nothing() {
    for step in [Step::Create, Step::Start, Step::Ready] {
        let s = Setup::new();
        let gate = s.fake.hold(step);
        let (task, _cancel) = s.spawn_start();
        within(gate.reached()).await;
        task.abort();
        let _ = task.await;
        // The create goes on without its start, and removes what it made.
        gate.release();
        s.until_empty().await;
        s.sup.shutdown().await;
        s.nothing_left();
    }
    // A running sandbox whose handle is dropped goes too.
    let s = Setup::new();
    let running = s.start().await.unwrap();
    drop(running);
    s.until_empty().await;
    s.nothing_left();
}

#[tokio::test]
async fn two_starts_racing_each_get_their_own_sandbox_and_a_cancelled_one_leaves_nothing() {
    let s = Setup::new();
    let gate = s.fake.hold(Step::Create);
    let (a, _) = s.spawn_start();
    let (b, cancel_b) = s.spawn_start();
    within(gate.reached()).await;
    within(gate.reached()).await;
    assert_eq!(s.fake.sandboxes().len(), 2);
    cancel_b.cancel();
    gate.release();
    let a = within(a).await.unwrap().unwrap();
    let b = within(b).await.unwrap();
    assert!(matches!(b, Err(SandboxError::Cancelled)), "{b:?}");
    assert_eq!(s.fake.sandboxes(), [a.sandbox().id.clone()]);

    // Both through: two sandboxes, two ids, both removed by one shutdown.
    let (c, _) = s.spawn_start();
    let (d, _) = s.spawn_start();
    let (c, d) = (
        within(c).await.unwrap().unwrap(),
        within(d).await.unwrap().unwrap(),
    );
    assert_ne!(c.sandbox().id, d.sandbox().id);
    assert_eq!(s.sup.owned().len(), 3);
    a.stop().await.unwrap();
    s.sup.shutdown().await;
    drop((c, d));
    s.nothing_left();
}
