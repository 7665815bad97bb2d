//! The one lifecycle of a sandbox, whatever provisions it and whoever asked (`tandem run
//! --sandbox`, `tandem sandbox …`, the desktop): start it step by step, watch it, stop it, and
//! leave nothing behind.
//!
//! - **Start** runs the [`Provisioner`]'s steps in order: create, start, ready. A
//!   [`CancellationToken`] ends it at the next step boundary. The create step always runs to its
//!   end (on its own task, so even a start whose future is dropped gets its id), which means
//!   whatever was created is known by its id when it is removed: nothing is hunted for later.
//! - **Wait**: from the moment it is started a sandbox is watched through
//!   [`Provisioner::wait`], which resolves when it stops, with its exit status; a sandbox that
//!   dies while its server comes up fails the start at once, one that dies later is reported
//!   by [`Running::exited`].
//! - **Stop**: [`Running::stop`] removes it. [`Running`] owns the removal: dropped, it removes
//!   the sandbox too (on a task), unless it was [`detach`](Running::detach)ed to outlive this
//!   process (`tandem sandbox start`).
//! - **Leftovers**: [`Supervisor::sweep`] removes what dead processes left behind, and
//!   [`Supervisor::shutdown`] cancels every start under way and removes every sandbox this
//!   supervisor still owns.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::{
    Created, Exit, OnProgress, Progress, Provisioner, Sandbox, SandboxError, SandboxInfo,
    SandboxSpec,
};

#[cfg(test)]
mod tests;

/// Starts, watches and removes sandboxes through one [`Provisioner`]. Cheap to clone (clones
/// share their sandboxes).
#[derive(Clone)]
pub struct Supervisor {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("owned", &self.shared.owned_ids())
            .finish_non_exhaustive()
    }
}

struct Shared {
    provisioner: Arc<dyn Provisioner>,
    /// Cancelled by [`Supervisor::shutdown`]: every start ends at its next step.
    closing: CancellationToken,
    /// Sandboxes created here and neither removed nor detached yet.
    owned: Mutex<HashSet<String>>,
    /// Work that must run to its end even when nobody awaits it: creates, and the removal of a
    /// sandbox whose owner was dropped.
    tracker: TaskTracker,
}

impl Supervisor {
    /// A supervisor of the sandboxes `provisioner` makes.
    pub fn new(provisioner: Arc<dyn Provisioner>) -> Self {
        Self {
            shared: Arc::new(Shared {
                provisioner,
                closing: CancellationToken::new(),
                owned: Mutex::new(HashSet::new()),
                tracker: TaskTracker::new(),
            }),
        }
    }

    /// Starts a sandbox for `spec` and answers once its server answers. `progress` hears
    /// [`Progress::Starting`] before the create step, [`Progress::WaitingForHealth`] once it
    /// runs and [`Progress::Ready`]. `cancel` ends the start at the next step boundary with
    /// [`SandboxError::Cancelled`], having removed what it created. A failed start removes it
    /// too. Dropping this future is safe as well: what it created is removed on a task.
    pub async fn start(
        &self,
        spec: &SandboxSpec,
        progress: OnProgress<'_>,
        cancel: &CancellationToken,
    ) -> Result<Running, SandboxError> {
        let stop = Stop {
            asked: cancel.clone(),
            closing: self.shared.closing.clone(),
        };
        if stop.now() {
            return Err(SandboxError::Cancelled);
        }
        progress(Progress::Starting);
        let created = self.create(spec).await?;
        let owned = Owned {
            shared: Arc::clone(&self.shared),
            id: Some(created.id.clone()),
        };
        if stop.now() {
            owned.remove().await;
            return Err(SandboxError::Cancelled);
        }
        let provisioner = &self.shared.provisioner;
        let started = tokio::select! {
            biased;
            () = stop.wait() => Err(SandboxError::Cancelled),
            r = provisioner.start(&created) => r,
        };
        let sandbox = match started {
            Ok(s) => s,
            Err(e) => {
                owned.remove().await;
                return Err(e);
            }
        };
        let watch = Watch::spawn(Arc::clone(provisioner), sandbox.id.clone());
        progress(Progress::WaitingForHealth);
        let ready = tokio::select! {
            biased;
            () = stop.wait() => Err(SandboxError::Cancelled),
            exit = watch.exited() => Err(SandboxError::Died {
                id: sandbox.id.chars().take(12).collect(),
                reason: exit.reason,
                logs: provisioner.logs(&sandbox.id, 30).await.unwrap_or_default(),
            }),
            r = provisioner.ready(&sandbox) => r,
        };
        if let Err(e) = ready {
            owned.remove().await;
            return Err(e);
        }
        progress(Progress::Ready);
        Ok(Running {
            sandbox,
            watch,
            owned,
        })
    }

    /// The create step on its own task: it runs to its end however the start goes, and what it
    /// created is removed when the start is no longer there to take it.
    async fn create(&self, spec: &SandboxSpec) -> Result<Created, SandboxError> {
        let (tx, rx) = oneshot::channel();
        let shared = Arc::clone(&self.shared);
        let spec = spec.clone();
        self.shared.tracker.spawn(async move {
            let created = shared.provisioner.create(&spec).await;
            if let Ok(c) = &created {
                shared.own(&c.id);
            }
            if let Err(Ok(orphan)) = tx.send(created) {
                shared.remove(&orphan.id).await;
            }
        });
        let mut pending = Pending {
            rx: Some(rx),
            shared: Arc::clone(&self.shared),
        };
        let answer = match pending.rx.as_mut() {
            Some(rx) => rx.await,
            None => return Err(SandboxError::Cancelled),
        };
        pending.rx = None;
        answer.unwrap_or_else(|_| {
            Err(SandboxError::Docker(
                "the sandbox's create step ended without an answer".into(),
            ))
        })
    }

    /// Stops and removes sandbox `id` (one this process may not have started).
    pub async fn stop(&self, id: &str) -> Result<(), SandboxError> {
        self.shared.provisioner.remove(id).await?;
        self.shared.disown(id);
        Ok(())
    }

    /// The provisioner's sandboxes.
    pub async fn list(&self) -> Result<Vec<SandboxInfo>, SandboxError> {
        self.shared.provisioner.list().await
    }

    /// The last `tail` lines of a sandbox's output.
    pub async fn logs(&self, id: &str, tail: usize) -> Result<String, SandboxError> {
        self.shared.provisioner.logs(id, tail).await
    }

    /// Makes the image `opts.tag` (see [`Provisioner::build_image`]).
    pub async fn build_image(
        &self,
        opts: &crate::BuildOptions,
        progress: OnProgress<'_>,
    ) -> Result<crate::BuildReport, SandboxError> {
        self.shared.provisioner.build_image(opts, progress).await
    }

    /// The URL a sandbox uses for `url` of this machine, when it differs (see
    /// [`Provisioner::url_inside`]).
    pub async fn url_inside(&self, url: &str) -> Option<String> {
        self.shared.provisioner.url_inside(url).await
    }

    /// Removes the sandboxes dead processes left behind, and with `mine` also every sandbox
    /// this process owns (its last act before it quits).
    pub async fn sweep(&self, mine: bool) {
        self.shared.provisioner.sweep(mine).await;
    }

    /// Ends everything: starts under way are cancelled (their creates run to their end and are
    /// removed), and every sandbox still owned is removed. Starts after this are cancelled.
    pub async fn shutdown(&self) {
        self.shared.closing.cancel();
        self.shared.tracker.close();
        self.shared.tracker.wait().await;
        for id in self.shared.owned_ids() {
            self.shared.remove(&id).await;
        }
    }

    /// The ids of the sandboxes this supervisor owns (created, not removed nor detached).
    pub fn owned(&self) -> Vec<String> {
        self.shared.owned_ids()
    }
}

impl Shared {
    fn owned_set(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.owned.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn owned_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.owned_set().iter().cloned().collect();
        ids.sort();
        ids
    }

    fn own(&self, id: &str) {
        self.owned_set().insert(id.to_owned());
    }

    fn disown(&self, id: &str) {
        self.owned_set().remove(id);
    }

    /// Removes sandbox `id`; one already gone counts as removed. A failure is logged: the sweep
    /// of a later start removes it.
    async fn remove(&self, id: &str) {
        match self.provisioner.remove(id).await {
            Ok(()) | Err(SandboxError::NotFound(_)) => self.disown(id),
            Err(e) => tracing::warn!(sandbox = %id, "cannot remove a sandbox: {e}"),
        }
    }

    /// [`remove`](Self::remove) on a task, for a drop; without a runtime (the process is
    /// ending) the next sweep removes it.
    fn remove_later(self: &Arc<Self>, id: String) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(sandbox = %id, "no runtime to remove a sandbox; the next start removes it");
            return;
        };
        let shared = Arc::clone(self);
        self.tracker
            .spawn_on(async move { shared.remove(&id).await }, &rt);
    }
}

/// Both ways a start is told to end: its caller's token, or the supervisor's shutdown.
struct Stop {
    asked: CancellationToken,
    closing: CancellationToken,
}

impl Stop {
    fn now(&self) -> bool {
        self.asked.is_cancelled() || self.closing.is_cancelled()
    }

    async fn wait(&self) {
        tokio::select! {
            () = self.asked.cancelled() => {}
            () = self.closing.cancelled() => {}
        }
    }
}

/// The answer of a create step not taken yet: dropped with an answer in it (the start was
/// dropped right after the create ended), it removes what was created.
struct Pending {
    rx: Option<oneshot::Receiver<Result<Created, SandboxError>>>,
    shared: Arc<Shared>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(mut rx) = self.rx.take() {
            rx.close();
            if let Ok(Ok(created)) = rx.try_recv() {
                self.shared.remove_later(created.id);
            }
        }
    }
}

/// A sandbox this supervisor owns: removed once, by [`remove`](Self::remove) or on drop.
struct Owned {
    shared: Arc<Shared>,
    id: Option<String>,
}

impl Owned {
    async fn remove(mut self) {
        if let Some(id) = self.id.take() {
            self.shared.remove(&id).await;
        }
    }

    async fn stop(mut self) -> Result<(), SandboxError> {
        let Some(id) = self.id.take() else {
            return Ok(());
        };
        match self.shared.provisioner.remove(&id).await {
            Ok(()) | Err(SandboxError::NotFound(_)) => {
                self.shared.disown(&id);
                Ok(())
            }
            Err(e) => {
                // Still owned: a shutdown or the next sweep tries again.
                Err(e)
            }
        }
    }

    fn release(mut self) {
        if let Some(id) = self.id.take() {
            self.shared.disown(&id);
        }
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.shared.remove_later(id);
        }
    }
}

/// The watch of a started sandbox: [`Provisioner::wait`] on a task, its answer kept.
struct Watch {
    exit: watch::Receiver<Option<Exit>>,
    task: tokio::task::JoinHandle<()>,
}

impl Watch {
    fn spawn(provisioner: Arc<dyn Provisioner>, id: String) -> Self {
        let (tx, exit) = watch::channel(None);
        let task = tokio::spawn(async move {
            let exit = match provisioner.wait(&id).await {
                Ok(exit) => exit,
                Err(e) => Exit {
                    code: None,
                    reason: format!("it can no longer be watched: {e}"),
                },
            };
            tx.send_replace(Some(exit));
        });
        Self { exit, task }
    }

    /// Resolves once the sandbox stopped, with why.
    async fn exited(&self) -> Exit {
        let mut rx = self.exit.clone();
        let seen = match rx.wait_for(Option::is_some).await {
            Ok(seen) => seen.clone(),
            Err(_) => None,
        };
        seen.unwrap_or_else(|| Exit {
            code: None,
            reason: "it is no longer watched".into(),
        })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A started sandbox whose server answers. It owns the sandbox: [`stop`](Self::stop) removes
/// it, and so does dropping it, unless it was [`detach`](Self::detach)ed.
pub struct Running {
    sandbox: Sandbox,
    watch: Watch,
    owned: Owned,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("id", &self.sandbox.id)
            .field("url", &self.sandbox.url)
            .finish_non_exhaustive()
    }
}

impl Running {
    /// The sandbox: where its server is, its key, its workspace inside.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Resolves once the sandbox stops on its own (out of memory, killed, removed elsewhere),
    /// with why; never while it runs.
    pub async fn exited(&self) -> Exit {
        self.watch.exited().await
    }

    /// Why it stopped, if it has.
    pub fn has_exited(&self) -> Option<Exit> {
        self.watch.exit.borrow().clone()
    }

    /// The last `tail` lines of its output.
    pub async fn logs(&self, tail: usize) -> Result<String, SandboxError> {
        self.owned
            .shared
            .provisioner
            .logs(&self.sandbox.id, tail)
            .await
    }

    /// Stops and removes it. On an error it is still owned: [`Supervisor::shutdown`] or the
    /// next sweep removes it.
    pub async fn stop(self) -> Result<(), SandboxError> {
        let Self { watch, owned, .. } = self;
        drop(watch);
        owned.stop().await
    }

    /// Lets it outlive this handle and this process; answers the sandbox.
    pub fn detach(self) -> Sandbox {
        let Self { sandbox, owned, .. } = self;
        owned.release();
        sandbox
    }
}
